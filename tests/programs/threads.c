/*
 * MPI_THREAD_MULTIPLE: two threads per rank call MPI at the same time, each
 * on its own duplicate of MPI_COMM_WORLD.
 *   main thread: 30 x MPI_Sendrecv of 3 doubles (24 B) to left, from right, on dup A
 *   second thread: 20 x MPI_Sendrecv of 8 ints (32 B) to right, from left, on dup B
 * Per rank: MPI_Sendrecv 50 calls, 1360 B sent; peers left 30 msgs 720 B,
 * right 20 msgs 640 B (one peer with 50 msgs at 2 ranks); 2 threads called MPI.
 *
 * `threads DELAY_MS`: the last rank sleeps DELAY_MS before it starts both loops, so on
 * rank 0 (whose peers are all the last rank at 2 ranks) both threads block in their first
 * MPI_Sendrecv for DELAY_MS at the same time: its MPI time summed over threads exceeds its
 * wall time whatever the scheduler does. Counts and results are the same as without it.
 */
#include <mpi.h>
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>
#include "known.h"

enum { MAIN_ITERS = 30, SIDE_ITERS = 20 };

struct side {
    MPI_Comm comm;
    int rank, left, right, ok;
    long long check;
};

static void *side_thread(void *arg)
{
    struct side *s = arg;
    int out[8], in[8];
    for (int it = 0; it < SIDE_ITERS; it++) {
        for (int i = 0; i < 8; i++)
            out[i] = known_val(s->rank, it, i);
        MPI_Sendrecv(out, 8, MPI_INT, s->right, it, in, 8, MPI_INT, s->left, it, s->comm,
                     MPI_STATUS_IGNORE);
        for (int i = 0; i < 8; i++)
            s->ok &= in[i] == known_val(s->left, it, i), s->check += in[i];
    }
    return NULL;
}

int main(int argc, char **argv)
{
    int rank, size, provided, ok = 1;
    long long check = 0;
    MPI_Comm a, b;
    pthread_t tid;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (provided < MPI_THREAD_MULTIPLE) {
        printf("threads rank %d: MPI_THREAD_MULTIPLE not provided (%d)\n", rank, provided);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int left = (rank - 1 + size) % size, right = (rank + 1) % size;
    MPI_Comm_dup(MPI_COMM_WORLD, &a);
    MPI_Comm_dup(MPI_COMM_WORLD, &b);
    if (argc > 1 && rank == size - 1)
        usleep(1000 * (useconds_t)atoi(argv[1]));
    struct side s = {b, rank, left, right, 1, 0};
    pthread_create(&tid, NULL, side_thread, &s);
    double out[3], in[3];
    for (int it = 0; it < MAIN_ITERS; it++) {
        for (int i = 0; i < 3; i++)
            out[i] = rank * 1000 + it * 10 + i;
        MPI_Sendrecv(out, 3, MPI_DOUBLE, left, it, in, 3, MPI_DOUBLE, right, it, a,
                     MPI_STATUS_IGNORE);
        for (int i = 0; i < 3; i++)
            ok &= in[i] == right * 1000 + it * 10 + i, check += (long long)in[i];
    }
    pthread_join(tid, NULL);
    MPI_Comm_free(&a);
    MPI_Comm_free(&b);
    known_result("threads", rank, check + s.check, ok && s.ok);
    MPI_Finalize();
    return 0;
}
