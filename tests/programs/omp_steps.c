/*
 * Hybrid MPI + OpenMP steps (the environment rules' tests: CPU binding, OpenMP threads,
 * MPI_Finalize wait).
 *   omp_steps STEPS WORK [END_MS]
 * Each step the rank's OpenMP threads share WORK iterations of arithmetic (real work, so
 * threads that share a CPU take longer), then one MPI_Allreduce of 8 bytes. After the last
 * step (and its check), odd ranks spin END_MS milliseconds more before MPI_Finalize, with no
 * MPI call in between: the even ranks wait for them in MPI_Finalize.
 * Rank 0 prints "omp_steps steps=S threads=T sum=..." (T: OpenMP's threads per rank).
 */
#include <mpi.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

#include "omp_work.h"

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    int steps = argc > 1 ? atoi(argv[1]) : 20;
    long n = argc > 2 ? atol(argv[2]) : 1000000;
    double end_ms = argc > 3 ? atof(argv[3]) : 0.0;
    double total = 0.0;
    for (int s = 0; s < steps; s++) {
        double mine = work(n, s), sum = 0.0;
        MPI_Allreduce(&mine, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        total += sum;
    }
    if (rank == 0)
        printf("omp_steps steps=%d threads=%d sum=%.6e\n", steps, omp_get_max_threads(), total);
    if (rank % 2 && end_ms > 0) {
        double t0 = MPI_Wtime();
        while (MPI_Wtime() - t0 < end_ms * 1e-3)
            ;
    }
    MPI_Finalize();
    return 0;
}
