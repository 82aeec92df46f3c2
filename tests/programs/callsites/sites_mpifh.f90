! sites_mpifh.f90 - call sites through include 'mpif.h' (see sites.c); the
! calls are in sites_body.inc, shared with sites_usempi.f90.
program sites_mpifh
  implicit none
  include 'mpif.h'
  integer :: ierr, rank, i
  double precision :: x, y
  include 'sites_body.inc'
  if (rank == 0) print '(a, f6.1)', 'sites_mpifh: y = ', y
  call MPI_Finalize(ierr)
end program sites_mpifh
