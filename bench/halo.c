/* halo: the five halo-exchange strategies of seed 003 (IBM SP guide) over
 * message sizes and 2, 4, 6 or 8 neighbours, with and without computation
 * to overlap:
 *   BSBR  MPI_Send/MPI_Recv, ordered by coordinate parity so it cannot deadlock
 *   SERE  MPI_Sendrecv per direction
 *   ISBR  MPI_Isend all, then blocking MPI_Recv, then MPI_Waitall
 *   ISIR  MPI_Isend all, MPI_Irecv all, MPI_Waitall
 *   IRIS  MPI_Irecv all (pre-posted), MPI_Isend all, MPI_Waitall
 * Neighbours: 2 = 1-D ring, 4 = 2-D, 6 = 3-D, 8 = 2-D with diagonals, on a
 * periodic MPI_Dims_create grid (a dimension of extent 1 has no neighbour).
 *
 * Method: per size, barrier, `skip` untimed exchanges, `iters` timed in
 * `batches` equal batches; each rank's time per exchange (including the
 * compute, if any) over all batches and for its fastest batch (time_best_us),
 * reduced to min/avg/max over ranks. Compute (--compute-us) is a calibrated
 * busy loop placed where it can overlap: between posting and completing for
 * ISBR/ISIR/IRIS, before the exchange for BSBR/SERE. After timing, bytes received and a checksum of
 * every receive buffer are summed over ranks: identical for all strategies. */
#include "common.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { HALO_MAXDIR = 8 };

typedef struct halo {
    int ndir, to[HALO_MAXDIR], from[HALO_MAXDIR], odd[HALO_MAXDIR];
    char *obuf, *ibuf;
    long size;
    long work; /* busy-loop iterations standing for the compute */
} halo;

static volatile double halo_sink;

static void halo_compute(long n)
{
    double x = 1.0;
    for (long i = 0; i < n; i++) x = x * 1.0000001 + 1e-9;
    halo_sink = x;
}

#define OB(h, d) ((h)->obuf + (size_t)(d) * (h)->size)
#define IB(h, d) ((h)->ibuf + (size_t)(d) * (h)->size)

