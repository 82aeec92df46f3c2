/*
 * Neighborhood collectives on a periodic 1-D ring made with MPI_Cart_create
 * (reorder 0, so cart rank = world rank; neighbours left = r-1, right = r+1,
 * in that order, 2 in and 2 out; with 2 ranks both are the other rank, and
 * which of its two blocks lands where is up to the MPI, so only the sender and
 * the phase of each received value are checked then):
 *   Neighbor_allgather 3 ints; Neighbor_alltoall 2 ints per neighbour;
 *   Neighbor_allgatherv 4 ints; Neighbor_alltoallv 2 ints per neighbour (displacements 0, 4);
 *   Ineighbor_allgather 6 ints + Wait; Ineighbor_alltoall 7 ints per neighbour + Wait.
 */
#include <mpi.h>
#include "known.h"

/* Did v come from world rank `from` as value i of phase `tag`? */
static int came_from(int v, int from, int tag, int i, int exact)
{
    return exact ? v == known_val(from, tag, i) : v / 100000 == from && v / 1000 % 100 == tag;
}

int main(int argc, char **argv)
{
    int rank, size, ok = 1, dims[1], periods[1] = {1}, cr, src, dst;
    long long check = 0;
    MPI_Comm ring;
    MPI_Request req;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    dims[0] = size;
    MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &ring);
    MPI_Comm_rank(ring, &cr);
    MPI_Cart_shift(ring, 0, 1, &src, &dst);
    int left = (rank - 1 + size) % size, right = (rank + 1) % size;
    ok &= cr == rank && src == left && dst == right;
    int exact = left != right;
    int out[16], in[32];

    for (int i = 0; i < 3; i++)
        out[i] = known_val(rank, 1, i);
    MPI_Neighbor_allgather(out, 3, MPI_INT, in, 3, MPI_INT, ring);
    for (int i = 0; i < 3; i++)
        ok &= came_from(in[i], left, 1, i, exact) && came_from(in[3 + i], right, 1, i, exact),
            check += in[i] + in[3 + i];

    /* Block 0 goes to left, block 1 to right; a rank receives left's block 1, right's block 0. */
    for (int i = 0; i < 4; i++)
        out[i] = known_val(rank, 2, i);
    MPI_Neighbor_alltoall(out, 2, MPI_INT, in, 2, MPI_INT, ring);
    ok &= came_from(in[0], left, 2, 2, exact) && came_from(in[3], right, 2, 1, exact);
    check += in[0] + in[1] + in[2] + in[3];

    int rc[2] = {4, 4}, rd[2] = {0, 4};
    for (int i = 0; i < 4; i++)
        out[i] = known_val(rank, 3, i);
    MPI_Neighbor_allgatherv(out, 4, MPI_INT, in, rc, rd, MPI_INT, ring);
    ok &= came_from(in[3], left, 3, 3, exact) && came_from(in[7], right, 3, 3, exact);
    check += in[0] + in[4];

    int sc[2] = {2, 2}, sd[2] = {0, 4}, vc[2] = {2, 2}, vd[2] = {1, 5};
    for (int i = 0; i < 6; i++)
        out[i] = known_val(rank, 4, i), in[i] = -1;
    MPI_Neighbor_alltoallv(out, sc, sd, MPI_INT, in, vc, vd, MPI_INT, ring);
    ok &= in[0] == -1 && came_from(in[1], left, 4, 4, exact) && came_from(in[2], left, 4, 5, exact) &&
          came_from(in[5], right, 4, 0, exact) && came_from(in[6], right, 4, 1, exact);
    check += in[1] + in[6];

    for (int i = 0; i < 6; i++)
        out[i] = known_val(rank, 5, i);
    MPI_Ineighbor_allgather(out, 6, MPI_INT, in, 6, MPI_INT, ring, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    ok &= came_from(in[5], left, 5, 5, exact) && came_from(in[11], right, 5, 5, exact);
    check += in[0] + in[6];

    for (int i = 0; i < 14; i++)
        out[i] = known_val(rank, 6, i);
    MPI_Ineighbor_alltoall(out, 7, MPI_INT, in, 7, MPI_INT, ring, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    ok &= came_from(in[0], left, 6, 7, exact) && came_from(in[7], right, 6, 0, exact);
    check += in[6] + in[13];

    MPI_Comm_free(&ring);
    known_result("coll_neighbor", rank, check, ok);
    MPI_Finalize();
    return 0;
}
