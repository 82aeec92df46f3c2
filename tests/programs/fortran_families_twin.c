/*
 * The traffic of fortran_families_mpifh.f90 / fortran_families_f08.f90, call
 * for call, in C: tests/runtime/counting/test_fortran_bindings.py requires the Fortran
 * programs' profiles to equal this program's record for record.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    int rank, nprocs, n, idx, outcount, val, total, flag, ok = 1;
    int sbuf[10], rbuf[10], pbuf[3], qbuf[3], indices[2], nbr[2], sbuf2[2], rbuf2[2];
    int cnt2[2], srcs[1], dsts[1], iob[4], rdb[4], zero[1] = {0};
    int periods[1] = {1}, dims[1];
    double check = 0, checks[1024];
    MPI_Request preq[2], req, req2, reqs[2];
    MPI_Message msg;
    MPI_Status status, statuses[2];
    MPI_Comm cart, dgraph, dup, c0, node;
    MPI_Group grp, grp0;
    MPI_Win win;
    MPI_File fh;
    MPI_Datatype typ2[2];
    MPI_Aint disp2[2];
    void *baseptr = NULL;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    int left = (rank - 1 + nprocs) % nprocs, right = (rank + 1) % nprocs;
    int *sc = malloc(sizeof(int) * nprocs), *ag = malloc(sizeof(int) * nprocs);
    int *a2a = malloc(sizeof(int) * nprocs), *b2a = malloc(sizeof(int) * nprocs);
    int *cnts = malloc(sizeof(int) * nprocs), *dsp = malloc(sizeof(int) * nprocs);
    int *bdsp = malloc(sizeof(int) * nprocs), *gv = malloc(sizeof(int) * nprocs);
    int *rsb = malloc(sizeof(int) * nprocs);
    MPI_Datatype *types = malloc(sizeof(MPI_Datatype) * nprocs);

    /* persistent requests */
    for (int i = 0; i < 10; i++)
        sbuf[i] = rank;
    MPI_Send_init(sbuf, 10, MPI_INT, right, 30, MPI_COMM_WORLD, &preq[0]);
    MPI_Recv_init(rbuf, 10, MPI_INT, left, 30, MPI_COMM_WORLD, &preq[1]);
    for (int round = 0; round < 2; round++) {
        MPI_Startall(2, preq);
        MPI_Waitall(2, preq, MPI_STATUSES_IGNORE);
        for (int i = 0; i < 10; i++)
            check += rbuf[i];
    }
    MPI_Start(&preq[1]);
    MPI_Start(&preq[0]);
    MPI_Wait(&preq[0], MPI_STATUS_IGNORE);
    MPI_Wait(&preq[1], &status);
    ok &= status.MPI_SOURCE == left && rbuf[9] == left;
    MPI_Request_free(&preq[0]);
    MPI_Request_free(&preq[1]);
    ok &= preq[0] == MPI_REQUEST_NULL;

    /* probes */
    pbuf[0] = rank, pbuf[1] = 2 * rank, pbuf[2] = 3 * rank;
    MPI_Isend(pbuf, 3, MPI_INT, right, 40, MPI_COMM_WORLD, &req);
    MPI_Probe(left, 40, MPI_COMM_WORLD, &status);
    MPI_Get_count(&status, MPI_INT, &n);
    MPI_Iprobe(left, 40, MPI_COMM_WORLD, &flag, &status);
    ok &= n == 3 && flag && status.MPI_TAG == 40;
    MPI_Recv(qbuf, 3, MPI_INT, left, 40, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    check += qbuf[0] + qbuf[1] + qbuf[2];
    MPI_Isend(pbuf, 3, MPI_INT, right, 41, MPI_COMM_WORLD, &req);
    MPI_Mprobe(left, 41, MPI_COMM_WORLD, &msg, &status);
    MPI_Mrecv(qbuf, 3, MPI_INT, &msg, &status);
    ok &= msg == MPI_MESSAGE_NULL && status.MPI_SOURCE == left;
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    check += 2.0 * (qbuf[0] + qbuf[1] + qbuf[2]);
    MPI_Isend(pbuf, 3, MPI_INT, right, 42, MPI_COMM_WORLD, &req);
    MPI_Probe(left, 42, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Improbe(left, 42, MPI_COMM_WORLD, &flag, &msg, &status);
    ok &= flag;
    MPI_Imrecv(qbuf, 3, MPI_INT, &msg, &req2);
    MPI_Wait(&req2, MPI_STATUS_IGNORE);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    check += 3.0 * (qbuf[0] + qbuf[1] + qbuf[2]);

    /* the Test family on null requests, Waitsome on one request */
    reqs[0] = reqs[1] = MPI_REQUEST_NULL;
    MPI_Test(&reqs[0], &flag, &status);
    ok &= flag;
    MPI_Testall(2, reqs, &flag, statuses);
    ok &= flag;
    MPI_Testany(2, reqs, &idx, &flag, MPI_STATUS_IGNORE);
    ok &= flag && idx == MPI_UNDEFINED;
    MPI_Testsome(2, reqs, &outcount, indices, MPI_STATUSES_IGNORE);
    ok &= outcount == MPI_UNDEFINED;
    MPI_Issend(pbuf, 3, MPI_INT, right, 43, MPI_COMM_WORLD, &reqs[0]);
    MPI_Recv(qbuf, 3, MPI_INT, left, 43, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Waitsome(1, reqs, &outcount, indices, statuses);
    ok &= outcount == 1 && indices[0] == 0;

    /* blocking variants */
    if (rank % 2 == 0) {
        MPI_Ssend(pbuf, 3, MPI_INT, right, 44, MPI_COMM_WORLD);
        MPI_Recv(qbuf, 3, MPI_INT, left, 44, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
        MPI_Recv(qbuf, 3, MPI_INT, left, 44, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Ssend(pbuf, 3, MPI_INT, right, 44, MPI_COMM_WORLD);
    }
    qbuf[0] = pbuf[0], qbuf[1] = pbuf[1], qbuf[2] = pbuf[2];
    MPI_Sendrecv_replace(qbuf, 3, MPI_INT, right, 45, left, 45, MPI_COMM_WORLD, &status);
    ok &= qbuf[2] == 3 * left;
    check += qbuf[0] + qbuf[1] + qbuf[2];

    /* collectives */
    MPI_Reduce(&rank, &total, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0)
        ok &= total == nprocs * (nprocs - 1) / 2;
    for (int i = 0; i < nprocs; i++) {
        sc[i] = 10 * (i + 1);
        a2a[i] = 100 * rank + i + 1;
        cnts[i] = 1;
        dsp[i] = i;
        bdsp[i] = 4 * i;
        types[i] = MPI_INT;
        rsb[i] = i + 1;
    }
    MPI_Scatter(sc, 1, MPI_INT, &val, 1, MPI_INT, 0, MPI_COMM_WORLD);
    ok &= val == 10 * (rank + 1);
    MPI_Allgather(&rank, 1, MPI_INT, ag, 1, MPI_INT, MPI_COMM_WORLD);
    ok &= ag[nprocs - 1] == nprocs - 1;
    MPI_Alltoall(a2a, 1, MPI_INT, b2a, 1, MPI_INT, MPI_COMM_WORLD);
    for (int i = 0; i < nprocs; i++)
        check += b2a[i];
    MPI_Alltoallv(a2a, cnts, dsp, MPI_INT, b2a, cnts, dsp, MPI_INT, MPI_COMM_WORLD);
    for (int i = 0; i < nprocs; i++)
        check += b2a[i];
    for (int i = 0; i < nprocs; i++)
        b2a[i] = 0;
    MPI_Alltoallw(a2a, cnts, bdsp, types, b2a, cnts, bdsp, types, MPI_COMM_WORLD);
    ok &= b2a[0] == rank + 1;
    MPI_Gatherv(&rank, 1, MPI_INT, gv, cnts, dsp, MPI_INT, 0, MPI_COMM_WORLD);
    if (rank == 0)
        ok &= gv[nprocs - 1] == nprocs - 1;
    MPI_Reduce_scatter_block(rsb, &val, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    ok &= val == nprocs * (rank + 1);
    MPI_Scan(&rank, &val, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    ok &= val == rank * (rank + 1) / 2;
    MPI_Exscan(&rank, &val, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank > 0)
        ok &= val == rank * (rank - 1) / 2;
    MPI_Ibarrier(MPI_COMM_WORLD, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    MPI_Iallreduce(&rank, &val, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    ok &= val == nprocs - 1;
    for (int i = 0; i < nprocs; i++)
        b2a[i] = 0;
    MPI_Ialltoallw(a2a, cnts, bdsp, types, b2a, cnts, bdsp, types, MPI_COMM_WORLD, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    ok &= b2a[nprocs - 1] == 100 * (nprocs - 1) + rank + 1;

    /* topologies */
    dims[0] = nprocs;
    MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &cart);
    MPI_Neighbor_allgather(&rank, 1, MPI_INT, nbr, 1, MPI_INT, cart);
    ok &= nbr[0] == left && nbr[1] == right;
    MPI_Comm_free(&cart);
    srcs[0] = left;
    dsts[0] = right;
    MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, srcs, MPI_UNWEIGHTED, 1, dsts,
                                   MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &dgraph);
    MPI_Neighbor_alltoall(&rank, 1, MPI_INT, &val, 1, MPI_INT, dgraph);
    ok &= val == left;
    sbuf2[0] = -rank;
    cnt2[0] = 1;
    disp2[0] = 0;
    typ2[0] = MPI_INT;
    MPI_Neighbor_alltoallw(sbuf2, cnt2, disp2, typ2, rbuf2, cnt2, disp2, typ2, dgraph);
    ok &= rbuf2[0] == -left;
    MPI_Comm_free(&dgraph);

    /* communicators and groups */
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Comm_group(dup, &grp);
    MPI_Group_incl(grp, 1, zero, &grp0);
    MPI_Comm_create(dup, grp0, &c0);
    ok &= (rank == 0) == (c0 != MPI_COMM_NULL);
    if (c0 != MPI_COMM_NULL)
        MPI_Comm_free(&c0);
    MPI_Group_free(&grp0);
    MPI_Group_free(&grp);
    MPI_Comm_split_type(dup, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Comm_free(&node);
    MPI_Comm_free(&dup);

    /* one-sided */
    MPI_Win_allocate(4 * nprocs, 4, MPI_INFO_NULL, MPI_COMM_WORLD, &baseptr, &win);
    ok &= baseptr != NULL;
    MPI_Win_fence(0, win);
    MPI_Put(&rank, 1, MPI_INT, right, rank, 1, MPI_INT, win);
    MPI_Win_fence(0, win);
    MPI_Get(&val, 1, MPI_INT, right, rank, 1, MPI_INT, win);
    MPI_Get(&n, 1, MPI_INT, rank, left, 1, MPI_INT, win);
    MPI_Win_fence(0, win);
    ok &= val == rank && n == left;
    MPI_Win_free(&win);
    ok &= win == MPI_WIN_NULL;

    /* MPI-IO */
    for (int i = 0; i < 4; i++)
        iob[i] = rank * 4 + i + 1;
    MPI_File_open(MPI_COMM_WORLD, "fortran_families.dat", MPI_MODE_CREATE | MPI_MODE_WRONLY,
                  MPI_INFO_NULL, &fh);
    MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "native", MPI_INFO_NULL);
    MPI_File_write_at_all(fh, 4 * rank, iob, 4, MPI_INT, &status);
    MPI_File_close(&fh);
    ok &= fh == MPI_FILE_NULL;
    MPI_File_open(MPI_COMM_WORLD, "fortran_families.dat", MPI_MODE_RDONLY, MPI_INFO_NULL, &fh);
    MPI_File_read_at(fh, 16 * right, rdb, 4, MPI_INT, &status);
    MPI_Get_count(&status, MPI_INT, &n);
    ok &= n == 4 && rdb[0] == right * 4 + 1;
    MPI_File_close(&fh);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        MPI_File_delete("fortran_families.dat", MPI_INFO_NULL);

    if (!ok)
        check = -check - 1;
    MPI_Gather(&check, 1, MPI_DOUBLE, checks, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        int all = 1;
        for (int i = 0; i < nprocs && i < 1024; i++) {
            printf("rank %d checksum %.3f\n", i, checks[i]);
            all &= checks[i] >= 0;
        }
        printf("fortran_families_twin: %s\n", all ? "all checks passed" : "CHECK FAILED");
    }
    free(sc), free(ag), free(a2a), free(b2a), free(cnts), free(dsp), free(bdsp), free(gv);
    free(rsb), free(types);
    MPI_Finalize();
    return 0;
}
