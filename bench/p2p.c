/* p2p: point-to-point latency and bandwidth between pairs of ranks on one node
 * and on different nodes (from the node table), with 1, 2, 4 .. K pairs at
 * once to expose memory-bus / link / switch contention (seed 003, "Colony
 * switch"), by the OSU micro-benchmarks' methods:
 *
 *   latency  ping-pong (osu_latency): per size, a barrier, `skip` untimed round
 *            trips, then `iters` timed ones, each timed on its own on the
 *            pinging rank; latency = sum / (2 * iters).
 *   bw       windowed unidirectional bandwidth (osu_bw): per iteration the
 *            sender posts `window` MPI_Isend, waits for all, then receives a
 *            4-byte acknowledgement; bandwidth = size * window * iters / sum of
 *            the sender's iteration times.
 *   bibw     bidirectional (osu_bibw): both ranks post `window` MPI_Irecv and
 *            `window` MPI_Isend and wait for all; 2 * size * window * iters / sum.
 *   mbw_mr   multi-pair bandwidth and message rate (osu_mbw_mr): every active
 *            pair runs the bw iteration at once, after a barrier of the active
 *            ranks per iteration; aggregate = pairs * size * window * iters /
 *            the first pair's sum, messages/s = aggregate / size.
 *
 * As in OSU, every rank sends from one page-aligned buffer and receives into
 * another (an application's buffers; one buffer for both measured 1.4-5x too
 * slow above 256 KiB on shared memory), and both are written over before each
 * size. Iteration counts are OSU's: 10000/100 (1000/10 above 8 KiB) for
 * latency, 100/10 (20/2 above 8 KiB) for the bandwidths, except mbw_mr which
 * (as osu_mbw_mr) uses 100/10 at every size. Rows give min/avg/max over the
 * concurrent pairs (one pair: OSU's number) and the fastest batch (*_best)
 * beside OSU's mean over all iterations. */
#include "common.h"

#include <stdio.h>
#include <stdlib.h>

/* pair_first[i] pings pair_second[i]. */
typedef struct pairs { int n; int *first, *second; } pairs;

/* What this rank does in one run with `active` pairs. */
typedef struct role {
    int peer;     /* the other rank of my pair, -1 if I am idle */
    int first;    /* 1 on the pinging / sending rank */
    int leader;   /* 1 on the first pair's first rank (OSU's rank 0 for mbw_mr) */
    MPI_Comm active_comm; /* the active ranks (MPI_COMM_NULL if idle) */
} role;

typedef struct p2p_opts {
    int window, bw_iters, bw_skip, bw_iters_large, bw_skip_large;
} p2p_opts;

static p2p_opts p2p;
static char *p2p_send, *p2p_recv, p2p_ack[4];
static MPI_Request *p2p_reqs;

enum { T_LATENCY, T_BW, T_BIBW, T_MBW_MR, T_COUNT };
static const char *const p2p_tests[T_COUNT] = {"latency", "bw", "bibw", "mbw_mr"};

/* Pairs of ranks on the same node: consecutive ranks of each node. */
static pairs p2p_on_node(void)
{
    pairs p = {0, malloc(sizeof(int) * bench_size), malloc(sizeof(int) * bench_size)};
    for (int node = 0; node < bench_node.count; node++) {
        int waiting = -1;
        for (int r = 0; r < bench_size; r++) {
            if (bench_node.node_of[r] != node) continue;
            if (waiting < 0) { waiting = r; continue; }
            p.first[p.n] = waiting; p.second[p.n++] = r; waiting = -1;
        }
    }
    return p;
}

/* Pairs across nodes: the k-th rank of node 2m with the k-th rank of node 2m+1. */
static pairs p2p_off_node(void)
{
    pairs p = {0, malloc(sizeof(int) * bench_size), malloc(sizeof(int) * bench_size)};
    for (int node = 0; node + 1 < bench_node.count; node += 2) {
        int a = 0, b = 0;
        for (;;) {
            while (a < bench_size && bench_node.node_of[a] != node) a++;
            while (b < bench_size && bench_node.node_of[b] != node + 1) b++;
            if (a >= bench_size || b >= bench_size) break;
            p.first[p.n] = a++; p.second[p.n++] = b++;
        }
    }
    return p;
}

