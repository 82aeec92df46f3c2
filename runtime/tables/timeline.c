/*
 * timeline.c - when MPI time was spent, without tracing (docs/runtime.md
 * "Timeline"): per thread a fixed number of time bins (MPISCOPE_TIMELINE_BINS)
 * holding the ticks spent in MPI per function kind and the bytes moved; at
 * MPI_Finalize the threads are summed, every rank's bins are put on one
 * common grid, time outside MPI is derived per bin, and the result is
 * written per rank (full mode) or reduced over ranks per bin (summary mode).
 *
 * RATIONALE:
 * - Fixed memory whatever the run length: bins are a power of two of ticks
 *   wide, so when a call ends past the last bin the width doubles by adding
 *   neighbours (2^k bins into one), and the hot path is two shifts.
 * - Exact totals: a call that spans bins is split at the bin edges in
 *   ticks, so the bins of a kind sum to the function table's ticks of that
 *   kind; only the seconds conversion (and, across ranks, the regrid below)
 *   rounds.
 * - One job clock: the bins start at a barrier in MPI_Init (the origin is
 *   taken when it returns); a second barrier right after bounds how far
 *   apart the ranks left the first one, and the largest such bound is
 *   written as the residual clock offset. Each rank converts ticks with its
 *   own calibration (TSC frequencies differ by node).
 * - Regrid: ranks may end with different widths (one crossed a doubling the
 *   others did not; TSC rates differ by parts per million, or by node model),
 *   so every rank puts its bins on the widest rank's grid: 2^k of its bins
 *   into one when the widths are 2^k apart to within 0.1 %, else spread in
 *   proportion to overlap (sum-preserving either way).
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "mpiscope.h"

/* Initial bin width 2^20 ticks: ~0.4 ms at a 2.5 GHz TSC, 1 ms with a
 * nanosecond clock; 256 bins cover ~0.1 s before the first doubling. */
#define TL_SHIFT0 20u
#define TL_OFF_SHIFT 63u           /* the timeline is off: one bin that never fills */

uint64_t mpiscope_tl_origin;
uint32_t mpiscope_tl_nbins = 1;
static int tl_on;
static uint64_t tl_skew;           /* ticks this rank spent in the second barrier at MPI_Init */

void mpiscope_timeline_init(void)
{
    long n = mpiscope_settings.TIMELINE_BINS;
    tl_on = n > 0;
    mpiscope_tl_nbins = tl_on ? (uint32_t)(n < 16 ? 16 : n) : 1u;
}

int mpiscope_timeline_enabled(void)
{
    return tl_on;
}

int mpiscope_timeline_alloc(mpiscope_thread_t *t)
{
    size_t bytes = (size_t)mpiscope_tl_nbins * MPISCOPE_TL_ROWS * sizeof(uint64_t);
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return 0;
    t->tl = p;
    t->tl_shift = tl_on ? TL_SHIFT0 : TL_OFF_SHIFT;
    return 1;
}

void mpiscope_timeline_barrier(MPI_Comm comm)
{
    if (tl_on)
        PMPI_Barrier(comm);
}

/* origin: ticks taken by every rank right after mpiscope_timeline_barrier.
 * A rank's origin precedes its entry into the second barrier, which no rank
 * leaves before every rank entered it: so any two origins are at most the
 * larger of the two ranks' (second barrier exit - origin) apart. */
void mpiscope_timeline_origin(MPI_Comm comm, uint64_t origin)
{
    mpiscope_tl_origin = origin;
    if (!tl_on)
        return;
    PMPI_Barrier(comm);
    tl_skew = mpiscope_now() - origin;
}

/* Bins 2^k times wider: new bin i holds old bins [i 2^k, (i + 1) 2^k). A
 * snapshot thread reading meanwhile sees tl_seq odd, or changed, and reads again. */
