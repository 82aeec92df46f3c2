/*
 * Sub-communicators: every peer must be recorded as a WORLD rank.
 * (P = size, r = rank; ints; every exchange is one MPI_Sendrecv)
 *   half = MPI_Comm_split(color r % 2, key P - r): ranks of one parity, in
 *     DEcreasing world order; 6 ints to the next rank of half (h + 1 mod |half|)
 *   dup = MPI_Comm_dup(WORLD): 5 ints to world r+1
 *   cart = MPI_Cart_create(WORLD, 2-D MPI_Dims_create, periodic, reorder 0):
 *     4 ints along dimension 1 (+1), then 3 ints along dimension 0 (+1)
 *   inter = MPI_Intercomm_create(half, 0, WORLD, leader of the other half):
 *     2 ints to remote rank h (P even: both halves have P/2 ranks)
 *   then MPI_Allreduce of 1 int on half and MPI_Barrier on inter.
 */
#include <mpi.h>
#include "known.h"

static long long exchange(MPI_Comm comm, int n, int to, int from, int world_from, int tag,
                          int rank, int *ok)
{
    int out[8], in[8];
    long long sum = 0;
    for (int i = 0; i < n; i++)
        out[i] = known_val(rank, tag, i), in[i] = -1;
    MPI_Sendrecv(out, n, MPI_INT, to, tag, in, n, MPI_INT, from, tag, comm, MPI_STATUS_IGNORE);
    for (int i = 0; i < n; i++)
        *ok &= in[i] == known_val(world_from, tag, i), sum += in[i];
    return sum;
}

int main(int argc, char **argv)
{
    int rank, size, ok = 1, h, hsize, dims[2] = {0, 0}, periods[2] = {1, 1}, coords[2];
    int src, dst, wsrc;
    long long check = 0;
    MPI_Comm half, dup, cart, inter;
    MPI_Group wgroup, cgroup;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int P = size, r = rank;

    MPI_Comm_split(MPI_COMM_WORLD, r % 2, P - r, &half);
    MPI_Comm_rank(half, &h);
    MPI_Comm_size(half, &hsize);
    /* Members of my parity in decreasing world order: half rank k is world top - 2k. */
    int top = (P - 1) % 2 == r % 2 ? P - 1 : P - 2;
    ok &= h == (top - r) / 2;
    int hto = (h + 1) % hsize, hfrom = (h - 1 + hsize) % hsize;
    check += exchange(half, 6, hto, hfrom, top - 2 * hfrom, 1, r, &ok);

    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    check += exchange(dup, 5, (r + 1) % P, (r - 1 + P) % P, (r - 1 + P) % P, 2, r, &ok);

    MPI_Dims_create(P, 2, dims);
    MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart);
    MPI_Comm_group(MPI_COMM_WORLD, &wgroup);
    MPI_Comm_group(cart, &cgroup);
    for (int d = 1; d >= 0; d--) {
        MPI_Cart_shift(cart, d, 1, &src, &dst);
        MPI_Group_translate_ranks(cgroup, 1, &src, wgroup, &wsrc);
        check += exchange(cart, d == 1 ? 4 : 3, dst, src, wsrc, 3 + d, r, &ok);
    }
    MPI_Cart_coords(cart, r, 2, coords);
    ok &= coords[0] == r / dims[1] && coords[1] == r % dims[1];
    MPI_Group_free(&wgroup);
    MPI_Group_free(&cgroup);

    int other_top = (P - 1) % 2 != r % 2 ? P - 1 : P - 2;
    MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, other_top, 99, &inter);
    check += exchange(inter, 2, h, h, other_top - 2 * h, 5, r, &ok);

    int sum;
    MPI_Allreduce(&r, &sum, 1, MPI_INT, MPI_SUM, half);
    ok &= sum == (r % 2 == 0 ? (P / 2) * (P / 2 - 1) : (P / 2) * (P / 2));
    check += sum;
    MPI_Barrier(inter);

    MPI_Comm_free(&inter);
    MPI_Comm_free(&cart);
    MPI_Comm_free(&dup);
    MPI_Comm_free(&half);
    known_result("subcomm", rank, check, ok);
    MPI_Finalize();
    return 0;
}
