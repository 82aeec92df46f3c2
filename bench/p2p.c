/* p2p: ping-pong latency and bandwidth between pairs of ranks on one node and
 * on different nodes (from the node table), with 1, 2, 4 .. K pairs at once
 * to expose memory-bus / link / switch contention (seed 003, "Colony switch").
 *
 * Method: per size, a barrier, `skip` untimed round trips, then `iters` timed
 * ones in `batches` equal batches; latency = elapsed / (2 * round trips) on
 * the pinging rank, over all batches (OSU's number) and for the fastest batch
 * (*_best: the least disturbed by other load); bandwidth = size / latency.
 * Each pair is one sample; rows give min/avg/max over pairs and the
 * aggregate bandwidth (sum over pairs). */
#include "common.h"

#include <stdlib.h>

/* pair_first[i] pings pair_second[i]. */
typedef struct pairs { int n; int *first, *second; } pairs;

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

/* One ping-pong series: returns the mean one-way time in seconds over all
 * timed round trips; *best gets the fastest batch's mean. */
static double p2p_pingpong(char *buf, long size, int peer, int ping, int iters, int skip,
                           double *best)
{
    MPI_Status st;
    int batches = bench_batches(iters), per = iters / batches;
    double total = 0.0;
    *best = 1e30;
    for (int b = -1; b < batches; b++) {
        int n = b < 0 ? skip : per; /* batch -1: the untimed warm-up */
        double t0 = MPI_Wtime();
        for (int i = 0; i < n; i++) {
            if (ping) {
                MPI_Send(buf, (int)size, MPI_BYTE, peer, 1, MPI_COMM_WORLD);
                MPI_Recv(buf, (int)size, MPI_BYTE, peer, 1, MPI_COMM_WORLD, &st);
            } else {
                MPI_Recv(buf, (int)size, MPI_BYTE, peer, 1, MPI_COMM_WORLD, &st);
                MPI_Send(buf, (int)size, MPI_BYTE, peer, 1, MPI_COMM_WORLD);
            }
        }
        double t = MPI_Wtime() - t0;
        if (b < 0) continue;
        total += t;
        if (t / (2.0 * per) < *best) *best = t / (2.0 * per);
    }
    return total / (2.0 * per * batches);
}

static void p2p_run(const char *locality, pairs p, int active, const long *sizes, int nsizes,
                    char *buf)
{
    int peer = -1, ping = 0;
    for (int i = 0; i < active; i++) {
        if (p.first[i] == bench_rank) { peer = p.second[i]; ping = 1; }
        if (p.second[i] == bench_rank) peer = p.first[i];
    }
    for (int s = 0; s < nsizes; s++) {
        bench_gentle_barrier(MPI_COMM_WORLD, peer >= 0);
        double t = 0.0, best = 0.0;
        if (peer >= 0) t = p2p_pingpong(buf, sizes[s], peer, ping, bench_iters(sizes[s]),
                                        bench_skip(sizes[s]), &best);
        bench_gentle_barrier(MPI_COMM_WORLD, peer >= 0);
        bench_stats lat = bench_stats_active(t * 1e6, ping, MPI_COMM_WORLD);
        bench_stats bw = bench_stats_active(t > 0 ? sizes[s] / t / 1e6 : 0.0, ping,
                                            MPI_COMM_WORLD);
        bench_stats lat_best = bench_stats_active(best * 1e6, ping, MPI_COMM_WORLD);
        bench_stats bw_best = bench_stats_active(best > 0 ? sizes[s] / best / 1e6 : 0.0, ping,
                                                 MPI_COMM_WORLD);
        bench_row_begin("p2p");
        bench_field_str("locality", locality);
        bench_field_int("pairs", active);
        bench_field_int("size", sizes[s]);
        bench_field_stats("latency_us", lat);
        bench_field_stats("bandwidth_MBps", bw);
        bench_field_num("aggregate_MBps", bw.avg * active);
        bench_field_stats("latency_best_us", lat_best);
        bench_field_stats("bandwidth_best_MBps", bw_best);
        bench_row_end();
    }
}

int main(int argc, char **argv)
{
    static const bench_common defaults = {0, 4L << 20, 8192, 1000, 100, 100, 10, 5};
    int max_pairs = 1;
    const char *localities = "on-node,off-node";
    bench_opt opts[] = {
        {"pairs", BENCH_INT, &max_pairs, "concurrent pairs: runs 1, 2, 4 .. K"},
        {"locality", BENCH_STRING, &localities, "on-node,off-node"},
        {0},
    };
    bench_init(&argc, &argv, "p2p", &defaults, opts);
    if (bench_size < 2) bench_die("p2p needs at least 2 ranks");
    if (max_pairs < 1) bench_die("--pairs %d: at least 1 pair is needed", max_pairs);
    if (2 * max_pairs > bench_size)
        bench_die("--pairs %d needs %d ranks, the run has %d", max_pairs, 2 * max_pairs,
                  bench_size);
    const char *names[2] = {"on-node", "off-node"};
    const char *bad = bench_unknown_word(localities, names, 2);
    if (bad) bench_die("--locality: unknown locality '%s'", bad);
    long *sizes;
    int nsizes = bench_sizes(&sizes);
    char *buf = bench_buffer((size_t)bench_opts.max_size);
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
            p2p_run(names[l], all[l], k, sizes, nsizes, buf);
            if (k == max_pairs) break;
        }
        free(all[l].first);
        free(all[l].second);
    }
    free(buf);
    free(sizes);
    bench_finish();
    return 0;
}
