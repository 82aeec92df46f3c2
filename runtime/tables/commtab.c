/*
 * commtab.c - per-communicator tables: which communicator each call used,
 * named by MPI_Comm_set_name or by how it was made ("world", "split(color 1)
 * of world", "dup of world", "cart 4x4 of world"...), with an id every
 * member computes alike without communicating (docs/runtime.md).
 *
 * RATIONALE: creating a communicator is collective over its parent, in the
 * same order on every member, so (parent id, how many communicators the
 * parent had made before, how, color) hashes to the same id on every member;
 * MPI_Comm_create_group (collective over the group only) hashes its members
 * instead. The hot path maps a handle to its table slot through a 16-entry
 * per-thread cache; MPI_COMM_WORLD is slot 0 without a look-up. Slots are
 * never reused: a freed communicator keeps its row. Past
 * MPISCOPE_MAX_COMM_TABLES, calls go to one "(other communicators)" slot and
 * the overflow bit is set.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpiscope.h"

#define COMMTAB_NAME 160
#define COMMTAB_LIVE_MAX 65536

typedef struct {
    uint64_t id;
    int size, inter, named, nworld;
    uint32_t children;           /* communicators made from this one so far */
    int world[MPISCOPE_COMM_WORLD_RANKS];
    char name[COMMTAB_NAME];
} commtab_desc_t;

static commtab_desc_t *desc;     /* [MAX_COMM_TABLES + 1]; the last is "other" */
static unsigned ndesc, other;
static struct {
    uintptr_t comm;
    unsigned slot;
} *live;                         /* handles alive now -> slot */
static unsigned nlive;
static uint32_t commtab_ovf;
static MPI_Group commtab_world_group = MPI_GROUP_NULL;
volatile uint32_t mpiscope_comm_gen = 1;

static uint64_t mix(uint64_t h, uint64_t v)
{
    for (int i = 0; i < 8; i++, v >>= 8)
        h = (h ^ (v & 0xff)) * 0x100000001b3ull;
    return h;
}

static unsigned commtab_add(uintptr_t comm, uint64_t id, const char *name)
{
    unsigned slot = other;
    for (unsigned s = 0; s < ndesc; s++)   /* the same communicator made again (a freed handle reused) */
        if (desc[s].id == id) {
            slot = s;
            break;
        }
    if (slot == other && ndesc < other) {
        slot = ndesc++;
        memset(&desc[slot], 0, sizeof desc[slot]);
        desc[slot].id = id;
        snprintf(desc[slot].name, COMMTAB_NAME, "%s", name);
        desc[slot].size = -1;
    } else if (slot == other) {
        commtab_ovf |= MPISCOPE_OVF_COMM_TABLES;
    }
    if (comm != (uintptr_t)MPI_COMM_NULL && nlive < COMMTAB_LIVE_MAX) {
        live[nlive].comm = comm;
        live[nlive].slot = slot;
        nlive++;
    }
    return slot;
}

static void commtab_members(unsigned slot, MPI_Comm comm, int query_size)
{
    commtab_desc_t *d = &desc[slot];
    if (slot == other || !query_size)
        return;
    int inter = 0, n = 0;
    MPI_Group g;
    PMPI_Comm_test_inter(comm, &inter);
    PMPI_Comm_size(comm, &n);
    d->inter = inter;
    d->size = n;
    PMPI_Comm_group(comm, &g);
    int k = n < MPISCOPE_COMM_WORLD_RANKS ? n : MPISCOPE_COMM_WORLD_RANKS, r[MPISCOPE_COMM_WORLD_RANKS];
    for (int i = 0; i < k; i++)
        r[i] = i;
    PMPI_Group_translate_ranks(g, k, r, commtab_world_group, d->world);
    PMPI_Group_free(&g);
    d->nworld = k;
}

