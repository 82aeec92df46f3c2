/*
 * callsites.h - the process's call sites (callsites.c) as the writers see
 * them (output/callsites_out.c, snapshot.c): the registry of sites and every
 * thread's counts summed per site.
 */
#ifndef MPISCOPE_CALLSITES_H
#define MPISCOPE_CALLSITES_H

#include <stdint.h>

#include "mpiscope.h"

#pragma GCC visibility push(hidden)

#define MPISCOPE_SITE_DEPTH_MAX 16     /* MPISCOPE_CALLSITE_DEPTH's upper bound */

typedef struct {                       /* one site: a function and its frames, innermost first */
    uint64_t id;                       /* the file's site id: FNV-1a 64 of function and frames */
    uint16_t func;
    uint16_t nframes;
    int32_t module[MPISCOPE_SITE_DEPTH_MAX];   /* modules.c index, -1: in no loaded object */
    uint64_t offset[MPISCOPE_SITE_DEPTH_MAX];  /* return address - load bias (Python: the line) */
} mpiscope_sitedef_t;

typedef struct {
    uint64_t calls, ticks, min, max, sent, recv;
} mpiscope_siteacc_t;

typedef struct {                       /* this rank's call sites: every thread summed */
    unsigned n;                        /* registry entries covered */
    mpiscope_siteacc_t *acc;           /* [n] */
    mpiscope_hbin_t *hist;             /* [n][MPISCOPE_NBUCKETS] */
    mpiscope_siteacc_t *lost;          /* [MPISCOPE_NIDS]: calls no site could be kept for */
    uint32_t overflow;                 /* MPISCOPE_OVF_CALLSITES / _MODULES */
} mpiscope_sites_sum_t;

void mpiscope_sites_init(void);                      /* life_start, after the settings */
int mpiscope_sites_thread_init(mpiscope_thread_t *t);  /* a new table; 0 if no memory */
unsigned mpiscope_sites_depth(void);
unsigned mpiscope_sites_max(void);
unsigned mpiscope_sites_count(void);                 /* registry entries so far */
const mpiscope_sitedef_t *mpiscope_site_def(unsigned i);
/* Sum every thread's sites (a snapshot thread may call it while they run). */
int mpiscope_sites_sum(mpiscope_sites_sum_t *out);
void mpiscope_sites_sum_free(mpiscope_sites_sum_t *s);
uint32_t mpiscope_sites_overflow(void);
/* The module (modules.c index, -1 none) an address is in, under the sites lock
 * (sampling.c: the sampled program counters, at MPI_Finalize). */
int mpiscope_sites_module_at(uintptr_t addr);

/* lifecycle.c: the threads with tables so far. */
unsigned mpiscope_threads_list(mpiscope_thread_t **out, unsigned cap);

#pragma GCC visibility pop

#endif
