/*
 * Communicators whose per-communicator rows outside testing got wrong, for
 * tests/runtime/counting/test_runtime_commtab.py (issue 27 items 8-11). With P
 * ranks (P even, >= 2; H = P / 2), per rank:
 *   A create:   MPI_Comm_create with two disjoint groups, "lo" (ranks 0..H-1)
 *               and "hi" (H..P-1): MPI_Allreduce (1 int) once on lo, 3 times on hi
 *   B cart_sub: a 2 x H cart (no reorder), MPI_Cart_sub keeping dimension 1:
 *               rows 0..H-1 and H..P-1; MPI_Barrier 2 times on row 0, 5 on row 1
 *   C intercomm of self: pairs (2k, 2k+1) join their MPI_COMM_SELFs:
 *               the even rank sends 1 int to the odd one
 *   D create_group by ranks 0 and 1 only (tag 5), one MPI_Barrier on it; then
 *               every rank dups world ("after") and calls MPI_Allreduce (1 int) on it
 *   E merge:    intercomm between split(color rank % 2) halves, MPI_Intercomm_merge,
 *               MPI_Allreduce (1 int) on the merged communicator
 *   F persistent, on a dup named "persist": MPI_Send_init to the right (8 ints),
 *               MPI_Recv_init from the left, 3 x (MPI_Startall of both, MPI_Waitall);
 *               MPI-4 only (MPI_VERSION >= 4): MPI_Allreduce_init (1 int) and 2 x
 *               (MPI_Start, MPI_Wait); MPI_Psend_init / MPI_Precv_init of 4
 *               partitions x 2 ints to the right / from the left, MPI_Startall of
 *               both, MPI_Pready_range, MPI_Waitall
 *   G cancel, on a dup named "cancel": MPI_Irecv of 1000 ints nobody sends,
 *               MPI_Cancel, MPI_Wait; then 20 such receives cancelled and completed
 *               by one MPI_Waitall: no byte moved
 *   K too many cancels, on a dup named "cancel_many": 70 receives of 1000 ints
 *               nobody sends, all cancelled, then one MPI_Waitall: the runtime
 *               follows 64 pending cancellations at once (the other 6 stay
 *               counted, 24,000 B, and the profile says so); then 64 more
 *               such receives and one MPI_Waitall, which must all be followed
 *               (no pending entry was left behind by the first Waitall)
 *   H idup of world, completed by MPI_Wait, one MPI_Barrier on it
 *   I a dup named "halo\n[bold]x\x1b[31m" (a newline, rich markup, an ANSI
 *               escape), one MPI_Barrier on it
 *   J neighbours: a non-periodic 1-D cart of P ranks; MPI_Neighbor_alltoall
 *               (1 int per neighbour) and MPI_Neighbor_alltoallv (counts 1, 1):
 *               the edge ranks have one MPI_PROC_NULL neighbour each (4 B each way
 *               per call), the others two (8 B)
 * Prints "comm_cases: ok on P ranks" from rank 0 if every check passed.
 */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

static int bad;

static void check(int ok, const char *what)
{
    if (!ok) {
        fprintf(stderr, "comm_cases: wrong: %s\n", what);
        bad = 1;
    }
}

