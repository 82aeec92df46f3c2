/* 24 compute functions of planted cost per rank, to check the summary's bound
 * (MPISCOPE_SAMPLE_MAX=16 functions kept over all ranks). Costs in units:
 *   rank 0:          f00..f15 10 each, f16..f23 1 each;
 *   the other ranks: f00..f11 10 each, f12..f15 not called, f16..f19 4, f20..f23 1.
 * Every rank's own top 16 differ (rank 1's holds f16..f19), the union of them
 * has 20 functions, and the 16 of most samples over ranks are f00..f15.
 * usage: many UNIT STEPS   (UNIT loop trips per unit and step) */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static volatile double sink = 1.0;

/* RATIONALE: a macro, so every sample lands in the function that owns the
 * loop; a constant per function keeps the compiler from folding them. */
#define F(k)                                                   \
    __attribute__((noinline)) void f##k(long n)                \
    {                                                          \
        double x = sink;                                       \
        for (long i = 0; i < n; i++)                           \
            x = x * 1.0000001 + 1e-9 * (1##k - 99);            \
        sink = x;                                              \
    }
F(00) F(01) F(02) F(03) F(04) F(05) F(06) F(07) F(08) F(09) F(10) F(11)
F(12) F(13) F(14) F(15) F(16) F(17) F(18) F(19) F(20) F(21) F(22) F(23)

static void (*const fns[24])(long) = {f00, f01, f02, f03, f04, f05, f06, f07, f08, f09, f10, f11,
                                      f12, f13, f14, f15, f16, f17, f18, f19, f20, f21, f22, f23};

static int units(int rank, int k)
{
    if (rank == 0)
        return k < 16 ? 10 : 1;
    return k < 12 ? 10 : k < 16 ? 0 : k < 20 ? 4 : 1;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    long unit = argc > 1 ? atol(argv[1]) : 100000;
    int steps = argc > 2 ? atoi(argv[2]) : 10;
    double in = 1.0, out = 0.0;
    for (int s = 0; s < steps; s++) {
        for (int k = 0; k < 24; k++)
            if (units(rank, k))
                fns[k](units(rank, k) * unit);
        MPI_Allreduce(&in, &out, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    }
    if (rank == 0)
        printf("steps %d sum %.0f\n", steps, out);
    MPI_Finalize();
    return 0;
}
