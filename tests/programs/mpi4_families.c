/*
 * Every MPI-4 family the runtime wraps where mpi.h declares it (MPICH 4.0
 * here; tests/runtime/counting/test_runtime_mpi4.py), once each on a ring of P ranks (left,
 * right), with known sizes. Per rank:
 *   A  MPI_Isendrecv 10 ints right / from left, MPI_Isendrecv_replace 7
 *      doubles left / from right, MPI_Isendrecv_c 5 ints right / from left,
 *      each + MPI_Wait;
 *   B  MPI_Isend_c 12 ints right + MPI_Recv_c from left + MPI_Wait;
 *      MPI_Sendrecv_c 3 doubles right / from left;
 *      MPI_Send_init_c 9 ints right, MPI_Recv_init_c from left: MPI_Startall(2)
 *      + MPI_Waitall(2), MPI_Request_free x2;
 *   C  MPI_Allreduce_c 4 ints, MPI_Bcast_c 2 ints from root 0, MPI_Alltoallv_c
 *      2 ints to and from each rank, MPI_Iallgather_c 3 ints + MPI_Wait;
 *   D  persistent collectives: MPI_Allreduce_init 5 doubles, MPI_Start x3 +
 *      MPI_Wait x3; MPI_Bcast_init_c 6 ints from root P-1, MPI_Start + MPI_Wait;
 *      MPI_Barrier_init, MPI_Start + MPI_Wait; MPI_Request_free x3;
 *   E  partitioned: MPI_Psend_init 4 partitions x 8 ints right, MPI_Precv_init
 *      from left; 2 rounds of MPI_Startall(2), readiness (round 0: MPI_Pready
 *      x2 + MPI_Pready_range(2, 3); round 1: MPI_Pready_list of 4), MPI_Parrived
 *      polled until partition 0 arrived (count on stderr), MPI_Waitall(2);
 *      MPI_Request_free x2;
 *   F  MPI_Comm_idup_with_info of world + MPI_Wait, MPI_Allreduce_c of 1 int on
 *      it, MPI_Comm_free;
 *   G  MPI_Win_create_c over 16 ints, MPI_Win_fence, MPI_Put_c 3 ints to right,
 *      MPI_Win_fence, MPI_Get_c 2 ints from left, MPI_Win_fence, MPI_Win_free;
 *   H  MPI_File_open, MPI_File_write_at_all_c 10 ints at rank x 40 B,
 *      MPI_File_read_at_c of them, MPI_File_close (deleted on close).
 * Compiled everywhere; without MPI-4 (Open MPI 4.1) it says so and exits 0.
 */
#include <mpi.h>
#include <stdio.h>
#include "known.h"

#if MPI_VERSION >= 4

static int left, right, rank, size, ok = 1;
static long long check;

static void part_a(void)
{
    int out[10], in[10];
    double d[7];
    MPI_Request r;
    MPI_Status st;
    for (int i = 0; i < 10; i++)
        out[i] = known_val(rank, 1, i), in[i] = -1;
    MPI_Isendrecv(out, 10, MPI_INT, right, 1, in, 10, MPI_INT, left, 1, MPI_COMM_WORLD, &r);
    MPI_Wait(&r, &st);
    for (int i = 0; i < 10; i++)
        ok &= in[i] == known_val(left, 1, i), check += in[i];
    for (int i = 0; i < 7; i++)
        d[i] = rank + i / 8.0;
    MPI_Isendrecv_replace(d, 7, MPI_DOUBLE, left, 2, right, 2, MPI_COMM_WORLD, &r);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    for (int i = 0; i < 7; i++)
        ok &= d[i] == right + i / 8.0, check += (long long)(8 * d[i]);
    MPI_Isendrecv_c(out, (MPI_Count)5, MPI_INT, right, 3, in, (MPI_Count)5, MPI_INT, left, 3,
                    MPI_COMM_WORLD, &r);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    for (int i = 0; i < 5; i++)
        ok &= in[i] == known_val(left, 1, i);
}

