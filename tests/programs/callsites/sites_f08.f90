! sites_f08.f90 - call sites through use mpi_f08 (see sites.c): every call
! line carries a "site:NAME" marker the test finds. The calls are in a
! module procedure, so the parent function is a Fortran module's.
module sites_f08_work
  use mpi_f08
  implicit none
contains
  subroutine work(x, y)
    double precision, intent(in) :: x
    double precision, intent(out) :: y
    integer :: i
    do i = 1, 3
      call MPI_Allreduce(x, y, 1, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD) ! site:allreduce_a
    end do
    do i = 1, 5
      call MPI_Allreduce(x, y, 1, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD) ! site:allreduce_b
    end do
    call MPI_Barrier(MPI_COMM_WORLD) ! site:barrier
  end subroutine work
end module sites_f08_work

program sites_f08
  use mpi_f08
  use sites_f08_work
  implicit none
  integer :: rank
  double precision :: x, y
  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  x = 1.0d0
  call work(x, y)
  if (rank == 0) print '(a, f6.1)', 'sites_f08: y = ', y
  call MPI_Finalize()
end program sites_f08
