/*
 * pmpi_lifecycle.c - libmpiscope.so only: PMPI_Init, PMPI_Init_thread and
 * PMPI_Finalize, so that a PMPI tool loaded before mpiscope whose MPI_Init or
 * MPI_Finalize calls PMPI_* (mpiP, IPM, ...) never keeps mpiscope from
 * starting or from writing its profile (docs/runtime.md, "Stacking").
 *
 * RATIONALE: only these three. They are called once per process and what
 * they add is idempotent (mpiscope_init and mpiscope_finalize do their work
 * once, whichever entry comes first, and a nested entry only passes on), so
 * taking over the MPI's own PMPI_ name costs nothing and can count nothing
 * twice; every other PMPI_ name stays the MPI's (stacking.c says why). Not in
 * libmpiscope.a: a program linked statically against the MPI would get two
 * definitions, and in a program linked with mpiscope nothing comes first.
 * The MPI's own definitions are the next ones in the search order.
 */
#define _GNU_SOURCE
#include <dlfcn.h>

#include "mpiscope.h"

static __typeof__(PMPI_Init) *hook_init;
static __typeof__(PMPI_Init_thread) *hook_init_thread;
static __typeof__(PMPI_Finalize) *hook_finalize;

static void hook_resolve(void)
{
    void *p;
    if (!hook_init && (p = dlsym(RTLD_NEXT, "PMPI_Init")) != NULL)
        *(void **)&hook_init = p;
    if (!hook_init_thread && (p = dlsym(RTLD_NEXT, "PMPI_Init_thread")) != NULL)
        *(void **)&hook_init_thread = p;
    if (!hook_finalize && (p = dlsym(RTLD_NEXT, "PMPI_Finalize")) != NULL)
        *(void **)&hook_finalize = p;
}

int PMPI_Init(int *argc, char ***argv)
{
    hook_resolve();
    if (!hook_init || !hook_init_thread)
        return MPI_ERR_OTHER;
    return mpiscope_init(0, argc, argv, 0, NULL, hook_init, hook_init_thread);
}

int PMPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    hook_resolve();
    if (!hook_init || !hook_init_thread)
        return MPI_ERR_OTHER;
    return mpiscope_init(1, argc, argv, required, provided, hook_init, hook_init_thread);
}

int PMPI_Finalize(void)
{
    hook_resolve();
    mpiscope_finalize();
    return hook_finalize ? hook_finalize() : MPI_ERR_OTHER;
}