int main(int argc, char **argv)
{
    int rank, size, one = 1, sum;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int h = size / 2, left = (rank + size - 1) % size, right = (rank + 1) % size;

    /* A */
    MPI_Group world_group, half_group;
    MPI_Comm_group(MPI_COMM_WORLD, &world_group);
    int range[1][3] = {{rank < h ? 0 : h, rank < h ? h - 1 : size - 1, 1}};
    MPI_Group_range_incl(world_group, 1, range, &half_group);
    MPI_Comm half;
    MPI_Comm_create(MPI_COMM_WORLD, half_group, &half);
    for (int i = 0; i < (rank < h ? 1 : 3); i++)
        MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, half);
    check(sum == h, "create");
    MPI_Group_free(&half_group);

    /* B */
    int dims[2] = {2, h}, periods[2] = {0, 0}, keep[2] = {0, 1};
    MPI_Comm cart, row;
    MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart);
    MPI_Cart_sub(cart, keep, &row);
    for (int i = 0; i < (rank < h ? 2 : 5); i++)
        MPI_Barrier(row);

    /* C */
    MPI_Comm pair;
    MPI_Intercomm_create(MPI_COMM_SELF, 0, MPI_COMM_WORLD, rank ^ 1, 77, &pair);
    int x = rank;
    if (rank % 2 == 0)
        MPI_Send(&x, 1, MPI_INT, 0, 3, pair);
    else
        MPI_Recv(&x, 1, MPI_INT, 0, 3, pair, MPI_STATUS_IGNORE);
    check(rank % 2 == 0 || x == rank - 1, "intercomm of self");

    /* D */
    MPI_Comm two = MPI_COMM_NULL, after;
    if (rank < 2) {
        MPI_Group g01;
        int r01[1][3] = {{0, 1, 1}};
        MPI_Group_range_incl(world_group, 1, r01, &g01);
        MPI_Comm_create_group(MPI_COMM_WORLD, g01, 5, &two);
        MPI_Barrier(two);
        MPI_Group_free(&g01);
    }
    MPI_Comm_dup(MPI_COMM_WORLD, &after);
    MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, after);
    check(sum == size, "dup after create_group");

    /* E */
    MPI_Comm parity, inter, merged;
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &parity);
    MPI_Intercomm_create(parity, 0, MPI_COMM_WORLD, rank % 2 == 0 ? 1 : 0, 11, &inter);
    MPI_Intercomm_merge(inter, rank % 2, &merged);
    MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, merged);
    check(sum == size, "merge");

    /* F */
    MPI_Comm persist;
    MPI_Comm_dup(MPI_COMM_WORLD, &persist);
    MPI_Comm_set_name(persist, "persist");
    int out[8], in[8];
    MPI_Request pr[2];
    MPI_Send_init(out, 8, MPI_INT, right, 1, persist, &pr[0]);
    MPI_Recv_init(in, 8, MPI_INT, left, 1, persist, &pr[1]);
    for (int it = 0; it < 3; it++) {
        for (int i = 0; i < 8; i++)
            out[i] = rank * 100 + it * 10 + i;
        MPI_Startall(2, pr);
        MPI_Waitall(2, pr, MPI_STATUSES_IGNORE);
        check(in[7] == left * 100 + it * 10 + 7, "persistent");
    }
    MPI_Request_free(&pr[0]);
    MPI_Request_free(&pr[1]);
#if MPI_VERSION >= 4
    MPI_Request coll;
    int total = 0;
    MPI_Allreduce_init(&one, &total, 1, MPI_INT, MPI_SUM, persist, MPI_INFO_NULL, &coll);
    for (int it = 0; it < 2; it++) {
        MPI_Start(&coll);
        MPI_Wait(&coll, MPI_STATUS_IGNORE);
        check(total == size, "persistent collective");
    }
    MPI_Request_free(&coll);
    int pout[8], pin[8];
    for (int i = 0; i < 8; i++)
        pout[i] = rank + i;
    MPI_Request part[2];
    MPI_Psend_init(pout, 4, 2, MPI_INT, right, 2, persist, MPI_INFO_NULL, &part[0]);
    MPI_Precv_init(pin, 4, 2, MPI_INT, left, 2, persist, MPI_INFO_NULL, &part[1]);
    MPI_Startall(2, part);
    MPI_Pready_range(0, 3, part[0]);
    MPI_Waitall(2, part, MPI_STATUSES_IGNORE);
    check(pin[7] == left + 7, "partitioned");
    MPI_Request_free(&part[0]);
    MPI_Request_free(&part[1]);
