/* jitter: many repetitions of a small MPI_Allreduce (seed 004, POP): the
 * distribution of its duration, how raggedly the ranks arrive at it, and the
 * time series. With a timing barrier before each allreduce (the "plus
 * barrier" mode, as POP's t_barrierf), late arrival is absorbed by the
 * barrier and the allreduce shows its own cost.
 *
 * Method: clocks are aligned to rank 0 first (each rank's offset from the
 * ping-pong with the smallest round trip, Cristian's method). Then per
 * repetition every rank records its entry time and its duration. Per
 * repetition: time = max over ranks of the duration (the collective is as
 * slow as its slowest rank), spread = latest entry - earliest entry. Per rank:
 * lateness = mean over repetitions of (its entry - earliest entry). */
#include "common.h"

#include <stdlib.h>

/* This rank's clock minus rank 0's, in seconds (0 on rank 0). */
static double jitter_clock_offset(int rounds)
{
    double offset = 0.0, best = 1e30;
    for (int peer = 1; peer < bench_size; peer++) {
        for (int i = 0; i < rounds; i++) {
            if (bench_rank == 0 && peer) {
                double t;
                MPI_Recv(&t, 1, MPI_DOUBLE, peer, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                t = MPI_Wtime();
                MPI_Send(&t, 1, MPI_DOUBLE, peer, 7, MPI_COMM_WORLD);
            } else if (bench_rank == peer) {
                double t0 = MPI_Wtime(), t_root;
                MPI_Send(&t0, 1, MPI_DOUBLE, 0, 7, MPI_COMM_WORLD);
                MPI_Recv(&t_root, 1, MPI_DOUBLE, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                double t1 = MPI_Wtime();
                if (t1 - t0 < best) { best = t1 - t0; offset = (t0 + t1) / 2 - t_root; }
            }
        }
    }
    return offset;
}

static void jitter_run(const char *mode, int with_barrier, int reps, int skip, long size,
                       double offset)
{
    int count = size / 8 > 0 ? (int)(size / 8) : 1;
    double *in = bench_buffer(sizeof(double) * count), *out = bench_buffer(sizeof(double) * count);
    double *enter = malloc(sizeof(double) * reps), *dur = malloc(sizeof(double) * reps);
    double *first = malloc(sizeof(double) * reps), *last = malloc(sizeof(double) * reps);
    double *slowest = malloc(sizeof(double) * reps);
    MPI_Barrier(MPI_COMM_WORLD);
    for (int i = 0; i < skip + reps; i++) {
        if (with_barrier) MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        MPI_Allreduce(in, out, count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        double t1 = MPI_Wtime();
        if (i >= skip) { enter[i - skip] = t0 - offset; dur[i - skip] = t1 - t0; }
    }
    MPI_Allreduce(enter, first, reps, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);
    MPI_Reduce(enter, last, reps, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    MPI_Reduce(dur, slowest, reps, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    double late = 0.0;
    for (int i = 0; i < reps; i++) late += enter[i] - first[i];
    late = late / reps * 1e6;
    double *lateness = malloc(sizeof(double) * bench_size);
    MPI_Gather(&late, 1, MPI_DOUBLE, lateness, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    for (int i = 0; i < reps; i++) { slowest[i] *= 1e6; last[i] = (last[i] - first[i]) * 1e6; }
    bench_row_begin("series");
    bench_field_str("mode", mode);
    bench_field_int("size", size);
    bench_field_nums("time_us", slowest, reps);
    bench_field_nums("spread_us", last, reps);
    bench_field_nums("rank_lateness_us", lateness, bench_size);
    bench_row_end();
    const char *what[2] = {"time_us", "spread_us"};
    double *series[2] = {slowest, last};
    for (int w = 0; w < 2; w++) {
        double mean = 0.0;
        for (int i = 0; i < reps; i++) mean += series[w][i] / reps;
        bench_row_begin("distribution");
        bench_field_str("mode", mode);
        bench_field_str("quantity", what[w]);
        bench_field_int("reps", reps);
        bench_field_num("mean", mean);
        bench_field_num("min", bench_percentile(series[w], reps, 0));
        bench_field_num("median", bench_percentile(series[w], reps, 50));
        bench_field_num("p90", bench_percentile(series[w], reps, 90));
        bench_field_num("p99", bench_percentile(series[w], reps, 99));
        bench_field_num("max", bench_percentile(series[w], reps, 100));
        bench_row_end();
    }
    free(in); free(out); free(enter); free(dur); free(first); free(last); free(slowest);
    free(lateness);
}

int main(int argc, char **argv)
{
    static const bench_common defaults = {8, 8, 8192, 2000, 100, 2000, 100, 1};
    const char *modes = "plain,barrier";
    int rounds = 20;
    bench_opt opts[] = {
        {"modes", BENCH_STRING, &modes, "plain (allreduce alone), barrier (timing barrier first)"},
        {"clock-rounds", BENCH_INT, &rounds, "ping-pongs per rank to align clocks"},
        {0},
    };
    bench_init(&argc, &argv, "jitter", &defaults, opts);
    const char *names[2] = {"plain", "barrier"};
    const char *bad = bench_unknown_word(modes, names, 2);
    if (bad) bench_die("--modes: unknown mode '%s'", bad);
    if (rounds < 1) bench_die("--clock-rounds must be at least 1");
    double offset = jitter_clock_offset(rounds);
    long size = bench_opts.min_size; /* one small size: this kernel is about repetition */
    for (int m = 0; m < 2; m++)
        if (bench_has_word(modes, names[m]))
            jitter_run(names[m], m == 1, bench_iters(size), bench_skip(size), size, offset);
    bench_finish();
    return 0;
}
