/*
 * A sender held up by a late receiver only when its messages go by rendezvous (the
 * eager limit's effect, planted with sleeps so that the machine's load cannot decide it).
 *   late_receiver BYTES ITERS SLEEP_MS
 * Per iteration, rank 2k: MPI_Send 0 bytes (a token) to 2k+1, MPI_Send BYTES to 2k+1,
 * sleep SLEEP_MS; rank 2k+1: MPI_Recv the token, sleep SLEEP_MS, MPI_Recv the BYTES.
 * The receiver posts its receive one sleep after the send starts. Eager (BYTES below the
 * limit): the send returns at once and the two sleeps overlap, one SLEEP_MS per
 * iteration. Rendezvous: the send returns only once the receive is posted, the sender
 * sleeps after that, and the next token (so the receiver's next sleep) waits for it: two
 * SLEEP_MS per iteration. The 0-byte tokens are always eager and carry nothing (the
 * eager-limit rule leaves them out). Rank 0 prints "late_receiver bytes=B iters=I sum=S"
 * (S: a checksum of every byte received).
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "pace.h"

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int bytes = argc > 1 ? atoi(argv[1]) : 6144;
    int iters = argc > 2 ? atoi(argv[2]) : 20;
    int ms = argc > 3 ? atoi(argv[3]) : 20;
    unsigned char *buf = malloc(bytes > 0 ? (size_t)bytes : 1);
    long long sum = 0;
    int peer = rank ^ 1;
    for (int it = 0; it < iters && peer < size; it++) {
        if (rank % 2 == 0) {
            for (int i = 0; i < bytes; i++)
                buf[i] = (unsigned char)(i * 7 + it);
            MPI_Send(NULL, 0, MPI_BYTE, peer, 2 * it, MPI_COMM_WORLD);
            MPI_Send(buf, bytes, MPI_BYTE, peer, 2 * it + 1, MPI_COMM_WORLD);
            nap_ms(ms);
        } else {
            MPI_Recv(NULL, 0, MPI_BYTE, peer, 2 * it, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            nap_ms(ms);
            MPI_Recv(buf, bytes, MPI_BYTE, peer, 2 * it + 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            for (int i = 0; i < bytes; i++)
                sum += buf[i];
        }
    }
    long long total = 0;
    MPI_Reduce(&sum, &total, 1, MPI_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("late_receiver bytes=%d iters=%d sum=%lld\n", bytes, iters, total);
    free(buf);
    MPI_Finalize();
    return 0;
}