static int p2p_iters(int test, long size)
{
    if (test == T_LATENCY) return bench_iters(size);
    if (test == T_MBW_MR || size <= bench_opts.large_size) return p2p.bw_iters;
    return p2p.bw_iters_large;
}

static int p2p_skip(int test, long size)
{
    if (test == T_LATENCY) return bench_skip(size);
    if (test == T_MBW_MR || size <= bench_opts.large_size) return p2p.bw_skip;
    return p2p.bw_skip_large;
}

/* One iteration of `test` on this rank; returns its duration on the first rank. */
static double p2p_iteration(int test, const role *me, int size)
{
    MPI_Comm w = MPI_COMM_WORLD;
    int n = p2p.window;
    if (test == T_MBW_MR) MPI_Barrier(me->active_comm);
    double t0 = MPI_Wtime();
    if (test == T_LATENCY) {
        if (me->first) {
            MPI_Send(p2p_send, size, MPI_BYTE, me->peer, 1, w);
            MPI_Recv(p2p_recv, size, MPI_BYTE, me->peer, 1, w, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(p2p_recv, size, MPI_BYTE, me->peer, 1, w, MPI_STATUS_IGNORE);
            MPI_Send(p2p_send, size, MPI_BYTE, me->peer, 1, w);
        }
    } else if (test == T_BIBW) {
        for (int j = 0; j < n; j++)
            MPI_Irecv(p2p_recv, size, MPI_BYTE, me->peer, 2, w, &p2p_reqs[j]);
        for (int j = 0; j < n; j++)
            MPI_Isend(p2p_send, size, MPI_BYTE, me->peer, 2, w, &p2p_reqs[n + j]);
        MPI_Waitall(2 * n, p2p_reqs, MPI_STATUSES_IGNORE);
    } else if (me->first) { /* bw, mbw_mr: the sender */
        for (int j = 0; j < n; j++)
            MPI_Isend(p2p_send, size, MPI_BYTE, me->peer, 3, w, &p2p_reqs[j]);
        MPI_Waitall(n, p2p_reqs, MPI_STATUSES_IGNORE);
        MPI_Recv(p2p_ack, 4, MPI_BYTE, me->peer, 4, w, MPI_STATUS_IGNORE);
    } else {
        for (int j = 0; j < n; j++)
            MPI_Irecv(p2p_recv, size, MPI_BYTE, me->peer, 3, w, &p2p_reqs[j]);
        MPI_Waitall(n, p2p_reqs, MPI_STATUSES_IGNORE);
        MPI_Send(p2p_ack, 4, MPI_BYTE, me->peer, 4, w);
    }
    return MPI_Wtime() - t0;
}

/* All iterations of one size; the timer holds the first rank's iteration times. */
static void p2p_series(int test, const role *me, long size, bench_timer *t)
{
    int iters = p2p_iters(test, size), skip = p2p_skip(test, size);
    bench_touch(p2p_send, (size_t)size, 'a');
    bench_touch(p2p_recv, (size_t)size, 'b');
    bench_timer_start(t, iters);
    if (test != T_MBW_MR) MPI_Barrier(me->active_comm); /* mbw_mr has one per iteration */
    for (int i = 0; i < skip + iters; i++) {
        double s = p2p_iteration(test, me, (int)size);
        if (i >= skip) bench_timer_add(t, s);
    }
}

static void p2p_row(int test, const char *locality, int active, long size, const role *me,
                    const bench_timer *t)
{
    int iters = p2p_iters(test, size), window = test == T_LATENCY ? 1 : p2p.window;
    double mean = bench_timer_mean(t), best = t->best;
    if (test == T_LATENCY) {
        /* one-way time per message: a round trip carries two */
        double lat = mean / 2.0, lat_best = best / 2.0;
        bench_stats l = bench_stats_active(lat * 1e6, me->first, MPI_COMM_WORLD);
        bench_stats bw = bench_stats_active(lat > 0 ? size / lat / 1e6 : 0.0, me->first,
                                            MPI_COMM_WORLD);
        bench_stats lb = bench_stats_active(lat_best * 1e6, me->first, MPI_COMM_WORLD);
        bench_stats bb = bench_stats_active(lat_best > 0 ? size / lat_best / 1e6 : 0.0,
                                            me->first, MPI_COMM_WORLD);
        bench_row_begin("p2p");
        bench_field_str("method", "osu_latency");
        bench_field_str("locality", locality);
        bench_field_int("pairs", active);
        bench_field_int("size", size);
        bench_field_int("iters", iters);
        bench_field_stats("latency_us", l);
        bench_field_stats("bandwidth_MBps", bw);
        bench_field_num("aggregate_MBps", bw.avg * active);
        bench_field_stats("latency_best_us", lb);
        bench_field_stats("bandwidth_best_MBps", bb);
        bench_row_end();
        return;
    }
    /* bytes one timed iteration moves between the pair */
    double bytes = (double)size * window * (test == T_BIBW ? 2 : 1);
    double bw = mean > 0 ? bytes / mean / 1e6 : 0.0, bw_best = best > 0 ? bytes / best / 1e6 : 0.0;
    bench_stats s = bench_stats_active(bw, me->first, MPI_COMM_WORLD);
    bench_stats sb = bench_stats_active(bw_best, me->first, MPI_COMM_WORLD);
    /* osu_mbw_mr scales its rank 0's bandwidth by the pair count */
    double lead = me->leader ? bw : 0.0, lead_sum = 0.0;
    MPI_Reduce(&lead, &lead_sum, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    static const char *const osu[T_COUNT] = {"osu_latency", "osu_bw", "osu_bibw", "osu_mbw_mr"};
    char table[32];
    snprintf(table, sizeof table, "p2p_%s", p2p_tests[test]);
    bench_row_begin(table);
    bench_field_str("method", osu[test]);
    bench_field_str("locality", locality);
    bench_field_int("pairs", active);
    bench_field_int("size", size);
    bench_field_int("iters", iters);
    bench_field_int("window", window);
    bench_field_stats("bandwidth_MBps", s);
    bench_field_stats("bandwidth_best_MBps", sb);
    if (test == T_MBW_MR) {
        bench_field_num("aggregate_MBps", lead_sum * active);
        bench_field_num("messages_per_s", size > 0 ? lead_sum * active * 1e6 / size : 0.0);
        bench_field_num("aggregate_sum_MBps", s.avg * active);
        bench_field_num("aggregate_best_MBps", sb.avg * active);
    } else {
        bench_field_num("aggregate_MBps", s.avg * active);
    }
    bench_row_end();
}

static void p2p_run(int test, const char *locality, pairs p, int active, const long *sizes,
                    int nsizes)
{
    role me = {-1, 0, 0, MPI_COMM_NULL};
    for (int i = 0; i < active; i++) {
        if (p.first[i] == bench_rank) { me.peer = p.second[i]; me.first = 1; me.leader = i == 0; }
        if (p.second[i] == bench_rank) me.peer = p.first[i];
    }
    MPI_Comm_split(MPI_COMM_WORLD, me.peer >= 0 ? 1 : MPI_UNDEFINED, bench_rank, &me.active_comm);
    for (int s = 0; s < nsizes; s++) {
        if (test != T_LATENCY && sizes[s] == 0) continue; /* OSU's bandwidths start at 1 B */
        bench_gentle_barrier(MPI_COMM_WORLD, me.peer >= 0);
        bench_timer t = {0};
        if (me.peer >= 0) p2p_series(test, &me, sizes[s], &t);
        bench_gentle_barrier(MPI_COMM_WORLD, me.peer >= 0);
        p2p_row(test, locality, active, sizes[s], &me, &t);
    }
    if (me.active_comm != MPI_COMM_NULL) MPI_Comm_free(&me.active_comm);
}

int main(int argc, char **argv)
{
    /* OSU's osu_latency counts: 10000 timed after 100 warm-up, 1000/10 above 8 KiB */
    static const bench_common defaults = {0, 4L << 20, 8192, 10000, 100, 1000, 10, 5};
    int max_pairs = 1;
    const char *localities = "on-node,off-node";
    const char *tests = "latency,bw,bibw,mbw_mr";
    p2p = (p2p_opts){64, 100, 10, 20, 2};
    bench_opt opts[] = {
        {"pairs", BENCH_INT, &max_pairs, "concurrent pairs: runs 1, 2, 4 .. K"},
        {"locality", BENCH_STRING, &localities, "on-node,off-node"},
        {"tests", BENCH_STRING, &tests, "latency,bw,bibw,mbw_mr"},
        {"window", BENCH_INT, &p2p.window, "messages in flight per bandwidth iteration"},
        {"bw-iters", BENCH_INT, &p2p.bw_iters, "timed bandwidth iterations per size"},
        {"bw-skip", BENCH_INT, &p2p.bw_skip, "warm-up bandwidth iterations per size"},
        {"bw-iters-large", BENCH_INT, &p2p.bw_iters_large, "timed, above large-size"},
        {"bw-skip-large", BENCH_INT, &p2p.bw_skip_large, "warm-up, above large-size"},
        {0},
    };
    bench_init(&argc, &argv, "p2p", &defaults, opts);
    if (bench_size < 2) bench_die("p2p needs at least 2 ranks");
    if (max_pairs < 1) bench_die("--pairs %d: at least 1 pair is needed", max_pairs);
    if (2 * max_pairs > bench_size)
        bench_die("--pairs %d needs %d ranks, the run has %d", max_pairs, 2 * max_pairs,
                  bench_size);
    if (p2p.window < 1) bench_die("--window %d: at least 1 message is needed", p2p.window);
    if (p2p.bw_iters < 1 || p2p.bw_iters_large < 1) bench_die("bw-iters must be at least 1");
    if (bench_opts.max_size > 2147483647L) bench_die("--max-size: at most 2 GiB - 1");
    const char *names[2] = {"on-node", "off-node"};
    const char *bad = bench_unknown_word(localities, names, 2);
    if (bad) bench_die("--locality: unknown locality '%s'", bad);
    bad = bench_unknown_word(tests, (const char *const *)p2p_tests, T_COUNT);
    if (bad) bench_die("--tests: unknown test '%s' (known: latency, bw, bibw, mbw_mr)", bad);
    long *sizes;
    int nsizes = bench_sizes(&sizes);
    p2p_send = bench_buffer((size_t)bench_opts.max_size);
    p2p_recv = bench_buffer((size_t)bench_opts.max_size);
    p2p_reqs = malloc(sizeof(MPI_Request) * 2 * (size_t)p2p.window);
    pairs all[2] = {p2p_on_node(), p2p_off_node()};
    for (int l = 0; l < 2; l++) {
        if (!bench_has_word(localities, names[l])) continue;
        if (all[l].n == 0) {
            bench_note("no %s pairs: the %d ranks are on %d node(s)", names[l], bench_size,
                       bench_node.count);
            continue;
        }
        for (int k = 1;; k = k * 2 < max_pairs ? k * 2 : max_pairs) {
            if (k > all[l].n) {
                bench_note("only %d %s pairs exist; %d concurrent pairs not measured",
                           all[l].n, names[l], k);
                break;
            }
            for (int test = 0; test < T_COUNT; test++)
                if (bench_has_word(tests, p2p_tests[test]))
                    p2p_run(test, names[l], all[l], k, sizes, nsizes);
            if (k == max_pairs) break;
        }
    }
    for (int l = 0; l < 2; l++) { free(all[l].first); free(all[l].second); }
    free(p2p_reqs);
    free(p2p_send);
    free(p2p_recv);
    free(sizes);
    bench_finish();
    return 0;
}
