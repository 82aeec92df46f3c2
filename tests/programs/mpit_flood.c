/*
 * mpit_flood.c - known states of rank 0's message queues, for the MPI_T tests
 * (tests/runtime/lifecycle/test_runtime_mpit.py).
 *
 *   mpit_flood flood N      every other rank sends N small messages to rank 0
 *                           before rank 0 posts any receive: rank 0's
 *                           unexpected-message queue holds (P-1) x N, then drains
 *   mpit_flood preposted N  rank 0 posts its (P-1) x N receives (by source) first,
 *                           the others send after a barrier: rank 0's
 *                           posted-receive queue holds (P-1) x N, nothing is unexpected
 *   mpit_flood dup N        as flood, on a duplicate of MPI_COMM_WORLD (freed
 *                           before MPI_Finalize)
 *   mpit_flood self N       every rank sends N small messages to itself on
 *                           MPI_COMM_SELF (MPI_Isend) before it posts a receive:
 *                           every rank's unexpected queue (of MPI_COMM_SELF) holds N
 *
 * At that state rank 0 spins 50 ms on MPI_Iprobe for a tag nobody sends:
 * progress moves every arrived message into its queue, and the runtime's
 * MPI_T samples (taken at wrapper exits, one per sampling interval) see it.
 * Prints one line with a checksum of what rank 0 received.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TAG 1
#define NOBODY 999

static MPI_Comm comm;

static void spin(double seconds)
{
    double end = MPI_Wtime() + seconds;
    int flag;
    while (MPI_Wtime() < end)
        MPI_Iprobe(MPI_ANY_SOURCE, NOBODY, comm, &flag, MPI_STATUS_IGNORE);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *mode = argc > 1 ? argv[1] : "flood";
    int n = argc > 2 ? atoi(argv[2]) : 100;
    int preposted = strcmp(mode, "preposted") == 0;
    comm = MPI_COMM_WORLD;
    if (strcmp(mode, "dup") == 0)
        MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    long total = (long)(size - 1) * n, sum = 0;
    int msg[4] = {0, 0, 0, 0};

    if (strcmp(mode, "self") == 0) {
        comm = MPI_COMM_SELF;
        int (*out)[4] = calloc((size_t)n, sizeof *out);
        MPI_Request *req = calloc((size_t)n, sizeof *req);
        for (int i = 0; i < n; i++) {
            out[i][0] = rank * 1000 + i;
            MPI_Isend(out[i], 4, MPI_INT, 0, TAG, comm, &req[i]);
        }
        spin(0.05);
        for (int i = 0; i < n; i++) {
            MPI_Recv(msg, 4, MPI_INT, 0, TAG, comm, MPI_STATUS_IGNORE);
            sum += msg[0];
        }
        MPI_Waitall(n, req, MPI_STATUSES_IGNORE);
        free(out);
        free(req);
        long all = 0;
        MPI_Reduce(&sum, &all, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
        if (rank == 0)
            printf("mpit_flood: self, %d messages to itself on each of %d ranks, checksum %ld\n", n,
                   size, all);
        MPI_Finalize();
        return 0;
    }

    if (rank != 0) {
        if (preposted)
            MPI_Barrier(comm);
        for (int i = 0; i < n; i++) {
            msg[0] = rank * 1000 + i;
            MPI_Send(msg, 4, MPI_INT, 0, TAG, comm);
        }
        if (!preposted)
            MPI_Barrier(comm);
    } else if (!preposted) {
        MPI_Barrier(comm);     /* every message was sent (eagerly) before it */
        spin(0.05);
        for (int src = 1; src < size; src++)
            for (int i = 0; i < n; i++) {
                MPI_Recv(msg, 4, MPI_INT, src, TAG, comm, MPI_STATUS_IGNORE);
                sum += msg[0];
            }
    } else {
        int (*buf)[4] = calloc((size_t)total + 1, sizeof *buf);
        MPI_Request *req = calloc((size_t)total + 1, sizeof *req);
        long k = 0;
        for (int src = 1; src < size; src++)
            for (int i = 0; i < n; i++, k++)
                MPI_Irecv(buf[k], 4, MPI_INT, src, TAG, comm, &req[k]);
        spin(0.05);
        MPI_Barrier(comm);     /* only now do the others send */
        MPI_Waitall((int)total, req, MPI_STATUSES_IGNORE);
        for (k = 0; k < total; k++)
            sum += buf[k][0];
        free(buf);
        free(req);
    }
    if (comm != MPI_COMM_WORLD)
        MPI_Comm_free(&comm);
    if (rank == 0)
        printf("mpit_flood: %s, %ld messages to rank 0 on %d ranks, checksum %ld\n", mode, total, size,
               sum);
    MPI_Finalize();
    return 0;
}
