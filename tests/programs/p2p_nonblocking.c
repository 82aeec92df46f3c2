/*
 * Nonblocking point-to-point on a ring, one phase per completion function.
 * Sizes (ints unless said; right = rank+1, left = rank-1):
 *   1 MPI_Wait      Irecv 16 from left, Isend 16 to right, Wait x2
 *   2 MPI_Waitall   Irecv 32 doubles from left and from right, Isend to both, Waitall(4)
 *   3 MPI_Waitany   Irecv 7 from left, Isend 7 to right, Waitany x2
 *   4 MPI_Waitsome  Irecv 100 from left and right, Isend to both, Waitsome until done (polled)
 *   5 MPI_Test      Irecv 3 / Isend 3, Test each until done (polled)
 *   6 MPI_Testall   Irecv 1 / Isend 1, Testall(2) until done (polled)
 *   7 MPI_Testany   Irecv 2 / Isend 2, Testany(2) until both done (polled)
 *   8 MPI_Testsome  Irecv 5 / Isend 5, Testsome(2) until both done (polled)
 *   9 MPI_Request_free  Isend 6 to right then Request_free; blocking Recv 6 from left
 * Polled functions print their call counts on stderr (known.h).
 */
#include <mpi.h>
#include "known.h"

enum { MAXN = 100 };
static int out[10][MAXN], in[10][2][MAXN];
static double dout[32], din[2][32];

static long long take(int phase, int side, int n, int from, int *ok)
{
    long long sum = 0;
    for (int i = 0; i < n; i++) {
        *ok &= in[phase][side][i] == known_val(from, phase, i);
        sum += in[phase][side][i];
    }
    return sum;
}

static void post(int phase, int n, int left, int right, int rank, MPI_Request *req)
{
    for (int i = 0; i < n; i++)
        out[phase][i] = known_val(rank, phase, i);
    MPI_Irecv(in[phase][0], n, MPI_INT, left, phase, MPI_COMM_WORLD, &req[0]);
    MPI_Isend(out[phase], n, MPI_INT, right, phase, MPI_COMM_WORLD, &req[1]);
}

int main(int argc, char **argv)
{
    int rank, size, ok = 1, idx, flag, outcount, indices[4], done, polls;
    long long check = 0;
    MPI_Request req[4];
    MPI_Status st[4];
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int left = (rank - 1 + size) % size, right = (rank + 1) % size;

    post(1, 16, left, right, rank, req);
    MPI_Wait(&req[0], &st[0]);
    MPI_Wait(&req[1], MPI_STATUS_IGNORE);
    ok &= st[0].MPI_SOURCE == left && req[0] == MPI_REQUEST_NULL;
    check += take(1, 0, 16, left, &ok);

    for (int i = 0; i < 32; i++)
        dout[i] = rank + i / 8.0;
    MPI_Irecv(din[0], 32, MPI_DOUBLE, left, 2, MPI_COMM_WORLD, &req[0]);
    MPI_Irecv(din[1], 32, MPI_DOUBLE, right, 3, MPI_COMM_WORLD, &req[1]);
    MPI_Isend(dout, 32, MPI_DOUBLE, right, 2, MPI_COMM_WORLD, &req[2]);
    MPI_Isend(dout, 32, MPI_DOUBLE, left, 3, MPI_COMM_WORLD, &req[3]);
    MPI_Waitall(4, req, st);
    ok &= st[0].MPI_SOURCE == left && st[1].MPI_SOURCE == right;
    for (int i = 0; i < 32; i++) {
        ok &= din[0][i] == left + i / 8.0 && din[1][i] == right + i / 8.0;
        check += (long long)(8 * (din[0][i] + din[1][i]));
    }

    post(3, 7, left, right, rank, req);
    for (int k = 0; k < 2; k++) {
        MPI_Waitany(2, req, &idx, &st[0]);
        ok &= idx == 0 || idx == 1;
        if (idx == 0)
            ok &= st[0].MPI_SOURCE == left && st[0].MPI_TAG == 3;
    }
    check += take(3, 0, 7, left, &ok);

    for (int i = 0; i < 100; i++)
        out[4][i] = known_val(rank, 4, i);
    MPI_Irecv(in[4][0], 100, MPI_INT, left, 4, MPI_COMM_WORLD, &req[0]);
    MPI_Irecv(in[4][1], 100, MPI_INT, right, 5, MPI_COMM_WORLD, &req[1]);
    MPI_Isend(out[4], 100, MPI_INT, right, 4, MPI_COMM_WORLD, &req[2]);
    MPI_Isend(out[4], 100, MPI_INT, left, 5, MPI_COMM_WORLD, &req[3]);
    for (done = 0, polls = 0; done < 4; polls++) {
        MPI_Waitsome(4, req, &outcount, indices, st);
        done += outcount;
    }
    known_polls(rank, "MPI_Waitsome", polls);
    check += take(4, 0, 100, left, &ok) + take(4, 1, 100, right, &ok);

    post(5, 3, left, right, rank, req);
    polls = 0;
    for (int k = 0; k < 2; k++)
        for (flag = 0; !flag; polls++)
            MPI_Test(&req[k], &flag, MPI_STATUS_IGNORE);
    known_polls(rank, "MPI_Test", polls);
    check += take(5, 0, 3, left, &ok);

    post(6, 1, left, right, rank, req);
    for (flag = 0, polls = 0; !flag; polls++)
        MPI_Testall(2, req, &flag, st);
    known_polls(rank, "MPI_Testall", polls);
    ok &= st[0].MPI_SOURCE == left;
    check += take(6, 0, 1, left, &ok);

    post(7, 2, left, right, rank, req);
    for (done = 0, polls = 0; done < 2; polls++) {
        MPI_Testany(2, req, &idx, &flag, MPI_STATUS_IGNORE);
        done += flag && idx != MPI_UNDEFINED;
    }
    known_polls(rank, "MPI_Testany", polls);
    check += take(7, 0, 2, left, &ok);

    post(8, 5, left, right, rank, req);
    for (done = 0, polls = 0; done < 2; polls++) {
        MPI_Testsome(2, req, &outcount, indices, st);
        done += outcount;
    }
    known_polls(rank, "MPI_Testsome", polls);
    check += take(8, 0, 5, left, &ok);

    for (int i = 0; i < 6; i++)
        out[9][i] = known_val(rank, 9, i);
    MPI_Isend(out[9], 6, MPI_INT, right, 9, MPI_COMM_WORLD, &req[0]);
    MPI_Request_free(&req[0]);
    ok &= req[0] == MPI_REQUEST_NULL;
    MPI_Recv(in[9][0], 6, MPI_INT, left, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    check += take(9, 0, 6, left, &ok);

    known_result("p2p_nonblocking", rank, check, ok);
    MPI_Finalize();
    return 0;
}
