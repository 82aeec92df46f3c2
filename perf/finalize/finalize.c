/*
 * finalize.c - how long MPI_Finalize takes, so that the time the runtime adds
 * by writing the profile can be measured (perf/run_finalize.sh runs it with
 * and without libmpiscope.so preloaded).
 *
 * Before finalizing, each rank makes a stencil-like profile: messages to 4
 * neighbours on a ring (distance 1 and 2, both ways) in two Pcontrol regions,
 * an Allreduce and a Barrier per step. Then every rank times its own
 * MPI_Finalize (CLOCK_MONOTONIC) and prints "finalize <rank> <seconds>".
 */
#include <mpi.h>
#include <stdio.h>
#include <time.h>

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int main(int argc, char **argv)
{
    int rank, size;
    double out[4][64], in[4][64], x = 1.0, y;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int nb[4] = {(rank + 1) % size, (rank - 1 + size) % size, (rank + 2) % size, (rank - 2 + size) % size};
    for (int i = 0; i < 4; i++)
        for (int k = 0; k < 64; k++)
            out[i][k] = rank + k;
    for (int step = 0; step < 10; step++) {
        MPI_Request req[8];
        MPI_Pcontrol(1, "halo");
        for (int i = 0; i < 4; i++) {
            MPI_Irecv(in[i], 16 << (i % 3), MPI_DOUBLE, nb[i ^ 1], i, MPI_COMM_WORLD, &req[i]);
            MPI_Isend(out[i], 16 << (i % 3), MPI_DOUBLE, nb[i], i, MPI_COMM_WORLD, &req[4 + i]);
        }
        MPI_Waitall(8, req, MPI_STATUSES_IGNORE);
        MPI_Pcontrol(-1, "halo");
        MPI_Pcontrol(1, "reduce");
        MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Pcontrol(-1, "reduce");
    }
    double t0 = now();
    MPI_Finalize();
    printf("finalize %d %.6f\n", rank, now() - t0);
    return 0;
}
