! sites_usempi.f90 - call sites through use mpi (see sites.c):
! every call line carries a "site:NAME" marker the test finds.
program sites_usempi
  use mpi
  implicit none
  integer :: ierr, rank, i
  double precision :: x, y
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  x = 1.0d0
  do i = 1, 3
    call MPI_Allreduce(x, y, 1, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr) ! site:allreduce_a
  end do
  do i = 1, 5
    call MPI_Allreduce(x, y, 1, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr) ! site:allreduce_b
  end do
  call MPI_Barrier(MPI_COMM_WORLD, ierr) ! site:barrier
  if (rank == 0) print '(a, f6.1)', 'sites_usempi: y = ', y
  call MPI_Finalize(ierr)
end program sites_usempi
