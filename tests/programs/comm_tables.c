/*
 * Known traffic on several communicators, for tests/runtime/counting/test_runtime_commtab.py
 * (per-communicator tables). With P ranks (P even, >= 2), per rank:
 *   world:                 1 MPI_Allreduce (1 int)
 *   dup of world, named "halo" by MPI_Comm_set_name: 2 MPI_Allreduce (1 int)
 *   split(color rank % 2) of world: 3 MPI_Allreduce (2 doubles), 1 MPI_Barrier
 *   cart Px1 of world:     4 MPI_Barrier, 1 MPI_Sendrecv of 3 ints with the next rank (periodic)
 *   intercomm of split(...): rank i of each half sends 5 ints to rank i of the
 *                          other half (MPI_Send on color 0, MPI_Recv on color 1)
 * then every communicator is freed.
 */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    int rank, size, x = 1, y, in[3], out[3] = {1, 2, 3}, msg[5] = {0};
    double d[2] = {1, 2}, e[2];
    MPI_Comm dup, half, cart, inter;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);

    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Comm_set_name(dup, "halo");
    for (int i = 0; i < 2; i++)
        MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, dup);

    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
    for (int i = 0; i < 3; i++)
        MPI_Allreduce(d, e, 2, MPI_DOUBLE, MPI_SUM, half);
    MPI_Barrier(half);

    int dims[2] = {size, 1}, periods[2] = {1, 0}, src, dst;
    MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart);
    for (int i = 0; i < 4; i++)
        MPI_Barrier(cart);
    MPI_Cart_shift(cart, 0, 1, &src, &dst);
    MPI_Sendrecv(out, 3, MPI_INT, dst, 0, in, 3, MPI_INT, src, 0, cart, MPI_STATUS_IGNORE);

    /* the leaders: world rank 0 (color 0) and world rank 1 (color 1) */
    MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, rank % 2 == 0 ? 1 : 0, 9, &inter);
    int hrank;
    MPI_Comm_rank(half, &hrank);
    if (rank % 2 == 0)
        MPI_Send(msg, 5, MPI_INT, hrank, 1, inter);
    else
        MPI_Recv(msg, 5, MPI_INT, hrank, 1, inter, MPI_STATUS_IGNORE);

    MPI_Comm_free(&inter);
    MPI_Comm_free(&cart);
    MPI_Comm_free(&half);
    MPI_Comm_free(&dup);
    if (rank == 0)
        printf("comm_tables: done on %d ranks\n", size);
    MPI_Finalize();
    return 0;
}
