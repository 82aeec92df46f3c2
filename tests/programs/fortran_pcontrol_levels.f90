! MPI_Pcontrol with a level and no name through mpif.h, as plain MPI allows.
! mpiscope's mpi_pcontrol_ also serves IPM's MPI_Pcontrol(level, "name"), so
! here it finds leftovers where a name and its length would be; it must take
! none of them for a region name (tests/runtime/counting/test_fortran_bindings.py).
program fortran_pcontrol_levels
  implicit none
  include 'mpif.h'
  integer :: ierr, rank, nprocs, total

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
  call MPI_Pcontrol(1)
  call MPI_Allreduce(rank, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  call MPI_Pcontrol(-1)
  call MPI_Pcontrol(0)
  call MPI_Pcontrol(2)
  if (rank == 0) write (*, '(a, i0)') 'fortran_pcontrol_levels: sum of ranks ', total
  call MPI_Finalize(ierr)
end program fortran_pcontrol_levels
