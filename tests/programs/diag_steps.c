/*
 * A loop of work, each step followed by a barrier, an allreduce or nothing
 * (the excessive-barriers and late-arrival rules' tests).
 *   diag_steps STEPS USEC none|barrier|allreduce [even|rotate]
 * Each step rank r spins USEC * (1 + r % 2) microseconds (uneven: the odd
 * ranks arrive late, every step), or USEC on every rank with "even", or
 * USEC * (1 + (r + step) % 2) with "rotate" (the late half changes every
 * step: without a call between steps, their work overlaps); then the step's call.
 * With "allreduce" the step sums one long (8 bytes). One MPI_Allreduce at the
 * end checks that every rank ran every step.
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
    int steps = argc > 1 ? atoi(argv[1]) : 100;
    double usec = argc > 2 ? atof(argv[2]) : 200;
    const char *op = argc > 3 ? argv[3] : "none";
    int even = argc > 4 && !strcmp(argv[4], "even");
    int rotate = argc > 4 && !strcmp(argv[4], "rotate");
    long done = 0, total = 0, one = 1, sum = 0;
    for (int s = 0; s < steps; s++) {
        spin(usec * 1e-6 * (even ? 1 : 1 + (rank + (rotate ? s : 0)) % 2));
        if (!strcmp(op, "barrier"))
            MPI_Barrier(MPI_COMM_WORLD);
        else if (!strcmp(op, "allreduce"))
            MPI_Allreduce(&one, &sum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
        done++;
    }
    MPI_Allreduce(&done, &total, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("diag_steps %s steps=%d total=%ld\n", op, steps, total);
    MPI_Finalize();
    return 0;
}
