/* Two compute functions of known 3:1 cost (the same loop, 3x the trips), an
 * Allreduce per step; rank SLOW does FACTOR times more heavy_kernel.
 * usage: cost N STEPS SLOW FACTOR */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static volatile double sink = 1.0;

/* RATIONALE: a macro, not a shared helper, so that every sample lands in the
 * function that owns the loop. */
#define BODY(n)                                      \
    do {                                             \
        double x = sink;                             \
        for (long i = 0; i < (n); i++)               \
            x = x * 1.0000001 + 1e-9;                \
        sink = x;                                    \
    } while (0)

__attribute__((noinline)) void light_kernel(long n) { BODY(n); }
__attribute__((noinline)) void heavy_kernel(long n) { BODY(3 * n); }

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    long n = argc > 1 ? atol(argv[1]) : 1000000;
    int steps = argc > 2 ? atoi(argv[2]) : 10;
    int slow = argc > 3 ? atoi(argv[3]) : -1;
    long factor = argc > 4 ? atol(argv[4]) : 1;
    double in = 1.0, out = 0.0;
    for (int s = 0; s < steps; s++) {
        light_kernel(n);
        heavy_kernel(rank == slow ? factor * n : n);
        MPI_Allreduce(&in, &out, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    }
    if (rank == 0)
        printf("steps %d sum %.0f\n", steps, out);
    MPI_Finalize();
    return 0;
}
