/* common.h: what every mpiscope benchmark kernel shares (OSU's osu_util, slimmed).
 *
 * A kernel is one small C program:
 *   static bench_opt my_opts[] = {{"pairs", BENCH_INT, &pairs, "concurrent pairs"}, {0}};
 *   bench_init(&argc, &argv, "p2p", &common_defaults, my_opts);
 *   ... timed loops, results reduced with bench_stats_of ...
 *   bench_row_begin("latency"); bench_field_int("size", n); ...; bench_row_end();
 *   bench_finish();
 *
 * Output protocol (read by src/mpiscope/bench/driver.py): rank 0 writes one
 * JSON object per line on stdout, flushed at once so that a run killed half
 * way still leaves every finished row behind:
 *   {"type":"meta", ...}    once, first: MPI library, ranks, nodes, options
 *   {"type":"row","table":T, ...}   one measurement
 *   {"type":"note","text":...}      a fact the reader must know (e.g. no off-node pairs)
 *   {"type":"error","message":...}  bad input found by the kernel; exit status 2
 *   {"type":"end"}          last: the run completed
 */
#ifndef MPISCOPE_BENCH_COMMON_H
#define MPISCOPE_BENCH_COMMON_H

#include <mpi.h>
#include <stddef.h>

/* Options every kernel understands; a kernel passes its own defaults. */
typedef struct bench_common {
    long min_size, max_size;  /* message sizes double from min to max (min 0: 0,1,2,4..) */
    long large_size;          /* above this, iters_large/skip_large apply */
    int iters, skip;          /* timed and warm-up iterations per size */
    int iters_large, skip_large;
    int batches;              /* timed iterations split into this many batches (0 = 1) */
} bench_common;

typedef enum { BENCH_INT, BENCH_SIZE, BENCH_DOUBLE, BENCH_STRING, BENCH_FLAG } bench_opt_kind;

/* One kernel-specific option: --name VALUE (BENCH_FLAG: --name, no value). */
typedef struct bench_opt {
    const char *name;
    bench_opt_kind kind;
    void *dest; /* int*, long*, double*, const char**, int* */
    const char *help;
} bench_opt;

/* Which ranks share a node (MPI_Comm_split_type SHARED). */
typedef struct bench_nodes {
    MPI_Comm local;     /* the ranks of my node */
    int local_rank, local_size;
    int node;           /* my node's index, 0..count-1, numbered by lowest world rank */
    int count;          /* number of nodes */
    int *node_of;       /* node_of[world rank], every rank holds all */
} bench_nodes;

extern bench_common bench_opts;   /* the parsed common options (read-only after init) */
extern bench_nodes bench_node;    /* the node table */
extern int bench_rank, bench_size; /* in MPI_COMM_WORLD */
extern double bench_entry_time;   /* wall clock (epoch s) when bench_init was entered */
extern double bench_init_seconds; /* how long MPI_Init alone took on this rank */
extern long bench_rss_at_init;    /* VmRSS (KiB) right after MPI_Init */

/* bench_init: MPI_Init, parse argv against the common options and `opts`
 * (a {0}-terminated table, may be NULL), build the node table and print the
 * meta line. Bad options end the run through bench_die. */
void bench_init(int *argc, char ***argv, const char *kernel, const bench_common *defaults,
                bench_opt *opts);

/* bench_finish: print the end line and MPI_Finalize. */
void bench_finish(void);

/* bench_die: every rank of MPI_COMM_WORLD calls it with the same message
 * (a consistent decision, e.g. bad options): rank 0 prints an error line,
 * all finalize and exit with status 2. */
void bench_die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

/* bench_note: rank 0 prints a note line. */
void bench_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* bench_gentle_barrier: a barrier over comm in which ranks with active == 0
 * sleep (50 us naps between MPI_Test) instead of spinning; active ranks wait
 * as usual. Every rank of comm calls it. */
void bench_gentle_barrier(MPI_Comm comm, int active);

