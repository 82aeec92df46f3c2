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
 * detected here and named in one warning, printed by world rank 0 once
 * MPI_Init has returned (a launcher that inherits the preload, or a rank
 * whose launcher sets no rank variable, never prints it). The lifecycle
 * alone is caught at the PMPI level (pmpi_lifecycle.c), so such a tool
 * never keeps mpiscope from starting or from writing its profile.
 *
 * Two copies of mpiscope in one process (a program linked with
 * libmpiscope.a run under `mpiscope run`, or two preloads): the first copy
 * the program's MPI_Init reaches finds the next one by its one exported
 * symbol (mpiscope_runtime_handoff_v1), tells it, and stands down: its
 * wrappers pass every call on to that copy, which alone profiles and says so
 * once. The later copy is the one that also sees the calls shared libraries
 * make (they bind to the first definition in the process, never to one
 * inside the executable).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpiscope.h"
#include "stacking.h"

#define STACKING_NAMED 4         /* functions the warning names */

static int stacking_done;
static struct {
    unsigned n;                  /* wrapped functions a tool before us defines */
    const char *path;            /* that object */
    const void *base;
    const char *named[STACKING_NAMED];
    unsigned nnamed;
} before;
static int stood_down = -1;      /* this copy passes every call on to a later copy */
static const void *outer_base;   /* set in the later copy: the copy that stood down for us */
static char outer_path[4096];

static void stacking_anchor(void)
{
}

/* The lifecycle first, then list order: what the user must hear about. */
static void stacking_name(const char *fn)
{
    static const char *const key[] = {"MPI_Init", "MPI_Init_thread", "MPI_Finalize"};
    int lifecycle = 0;
    for (size_t k = 0; k < sizeof key / sizeof *key; k++)
        lifecycle |= strcmp(fn, key[k]) == 0;
    if (before.nnamed < STACKING_NAMED) {
        before.named[before.nnamed++] = fn;
    } else if (lifecycle) {       /* replaces the last non-lifecycle name */
        for (unsigned i = STACKING_NAMED; i-- > 0;)
            if (strncmp(before.named[i], "MPI_Init", 8) != 0 && strcmp(before.named[i], "MPI_Finalize") != 0) {
                memmove(&before.named[i], &before.named[i + 1], sizeof *before.named * (STACKING_NAMED - 1 - i));
                before.named[STACKING_NAMED - 1] = fn;
                break;
            }
    }
    if (lifecycle) {             /* lifecycle names lead */
        for (unsigned i = 0, j = 0; i < before.nnamed; i++) {
            const char *x = before.named[i];
            if (strncmp(x, "MPI_Init", 8) == 0 || strcmp(x, "MPI_Finalize") == 0) {
                memmove(&before.named[j + 1], &before.named[j], sizeof *before.named * (i - j));
                before.named[j++] = x;
            }
        }
    }
}

void mpiscope_next_resolve(void)
{
    if (stacking_done)
        return;
    stacking_done = 1;
    Dl_info self, di;
    if (!dladdr((void *)stacking_anchor, &self))
        return;                 /* no dynamic loader (fully static): PMPI_<Name> stays */
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
        if (first && first != next && dladdr(first, &di) && di.dli_fbase != self.dli_fbase) {
            if (before.n++ == 0) {
                before.path = di.dli_fname && *di.dli_fname ? di.dli_fname : "the program itself";
                before.base = di.dli_fbase;
            }
            stacking_name(e->name);
        }
    }
}

__attribute__((constructor)) static void stacking_init(void)
{
    mpiscope_next_resolve();
}

/* The one exported symbol: an earlier copy of mpiscope stands down for this one. */
__attribute__((visibility("default"))) void mpiscope_runtime_handoff_v1(const void *base, const char *path)
{
    outer_base = base;
    snprintf(outer_path, sizeof outer_path, "%s", path && *path ? path : "the program itself");
}

int mpiscope_stand_down(void)
{
    if (stood_down >= 0)
        return stood_down;
    stood_down = 0;
    Dl_info self;
    void (*later)(const void *, const char *) = NULL;
    void *sym = dlsym(RTLD_NEXT, "mpiscope_runtime_handoff_v1");
    memcpy(&later, &sym, sizeof sym);
    if (later && dladdr((void *)stacking_anchor, &self) && sym != (void *)mpiscope_runtime_handoff_v1) {
        later(self.dli_fbase, self.dli_fname);
        stood_down = 1;
    }
    return stood_down;
}

/* World rank 0, once MPI_Init returned: what the load order means. */
void mpiscope_stacking_report(void)
{
    if (outer_base) {
        Dl_info self;
        const char *me = dladdr((void *)stacking_anchor, &self) && self.dli_fname && *self.dli_fname
                             ? self.dli_fname : "the program itself";
        if (!mpiscope_settings.QUIET)
            fprintf(stderr, "mpiscope: note: %s has mpiscope in it too (libmpiscope.a linked in, or "
                    "loaded first): that copy stands down and passes every call on to %s, which "
                    "profiles\n", outer_path, me);
        if (before.base == outer_base)
            return;              /* what comes before us is that copy, not a tool */
    }
    if (!before.n)
        return;
    char names[256] = "";
    for (unsigned i = 0, n = 0; i < before.nnamed && n < sizeof names; i++)
        n += (unsigned)snprintf(names + n, sizeof names - n, "%s%s", i ? ", " : "", before.named[i]);
    fprintf(stderr,
            "mpiscope: warning: %s is loaded before mpiscope and defines %s (%u wrapped MPI "
            "functions in all): the calls it passes on to PMPI_* are not seen by mpiscope; "
            "load mpiscope first (LD_PRELOAD=libmpiscope.so:%s, as mpiscope run does)\n",
            before.path, names, before.n, before.path);
}
