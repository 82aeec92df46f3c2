/*
 * commtab.c - per-communicator tables: which communicator each call used,
 * named by MPI_Comm_set_name or by how it was made ("world", "split(color 1)
 * of world", "dup of world", "cart 4x4 of world"...), with an id every
 * member computes alike without communicating (docs/runtime.md).
 *
 * RATIONALE: the id must be one per communicator object across ranks. A
 * communicator made by a call that is collective over its parent (dup,
 * split, split_type, create, cart, cart_sub, graph, merge, idup) hashes
 * (parent id, how many communicators the parent had made before, how,
 * color, the world rank of its own rank 0): every member of the parent
 * counts every such call in the same order, so the count agrees; one call
 * may make several disjoint communicators (split's colors, create's disjoint
 * groups, cart_sub's rows, split_type's nodes or cores), which their rank 0s
 * tell apart (one PMPI_Group_translate_ranks of one rank). MPI_Comm_create_group
 * is collective over the group only: it hashes the members' world ranks and
 * the tag and counts per such key, never the parent's count (ranks outside
 * the group would fall out of step). An intercommunicator joins two groups
 * whose parents differ: it hashes both groups (sizes and first members, in
 * the order of their rank 0s) and counts per that key, so both sides agree.
 * The hot path maps a handle to its table slot through a 16-entry
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
    int first;                   /* world rank of its rank 0 (of the group whose rank 0 is lower, intercomm) */
    uint32_t children;           /* communicators made from this one so far (collective over it) */
    int world[MPISCOPE_COMM_WORLD_RANKS];
    int remote_size, nremote;    /* intercommunicator: the remote group */
    int remote[MPISCOPE_COMM_WORLD_RANKS];
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
static struct {
    uint64_t key;
    uint32_t n;
} *keyed;                        /* communicators made so far per group key (create_group, intercomm) */
static unsigned nkeyed, capkeyed;

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

/* World ranks of a group's first k ranks (MPI_UNDEFINED for a rank of another job). */
static int commtab_group_world(MPI_Group g, int *world)
{
    int n = 0, r[MPISCOPE_COMM_WORLD_RANKS];
    PMPI_Group_size(g, &n);
    int k = n < MPISCOPE_COMM_WORLD_RANKS ? n : MPISCOPE_COMM_WORLD_RANKS;
    for (int i = 0; i < k; i++)
        r[i] = i;
    PMPI_Group_translate_ranks(g, k, r, commtab_world_group, world);
    return k;
}

/* The world rank of a group's first member that is in this job (-1 if none). */
static int commtab_group_first(MPI_Group g)
{
    int n = 0, first = MPI_UNDEFINED, zero = 0;
    PMPI_Group_size(g, &n);
    if (n > 0)
        PMPI_Group_translate_ranks(g, 1, &zero, commtab_world_group, &first);
    for (int i = 1; first == MPI_UNDEFINED && i < n; i++)   /* rank 0 is of another job */
        PMPI_Group_translate_ranks(g, 1, &i, commtab_world_group, &first);
    return first == MPI_UNDEFINED ? -1 : first;
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
    d->nworld = commtab_group_world(g, d->world);
    PMPI_Group_free(&g);
    if (inter) {
        PMPI_Comm_remote_size(comm, &d->remote_size);
        PMPI_Comm_remote_group(comm, &g);
        d->nremote = commtab_group_world(g, d->remote);
        PMPI_Group_free(&g);
    }
}

