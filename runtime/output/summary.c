/*
 * summary.c - MPISCOPE_MODE=summary: the runtime reduces across ranks and
 * writes a file whose size does not grow with the number of ranks (SUMMARY
 * and HIST sections, docs/profile-format.md).
 *
 * The keys (function, region) and (function, bucket, region) differ by rank,
 * so their union -- together with the region names, MPI-IO files and the
 * environment's CPU lists and variable sets (environ.c), in one
 * binomial-tree merge (merge.c) -- is found first and broadcast; then every
 * rank fills one value per (key, metric), 0 where it has no such key, and
 * rank_stats.c reduces them to rank 0: the sums (with the count of non-zero
 * ranks, and the histogram sums), the minimum and maximum with their ranks
 * (ties go to the lowest rank, as MPI_MINLOC and MPI_MAXLOC define them).
 * Memory and messages are O(keys), never O(P).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpiscope.h"
#include "output/callsites_out.h"
#include "output/samples_out.h"

/* One union carries every kind of entry; the top two bits of `a` say which. */
#define KEY_FUNC (1ull << 62)    /* a = id, b = region */
#define KEY_HIST (2ull << 62)    /* a = id << 8 | bucket, b = region */
#define KEY_NAME (3ull << 62)    /* region name: b = id; a | 1: MPI-IO file, b = name key; a | 2: CPU list, a | 3: variable set (b = id) */
#define KEY_BITS(a) ((a) & (3ull << 62))
#define KEY_VALUE(a) ((a) & ((1ull << 62) - 1))

typedef struct {
    const mpiscope_entry_t *e;
    size_t n;
} keys_t;

static long find_key(keys_t k, uint64_t a, uint64_t b)
{
    return mpiscope_entries_find(k.e, k.n, a, b);
}

/* The entries of the sorted union whose top bits are `bits` (contiguous). */
static keys_t keys_of(const mpiscope_set_t *all, uint64_t bits)
{
    keys_t k = {NULL, 0};
    for (size_t i = 0; i < all->n; i++)
        if (KEY_BITS(all->e[i].a) == bits) {
            if (!k.e)
                k.e = &all->e[i];
            k.n++;
        }
    return k;
}

