/*
 * Every blocking collective once on MPI_COMM_WORLD, each with its own size
 * (ints unless said; P = size, r = rank):
 *   Barrier; Bcast 10 from root 0; Reduce 4 doubles to root P-1; Allreduce 3 long long;
 *   Gather 2 per rank to root 0; Gatherv r+1 from rank r to root 1 % P;
 *   Scatter 5 per rank from root 0; Scatterv r+1 to rank r from root 0;
 *   Allgather 6; Allgatherv r+1; Alltoall 1 per pair; Alltoallv: r sends d+1 to d;
 *   Reduce_scatter_block 2 per rank; Reduce_scatter r+1 to rank r; Scan 1; Exscan 1.
 */
#include <mpi.h>
#include <stdlib.h>
#include "known.h"

int main(int argc, char **argv)
{
    int rank, size, ok = 1;
    long long check = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int P = size, r = rank, tri = P * (P + 1) / 2;
    int *a = calloc(P * P + 64, sizeof(int)), *b = calloc(P * P + 64, sizeof(int));
    int *cnt = calloc(P, sizeof(int)), *dsp = calloc(P, sizeof(int));
    int *rcnt = calloc(P, sizeof(int)), *rdsp = calloc(P, sizeof(int));

    MPI_Barrier(MPI_COMM_WORLD);

    for (int i = 0; i < 10; i++)
        a[i] = r == 0 ? known_val(0, 1, i) : -1;
    MPI_Bcast(a, 10, MPI_INT, 0, MPI_COMM_WORLD);
    for (int i = 0; i < 10; i++)
        ok &= a[i] == known_val(0, 1, i), check += a[i];

    double dv[4], dr[4] = {0};
    for (int i = 0; i < 4; i++)
        dv[i] = r + i;
    MPI_Reduce(dv, dr, 4, MPI_DOUBLE, MPI_SUM, P - 1, MPI_COMM_WORLD);
    if (r == P - 1)
        for (int i = 0; i < 4; i++)
            ok &= dr[i] == P * (P - 1) / 2.0 + P * i, check += (long long)dr[i];

    long long lv[3] = {r, 2 * r, 3 * r}, lr[3];
    MPI_Allreduce(lv, lr, 3, MPI_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
    ok &= lr[0] == P - 1 && lr[2] == 3 * (P - 1);
    check += lr[0] + lr[1] + lr[2];

    int two[2] = {known_val(r, 2, 0), known_val(r, 2, 1)};
    MPI_Gather(two, 2, MPI_INT, a, 2, MPI_INT, 0, MPI_COMM_WORLD);
    if (r == 0)
        for (int s = 0; s < P; s++)
            ok &= a[2 * s + 1] == known_val(s, 2, 1), check += a[2 * s];

    for (int i = 0; i <= r; i++)
        b[i] = known_val(r, 3, i);
    for (int s = 0; s < P; s++)
        cnt[s] = s + 1, dsp[s] = s * (s + 1) / 2;
    MPI_Gatherv(b, r + 1, MPI_INT, a, cnt, dsp, MPI_INT, 1 % P, MPI_COMM_WORLD);
    if (r == 1 % P)
        for (int s = 0; s < P; s++)
            ok &= a[dsp[s] + s] == known_val(s, 3, s), check += a[dsp[s]];

    for (int i = 0; i < 5 * P; i++)
        a[i] = known_val(0, 4, i);
    MPI_Scatter(a, 5, MPI_INT, b, 5, MPI_INT, 0, MPI_COMM_WORLD);
    for (int i = 0; i < 5; i++)
        ok &= b[i] == known_val(0, 4, 5 * r + i), check += b[i];

    for (int i = 0; i < tri; i++)
        a[i] = known_val(0, 5, i);
    MPI_Scatterv(a, cnt, dsp, MPI_INT, b, r + 1, MPI_INT, 0, MPI_COMM_WORLD);
    for (int i = 0; i <= r; i++)
        ok &= b[i] == known_val(0, 5, dsp[r] + i), check += b[i];

    for (int i = 0; i < 6; i++)
        b[i] = known_val(r, 6, i);
    MPI_Allgather(b, 6, MPI_INT, a, 6, MPI_INT, MPI_COMM_WORLD);
    for (int s = 0; s < P; s++)
        ok &= a[6 * s + 5] == known_val(s, 6, 5), check += a[6 * s];

    for (int i = 0; i <= r; i++)
        b[i] = known_val(r, 7, i);
    MPI_Allgatherv(b, r + 1, MPI_INT, a, cnt, dsp, MPI_INT, MPI_COMM_WORLD);
    for (int s = 0; s < P; s++)
        ok &= a[dsp[s] + s] == known_val(s, 7, s), check += a[dsp[s]];

    for (int d = 0; d < P; d++)
        b[d] = known_val(r, 8, d);
    MPI_Alltoall(b, 1, MPI_INT, a, 1, MPI_INT, MPI_COMM_WORLD);
    for (int s = 0; s < P; s++)
        ok &= a[s] == known_val(s, 8, r), check += a[s];

    /* r sends d+1 ints to d, so it receives r+1 from everyone. */
    for (int d = 0, k = 0; d < P; d++) {
        rcnt[d] = r + 1, rdsp[d] = d * (r + 1);
        for (int i = 0; i <= d; i++)
            b[k++] = known_val(r, 9, d);
    }
    MPI_Alltoallv(b, cnt, dsp, MPI_INT, a, rcnt, rdsp, MPI_INT, MPI_COMM_WORLD);
    for (int s = 0; s < P; s++)
        ok &= a[rdsp[s] + r] == known_val(s, 9, r), check += a[rdsp[s]];

    for (int i = 0; i < 2 * P; i++)
        b[i] = r + i;
    MPI_Reduce_scatter_block(b, a, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    ok &= a[0] == P * (P - 1) / 2 + P * 2 * r && a[1] == a[0] + P;
    check += a[0] + a[1];

    for (int i = 0; i < tri; i++)
        b[i] = i;
    MPI_Reduce_scatter(b, a, cnt, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    for (int i = 0; i <= r; i++)
        ok &= a[i] == P * (dsp[r] + i), check += a[i];

    int one = r + 1, pre = -7;
    MPI_Scan(&one, &pre, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    ok &= pre == (r + 1) * (r + 2) / 2;
    check += pre;
    MPI_Exscan(&one, &pre, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (r > 0)
        ok &= pre == r * (r + 1) / 2, check += pre;

    free(a), free(b), free(cnt), free(dsp), free(rcnt), free(rdsp);
    known_result("coll_blocking", rank, check, ok);
    MPI_Finalize();
    return 0;
}
