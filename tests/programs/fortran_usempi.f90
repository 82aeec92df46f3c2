! Known traffic through the `use mpi` binding (see tests/test_fortran_bindings.py,
! which holds the expected counts, and fortran_twin.c, the same traffic in C).
!
! Every rank r of p does, with left = r-1 and right = r+1 (mod p):
!   region "ring":   Send 100 INTEGER to right, Recv 100 INTEGER from left (status)
!   region "solve":  region "halo": 2 x (Irecv left/right + Isend right/left of
!                    50 DOUBLE, Waitall; once with statuses, once STATUSES_IGNORE)
!                    Allreduce 10 DOUBLE with MPI_IN_PLACE, Allreduce 1 INTEGER
!   Bcast 32 INTEGER from 0; Sendrecv 8 INTEGER along a non-periodic line
!   (MPI_PROC_NULL at both ends, MPI_STATUS_IGNORE); 4 x Waitany over 2 Irecv +
!   2 Isend of 4 INTEGER; Comm_split by parity, Sendrecv 16 INTEGER around the
!   sub-communicator's ring and Allreduce in it; Sendrecv of a struct type
!   (3 INTEGER + 2 DOUBLE) from MPI_BOTTOM to right; Barrier; Gather of one
!   DOUBLE checksum to rank 0, which prints every rank's checksum.
! Regions are opened through `region`, a routine using mpif.h: Open MPI's `use
! mpi` interface for MPI_Pcontrol takes the level only, so IPM's
! MPI_Pcontrol(level, "name") cannot be written against the module there.
! The body is fortran_traffic.inc, shared with fortran_mpifh.f90.
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