/* bench_sizes: the message sizes from the common options; returns how many,
 * *out is malloc'ed. */
int bench_sizes(long **out);

/* bench_iters / bench_skip: iteration counts for one message size (fewer for large). */
int bench_iters(long size);
int bench_skip(long size);

/* bench_batches: how many batches `iters` timed iterations are split into (>= 1,
 * never more than iters). A kernel that batches reports the mean over all timed
 * iterations (OSU's number) and the fastest batch's mean (the least disturbed
 * by other load). */
int bench_batches(int iters);

/* bench_buffer: a page-aligned buffer of n bytes (at least 1), every page written
 * with a non-zero byte (common.c says why). */
void *bench_buffer(size_t n);

/* bench_touch: write `c` over the first n bytes of a buffer, as OSU does to its
 * send and receive buffers before each message size (so both are resident and
 * in the state an application's buffers are in, not freshly zeroed pages). */
void bench_touch(void *buf, size_t n, int c);

/* bench_timer: the timed iterations of one message size, each timed on its own
 * (OSU 7's way: MPI_Wtime around every iteration, summed). total is OSU's sum;
 * best is the fastest of `batches` equal batches' mean per iteration (the least
 * disturbed by other load). Iterations beyond batches * per only count in total. */
typedef struct bench_timer {
    int per, n, count;
    double total, batch, best;
} bench_timer;

static inline void bench_timer_start(bench_timer *t, int iters)
{
    int b = bench_batches(iters);
    t->per = iters / b;
    t->n = t->count = 0;
    t->total = t->batch = 0.0;
    t->best = 1e300;
}

static inline void bench_timer_add(bench_timer *t, double seconds)
{
    t->total += seconds;
    t->batch += seconds;
    t->count++;
    if (++t->n == t->per) {
        if (t->batch / t->per < t->best) t->best = t->batch / t->per;
        t->batch = 0.0;
        t->n = 0;
    }
}

/* Mean seconds per timed iteration (OSU's number). */
static inline double bench_timer_mean(const bench_timer *t)
{
    return t->count ? t->total / t->count : 0.0;
}

/* bench_parse_ints: "2,4,8" -> out[]; returns the count, or -1 if it does not parse. */
int bench_parse_ints(const char *text, int *out, int max);

/* bench_has_word: is `word` one of the comma-separated words of `list`? */
int bench_has_word(const char *list, const char *word);

/* bench_unknown_word: the first word of the comma-separated `list` that is not
 * one of known[0..n-1], or NULL if all are known (static storage). */
const char *bench_unknown_word(const char *list, const char *const *known, int n);

/* Cross-rank statistics of one per-rank number. Collective over comm; the
 * result is valid on the comm's rank 0. */
typedef struct bench_stats { double min, avg, max; } bench_stats;
bench_stats bench_stats_of(double value, MPI_Comm comm);
/* The same over the ranks of comm whose `active` is non-zero (others pass anything). */
bench_stats bench_stats_active(double value, int active, MPI_Comm comm);

/* bench_epoch: wall-clock seconds since 1970 (comparable across processes of a node). */
double bench_epoch(void);

/* bench_rss_kib: a field of /proc/self/status in KiB ("VmRSS", "VmHWM"), -1 if absent. */
long bench_rss_kib(const char *field);

/* bench_percentile: the p-th percentile (0..100, nearest rank) of v[0..n-1];
 * sorts v in place. */
double bench_percentile(double *v, int n, double p);

/* Rows: rank 0 builds one JSON line; the calls are no-ops on other ranks. */
void bench_row_begin(const char *table);
void bench_field_int(const char *name, long value);
void bench_field_num(const char *name, double value);
void bench_field_str(const char *name, const char *value);
void bench_field_stats(const char *name, bench_stats s); /* name_min, name_avg, name_max */
void bench_field_nums(const char *name, const double *v, int n);
void bench_row_end(void);

#endif