/* The n-th communicator (from 1) made with this group key on this rank. */
static uint32_t commtab_keyed(uint64_t key)
{
    for (unsigned i = 0; i < nkeyed; i++)
        if (keyed[i].key == key)
            return ++keyed[i].n;
    if (nkeyed == capkeyed) {
        unsigned cap = capkeyed ? 2 * capkeyed : 16;
        void *p = realloc(keyed, cap * sizeof *keyed);
        if (!p)
            return 1;
        keyed = p;
        capkeyed = cap;
    }
    keyed[nkeyed].key = key;
    keyed[nkeyed].n = 1;
    return keyed[nkeyed++].n;
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
    desc[0].first = 0;
    unsigned self = commtab_add((uintptr_t)MPI_COMM_SELF, 2, "self");
    desc[self].size = 1;       /* each rank's own, one row for all: no member list */
    desc[self].first = mpiscope_world_rank_;
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
    if (t && slot >= 0 && !MPISCOPE_SHARED(t)) {
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

/* A group key: size and first members of each group, in a fixed order. */
static uint64_t commtab_group_key(uint64_t h, MPI_Group g)
{
    int n = 0, w[MPISCOPE_COMM_WORLD_RANKS];
    int k = commtab_group_world(g, w);
    PMPI_Group_size(g, &n);
    h = mix(h, (uint64_t)(uint32_t)n);
    for (int i = 0; i < k; i++)
        h = mix(h, (uint64_t)(uint32_t)w[i]);
    return h;
}

/* An intercommunicator's id from its two groups alone, the same on both sides. */
static uint64_t commtab_inter_id(MPI_Comm made, int *first)
{
    MPI_Group local, remote;
    PMPI_Comm_group(made, &local);
    PMPI_Comm_remote_group(made, &remote);
    int a = commtab_group_first(local), b = commtab_group_first(remote);
    MPI_Group lo = (unsigned)a <= (unsigned)b ? local : remote, hi = lo == local ? remote : local;
    uint64_t key = commtab_group_key(commtab_group_key(0x1d2c3b4a59687766ull, lo), hi);
    *first = (unsigned)a <= (unsigned)b ? a : b;
    PMPI_Group_free(&local);
    PMPI_Group_free(&remote);
    return mix(key, commtab_keyed(key));
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
    /* every member of the parent counts the call, even one left out (COMM_NULL) */
    uint32_t k = kind == MPISCOPE_COMM_CREATE_GROUP || kind == MPISCOPE_COMM_INTERCOMM ? 0 : ++pd->children;
    if (made == MPI_COMM_NULL) {
        mpiscope_unlock();
        return;
    }
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
    uint64_t id;
    int first = -1;
    if (kind == MPISCOPE_COMM_INTERCOMM) {
        id = commtab_inter_id(made, &first);
    } else if (kind == MPISCOPE_COMM_IDUP) {
        /* the new handle may not be used before its request completes: a dup has the
         * parent's members, so its rank 0 is the parent's */
        first = pd->first;
        id = mix(mix(mix(mix(mix(0xcbf29ce484222325ull, pd->id), k), (uint64_t)kind), (uint64_t)arg),
                 (uint64_t)(uint32_t)first);
    } else {
        MPI_Group g;
        PMPI_Comm_group(made, &g);
        first = commtab_group_first(g);
        if (kind == MPISCOPE_COMM_CREATE_GROUP) {   /* collective over the group only */
            uint64_t key = commtab_group_key(mix(mix(0x9e3779b97f4a7c15ull, pd->id), (uint64_t)arg), g);
            id = mix(key, commtab_keyed(key));
        } else {
            id = mix(mix(mix(mix(mix(0xcbf29ce484222325ull, pd->id), k), (uint64_t)kind), (uint64_t)arg),
                     (uint64_t)(uint32_t)first);
        }
        PMPI_Group_free(&g);
    }
    unsigned slot = commtab_add((uintptr_t)made, id > 2 ? id : id + 3, name);
    if (slot != other && kind == MPISCOPE_COMM_IDUP && desc[slot].size < 0) {
        /* a dup: the parent's members (its handle is not usable yet) */
        commtab_desc_t *d = &desc[slot];
        d->size = pd->size;
        d->inter = pd->inter;
        d->nworld = pd->nworld;
        memcpy(d->world, pd->world, sizeof d->world);
        d->remote_size = pd->remote_size;
        d->nremote = pd->nremote;
        memcpy(d->remote, pd->remote, sizeof d->remote);
    } else if (kind != MPISCOPE_COMM_IDUP) {
        commtab_members(slot, made, 1);
    }
    if (slot != other)
        desc[slot].first = first;
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

/* A JSON list of world ranks (null if none; -1 for a rank of another job). */
static void commtab_ranks_json(mpiscope_buf_t *json, int n, const int *w)
{
    if (n == 0) {
        mpiscope_buf_str(json, "null");
        return;
    }
    mpiscope_buf_str(json, "[");
    for (int i = 0; i < n; i++)
        mpiscope_buf_printf(json, "%s%d", i ? ", " : "", w[i] == MPI_UNDEFINED ? -1 : w[i]);
    mpiscope_buf_str(json, "]");
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
    commtab_ranks_json(json, s == 1 ? 0 : d->nworld, d->world);
    if (d->inter) {
        mpiscope_buf_printf(json, ", \"remote_size\": %d, \"remote_world_ranks\": ", d->remote_size);
        commtab_ranks_json(json, d->nremote, d->remote);
    }
    mpiscope_buf_str(json, "}");
    return 1;
}

unsigned mpiscope_commtab_live(mpiscope_member_t *out, const char **names, unsigned cap)
{
    unsigned n = 0, k = __atomic_load_n(&nlive, __ATOMIC_ACQUIRE);
    if (!desc || !live)
        return 0;
    /* RATIONALE: read without the lock (a hung rank may never give it back);
     * an entry being added or freed meanwhile is seen or not. */
    for (unsigned i = 0; i < k && n < cap; i++) {
        unsigned slot = live[i].slot;
        int seen = slot < 2 || slot >= ndesc || slot == other;
        for (unsigned j = 0; j < n && !seen; j++)
            seen = out[j].comm == desc[slot].id;
        if (seen)
            continue;
        out[n] = (mpiscope_member_t){(uint32_t)mpiscope_world_rank_,
                                     desc[slot].size < 0 ? 0u : (uint32_t)desc[slot].size, desc[slot].id};
        names[n++] = desc[slot].name;
    }
    return n;
}

uint64_t mpiscope_commtab_id(unsigned s)
{
    return desc && s <= other ? desc[s].id : 0;
}
