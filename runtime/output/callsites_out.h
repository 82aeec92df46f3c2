/*
 * callsites_out.h - call sites in the profile (callsites_out.c), for the
 * writers (writer.c full mode, summary.c summary mode).
 */
#ifndef MPISCOPE_CALLSITES_OUT_H
#define MPISCOPE_CALLSITES_OUT_H

#include "mpiscope.h"
#include "tables/callsites.h"

#pragma GCC visibility push(hidden)

typedef struct {
    mpiscope_sites_sum_t sum;        /* this rank's sites, every thread summed */
    mpiscope_callsite_t *recs;       /* full mode: this rank's CALLSITES records */
    uint32_t nrecs;
    mpiscope_set_t defs;             /* union over ranks: sites, modules (summary: and the keys) */
    mpiscope_summary_t *summ;        /* summary mode, rank 0: the CALLSITES records */
    uint64_t nsumm;
    mpiscope_module_t *mods;         /* rank 0: the MODULES records */
    uint32_t nmods;
    const int32_t *extra_modules;    /* set before the gather: more modules.c indices (-1 skipped) whose
                                        MODULES records are wanted (sampled addresses, sampling.c) */
    uint32_t nextra;
} mpiscope_sites_out_t;

/* This rank's records (no MPI call); returns how many. */
uint32_t mpiscope_sites_prepare(mpiscope_final_t *f, mpiscope_sites_out_t *o);
/* Collective over f->comm once any rank records call sites: the union of
 * sites and modules; in summary mode also the reduction (mpiscope_sites_reduce). */
void mpiscope_sites_gather(mpiscope_final_t *f, int summary, mpiscope_sites_out_t *o);
void mpiscope_sites_reduce(mpiscope_final_t *f, mpiscope_sites_out_t *o);
/* Rank 0: META "callsites" appended to the META object being built. */
void mpiscope_sites_meta(const mpiscope_sites_out_t *o, mpiscope_buf_t *meta);
void mpiscope_sites_out_free(mpiscope_sites_out_t *o);
/* A snapshot's call sites appended to out (no MPI call); returns the records. */
uint32_t mpiscope_sites_chunk(mpiscope_final_t *f, mpiscope_buf_t *out);

#pragma GCC visibility pop

#endif
