/*
 * callsites_out.c - call sites in the profile (docs/profile-format.md,
 * CALLSITES and MODULES): every rank's records in full mode, their
 * reduction over ranks in summary mode, the sites' frames in META
 * "callsites" and the objects they are in (MODULES), each once.
 *
 * Sites and modules are merged over ranks with the binomial-tree union
 * (merge.c) by their ids, which every rank computes alike (a hash of the
 * function and the frames as (module, offset); modules by build ID), so a
 * program loaded at different addresses on different ranks gives one site.
 * In summary mode the union also carries the (site, function) and (site,
 * bucket) keys, and three reductions to rank 0 give sums, MINLOC and MAXLOC
 * as summary.c does for functions: O(sites) per rank, never O(P).
 */
#include <float.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpiscope.h"
#include "output/callsites_out.h"
#include "tables/modules.h"

/* What a union entry is: the low byte of b. */
enum { E_SITE = 1, E_MODULE = 2, E_TOTAL = 3, E_BUCKET = 4 };
#define E_KIND(b) ((unsigned)((b) & 0xFFu))
#define E_FUNC(b) ((unsigned)(((b) >> 16) & 0xFFFFu))
#define E_BUCKETNO(b) ((unsigned)(((b) >> 8) & 0xFFu))

/* This rank's sites with calls: registry index i; lost calls: MPISCOPE_NIDS rows. */
static uint32_t count_records(const mpiscope_sites_sum_t *s)
{
    uint32_t n = 0;
    for (unsigned i = 0; i < s->n; i++) {
        if (!s->acc[i].calls)
            continue;
        n++;
        for (unsigned b = 0; b < MPISCOPE_NBUCKETS; b++)
            n += s->hist[(size_t)i * MPISCOPE_NBUCKETS + b].count != 0;
    }
    for (unsigned id = 0; id < MPISCOPE_NIDS; id++)
        n += s->lost[id].calls != 0;
    return n;
}

static mpiscope_callsite_t total_rec(const mpiscope_final_t *f, unsigned func, uint64_t site,
                                     const mpiscope_siteacc_t *a)
{
    const double spt = f->sec_per_tick;
    return (mpiscope_callsite_t){(uint32_t)f->rank, (uint16_t)func, MPISCOPE_SITE_TOTAL, 0, site, a->calls,
                                 a->sent, a->recv, (double)a->ticks * spt, (double)a->min * spt,
                                 (double)a->max * spt};
}

uint32_t mpiscope_sites_prepare(mpiscope_final_t *f, mpiscope_sites_out_t *o)
{
    memset(o, 0, sizeof *o);
    if (!mpiscope_sites_on || !mpiscope_sites_sum(&o->sum))
        return 0;
    const mpiscope_sites_sum_t *s = &o->sum;
    uint32_t n = count_records(s), k = 0;
    o->recs = calloc(n ? n : 1, sizeof *o->recs);
    if (!o->recs)
        return 0;
    for (unsigned i = 0; i < s->n; i++) {
        if (!s->acc[i].calls)
            continue;
        const mpiscope_sitedef_t *d = mpiscope_site_def(i);
        o->recs[k++] = total_rec(f, d->func, d->id, &s->acc[i]);
        for (unsigned b = 0; b < MPISCOPE_NBUCKETS; b++) {
            const mpiscope_hbin_t *h = &s->hist[(size_t)i * MPISCOPE_NBUCKETS + b];
            if (h->count)
                o->recs[k++] = (mpiscope_callsite_t){(uint32_t)f->rank, d->func, (uint8_t)b, 0, d->id,
                                                     h->count, 0, 0, (double)h->ticks * f->sec_per_tick,
                                                     0, 0};
        }
    }
    for (unsigned id = 0; id < MPISCOPE_NIDS; id++)
        if (s->lost[id].calls)
            o->recs[k++] = total_rec(f, id, 0, &s->lost[id]);
    o->nrecs = k;
    return k;
}

/* The JSON of a site's definition: {"function": F, "frames": [["module", offset], ...]}. */
static void def_json(mpiscope_buf_t *b, const mpiscope_sitedef_t *d)
{
    mpiscope_buf_printf(b, "{\"function\": %u, \"frames\": [", (unsigned)d->func);
    for (unsigned k = 0; k < d->nframes; k++) {
        const mpiscope_modinfo_t *m = mpiscope_module(d->module[k]);
        mpiscope_buf_printf(b, "%s[\"%016llx\", %llu]", k ? ", " : "",
                            (unsigned long long)(m ? m->rec.key : 0), (unsigned long long)d->offset[k]);
    }
    mpiscope_buf_str(b, "]}");
}

