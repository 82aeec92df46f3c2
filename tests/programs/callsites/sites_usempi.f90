! sites_usempi.f90 - call sites through use mpi (see sites.c); the calls are
! in sites_body.inc, shared with sites_mpifh.f90.
program sites_usempi
  use mpi
  implicit none
  integer :: ierr, rank, i
  double precision :: x, y
  include 'sites_body.inc'
  if (rank == 0) print '(a, f6.1)', 'sites_usempi: y = ', y
  call MPI_Finalize(ierr)
end program sites_usempi
