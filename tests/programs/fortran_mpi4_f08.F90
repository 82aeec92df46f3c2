! MPI-4 routines through `use mpi_f08` (tests/runtime/counting/test_runtime_mpi4.py), on a ring:
! MPI_Barrier_init + MPI_Start + MPI_Wait + MPI_Request_free; partitioned
! MPI_Precv_init / MPI_Psend_init of 4 x 8 integers, 2 rounds of MPI_Startall,
! readiness (round 0: MPI_Pready(0) + MPI_Pready_range(1, 3); round 1:
! MPI_Pready_list of 4), MPI_Parrived polled until partition 0 arrived (count
! on stderr), MPI_Waitall; MPI_Comm_idup_with_info + MPI_Wait, MPI_Allreduce of
! 1 integer on it, MPI_Comm_free. On MPICH the buffer-less ones (Barrier_init,
! Pready*, Parrived, Comm_idup_with_info) call PMPI_ directly from mpi_f08 and
! are counted by the runtime's generated Fortran wrappers; the others reach
! the C wrappers. Built with MPISCOPE_HAVE_MPI4 only where mpi.h declares
! MPI_Pready (tests/programs/CMakeLists.txt); elsewhere it says so.
program fortran_mpi4_f08
#ifdef MPISCOPE_HAVE_MPI4
  use mpi_f08
  implicit none
  integer, parameter :: parts = 4, per = 8
  integer :: rank, nprocs, left, right, i, polls, round, one, total
  integer, volatile :: pin(parts * per)
  integer :: pout(parts * per), list(parts)
  integer(kind=MPI_COUNT_KIND) :: cnt
  type(MPI_Request) :: p(2), r
  type(MPI_Comm) :: dup
  logical :: flag, ok

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs)
  left = mod(rank - 1 + nprocs, nprocs)
  right = mod(rank + 1, nprocs)
  ok = .true.
  polls = 0
  cnt = per
  list = [0, 1, 2, 3]

  call MPI_Barrier_init(MPI_COMM_WORLD, MPI_INFO_NULL, r)
  call MPI_Start(r)
  call MPI_Wait(r, MPI_STATUS_IGNORE)
  call MPI_Request_free(r)

  call MPI_Precv_init(pin, parts, cnt, MPI_INTEGER, left, 7, MPI_COMM_WORLD, MPI_INFO_NULL, p(1))
  call MPI_Psend_init(pout, parts, cnt, MPI_INTEGER, right, 7, MPI_COMM_WORLD, MPI_INFO_NULL, p(2))
  do round = 0, 1
    pout = [(rank * 1000 + round * 100 + i, i = 1, parts * per)]
    call MPI_Startall(2, p)
    if (round == 0) then
      call MPI_Pready(0, p(2))
      call MPI_Pready_range(1, 3, p(2))
    else
      call MPI_Pready_list(parts, list, p(2))
    end if
    flag = .false.
    do while (.not. flag)
      call MPI_Parrived(p(1), 0, flag)
      polls = polls + 1
    end do
    call MPI_Waitall(2, p, MPI_STATUSES_IGNORE)
    ok = ok .and. all(pin == [(left * 1000 + round * 100 + i, i = 1, parts * per)])
  end do
  call MPI_Request_free(p(1))
  call MPI_Request_free(p(2))

  call MPI_Comm_idup_with_info(MPI_COMM_WORLD, MPI_INFO_NULL, dup, r)
  call MPI_Wait(r, MPI_STATUS_IGNORE)
  one = 1
  call MPI_Allreduce(one, total, 1, MPI_INTEGER, MPI_SUM, dup)
  ok = ok .and. total == nprocs
  call MPI_Comm_free(dup)

  write (0, '(a, i0, a, i0)') 'polls rank ', rank, ' MPI_Parrived ', polls
  if (ok) then
    write (*, '(a, i0, a, i0, a)') 'fortran_mpi4_f08 rank ', rank, ' checksum ', sum(pin), ' ok'
  else
    write (*, '(a, i0, a, i0, a)') 'fortran_mpi4_f08 rank ', rank, ' checksum ', sum(pin), ' FAILED'
  end if
  call MPI_Finalize()
#else
  print '(a)', 'fortran_mpi4_f08: this MPI declares no MPI-4 routines'
#endif
end program fortran_mpi4_f08