void mpiscope_sites_gather(mpiscope_final_t *f, int summary, mpiscope_sites_out_t *o)
{
    const mpiscope_sites_sum_t *s = &o->sum;
    unsigned nmod = mpiscope_modules_count();
    char *seen = calloc(nmod + 1, 1);
    size_t cap = 1 + nmod + (size_t)s->n * (2 + MPISCOPE_NBUCKETS) + (s->lost ? MPISCOPE_NIDS : 0);
    mpiscope_entry_t *e = calloc(cap, sizeof *e);
    mpiscope_buf_t *texts = calloc(s->n + 1, sizeof *texts);
    size_t m = 0;
    for (unsigned i = 0; e && texts && seen && i < s->n; i++) {
        if (!s->acc[i].calls)
            continue;
        const mpiscope_sitedef_t *d = mpiscope_site_def(i);
        def_json(&texts[i], d);
        e[m++] = (mpiscope_entry_t){d->id, E_SITE, texts[i].data, (uint32_t)texts[i].len};
        for (unsigned k = 0; k < d->nframes; k++) {
            const mpiscope_modinfo_t *mi = mpiscope_module(d->module[k]);
            if (mi && !seen[d->module[k]]) {
                seen[d->module[k]] = 1;
                e[m++] = (mpiscope_entry_t){mi->rec.key, E_MODULE, (const char *)&mi->rec,
                                            (uint32_t)sizeof mi->rec};
            }
        }
        if (summary) {
            e[m++] = (mpiscope_entry_t){d->id, E_TOTAL | (uint64_t)d->func << 16, NULL, 0};
            for (unsigned b = 0; b < MPISCOPE_NBUCKETS; b++)
                if (s->hist[(size_t)i * MPISCOPE_NBUCKETS + b].count)
                    e[m++] = (mpiscope_entry_t){d->id, E_BUCKET | b << 8 | (uint64_t)d->func << 16, NULL, 0};
        }
    }
    for (uint32_t x = 0; e && seen && x < o->nextra; x++) {
        int i = o->extra_modules[x];
        const mpiscope_modinfo_t *mi = i >= 0 ? mpiscope_module(i) : NULL;
        if (mi && !seen[i]) {
            seen[i] = 1;
            e[m++] = (mpiscope_entry_t){mi->rec.key, E_MODULE, (const char *)&mi->rec, (uint32_t)sizeof mi->rec};
        }
    }
    for (unsigned id = 0; e && summary && s->lost && id < MPISCOPE_NIDS; id++)
        if (s->lost[id].calls)
            e[m++] = (mpiscope_entry_t){0, E_TOTAL | (uint64_t)id << 16, NULL, 0};
    mpiscope_set_union(f->comm, e, m, summary, &o->defs);
    for (unsigned i = 0; texts && i < s->n; i++)
        mpiscope_buf_free(&texts[i]);
    free(texts);
    free(e);
    free(seen);

    /* rank 0: the modules */
    size_t nm = 0;
    for (size_t i = 0; i < o->defs.n; i++)
        nm += E_KIND(o->defs.e[i].b) == E_MODULE && o->defs.e[i].len == sizeof(mpiscope_module_t);
    o->mods = calloc(nm ? nm : 1, sizeof *o->mods);
    for (size_t i = 0; o->mods && i < o->defs.n; i++)
        if (E_KIND(o->defs.e[i].b) == E_MODULE && o->defs.e[i].len == sizeof(mpiscope_module_t))
            memcpy(&o->mods[o->nmods++], o->defs.e[i].text, sizeof *o->mods);
    if (summary)
        mpiscope_sites_reduce(f, o);
}

/* Summary mode: per (site, function) the four function metrics reduced as
 * summary.c reduces functions (sum, non-zero ranks, MINLOC, MAXLOC), the
 * fastest and slowest single call with their ranks, and per (site, bucket)
 * the calls and time summed. Every rank calls it with the same keys. */
