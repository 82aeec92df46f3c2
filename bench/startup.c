/* startup: how long MPI_Init and MPI_Finalize take, against P (seed 003,
 * "Job Startup"; the driver reruns the kernel at each P of --ranks and keeps
 * the launcher's own wall time beside it).
 *
 * Method: each rank reads the wall clock just before and just after MPI_Init
 * and MPI_Finalize. Init times are reduced to min/avg/max over ranks with MPI;
 * Finalize times cannot be (MPI is gone), so every rank prints its own line
 * after MPI_Finalize and the driver reduces them. "launch_to_main" is the
 * latest rank's entry into main minus --launch-time (the driver's clock when
 * it started the launcher; same clock on one node). */
#include "common.h"

#include <stdio.h>

int main(int argc, char **argv)
{
    static const bench_common defaults = {0, 0, 0, 1, 0, 1, 0, 1};
    double launch_time = 0.0;
    bench_opt opts[] = {
        {"launch-time", BENCH_DOUBLE, &launch_time, "epoch seconds when the launcher started"},
        {0},
    };
    bench_init(&argc, &argv, "startup", &defaults, opts);
    bench_stats init = bench_stats_of(bench_init_seconds, MPI_COMM_WORLD);
    bench_stats entry = bench_stats_of(bench_entry_time, MPI_COMM_WORLD);
    bench_row_begin("init");
    bench_field_int("nranks", bench_size);
    bench_field_stats("init_s", init);
    if (launch_time > 0) {
        bench_field_num("launch_to_main_s", entry.max - launch_time);
        bench_field_num("first_main_s", entry.min - launch_time);
    }
    bench_row_end();
    int rank = bench_rank;
    double t0 = bench_epoch();
    bench_finish();
    double t = bench_epoch() - t0;
    /* One short line per rank, written with a single call so lines stay whole. */
    char line[160];
    int n = snprintf(line, sizeof line,
                     "{\"type\":\"row\",\"table\":\"finalize\",\"rank\":%d,\"finalize_s\":%.9g}\n",
                     rank, t);
    fwrite(line, 1, (size_t)n, stdout);
    fflush(stdout);
    return 0;
}
