/*
 * MPI_Abort from one rank while the others wait: rank P-1 (argv[1] can pick
 * another) calls MPI_Abort(MPI_COMM_WORLD, 7) after one barrier; every other
 * rank blocks in an MPI_Recv that is never matched, or, with argv[2] "late",
 * has gone on into MPI_Finalize (where the runtime writes the profile with
 * collectives the aborting rank never joins). The job must end (the launcher
 * kills it) with exit code 7, and the runtime must not hang.
 */
#include <mpi.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "known.h"

int main(int argc, char **argv)
{
    int rank, size, buf;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int who = argc > 1 ? atoi(argv[1]) : size - 1;
    MPI_Barrier(MPI_COMM_WORLD);
    if (argc > 2 && strcmp(argv[2], "late") == 0) {
        if (rank == who) {
            usleep(300000); /* let the others reach MPI_Finalize first */
            printf("abort rank %d calls MPI_Abort(7)\n", rank);
            fflush(stdout);
            MPI_Abort(MPI_COMM_WORLD, 7);
        }
        MPI_Finalize();
        return 0;
    }
    if (rank == who) {
        printf("abort rank %d calls MPI_Abort(7)\n", rank);
        fflush(stdout);
        MPI_Abort(MPI_COMM_WORLD, 7);
    } else {
        MPI_Recv(&buf, 1, MPI_INT, who, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    known_result("abort", rank, 0, 0); /* never reached */
    MPI_Finalize();
    return 0;
}
