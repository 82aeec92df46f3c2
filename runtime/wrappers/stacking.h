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

/* 1 if another copy of mpiscope comes after this one in the process: this
 * copy then stands down (every wrapper passes its call on); decided at the
 * first MPI_Init / MPI_Init_thread (or PMPI_ hook) reached. */
int mpiscope_stand_down(void);
/* World rank 0 after MPI_Init: the tool-before-mpiscope warning, or the note
 * that another copy stood down for this one. */
void mpiscope_stacking_report(void);

#pragma GCC visibility pop

#endif
