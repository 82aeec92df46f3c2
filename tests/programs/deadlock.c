/*
 * Hangs on purpose, for the snapshot tests (tests/runtime/lifecycle/test_runtime_snapshot.py):
 * after known traffic (one MPI_Allreduce, one ring MPI_Sendrecv of 8 ints),
 * every rank prints its pid, then the last rank calls MPI_Barrier and all the
 * others MPI_Recv from the last rank, which never sends: a snapshot must show
 * size-1 ranks in MPI_Recv from rank size-1 and that rank in MPI_Barrier.
 */
#include <mpi.h>
#include <stdio.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    int rank, size, x, sum, out[8] = {0}, in[8];
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    x = rank;
    MPI_Allreduce(&x, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Sendrecv(out, 8, MPI_INT, (rank + 1) % size, 1, in, 8, MPI_INT, (rank + size - 1) % size, 1,
                 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    printf("deadlock: rank %d pid %d\n", rank, (int)getpid());
    fflush(stdout);
    if (rank == size - 1)
        MPI_Barrier(MPI_COMM_WORLD);
    else
        MPI_Recv(&x, 1, MPI_INT, size - 1, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Finalize();
    return 0;
}
