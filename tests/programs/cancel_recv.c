/*
 * Cancelled receives move nothing. Per rank, four MPI_Irecv of 100 ints
 * (400 bytes posted each):
 *   1. never matched, MPI_Cancel, MPI_Wait(status): MPI_Test_cancelled true;
 *   2. never matched, MPI_Cancel, MPI_Waitall(MPI_STATUSES_IGNORE) of it and a
 *      receive from MPI_PROC_NULL (MPI_Irecv, 0 bytes);
 *   3. never matched, MPI_Cancel, MPI_Test until done: cancelled;
 *   4. matched by a 10-int MPI_Send to itself before MPI_Cancel, MPI_Wait:
 *      not cancelled, 400 bytes posted (the posted size is what a nonblocking
 *      receive counts), 40 bytes arrived.
 * Profile per rank: MPI_Irecv x5 (400 bytes received: the one that was not
 * cancelled; the three cancelled ones and the MPI_PROC_NULL one in bucket 0),
 * MPI_Cancel x4, MPI_Wait x2, MPI_Waitall x1, MPI_Test (polls), MPI_Send
 * x1 of 40 bytes to itself.
 */
#include <mpi.h>
#include "known.h"

int main(int argc, char **argv)
{
    int rank, ok = 1, flag = 0, polls = 0, a[100], b[100], c[100], d[100], e[4], out[10];
    MPI_Request req, two[2];
    MPI_Status st;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);

    MPI_Irecv(a, 100, MPI_INT, MPI_ANY_SOURCE, 901, MPI_COMM_WORLD, &req);
    MPI_Cancel(&req);
    MPI_Wait(&req, &st);
    MPI_Test_cancelled(&st, &flag);
    ok &= flag;

    MPI_Irecv(b, 100, MPI_INT, MPI_ANY_SOURCE, 902, MPI_COMM_WORLD, &two[0]);
    MPI_Irecv(e, 4, MPI_INT, MPI_PROC_NULL, 902, MPI_COMM_WORLD, &two[1]);
    MPI_Cancel(&two[0]);
    MPI_Waitall(2, two, MPI_STATUSES_IGNORE);

    MPI_Irecv(c, 100, MPI_INT, MPI_ANY_SOURCE, 903, MPI_COMM_WORLD, &req);
    MPI_Cancel(&req);
    for (flag = 0; !flag; polls++)
        MPI_Test(&req, &flag, &st);
    MPI_Test_cancelled(&st, &flag);
    ok &= flag;

    for (int i = 0; i < 10; i++)
        out[i] = known_val(rank, 904, i);
    MPI_Irecv(d, 100, MPI_INT, rank, 904, MPI_COMM_WORLD, &req);
    MPI_Send(out, 10, MPI_INT, rank, 904, MPI_COMM_WORLD);
    MPI_Cancel(&req);
    MPI_Wait(&req, &st);
    MPI_Test_cancelled(&st, &flag);
    int n = 0;
    MPI_Get_count(&st, MPI_INT, &n);
    ok &= !flag && n == 10 && d[9] == known_val(rank, 904, 9);
    known_polls(rank, "MPI_Test", polls);
    known_result("cancel_recv", rank, d[9], ok);
    MPI_Finalize();
    return 0;
}
