/*
 * A program that finishes MPI cleanly and then exits with its own code:
 * argv[1] (default 3) on every rank. With or without the runtime, the launch
 * must report that code, and the profile is still written at MPI_Finalize.
 */
#include <mpi.h>
#include <stdlib.h>
#include "known.h"

int main(int argc, char **argv)
{
    int rank, size, sum, code = argc > 1 ? atoi(argv[1]) : 3;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    known_result("exit_code", rank, sum, sum == size * (size - 1) / 2);
    MPI_Finalize();
    return code;
}
