/* One rank, two OpenMP threads: thread 0 runs light_kernel (N trips),
 * thread 1 heavy_kernel (3N trips). Both call MPI in the parallel region,
 * or with "nompi" only the master thread calls MPI, outside it (the worker
 * never has tables of its own: sampled through the runtime's pthread_create);
 * with "even" both threads run light_kernel (balanced threads).
 * usage: omp N [mpi|nompi] [even] */
#include <string.h>
#include <mpi.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

#define BODY(n)                                      \
    do {                                             \
        double x = 1.0;                              \
        for (long i = 0; i < (n); i++)               \
            x = x * 1.0000001 + 1e-9;                \
        sum[omp_get_thread_num()] = x;               \
    } while (0)

static double sum[2];
__attribute__((noinline)) void light_kernel(long n) { BODY(n); }
__attribute__((noinline)) void heavy_kernel(long n) { BODY(3 * n); }

int main(int argc, char **argv)
{
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    long n = argc > 1 ? atol(argv[1]) : 1000000;
    int mpi_in_region = !(argc > 2 && strcmp(argv[2], "nompi") == 0);
    int even = argc > 3 && strcmp(argv[3], "even") == 0;
#pragma omp parallel num_threads(2)
    {
        int rank;
        if (mpi_in_region)
            MPI_Comm_rank(MPI_COMM_WORLD, &rank);   /* this thread's first MPI call: its timer */
        if (omp_get_thread_num() == 0 || even)
            light_kernel(n);
        else
            heavy_kernel(n);
    }
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0)
        printf("provided %d threads %d\n", provided >= MPI_THREAD_MULTIPLE, omp_get_max_threads() >= 1);
    MPI_Finalize();
    return 0;
}
