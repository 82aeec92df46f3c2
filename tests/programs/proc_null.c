/*
 * MPI_PROC_NULL: every call is made, none moves data. A non-periodic line,
 * up = rank+1 (MPI_PROC_NULL on the last rank), down = rank-1 (MPI_PROC_NULL
 * on rank 0). Per rank:
 *   MPI_Send x1 and MPI_Recv x1 to/from MPI_PROC_NULL (8 ints each)
 *   MPI_Isend + MPI_Irecv to/from MPI_PROC_NULL (4 ints), MPI_Waitall(2)
 *   MPI_Sendrecv 8 ints to up, from down (a real message except at the ends)
 *   MPI_Sendrecv of 0 ints to up, from down (an empty message is still a message)
 * Peers: rank r < P-1 sends two messages, 32 bytes in all, to r+1; nothing else.
 */
#include <mpi.h>
#include "known.h"

int main(int argc, char **argv)
{
    int rank, size, ok = 1, n, buf[8], in[8];
    long long check = 0;
    MPI_Status st, sts[2];
    MPI_Request req[2];
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int up = rank + 1 < size ? rank + 1 : MPI_PROC_NULL;
    int down = rank > 0 ? rank - 1 : MPI_PROC_NULL;

    for (int i = 0; i < 8; i++)
        buf[i] = known_val(rank, 1, i), in[i] = -1;
    MPI_Send(buf, 8, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD);
    MPI_Recv(in, 8, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &st);
    MPI_Get_count(&st, MPI_INT, &n);
    ok &= n == 0 && st.MPI_SOURCE == MPI_PROC_NULL && st.MPI_TAG == MPI_ANY_TAG && in[0] == -1;

    MPI_Isend(buf, 4, MPI_INT, MPI_PROC_NULL, 2, MPI_COMM_WORLD, &req[0]);
    MPI_Irecv(in, 4, MPI_INT, MPI_PROC_NULL, 2, MPI_COMM_WORLD, &req[1]);
    MPI_Waitall(2, req, sts);
    MPI_Get_count(&sts[1], MPI_INT, &n);
    /* (MPICH 4.0 leaves MPI_SOURCE 0 here, so only the count is checked.) */
    ok &= n == 0 && in[0] == -1;

    MPI_Sendrecv(buf, 8, MPI_INT, up, 1, in, 8, MPI_INT, down, 1, MPI_COMM_WORLD, &st);
    MPI_Get_count(&st, MPI_INT, &n);
    ok &= n == (down == MPI_PROC_NULL ? 0 : 8);
    for (int i = 0; i < 8; i++) {
        ok &= in[i] == (down == MPI_PROC_NULL ? -1 : known_val(down, 1, i));
        check += in[i];
    }
    MPI_Sendrecv(buf, 0, MPI_INT, up, 3, in, 0, MPI_INT, down, 3, MPI_COMM_WORLD, &st);
    MPI_Get_count(&st, MPI_INT, &n);
    ok &= n == 0 && st.MPI_SOURCE == down;
    known_result("proc_null", rank, check, ok);
    MPI_Finalize();
    return 0;
}
