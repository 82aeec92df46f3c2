! Added cost per call of profiling a Fortran (mpi_f08) program, in one run:
! each operation is timed through its MPI_ name (the profiled path: on Open
! MPI mpiscope's Fortran wrapper, then its C wrapper; on MPICH the wrapper or
! MPICH's own binding, then the C wrapper) and through its PMPI_ name (the
! MPI's own binding straight to the library), in alternating blocks; the
! fastest block of each counts. One rank, communicating on MPI_COMM_SELF: a
! second rank polling in the same loop makes Iprobe's cost swing by 2x.
! Prints one JSON line per operation: ns per call both ways and the difference.
! Run by perf/fortran/run_fortran_overhead.sh (docs/performance.md).
program fortran_overhead
  use mpi_f08
  implicit none
  integer, parameter :: blocks = 20
  integer :: rank, nprocs, r, b, i, n, op
  logical :: flag
  double precision :: t0, tw, tp, sbuf, rbuf, best_w, best_p
  character(len=*), parameter :: names(3) = [character(len=17) :: 'Comm_rank', 'Iprobe_empty', &
                                              'Allreduce_8B_self']
  integer, parameter :: iters(3) = [200000, 100000, 100000]

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs)
  sbuf = rank
  do op = 1, 3
    n = iters(op)
    best_w = huge(1d0)
    best_p = huge(1d0)
    do b = 1, blocks
      call MPI_Barrier(MPI_COMM_WORLD)
      t0 = MPI_Wtime()
      do i = 1, n
        select case (op)
        case (1)
          call MPI_Comm_rank(MPI_COMM_WORLD, r)
        case (2)
          call MPI_Iprobe(MPI_ANY_SOURCE, 99, MPI_COMM_SELF, flag, MPI_STATUS_IGNORE)
        case (3)
          call MPI_Allreduce(sbuf, rbuf, 1, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_SELF)
        end select
      end do
      tw = (MPI_Wtime() - t0) / n
      call MPI_Barrier(MPI_COMM_WORLD)
      t0 = MPI_Wtime()
      do i = 1, n
        select case (op)
        case (1)
          call PMPI_Comm_rank(MPI_COMM_WORLD, r)
        case (2)
          call PMPI_Iprobe(MPI_ANY_SOURCE, 99, MPI_COMM_SELF, flag, MPI_STATUS_IGNORE)
        case (3)
          call PMPI_Allreduce(sbuf, rbuf, 1, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_SELF)
        end select
      end do
      tp = (MPI_Wtime() - t0) / n
      best_w = min(best_w, tw)
      best_p = min(best_p, tp)
    end do
    if (rank == 0) write (*, '(a, a, a, f0.1, a, f0.1, a, f0.1, a)') &
      '{"op": "', trim(names(op)), '", "mpi_ns": ', best_w * 1d9, ', "pmpi_ns": ', &
      best_p * 1d9, ', "added_ns": ', (best_w - best_p) * 1d9, '}'
  end do
  call MPI_Finalize()
end program fortran_overhead