void mpiscope_commtab_init(void)
{
    ndesc = 0;
    other = (unsigned)mpiscope_settings.MAX_COMM_TABLES;
    desc = calloc(other + 1u, sizeof *desc);
    live = calloc(COMMTAB_LIVE_MAX, sizeof *live);
    if (!desc || !live)
        return;
    desc[other].id = 0;
    snprintf(desc[other].name, COMMTAB_NAME, "(other communicators)");
    desc[other].size = -1;
    PMPI_Comm_group(MPI_COMM_WORLD, &commtab_world_group);
    commtab_members(commtab_add((uintptr_t)MPI_COMM_WORLD, 1, "world"), MPI_COMM_WORLD, 1);
    unsigned self = commtab_add((uintptr_t)MPI_COMM_SELF, 2, "self");
    desc[self].size = 1;       /* each rank's own: no member list */
}

static int commtab_find(uintptr_t comm)
{
    for (unsigned i = nlive; i-- > 0;)
        if (live[i].comm == comm)
            return (int)live[i].slot;
    return -1;
}

/* A communicator we did not see made (MPI_Comm_spawn, connect/accept, ...). */
static unsigned commtab_unknown(MPI_Comm comm)
{
    static uint32_t unknown_count;
    char name[64];
    snprintf(name, sizeof name, "unknown #%u", ++unknown_count);
    unsigned slot = commtab_add((uintptr_t)comm, mix(0x5eedull, unknown_count) | 1u, name);
    commtab_members(slot, comm, 1);
    return slot;
}

int mpiscope_comm_slot_slow(MPI_Comm comm, unsigned cache)
{
    if (!desc || !live)
        return -1;
    mpiscope_lock();
    int slot = commtab_find((uintptr_t)comm);
    if (slot < 0 && comm != MPI_COMM_NULL && comm != MPI_COMM_SELF)
        slot = (int)commtab_unknown(comm);
    mpiscope_unlock();
    mpiscope_thread_t *t = mpiscope_tls;
    if (t && slot >= 0) {
        t->ccache[cache].comm = (uintptr_t)comm;
        t->ccache[cache].slot = (uint32_t)slot;
        t->ccache[cache].gen = mpiscope_comm_gen;
    }
    return slot;
}

static const char *kind_name(int kind)
{
    static const char *const names[] = {"?", "dup", "split", "split_type", "create", "create_group",
                                        "intercomm", "merge", "cart", "cart_sub", "graph",
                                        "dist_graph", "idup"};
    return kind > 0 && kind < (int)(sizeof names / sizeof *names) ? names[kind] : "?";
}

void mpiscope_comm_created(MPI_Comm parent, int rc, MPI_Comm made, int kind, long arg,
                           int ndims, const int *dims)
{
    if (!desc || !live || rc != MPI_SUCCESS || parent == MPI_COMM_NULL)
        return;           /* an erroneous call made nothing */
    mpiscope_lock();
    int p = commtab_find((uintptr_t)parent);
    if (p < 0)
        p = (int)commtab_unknown(parent);
    commtab_desc_t *pd = &desc[p];
    uint32_t k = ++pd->children;   /* every member counts the call, even one left out (COMM_NULL) */
    if (made == MPI_COMM_NULL) {
        mpiscope_unlock();
        return;
    }
    uint64_t id = mix(mix(mix(mix(0xcbf29ce484222325ull, pd->id), k), (uint64_t)kind), (uint64_t)arg);
    char what[64] = "";
    if (kind == MPISCOPE_COMM_SPLIT)
        snprintf(what, sizeof what, "split(color %ld)", arg);
    else if (kind == MPISCOPE_COMM_SPLIT_TYPE)
        snprintf(what, sizeof what, "split_type(%s)", arg == MPI_COMM_TYPE_SHARED ? "shared" : "other");
    else if (kind == MPISCOPE_COMM_CREATE_GROUP)
        snprintf(what, sizeof what, "create_group(tag %ld)", arg);
    else if (kind == MPISCOPE_COMM_CART) {
        int n = snprintf(what, sizeof what, "cart ");
        for (int i = 0; i < ndims && dims && n < (int)sizeof what - 12; i++)
            n += snprintf(what + n, sizeof what - (size_t)n, i ? "x%d" : "%d", dims[i]);
    } else
        snprintf(what, sizeof what, "%s", kind_name(kind));
    char name[COMMTAB_NAME * 2];
    snprintf(name, sizeof name, "%s of %s", what, pd->name);
    name[COMMTAB_NAME - 1] = 0;
    if (kind == MPISCOPE_COMM_CREATE_GROUP) {   /* collective over the group only: hash the members */
        MPI_Group g;
        int n = 0;
        PMPI_Comm_group(made, &g);
        PMPI_Group_size(g, &n);
        int *r = malloc(sizeof(int) * (size_t)(n ? n : 1)), *w = malloc(sizeof(int) * (size_t)(n ? n : 1));
        if (r && w) {
            for (int i = 0; i < n; i++)
                r[i] = i;
            PMPI_Group_translate_ranks(g, n, r, commtab_world_group, w);
            id = mix(mix(0x9e3779b97f4a7c15ull, pd->id), (uint64_t)arg);
            for (int i = 0; i < n; i++)
                id = mix(id, (uint64_t)(uint32_t)w[i]);
        }
        free(r);
        free(w);
        PMPI_Group_free(&g);
    }
    unsigned slot = commtab_add((uintptr_t)made, id ? id : 3, name);
    /* idup: the new handle may not be used before its request completes */
    if (desc[slot].size < 0 || kind != MPISCOPE_COMM_IDUP)
        commtab_members(slot, made, kind != MPISCOPE_COMM_IDUP);
    if (kind == MPISCOPE_COMM_IDUP && slot != other)
        desc[slot].size = pd->size;
    mpiscope_unlock();
    if (kind != MPISCOPE_COMM_IDUP)     /* an idup's handle is not usable yet */
        mpiscope_mpit_comm_made(made);
}

