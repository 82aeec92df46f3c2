/*
 * sampling.h - sampled compute (sampling.c, docs/sampling.md): per-thread
 * CPU-time timers whose signal records the interrupted program counter, or
 * the MPI function the thread is in; written as SAMPLES (kind 16).
 */
#ifndef MPISCOPE_SAMPLING_H
#define MPISCOPE_SAMPLING_H

#include <stdint.h>

#include "mpiscope.h"

#pragma GCC visibility push(hidden)

void mpiscope_samples_init(void);                     /* life_start, after the settings */
int mpiscope_samples_enabled(void);                   /* MPISCOPE_SAMPLE > 0 on this rank */
int mpiscope_samples_thread_init(mpiscope_thread_t *t);   /* a new table: its sample table; 0 if no memory */
void mpiscope_samples_thread_start(mpiscope_thread_t *t); /* on the thread itself: its timer */
void mpiscope_samples_thread_stop(mpiscope_thread_t *t);  /* on the thread itself, as it exits */
void mpiscope_samples_stop(void);                     /* MPI_Finalize entry: every timer deleted */

/* wrappers/pthread_create.c: a thread started now is the program's, to be
 * sampled (MPISCOPE_SAMPLE set, not inside MPI_Init or an MPI call); it then
 * runs mpiscope_samples_thread_main(start), which frees start (malloc'd). */
typedef struct {
    void *(*fn)(void *);
    void *arg;
} mpiscope_thread_start_t;
int mpiscope_samples_wants_thread(void);
void *mpiscope_samples_thread_main(void *start);

typedef struct {
    mpiscope_sample_t *recs;     /* this rank's SAMPLES records (module: MODULES key) */
    int32_t *module;             /* [nrecs] modules.c index of each record, -1 none */
    uint32_t nrecs;
    uint64_t total;              /* samples on this rank, every thread */
} mpiscope_samples_out_t;

/* This rank's records: the top MPISCOPE_SAMPLE_MAX (thread, address) rows by
 * samples, the rest summed into one "other" row per thread (no MPI call). */
uint32_t mpiscope_samples_prepare(mpiscope_final_t *f, mpiscope_samples_out_t *o);
/* Summary mode: this rank's samples by function (every thread summed). */
typedef struct {
    uint64_t module, offset, samples;    /* MODULES key (0: none); offset of the function's start */
    int32_t mod;                         /* modules.c index, -1 none */
} mpiscope_sample_fn_t;
typedef struct {
    mpiscope_sample_fn_t *fn;    /* compute functions, most samples first: the top MPISCOPE_SAMPLE_MAX */
    uint32_t nfn;
    int32_t *mods;               /* [nfn] their modules.c indices (MODULES records wanted) */
    uint64_t compute;            /* every sample outside MPI: fn, those past them, and lost */
    uint64_t mpi[MPISCOPE_NIDS + 1]; /* in each wrapped MPI function; [MPISCOPE_NIDS]: MPI layer */
    uint64_t total;
} mpiscope_samples_by_fn_t;
/* No MPI call: fills o (zeros when not sampling; fn NULL if no memory). */
void mpiscope_samples_by_function(mpiscope_final_t *f, mpiscope_samples_by_fn_t *o);
void mpiscope_samples_by_function_free(mpiscope_samples_by_fn_t *o);
void mpiscope_samples_meta(mpiscope_buf_t *meta);     /* rank 0: + META "samples" */
void mpiscope_samples_out_free(mpiscope_samples_out_t *o);

#pragma GCC visibility pop

#endif
