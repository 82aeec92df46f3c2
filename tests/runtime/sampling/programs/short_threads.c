/* Work done in many short threads, one after another: each runs short_work for
 * about a millisecond of CPU time, less than one sampling period at 1000 Hz.
 * usage: short_threads THREADS TRIPS */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static volatile double sink = 1.0;
static long trips;

__attribute__((noinline)) static void short_work(long n)
{
    double x = sink;
    for (long i = 0; i < n; i++)
        x = x * 1.0000001 + 1e-9;
    sink = x;
}

static void *thread_main(void *arg)
{
    (void)arg;
    short_work(trips);
    return NULL;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int threads = argc > 1 ? atoi(argv[1]) : 400;
    trips = argc > 2 ? atol(argv[2]) : 2000000;
    int made = 0;
    for (int i = 0; i < threads; i++) {
        pthread_t t;
        if (pthread_create(&t, NULL, thread_main, NULL) == 0 && pthread_join(t, NULL) == 0)
            made++;
    }
    int all = 0;
    MPI_Allreduce(&made, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    printf("short_threads threads %d\n", all);
    MPI_Finalize();
    return 0;
}
