/*
 * Scalar allreduces, two per step or fused into one, for the truth benchmark (perf/truth)
 * and the small-collectives tests: how much of their time fusing removes.
 *   truth_coll STEPS split|fused [LATE_USEC [WORK_USEC]]
 * Each step every rank spins WORK_USEC microseconds (odd ranks LATE_USEC more: planted
 * waiting at the allreduce, wall-clock timed), then sums two doubles: "split" with two 8-byte
 * MPI_Allreduce calls (classic CG's two dot products), "fused" with one 16-byte call
 * (Chronopoulos-Gear's). Rank 0 prints "truth_coll steps=S calls=C sum=...".
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pace.h"

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    int steps = argc > 1 ? atoi(argv[1]) : 1000;
    int fused = argc > 2 && !strcmp(argv[2], "fused");
    double late = argc > 3 ? atof(argv[3]) * 1e-6 : 0.0, busy = argc > 4 ? atof(argv[4]) * 1e-6 : 0.0;
    double mine[2], all[2], sum = 0.0;
    long calls = 0;
    for (int s = 0; s < steps; s++) {
        spin(busy + (rank % 2 ? late : 0.0));
        mine[0] = rank + s;
        mine[1] = 1.0;
        if (fused) {
            MPI_Allreduce(mine, all, 2, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
            calls++;
        } else {
            MPI_Allreduce(&mine[0], &all[0], 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
            MPI_Allreduce(&mine[1], &all[1], 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
            calls += 2;
        }
        sum += all[0] + all[1];
    }
    if (rank == 0)
        printf("truth_coll steps=%d calls=%ld sum=%.6e\n", steps, calls, sum);
    MPI_Finalize();
    return 0;
}
