/*
 * Planted phases in time, for the timeline (runtime bins, report, diagnose).
 *   phases STEPS STEP_MS [bursts EVERY BURST_MS] [drift GROW_MS] [lag LAG_MS] [start INIT_MS]
 *          [end END_MS] [jitter JIT_MS]
 * Every step each rank sleeps STEP_MS milliseconds, then all ranks meet in
 * MPI_Allreduce (8 bytes). Options, combinable:
 *   bursts: every EVERY-th step rank 0 sleeps BURST_MS more (its "output"),
 *           so the others wait that long in the step's MPI_Allreduce;
 *   drift:  every rank but the last sleeps GROW_MS x step less each step
 *           (never below 0) while the last keeps STEP_MS: the steps keep
 *           their length and the others wait GROW_MS x step ms more each
 *           step for the last rank, a share of the time that grows
 *           linearly with the run (the last rank falls behind more and
 *           more);
 *   lag:    the last rank sleeps LAG_MS more every step (an imbalance that
 *           stays the same: steady in time);
 *   start:  before the steps rank 0 sleeps INIT_MS (reads its "input") while
 *           the others wait in an MPI_Bcast of 1 KiB;
 *   end:    after the steps rank 0 sleeps END_MS (writes its "output") while
 *           the others wait in an MPI_Bcast of 1 KiB;
 *   jitter: at about one step in six, chosen pseudo-randomly (the same on
 *           every rank, no period), one pseudo-random rank sleeps JIT_MS more:
 *           the others' time in that step's MPI_Allreduce jumps (noise).
 * Sleeps, not spins, so oversubscribed ranks keep the planted times. One
 * MPI_Allreduce at the end checks that every rank ran every step. With
 * bursts, rank 0 prints the period the bursts really had (the mean time from
 * one burst's start to the next's, MPI_Wtime): on a loaded machine each sleep
 * lasts longer than asked.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pace.h"

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int steps = argc > 1 ? atoi(argv[1]) : 20;
    double step_ms = argc > 2 ? atof(argv[2]) : 20;
    int every = 0;
    double burst_ms = 0, grow_ms = 0, lag_ms = 0, init_ms = 0, end_ms = 0, jit_ms = 0;
    for (int i = 3; i < argc; i++) {
        if (!strcmp(argv[i], "bursts") && i + 2 < argc) {
            every = atoi(argv[i + 1]);
            burst_ms = atof(argv[i + 2]);
            i += 2;
        } else if (!strcmp(argv[i], "drift") && i + 1 < argc) {
            grow_ms = atof(argv[++i]);
        } else if (!strcmp(argv[i], "lag") && i + 1 < argc) {
            lag_ms = atof(argv[++i]);
        } else if (!strcmp(argv[i], "start") && i + 1 < argc) {
            init_ms = atof(argv[++i]);
        } else if (!strcmp(argv[i], "end") && i + 1 < argc) {
            end_ms = atof(argv[++i]);
        } else if (!strcmp(argv[i], "jitter") && i + 1 < argc) {
            jit_ms = atof(argv[++i]);
        }
    }
    if (init_ms > 0) {
        char input[1024] = {0};
        if (rank == 0)
            nap_ms(init_ms);
        MPI_Bcast(input, (int)sizeof input, MPI_CHAR, 0, MPI_COMM_WORLD);
    }
    long done = 0, total = 0, one = 1, sum = 0;
    double first = 0, last = 0;
    int bursts = 0;
    unsigned noise = 12345u;
    for (int s = 0; s < steps; s++) {
        double ms = step_ms;
        noise = noise * 1103515245u + 12345u;
        if (jit_ms > 0 && (noise >> 16) % 6 == 0 && rank == (int)((noise >> 8) % (unsigned)size))
            ms += jit_ms;
        if (rank == 0 && every > 0 && s % every == every - 1) {
            ms += burst_ms;
            last = MPI_Wtime();
            first = bursts++ ? first : last;
        }
        if (rank != size - 1)
            ms = ms - grow_ms * s > 0 ? ms - grow_ms * s : 0;
        else
            ms += lag_ms;
        nap_ms(ms);
        MPI_Allreduce(&one, &sum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
        done++;
    }
    if (end_ms > 0) {
        char output[1024] = {0};
        if (rank == 0)
            nap_ms(end_ms);
        MPI_Bcast(output, (int)sizeof output, MPI_CHAR, 0, MPI_COMM_WORLD);
    }
    MPI_Allreduce(&done, &total, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("phases steps=%d total=%ld\n", steps, total);
    if (rank == 0 && bursts > 1)
        printf("phases burst_period_ms=%.3f bursts=%d\n", 1e3 * (last - first) / (bursts - 1), bursts);
    MPI_Finalize();
    return 0;
}
