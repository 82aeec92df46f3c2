/*
 * CPU work split over the ranks, for the truth benchmark (perf/truth) and the CPU rules'
 * tests: the same total work at any rank count, so a run at fewer ranks is the fixed twin of
 * an oversubscribed one, and a balanced run the twin of an imbalanced one.
 *   omp_truth_work STEPS WORK [HOT]
 * Each step the ranks share WORK iterations of arithmetic (real work: a rank that shares its
 * CPU takes longer; OpenMP threads share a rank's part), then sum one double with
 * MPI_Allreduce (every rank waits for the slowest each step). HOT > 1: rank 0's part is HOT
 * times another rank's, the total unchanged (HOT 1 or absent: even parts).
 * Rank 0 prints "truth_work steps=S ranks=P threads=T sum=...".
 */
#include <mpi.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

#include "omp_work.h"

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int steps = argc > 1 ? atoi(argv[1]) : 20;
    double total = argc > 2 ? atof(argv[2]) : 1e7;
    double hot = argc > 3 ? atof(argv[3]) : 1.0;
    if (hot < 1.0)
        hot = 1.0;
    /* parts: rank 0 weighs hot, the others 1, summing to total */
    double unit = total / (hot + (double)(size - 1));
    long mine = (long)(unit * (rank == 0 ? hot : 1.0));
    double sum = 0.0;
    for (int s = 0; s < steps; s++) {
        double part = work(mine, s), all = 0.0;
        MPI_Allreduce(&part, &all, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        sum += all;
    }
    if (rank == 0)
        printf("truth_work steps=%d ranks=%d threads=%d sum=%.6e\n", steps, size,
               omp_get_max_threads(), sum);
    MPI_Finalize();
    return 0;
}
