/*
 * MPI_Pcontrol regions, nested; every call is charged to the innermost open
 * region (r = rank; ring right = r+1, left = r-1):
 *   outside:         MPI_Barrier x1
 *   "outer":         MPI_Allreduce x2 (1 int)
 *   "outer"/"inner": entered twice; MPI_Sendrecv x2 then x1 (2 ints)
 *   "solo":          entered 3 times at top level; MPI_Bcast x1 (3 ints from root 0) each time
 *   "evens":         only even ranks; MPI_Send of 4 ints to r+1 when r+1 < P, else nothing
 *   outside again:   odd ranks MPI_Recv 4 ints from r-1
 */
#include <mpi.h>
#include "known.h"

static long long ring(int n, int tag, int rank, int size, int *ok)
{
    int left = (rank - 1 + size) % size, right = (rank + 1) % size, out[4], in[4];
    long long sum = 0;
    for (int i = 0; i < n; i++)
        out[i] = known_val(rank, tag, i);
    MPI_Sendrecv(out, n, MPI_INT, right, tag, in, n, MPI_INT, left, tag, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    for (int i = 0; i < n; i++)
        *ok &= in[i] == known_val(left, tag, i), sum += in[i];
    return sum;
}

int main(int argc, char **argv)
{
    int rank, size, ok = 1, v, s, b[4];
    long long check = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Pcontrol(1, "outer");
    v = rank;
    MPI_Allreduce(&v, &s, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    ok &= s == size * (size - 1) / 2;
    MPI_Pcontrol(1, "inner");
    check += ring(2, 1, rank, size, &ok);
    check += ring(2, 2, rank, size, &ok);
    MPI_Pcontrol(-1, "inner");
    MPI_Allreduce(&v, &s, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    ok &= s == size - 1;
    MPI_Pcontrol(1, "inner");
    check += ring(2, 3, rank, size, &ok);
    MPI_Pcontrol(-1, "inner");
    MPI_Pcontrol(-1, "outer");

    for (int k = 0; k < 3; k++) {
        MPI_Pcontrol(1, "solo");
        for (int i = 0; i < 3; i++)
            b[i] = rank == 0 ? known_val(0, 10 + k, i) : -1;
        MPI_Bcast(b, 3, MPI_INT, 0, MPI_COMM_WORLD);
        for (int i = 0; i < 3; i++)
            ok &= b[i] == known_val(0, 10 + k, i), check += b[i];
        MPI_Pcontrol(-1, "solo");
    }

    if (rank % 2 == 0) {
        MPI_Pcontrol(1, "evens");
        for (int i = 0; i < 4; i++)
            b[i] = known_val(rank, 20, i);
        if (rank + 1 < size)
            MPI_Send(b, 4, MPI_INT, rank + 1, 20, MPI_COMM_WORLD);
        MPI_Pcontrol(-1, "evens");
    } else {
        MPI_Recv(b, 4, MPI_INT, rank - 1, 20, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        for (int i = 0; i < 4; i++)
            ok &= b[i] == known_val(rank - 1, 20, i), check += b[i];
    }
    known_result("regions", rank, check, ok);
    MPI_Finalize();
    return 0;
}
