/*
 * Nonblocking collectives (ints; P = size, r = rank), each completed by one MPI_Wait,
 * except the last three, completed together by one MPI_Waitall(3):
 *   Ibarrier; Ibcast 12 from root 0; Ireduce 3 to root 0; Iallreduce 2;
 *   Igather 1 per rank to root 0; Iscatter 4 per rank from root 0;
 *   Waitall over { Iallgather 2 per rank, Ialltoall 3 per pair, Iscan 1 }.
 */
#include <mpi.h>
#include <stdlib.h>
#include "known.h"

int main(int argc, char **argv)
{
    int rank, size, ok = 1;
    long long check = 0;
    MPI_Request req, reqs[3];
    MPI_Status sts[3];
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int P = size, r = rank;
    int *a = calloc(4 * P + 16, sizeof(int)), *b = calloc(4 * P + 16, sizeof(int));
    int *c = calloc(4 * P + 16, sizeof(int)), v[16], w[16];

    MPI_Ibarrier(MPI_COMM_WORLD, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);

    for (int i = 0; i < 12; i++)
        v[i] = r == 0 ? known_val(0, 1, i) : -1;
    MPI_Ibcast(v, 12, MPI_INT, 0, MPI_COMM_WORLD, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    for (int i = 0; i < 12; i++)
        ok &= v[i] == known_val(0, 1, i), check += v[i];

    for (int i = 0; i < 3; i++)
        v[i] = r + i;
    MPI_Ireduce(v, w, 3, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    if (r == 0)
        for (int i = 0; i < 3; i++)
            ok &= w[i] == P * (P - 1) / 2 + P * i, check += w[i];

    v[0] = r, v[1] = 2 * r;
    MPI_Iallreduce(v, w, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    ok &= w[0] == P * (P - 1) / 2 && w[1] == P * (P - 1);
    check += w[0] + w[1];

    v[0] = known_val(r, 2, 0);
    MPI_Igather(v, 1, MPI_INT, a, 1, MPI_INT, 0, MPI_COMM_WORLD, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    if (r == 0)
        for (int s = 0; s < P; s++)
            ok &= a[s] == known_val(s, 2, 0), check += a[s];

    for (int i = 0; i < 4 * P; i++)
        a[i] = known_val(0, 3, i);
    MPI_Iscatter(a, 4, MPI_INT, v, 4, MPI_INT, 0, MPI_COMM_WORLD, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    for (int i = 0; i < 4; i++)
        ok &= v[i] == known_val(0, 3, 4 * r + i), check += v[i];

    int g[2] = {known_val(r, 4, 0), known_val(r, 4, 1)}, one = r + 1, pre = 0;
    for (int i = 0; i < 3 * P; i++)
        b[i] = known_val(r, 5, i);
    MPI_Iallgather(g, 2, MPI_INT, a, 2, MPI_INT, MPI_COMM_WORLD, &reqs[0]);
    MPI_Ialltoall(b, 3, MPI_INT, c, 3, MPI_INT, MPI_COMM_WORLD, &reqs[1]);
    MPI_Iscan(&one, &pre, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &reqs[2]);
    MPI_Waitall(3, reqs, sts);
    for (int s = 0; s < P; s++) {
        ok &= a[2 * s + 1] == known_val(s, 4, 1) && c[3 * s + 2] == known_val(s, 5, 3 * r + 2);
        check += a[2 * s] + c[3 * s];
    }
    ok &= pre == (r + 1) * (r + 2) / 2;
    check += pre;

    free(a), free(b), free(c);
    known_result("coll_nonblocking", rank, check, ok);
    MPI_Finalize();
    return 0;
}
