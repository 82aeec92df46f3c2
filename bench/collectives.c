/* collectives: barrier, bcast, reduce, allreduce, allgather and alltoall over
 * message sizes and communicator sizes 2, 4, 8 .. P (seed 003, "MPI
 * Collectives" and "MPI_Barrier scaling"): does the time grow as log P or worse?
 *
 * Method (the OSU micro-benchmarks', osu_allreduce and siblings): for each
 * communicator size n, the first n world ranks form a communicator; per size,
 * a barrier, then `skip` untimed and `iters` timed calls, each call timed on
 * its own and followed by an untimed barrier (barrier itself: calls back to
 * back, as osu_barrier); each rank's time per call = sum / iters; rows give
 * min/avg/max over the n ranks (avg: OSU's "Avg Latency"), and the same for
 * each rank's fastest of `batches` equal batches (time_best_us). Iteration
 * counts are OSU's: 1000/100, 100/10 above 8 KiB. Separate send and receive
 * buffers, page-aligned and written before timing. `size` is bytes per rank
 * (per peer for allgather/alltoall); reductions use MPI_FLOAT/MPI_SUM (as
 * OSU 5-6, `-T mpi_float` in OSU 7), so sizes below 4 bytes are skipped for
 * them; barrier is measured once per communicator size. */
#include "common.h"

#include <stdlib.h>
#include <string.h>

typedef void (*coll_fn)(char *send, char *recv, long size, MPI_Comm comm);

static void coll_barrier(char *s, char *r, long n, MPI_Comm c) { (void)s; (void)r; (void)n; MPI_Barrier(c); }
static void coll_bcast(char *s, char *r, long n, MPI_Comm c) { (void)r; MPI_Bcast(s, (int)n, MPI_BYTE, 0, c); }
static void coll_reduce(char *s, char *r, long n, MPI_Comm c)
{
    MPI_Reduce(s, r, (int)(n / 4), MPI_FLOAT, MPI_SUM, 0, c);
}
static void coll_allreduce(char *s, char *r, long n, MPI_Comm c)
{
    MPI_Allreduce(s, r, (int)(n / 4), MPI_FLOAT, MPI_SUM, c);
}
static void coll_allgather(char *s, char *r, long n, MPI_Comm c)
{
    MPI_Allgather(s, (int)n, MPI_BYTE, r, (int)n, MPI_BYTE, c);
}
static void coll_alltoall(char *s, char *r, long n, MPI_Comm c)
{
    MPI_Alltoall(s, (int)n, MPI_BYTE, r, (int)n, MPI_BYTE, c);
}

static const struct { const char *name; coll_fn fn; long min_size; } coll_ops[] = {
    {"barrier", coll_barrier, 0}, {"bcast", coll_bcast, 1}, {"reduce", coll_reduce, 4},
    {"allreduce", coll_allreduce, 4}, {"allgather", coll_allgather, 1},
    {"alltoall", coll_alltoall, 1},
};
enum { COLL_NOPS = sizeof coll_ops / sizeof coll_ops[0] };

/* Mean seconds per call of one op on comm (members only), OSU's way; *best
 * gets the fastest batch's mean. */
static double coll_time(coll_fn fn, char *send, char *recv, long size, MPI_Comm comm,
                        double *best)
{
    int iters = bench_iters(size), skip = bench_skip(size);
    /* osu_barrier times barriers back to back; the others separate calls by one */
    int separate = fn != coll_barrier;
    bench_timer t;
    bench_timer_start(&t, iters);
    MPI_Barrier(comm);
    for (int i = 0; i < skip + iters; i++) {
        double t0 = MPI_Wtime();
        fn(send, recv, size, comm);
        double dt = MPI_Wtime() - t0;
        if (separate) MPI_Barrier(comm);
        if (i >= skip) bench_timer_add(&t, dt);
    }
    *best = t.best;
    return bench_timer_mean(&t);
}

int main(int argc, char **argv)
{
    /* OSU's collective counts: 1000 timed after 100 warm-up, 100/10 above 8 KiB */
    static const bench_common defaults = {0, 1L << 20, 8192, 1000, 100, 100, 10, 5};
    const char *ops = "barrier,bcast,reduce,allreduce,allgather,alltoall";
    const char *comm_sizes_text = NULL;
    bench_opt opts[] = {
        {"ops", BENCH_STRING, &ops, "collectives to measure"},
        {"comm-sizes", BENCH_STRING, &comm_sizes_text, "communicator sizes (default 2,4,..,P)"},
        {0},
    };
    bench_init(&argc, &argv, "collectives", &defaults, opts);
    int comm_sizes[64], ncomm = 0;
    if (comm_sizes_text) {
        ncomm = bench_parse_ints(comm_sizes_text, comm_sizes, 64);
        if (ncomm < 0) bench_die("--comm-sizes: cannot parse '%s'", comm_sizes_text);
        for (int i = 0; i < ncomm; i++)
            if (comm_sizes[i] < 1 || comm_sizes[i] > bench_size)
                bench_die("--comm-sizes: %d is not between 1 and %d ranks", comm_sizes[i],
                          bench_size);
    } else {
        for (int n = 2; n < bench_size; n *= 2) comm_sizes[ncomm++] = n;
        comm_sizes[ncomm++] = bench_size;
    }
    const char *names[COLL_NOPS];
    for (int o = 0; o < COLL_NOPS; o++) names[o] = coll_ops[o].name;
    const char *bad = bench_unknown_word(ops, names, COLL_NOPS);
    if (bad) bench_die("--ops: unknown collective '%s'", bad);
    long *sizes;
    int nsizes = bench_sizes(&sizes);
    size_t bytes = (size_t)bench_opts.max_size * (size_t)bench_size;
    char *send = bench_buffer(bytes), *recv = bench_buffer(bytes);
    for (int c = 0; c < ncomm; c++) {
        int member = bench_rank < comm_sizes[c];
        MPI_Comm comm;
        MPI_Comm_split(MPI_COMM_WORLD, member, bench_rank, &comm);
        for (int o = 0; o < COLL_NOPS; o++) {
            if (!bench_has_word(ops, coll_ops[o].name)) continue;
            for (int s = 0; s < nsizes; s++) {
                long size = sizes[s];
                if (o == 0 && s > 0) break; /* barrier has no size */
                if (o > 0 && size < coll_ops[o].min_size) continue;
                bench_gentle_barrier(MPI_COMM_WORLD, member);
                double best = 0.0;
                double t = member ? coll_time(coll_ops[o].fn, send, recv, size, comm, &best) : 0.0;
                bench_gentle_barrier(MPI_COMM_WORLD, member);
                bench_stats st = bench_stats_active(t * 1e6, member, MPI_COMM_WORLD);
                bench_stats st_best = bench_stats_active(best * 1e6, member, MPI_COMM_WORLD);
                bench_row_begin("collectives");
                bench_field_str("op", coll_ops[o].name);
                bench_field_int("comm_size", comm_sizes[c]);
                bench_field_int("size", o == 0 ? 0 : size);
                bench_field_stats("time_us", st);
                bench_field_stats("time_best_us", st_best);
                bench_row_end();
            }
        }
        MPI_Comm_free(&comm);
    }
    free(send);
    free(recv);
    free(sizes);
    bench_finish();
    return 0;
}
