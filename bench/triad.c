/* triad: STREAM triad a[i] = b[i] + s*c[i] with 1, 2 .. N ranks of each node
 * running at once (seed 003, "Memory contention"): how the memory bandwidth
 * one rank gets falls as more ranks of its node compete for it.
 *
 * Method (STREAM's): three arrays of --length doubles per rank, first touched
 * by their rank; per active count k, the ranks with node-local rank < k run
 * `iters` triads between two barriers of the node, each timed alone, and keep
 * the best time; bandwidth = 24 bytes * length / best time (two loads and one
 * store of 8 bytes per element; write-allocate traffic not counted, as
 * STREAM). Idle ranks sleep in the barriers (bench_gentle_barrier), so they
 * take no core from the active ones; a sleeping rank can delay the end of a
 * barrier by up to one 50 us nap, which the node time includes.
 * Rows give min/avg/max per active rank, and the node bandwidth:
 * k * 24 * length / the best time from the first node barrier to the second
 * (all k triads done) on node 0. The result a[] is checked. */
#include "common.h"

#include <math.h>
#include <stdlib.h>

static void triad(double *restrict a, const double *restrict b, const double *restrict c,
                  double s, long n)
{
    for (long i = 0; i < n; i++) a[i] = b[i] + s * c[i];
}

int main(int argc, char **argv)
{
    static const bench_common defaults = {0, 0, 0, 10, 1, 10, 1, 1};
    long length = 4L << 20;
    const char *counts_text = NULL;
    bench_opt opts[] = {
        {"length", BENCH_SIZE, &length, "doubles per array (three arrays per rank)"},
        {"ranks-per-node", BENCH_STRING, &counts_text, "active ranks per node (default 1..N)"},
        {0},
    };
    bench_init(&argc, &argv, "triad", &defaults, opts);
    if (length < 1) bench_die("--length must be at least 1");
    int counts[256], ncounts = 0, node_ranks = bench_node.local_size;
    MPI_Allreduce(MPI_IN_PLACE, &node_ranks, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (counts_text) {
        ncounts = bench_parse_ints(counts_text, counts, 256);
        if (ncounts < 0) bench_die("--ranks-per-node: cannot parse '%s'", counts_text);
        for (int i = 0; i < ncounts; i++)
            if (counts[i] < 1 || counts[i] > node_ranks)
                bench_die("--ranks-per-node: %d is not between 1 and %d", counts[i], node_ranks);
    } else {
        for (int k = 1; k <= node_ranks && k <= 256; k++) counts[ncounts++] = k;
    }
    double *a = bench_buffer(sizeof(double) * length), *b = bench_buffer(sizeof(double) * length);
    double *c = bench_buffer(sizeof(double) * length);
    const double s = 3.0;
    for (long i = 0; i < length; i++) { b[i] = 1.0 + (double)(i % 7); c[i] = 0.5; }
    for (int k = 0; k < ncounts; k++) {
        int active = bench_node.local_rank < counts[k];
        double best = 1e30, best_phase = 1e30;
        MPI_Barrier(MPI_COMM_WORLD);
        for (int it = 0; it < bench_opts.skip + bench_opts.iters; it++) {
            /* every active rank of the node starts each repetition together */
            bench_gentle_barrier(bench_node.local, active);
            double t0 = MPI_Wtime(), t = 0.0;
            if (active) {
                triad(a, b, c, s, length);
                t = MPI_Wtime() - t0;
            }
            bench_gentle_barrier(bench_node.local, active);
            double phase = MPI_Wtime() - t0;
            if (it >= bench_opts.skip && t < best) best = t;
            if (it >= bench_opts.skip && phase < best_phase) best_phase = phase;
        }
        int ok = 1;
        for (long i = 0; active && i < length; i++) ok &= fabs(a[i] - (b[i] + s * c[i])) < 1e-12;
        MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
        double bw = active ? 24.0 * length / best / 1e6 : 0.0;
        bench_stats st = bench_stats_active(bw, active, MPI_COMM_WORLD);
        /* world rank 0 is node 0's first rank: its phase time is node 0's */
        double aggregate = 24.0 * length * counts[k] / best_phase / 1e6;
        bench_row_begin("triad");
        bench_field_int("ranks_per_node", counts[k]);
        bench_field_int("length", length);
        bench_field_stats("bandwidth_MBps", st);
        bench_field_num("node_MBps", aggregate);
        bench_field_int("valid", ok);
        bench_row_end();
    }
    free(a); free(b); free(c);
    bench_finish();
    return 0;
}
