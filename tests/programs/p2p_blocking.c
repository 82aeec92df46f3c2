/*
 * Blocking point-to-point on a ring, one call of each kind per rank, each
 * with its own size so every function lands in its own histogram bucket.
 * Expected profile: tests/runtime/counting/test_runtime_p2p.py (right = rank+1, left = rank-1):
 *   MPI_Send 40 B, MPI_Ssend 400 B, MPI_Bsend 1000 B, MPI_Rsend 12 B to right;
 *   MPI_Recv x3 (40, 400, 1000 B from left); MPI_Irecv + MPI_Wait (12 B) and
 *   one MPI_Barrier around the ready send; MPI_Sendrecv 8000 B to right /
 *   from left; MPI_Sendrecv_replace 40 B to left / from right.
 */
#include <mpi.h>
#include <stdlib.h>
#include "known.h"

static long long recv_check(const int *buf, int n, int from, int tag, int *ok)
{
    long long sum = 0;
    for (int i = 0; i < n; i++) {
        *ok &= buf[i] == known_val(from, tag, i);
        sum += buf[i];
    }
    return sum;
}

static void fill(int *buf, int n, int rank, int tag)
{
    for (int i = 0; i < n; i++)
        buf[i] = known_val(rank, tag, i);
}

/* Ring step with a blocking send kind; even ranks send first (no deadlock). */
static long long ring(int (*send)(const void *, int, MPI_Datatype, int, int, MPI_Comm),
                      int n, int tag, int rank, int left, int right, int *ok)
{
    int *out = malloc(n * sizeof(int)), *in = malloc(n * sizeof(int)), got;
    MPI_Status st;
    fill(out, n, rank, tag);
    if (rank % 2 == 0) {
        send(out, n, MPI_INT, right, tag, MPI_COMM_WORLD);
        MPI_Recv(in, n, MPI_INT, left, tag, MPI_COMM_WORLD, &st);
    } else {
        MPI_Recv(in, n, MPI_INT, left, tag, MPI_COMM_WORLD, &st);
        send(out, n, MPI_INT, right, tag, MPI_COMM_WORLD);
    }
    MPI_Get_count(&st, MPI_INT, &got);
    *ok &= got == n && st.MPI_SOURCE == left && st.MPI_TAG == tag;
    long long sum = recv_check(in, n, left, tag, ok);
    free(out);
    free(in);
    return sum;
}

int main(int argc, char **argv)
{
    int rank, size, ok = 1;
    long long check = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int left = (rank - 1 + size) % size, right = (rank + 1) % size;

    check += ring(MPI_Send, 10, 1, rank, left, right, &ok);
    check += ring(MPI_Ssend, 100, 2, rank, left, right, &ok);

    /* Buffered: the send returns at once, so every rank sends first. */
    int bsize = 250 * sizeof(int) + MPI_BSEND_OVERHEAD, bout[250], bin[250];
    void *bbuf = malloc(bsize);
    MPI_Buffer_attach(bbuf, bsize);
    fill(bout, 250, rank, 3);
    MPI_Bsend(bout, 250, MPI_INT, right, 3, MPI_COMM_WORLD);
    MPI_Recv(bin, 250, MPI_INT, left, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Buffer_detach(&bbuf, &bsize);
    free(bbuf);
    check += recv_check(bin, 250, left, 3, &ok);

    /* Ready send: the matching receive is posted before the barrier. */
    int rout[3], rin[3];
    MPI_Request req;
    fill(rout, 3, rank, 4);
    MPI_Irecv(rin, 3, MPI_INT, left, 4, MPI_COMM_WORLD, &req);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Rsend(rout, 3, MPI_INT, right, 4, MPI_COMM_WORLD);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    check += recv_check(rin, 3, left, 4, &ok);

    int *sout = malloc(2000 * sizeof(int)), *sin = malloc(2000 * sizeof(int));
    MPI_Status st;
    int got;
    fill(sout, 2000, rank, 5);
    MPI_Sendrecv(sout, 2000, MPI_INT, right, 5, sin, 2000, MPI_INT, left, 5, MPI_COMM_WORLD, &st);
    MPI_Get_count(&st, MPI_INT, &got);
    ok &= got == 2000 && st.MPI_SOURCE == left;
    check += recv_check(sin, 2000, left, 5, &ok);
    free(sout);
    free(sin);

    double rep[5];
    for (int i = 0; i < 5; i++)
        rep[i] = rank + 0.25 * i;
    MPI_Sendrecv_replace(rep, 5, MPI_DOUBLE, left, 6, right, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    for (int i = 0; i < 5; i++) {
        ok &= rep[i] == right + 0.25 * i;
        check += (long long)(rep[i] * 4);
    }

    known_result("p2p_blocking", rank, check, ok);
    MPI_Finalize();
    return 0;
}
