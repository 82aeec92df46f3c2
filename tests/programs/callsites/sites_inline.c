/*
 * sites_inline.c - an MPI call inside a function the compiler inlines into
 * two callers (built with -O2): the site is the line written in the inlined
 * function, and where it was inlined tells the two apart. With VARIANT
 * defined it is built differently (the test's "rebuilt after the run").
 * Every call line carries a "site:NAME" marker the test finds.
 */
#include <mpi.h>
#include <stdio.h>

static inline __attribute__((always_inline)) void exchange(double *x, double *y)
{
    MPI_Allreduce(x, y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD); /* site:inlined */
}

int main(int argc, char **argv)
{
    double x = 1.0, y = 0.0;
    MPI_Init(&argc, &argv);
    for (int i = 0; i < 3; i++)
        exchange(&x, &y); /* site:inline_from_1 */
#ifdef VARIANT
    x = 2.0 * y;
    printf("sites_inline: a rebuilt variant, x = %g\n", x);
#endif
    for (int i = 0; i < 5; i++)
        exchange(&x, &y); /* site:inline_from_2 */
    MPI_Finalize();
    return 0;
}
