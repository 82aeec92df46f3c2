/* miniapp.h: what the C mini-apps share: argument parsing that fails with one
 * line on every rank alike, order-independent checksums, rank order files,
 * block decomposition.
 *
 * RATIONALE: every rank parses the same argv, so every rank reaches the same
 * verdict on bad input; rank 0 alone prints it and all ranks leave through
 * MPI_Finalize with exit code 2. No MPI_Abort, no partial output. */
#ifndef MINIAPP_H
#define MINIAPP_H

#include <mpi.h>
#include <stdint.h>

/* miniapp_fail: print "<app>: error: <message>" on rank 0 of MPI_COMM_WORLD,
 * finalize MPI and exit(2) on every rank. Call it on every rank alike. */
void miniapp_fail(const char *app, const char *fmt, ...)
    __attribute__((noreturn, format(printf, 2, 3)));

/* miniapp_help: print `usage` on rank 0, finalize MPI and exit(0). */
void miniapp_help(const char *usage) __attribute__((noreturn));

/* miniapp_int: parse a decimal integer in [lo, hi] for option `opt`, or fail. */
long miniapp_int(const char *app, const char *opt, const char *text, long lo, long hi);

/* miniapp_double: parse a finite number >= lo for option `opt`, or fail. */
double miniapp_double(const char *app, const char *opt, const char *text, double lo);

/* miniapp_dims: parse "AxB" or "AxBxC" (each >= 1) into out[0..]; returns the
 * number of values (2 or 3), or fails naming `opt`. */
int miniapp_dims(const char *app, const char *opt, const char *text, int out[3]);

/* miniapp_value: argv[*i + 1] for option argv[*i], advancing *i, or fail. */
const char *miniapp_value(const char *app, int argc, char **argv, int *i);

/* miniapp_block: the block of n points that part c of p owns: the first
 * n % p parts get one more point. Sets *start and returns the length. */
int miniapp_block(int n, int p, int c, int *start);

/* miniapp_rank_order: read a rank order file (MPICH_RANK_ORDER style: ranks
 * separated by commas/blanks/newlines, "a-b" ranges, '#' comments), which
 * must be a permutation of 0..nranks-1, into order[0..nranks-1]: order[k] is
 * the application rank placed on slot k (the k-th launched process, world
 * rank k). Fails with one line on a missing file or a list that is not a
 * permutation. */
void miniapp_rank_order(const char *app, const char *path, int nranks, int *order);

/* Order-independent checksum of doubles: a sum modulo 2^64 of mixed
 * (bit pattern, global index) pairs, so any decomposition and any reduction
 * order give the same value for the same field. */
uint64_t miniapp_mix(double value, uint64_t global_index);

/* Fixed-point (2^-32) value of x, summed exactly in int64 across ranks. */
int64_t miniapp_fixed(double x);

/* miniapp_region: MPI_Pcontrol(1, name) / MPI_Pcontrol(-1, name), IPM style. */
#define MINIAPP_ENTER(name) MPI_Pcontrol(1, name)
#define MINIAPP_EXIT(name) MPI_Pcontrol(-1, name)

#endif
