/*
 * More threads than the runtime has tables of one thread each (256), for
 * tests/runtime/counting/test_runtime_threads.py:
 *   many_threads SERIAL CALLS CONCURRENT
 * MPI_THREAD_MULTIPLE. Phase 1: SERIAL short-lived threads, four alive at a
 * time (made in waves of four, each wave joined before the next), each
 * calling MPI_Comm_rank(MPI_COMM_WORLD) CALLS times. Phase 2: CONCURRENT
 * threads alive at once (they wait for each other on a barrier before and
 * after their calls), each calling MPI_Comm_rank CALLS times. The main thread
 * calls MPI_Comm_rank once and MPI_Allreduce (1 int) once, then checks the
 * ranks every thread saw.
 * Per rank: MPI_Comm_rank (SERIAL + CONCURRENT) x CALLS + 1 calls, 1
 * MPI_Allreduce; SERIAL + CONCURRENT + 1 threads called MPI.
 */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static long calls;
static int my_rank;
static pthread_barrier_t together;
static int use_barrier;

static void *worker(void *arg)
{
    int bad = 0, r;
    if (use_barrier)
        pthread_barrier_wait(&together);
    for (long i = 0; i < calls; i++) {
        MPI_Comm_rank(MPI_COMM_WORLD, &r);
        bad |= r != my_rank;
    }
    if (use_barrier)
        pthread_barrier_wait(&together);
    *(int *)arg = bad;
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: many_threads SERIAL CALLS CONCURRENT\n");
        return 2;
    }
    int serial = atoi(argv[1]), concurrent = atoi(argv[3]), provided, size, one = 1, sum, bad = 0;
    calls = atol(argv[2]);
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    if (provided < MPI_THREAD_MULTIPLE) {
        fprintf(stderr, "many_threads: MPI_THREAD_MULTIPLE not provided\n");
        MPI_Abort(MPI_COMM_WORLD, 3);
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &my_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int n = serial > concurrent ? serial : concurrent;
    pthread_t *th = calloc((size_t)n, sizeof *th);
    int *res = calloc((size_t)n, sizeof *res);
    for (int w = 0; w < serial; w += 4) {
        int k = serial - w < 4 ? serial - w : 4;
        for (int i = 0; i < k; i++)
            pthread_create(&th[i], NULL, worker, &res[i]);
        for (int i = 0; i < k; i++)
            pthread_join(th[i], NULL), bad |= res[i];
    }
    use_barrier = 1;
    pthread_barrier_init(&together, NULL, (unsigned)concurrent);
    for (int i = 0; i < concurrent; i++)
        if (pthread_create(&th[i], NULL, worker, &res[i]) != 0) {
            fprintf(stderr, "many_threads: cannot start thread %d\n", i);
            MPI_Abort(MPI_COMM_WORLD, 4);
        }
    for (int i = 0; i < concurrent; i++)
        pthread_join(th[i], NULL), bad |= res[i];
    MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (my_rank == 0)
        printf("many_threads: %s on %d ranks\n", bad || sum != size ? "WRONG" : "ok", size);
    free(th);
    free(res);
    MPI_Finalize();
    return bad != 0;
}