static void part_b(void)
{
    int out[12], in[12];
    double dout[3] = {rank, rank + 0.5, rank + 0.25}, din[3];
    MPI_Request r, p[2];
    MPI_Status st;
    for (int i = 0; i < 12; i++)
        out[i] = known_val(rank, 4, i);
    MPI_Isend_c(out, (MPI_Count)12, MPI_INT, right, 4, MPI_COMM_WORLD, &r);
    MPI_Recv_c(in, (MPI_Count)12, MPI_INT, left, 4, MPI_COMM_WORLD, &st);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    for (int i = 0; i < 12; i++)
        ok &= in[i] == known_val(left, 4, i), check += in[i];
    MPI_Sendrecv_c(dout, (MPI_Count)3, MPI_DOUBLE, right, 5, din, (MPI_Count)3, MPI_DOUBLE, left, 5,
                   MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    ok &= din[0] == left && din[2] == left + 0.25;
    MPI_Recv_init_c(in, (MPI_Count)9, MPI_INT, left, 6, MPI_COMM_WORLD, &p[0]);
    MPI_Send_init_c(out, (MPI_Count)9, MPI_INT, right, 6, MPI_COMM_WORLD, &p[1]);
    MPI_Startall(2, p);
    MPI_Waitall(2, p, MPI_STATUSES_IGNORE);
    ok &= in[8] == known_val(left, 4, 8);
    MPI_Request_free(&p[0]);
    MPI_Request_free(&p[1]);
}

static void part_c(void)
{
    int a[4] = {rank, 1, 2, 3}, s[4], b[2] = {rank + 10, 7};
    int v[64], w[64], g[3] = {rank, rank, rank}, all[3 * 64];
    MPI_Count counts[64];
    MPI_Aint displs[64];
    MPI_Request r;
    MPI_Allreduce_c(a, s, (MPI_Count)4, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    ok &= s[0] == size * (size - 1) / 2 && s[3] == 3 * size;
    MPI_Bcast_c(b, (MPI_Count)2, MPI_INT, 0, MPI_COMM_WORLD);
    ok &= b[0] == 10;
    for (int i = 0; i < size; i++) {
        counts[i] = 2, displs[i] = 2 * i;
        v[2 * i] = v[2 * i + 1] = rank * 100 + i;
    }
    MPI_Alltoallv_c(v, counts, displs, MPI_INT, w, counts, displs, MPI_INT, MPI_COMM_WORLD);
    for (int i = 0; i < size; i++)
        ok &= w[2 * i] == i * 100 + rank;
    MPI_Iallgather_c(g, (MPI_Count)3, MPI_INT, all, (MPI_Count)3, MPI_INT, MPI_COMM_WORLD, &r);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    for (int i = 0; i < size; i++)
        ok &= all[3 * i + 2] == i;
    check += s[0] + b[0];
}

static void part_d(void)
{
    double x[5], y[5];
    int b[6];
    MPI_Request r[3];
    MPI_Allreduce_init(x, y, 5, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &r[0]);
    for (int it = 0; it < 3; it++) {
        for (int i = 0; i < 5; i++)
            x[i] = rank + it;
        MPI_Start(&r[0]);
        MPI_Wait(&r[0], MPI_STATUS_IGNORE);
        ok &= y[4] == size * (size - 1) / 2.0 + size * it;
    }
    for (int i = 0; i < 6; i++)
        b[i] = rank == size - 1 ? 40 + i : -1;
    MPI_Bcast_init_c(b, (MPI_Count)6, MPI_INT, size - 1, MPI_COMM_WORLD, MPI_INFO_NULL, &r[1]);
    MPI_Start(&r[1]);
    MPI_Wait(&r[1], MPI_STATUS_IGNORE);
    ok &= b[5] == 45;
    MPI_Barrier_init(MPI_COMM_WORLD, MPI_INFO_NULL, &r[2]);
    MPI_Start(&r[2]);
    MPI_Wait(&r[2], MPI_STATUS_IGNORE);
    for (int k = 0; k < 3; k++)
        MPI_Request_free(&r[k]);
    check += (long long)y[0];
}

enum { PARTS = 4, PER = 8 };

static void part_e(void)
{
    int out[PARTS * PER], in[PARTS * PER], list[PARTS] = {0, 1, 2, 3}, polls = 0;
    MPI_Request p[2];
    MPI_Precv_init(in, PARTS, PER, MPI_INT, left, 7, MPI_COMM_WORLD, MPI_INFO_NULL, &p[0]);
    MPI_Psend_init(out, PARTS, PER, MPI_INT, right, 7, MPI_COMM_WORLD, MPI_INFO_NULL, &p[1]);
    for (int round = 0; round < 2; round++) {
        for (int i = 0; i < PARTS * PER; i++)
            out[i] = known_val(rank, 10 + round, i), in[i] = -1;
        MPI_Startall(2, p);
        if (round == 0) {
            MPI_Pready(0, p[1]);
            MPI_Pready(1, p[1]);
            MPI_Pready_range(2, 3, p[1]);
        } else {
            MPI_Pready_list(PARTS, list, p[1]);
        }
        int flag = 0;
        while (!flag) {
            MPI_Parrived(p[0], 0, &flag);
            polls++;
        }
        MPI_Waitall(2, p, MPI_STATUSES_IGNORE);
        for (int i = 0; i < PARTS * PER; i++)
            ok &= in[i] == known_val(left, 10 + round, i), check += in[i];
    }
    MPI_Request_free(&p[0]);
    MPI_Request_free(&p[1]);
    known_polls(rank, "MPI_Parrived", polls);
}

static void part_f(void)
{
    MPI_Comm dup;
    MPI_Request r;
    int one = 1, sum = 0;
    MPI_Comm_idup_with_info(MPI_COMM_WORLD, MPI_INFO_NULL, &dup, &r);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    MPI_Allreduce_c(&one, &sum, (MPI_Count)1, MPI_INT, MPI_SUM, dup);
    ok &= sum == size;
    MPI_Comm_free(&dup);
}

static void part_g(void)
{
    int base[16], three[3] = {rank, rank + 1, rank + 2}, two[2];
    MPI_Win win;
    for (int i = 0; i < 16; i++)
        base[i] = known_val(rank, 12, i);
    MPI_Win_create_c(base, (MPI_Aint)sizeof base, (MPI_Aint)sizeof(int), MPI_INFO_NULL,
                     MPI_COMM_WORLD, &win);
    MPI_Win_fence(0, win);
    MPI_Put_c(three, (MPI_Count)3, MPI_INT, right, 10, (MPI_Count)3, MPI_INT, win);
    MPI_Win_fence(0, win);
    MPI_Get_c(two, (MPI_Count)2, MPI_INT, left, 0, (MPI_Count)2, MPI_INT, win);
    MPI_Win_fence(0, win);
    ok &= base[10] == left && base[12] == left + 2 && two[1] == known_val(left, 12, 1);
    MPI_Win_free(&win);
}

static void part_h(void)
{
    int out[10], in[10];
    MPI_File fh;
    MPI_Status st;
    int count = 0;
    for (int i = 0; i < 10; i++)
        out[i] = known_val(rank, 13, i);
    MPI_File_open(MPI_COMM_WORLD, "mpi4_families.dat",
                  MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE, MPI_INFO_NULL, &fh);
    MPI_File_write_at_all_c(fh, (MPI_Offset)rank * 40, out, (MPI_Count)10, MPI_INT,
                            MPI_STATUS_IGNORE);
    MPI_File_read_at_c(fh, (MPI_Offset)rank * 40, in, (MPI_Count)10, MPI_INT, &st);
    MPI_Get_count(&st, MPI_INT, &count);
    ok &= count == 10 && in[9] == known_val(rank, 13, 9);
    MPI_File_close(&fh);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    left = (rank - 1 + size) % size, right = (rank + 1) % size;
    part_a();
    part_b();
    part_c();
    part_d();
    part_e();
    part_f();
    part_g();
    part_h();
    known_result("mpi4_families", rank, check, ok);
    MPI_Finalize();
    return 0;
}

#else

int main(void)
{
    printf("mpi4_families: this MPI (MPI_VERSION %d) declares no MPI-4 functions\n", MPI_VERSION);
    return 0;
}

#endif
