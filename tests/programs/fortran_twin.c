/*
 * The traffic of fortran_mpifh.f90 / fortran_usempi.f90 / fortran_f08.f90,
 * call for call, written in C. tests/runtime/counting/test_fortran_bindings.py checks that each
 * Fortran binding's profile equals this program's: same functions, calls,
 * bytes, histograms, peers and regions, so a Fortran call counts exactly once.
 */
#include <mpi.h>
#include <stdio.h>

#define LEN(a) ((int)(sizeof(a) / sizeof((a)[0])))

int main(int argc, char **argv)
{
    int rank, nprocs, n, total, ssum, srank, ssize, idx, ok = 1;
    int ring_send[100], ring_recv[100], bc[32], line_send[8], line_recv[8];
    int any_send[4], any_recv[2][4], sub_send[16], sub_recv[16], seen[4] = {0};
    int bot_isend[3], bot_irecv[3], blocklens[2] = {3, 2};
    double bot_dsend[2], bot_drecv[2], halo_send[50], halo_left[50], halo_right[50], red[10];
    double check = 0, checks[1024];
    MPI_Status status, statuses[4];
    MPI_Request reqs[4];
    MPI_Comm sub;
    MPI_Datatype stype, rtype, types[2] = {MPI_INT, MPI_DOUBLE};
    MPI_Aint disps[2];

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    int left = (rank - 1 + nprocs) % nprocs, right = (rank + 1) % nprocs;

    MPI_Pcontrol(1, "ring");
    for (int i = 0; i < 100; i++)
        ring_send[i] = rank * 1000 + i + 1;
    if (rank % 2 == 0) {
        MPI_Send(ring_send, 100, MPI_INT, right, 1, MPI_COMM_WORLD);
        MPI_Recv(ring_recv, 100, MPI_INT, left, 1, MPI_COMM_WORLD, &status);
    } else {
        MPI_Recv(ring_recv, 100, MPI_INT, left, 1, MPI_COMM_WORLD, &status);
        MPI_Send(ring_send, 100, MPI_INT, right, 1, MPI_COMM_WORLD);
    }
    MPI_Get_count(&status, MPI_INT, &n);
    ok &= status.MPI_SOURCE == left && status.MPI_TAG == 1 && n == 100;
    for (int i = 0; i < 100; i++)
        check += ring_recv[i];
    MPI_Pcontrol(-1, "ring");

    MPI_Pcontrol(1, "solve");
    MPI_Pcontrol(1, "halo");
    for (int i = 0; i < 50; i++)
        halo_send[i] = rank + (i + 1) * 0.5;
    for (int round = 1; round <= 2; round++) {
        MPI_Irecv(halo_left, 50, MPI_DOUBLE, left, 2, MPI_COMM_WORLD, &reqs[0]);
        MPI_Irecv(halo_right, 50, MPI_DOUBLE, right, 3, MPI_COMM_WORLD, &reqs[1]);
        MPI_Isend(halo_send, 50, MPI_DOUBLE, right, 2, MPI_COMM_WORLD, &reqs[2]);
        MPI_Isend(halo_send, 50, MPI_DOUBLE, left, 3, MPI_COMM_WORLD, &reqs[3]);
        if (round == 1) {
            MPI_Waitall(4, reqs, statuses);
            ok &= statuses[0].MPI_SOURCE == left && statuses[1].MPI_SOURCE == right;
            ok &= statuses[0].MPI_TAG == 2 && statuses[1].MPI_TAG == 3;
        } else {
            MPI_Waitall(4, reqs, MPI_STATUSES_IGNORE);
        }
        for (int i = 0; i < 4; i++)
            ok &= reqs[i] == MPI_REQUEST_NULL;
        for (int i = 0; i < 50; i++)
            check += halo_left[i] + 2 * halo_right[i];
    }
    MPI_Pcontrol(-1, "halo");
    for (int i = 0; i < 10; i++)
        red[i] = rank * 10 + i + 1;
    MPI_Allreduce(MPI_IN_PLACE, red, 10, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    ok &= red[0] == 10.0 * nprocs * (nprocs - 1) / 2 + nprocs;
    for (int i = 0; i < 10; i++)
        check += red[i];
    MPI_Allreduce(&rank, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    ok &= total == nprocs * (nprocs - 1) / 2;
    MPI_Pcontrol(-1, "solve");

    for (int i = 0; i < 32; i++)
        bc[i] = rank == 0 ? 7 * (i + 1) : 0;
    MPI_Bcast(bc, 32, MPI_INT, 0, MPI_COMM_WORLD);
    ok &= bc[31] == 224;
    for (int i = 0; i < 32; i++)
        check += bc[i];

    int up = rank + 1 == nprocs ? MPI_PROC_NULL : rank + 1;
    int down = rank == 0 ? MPI_PROC_NULL : rank - 1;
    for (int i = 0; i < 8; i++) {
        line_send[i] = rank + 1;
        line_recv[i] = -1;
    }
    MPI_Sendrecv(line_send, 8, MPI_INT, up, 4, line_recv, 8, MPI_INT, down, 4,
                 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    for (int i = 0; i < 8; i++) {
        ok &= line_recv[i] == (rank == 0 ? -1 : rank);
        check += line_recv[i];
    }

    for (int i = 0; i < 4; i++)
        any_send[i] = rank;
    MPI_Irecv(any_recv[0], 4, MPI_INT, left, 5, MPI_COMM_WORLD, &reqs[0]);
    MPI_Irecv(any_recv[1], 4, MPI_INT, right, 6, MPI_COMM_WORLD, &reqs[1]);
    MPI_Isend(any_send, 4, MPI_INT, right, 5, MPI_COMM_WORLD, &reqs[2]);
    MPI_Isend(any_send, 4, MPI_INT, left, 6, MPI_COMM_WORLD, &reqs[3]);
    for (int i = 0; i < 4; i++) {
        MPI_Waitany(4, reqs, &idx, &status);
        if (idx >= 0 && idx < 4)
            seen[idx]++;
        if (idx == 0)
            ok &= status.MPI_SOURCE == left;
        if (idx == 1)
            ok &= status.MPI_SOURCE == right;
    }
    for (int i = 0; i < 4; i++) {
        ok &= seen[i] == 1 && any_recv[0][i] == left && any_recv[1][i] == right;
        check += any_recv[0][i] + any_recv[1][i];
    }

    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &sub);
    MPI_Comm_rank(sub, &srank);
    MPI_Comm_size(sub, &ssize);
    int sdest = (srank + 1) % ssize, ssrc = (srank - 1 + ssize) % ssize;
    for (int i = 0; i < 16; i++)
        sub_send[i] = rank;
    MPI_Sendrecv(sub_send, 16, MPI_INT, sdest, 7, sub_recv, 16, MPI_INT, ssrc, 7, sub, &status);
    ok &= status.MPI_SOURCE == ssrc;
    MPI_Allreduce(&rank, &ssum, 1, MPI_INT, MPI_SUM, sub);
    for (int i = 0; i < 16; i++)
        check += sub_recv[i];
    check += ssum;
    MPI_Comm_free(&sub);
    ok &= sub == MPI_COMM_NULL;

    bot_isend[0] = rank, bot_isend[1] = rank + 1, bot_isend[2] = rank + 2;
    bot_dsend[0] = rank * 0.25, bot_dsend[1] = rank * 0.5;
    MPI_Get_address(bot_isend, &disps[0]);
    MPI_Get_address(bot_dsend, &disps[1]);
    MPI_Type_create_struct(2, blocklens, disps, types, &stype);
    MPI_Type_commit(&stype);
    MPI_Get_address(bot_irecv, &disps[0]);
    MPI_Get_address(bot_drecv, &disps[1]);
    MPI_Type_create_struct(2, blocklens, disps, types, &rtype);
    MPI_Type_commit(&rtype);
    MPI_Sendrecv(MPI_BOTTOM, 1, stype, right, 8, MPI_BOTTOM, 1, rtype, left, 8,
                 MPI_COMM_WORLD, &status);
    ok &= bot_irecv[2] == left + 2 && bot_drecv[1] == left * 0.5;
    check += bot_irecv[0] + bot_irecv[1] + bot_irecv[2] + bot_drecv[0] + bot_drecv[1];
    MPI_Type_free(&stype);
    MPI_Type_free(&rtype);

    MPI_Barrier(MPI_COMM_WORLD);
    if (!ok)
        check = -check;
    MPI_Gather(&check, 1, MPI_DOUBLE, checks, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        int all = 1;
        for (int i = 0; i < nprocs && i < LEN(checks); i++) {
            printf("rank %d checksum %.3f\n", i, checks[i]);
            all &= checks[i] >= 0;
        }
        printf("fortran_twin: %s\n", all ? "all checks passed" : "CHECK FAILED");
    }
    MPI_Finalize();
    return 0;
}
