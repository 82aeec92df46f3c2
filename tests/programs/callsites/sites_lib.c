/*
 * sites_lib.c - call sites in a shared library (libsites_lib.so), loaded by
 * sites_libmain.c with dlopen at an address that differs between ranks.
 * Every call line carries a "site:NAME" marker the test finds.
 */
#include <mpi.h>

void sites_lib_work(int reps)
{
    double x = 1.0, y = 0.0;
    for (int i = 0; i < 2 * reps; i++)
        MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD); /* site:lib_a */
    for (int i = 0; i < 3 * reps; i++)
        MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD); /* site:lib_b */
}
