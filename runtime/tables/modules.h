/*
 * modules.h - loaded objects and Python source files holding call sites
 * (modules.c); used by callsites.c and output/callsites_out.c only.
 */
#ifndef MPISCOPE_MODULES_H
#define MPISCOPE_MODULES_H

#include <stddef.h>
#include <stdint.h>

#include "profile_format.h"

#pragma GCC visibility push(hidden)

enum mpiscope_module_role {
    MPISCOPE_ROLE_USER = 0,      /* a call site: the program, its libraries, a Python source */
    MPISCOPE_ROLE_SKIP = 1,      /* the MPI's layers or our own: the site is their caller */
    MPISCOPE_ROLE_MPI4PY = 2     /* mpi4py's extension module: the site is the Python line */
};

typedef struct {
    int kind, role;              /* enum mpiscope_module_kind, enum mpiscope_module_role */
    uintptr_t base, lo, hi;      /* ELF: load bias (offset = address - base), mapped range */
    mpiscope_module_t rec;       /* as written to MODULES */
} mpiscope_modinfo_t;

/* With the sites lock held (callsites.c): the module an address is in, added
 * when first seen; -1 if none (or no room: overflow bit 9). */
int mpiscope_module_of(uintptr_t addr);
/* A Python source file, by its co_filename; -1 if no room. */
int mpiscope_module_python(const char *filename);
/* Without the lock: a module added so far, or NULL. */
const mpiscope_modinfo_t *mpiscope_module(int i);
unsigned mpiscope_modules_count(void);
uint32_t mpiscope_modules_overflow(void);
uint64_t mpiscope_fnv1a64_bytes(uint64_t h, const void *p, size_t n);

#pragma GCC visibility pop

#endif
