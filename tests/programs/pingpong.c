/*
 * Blocking ping-pong of one message size (the eager-limit rule's test).
 *   pingpong BYTES ITERS
 * Ranks 2k and 2k+1 exchange ITERS round trips: 2k sends BYTES with MPI_Send and receives
 * them back with MPI_Recv; 2k+1 does the reverse. An odd last rank only joins the final
 * check. Per pair: 2 x ITERS messages of BYTES bytes. Rank 0 prints "pingpong bytes=B
 * iters=I ok=1" when every byte came back as sent.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int bytes = argc > 1 ? atoi(argv[1]) : 1024;
    int iters = argc > 2 ? atoi(argv[2]) : 1000;
    unsigned char *buf = malloc(bytes > 0 ? (size_t)bytes : 1);
    int ok = 1, peer = rank ^ 1;
    for (int i = 0; i < bytes; i++)
        buf[i] = (unsigned char)(i * 7 + 3);
    if (peer < size) {
        for (int it = 0; it < iters; it++) {
            if (rank % 2 == 0) {
                MPI_Send(buf, bytes, MPI_BYTE, peer, it, MPI_COMM_WORLD);
                MPI_Recv(buf, bytes, MPI_BYTE, peer, it, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            } else {
                MPI_Recv(buf, bytes, MPI_BYTE, peer, it, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                MPI_Send(buf, bytes, MPI_BYTE, peer, it, MPI_COMM_WORLD);
            }
        }
    }
    for (int i = 0; i < bytes; i++)
        ok &= buf[i] == (unsigned char)(i * 7 + 3);
    int all = 0;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (rank == 0)
        printf("pingpong bytes=%d iters=%d ok=%d\n", bytes, iters, all);
    free(buf);
    MPI_Finalize();
    return 0;
}