void mpiscope_write_summary(mpiscope_final_t *f)
{
    mpiscope_thread_t *t = f->t;
    const double spt = f->sec_per_tick;

    /* This rank's keys, region names and MPI-IO files, for one union. */
    unsigned nslots_used = mpiscope_regions_count();
    mpiscope_entry_t io[64];
    size_t nio = mpiscope_io_files_entries(io, 64);
    size_t nmine = t->nused + t->nhused + nslots_used + nio + 2;
    mpiscope_entry_t *mine = calloc(nmine + 1, sizeof *mine);
    uint64_t *fk_a = calloc(t->nused + 1, sizeof *fk_a), *fk_b = calloc(t->nused + 1, sizeof *fk_b);
    uint64_t *hk_a = calloc(t->nhused + 1, sizeof *hk_a), *hk_b = calloc(t->nhused + 1, sizeof *hk_b);
    size_t m = 0;
    for (uint32_t u = 0; u < t->nused; u++) {
        uint32_t i = t->used[u];
        fk_a[u] = KEY_FUNC | (i / mpiscope_nslots);
        fk_b[u] = mpiscope_region_id(i % mpiscope_nslots);
        mine[m++] = (mpiscope_entry_t){fk_a[u], fk_b[u], NULL, 0};
    }
    short hist_func[MPISCOPE_NHIST > 0 ? MPISCOPE_NHIST : 1];
    for (int id = 0; id < MPISCOPE_NIDS; id++)
        if (mpiscope_func_hist[id] >= 0)
            hist_func[mpiscope_func_hist[id]] = (short)id;
    for (uint32_t u = 0; u < t->nhused; u++) {
        uint32_t i = t->hused[u], bucket = i % MPISCOPE_NBUCKETS, rest = i / MPISCOPE_NBUCKETS;
        uint64_t fid = (uint64_t)hist_func[rest / mpiscope_nslots];
        hk_a[u] = KEY_HIST | (fid << 8) | bucket;
        hk_b[u] = mpiscope_region_id(rest % mpiscope_nslots);
        mine[m++] = (mpiscope_entry_t){hk_a[u], hk_b[u], NULL, 0};
    }
    for (unsigned sl = 1; sl < nslots_used; sl++) {
        uint64_t id, parent, entries, ticks;
        uint32_t depth;
        const char *name;
        mpiscope_region_info(sl, &id, &parent, &depth, &entries, &ticks, &name);
        mine[m++] = (mpiscope_entry_t){KEY_NAME, id, name, (uint32_t)strlen(name)};
    }
    for (size_t i = 0; i < nio; i++)
        mine[m++] = (mpiscope_entry_t){KEY_NAME | 1, io[i].a, io[i].text, io[i].len};
    m += mpiscope_env_entries(&mine[m], KEY_NAME | 2, KEY_NAME | 3);   /* CPU list, variables */

    mpiscope_sites_out_t sites;
    mpiscope_sites_prepare(f, &sites);
    mpiscope_samples_by_fn_t byfn;
    mpiscope_samples_by_function(f, &byfn);     /* before counts: may set overflow */
    sites.extra_modules = byfn.mods;
    sites.nextra = byfn.mods ? byfn.nfn : 0;
    uint64_t counts[5] = {f->overflow != 0, (uint64_t)mpiscope_mpit_enabled(),
                          (uint64_t)mpiscope_timeline_enabled(), (uint64_t)mpiscope_sites_on,
                          (uint64_t)mpiscope_samples_enabled()}, totals[5];
    char path[MPISCOPE_PATH_MAX] = "", job[256] = "";
    mpiscope_counts_and_name(f, counts, totals, 5, path, sizeof path, job);
    mpiscope_set_t all;
    mpiscope_set_union(f->comm, mine, m, 1, &all);
    keys_t fkeys = keys_of(&all, KEY_FUNC), hkeys = keys_of(&all, KEY_HIST);
    keys_t names = keys_of(&all, KEY_NAME);
    mpiscope_set_t regions = {0}, iofiles = {0};      /* views for META (rank 0) */
    regions.e = calloc(names.n + 1, sizeof *regions.e);
    iofiles.e = calloc(names.n + 1, sizeof *iofiles.e);
    for (size_t i = 0; i < names.n; i++) {
        const mpiscope_entry_t *e = &names.e[i];
        if (KEY_VALUE(e->a) == 0)
            regions.e[regions.n++] = (mpiscope_entry_t){e->b, 0, e->text, e->len};
        else if (KEY_VALUE(e->a) == 1)
            iofiles.e[iofiles.n++] = *e;
    }

    /* Values: 9 rank-level metrics, then 4 per function key. */
    const size_t K = fkeys.n, N = MPISCOPE_RM_COUNT + MPISCOPE_FM_COUNT * K, H = hkeys.n;
    /* N values with every statistic, H (count, time) pairs only summed */
    mpiscope_rank_stats_t st;
    int ready = mpiscope_rank_stats_init(&st, N, 2 * H, 0);
    double rm[MPISCOPE_RM_COUNT] = {0};
    rm[MPISCOPE_RM_WALL] = f->wall;
    mpiscope_rank_totals(f, &rm[MPISCOPE_RM_MPI], &rm[MPISCOPE_RM_WAIT], &rm[MPISCOPE_RM_SYNC]);
    rm[MPISCOPE_RM_COMPUTE] = f->wall - rm[MPISCOPE_RM_MPI];
    mpiscope_env_metrics(f, &rm[MPISCOPE_RM_INIT]);
    for (uint32_t i = 0; i <= t->peer_mask; i++) {
        mpiscope_peer_slot_t *p = &t->peers[i];
        if (!p->key)
            continue;
        int on = mpiscope_on_node(f, (int)p->key - 1);
        rm[on ? MPISCOPE_RM_ON_MSGS : MPISCOPE_RM_OFF_MSGS] += (double)p->msgs;
        rm[on ? MPISCOPE_RM_ON_BYTES : MPISCOPE_RM_OFF_BYTES] += (double)p->bytes;
    }
    if (ready)
        memcpy(st.v, rm, sizeof rm);
    for (uint32_t u = 0; ready && u < t->nused; u++) {
        long k = find_key(fkeys, fk_a[u], fk_b[u]);
        if (k < 0)
            continue;
        mpiscope_stat_t *s = &t->stats[t->used[u]];
        double *v = &st.v[MPISCOPE_RM_COUNT + MPISCOPE_FM_COUNT * (size_t)k];
        v[MPISCOPE_FM_CALLS] = (double)s->calls;
        v[MPISCOPE_FM_BYTES_SENT] = (double)s->sent;
        v[MPISCOPE_FM_BYTES_RECV] = (double)s->recv;
        v[MPISCOPE_FM_TIME] = (double)s->ticks * spt;
    }
    for (uint32_t u = 0; ready && u < t->nhused; u++) {
        long k = find_key(hkeys, hk_a[u], hk_b[u]);
        if (k < 0)
            continue;
        st.extra[2 * k] = (double)t->hist[t->hused[u]].count;
        st.extra[2 * k + 1] = (double)t->hist[t->hused[u]].ticks * spt;
    }
    const int reduced = mpiscope_rank_stats_reduce(&st, f->comm, f->rank);
    uint32_t any_overflow = totals[0] != 0;
    mpiscope_mpit_out_t mpit = {0};
    if (totals[1])             /* collective: every rank, once any rank has MPISCOPE_MPIT=1 */
        mpiscope_mpit_gather(f, 1, &mpit);
    const uint64_t M = MPISCOPE_MPIT_NMETRICS * (uint64_t)mpit.names.n;   /* MPIT records */
    mpiscope_tl_out_t tl = {0};
    if (totals[2])             /* collective: every rank, once any rank has a timeline */
        mpiscope_timeline_gather(f, 1, &tl);
    const uint64_t T = totals[2] ? (uint64_t)tl.nrows * tl.nb : 0;     /* TIMELINE records */
    const int mods_on = totals[3] || totals[4];
    if (mods_on)               /* collective: every rank, once any rank records call sites or samples */
        mpiscope_sites_gather(f, 1, &sites);
    mpiscope_samples_sum_t samp = {0};
    if (totals[4])             /* collective: every rank, once any rank samples */
        mpiscope_samples_reduce(f, &byfn, &samp);

    mpiscope_summary_t *sum = NULL;
    mpiscope_hist_t *hist = NULL;
    mpiscope_buf_t head = {0}, meta = {0};
    MPI_File fh = MPI_FILE_NULL;
    if (mpiscope_open_output(f, &fh, path)) {
        /* MPIT, TIMELINE, CALLSITES, MODULES and SAMPLES only when recorded */
        const uint32_t NSEC = 3 + (totals[1] != 0) + (totals[2] != 0) + (totals[3] != 0) + (mods_on != 0) +
                              (totals[4] != 0);
        uint64_t off_sum = 64 + 32 * (uint64_t)NSEC, off_hist = off_sum + 56 * N, off_mpit = off_hist + 32 * H;
        uint64_t off_tl = off_mpit + 56 * M;
        uint64_t off_sites = off_tl + 56 * T;     /* rank 0 alone knows the sizes from here on */
        uint64_t off_mods = off_sites + 56 * sites.nsumm;
        uint64_t off_samp = off_mods + (uint64_t)sizeof(mpiscope_module_t) * sites.nmods;
        uint64_t off_meta = off_samp + 56 * samp.nrecs;
        uint64_t nsum = 0, nhist = 0;
        if (f->rank == 0) {
            sum = calloc(N + 1, sizeof *sum);
            hist = calloc(H + 1, sizeof *hist);
            for (size_t j = 0; reduced && j < N; j++) {
                int rank_level = j < MPISCOPE_RM_COUNT;
                size_t k = rank_level ? 0 : (j - MPISCOPE_RM_COUNT) / MPISCOPE_FM_COUNT;
                sum[j] = mpiscope_rank_stats_record(
                    &st, j, rank_level ? MPISCOPE_SUMMARY_RANK_LEVEL : (uint16_t)KEY_VALUE(fkeys.e[k].a),
                    (uint16_t)(rank_level ? j : (j - MPISCOPE_RM_COUNT) % MPISCOPE_FM_COUNT),
                    rank_level ? 0 : fkeys.e[k].b);
            }
            for (size_t k = 0; reduced && k < H; k++)
                hist[k] = (mpiscope_hist_t){MPISCOPE_ALL_RANKS, (uint16_t)(KEY_VALUE(hkeys.e[k].a) >> 8),
                                            (uint8_t)(hkeys.e[k].a & 0xff), 0, hkeys.e[k].b,
                                            (uint64_t)st.extra_sum[2 * k], st.extra_sum[2 * k + 1]};
            nsum = N;
            nhist = H;
            mpiscope_meta_common(f, &meta, job, &regions, &iofiles);
            if (totals[1])
                mpiscope_mpit_meta(&mpit, &meta);
            if (totals[2])
                mpiscope_timeline_meta(&tl, &meta);
            if (totals[3])
                mpiscope_sites_meta(&sites, &meta);
            if (totals[4])
                mpiscope_samples_meta(&meta);
            mpiscope_env_meta(&meta, names.e, names.n, KEY_NAME | 2, KEY_NAME | 3);
            mpiscope_header_t h;
            mpiscope_header_fill(f, &h, MPISCOPE_MODE_SUMMARY, NSEC, any_overflow, off_meta + meta.len);
            mpiscope_section_t sec[8] = {
                {MPISCOPE_SEC_SUMMARY, 1, off_sum, 56 * N, N},
                {MPISCOPE_SEC_HIST, 1, off_hist, 32 * H, H},
                {MPISCOPE_SEC_META, 1, off_meta, meta.len, meta.len},
            };
            uint32_t k = 3;
            if (totals[1])
                sec[k++] = (mpiscope_section_t){MPISCOPE_SEC_MPIT, 1, off_mpit, 56 * M, M};
            if (totals[2])
                sec[k++] = (mpiscope_section_t){MPISCOPE_SEC_TIMELINE, 1, off_tl, 56 * T, T};
            if (totals[3])
                sec[k++] = (mpiscope_section_t){MPISCOPE_SEC_CALLSITES, 1, off_sites, 56 * sites.nsumm,
                                                sites.nsumm};
            if (mods_on)
                sec[k++] = (mpiscope_section_t){MPISCOPE_SEC_MODULES, 1, off_mods,
                                                sizeof(mpiscope_module_t) * (uint64_t)sites.nmods, sites.nmods};
            if (totals[4])
                sec[k++] = (mpiscope_section_t){MPISCOPE_SEC_SAMPLES, 1, off_samp, 56 * samp.nrecs, samp.nrecs};
            mpiscope_buf_put(&head, &h, sizeof h);
            mpiscope_buf_put(&head, sec, sizeof sec[0] * NSEC);
        }
        int r0 = f->rank == 0;
        uint64_t off[9] = {0, off_sum, off_hist, off_mpit, off_tl, off_sites, off_mods, off_samp, off_meta};
        uint64_t len[9] = {head.len, 56 * nsum, 32 * nhist, 56ull * (r0 ? mpit.nsum : 0),
                           56ull * (r0 ? tl.nsum : 0), 56 * (r0 ? sites.nsumm : 0),
                           r0 ? (uint64_t)sizeof(mpiscope_module_t) * sites.nmods : 0, 56 * samp.nrecs, meta.len};
        const void *ptr[9] = {head.data, sum, hist, mpit.sum, tl.sum, sites.summ, sites.mods, samp.recs, meta.data};
        mpiscope_finish_file(f, &fh, path, off, len, ptr, 9);
    }
    mpiscope_buf_free(&head);
    mpiscope_buf_free(&meta);
    mpiscope_mpit_out_free(&mpit);
    mpiscope_timeline_out_free(&tl);
    mpiscope_sites_out_free(&sites);
    mpiscope_samples_sum_free(&samp);
    mpiscope_samples_by_function_free(&byfn);
    free(sum);
    free(hist);
    mpiscope_rank_stats_free(&st);
    free(mine);
    free(fk_a);
    free(fk_b);
    free(hk_a);
    free(hk_b);
    free(regions.e);
    free(iofiles.e);
    mpiscope_set_free(&all);
}
