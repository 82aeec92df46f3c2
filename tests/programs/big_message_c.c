/*
 * One large-count message of more than 2^31 elements (MPI-4 MPI_Send_c /
 * MPI_Recv_c; tests/runtime/counting/test_runtime_mpi4.py): rank 0 sends rank 1 2^31 + 8
 * MPI_BYTEs, a count no int can hold. Rank 1 checks MPI_Get_count_c. One
 * 2 GiB + 8 B buffer per rank, freed at once. Other ranks only take part in
 * MPI_Init/Finalize. Without MPI-4 (Open MPI 4.1) it says so and exits 0.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include "known.h"

#if MPI_VERSION >= 4

#define N (((MPI_Count)1 << 31) + 8)

int main(int argc, char **argv)
{
    int rank, ok = 1;
    long long check = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank <= 1) {
        unsigned char *buf = malloc((size_t)N);
        if (!buf) {
            known_result("big_message_c", rank, 0, 0);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
        for (MPI_Count i = 0; i < N; i += 4096)
            buf[i] = rank == 0 ? (unsigned char)(i / 4096) : 0;
        buf[N - 1] = rank == 0 ? 0xAB : 0;
        if (rank == 0) {
            MPI_Send_c(buf, N, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
        } else {
            MPI_Status st;
            MPI_Count n = 0;
            MPI_Recv_c(buf, N, MPI_BYTE, 0, 0, MPI_COMM_WORLD, &st);
            MPI_Get_count_c(&st, MPI_BYTE, &n);
            ok &= n == N && buf[N - 1] == 0xAB && buf[N - 4104] == (unsigned char)((N - 4104) / 4096);
            check = (long long)n;
        }
        free(buf);
    }
    known_result("big_message_c", rank, check, ok);
    MPI_Finalize();
    return 0;
}

#else

int main(void)
{
    printf("big_message_c: this MPI (MPI_VERSION %d) declares no MPI-4 functions\n", MPI_VERSION);
    return 0;
}

#endif
