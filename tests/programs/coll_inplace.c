/*
 * MPI_IN_PLACE collectives (ints; P = size, r = rank):
 *   Allreduce 7 in place; Reduce 5 doubles to root 0 (in place at the root);
 *   Allgather 3 per rank in place; Gather 4 per rank to root P-1 (in place at the root);
 *   Scatter 2 per rank from root 0 (in place at the root); Alltoall 2 per pair in place;
 *   Reduce_scatter_block 3 per rank in place; Scan 1 in place.
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
    int P = size, r = rank;
    int *a = calloc(4 * P + 8, sizeof(int)), v[8];

    for (int i = 0; i < 7; i++)
        v[i] = r * 7 + i;
    MPI_Allreduce(MPI_IN_PLACE, v, 7, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    for (int i = 0; i < 7; i++)
        ok &= v[i] == 7 * P * (P - 1) / 2 + P * i, check += v[i];

    double d[5];
    for (int i = 0; i < 5; i++)
        d[i] = r + 0.5 * i;
    MPI_Reduce(r == 0 ? MPI_IN_PLACE : d, d, 5, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    if (r == 0)
        for (int i = 0; i < 5; i++)
            ok &= d[i] == P * (P - 1) / 2.0 + P * 0.5 * i, check += (long long)(2 * d[i]);

    for (int i = 0; i < 3 * P; i++)
        a[i] = i / 3 == r ? known_val(r, 1, i % 3) : -1;
    MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, a, 3, MPI_INT, MPI_COMM_WORLD);
    for (int i = 0; i < 3 * P; i++)
        ok &= a[i] == known_val(i / 3, 1, i % 3), check += a[i];

    for (int i = 0; i < 4 * P; i++)
        a[i] = r == P - 1 && i / 4 == r ? known_val(r, 2, i % 4) : -1;
    for (int i = 0; i < 4; i++)
        v[i] = known_val(r, 2, i);
    MPI_Gather(r == P - 1 ? MPI_IN_PLACE : v, 4, MPI_INT, a, 4, MPI_INT, P - 1, MPI_COMM_WORLD);
    if (r == P - 1)
        for (int i = 0; i < 4 * P; i++)
            ok &= a[i] == known_val(i / 4, 2, i % 4), check += a[i];

    for (int i = 0; i < 2 * P; i++)
        a[i] = known_val(0, 3, i);
    v[0] = v[1] = -1;
    MPI_Scatter(a, 2, MPI_INT, r == 0 ? MPI_IN_PLACE : v, 2, MPI_INT, 0, MPI_COMM_WORLD);
    if (r != 0)
        ok &= v[0] == known_val(0, 3, 2 * r) && v[1] == known_val(0, 3, 2 * r + 1), check += v[1];
    else
        ok &= a[0] == known_val(0, 3, 0) && v[0] == -1;

    for (int i = 0; i < 2 * P; i++)
        a[i] = known_val(r, 4, i);
    MPI_Alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, a, 2, MPI_INT, MPI_COMM_WORLD);
    for (int s = 0; s < P; s++)
        ok &= a[2 * s] == known_val(s, 4, 2 * r) && a[2 * s + 1] == known_val(s, 4, 2 * r + 1),
            check += a[2 * s];

    for (int i = 0; i < 3 * P; i++)
        a[i] = i;
    MPI_Reduce_scatter_block(MPI_IN_PLACE, a, 3, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    for (int i = 0; i < 3; i++)
        ok &= a[i] == P * (3 * r + i), check += a[i];

    int s = r + 1;
    MPI_Scan(MPI_IN_PLACE, &s, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    ok &= s == (r + 1) * (r + 2) / 2;
    check += s;

    free(a);
    known_result("coll_inplace", rank, check, ok);
    MPI_Finalize();
    return 0;
}
