! The Fortran twin of big_message.c (mpi_f08): rank 0 sends rank 1 2^31
! bytes as MPI_Type_contiguous(2^28, MPI_DOUBLE_PRECISION) x 1 (MPI_Send /
! MPI_Recv) and as MPI_DOUBLE_PRECISION x 2^28 (MPI_Send / MPI_Irecv +
! MPI_Wait). Each rank prints "big_message_f08 rank R checksum C ok".
program big_message_f08
  use mpi_f08
  implicit none
  integer, parameter :: n = 2**28
  real(8), allocatable :: buf(:)
  type(MPI_Datatype) :: big
  type(MPI_Status) :: st
  type(MPI_Request) :: req
  integer :: rank, msg, i
  integer(MPI_COUNT_KIND) :: bytes
  integer(8) :: check
  logical :: ok

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Type_contiguous(n, MPI_DOUBLE_PRECISION, big)
  call MPI_Type_commit(big)
  ok = .true.
  check = 0
  if (rank <= 1) then
    allocate(buf(n))
    do i = 1, n
      buf(i) = merge(dble(mod(i, 1000)), -1d0, rank == 0)
    end do
    do msg = 0, 1
      if (rank == 0) then
        buf(1) = 7d0 + msg
        buf(n) = 7d0 + msg
        if (msg == 0) then
          call MPI_Send(buf, 1, big, 1, msg, MPI_COMM_WORLD)
        else
          call MPI_Send(buf, n, MPI_DOUBLE_PRECISION, 1, msg, MPI_COMM_WORLD)
        end if
      else
        buf(1) = -1d0
        buf(n) = -1d0
        if (msg == 0) then
          call MPI_Recv(buf, 1, big, 0, msg, MPI_COMM_WORLD, st)
        else
          call MPI_Irecv(buf, n, MPI_DOUBLE_PRECISION, 0, msg, MPI_COMM_WORLD, req)
          call MPI_Wait(req, st)
        end if
        call MPI_Get_elements_x(st, MPI_BYTE, bytes)
        ok = ok .and. bytes == 8_8 * n .and. buf(1) == 7d0 + msg .and. buf(n) == 7d0 + msg
        check = check + bytes + int(buf(n), 8)
      end if
    end do
    deallocate(buf)
  end if
  call MPI_Type_free(big)
  write (*, '(a, i0, a, i0, a)') 'big_message_f08 rank ', rank, ' checksum ', check, &
      trim(merge(' ok    ', ' FAILED', ok))
  call MPI_Finalize()
end program big_message_f08
