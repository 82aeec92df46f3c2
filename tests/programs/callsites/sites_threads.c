/*
 * sites_threads.c - two threads of each rank call MPI_Allreduce from two
 * different lines (MPI_THREAD_MULTIPLE, each on its own communicator), 3 and
 * 5 times; the main thread calls MPI_Barrier. Every call line carries a
 * "site:NAME" marker the test finds.
 */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static MPI_Comm comms[2];

static void *first(void *arg)
{
    (void)arg;
    double x = 1.0, y;
    for (int i = 0; i < 3; i++)
        MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, comms[0]); /* site:thread_a */
    return NULL;
}

static void *second(void *arg)
{
    (void)arg;
    double x = 1.0, y;
    for (int i = 0; i < 5; i++)
        MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, comms[1]); /* site:thread_b */
    return NULL;
}

int main(int argc, char **argv)
{
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    if (provided < MPI_THREAD_MULTIPLE) {
        fprintf(stderr, "sites_threads: no MPI_THREAD_MULTIPLE\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    MPI_Comm_dup(MPI_COMM_WORLD, &comms[0]);
    MPI_Comm_dup(MPI_COMM_WORLD, &comms[1]);
    pthread_t a, b;
    pthread_create(&a, NULL, first, NULL);
    pthread_create(&b, NULL, second, NULL);
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    MPI_Barrier(MPI_COMM_WORLD); /* site:main_barrier */
    MPI_Comm_free(&comms[0]);
    MPI_Comm_free(&comms[1]);
    MPI_Finalize();
    return 0;
}
