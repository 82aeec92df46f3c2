/*
 * A rank that dies: after one barrier, rank 1 kills itself with SIGKILL (no
 * handler can run, nothing is flushed); the others enter a second barrier
 * that can never complete. The launcher must end the job with a non-zero
 * exit code and the runtime must not keep it alive.
 */
#include <mpi.h>
#include <signal.h>
#include "known.h"

int main(int argc, char **argv)
{
    int rank;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 1) {
        printf("rank_dies rank 1 raises SIGKILL\n");
        fflush(stdout);
        raise(SIGKILL);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    known_result("rank_dies", rank, 0, 0); /* never reached */
    MPI_Finalize();
    return 0;
}
