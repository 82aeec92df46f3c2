/*
 * Probes and wildcards.
 *   1 every rank r > 0 sends r+1 ints (tag r) to rank 0; rank 0 does
 *     MPI_Probe(ANY_SOURCE, ANY_TAG) + MPI_Recv of what the status says, P-1 times.
 *   2 every rank r > 0 sends r ints (tag 1000+r) to rank 0; rank 0 does
 *     MPI_Recv(ANY_SOURCE, ANY_TAG) with room for P ints, P-1 times.
 *   3 ring: Isend 9 ints to right (tag 20); MPI_Mprobe(left) + MPI_Mrecv; Wait.
 *   4 ring: Isend 11 ints to right (tag 21); MPI_Improbe(ANY_SOURCE) until found
 *     (polled) + MPI_Imrecv + Wait; Wait.
 *   5 ring: Isend 13 ints to right (tag 22); MPI_Iprobe(left, ANY_TAG) until found
 *     (polled) + MPI_Recv; Wait.
 * Sends in 1 and 2 are blocking MPI_Send (rank 0 receives in any order); an
 * MPI_Barrier ends phase 1 and one ends phase 2, so a wildcard receive can only
 * match a message of its own phase.
 */
#include <mpi.h>
#include <stdlib.h>
#include "known.h"

static long long take(const int *buf, int n, int from, int tag, int *ok)
{
    long long sum = 0;
    for (int i = 0; i < n; i++) {
        *ok &= buf[i] == known_val(from, tag, i);
        sum += buf[i];
    }
    return sum;
}

int main(int argc, char **argv)
{
    int rank, size, ok = 1, n, flag, polls;
    long long check = 0;
    MPI_Status st;
    MPI_Message msg;
    MPI_Request req;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int left = (rank - 1 + size) % size, right = (rank + 1) % size;
    int *buf = malloc((size + 16) * sizeof(int)), *out = malloc((size + 16) * sizeof(int));

    if (rank == 0) {
        int seen = 0;
        for (int k = 1; k < size; k++) {
            MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
            MPI_Get_count(&st, MPI_INT, &n);
            ok &= n == st.MPI_SOURCE + 1 && st.MPI_TAG == st.MPI_SOURCE;
            MPI_Recv(buf, n, MPI_INT, st.MPI_SOURCE, st.MPI_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            check += take(buf, n, st.MPI_SOURCE, st.MPI_TAG, &ok);
            seen += st.MPI_SOURCE;
        }
        MPI_Barrier(MPI_COMM_WORLD);
        for (int k = 1; k < size; k++) {
            MPI_Recv(buf, size, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
            MPI_Get_count(&st, MPI_INT, &n);
            ok &= n == st.MPI_SOURCE && st.MPI_TAG == 1000 + st.MPI_SOURCE;
            check += take(buf, n, st.MPI_SOURCE, st.MPI_TAG, &ok);
            seen += st.MPI_SOURCE;
        }
        ok &= seen == size * (size - 1);
        MPI_Barrier(MPI_COMM_WORLD);
    } else {
        for (int i = 0; i < rank + 1; i++)
            out[i] = known_val(rank, rank, i);
        MPI_Send(out, rank + 1, MPI_INT, 0, rank, MPI_COMM_WORLD);
        MPI_Barrier(MPI_COMM_WORLD);
        for (int i = 0; i < rank; i++)
            out[i] = known_val(rank, 1000 + rank, i);
        MPI_Send(out, rank, MPI_INT, 0, 1000 + rank, MPI_COMM_WORLD);
        MPI_Barrier(MPI_COMM_WORLD);
    }

    for (int i = 0; i < 9; i++)
        out[i] = known_val(rank, 20, i);
    MPI_Isend(out, 9, MPI_INT, right, 20, MPI_COMM_WORLD, &req);
    MPI_Mprobe(left, 20, MPI_COMM_WORLD, &msg, &st);
    MPI_Get_count(&st, MPI_INT, &n);
    ok &= n == 9;
    MPI_Mrecv(buf, 9, MPI_INT, &msg, &st);
    ok &= msg == MPI_MESSAGE_NULL && st.MPI_SOURCE == left;
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    check += take(buf, 9, left, 20, &ok);

    for (int i = 0; i < 11; i++)
        out[i] = known_val(rank, 21, i);
    MPI_Isend(out, 11, MPI_INT, right, 21, MPI_COMM_WORLD, &req);
    for (flag = 0, polls = 0; !flag; polls++)
        MPI_Improbe(MPI_ANY_SOURCE, 21, MPI_COMM_WORLD, &flag, &msg, &st);
    known_polls(rank, "MPI_Improbe", polls);
    ok &= st.MPI_SOURCE == left;
    MPI_Request rreq;
    MPI_Imrecv(buf, 11, MPI_INT, &msg, &rreq);
    MPI_Wait(&rreq, MPI_STATUS_IGNORE);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    check += take(buf, 11, left, 21, &ok);

    for (int i = 0; i < 13; i++)
        out[i] = known_val(rank, 22, i);
    MPI_Isend(out, 13, MPI_INT, right, 22, MPI_COMM_WORLD, &req);
    for (flag = 0, polls = 0; !flag; polls++)
        MPI_Iprobe(left, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st);
    known_polls(rank, "MPI_Iprobe", polls);
    ok &= st.MPI_TAG == 22;
    MPI_Recv(buf, 13, MPI_INT, left, 22, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    check += take(buf, 13, left, 22, &ok);

    free(buf);
    free(out);
    known_result("p2p_probe", rank, check, ok);
    MPI_Finalize();
    return 0;
}
