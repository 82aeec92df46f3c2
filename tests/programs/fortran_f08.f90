! Known traffic through the `use mpi_f08` binding: the traffic of
! fortran_traffic.inc (which describes it) with mpi_f08's types
! (tests/runtime/counting/test_fortran_bindings.py holds the expected counts, fortran_twin.c is
! the same traffic in C).
! Regions are opened through `region`, a routine using mpif.h: the mpi_f08
! interface for MPI_Pcontrol takes the level only, so IPM's
! MPI_Pcontrol(level, "name") cannot be written against the module.
! Error codes are not asked for (ierror is optional in mpi_f08).
program fortran_f08
  use mpi_f08
  implicit none
  integer :: rank, nprocs, left, right, i, n, total, up, down
  integer :: srank, ssize, sdest, ssrc, ssum, idx, base
  type(MPI_Comm) :: sub
  type(MPI_Datatype) :: stype, rtype, types(2)
  integer :: ring_send(100), ring_recv(100), bc(32), line_send(8), line_recv(8)
  integer :: any_send(4), sub_send(16), sub_recv(16)
  type(MPI_Status) :: status, statuses(4)
  type(MPI_Request) :: reqs(4)
  integer :: blocklens(2), seen(4), idxs(4)
  type(MPI_Status) :: any_status(4)
  integer(kind=MPI_ADDRESS_KIND) :: disps(2)
  integer, volatile :: bot_isend(3), bot_irecv(3)
  double precision, volatile :: bot_dsend(2), bot_drecv(2)
  double precision :: halo_send(50), red(10)
  ! volatile: written by MPI after the call that names them returns (nonblocking,
  ! persistent, one-sided), which an optimising compiler must not assume away
  double precision, volatile :: halo_left(50), halo_right(50)
  integer, volatile :: any_recv(4, 2)
  double precision :: check, checks(1024)
  logical :: ok

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs)
  left = mod(rank - 1 + nprocs, nprocs)
  right = mod(rank + 1, nprocs)
  ok = .true.
  check = 0d0

  ! ring: blocking send/recv, even ranks send first
  call region(1, "ring")
  ring_send = [(rank * 1000 + i, i = 1, 100)]
  if (mod(rank, 2) == 0) then
    call MPI_Send(ring_send, 100, MPI_INTEGER, right, 1, MPI_COMM_WORLD)
    call MPI_Recv(ring_recv, 100, MPI_INTEGER, left, 1, MPI_COMM_WORLD, status)
  else
    call MPI_Recv(ring_recv, 100, MPI_INTEGER, left, 1, MPI_COMM_WORLD, status)
    call MPI_Send(ring_send, 100, MPI_INTEGER, right, 1, MPI_COMM_WORLD)
  end if
  call MPI_Get_count(status, MPI_INTEGER, n)
  ok = ok .and. status%MPI_SOURCE == left .and. status%MPI_TAG == 1 .and. n == 100
  check = check + sum(ring_recv)
  call region(-1, "ring")

  ! solve: nonblocking halo (nested region), then reductions
  call region(1, "solve")
  call region(1, "halo")
  halo_send = [(rank + i * 0.5d0, i = 1, 50)]
  do i = 1, 2
    call MPI_Irecv(halo_left, 50, MPI_DOUBLE_PRECISION, left, 2, MPI_COMM_WORLD, reqs(1))
    call MPI_Irecv(halo_right, 50, MPI_DOUBLE_PRECISION, right, 3, MPI_COMM_WORLD, reqs(2))
    call MPI_Isend(halo_send, 50, MPI_DOUBLE_PRECISION, right, 2, MPI_COMM_WORLD, reqs(3))
    call MPI_Isend(halo_send, 50, MPI_DOUBLE_PRECISION, left, 3, MPI_COMM_WORLD, reqs(4))
    if (i == 1) then
      call MPI_Waitall(4, reqs, statuses)
      ok = ok .and. statuses(1)%MPI_SOURCE == left .and. statuses(2)%MPI_SOURCE == right
      ok = ok .and. statuses(1)%MPI_TAG == 2 .and. statuses(2)%MPI_TAG == 3
    else
      call MPI_Waitall(4, reqs, MPI_STATUSES_IGNORE)
    end if
    ok = ok .and. all(reqs%MPI_VAL == MPI_REQUEST_NULL%MPI_VAL)
    check = check + sum(halo_left) + 2 * sum(halo_right)
  end do
  call region(-1, "halo")
  red = [(rank * 10 + i, i = 1, 10)]
  call MPI_Allreduce(MPI_IN_PLACE, red, 10, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD)
  ok = ok .and. abs(red(1) - (10d0 * nprocs * (nprocs - 1) / 2 + nprocs)) < 1d-9
  check = check + sum(red)
  call MPI_Allreduce(rank, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
  ok = ok .and. total == nprocs * (nprocs - 1) / 2
  call region(-1, "solve")

  ! broadcast from rank 0
  bc = 0
  if (rank == 0) bc = [(7 * i, i = 1, 32)]
  call MPI_Bcast(bc, 32, MPI_INTEGER, 0, MPI_COMM_WORLD)
  ok = ok .and. bc(32) == 224
  check = check + sum(bc)

  ! non-periodic line: MPI_PROC_NULL at both ends, status ignored
  up = rank + 1
  down = rank - 1
  if (up == nprocs) up = MPI_PROC_NULL
  if (down < 0) down = MPI_PROC_NULL
  line_send = rank + 1
  line_recv = -1
  call MPI_Sendrecv(line_send, 8, MPI_INTEGER, up, 4, line_recv, 8, MPI_INTEGER, down, 4, &
                    MPI_COMM_WORLD, MPI_STATUS_IGNORE)
  if (rank == 0) then
    ok = ok .and. all(line_recv == -1)
  else
    ok = ok .and. all(line_recv == rank)
  end if
  check = check + sum(line_recv)

  ! Waitany: indices come back 1-based, each exactly once
  any_send = rank
  call MPI_Irecv(any_recv(:, 1), 4, MPI_INTEGER, left, 5, MPI_COMM_WORLD, reqs(1))
  call MPI_Irecv(any_recv(:, 2), 4, MPI_INTEGER, right, 6, MPI_COMM_WORLD, reqs(2))
  call MPI_Isend(any_send, 4, MPI_INTEGER, right, 5, MPI_COMM_WORLD, reqs(3))
  call MPI_Isend(any_send, 4, MPI_INTEGER, left, 6, MPI_COMM_WORLD, reqs(4))
  seen = 0
  do i = 1, 4
    call MPI_Waitany(4, reqs, idxs(i), any_status(i))
  end do
  ! The standard says 1-based; MPICH < 4.1's mpi_f08 returns 0-based indices
  ! (pmodels/mpich#6270). Accept either, print which, check each came once.
  base = minval(idxs)
  if (rank == 0 .and. base /= 1) write (*, '(a, i0, a)') 'note: Waitany indices are ', base, '-based'
  do i = 1, 4
    idx = idxs(i) - base + 1
    if (idx >= 1 .and. idx <= 4) seen(idx) = seen(idx) + 1
    if (idx == 1) ok = ok .and. any_status(i)%MPI_SOURCE == left
    if (idx == 2) ok = ok .and. any_status(i)%MPI_SOURCE == right
  end do
  ok = ok .and. all(seen == 1)
  ok = ok .and. all(any_recv(:, 1) == left) .and. all(any_recv(:, 2) == right)
  check = check + sum(any_recv)

  ! sub-communicator: ranks of one parity, a ring inside it
  call MPI_Comm_split(MPI_COMM_WORLD, mod(rank, 2), rank, sub)
  call MPI_Comm_rank(sub, srank)
  call MPI_Comm_size(sub, ssize)
  sdest = mod(srank + 1, ssize)
  ssrc = mod(srank - 1 + ssize, ssize)
  sub_send = rank
  call MPI_Sendrecv(sub_send, 16, MPI_INTEGER, sdest, 7, sub_recv, 16, MPI_INTEGER, ssrc, 7, &
                    sub, status)
  ok = ok .and. status%MPI_SOURCE == ssrc
  call MPI_Allreduce(rank, ssum, 1, MPI_INTEGER, MPI_SUM, sub)
  check = check + sum(sub_recv) + ssum
  call MPI_Comm_free(sub)
  ok = ok .and. sub%MPI_VAL == MPI_COMM_NULL%MPI_VAL

  ! MPI_BOTTOM with absolute addresses in a struct datatype
  bot_isend = [rank, rank + 1, rank + 2]
  bot_dsend = [rank * 0.25d0, rank * 0.5d0]
  blocklens = [3, 2]
  types = [MPI_INTEGER, MPI_DOUBLE_PRECISION]
  call MPI_Get_address(bot_isend, disps(1))
  call MPI_Get_address(bot_dsend, disps(2))
  call MPI_Type_create_struct(2, blocklens, disps, types, stype)
  call MPI_Type_commit(stype)
  call MPI_Get_address(bot_irecv, disps(1))
  call MPI_Get_address(bot_drecv, disps(2))
  call MPI_Type_create_struct(2, blocklens, disps, types, rtype)
  call MPI_Type_commit(rtype)
  call MPI_Sendrecv(MPI_BOTTOM, 1, stype, right, 8, MPI_BOTTOM, 1, rtype, left, 8, &
                    MPI_COMM_WORLD, status)
  ok = ok .and. bot_irecv(3) == left + 2 .and. abs(bot_drecv(2) - left * 0.5d0) < 1d-12
  check = check + sum(bot_irecv) + sum(bot_drecv)
  call MPI_Type_free(stype)
  call MPI_Type_free(rtype)

  call MPI_Barrier(MPI_COMM_WORLD)
  if (.not. ok) check = -check
  call MPI_Gather(check, 1, MPI_DOUBLE_PRECISION, checks, 1, MPI_DOUBLE_PRECISION, 0, &
                  MPI_COMM_WORLD)
  if (rank == 0) then
    do i = 1, nprocs
      write (*, '(a, i0, a, f0.3)') 'rank ', i - 1, ' checksum ', checks(i)
    end do
    if (all(checks(1:nprocs) >= 0)) then
      write (*, '(a)') 'fortran_f08: all checks passed'
    else
      write (*, '(a)') 'fortran_f08: CHECK FAILED'
    end if
  end if
  call MPI_Finalize()
end program fortran_f08


! IPM's MPI_Pcontrol(level, "name") from a unit that uses mpif.h.
subroutine region(level, name)
  implicit none
  include 'mpif.h'
  integer, intent(in) :: level
  character(len=*), intent(in) :: name
  call MPI_Pcontrol(level, name)
end subroutine region
