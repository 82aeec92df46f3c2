/*
 * Messages of 2 GiB (2^31 bytes, one more than INT_MAX), two ranks: rank 0
 * sends rank 1
 *   MPI_Send of MPI_Type_contiguous(2^28, MPI_DOUBLE) x 1, received by MPI_Recv
 *     of the same type x 1;
 *   MPI_Send of MPI_DOUBLE x 2^28, received by MPI_Irecv of MPI_DOUBLE x 2^28
 *     + MPI_Wait.
 * Each is 2,147,483,648 bytes, which MPI_Type_size and MPI_Get_count cannot
 * express (MPI_UNDEFINED); MPI_Get_elements_x must see every byte. One 2 GiB
 * buffer per rank serves both messages (about 4 GiB for the job).
 * Ranks other than 0 and 1 (if any) only take part in MPI_Init/Finalize.
 */
#include <mpi.h>
#include <stdlib.h>
#include <string.h>
#include "known.h"

#define N (1L << 28)   /* doubles: 2^31 bytes */

int main(int argc, char **argv)
{
    int rank, ok = 1;
    long long check = 0;
    MPI_Datatype big;
    MPI_Status st;
    MPI_Request req;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Type_contiguous((int)N, MPI_DOUBLE, &big);
    MPI_Type_commit(&big);
    if (rank <= 1) {
        double *buf = malloc(sizeof(double) * N);
        if (!buf) {
            known_result("big_message", rank, 0, 0);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
        for (long i = 0; i < N; i++)
            buf[i] = rank == 0 ? (double)(i % 1000) : -1.0;
        for (int msg = 0; msg < 2; msg++) {
            if (rank == 0) {
                buf[0] = buf[N - 1] = 7.0 + msg;
                if (msg == 0)
                    MPI_Send(buf, 1, big, 1, msg, MPI_COMM_WORLD);
                else
                    MPI_Send(buf, (int)N, MPI_DOUBLE, 1, msg, MPI_COMM_WORLD);
            } else {
                buf[0] = buf[N - 1] = -1.0;
                if (msg == 0) {
                    MPI_Recv(buf, 1, big, 0, msg, MPI_COMM_WORLD, &st);
                } else {
                    MPI_Irecv(buf, (int)N, MPI_DOUBLE, 0, msg, MPI_COMM_WORLD, &req);
                    MPI_Wait(&req, &st);
                }
                MPI_Count bytes = 0;
                MPI_Get_elements_x(&st, MPI_BYTE, &bytes);
                ok &= bytes == (MPI_Count)N * 8 && buf[0] == 7.0 + msg && buf[N - 1] == 7.0 + msg &&
                      buf[N / 2] == (double)((N / 2) % 1000);
                check += (long long)bytes + (long long)buf[N - 1];
            }
        }
        free(buf);
    }
    MPI_Type_free(&big);
    known_result("big_message", rank, check, ok);
    MPI_Finalize();
    return 0;
}
