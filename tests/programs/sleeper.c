/* Starts, says "ready" once every rank is in, then sleeps (argv[1] seconds,
 * default 300) before finishing: a job to send signals to. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    int rank, seconds = argc > 1 ? atoi(argv[1]) : 300;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        printf("ready\n");
        fflush(stdout);
    }
    for (int i = 0; i < seconds; i++)
        sleep(1);
    MPI_Finalize();
    return 0;
}
