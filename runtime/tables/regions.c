/*
 * regions.c - IPM-style regions: MPI_Pcontrol(1, "name") opens, MPI_Pcontrol(
 * -1, "name") closes, nested; every call is charged to the innermost open
 * region.
 *
 * A region has a slot (1 .. MPISCOPE_MAX_REGIONS-1; 0 is "outside every
 * region"), found by name only in Pcontrol, never on the hot path, which
 * reads the current slot from mpiscope_region_slot. Its id is FNV-1a 64 of
 * the name with 0 mapped to 1 (mpiscope.format.fnv1a64). Closing a region
 * that is not the innermost closes the ones inside it too; closing one that
 * is not open does nothing. When the slots run out, the region's calls stay
 * with the enclosing region and rank.overflow gets MPISCOPE_OVF_REGIONS.
 *
 * RATIONALE: regions are process-wide (as IPM's): under MPI_THREAD_MULTIPLE
 * they mark phases of the whole process, and Pcontrol should be called by
 * one thread. Names may be any UTF-8 (or other non-control) bytes; names
 * longer than 255 bytes are cut to 255 (never inside a UTF-8 character).
 */
#include <stdlib.h>
#include <string.h>

#include "mpiscope.h"

#define REGION_NAME_MAX MPISCOPE_REGION_NAME_MAX

typedef struct {
    uint64_t id, parent, entries, ticks;
    uint32_t depth;
    char name[REGION_NAME_MAX];
} region_t;

typedef struct {
    unsigned slot;               /* 0 for a region that got no slot */
    uint64_t id, t0;
} region_open_t;

static region_t *regions;        /* [mpiscope_nslots] */
static unsigned regions_used = 1;
static region_open_t regions_stack[MPISCOPE_REGION_DEPTH];
static unsigned regions_depth;
static uint32_t regions_overflow_bits;

/* FNV-1a 64 of n bytes, 0 mapped to 1 (mpiscope.format.fnv1a64): region ids,
 * and the ids of environment texts (environ.c). */
uint64_t mpiscope_fnv1a64(const char *s, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ULL;
    for (size_t i = 0; i < n; i++) {
        h ^= (unsigned char)s[i];
        h *= 0x100000001b3ULL;
    }
    return h ? h : 1;
}

void mpiscope_regions_init(void)
{
    regions = calloc(mpiscope_nslots, sizeof *regions);
    regions_used = 1;
}

static unsigned current_slot(void)
{
    for (unsigned d = regions_depth; d > 0; d--)
        if (regions_stack[d - 1].slot)
            return regions_stack[d - 1].slot;
    return 0;
}

static void region_open(uint64_t id, const char *name, size_t len)
{
    if (regions_depth >= MPISCOPE_REGION_DEPTH) {
        regions_overflow_bits |= MPISCOPE_OVF_REGIONS;
        return;
    }
    unsigned slot = 0;
    for (unsigned s = 1; s < regions_used; s++)
        if (regions[s].id == id) {
            slot = s;
            break;
        }
    if (!slot && regions && regions_used < mpiscope_nslots) {
        slot = regions_used++;
        region_t *r = &regions[slot];
        r->id = id;
        r->parent = regions_depth ? regions_stack[regions_depth - 1].id : 0;
        r->depth = regions_depth + 1;
        if (len >= REGION_NAME_MAX)
            len = REGION_NAME_MAX - 1;
        memcpy(r->name, name, len);
        r->name[len] = 0;
    }
    if (!slot)
        regions_overflow_bits |= MPISCOPE_OVF_REGIONS;
    else
        regions[slot].entries++;
    regions_stack[regions_depth++] = (region_open_t){slot, id, mpiscope_now()};
    mpiscope_region_slot = current_slot();
}

static void region_pop(uint64_t now)
{
    region_open_t *o = &regions_stack[--regions_depth];
    if (o->slot)
        regions[o->slot].ticks += now - o->t0;
}

static void region_close(uint64_t id)
{
    unsigned d = regions_depth;
    while (d > 0 && regions_stack[d - 1].id != id)
        d--;
    if (d == 0)
        return;          /* not open: nothing to close */
    uint64_t now = mpiscope_now();
    while (regions_depth >= d)
        region_pop(now);
    mpiscope_region_slot = current_slot();
}

int mpiscope_region_control(int level, const char *name, size_t len)
{
    /* A long name is cut (on a UTF-8 character boundary) before hashing, so
     * the id is always the FNV-1a of the name written to META. */
    len = mpiscope_utf8_cut(name, len, REGION_NAME_MAX - 1);
    uint64_t id = mpiscope_fnv1a64(name, len);
    if (level == 1)
        region_open(id, name, len);
    else if (level == -1)
        region_close(id);
    return 0;
}

void mpiscope_regions_close_all(uint64_t now)
{
    while (regions_depth > 0)
        region_pop(now);
    mpiscope_region_slot = 0;
}

unsigned mpiscope_regions_count(void)
{
    return regions_used;
}

void mpiscope_region_info(unsigned slot, uint64_t *id, uint64_t *parent, uint32_t *depth,
                          uint64_t *entries, uint64_t *ticks, const char **name)
{
    if (slot == 0 || !regions) {
        *id = *parent = *entries = *ticks = 0;
        *depth = 0;
        *name = "";
        return;
    }
    region_t *r = &regions[slot];
    *id = r->id;
    *parent = r->parent;
    *depth = r->depth;
    *entries = r->entries;
    *ticks = r->ticks;
    *name = r->name;
}

uint64_t mpiscope_region_id(unsigned slot)
{
    return slot && regions && slot < regions_used ? regions[slot].id : 0;
}

uint32_t mpiscope_regions_overflow(void)
{
    return regions_overflow_bits;
}
