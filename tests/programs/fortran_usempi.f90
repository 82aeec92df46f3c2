! Known traffic through the `use mpi` binding: the body is fortran_traffic.inc,
! which describes it (tests/runtime/counting/test_fortran_bindings.py holds the expected counts,
! fortran_twin.c is the same traffic in C).
! Regions are opened through `region`, a routine using mpif.h: Open MPI's `use
! mpi` interface for MPI_Pcontrol takes the level only, so IPM's
! MPI_Pcontrol(level, "name") cannot be written against the module there.
program fortran_usempi
  use mpi
  implicit none
  character(len=*), parameter :: progname = 'fortran_usempi'
  include 'fortran_traffic.inc'
end program fortran_usempi

! IPM's MPI_Pcontrol(level, "name"), from a unit that uses mpif.h.
subroutine region(level, name)
  implicit none
  include 'mpif.h'
  integer, intent(in) :: level
  character(len=*), intent(in) :: name
  call MPI_Pcontrol(level, name)
end subroutine region
