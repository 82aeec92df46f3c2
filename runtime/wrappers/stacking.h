/*
 * stacking.h - the table of "next definition" pointers the generated
 * wrappers call (mpiscope_next.h declares each pointer); stacking.c fills it.
 */
#ifndef MPISCOPE_STACKING_H
#define MPISCOPE_STACKING_H

#pragma GCC visibility push(hidden)

typedef struct {
    const char *name;            /* "MPI_Send" */
    void *slot;                  /* &mpiscope_next_MPI_Send */
} mpiscope_next_entry_t;

extern const mpiscope_next_entry_t mpiscope_next_table[];   /* mpiscope_wrappers.c */
extern const unsigned mpiscope_next_count;

#pragma GCC visibility pop

#endif
