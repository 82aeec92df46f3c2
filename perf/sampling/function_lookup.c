/* What summary mode's per-address function look-up costs at MPI_Finalize
 * (runtime/tables/sampling.c function_start, docs/sampling.md "Summary mode"):
 * _Unwind_FindEnclosingFunction on addresses in the program, libmpi and libc,
 * with libmpi loaded as under the runtime.
 *   mpicc.openmpi -O2 -o /tmp/function_lookup perf/sampling/function_lookup.c
 *   /tmp/function_lookup          # prints microseconds per look-up */
#include <mpi.h>
#include <stdio.h>
#include <time.h>
#include <unwind.h>

__attribute__((noinline)) double work(int n)
{
    double x = 0;
    for (int i = 0; i < n; i++)
        x += i * 0.5;
    return x;
}

int main(void)
{
    void *fns[] = {(void *)work, (void *)main, (void *)MPI_Allreduce, (void *)printf};
    struct timespec a, b;
    const int n = 100000;
    int found = 0;
    clock_gettime(CLOCK_MONOTONIC, &a);
    for (int i = 0; i < n; i++)
        found += _Unwind_FindEnclosingFunction((char *)fns[i % 4] + 1 + i % 7) != NULL;
    clock_gettime(CLOCK_MONOTONIC, &b);
    double us = ((double)(b.tv_sec - a.tv_sec) * 1e9 + (double)(b.tv_nsec - a.tv_nsec)) / n / 1e3;
    printf("%.3f us per look-up, %d of %d found\n", us, found, n);
    return 0;
}
