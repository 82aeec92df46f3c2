/*
 * samples_out.h - sampled compute reduced over ranks (samples_out.c), for
 * summary.c (summary mode).
 */
#ifndef MPISCOPE_SAMPLES_OUT_H
#define MPISCOPE_SAMPLES_OUT_H

#include "mpiscope.h"
#include "tables/sampling.h"

#pragma GCC visibility push(hidden)

typedef struct {
    mpiscope_sample_summary_t *recs;  /* rank 0: the SAMPLES records */
    uint64_t nrecs;
} mpiscope_samples_sum_t;

/* Collective over f->comm, once any rank samples: by (this rank's) reduced to rank 0. */
void mpiscope_samples_reduce(mpiscope_final_t *f, const mpiscope_samples_by_fn_t *by, mpiscope_samples_sum_t *o);
void mpiscope_samples_sum_free(mpiscope_samples_sum_t *o);

#pragma GCC visibility pop

#endif
