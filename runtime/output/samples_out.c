/*
 * samples_out.c - sampled compute in a summary-mode profile (docs/sampling.md
 * "Summary mode", docs/profile-format.md "SAMPLES"): per function, the
 * samples of every rank reduced to sum, min, max, minPE and maxPE, in a
 * section whose size does not grow with the number of ranks.
 *
 * Each rank counts its compute samples by function (sampling.c:
 * mpiscope_samples_by_function, function starts from the unwind tables) and
 * keeps its MPISCOPE_SAMPLE_MAX functions of most samples. Their union over
 * ranks is the weighted, capped binomial-tree union (merge.c
 * mpiscope_set_union_top): at most MPISCOPE_SAMPLE_MAX functions, those with
 * the most samples, at every step of the tree. Then every rank fills one
 * count per union function (0 where it has none), its "other" compute, its
 * samples per MPI function and its totals, and rank_stats.c reduces them
 * to rank 0 (sums, non-zero ranks, minimum and maximum with their ranks),
 * as summary.c does for functions: O(MPISCOPE_SAMPLE_MAX + MPI functions)
 * per rank and message, never O(P).
 */
#include <stdlib.h>
#include <string.h>

#include "mpiscope.h"
#include "output/samples_out.h"

void mpiscope_samples_reduce(mpiscope_final_t *f, const mpiscope_samples_by_fn_t *by, mpiscope_samples_sum_t *o)
{
    memset(o, 0, sizeof *o);
    const size_t cap = (size_t)mpiscope_settings.SAMPLE_MAX;
    mpiscope_entry_t *mine = calloc(by->nfn + 1, sizeof *mine);
    for (uint32_t i = 0; mine && i < by->nfn; i++)
        mine[i] = (mpiscope_entry_t){by->fn[i].module, by->fn[i].offset, (const char *)&by->fn[i].samples, 8};
    mpiscope_set_t keys;
    mpiscope_set_union_top(f->comm, mine, mine ? by->nfn : 0, 1, cap, &keys);
    free(mine);

    /* [K functions | other | MPISCOPE_NIDS MPI functions | MPI layer | compute | all] */
    const size_t K = keys.n, X_OTHER = K, X_MPI = K + 1, X_COMPUTE = X_MPI + MPISCOPE_NIDS + 1,
                 X_ALL = X_COMPUTE + 1, L = X_ALL + 1;
    mpiscope_rank_stats_t st;
    double *sum_in = mpiscope_rank_stats_init(&st, L, 0, 0) ? st.v : NULL;
    double kept = 0.0;
    for (uint32_t i = 0; sum_in && by->fn && i < by->nfn; i++) {
        long k = mpiscope_entries_find(keys.e, keys.n, by->fn[i].module, by->fn[i].offset);
        if (k >= 0) {
            sum_in[k] = (double)by->fn[i].samples;
            kept += sum_in[k];
        }
    }
    if (sum_in) {
        sum_in[X_OTHER] = (double)by->compute - kept;
        for (size_t id = 0; id <= MPISCOPE_NIDS; id++)
            sum_in[X_MPI + id] = (double)by->mpi[id];
        sum_in[X_COMPUTE] = (double)by->compute;
        sum_in[X_ALL] = (double)by->total;
    }
    if (!mpiscope_rank_stats_reduce(&st, f->comm, f->rank) || f->rank != 0 ||
        !(o->recs = calloc(L, sizeof *o->recs)))
        goto out;
    for (size_t j = 0; j < L; j++) {
        /* the totals always; functions, other and MPI where a rank has samples */
        if (st.sum[j] == 0.0 && j != X_COMPUTE && j != X_ALL)
            continue;
        uint16_t func = j < K ? MPISCOPE_SAMPLE_COMPUTE
                      : j == X_OTHER ? MPISCOPE_SAMPLE_OTHER
                      : j == X_COMPUTE ? MPISCOPE_SAMPLE_COMPUTE_ALL
                      : j == X_ALL ? MPISCOPE_SAMPLE_ALL
                      : j == X_MPI + MPISCOPE_NIDS ? MPISCOPE_SAMPLE_MPI_LAYER : (uint16_t)(j - X_MPI);
        o->recs[o->nrecs++] = (mpiscope_sample_summary_t){
            func, 0, (uint32_t)st.nonzero[j], j < K ? keys.e[j].a : 0, j < K ? keys.e[j].b : 0,
            st.min[j].v, st.max[j].v, st.sum[j], (uint32_t)st.min[j].rank, (uint32_t)st.max[j].rank};
    }
out:
    mpiscope_set_free(&keys);
    mpiscope_rank_stats_free(&st);
}

void mpiscope_samples_sum_free(mpiscope_samples_sum_t *o)
{
    free(o->recs);
    memset(o, 0, sizeof *o);
}