void mpiscope_sites_reduce(mpiscope_final_t *f, mpiscope_sites_out_t *o)
{
    const mpiscope_sites_sum_t *s = &o->sum;
    const mpiscope_set_t *all = &o->defs;
    size_t K = 0, B = 0;
    for (size_t i = 0; i < all->n; i++) {
        K += E_KIND(all->e[i].b) == E_TOTAL;
        B += E_KIND(all->e[i].b) == E_BUCKET;
    }
    const size_t NM = MPISCOPE_FM_COUNT;                 /* calls, sent, recv, time */
    const size_t N = NM * K;
    /* per site NM values, per (site, bucket) calls and time summed, per site its fastest and
     * slowest call (rank_stats.c) */
    mpiscope_rank_stats_t st;
    int ready = mpiscope_rank_stats_init(&st, N, 2 * B, K);
    /* This rank's values, by key order: registry index of each site id. */
    size_t k = 0, bk = 0;
    for (size_t i = 0; ready && i < all->n; i++) {
        const mpiscope_entry_t *e = &all->e[i];
        unsigned kind = E_KIND(e->b);
        if (kind != E_TOTAL && kind != E_BUCKET)
            continue;
        const mpiscope_siteacc_t *a = NULL;
        const mpiscope_hbin_t *h = NULL;
        if (e->a == 0) {
            a = kind == E_TOTAL && E_FUNC(e->b) < MPISCOPE_NIDS ? &s->lost[E_FUNC(e->b)] : NULL;
        } else {
            for (unsigned r = 0; r < s->n; r++) {
                const mpiscope_sitedef_t *d = mpiscope_site_def(r);
                if (d->id == e->a && s->acc[r].calls) {
                    a = &s->acc[r];
                    h = &s->hist[(size_t)r * MPISCOPE_NBUCKETS + E_BUCKETNO(e->b)];
                    break;
                }
            }
        }
        if (kind == E_TOTAL) {
            double *v = &st.v[NM * k];
            if (a && a->calls) {
                v[MPISCOPE_FM_CALLS] = (double)a->calls;
                v[MPISCOPE_FM_BYTES_SENT] = (double)a->sent;
                v[MPISCOPE_FM_BYTES_RECV] = (double)a->recv;
                v[MPISCOPE_FM_TIME] = (double)a->ticks * f->sec_per_tick;
            }
            st.lo[k] = a && a->calls ? (double)a->min * f->sec_per_tick : DBL_MAX;
            st.hi[k] = a && a->calls ? (double)a->max * f->sec_per_tick : 0.0;
            k++;
        } else {
            if (h && h->count) {
                st.extra[2 * bk] = (double)h->count;
                st.extra[2 * bk + 1] = (double)h->ticks * f->sec_per_tick;
            }
            bk++;
        }
    }
    if (!mpiscope_rank_stats_reduce(&st, f->comm, f->rank) || f->rank != 0)
        goto out;
    o->summ = calloc((NM + 2) * K + 2 * B + 1, sizeof *o->summ);
    if (!o->summ)
        goto out;
    k = bk = 0;
    for (size_t i = 0; i < all->n; i++) {
        const mpiscope_entry_t *e = &all->e[i];
        unsigned kind = E_KIND(e->b);
        uint16_t func = (uint16_t)E_FUNC(e->b);
        if (kind == E_TOTAL) {
            for (size_t m = 0; m < NM; m++)
                o->summ[o->nsumm++] = mpiscope_rank_stats_record(&st, NM * k + m, func, (uint16_t)m, e->a);
            const mpiscope_val_rank_t *lo = &st.min[N + k], *hi = &st.max[N + k];
            o->summ[o->nsumm++] = (mpiscope_summary_t){func, MPISCOPE_SM_CALL_MIN, 0, e->a,
                                                       lo->v == DBL_MAX ? 0.0 : lo->v, 0, 0,
                                                       (uint32_t)lo->rank, 0, 0};
            o->summ[o->nsumm++] = (mpiscope_summary_t){func, MPISCOPE_SM_CALL_MAX, 0, e->a, 0, hi->v, 0,
                                                       0, (uint32_t)hi->rank, 0};
            k++;
        } else if (kind == E_BUCKET) {
            uint16_t b = (uint16_t)E_BUCKETNO(e->b);
            o->summ[o->nsumm++] = (mpiscope_summary_t){func, (uint16_t)(MPISCOPE_SM_BUCKET_CALLS + b), 0, e->a,
                                                       0, 0, st.extra_sum[2 * bk], 0, 0, 0};
            o->summ[o->nsumm++] = (mpiscope_summary_t){func, (uint16_t)(MPISCOPE_SM_BUCKET_TIME + b), 0, e->a,
                                                       0, 0, st.extra_sum[2 * bk + 1], 0, 0, 0};
            bk++;
        }
    }
out:
    mpiscope_rank_stats_free(&st);
}