static void tl_widen(mpiscope_thread_t *t, unsigned k)
{
    if (!k)
        return;
    const uint32_t n = mpiscope_tl_nbins;
    uint64_t *b = t->tl;
    __atomic_store_n(&t->tl_seq, t->tl_seq + 1, __ATOMIC_RELAXED);
    __atomic_thread_fence(__ATOMIC_RELEASE);
    for (uint32_t i = 0; i < n; i++) {
        uint64_t sum[MPISCOPE_TL_ROWS] = {0};
        uint64_t lo = k < 32 ? (uint64_t)i << k : (i ? n : 0);
        for (uint64_t j = lo; j < n && j < lo + (k < 32 ? 1ull << k : n); j++)
            for (unsigned r = 0; r < MPISCOPE_TL_ROWS; r++)
                sum[r] += b[j * MPISCOPE_TL_ROWS + r];
        memcpy(&b[(size_t)i * MPISCOPE_TL_ROWS], sum, sizeof sum);
    }
    t->tl_shift += k;
    __atomic_store_n(&t->tl_seq, t->tl_seq + 1, __ATOMIC_RELEASE);
}

/* Where the width of e ticks after the origin must be for it to fit the bins. */
static unsigned tl_needed(uint64_t e, unsigned shift)
{
    unsigned k = 0;
    while (shift + k < 63 && (e >> (shift + k)) >= mpiscope_tl_nbins)
        k++;
    return k;
}

/* Not on the fast path: a call across bin edges, past the last bin, or
 * without a time (MPI_Pcontrol has t0 = t1 = 0). */
void mpiscope_timeline_slow(mpiscope_thread_t *t, unsigned row, uint64_t t0, uint64_t t1, uint64_t bytes)
{
    if (!tl_on || t1 < mpiscope_tl_origin || t1 < t0 || !t->tl)
        return;
    uint64_t e0 = t0 > mpiscope_tl_origin ? t0 - mpiscope_tl_origin : 0, e1 = t1 - mpiscope_tl_origin;
    tl_widen(t, tl_needed(e1, t->tl_shift));
    const unsigned s = t->tl_shift;
    uint64_t *b = t->tl;
    const uint64_t b0 = e0 >> s, b1 = e1 >> s;
    for (uint64_t i = b0; i <= b1; i++) {
        uint64_t from = i == b0 ? e0 : i << s, to = i == b1 ? e1 : (i + 1) << s;
        b[i * MPISCOPE_TL_ROWS + row] += to - from;
    }
    b[b1 * MPISCOPE_TL_ROWS + MPISCOPE_TL_BYTES] += bytes;
}

void mpiscope_timeline_clear(mpiscope_thread_t *t)
{
    if (!t->tl)
        return;
    memset(t->tl, 0, (size_t)mpiscope_tl_nbins * MPISCOPE_TL_ROWS * sizeof(uint64_t));
    t->tl_shift = tl_on ? TL_SHIFT0 : TL_OFF_SHIFT;
}

/* A consistent copy of a live table's bins (another thread may be widening
 * them): returns its shift. */
static unsigned tl_copy(const mpiscope_thread_t *t, uint64_t *out)
{
    size_t bytes = (size_t)mpiscope_tl_nbins * MPISCOPE_TL_ROWS * sizeof(uint64_t);
    for (int tries = 0;; tries++) {
        uint32_t seq = __atomic_load_n(&t->tl_seq, __ATOMIC_ACQUIRE);
        unsigned shift = __atomic_load_n(&t->tl_shift, __ATOMIC_RELAXED);
        memcpy(out, t->tl, bytes);
        __atomic_thread_fence(__ATOMIC_ACQUIRE);
        if ((!(seq & 1u) && seq == __atomic_load_n(&t->tl_seq, __ATOMIC_RELAXED)) || tries >= 100)
            return shift;
    }
}

