! Fortran twin of cost.c: two module procedures of known 3:1 cost, an
! MPI_Allreduce per step; rank SLOW does FACTOR times more heavy_kernel.
! usage: cost_f N STEPS SLOW FACTOR
module cost_kernels
  implicit none
  real(8), volatile :: sink = 1.0d0
contains
  subroutine light_kernel(n)
    integer(8), intent(in) :: n
    integer(8) :: i
    real(8) :: x
    x = sink
    do i = 1, n
      x = x * 1.0000001d0 + 1d-9
    end do
    sink = x
  end subroutine light_kernel

  subroutine heavy_kernel(n)
    integer(8), intent(in) :: n
    integer(8) :: i
    real(8) :: x
    x = sink
    do i = 1, 3 * n
      x = x * 1.0000001d0 + 1d-9
    end do
    sink = x
  end subroutine heavy_kernel
end module cost_kernels

program cost_f
  use mpi
  use cost_kernels
  implicit none
  integer :: ierr, rank, steps, slow, factor, s, k
  integer(8) :: n
  real(8) :: one, total
  character(len=32) :: arg
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call get_command_argument(1, arg); read (arg, *) n
  call get_command_argument(2, arg); read (arg, *) steps
  call get_command_argument(3, arg); read (arg, *) slow
  call get_command_argument(4, arg); read (arg, *) factor
  do s = 1, steps
    call light_kernel(n)
    do k = 1, merge(factor, 1, rank == slow)
      call heavy_kernel(n)
    end do
    one = 1.0d0
    call MPI_Allreduce(one, total, 1, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
  end do
  if (rank == 0) print '(a,i0,a,i0)', 'steps ', steps, ' sum ', nint(total)
  call MPI_Finalize(ierr)
end program cost_f
