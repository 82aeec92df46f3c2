/*
 * Persistent requests on a ring, ITERS iterations of two exchanges:
 *   A: Send_init 50 ints to right, Recv_init from left; MPI_Startall(2) + MPI_Waitall(2)
 *   B: Send_init 8 doubles to left, Recv_init from right; MPI_Start x2 + MPI_Wait x2
 * then MPI_Request_free x4. Then, on the freed (and likely reused) handles,
 *   C: Send_init 3 ints to left, Recv_init from right; 2 x (MPI_Startall(2) + MPI_Waitall(2)); free x2
 * Every start of a send is one message to its peer: per rank 5 messages (1000 B)
 * to right, 5 (320 B) + 2 (24 B) to left.
 */
#include <mpi.h>
#include "known.h"

enum { ITERS = 5, NA = 50, NB = 8 };

int main(int argc, char **argv)
{
    int rank, size, ok = 1, aout[NA], ain[NA];
    double bout[NB], bin[NB];
    long long check = 0;
    MPI_Request a[2], b[2];
    MPI_Status st[2];
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int left = (rank - 1 + size) % size, right = (rank + 1) % size;

    MPI_Recv_init(ain, NA, MPI_INT, left, 1, MPI_COMM_WORLD, &a[0]);
    MPI_Send_init(aout, NA, MPI_INT, right, 1, MPI_COMM_WORLD, &a[1]);
    MPI_Recv_init(bin, NB, MPI_DOUBLE, right, 2, MPI_COMM_WORLD, &b[0]);
    MPI_Send_init(bout, NB, MPI_DOUBLE, left, 2, MPI_COMM_WORLD, &b[1]);
    for (int it = 0; it < ITERS; it++) {
        for (int i = 0; i < NA; i++)
            aout[i] = known_val(rank, it, i);
        for (int i = 0; i < NB; i++)
            bout[i] = rank * 10 + it + i / 8.0;
        MPI_Startall(2, a);
        MPI_Waitall(2, a, st);
        ok &= st[0].MPI_SOURCE == left && a[0] != MPI_REQUEST_NULL;
        for (int i = 0; i < NA; i++) {
            ok &= ain[i] == known_val(left, it, i);
            check += ain[i];
        }
        MPI_Start(&b[0]);
        MPI_Start(&b[1]);
        MPI_Wait(&b[0], &st[0]);
        MPI_Wait(&b[1], MPI_STATUS_IGNORE);
        ok &= st[0].MPI_SOURCE == right;
        for (int i = 0; i < NB; i++) {
            ok &= bin[i] == right * 10 + it + i / 8.0;
            check += (long long)(8 * bin[i]);
        }
    }
    for (int k = 0; k < 2; k++) {
        MPI_Request_free(&a[k]);
        MPI_Request_free(&b[k]);
    }
    int cout[3], cin[3];
    MPI_Request c[2];
    MPI_Recv_init(cin, 3, MPI_INT, right, 3, MPI_COMM_WORLD, &c[0]);
    MPI_Send_init(cout, 3, MPI_INT, left, 3, MPI_COMM_WORLD, &c[1]);
    for (int it = 0; it < 2; it++) {
        for (int i = 0; i < 3; i++)
            cout[i] = known_val(rank, 10 + it, i);
        MPI_Startall(2, c);
        MPI_Waitall(2, c, MPI_STATUSES_IGNORE);
        for (int i = 0; i < 3; i++)
            ok &= cin[i] == known_val(right, 10 + it, i), check += cin[i];
    }
    MPI_Request_free(&c[0]);
    MPI_Request_free(&c[1]);
    known_result("p2p_persistent", rank, check, ok);
    MPI_Finalize();
    return 0;
}
