/*
 * Four threads per rank at each MPI thread level (argv[1]: multiple,
 * serialized, funneled; default multiple). Four kinds of work, each on its
 * own duplicate of MPI_COMM_WORLD (the window on its own too):
 *   p2p   P2P_ITERS x MPI_Sendrecv of 16 doubles (128 B) to right, from left
 *   coll  COLL_ITERS x (MPI_Allreduce of 4 ints, 16 B; MPI_Bcast of 6 ints
 *         from rank 0, 24 B)
 *   rma   RMA_ITERS x (MPI_Win_fence; MPI_Accumulate(MPI_SUM) of 1 int, 4 B,
 *         into the right neighbour's window) then a closing MPI_Win_fence:
 *         every rank's window must end at RMA_ITERS (a lost update shows)
 *   nb    NB_ITERS x (MPI_Irecv 8 ints from right, MPI_Isend 8 ints, 32 B, to
 *         left, MPI_Waitall)
 * multiple:   four threads, one kind each, at the same time;
 * serialized: four threads, one kind each, one after the other (a token
 *             passed along a condition variable: never two in MPI at once);
 * funneled:   the main thread does all four kinds while three other threads
 *             compute (summing arrays), then joins them.
 * Setup on the main thread: 4 x MPI_Comm_dup, MPI_Win_allocate, MPI_Barrier, and after the
 * work MPI_Win_free, 4 x MPI_Comm_free.
 */
#include <mpi.h>
#include <pthread.h>
#include <string.h>
#include "known.h"

enum { P2P_ITERS = 40, COLL_ITERS = 30, RMA_ITERS = 25, NB_ITERS = 35, NKIND = 4 };

static int rank, size, left, right;
static MPI_Comm comm[NKIND];
static MPI_Win win;
static int *winbuf;
static int ok[NKIND];
static long long check[NKIND];

static void p2p(void)
{
    double out[16], in[16];
    for (int it = 0; it < P2P_ITERS; it++) {
        for (int i = 0; i < 16; i++)
            out[i] = known_val(rank, it, i);
        MPI_Sendrecv(out, 16, MPI_DOUBLE, right, it, in, 16, MPI_DOUBLE, left, it, comm[0],
                     MPI_STATUS_IGNORE);
        for (int i = 0; i < 16; i++)
            ok[0] &= in[i] == known_val(left, it, i), check[0] += (long long)in[i];
    }
}

static void coll(void)
{
    for (int it = 0; it < COLL_ITERS; it++) {
        int v[4], s[4], b[6];
        for (int i = 0; i < 4; i++)
            v[i] = rank + it + i;
        MPI_Allreduce(v, s, 4, MPI_INT, MPI_SUM, comm[1]);
        for (int i = 0; i < 4; i++)
            ok[1] &= s[i] == size * (size - 1) / 2 + size * (it + i), check[1] += s[i];
        for (int i = 0; i < 6; i++)
            b[i] = rank == 0 ? 100 * it + i : -1;
        MPI_Bcast(b, 6, MPI_INT, 0, comm[1]);
        for (int i = 0; i < 6; i++)
            ok[1] &= b[i] == 100 * it + i, check[1] += b[i];
    }
}

static void rma(void)
{
    int one = 1;
    for (int it = 0; it < RMA_ITERS; it++) {
        MPI_Win_fence(0, win);
        MPI_Accumulate(&one, 1, MPI_INT, right, 0, 1, MPI_INT, MPI_SUM, win);
    }
    MPI_Win_fence(0, win);
    ok[2] = *winbuf == RMA_ITERS;
    check[2] = *winbuf;
}

static void nb(void)
{
    for (int it = 0; it < NB_ITERS; it++) {
        int out[8], in[8];
        MPI_Request req[2];
        MPI_Status st[2];
        for (int i = 0; i < 8; i++)
            out[i] = known_val(rank, it, i);
        MPI_Irecv(in, 8, MPI_INT, right, it, comm[3], &req[0]);
        MPI_Isend(out, 8, MPI_INT, left, it, comm[3], &req[1]);
        MPI_Waitall(2, req, st);
        for (int i = 0; i < 8; i++)
            ok[3] &= in[i] == known_val(right, it, i), check[3] += in[i];
    }
}

static void (*const work[NKIND])(void) = {p2p, coll, rma, nb};

/* serialized: thread k waits for the token to be k, works, passes it on */
static pthread_mutex_t token_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t token_cond = PTHREAD_COND_INITIALIZER;
static int token;
static int serialized;

static void *worker(void *arg)
{
    int k = (int)(long)arg;
    if (serialized) {
        pthread_mutex_lock(&token_lock);
        while (token != k)
            pthread_cond_wait(&token_cond, &token_lock);
        pthread_mutex_unlock(&token_lock);
    }
    work[k]();
    if (serialized) {
        pthread_mutex_lock(&token_lock);
        token = k + 1;
        pthread_cond_broadcast(&token_cond);
        pthread_mutex_unlock(&token_lock);
    }
    return NULL;
}

static double crunch[3];

static void *computer(void *arg)
{
    int k = (int)(long)arg;
    double s = 0;
    for (int i = 1; i <= 2000000; i++)
        s += 1.0 / i;
    crunch[k] = s;
    return NULL;
}

int main(int argc, char **argv)
{
    const char *level = argc > 1 ? argv[1] : "multiple";
    int want = !strcmp(level, "funneled") ? MPI_THREAD_FUNNELED
             : !strcmp(level, "serialized") ? MPI_THREAD_SERIALIZED : MPI_THREAD_MULTIPLE;
    int provided;
    MPI_Init_thread(&argc, &argv, want, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (provided < want) {
        printf("threads_levels rank %d: level %d not provided (%d)\n", rank, want, provided);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    left = (rank - 1 + size) % size;
    right = (rank + 1) % size;
    for (int k = 0; k < NKIND; k++) {
        MPI_Comm_dup(MPI_COMM_WORLD, &comm[k]);
        ok[k] = 1;
    }
    /* 64 bytes, not 4: MPICH 4.0.2 here lands both ranks' accumulates in rank
     * 0's window when each window is a single int (without mpiscope too). */
    MPI_Win_allocate(64, sizeof(int), MPI_INFO_NULL, comm[2], &winbuf, &win);
    *winbuf = 0;
    MPI_Barrier(comm[2]); /* every window is zeroed before anyone accumulates */
    pthread_t tid[NKIND];
    if (want == MPI_THREAD_FUNNELED) {
        for (int k = 0; k < 3; k++)
            pthread_create(&tid[k], NULL, computer, (void *)(long)k);
        for (int k = 0; k < NKIND; k++)
            work[k]();
        for (int k = 0; k < 3; k++)
            pthread_join(tid[k], NULL);
        ok[0] &= crunch[0] == crunch[1] && crunch[1] == crunch[2];
    } else {
        serialized = want == MPI_THREAD_SERIALIZED;
        for (int k = 0; k < NKIND; k++)
            pthread_create(&tid[k], NULL, worker, (void *)(long)k);
        for (int k = 0; k < NKIND; k++)
            pthread_join(tid[k], NULL);
    }
    MPI_Win_free(&win);
    for (int k = 0; k < NKIND; k++)
        MPI_Comm_free(&comm[k]);
    known_result("threads_levels", rank, check[0] + check[1] + check[2] + check[3],
                 ok[0] && ok[1] && ok[2] && ok[3]);
    MPI_Finalize();
    return 0;
}
