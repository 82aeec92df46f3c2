/*
 * Communicators created and freed again and again, so handles are reused:
 * every peer must still be translated with the communicator's CURRENT group.
 * (P = size, r = rank; world right = r+1, left = r-1; ints; one MPI_Sendrecv
 * per communicator, to communicator rank c+1, from c-1)
 *   k = 0..5: MPI_Comm_split(WORLD, 0, key) with key r for even k, P-r for odd k
 *     (reversed order), k+1 ints, then MPI_Comm_free: peer right for even k, left for odd k
 *   MPI_Comm_create_group over the world group reversed (MPI_Group_incl): 7 ints, peer left
 *   MPI_Cart_sub of a 2-D periodic cart (MPI_Dims_create), keeping dimension 1: 3 ints to
 *     the next rank of the row
 *   MPI_Comm_idup(WORLD) + MPI_Wait: 5 ints, peer right
 */
#include <mpi.h>
#include <stdlib.h>
#include "known.h"

static long long exchange(MPI_Comm comm, int n, int tag, int rank, int world_from, int *ok)
{
    int c, size, out[8], in[8];
    long long sum = 0;
    MPI_Comm_rank(comm, &c);
    MPI_Comm_size(comm, &size);
    for (int i = 0; i < n; i++)
        out[i] = known_val(rank, tag, i), in[i] = -1;
    MPI_Sendrecv(out, n, MPI_INT, (c + 1) % size, tag, in, n, MPI_INT, (c - 1 + size) % size, tag,
                 comm, MPI_STATUS_IGNORE);
    for (int i = 0; i < n; i++)
        *ok &= in[i] == known_val(world_from, tag, i), sum += in[i];
    return sum;
}

int main(int argc, char **argv)
{
    int rank, size, ok = 1, dims[2] = {0, 0}, periods[2] = {1, 1}, keep[2] = {0, 1};
    long long check = 0;
    MPI_Comm c, cart, row;
    MPI_Group world, reversed;
    MPI_Request req;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int P = size, r = rank, left = (r - 1 + P) % P, right = (r + 1) % P;

    for (int k = 0; k < 6; k++) {
        MPI_Comm_split(MPI_COMM_WORLD, 0, k % 2 ? P - r : r, &c);
        check += exchange(c, k + 1, k, r, k % 2 ? right : left, &ok);
        MPI_Comm_free(&c);
    }

    int *ranks = malloc(P * sizeof(int));
    for (int i = 0; i < P; i++)
        ranks[i] = P - 1 - i;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    MPI_Group_incl(world, P, ranks, &reversed);
    MPI_Comm_create_group(MPI_COMM_WORLD, reversed, 42, &c);
    check += exchange(c, 7, 10, r, right, &ok);
    MPI_Comm_free(&c);
    MPI_Group_free(&reversed);
    MPI_Group_free(&world);
    free(ranks);

    MPI_Dims_create(P, 2, dims);
    MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart);
    MPI_Cart_sub(cart, keep, &row);
    int x = r / dims[1], y = r % dims[1];
    check += exchange(row, 3, 11, r, x * dims[1] + (y - 1 + dims[1]) % dims[1], &ok);
    MPI_Comm_free(&row);
    MPI_Comm_free(&cart);

    MPI_Comm_idup(MPI_COMM_WORLD, &c, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    check += exchange(c, 5, 12, r, left, &ok);
    MPI_Comm_free(&c);

    known_result("comm_churn", rank, check, ok);
    MPI_Finalize();
    return 0;
}
