/*
 * stacking.c - find, once, the definition of every wrapped MPI function that
 * comes after mpiscope in the symbol search order, so that the wrappers call
 * it instead of PMPI_<Name> and a PMPI tool preloaded after mpiscope still
 * sees every call (docs/runtime.md, "Stacking with other PMPI tools").
 *
 * RATIONALE: a tool loaded BEFORE mpiscope whose wrappers call PMPI_<Name>
 * hides those calls from mpiscope. We do not define PMPI_<Name> ourselves to
 * catch them: that would replace the MPI's own profiling layer for the whole
 * process (Open MPI's Fortran bindings call PMPI_* and are counted by our
 * Fortran wrappers, so they would count twice), and every PMPI call of the
 * runtime itself would need one more indirection. Instead the situation is
 * detected here and named in one warning.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpiscope.h"
#include "stacking.h"

static int stacking_done;

static void stacking_anchor(void)
{
}

/* The launcher's rank of this process, so only one process warns before
 * MPI_Init (which a tool loaded first may keep from ever reaching us). */
static int stacking_first_process(void)
{
    static const char *const vars[] = {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK",
                                       "SLURM_PROCID"};
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
        const char *v = getenv(vars[i]);
        if (v && *v)
            return strcmp(v, "0") == 0;
    }
    return 1;
}

void mpiscope_next_resolve(void)
{
    if (stacking_done)
        return;
    stacking_done = 1;
    Dl_info self, di;
    if (!dladdr((void *)stacking_anchor, &self))
        return;                 /* no dynamic loader (fully static): PMPI_<Name> stays */
    const char *before = NULL, *before_fn = NULL;
    unsigned nbefore = 0;
    for (unsigned i = 0; i < mpiscope_next_count; i++) {
        const mpiscope_next_entry_t *e = &mpiscope_next_table[i];
        void *next = dlsym(RTLD_NEXT, e->name);
        /* never ourselves (a second copy of the wrappers would loop) */
        if (next && dladdr(next, &di) && di.dli_fbase != self.dli_fbase)
            memcpy(e->slot, &next, sizeof next);
        /* The first definition in the process: ours, or the MPI's itself when
         * mpiscope is linked statically into a program that does not export
         * its symbols; anything else is a tool that comes before us. */
        void *first = dlsym(RTLD_DEFAULT, e->name);
        if (first && first != next && dladdr(first, &di) && di.dli_fbase != self.dli_fbase &&
            nbefore++ == 0) {
            before = di.dli_fname && *di.dli_fname ? di.dli_fname : "the program itself";
            before_fn = e->name;
        }
    }
    if (nbefore && stacking_first_process())
        fprintf(stderr,
                "mpiscope: warning: %s is loaded before mpiscope and defines %s (%u wrapped MPI "
                "functions in all): the calls it passes on to PMPI_* are not seen by mpiscope; "
                "load mpiscope first (LD_PRELOAD=libmpiscope.so:%s, as mpiscope run does)\n",
                before, before_fn, nbefore, before);
}

__attribute__((constructor)) static void stacking_init(void)
{
    mpiscope_next_resolve();
}