#endif

    /* G */
    MPI_Comm cancel;
    MPI_Comm_dup(MPI_COMM_WORLD, &cancel);
    MPI_Comm_set_name(cancel, "cancel");
    static int sink[21][1000];
    MPI_Request cr[20];
    MPI_Status st, sts[20];
    int cancelled = 0;
    MPI_Irecv(sink[20], 1000, MPI_INT, left, 99, cancel, &cr[0]);
    MPI_Cancel(&cr[0]);
    MPI_Wait(&cr[0], &st);
    MPI_Test_cancelled(&st, &cancelled);
    check(cancelled, "one cancel");
    for (int i = 0; i < 20; i++)
        MPI_Irecv(sink[i], 1000, MPI_INT, left, 100 + i, cancel, &cr[i]);
    for (int i = 0; i < 20; i++)
        MPI_Cancel(&cr[i]);
    MPI_Waitall(20, cr, sts);
    for (int i = 0; i < 20; i++) {
        MPI_Test_cancelled(&sts[i], &cancelled);
        check(cancelled, "twenty cancels");
    }

    /* K */
    enum { MANY = 70 };
    MPI_Comm many;
    MPI_Comm_dup(MPI_COMM_WORLD, &many);
    MPI_Comm_set_name(many, "cancel_many");
    static int msink[MANY][1000];
    static MPI_Request mr[MANY];
    static MPI_Status mst[MANY];
    for (int i = 0; i < MANY; i++)
        MPI_Irecv(msink[i], 1000, MPI_INT, left, 200 + i, many, &mr[i]);
    for (int i = 0; i < MANY; i++)
        MPI_Cancel(&mr[i]);
    MPI_Waitall(MANY, mr, mst);
    for (int i = 0; i < MANY; i++) {
        MPI_Test_cancelled(&mst[i], &cancelled);
        check(cancelled, "seventy cancels");
    }
    for (int i = 0; i < 64; i++)
        MPI_Irecv(msink[i], 1000, MPI_INT, left, 300 + i, many, &mr[i]);
    for (int i = 0; i < 64; i++)
        MPI_Cancel(&mr[i]);
    MPI_Waitall(64, mr, mst);
    for (int i = 0; i < 64; i++) {
        MPI_Test_cancelled(&mst[i], &cancelled);
        check(cancelled, "sixty-four cancels after seventy");
    }

    /* H */
    MPI_Comm idup;
    MPI_Request ir;
    MPI_Comm_idup(MPI_COMM_WORLD, &idup, &ir);
    MPI_Wait(&ir, MPI_STATUS_IGNORE);
    MPI_Barrier(idup);

    /* I */
    MPI_Comm odd;
    MPI_Comm_dup(MPI_COMM_WORLD, &odd);
    MPI_Comm_set_name(odd, "halo\n[bold]x\x1b[31m");
    MPI_Barrier(odd);

    /* J */
    MPI_Comm line;
    int ldims[1] = {size}, lperiods[1] = {0};
    MPI_Cart_create(MPI_COMM_WORLD, 1, ldims, lperiods, 0, &line);
    int nsend[2] = {rank, rank}, nrecv[2] = {-1, -1}, counts[2] = {1, 1}, displs[2] = {0, 1};
    MPI_Neighbor_alltoall(nsend, 1, MPI_INT, nrecv, 1, MPI_INT, line);
    check((rank == 0 || nrecv[0] == rank - 1) && (rank == size - 1 || nrecv[1] == rank + 1),
          "neighbor_alltoall");
    MPI_Neighbor_alltoallv(nsend, counts, displs, MPI_INT, nrecv, counts, displs, MPI_INT, line);

    MPI_Comm_free(&line);
    MPI_Comm_free(&odd);
    MPI_Comm_free(&idup);
    MPI_Comm_free(&many);
    MPI_Comm_free(&cancel);
    MPI_Comm_free(&persist);
    MPI_Comm_free(&merged);
    MPI_Comm_free(&inter);
    MPI_Comm_free(&parity);
    MPI_Comm_free(&after);
    if (two != MPI_COMM_NULL)
        MPI_Comm_free(&two);
    MPI_Comm_free(&pair);
    MPI_Comm_free(&row);
    MPI_Comm_free(&cart);
    MPI_Comm_free(&half);
    MPI_Group_free(&world_group);
    MPI_Allreduce(&bad, &sum, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (rank == 0)
        printf("comm_cases: %s on %d ranks\n", sum ? "WRONG" : "ok", size);
    MPI_Finalize();
    return sum != 0;
}
