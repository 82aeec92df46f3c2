! Known traffic through the mpif.h binding: the body is fortran_traffic.inc,
! which describes it (tests/runtime/counting/test_fortran_bindings.py holds the expected counts,
! fortran_twin.c is the same traffic in C).
! Regions are entered and left with IPM's MPI_Pcontrol(level, "name") (in
! `region` below).
program fortran_mpifh
  implicit none
  include 'mpif.h'
  character(len=*), parameter :: progname = 'fortran_mpifh'
  include 'fortran_traffic.inc'
end program fortran_mpifh

! IPM's MPI_Pcontrol(level, "name"), from a unit that uses mpif.h.
subroutine region(level, name)
  implicit none
  include 'mpif.h'
  integer, intent(in) :: level
  character(len=*), intent(in) :: name
  call MPI_Pcontrol(level, name)
end subroutine region