static uint64_t *tl_scratch(void)
{
    static uint64_t *scratch;   /* one copy at a time: Finalize, or the snapshot thread */
    if (!scratch) {
        void *p = mmap(NULL, (size_t)mpiscope_tl_nbins * MPISCOPE_TL_ROWS * sizeof(uint64_t),
                       PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        scratch = p == MAP_FAILED ? NULL : p;
    }
    return scratch;
}

/* into += from, at the wider of the two widths (into is widened in place). */
void mpiscope_timeline_merge(mpiscope_thread_t *into, mpiscope_thread_t *from)
{
    uint64_t *b = tl_scratch();
    if (!tl_on || !b || !into->tl || !from->tl || into == from)
        return;
    unsigned sf = tl_copy(from, b);
    if (sf > into->tl_shift)
        tl_widen(into, sf - into->tl_shift);
    unsigned k = into->tl_shift - sf;
    for (uint32_t j = 0; j < mpiscope_tl_nbins; j++) {
        uint64_t i = k < 64 ? (uint64_t)j >> k : 0;
        for (unsigned r = 0; r < MPISCOPE_TL_ROWS; r++)
            into->tl[i * MPISCOPE_TL_ROWS + r] += b[(size_t)j * MPISCOPE_TL_ROWS + r];
    }
}

/* --- output -------------------------------------------------------------------------- */

static double tl_width(double spt, unsigned shift)     /* s (no libm: -lmpiscope users need none) */
{
    return spt * (double)(1ull << (shift < 63 ? shift : 63));
}

/* Bins of width w (s) spread over the grid of nb bins of width W >= w, in
 * proportion to overlap; past the grid's end goes to its last bin. src is
 * row-major [n][MPISCOPE_TL_ROWS] ticks; dst [rows][nb], row r taken from src row map[r]. */
static void tl_regrid(const uint64_t *src, uint32_t n, double spt, double w, const int *map, int rows,
                      double *dst, uint32_t nb, double W)
{
    memset(dst, 0, sizeof(double) * (size_t)rows * nb);
    /* W = 2^k w to within 0.1 % (the same clock, another doubling count; TSC rates of one
     * model differ by parts per million): bins are added 2^k to one, exactly. */
    unsigned k = 0;
    while (k < 62 && (double)(1ull << (k + 1)) <= (W / w) * 1.001)
        k++;
    int exact = W / w <= (double)(1ull << k) * 1.001;
    for (uint32_t i = 0; i < n; i++) {
        double a = w * i, z = w * (i + 1);
        uint32_t j = exact ? (uint32_t)((uint64_t)i >> k) : (uint32_t)(a / W);
        double split = 1.0;             /* share of bin i in grid bin j; the rest goes to j + 1 */
        if (j >= nb)
            j = nb - 1;
        else if (!exact && z > W * (j + 1) && j + 1 < nb)
            split = (W * (j + 1) - a) / w;
        split = split < 0.0 ? 0.0 : split > 1.0 ? 1.0 : split;
        for (int r = 0; r < rows; r++) {
            uint64_t v = src[(size_t)i * MPISCOPE_TL_ROWS + map[r]];
            if (!v)
                continue;
            double x = map[r] == MPISCOPE_TL_BYTES ? (double)v : (double)v * spt;
            dst[(size_t)r * nb + j] += x * split;
            if (split < 1.0)
                dst[(size_t)r * nb + j + 1] += x * (1.0 - split);
        }
    }
}

void mpiscope_timeline_gather(mpiscope_final_t *f, int summary, mpiscope_tl_out_t *o)
{
    memset(o, 0, sizeof *o);
    mpiscope_thread_t *t = f->t;
    const double spt = f->sec_per_tick;
    const uint32_t n = mpiscope_tl_nbins;
    /* Which kinds have time on this rank; then, with one MAX reduction, on any rank,
     * with the widest bins, the last end and the largest clock offset bound. */
    enum { R_WIDTH, R_END, R_OFFSET, R_BINS, R_KINDS };
    double in[R_KINDS + MPISCOPE_NKINDS] = {0}, all[R_KINDS + MPISCOPE_NKINDS];
    if (tl_on && t->tl) {
        /* the bins reach this rank's end, MPI_Finalize's entry, not just its last call */
        tl_widen(t, tl_needed(spt > 0 ? (uint64_t)(f->wall / spt) : 0, t->tl_shift));
        in[R_WIDTH] = tl_width(spt, t->tl_shift);
        in[R_END] = f->wall;
        in[R_OFFSET] = (double)tl_skew * spt;
        in[R_BINS] = (double)n;
        for (uint32_t i = 0; i < n; i++)
            for (unsigned k = 0; k < MPISCOPE_NKINDS; k++)
                if (t->tl[(size_t)i * MPISCOPE_TL_ROWS + k])
                    in[R_KINDS + k] = 1.0;
    }
    PMPI_Allreduce(in, all, R_KINDS + MPISCOPE_NKINDS, MPI_DOUBLE, MPI_MAX, f->comm);
    double W = all[R_WIDTH] > 0 ? all[R_WIDTH] : 1.0;
    double nbd = all[R_END] / W;     /* bins the grid needs: nbd rounded up */
    nbd = (double)(uint64_t)nbd < nbd ? (double)((uint64_t)nbd + 1) : nbd;
    o->maxbins = (uint32_t)all[R_BINS];
    o->nb = nbd < 1 ? 1u : nbd > all[R_BINS] ? (uint32_t)all[R_BINS] : (uint32_t)nbd;
    if (!o->nb)
        o->nb = 1;
    o->width = W;
    o->end = all[R_END];
    o->offset = all[R_OFFSET];

    /* Rows: the kinds used anywhere, "mpi" (summary: for its minPE/maxPE), "compute", "bytes". */
    int map[MPISCOPE_TL_ROWS], nk = 0;
    for (unsigned k = 0; k < MPISCOPE_NKINDS; k++)
        if (all[R_KINDS + k] > 0) {
            snprintf(o->rows[nk], sizeof o->rows[nk], "%s", mpiscope_kind_names[k]);
            map[nk++] = (int)k;
        }
    map[nk] = MPISCOPE_TL_BYTES;
    const int row_mpi = summary ? nk : -1, row_compute = nk + (summary ? 1 : 0), row_bytes = row_compute + 1;
    if (summary)
        snprintf(o->rows[row_mpi], sizeof o->rows[0], "mpi");
    snprintf(o->rows[row_compute], sizeof o->rows[0], "compute");
    snprintf(o->rows[row_bytes], sizeof o->rows[0], "bytes");
    o->nrows = (uint32_t)row_bytes + 1;
    const uint32_t nb = o->nb, K = o->nrows;

    double *v = calloc((size_t)K * nb + 1, sizeof *v);
    double *kinds = calloc((size_t)(nk + 2) * nb + 1, sizeof *kinds);
    uint64_t *src = tl_scratch();
    uint64_t *out = calloc((size_t)n * MPISCOPE_TL_ROWS + 1, sizeof *out);
    if (tl_on && t->tl && v && kinds && src && out) {
        unsigned s = tl_copy(t, src);
        /* Time outside MPI per bin of this rank's own grid, in ticks, before the regrid:
         * RATIONALE: the grid's width comes from the widest rank's calibration, a few
         * parts per million off this rank's; a bin full of MPI on this rank's grid would
         * cover slightly more than the grid's bin, and time outside MPI computed there
         * would lose that difference (the rows then no longer summed to the wall time). */
        const uint64_t end = spt > 0 ? (uint64_t)(f->wall / spt + 0.5) : 0;
        for (uint32_t i = 0; i < n; i++) {
            uint64_t a = (uint64_t)i << s, z = (uint64_t)(i + 1) << s, mpi = 0;
            for (int r = 0; r < nk; r++)
                mpi += src[(size_t)i * MPISCOPE_TL_ROWS + map[r]];
            uint64_t covered = a < end ? (z < end ? z : end) - a : 0;
            out[(size_t)i * MPISCOPE_TL_ROWS] = covered > mpi ? covered - mpi : 0;
        }
        const int out_map[1] = {0};
        tl_regrid(src, n, spt, tl_width(spt, s), map, nk + 1, kinds, nb, W);
        tl_regrid(out, n, spt, tl_width(spt, s), out_map, 1, kinds + (size_t)(nk + 1) * nb, nb, W);
        for (uint32_t j = 0; j < nb; j++) {
            double mpi = 0;
            for (int r = 0; r < nk; r++) {
                v[(size_t)r * nb + j] = kinds[(size_t)r * nb + j];
                mpi += kinds[(size_t)r * nb + j];
            }
            if (row_mpi >= 0)
                v[(size_t)row_mpi * nb + j] = mpi;
            v[(size_t)row_compute * nb + j] = kinds[(size_t)(nk + 1) * nb + j];
            v[(size_t)row_bytes * nb + j] = kinds[(size_t)nk * nb + j];
        }
    }
    free(out);
    free(kinds);
    if (!summary) {
        o->mine = v;
        return;
    }
    /* Summary: per (row, bin) the statistics over ranks (rank_stats.c). */
    const size_t N = (size_t)K * nb;
    mpiscope_rank_stats_t st;
    if (mpiscope_rank_stats_init(&st, N, 0, 0) && v)
        memcpy(st.v, v, N * sizeof *v);
    if (mpiscope_rank_stats_reduce(&st, f->comm, f->rank) && f->rank == 0 &&
        (o->sum = calloc(N + 1, sizeof *o->sum))) {
        for (size_t i = 0; i < N; i++)
            o->sum[i] = mpiscope_rank_stats_record(&st, i, (uint16_t)(i / nb), (uint16_t)(i % nb), 0);
        o->nsum = (uint32_t)N;
    }
    mpiscope_rank_stats_free(&st);
    free(v);
}

void mpiscope_timeline_meta(const mpiscope_tl_out_t *o, mpiscope_buf_t *meta)
{
    if (!meta->len || meta->data[meta->len - 1] != '}')
        return;
    meta->len--;
    mpiscope_buf_printf(meta, ", \"timeline\": {\"bins\": %u, \"bin_seconds\": %.17g, \"max_bins\": %u, "
                        "\"end_seconds\": %.17g, \"clock_offset_max\": %.17g, \"clock_origin\": "
                        "\"barrier at MPI_Init\", \"rows\": [",
                        o->nb, o->width, o->maxbins, o->end, o->offset);
    for (uint32_t r = 0; r < o->nrows; r++)
        mpiscope_buf_printf(meta, "%s\"%s\"", r ? ", " : "", o->rows[r]);
    mpiscope_buf_str(meta, "]}}");
}

void mpiscope_timeline_out_free(mpiscope_tl_out_t *o)
{
    free(o->mine);
    free(o->sum);
    o->mine = NULL;
    o->sum = NULL;
}

size_t mpiscope_timeline_snapshot(const mpiscope_thread_t *t, double spt, double wall, void *out,
                                  size_t cap, uint32_t *nb, double *width)
{
    *nb = 0;
    *width = 0;
    uint64_t *src = tl_scratch();
    if (!tl_on || !t->tl || !src)
        return 0;
    unsigned s = tl_copy(t, src);
    unsigned k = tl_needed(spt > 0 ? (uint64_t)(wall / spt) : 0, s);   /* reach the snapshot's time */
    if (k) {                   /* widen the copy: bin i takes bins [i 2^k, (i + 1) 2^k) */
        for (uint32_t i = 0; i < mpiscope_tl_nbins; i++)
            for (unsigned r = 0; r < MPISCOPE_TL_ROWS; r++) {
                uint64_t x = src[(size_t)i * MPISCOPE_TL_ROWS + r];
                src[(size_t)i * MPISCOPE_TL_ROWS + r] = 0;
                src[(size_t)(i >> k) * MPISCOPE_TL_ROWS + r] += x;
            }
        s += k;
    }
    double w = tl_width(spt, s);
    double used = w > 0 ? (double)(uint64_t)(wall / w) + 1 : 1;
    uint32_t n = used < mpiscope_tl_nbins ? (uint32_t)used : mpiscope_tl_nbins;
    size_t bytes = (size_t)n * MPISCOPE_TL_ROWS * sizeof(double);
    if (bytes > cap)
        return 0;
    double *d = out;    /* row-major [row][n], as the profile's rows */
    for (unsigned r = 0; r < MPISCOPE_TL_ROWS; r++)
        for (uint32_t i = 0; i < n; i++) {
            uint64_t x = src[(size_t)i * MPISCOPE_TL_ROWS + r];
            d[(size_t)r * n + i] = r == MPISCOPE_TL_BYTES ? (double)x : (double)x * spt;
        }
    *nb = n;
    *width = w;
    return bytes;
}
