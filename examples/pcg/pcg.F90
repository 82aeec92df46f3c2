! pcg: POP's barotropic solver in miniature (seed 004). Preconditioned
! conjugate gradient on a 2-D variable-coefficient 5-point operator with a
! diagonal preconditioner, the grid split over PX x PY ranks.
!
!   pcg [--grid NXxNY] [--procs PXxPY] [--variant classic|cg] [--prepost]
!       [--node-aware] [--jitter USEC] [--tol T] [--maxiter N] [--history]
!
! --variant classic: two MPI_Allreduce per iteration (POP's original);
!   cg: Chronopoulos-Gear, one MPI_Allreduce of two values per iteration.
! --prepost: the halo update of the operator's output posts its receives
!   before the stencil computation that precedes the sends (seed 004's fix);
!   without it the receives are blocking MPI_Recv after the sends (POP's
!   original ninept_4).
! --node-aware: every global sum is MPI_Reduce within the node
!   (MPI_Comm_split_type SHARED), MPI_Allreduce among node leaders,
!   MPI_Bcast within the node (POP's "core 0" allreduce).
! --jitter USEC: after each halo update every rank spins a pseudo-random
!   0..USEC microseconds (seed 004's "ragged release" from the halo update),
!   so that ranks reach the next allreduce raggedly. (Spun before the halo,
!   the blocking receives would absorb it: with 2 ranks completely.)
!
! Built twice from this file: with `use mpi` (pcg) and, with -DPCG_F08,
! `use mpi_f08` (pcg_f08). Both print the same last line on rank 0:
!   RESULT pcg grid=<grid> iters=<n> resid=<||b-Ax||/||b||> xsum=<sum of x>
! Regions (MPI_Pcontrol through regions.c): "setup", "solve", "check", and
! "matvec" (stencil + halo update) nested in "solve" and "check".
#ifdef PCG_F08
#define MPI_MODULE mpi_f08
#define COMM_T type(MPI_Comm)
#define REQ_T type(MPI_Request)
#else
#define MPI_MODULE mpi
#define COMM_T integer
#define REQ_T integer
#endif

module pcg_kernels
  use MPI_MODULE
  use iso_c_binding, only: c_int, c_char, c_null_char
  implicit none
  private
  public :: solver, region, die, global_sum, matvec, spin, coef_e, coef_n, sci

  integer, parameter :: dp = kind(1.0d0)

  ! The decomposition, communicators, options and halo buffers of one run.
  type :: solver
    COMM_T :: comm, node, leaders
    integer :: rank, nranks, nx, ny, px, py, cx, cy
    integer :: nxl, nyl, gx0, gy0                  ! local sizes, global offsets
    integer :: west, east, south, north            ! neighbour ranks or MPI_PROC_NULL
    logical :: prepost = .false., node_aware = .false.
    real(dp) :: jitter = 0.0_dp                     ! seconds
    real(dp), allocatable :: ae(:,:), an(:,:), ainv(:,:)  ! east/north couplings, 1/diagonal
    real(dp), allocatable :: sw(:), se(:), ss(:), sn(:), rw(:), re(:), rs(:), rn(:)
  end type solver

  interface
    subroutine pcg_region(level, name) bind(C, name="pcg_region")
      import :: c_int, c_char
      integer(c_int), value :: level
      character(kind=c_char), dimension(*) :: name
    end subroutine pcg_region
  end interface

contains

  ! region: open (level 1) or close (level -1) an MPI_Pcontrol region.
  subroutine region(level, name)
    integer, intent(in) :: level
    character(len=*), intent(in) :: name
    call pcg_region(int(level, c_int), trim(name)//c_null_char)
  end subroutine region

  ! die: print "pcg: error: <msg>" on rank 0, finalize, exit 2 (every rank alike).
  subroutine die(msg)
    use iso_fortran_env, only: error_unit
    character(len=*), intent(in) :: msg
    integer :: rank, ierr
    call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
    if (rank == 0) write (error_unit, '(a)') 'pcg: error: '//trim(msg)
    call MPI_Finalize(ierr)
    call exit(2)
  end subroutine die

  ! global_sum: sum vals(1:n) over all ranks, in place. One MPI_Allreduce, or
  ! with --node-aware a reduce in the node, an allreduce among the leaders and
  ! a broadcast in the node.
  subroutine global_sum(s, vals, n)
    type(solver), intent(in) :: s
    integer, intent(in) :: n
    real(dp), intent(inout) :: vals(n)
    real(dp) :: tmp(n)
    integer :: ierr
    if (.not. s%node_aware) then
      call MPI_Allreduce(vals, tmp, n, MPI_DOUBLE_PRECISION, MPI_SUM, s%comm, ierr)
    else
      call MPI_Reduce(vals, tmp, n, MPI_DOUBLE_PRECISION, MPI_SUM, 0, s%node, ierr)
      if (s%leaders /= MPI_COMM_NULL) then
        vals = tmp
        call MPI_Allreduce(vals, tmp, n, MPI_DOUBLE_PRECISION, MPI_SUM, s%leaders, ierr)
      end if
      call MPI_Bcast(tmp, n, MPI_DOUBLE_PRECISION, 0, s%node, ierr)
    end if
    vals = tmp
  end subroutine global_sum

  ! spin: busy-wait a pseudo-random 0..jitter seconds, the same sequence
  ! for a given (rank, iteration) in every run.
  subroutine spin(s, it)
    type(solver), intent(in) :: s
    integer, intent(in) :: it
    integer(8), parameter :: m = 2147483647_8   ! Park-Miller: products stay below 2^47
    integer(8) :: h
    real(dp) :: t_end
    if (s%jitter <= 0.0_dp) return
    h = modulo(int(s%rank, 8) * 1000003_8 + int(it, 8) * 7919_8 + 1_8, m)
    h = modulo(h * 48271_8, m)
    h = modulo(h * 48271_8, m)
    t_end = MPI_Wtime() + s%jitter * real(h, dp) / real(m, dp)
    do while (MPI_Wtime() < t_end)
    end do
  end subroutine spin

  ! matvec: q = A v on the interior, then the halo update of q. A is
  ! symmetric: diagonal ae(i-1,j)+ae(i,j)+an(i,j-1)+an(i,j), off-diagonals -ae, -an.
  subroutine matvec(s, v, q)
    type(solver), intent(inout) :: s
    real(dp), intent(in) :: v(0:, 0:)
    real(dp), intent(inout) :: q(0:, 0:)
    REQ_T :: req(8)
    integer :: ierr
    call region(1, "matvec")
    if (s%prepost) call post_receives(s, req)
    call stencil(s, v, q)
    call send_edges(s, q, req)
    if (s%prepost) then
      call MPI_Waitall(8, req, MPI_STATUSES_IGNORE, ierr)
    else
      call MPI_Recv(s%rw, s%nyl, MPI_DOUBLE_PRECISION, s%west, 1, s%comm, MPI_STATUS_IGNORE, ierr)
      call MPI_Recv(s%re, s%nyl, MPI_DOUBLE_PRECISION, s%east, 2, s%comm, MPI_STATUS_IGNORE, ierr)
      call MPI_Recv(s%rs, s%nxl, MPI_DOUBLE_PRECISION, s%south, 3, s%comm, MPI_STATUS_IGNORE, ierr)
      call MPI_Recv(s%rn, s%nxl, MPI_DOUBLE_PRECISION, s%north, 4, s%comm, MPI_STATUS_IGNORE, ierr)
      call MPI_Waitall(4, req(5:8), MPI_STATUSES_IGNORE, ierr)
    end if
    call unpack_edges(s, q)
    call region(-1, "matvec")
  end subroutine matvec

  ! Couplings to the east and north neighbours of global point (gi, gj).
  pure real(dp) function coef_e(gi, gj)
    integer, intent(in) :: gi, gj
    coef_e = 1.0_dp + real(modulo(7 * gi + 3 * gj, 10), dp) / 10.0_dp
  end function coef_e

  pure real(dp) function coef_n(gi, gj)
    integer, intent(in) :: gi, gj
    coef_n = 1.0_dp + real(modulo(5 * gi + 11 * gj, 13), dp) / 13.0_dp
  end function coef_n

  ! sci: x in scientific notation with `digits` decimals, no blanks.
  function sci(x, digits) result(text)
    real(dp), intent(in) :: x
    integer, intent(in) :: digits
    character(len=:), allocatable :: text
    character(len=40) :: buf, fmt
    write (fmt, '(a,i0,a,i0,a)') '(es', digits + 8, '.', digits, ')'
    write (buf, fmt) x
    text = trim(adjustl(buf))
  end function sci

  subroutine stencil(s, v, q)
    type(solver), intent(in) :: s
    real(dp), intent(in) :: v(0:, 0:)
    real(dp), intent(inout) :: q(0:, 0:)
    integer :: i, j
    do j = 1, s%nyl
      do i = 1, s%nxl
        q(i, j) = (s%ae(i-1, j) + s%ae(i, j) + s%an(i, j-1) + s%an(i, j)) * v(i, j) &
                - s%ae(i, j) * v(i+1, j) - s%ae(i-1, j) * v(i-1, j) &
                - s%an(i, j) * v(i, j+1) - s%an(i, j-1) * v(i, j-1)
      end do
    end do
  end subroutine stencil

  ! Tags name the side a message arrives on: 1 west, 2 east, 3 south, 4 north.
  subroutine post_receives(s, req)
    type(solver), intent(inout) :: s
    REQ_T, intent(inout) :: req(8)
    integer :: ierr
    call MPI_Irecv(s%rw, s%nyl, MPI_DOUBLE_PRECISION, s%west, 1, s%comm, req(1), ierr)
    call MPI_Irecv(s%re, s%nyl, MPI_DOUBLE_PRECISION, s%east, 2, s%comm, req(2), ierr)
    call MPI_Irecv(s%rs, s%nxl, MPI_DOUBLE_PRECISION, s%south, 3, s%comm, req(3), ierr)
    call MPI_Irecv(s%rn, s%nxl, MPI_DOUBLE_PRECISION, s%north, 4, s%comm, req(4), ierr)
  end subroutine post_receives

  subroutine send_edges(s, q, req)
    type(solver), intent(inout) :: s
    real(dp), intent(in) :: q(0:, 0:)
    REQ_T, intent(inout) :: req(8)
    integer :: ierr
    s%sw = q(1, 1:s%nyl)
    s%se = q(s%nxl, 1:s%nyl)
    s%ss = q(1:s%nxl, 1)
    s%sn = q(1:s%nxl, s%nyl)
    call MPI_Isend(s%sw, s%nyl, MPI_DOUBLE_PRECISION, s%west, 2, s%comm, req(5), ierr)
    call MPI_Isend(s%se, s%nyl, MPI_DOUBLE_PRECISION, s%east, 1, s%comm, req(6), ierr)
    call MPI_Isend(s%ss, s%nxl, MPI_DOUBLE_PRECISION, s%south, 4, s%comm, req(7), ierr)
    call MPI_Isend(s%sn, s%nxl, MPI_DOUBLE_PRECISION, s%north, 3, s%comm, req(8), ierr)
  end subroutine send_edges

  ! Ghosts outside the domain stay 0 (Dirichlet): only real neighbours' data lands.
  subroutine unpack_edges(s, q)
    type(solver), intent(in) :: s
    real(dp), intent(inout) :: q(0:, 0:)
    if (s%west /= MPI_PROC_NULL) q(0, 1:s%nyl) = s%rw
    if (s%east /= MPI_PROC_NULL) q(s%nxl+1, 1:s%nyl) = s%re
    if (s%south /= MPI_PROC_NULL) q(1:s%nxl, 0) = s%rs
    if (s%north /= MPI_PROC_NULL) q(1:s%nxl, s%nyl+1) = s%rn
  end subroutine unpack_edges

end module pcg_kernels

program pcg
  use MPI_MODULE
  use pcg_kernels
  implicit none
  integer, parameter :: dp = kind(1.0d0)
  type(solver) :: s
  character(len=16) :: variant
  real(dp) :: tol
  integer :: maxiter, iters, ierr
  logical :: history
  real(dp), allocatable :: x(:,:), b(:,:), r(:,:)
  real(dp) :: t0, seconds, tmax, sums(2), resid, xsum
  character(len=64) :: gridtxt

  call MPI_Init(ierr)
  s%comm = MPI_COMM_WORLD
  call MPI_Comm_rank(s%comm, s%rank, ierr)
  call MPI_Comm_size(s%comm, s%nranks, ierr)
  call parse_args()

  call region(1, "setup")
  call setup()
  call region(-1, "setup")

  call MPI_Barrier(s%comm, ierr)
  t0 = MPI_Wtime()
  call region(1, "solve")
  if (variant == "classic") then
    call solve_classic()
  else
    call solve_cg()
  end if
  call region(-1, "solve")
  seconds = MPI_Wtime() - t0

  call region(1, "check")
  ! True relative residual ||b - A x|| / ||b|| and the sum of x. Every
  ! vector is updated on its ghosts too, so x's ghosts are current.
  call matvec(s, x, r)
  r = b - r
  sums(1) = sum(r(1:s%nxl, 1:s%nyl)**2)
  sums(2) = sum(b(1:s%nxl, 1:s%nyl)**2)
  call global_sum(s, sums, 2)
  resid = sqrt(sums(1) / sums(2))
  sums(1) = sum(x(1:s%nxl, 1:s%nyl))
  call global_sum(s, sums, 1)
  xsum = sums(1)
  call MPI_Reduce(seconds, tmax, 1, MPI_DOUBLE_PRECISION, MPI_MAX, 0, s%comm, ierr)
  if (s%rank == 0) then
    write (gridtxt, '(f12.3)') tmax
    write (*, '(a,i0,a,i0,a,i0,a,a,a,l1,a,l1,a,a,a)') 'pcg: ', s%nranks, ' ranks as ', s%px, &
      'x', s%py, ', variant ', trim(variant), ', prepost ', s%prepost, ', node-aware ', &
      s%node_aware, ', ', trim(adjustl(gridtxt)), ' s'
    write (gridtxt, '(i0,a,i0)') s%nx, 'x', s%ny
    write (*, '(a,a,a,i0,a,a,a,a)') 'RESULT pcg grid=', trim(gridtxt), ' iters=', &
      iters, ' resid=', sci(resid, 2), ' xsum=', sci(xsum, 8)
    flush (6)
  end if
  call region(-1, "check")
  call MPI_Finalize(ierr)

contains

  subroutine parse_args()
    integer :: i, n, st
    character(len=256) :: arg, val
    integer :: grid(2), procs(2)
    real(dp) :: jitter_us
    grid = [256, 256]
    procs = [0, 0]
    variant = "classic"
    tol = 1.0e-8_dp
    maxiter = 1000
    history = .false.
    jitter_us = 0.0_dp
    n = command_argument_count()
    i = 1
    do while (i <= n)
      call get_command_argument(i, arg)
      select case (trim(arg))
      case ("--help", "-h")
        if (s%rank == 0) call usage()
        call MPI_Finalize(ierr)
        stop
      case ("--prepost")
        s%prepost = .true.
      case ("--node-aware")
        s%node_aware = .true.
      case ("--history")
        history = .true.
      case ("--grid", "--procs", "--variant", "--jitter", "--tol", "--maxiter")
        if (i == n) call die("option "//trim(arg)//" needs a value")
        i = i + 1
        call get_command_argument(i, val)
        select case (trim(arg))
        case ("--grid")
          call parse_dims(arg, val, grid)
        case ("--procs")
          call parse_dims(arg, val, procs)
        case ("--variant")
          variant = val
          if (variant /= "classic" .and. variant /= "cg") &
            call die("--variant must be classic or cg, not '"//trim(val)//"'")
        case ("--jitter")
          read (val, *, iostat=st) jitter_us
          if (st /= 0 .or. jitter_us < 0 .or. jitter_us /= jitter_us) &
            call die("--jitter must be a number of microseconds >= 0, not '"//trim(val)//"'")
        case ("--tol")
          read (val, *, iostat=st) tol
          if (st /= 0 .or. tol < 0 .or. tol /= tol) &
            call die("--tol must be a number >= 0, not '"//trim(val)//"'")
        case ("--maxiter")
          read (val, *, iostat=st) maxiter
          if (st /= 0 .or. maxiter < 1 .or. verify(trim(val), "0123456789") /= 0) &
            call die("--maxiter must be an integer >= 1, not '"//trim(val)//"'")
        end select
      case default
        call die("unknown option '"//trim(arg)//"' (see --help)")
      end select
      i = i + 1
    end do
    s%jitter = jitter_us * 1.0e-6_dp
    s%nx = grid(1)
    s%ny = grid(2)
    if (procs(1) == 0) then
      call MPI_Dims_create(s%nranks, 2, procs, ierr)
    else if (procs(1) * procs(2) /= s%nranks) then
      write (val, '(a,i0,a,i0,a,i0)') '--procs ', procs(1), 'x', procs(2), &
        ' does not match the number of ranks, ', s%nranks
      call die(val)
    end if
    s%px = procs(1)
    s%py = procs(2)
    if (s%nx < s%px .or. s%ny < s%py) call die("--grid has fewer points than ranks in a dimension")
  end subroutine parse_args

  subroutine parse_dims(opt, text, out)
    character(len=*), intent(in) :: opt, text
    integer, intent(out) :: out(2)
    integer :: k, st1, st2
    k = index(text, 'x')
    st1 = 1
    st2 = 1
    if (k > 1 .and. verify(trim(text), "0123456789x") == 0 .and. k < len_trim(text)) then
      read (text(1:k-1), *, iostat=st1) out(1)
      read (text(k+1:len_trim(text)), *, iostat=st2) out(2)
    end if
    if (st1 /= 0 .or. st2 /= 0 .or. index(text(k+1:), 'x') /= 0) &
      call die(trim(opt)//" must look like 256x256, not '"//trim(text)//"'")
    if (out(1) < 1 .or. out(2) < 1) call die(trim(opt)//" values must be >= 1")
  end subroutine parse_dims

  subroutine usage()
    write (*, '(a)') 'usage: pcg [--grid NXxNY] [--procs PXxPY] [--variant classic|cg] [--prepost]'
    write (*, '(a)') '           [--node-aware] [--jitter USEC] [--tol T] [--maxiter N] [--history]'
    write (*, '(a)') '  --grid        global points (default 256x256)'
    write (*, '(a)') '  --procs       ranks along x and y, product = number of ranks (default: MPI_Dims_create)'
    write (*, '(a)') '  --variant     classic: 2 MPI_Allreduce per iteration; cg: Chronopoulos-Gear,'
    write (*, '(a)') '                1 MPI_Allreduce of 2 values per iteration (default classic)'
    write (*, '(a)') '  --prepost     post the halo receives before the stencil computation (default: blocking'
    write (*, '(a)') '                receives after the sends)'
    write (*, '(a)') '  --node-aware  global sums as reduce in node, allreduce among node leaders, bcast in node'
    write (*, '(a)') '  --jitter      spin up to USEC microseconds (pseudo-random) after each halo update'
    write (*, '(a)') '  --tol         stop when the preconditioned residual norm falls below T times its'
    write (*, '(a)') '                first value; 0 runs exactly --maxiter iterations (default 1e-8)'
    write (*, '(a)') '  --maxiter     iteration limit (default 1000)'
    write (*, '(a)') '  --history     rank 0 prints the preconditioned residual norm of every iteration'
  end subroutine usage

  subroutine setup()
    integer :: i, j, gi, gj, color, noderank
    s%cx = mod(s%rank, s%px)
    s%cy = s%rank / s%px
    call block(s%nx, s%px, s%cx, s%gx0, s%nxl)
    call block(s%ny, s%py, s%cy, s%gy0, s%nyl)
    s%west = merge(s%rank - 1, MPI_PROC_NULL, s%cx > 0)
    s%east = merge(s%rank + 1, MPI_PROC_NULL, s%cx < s%px - 1)
    s%south = merge(s%rank - s%px, MPI_PROC_NULL, s%cy > 0)
    s%north = merge(s%rank + s%px, MPI_PROC_NULL, s%cy < s%py - 1)
    allocate (s%ae(0:s%nxl+1, 0:s%nyl+1), s%an(0:s%nxl+1, 0:s%nyl+1), s%ainv(0:s%nxl+1, 0:s%nyl+1))
    allocate (x(0:s%nxl+1, 0:s%nyl+1), b(0:s%nxl+1, 0:s%nyl+1), r(0:s%nxl+1, 0:s%nyl+1))
    allocate (s%sw(s%nyl), s%se(s%nyl), s%rw(s%nyl), s%re(s%nyl))
    allocate (s%ss(s%nxl), s%sn(s%nxl), s%rs(s%nxl), s%rn(s%nxl))
    ! Coefficients, right-hand side and preconditioner from global indices,
    ! ghosts included, so no exchange is needed to set them up.
    do j = 0, s%nyl + 1
      do i = 0, s%nxl + 1
        gi = s%gx0 + i
        gj = s%gy0 + j
        s%ae(i, j) = coef_e(gi, gj)
        s%an(i, j) = coef_n(gi, gj)
        b(i, j) = real(modulo(37 * gi + 91 * gj, 101), dp) / 101.0_dp - 0.5_dp
        s%ainv(i, j) = 1.0_dp / (coef_e(gi - 1, gj) + coef_e(gi, gj) + coef_n(gi, gj - 1) &
                                 + coef_n(gi, gj))
        if (gi < 1 .or. gi > s%nx .or. gj < 1 .or. gj > s%ny) then
          b(i, j) = 0.0_dp
          s%ainv(i, j) = 0.0_dp
        end if
      end do
    end do
    x = 0.0_dp
    r = 0.0_dp
    s%node = MPI_COMM_NULL
    s%leaders = MPI_COMM_NULL
    if (s%node_aware) then
      call MPI_Comm_split_type(s%comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, s%node, ierr)
      call MPI_Comm_rank(s%node, noderank, ierr)
      color = merge(0, MPI_UNDEFINED, noderank == 0)
      call MPI_Comm_split(s%comm, color, s%rank, s%leaders, ierr)
    end if
  end subroutine setup

  ! block: n points over p parts, the first mod(n, p) one larger; part c
  ! (from 0) starts after global index g0 (its first point is g0 + 1).
  subroutine block(n, p, c, g0, len)
    integer, intent(in) :: n, p, c
    integer, intent(out) :: g0, len
    g0 = c * (n / p) + min(c, mod(n, p))
    len = n / p + merge(1, 0, c < mod(n, p))
  end subroutine block

  logical function converged(it, gamma, gamma0)
    integer, intent(in) :: it
    real(dp), intent(in) :: gamma, gamma0
    if (history .and. s%rank == 0) write (*, '(a,i0,a,a)') 'iter ', it, ' rnorm ', sci(sqrt(gamma), 15)
    converged = tol > 0.0_dp .and. sqrt(gamma / gamma0) < tol
  end function converged

  ! Classic PCG as in POP: (r, z) and (s, q) are two separate global sums.
  subroutine solve_classic()
    real(dp), allocatable :: z(:,:), d(:,:), q(:,:)
    real(dp) :: rz, rz_old, rz0, dq(1), alpha
    integer :: it
    allocate (z, mold=x)
    allocate (d, mold=x)
    allocate (q, mold=x)
    r = b
    d = 0.0_dp
    q = 0.0_dp
    rz_old = 1.0_dp
    iters = 0
    do it = 1, maxiter
      z = r * s%ainv
      dq(1) = sum(r(1:s%nxl, 1:s%nyl) * z(1:s%nxl, 1:s%nyl))
      call global_sum(s, dq, 1)
      rz = dq(1)
      if (it == 1) rz0 = rz
      if (converged(it, rz, rz0)) exit
      d = z + (rz / rz_old) * d
      if (it == 1) d = z
      call matvec(s, d, q)
      call spin(s, it)
      dq(1) = sum(d(1:s%nxl, 1:s%nyl) * q(1:s%nxl, 1:s%nyl))
      call global_sum(s, dq, 1)
      alpha = rz / dq(1)
      x = x + alpha * d
      r = r - alpha * q
      rz_old = rz
      iters = it
    end do
  end subroutine solve_classic

  ! Chronopoulos-Gear PCG: gamma = (r, u) and delta = (w, u) with w = A u
  ! travel in one global sum; d and its image q = A d follow by recurrence.
  subroutine solve_cg()
    real(dp), allocatable :: u(:,:), w(:,:), d(:,:), q(:,:)
    real(dp) :: gd(2), gamma, gamma0, gamma_old, alpha, alpha_old, beta
    integer :: it
    allocate (u, mold=x)
    allocate (w, mold=x)
    allocate (d, mold=x)
    allocate (q, mold=x)
    r = b
    w = 0.0_dp
    d = 0.0_dp
    q = 0.0_dp
    u = r * s%ainv
    call matvec(s, u, w)
    call spin(s, 0)
    gamma_old = 1.0_dp
    alpha_old = 1.0_dp
    iters = 0
    do it = 1, maxiter
      gd(1) = sum(r(1:s%nxl, 1:s%nyl) * u(1:s%nxl, 1:s%nyl))
      gd(2) = sum(w(1:s%nxl, 1:s%nyl) * u(1:s%nxl, 1:s%nyl))
      call global_sum(s, gd, 2)
      gamma = gd(1)
      if (it == 1) gamma0 = gamma
      if (converged(it, gamma, gamma0)) exit
      if (it == 1) then
        beta = 0.0_dp
        alpha = gamma / gd(2)
      else
        beta = gamma / gamma_old
        alpha = gamma / (gd(2) - beta * gamma / alpha_old)
      end if
      d = u + beta * d
      q = w + beta * q
      x = x + alpha * d
      r = r - alpha * q
      u = r * s%ainv
      call matvec(s, u, w)
      call spin(s, it)
      gamma_old = gamma
      alpha_old = alpha
      iters = it
    end do
  end subroutine solve_cg

end program pcg
