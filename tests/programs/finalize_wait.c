/*
 * Every rank but the last reaches MPI_Finalize while the last still works,
 * for the snapshot tests (tests/runtime/lifecycle/test_runtime_snapshot.py):
 * a snapshot asked for then must find those ranks in MPI_Finalize, alive.
 *
 * After one MPI_Allreduce (1 int), every rank prints "finalize_wait: rank R
 * pid P"; the last rank then waits outside MPI until the file "go" exists in
 * the working directory (the test creates it; at most 300 s), the others call
 * MPI_Finalize at once. Every rank prints "finalize_wait: rank R done" after
 * MPI_Finalize returns.
 */
#include <mpi.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    int rank, size, x = 1, sum;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Allreduce(&x, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    printf("finalize_wait: rank %d pid %d\n", rank, (int)getpid());
    fflush(stdout);
    if (rank == size - 1) {
        struct timespec nap = {0, 10000000};
        for (int i = 0; i < 30000 && access("go", F_OK) != 0; i++)
            nanosleep(&nap, NULL);
    }
    MPI_Finalize();
    printf("finalize_wait: rank %d done\n", rank);
    return 0;
}
