/*
 * Shared by the exact-count test programs (tests/test_runtime_*.py): the
 * result line every rank prints, and the line that reports how many times a
 * polling call ran.
 *
 * RATIONALE: each rank prints its own line (the test sorts them) instead of
 * gathering results to rank 0, so reporting adds no MPI traffic that the
 * expected profile would have to account for. Polling loops (MPI_Test,
 * MPI_Iprobe, MPI_Waitsome...) run a number of times only the program can
 * know; it reports that number on stderr, so stdout stays identical from run
 * to run and the test can still assert the exact call count.
 */
#ifndef MPISCOPE_TESTS_KNOWN_H
#define MPISCOPE_TESTS_KNOWN_H

#include <stdio.h>

/* The deterministic result line of one rank: program, rank, checksum, verdict. */
static inline void known_result(const char *prog, int rank, long long check, int ok)
{
    printf("%s rank %d checksum %lld %s\n", prog, rank, check, ok ? "ok" : "FAILED");
    fflush(stdout);
}

/* How many times this rank called a polling function `func` (on stderr). */
static inline void known_polls(int rank, const char *func, int calls)
{
    fprintf(stderr, "polls rank %d %s %d\n", rank, func, calls);
    fflush(stderr);
}

/* Value i of the buffer a world rank sends with tag: distinct per (rank, tag, i). */
static inline int known_val(int rank, int tag, int i)
{
    return rank * 100000 + tag * 1000 + i;
}

#endif
