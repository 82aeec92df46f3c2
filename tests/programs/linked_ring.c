/*
 * Linked with -lmpiscope (the static-link route, no LD_PRELOAD): a ring of
 * 3 x MPI_Sendrecv of 4 ints to right / from left, then MPI_Allreduce of one
 * long long. The profile must be written all the same.
 */
#include <mpi.h>
#include "known.h"

int main(int argc, char **argv)
{
    int rank, size, ok = 1, out[4], in[4];
    long long check = 0, mine, total;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int left = (rank - 1 + size) % size, right = (rank + 1) % size;
    for (int it = 0; it < 3; it++) {
        for (int i = 0; i < 4; i++)
            out[i] = known_val(rank, it, i);
        MPI_Sendrecv(out, 4, MPI_INT, right, it, in, 4, MPI_INT, left, it, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
        for (int i = 0; i < 4; i++)
            ok &= in[i] == known_val(left, it, i), check += in[i];
    }
    mine = rank;
    MPI_Allreduce(&mine, &total, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    ok &= total == (long long)size * (size - 1) / 2;
    known_result("linked_ring", rank, check + total, ok);
    MPI_Finalize();
    return 0;
}