void mpiscope_comm_named(MPI_Comm comm, int rc, const char *name)
{
    if (rc != MPI_SUCCESS || !name || !desc || !live || comm == MPI_COMM_NULL)
        return;
    mpiscope_lock();
    int s = commtab_find((uintptr_t)comm);
    if (s < 0)
        s = (int)commtab_unknown(comm);
    if ((unsigned)s != other) {
        snprintf(desc[s].name, COMMTAB_NAME, "%s", name);
        desc[s].named = 1;
    }
    mpiscope_unlock();
}

void mpiscope_comm_unmap(MPI_Comm comm)
{
    mpiscope_mpit_comm_freed(comm);      /* MPI_T handles bound to it go before it does */
    if (!live)
        return;
    mpiscope_lock();
    for (unsigned i = nlive; i-- > 0;)
        if (live[i].comm == (uintptr_t)comm) {
            live[i] = live[--nlive];
            break;
        }
    __atomic_add_fetch(&mpiscope_comm_gen, 1, __ATOMIC_RELEASE);
    mpiscope_unlock();
}

uint32_t mpiscope_commtab_overflow(void)
{
    return commtab_ovf;
}

unsigned mpiscope_commtab_count(void)
{
    return other + 1u;
}

/* Slot s as a (id, JSON description) for META "communicators"; 0 if unused. */
int mpiscope_commtab_entry(unsigned s, uint64_t *id, mpiscope_buf_t *json)
{
    if (!desc || s > other || (s < other && s >= ndesc))
        return 0;
    commtab_desc_t *d = &desc[s];
    *id = d->id;
    mpiscope_buf_str(json, "{\"name\": ");
    mpiscope_buf_json_string(json, d->name);
    mpiscope_buf_printf(json, ", \"named\": %s, \"size\": ", d->named ? "true" : "false");
    if (d->size < 0)
        mpiscope_buf_str(json, "null");
    else
        mpiscope_buf_printf(json, "%d", d->size);
    mpiscope_buf_printf(json, ", \"inter\": %s, \"world_ranks\": ", d->inter ? "true" : "false");
    if (s == 1 || d->nworld == 0) {
        mpiscope_buf_str(json, "null}");
        return 1;
    }
    mpiscope_buf_str(json, "[");
    for (int i = 0; i < d->nworld; i++)
        mpiscope_buf_printf(json, "%s%d", i ? ", " : "", d->world[i]);
    mpiscope_buf_str(json, "]}");
    return 1;
}

uint64_t mpiscope_commtab_id(unsigned s)
{
    return desc && s <= other ? desc[s].id : 0;
}