static void halo_bsbr(halo *h)
{
    halo_compute(h->work);
    for (int d = 0; d < h->ndir; d++) {
        if (h->odd[d]) {
            MPI_Recv(IB(h, d), (int)h->size, MPI_BYTE, h->from[d], d, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(OB(h, d), (int)h->size, MPI_BYTE, h->to[d], d, MPI_COMM_WORLD);
        } else {
            MPI_Send(OB(h, d), (int)h->size, MPI_BYTE, h->to[d], d, MPI_COMM_WORLD);
            MPI_Recv(IB(h, d), (int)h->size, MPI_BYTE, h->from[d], d, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        }
    }
}

static void halo_sere(halo *h)
{
    halo_compute(h->work);
    for (int d = 0; d < h->ndir; d++)
        MPI_Sendrecv(OB(h, d), (int)h->size, MPI_BYTE, h->to[d], d, IB(h, d), (int)h->size,
                     MPI_BYTE, h->from[d], d, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}

static void halo_isbr(halo *h)
{
    MPI_Request req[HALO_MAXDIR];
    for (int d = 0; d < h->ndir; d++)
        MPI_Isend(OB(h, d), (int)h->size, MPI_BYTE, h->to[d], d, MPI_COMM_WORLD, &req[d]);
    halo_compute(h->work);
    for (int d = 0; d < h->ndir; d++)
        MPI_Recv(IB(h, d), (int)h->size, MPI_BYTE, h->from[d], d, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Waitall(h->ndir, req, MPI_STATUSES_IGNORE);
}

static void halo_isir(halo *h)
{
    MPI_Request req[2 * HALO_MAXDIR];
    for (int d = 0; d < h->ndir; d++)
        MPI_Isend(OB(h, d), (int)h->size, MPI_BYTE, h->to[d], d, MPI_COMM_WORLD, &req[d]);
    for (int d = 0; d < h->ndir; d++)
        MPI_Irecv(IB(h, d), (int)h->size, MPI_BYTE, h->from[d], d, MPI_COMM_WORLD, &req[h->ndir + d]);
    halo_compute(h->work);
    MPI_Waitall(2 * h->ndir, req, MPI_STATUSES_IGNORE);
}

static void halo_iris(halo *h)
{
    MPI_Request req[2 * HALO_MAXDIR];
    for (int d = 0; d < h->ndir; d++)
        MPI_Irecv(IB(h, d), (int)h->size, MPI_BYTE, h->from[d], d, MPI_COMM_WORLD, &req[d]);
    for (int d = 0; d < h->ndir; d++)
        MPI_Isend(OB(h, d), (int)h->size, MPI_BYTE, h->to[d], d, MPI_COMM_WORLD, &req[h->ndir + d]);
    halo_compute(h->work);
    MPI_Waitall(2 * h->ndir, req, MPI_STATUSES_IGNORE);
}

static const char *const halo_names[] = {"BSBR", "SERE", "ISBR", "ISIR", "IRIS"};
static void (*const halo_fns[])(halo *) = {halo_bsbr, halo_sere, halo_isbr, halo_isir, halo_iris};

/* Directions and neighbours for 2/4/6/8 neighbours; returns the grid text. */
static void halo_topology(halo *h, int neighbours, char *grid, size_t len)
{
    static const int axes[6][3] = {{1, 0, 0}, {-1, 0, 0}, {0, 1, 0}, {0, -1, 0},
                                   {0, 0, 1}, {0, 0, -1}};
    static const int diagonals[4][3] = {{1, 1, 0}, {-1, -1, 0}, {1, -1, 0}, {-1, 1, 0}};
    int ndims = neighbours == 2 ? 1 : neighbours == 6 ? 3 : 2;
    int dims[3] = {0, 0, 0}, coords[3] = {0, 0, 0};
    MPI_Dims_create(bench_size, ndims, dims);
    for (int i = ndims; i < 3; i++) dims[i] = 1;
    int r = bench_rank; /* row-major coordinates, as MPI_Cart_coords */
    for (int i = 2; i >= 0; i--) { coords[i] = r % dims[i]; r /= dims[i]; }
    h->ndir = neighbours;
    for (int d = 0; d < neighbours; d++) {
        const int *v = neighbours == 8 && d >= 4 ? diagonals[d - 4] : axes[d];
        int to = 0, from = 0, axis = -1, valid = 1;
        for (int i = 0; i < 3; i++) {
            if (v[i] && dims[i] == 1) valid = 0;
            if (v[i] && axis < 0) axis = i;
            to = to * dims[i] + (coords[i] + v[i] + dims[i]) % dims[i];
            from = from * dims[i] + (coords[i] - v[i] + dims[i]) % dims[i];
        }
        h->to[d] = valid ? to : MPI_PROC_NULL;
        h->from[d] = valid ? from : MPI_PROC_NULL;
        /* Along `axis` a rank with an odd coordinate has an even predecessor,
         * so a chain of blocking sends always ends at a receiver. */
        h->odd[d] = coords[axis] % 2;
    }
    snprintf(grid, len, "%dx%dx%d", dims[0], dims[1], dims[2]);
}

static uint64_t halo_checksum(const halo *h)
{
    uint64_t sum = 0;
    for (size_t i = 0; i < (size_t)h->ndir * (size_t)h->size; i++)
        sum += (uint64_t)(unsigned char)h->ibuf[i] * (i % 1009 + 1);
    return sum;
}

/* Busy-loop iterations per microsecond: the fastest of five timings on rank 0
 * (so the compute never takes less than asked), shared with every rank. */
static double halo_calibrate(void)
{
    double rate = 0.0;
    for (int i = 0; bench_rank == 0 && i < 5; i++) {
        double t0 = MPI_Wtime();
        halo_compute(1000000);
        double r = 1000000 / ((MPI_Wtime() - t0) * 1e6);
        if (r > rate) rate = r;
    }
    MPI_Bcast(&rate, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    return rate;
}

int main(int argc, char **argv)
{
    static const bench_common defaults = {8, 1L << 20, 8192, 1000, 100, 100, 10, 5};
    const char *strategies = "BSBR,SERE,ISBR,ISIR,IRIS", *neigh_text = "2,4,8";
    double compute_us = 0.0;
    bench_opt opts[] = {
        {"strategies", BENCH_STRING, &strategies, "BSBR,SERE,ISBR,ISIR,IRIS"},
        {"neighbours", BENCH_STRING, &neigh_text, "2 (1-D), 4 (2-D), 6 (3-D), 8 (2-D + diagonals)"},
        {"compute-us", BENCH_DOUBLE, &compute_us, "also run with this much compute per exchange"},
        {0},
    };
    bench_init(&argc, &argv, "halo", &defaults, opts);
    const char *bad = bench_unknown_word(strategies, halo_names, 5);
    if (bad) bench_die("--strategies: unknown strategy '%s'", bad);
    int neighbours[4];
    int nneigh = bench_parse_ints(neigh_text, neighbours, 4);
    if (nneigh < 0) bench_die("--neighbours: cannot parse '%s'", neigh_text);
    for (int i = 0; i < nneigh; i++)
        if (neighbours[i] < 2 || neighbours[i] > 8 || neighbours[i] % 2)
            bench_die("--neighbours: %d is not one of 2, 4, 6, 8", neighbours[i]);
    double rate = compute_us > 0 ? halo_calibrate() : 0.0;
    long *sizes;
    int nsizes = bench_sizes(&sizes);
    halo h;
    h.obuf = bench_buffer((size_t)HALO_MAXDIR * bench_opts.max_size);
    h.ibuf = bench_buffer((size_t)HALO_MAXDIR * bench_opts.max_size);
    for (int n = 0; n < nneigh; n++) {
        char grid[64];
        halo_topology(&h, neighbours[n], grid, sizeof grid);
        for (int c = 0; c < (compute_us > 0 ? 2 : 1); c++) {
            h.work = c ? (long)(compute_us * rate) : 0;
            for (int s = 0; s < 5; s++) {
                if (!bench_has_word(strategies, halo_names[s])) continue;
                for (int z = 0; z < nsizes; z++) {
                    h.size = sizes[z];
                    for (size_t i = 0; i < (size_t)h.ndir * h.size; i++)
                        h.obuf[i] = (char)(bench_rank * 31 + i * 7 + i / h.size);
                    memset(h.ibuf, 0, (size_t)h.ndir * h.size);
                    int iters = bench_iters(h.size), batches = bench_batches(iters);
                    int per = iters / batches;
                    double total = 0.0, best = 1e30;
                    MPI_Barrier(MPI_COMM_WORLD);
                    for (int b = -1; b < batches; b++) {
                        int count = b < 0 ? bench_skip(h.size) : per; /* -1: warm-up */
                        double t0 = MPI_Wtime();
                        for (int i = 0; i < count; i++) halo_fns[s](&h);
                        double dt = MPI_Wtime() - t0;
                        if (b < 0) continue;
                        total += dt;
                        if (dt / per < best) best = dt / per;
                    }
                    double t = total / ((double)per * batches);
                    long got = 0, bytes;
                    for (int d = 0; d < h.ndir; d++) got += h.from[d] == MPI_PROC_NULL ? 0 : h.size;
                    uint64_t sum = halo_checksum(&h), sum_all;
                    MPI_Reduce(&got, &bytes, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
                    MPI_Reduce(&sum, &sum_all, 1, MPI_UINT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
                    bench_stats st = bench_stats_of(t * 1e6, MPI_COMM_WORLD);
                    bench_stats st_best = bench_stats_of(best * 1e6, MPI_COMM_WORLD);
                    char hex[32];
                    snprintf(hex, sizeof hex, "%016llx", (unsigned long long)sum_all);
                    bench_row_begin("halo");
                    bench_field_str("strategy", halo_names[s]);
                    bench_field_int("neighbours", neighbours[n]);
                    bench_field_str("grid", grid);
                    bench_field_int("size", h.size);
                    bench_field_num("compute_us", c ? compute_us : 0.0);
                    bench_field_stats("time_us", st);
                    bench_field_stats("time_best_us", st_best);
                    bench_field_int("bytes_per_exchange", bytes);
                    bench_field_str("checksum", hex);
                    bench_row_end();
                }
            }
        }
    }
    free(h.obuf);
    free(h.ibuf);
    free(sizes);
    bench_finish();
    return 0;
}
