/*
 * rank_stats.c - every rank's values reduced to rank 0 as a summary record
 * holds them (docs/profile-format.md, SUMMARY): the sum, how many ranks had
 * a non-zero value, the least and the greatest with the rank that had it
 * (MPI_MINLOC / MPI_MAXLOC: the lowest rank on ties). Summary mode reduces
 * its functions (summary.c), timeline bins, MPI_T variables, call sites and
 * sampled functions this way.
 *
 * RATIONALE: three reductions of O(values) each, O(log P) steps whatever
 * the number of ranks. Every rank must make the same collectives, so the
 * buffers are allocated before (mpiscope_rank_stats_init) and one
 * MPI_Allreduce tells every rank whether some rank ran short of memory; then
 * all of them skip the reductions together instead of one rank leaving the
 * others waiting.
 */
#include <stdlib.h>
#include <string.h>

#include "mpiscope.h"

int mpiscope_rank_stats_init(mpiscope_rank_stats_t *s, size_t n, size_t m, size_t k)
{
    memset(s, 0, sizeof *s);
    s->n = n;
    s->m = m;
    s->k = k;
    /* one block: [in: n values | n flags | m] [out: the same] [lo k] [hi k]
     * [MINLOC in, MAXLOC in, min, max: n + k each] */
    size_t doubles = 2 * (2 * n + m) + 2 * k, pairs = 4 * (n + k);
    s->block = calloc(1, doubles * sizeof(double) + pairs * sizeof(mpiscope_val_rank_t) + 1);
    if (!s->block)
        return 0;
    double *d = s->block;
    s->v = d;
    s->extra = d + 2 * n;
    s->sum = d + (2 * n + m);
    s->nonzero = s->sum + n;
    s->extra_sum = s->sum + 2 * n;
    s->lo = d + 2 * (2 * n + m);
    s->hi = s->lo + k;
    mpiscope_val_rank_t *p = (mpiscope_val_rank_t *)(s->hi + k);
    s->lo_in = p;
    s->hi_in = p + (n + k);
    s->min = p + 2 * (n + k);
    s->max = p + 3 * (n + k);
    return 1;
}

int mpiscope_rank_stats_reduce(mpiscope_rank_stats_t *s, MPI_Comm comm, int rank)
{
    int mine = s->block != NULL, all = 0;
    PMPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, comm);
    if (!all)
        return 0;
    const size_t n = s->n, k = s->k;
    double *in = s->v;
    for (size_t j = 0; j < n; j++) {
        in[n + j] = in[j] != 0.0;
        s->lo_in[j] = s->hi_in[j] = (mpiscope_val_rank_t){in[j], rank};
    }
    for (size_t j = 0; j < k; j++) {
        s->lo_in[n + j] = (mpiscope_val_rank_t){s->lo[j], rank};
        s->hi_in[n + j] = (mpiscope_val_rank_t){s->hi[j], rank};
    }
    PMPI_Reduce(in, s->sum, (int)(2 * n + s->m), MPI_DOUBLE, MPI_SUM, 0, comm);
    PMPI_Reduce(s->lo_in, s->min, (int)(n + k), MPI_DOUBLE_INT, MPI_MINLOC, 0, comm);
    PMPI_Reduce(s->hi_in, s->max, (int)(n + k), MPI_DOUBLE_INT, MPI_MAXLOC, 0, comm);
    return 1;
}

mpiscope_summary_t mpiscope_rank_stats_record(const mpiscope_rank_stats_t *s, size_t j, uint16_t func,
                                              uint16_t metric, uint64_t region)
{
    return (mpiscope_summary_t){func, metric, 0, region, s->min[j].v, s->max[j].v, s->sum[j],
                                (uint32_t)s->min[j].rank, (uint32_t)s->max[j].rank,
                                (uint64_t)s->nonzero[j]};
}

void mpiscope_rank_stats_free(mpiscope_rank_stats_t *s)
{
    free(s->block);
    memset(s, 0, sizeof *s);
}