void mpiscope_sites_meta(const mpiscope_sites_out_t *o, mpiscope_buf_t *meta)
{
    if (!meta->len || meta->data[meta->len - 1] != '}')
        return;
    meta->len--;
    mpiscope_buf_printf(meta, ", \"callsites\": {\"depth\": %u, \"max_callsites\": %u, \"sites\": {",
                        mpiscope_sites_depth(), mpiscope_sites_max());
    int first = 1;
    for (size_t i = 0; i < o->defs.n; i++) {
        const mpiscope_entry_t *e = &o->defs.e[i];
        if (E_KIND(e->b) != E_SITE)
            continue;
        mpiscope_buf_printf(meta, "%s\"%016llx\": ", first ? "" : ", ", (unsigned long long)e->a);
        mpiscope_buf_put(meta, e->text, e->len);
        first = 0;
    }
    mpiscope_buf_str(meta, "}}}");
}

/* A snapshot's call sites (snapshot.c, docs/profile-format.md "Snapshot
 * spool"): this rank's CALLSITE records, then a u32 length and the JSON
 * {"callsites": META "callsites", "modules": [...]}, padded to 8. */
uint32_t mpiscope_sites_chunk(mpiscope_final_t *f, mpiscope_buf_t *out)
{
    mpiscope_sites_out_t o;
    uint32_t n = mpiscope_sites_prepare(f, &o);
    if (!o.recs) {
        mpiscope_sites_out_free(&o);
        return 0;
    }
    mpiscope_buf_put(out, o.recs, sizeof *o.recs * n);
    mpiscope_buf_t js = {0};
    mpiscope_buf_printf(&js, "{\"callsites\": {\"depth\": %u, \"max_callsites\": %u, \"sites\": {",
                        mpiscope_sites_depth(), mpiscope_sites_max());
    unsigned nmod = mpiscope_modules_count();
    char *seen = calloc(nmod + 1, 1);
    int first = 1;
    for (unsigned i = 0; i < o.sum.n; i++) {
        if (!o.sum.acc[i].calls)
            continue;
        const mpiscope_sitedef_t *d = mpiscope_site_def(i);
        mpiscope_buf_printf(&js, "%s\"%016llx\": ", first ? "" : ", ", (unsigned long long)d->id);
        def_json(&js, d);
        first = 0;
        for (unsigned k = 0; seen && k < d->nframes; k++)
            if (d->module[k] >= 0)
                seen[d->module[k]] = 1;
    }
    mpiscope_buf_str(&js, "}}, \"modules\": [");
    first = 1;
    for (unsigned i = 0; seen && i < nmod; i++) {
        const mpiscope_modinfo_t *m = mpiscope_module((int)i);
        if (!seen[i] || !m)
            continue;
        const mpiscope_module_t *r = &m->rec;
        mpiscope_buf_printf(&js, "%s{\"key\": \"%016llx\", \"kind\": %u, \"file_size\": %llu, "
                                 "\"mtime\": %.9f, \"build_id\": \"", first ? "" : ", ",
                            (unsigned long long)r->key, (unsigned)r->kind,
                            (unsigned long long)r->file_size, r->mtime);
        for (unsigned k = 0; k < r->build_id_len; k++)
            mpiscope_buf_printf(&js, "%02x", r->build_id[k]);
        mpiscope_buf_str(&js, "\", \"path\": ");
        mpiscope_buf_json_string(&js, r->path);
        mpiscope_buf_str(&js, "}");
        first = 0;
    }
    mpiscope_buf_str(&js, "]}");
    uint32_t len = (uint32_t)js.len;
    static const char zero[8];
    mpiscope_buf_put(out, &len, 4);
    mpiscope_buf_put(out, js.data, js.len);
    mpiscope_buf_put(out, zero, (8 - out->len % 8) % 8);
    mpiscope_buf_free(&js);
    free(seen);
    mpiscope_sites_out_free(&o);
    return n;
}

void mpiscope_sites_out_free(mpiscope_sites_out_t *o)
{
    mpiscope_sites_sum_free(&o->sum);
    mpiscope_set_free(&o->defs);
    free(o->recs);
    free(o->summ);
    free(o->mods);
    memset(o, 0, sizeof *o);
}
