/*
 * Point-to-point messages of a known size, split or packed, for the truth benchmark
 * (perf/truth) and the message rules' tests (small-messages, eager-limit).
 *   truth_msgs STEPS K BYTES split|packed blocking|nonblocking [LATE_USEC [WORK_USEC]]
 * Each step every rank spins WORK_USEC microseconds (odd ranks LATE_USEC more: planted
 * waiting, wall-clock timed so the lateness does not depend on the machine's load), then
 * exchanges with both ring neighbours: "split" sends K messages of BYTES to each, "packed"
 * one message of K x BYTES (the same bytes). "blocking": MPI_Sendrecv per message, first to
 * the right, then to the left; "nonblocking": every MPI_Irecv, every MPI_Isend, one
 * MPI_Waitall. Rank 0 prints "truth_msgs steps=S messages=M bytes=B check=C seconds=T",
 * T its time in the steps (MPI_Wtime): what packing gains, with or without a profiler.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pace.h"

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc < 6) {
        if (rank == 0)
            fprintf(stderr, "usage: truth_msgs STEPS K BYTES split|packed blocking|nonblocking "
                            "[LATE_USEC [WORK_USEC]]\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int steps = atoi(argv[1]), k = atoi(argv[2]);
    long bytes = atol(argv[3]);
    int packed = !strcmp(argv[4], "packed"), blocking = !strcmp(argv[5], "blocking");
    double late = argc > 6 ? atof(argv[6]) * 1e-6 : 0.0, busy = argc > 7 ? atof(argv[7]) * 1e-6 : 0.0;
    int nmsg = packed ? 1 : k;
    long len = packed ? bytes * k : bytes;
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    char *out = malloc((size_t)(2 * k) * (size_t)bytes + 1), *in = malloc((size_t)(2 * k) * (size_t)bytes + 1);
    MPI_Request *req = malloc(sizeof *req * (size_t)(4 * nmsg));
    memset(out, rank + 1, (size_t)(2 * k) * (size_t)bytes + 1);
    long check = 0, msgs = 0;
    double t0 = MPI_Wtime();
    for (int s = 0; s < steps; s++) {
        spin(busy + (rank % 2 ? late : 0.0));
        for (int d = 0; d < 2; d++) {          /* d 0: to the right; 1: to the left */
            int to = d ? left : right, from = d ? right : left;
            for (int m = 0; m < nmsg; m++) {
                char *o = out + (size_t)(d * nmsg + m) * (size_t)len;
                char *i = in + (size_t)(d * nmsg + m) * (size_t)len;
                if (blocking)
                    MPI_Sendrecv(o, (int)len, MPI_CHAR, to, m, i, (int)len, MPI_CHAR, from, m,
                                 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                else {
                    MPI_Irecv(i, (int)len, MPI_CHAR, from, d * nmsg + m, MPI_COMM_WORLD,
                              &req[2 * (d * nmsg + m)]);
                    MPI_Isend(o, (int)len, MPI_CHAR, to, d * nmsg + m, MPI_COMM_WORLD,
                              &req[2 * (d * nmsg + m) + 1]);
                }
                msgs++;
            }
        }
        if (!blocking)
            MPI_Waitall(4 * nmsg, req, MPI_STATUSES_IGNORE);
        check += in[0] + in[(size_t)(2 * nmsg) * (size_t)len - 1];
    }
    double seconds = MPI_Wtime() - t0;
    long all = 0;
    MPI_Allreduce(&check, &all, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("truth_msgs steps=%d messages=%ld bytes=%ld check=%ld seconds=%.6f\n", steps, msgs,
               len, all, seconds);
    free(out);
    free(in);
    free(req);
    MPI_Finalize();
    return 0;
}
