/*
 * comms.c - communicator rank -> world rank translation, persistent requests,
 * group sizes and type sizes for the roles.
 *
 * RATIONALE: translation is built lazily, the first time a communicator
 * other than MPI_COMM_WORLD carries a point-to-point message, and cached by
 * handle: O(comm size) once, for communicators actually used; MPI_COMM_WORLD
 * never needs a table (world rank == rank). A communicator whose ranks are
 * the world's (a dup of MPI_COMM_WORLD) keeps no array either. MPI_Comm_free
 * and MPI_Comm_disconnect drop the entry, because MPI may reuse the handle.
 * Both tables are process-wide, so under MPI_THREAD_MULTIPLE they take the
 * runtime's lock (mpiscope_lock is a no-op otherwise).
 */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "mpiscope.h"

typedef struct {
    uint64_t key;                /* handle + 1; 0 = empty */
    int *world;                  /* world rank of each rank; NULL: identity */
    int n;                       /* (remote) group size */
} mpiscope_comm_slot_t;

typedef struct {                 /* what one start of a persistent request moves */
    uint64_t key;                /* handle + 1; 0 = empty */
    int peer;                    /* world rank of a send's destination, -1 (-2: another job's) */
    int cslot;                   /* its communicator's per-communicator table slot, -1 none */
    uint64_t sent, recv;         /* both for a persistent collective */
} mpiscope_req_slot_t;

static mpiscope_comm_slot_t *comms_tab;
static uint32_t comms_mask, comms_count, comms_max;
static mpiscope_req_slot_t *reqs_tab;
static uint32_t reqs_mask, reqs_count, reqs_max;
static uint32_t comms_overflow_bits;
static MPI_Group comms_world_group = MPI_GROUP_NULL;

/* Handles are pointers (Open MPI) or integers (MPICH); either way a key. */
#define MPISCOPE_HKEY(h) ((uint64_t)(uintptr_t)(h) + 1u)

static void *zalloc(size_t bytes)
{
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

static uint32_t pow2_at_least(uint64_t n)
{
    uint32_t c = 16;
    while (c < n)
        c <<= 1;
    return c;
}

void mpiscope_comms_init(void)
{
    comms_max = (uint32_t)mpiscope_settings.MAX_COMMS;
    uint32_t cap = pow2_at_least(2ull * comms_max);
    comms_tab = zalloc(sizeof *comms_tab * cap);
    comms_mask = comms_tab ? cap - 1 : 0;
    reqs_max = (uint32_t)mpiscope_settings.MAX_REQUESTS;
    cap = pow2_at_least(2ull * reqs_max);
    reqs_tab = zalloc(sizeof *reqs_tab * cap);
    reqs_mask = reqs_tab ? cap - 1 : 0;
    PMPI_Comm_group(MPI_COMM_WORLD, &comms_world_group);
}

uint32_t mpiscope_comms_overflow(void)
{
    return comms_overflow_bits;
}

/* Backward-shift deletion keeps linear probing correct without tombstones. */
#define MPISCOPE_DELETE(tab, mask, i)                                           \
    do {                                                                        \
        uint32_t hole = (i), j = (i);                                           \
        for (;;) {                                                              \
            j = (j + 1) & (mask);                                               \
            if ((tab)[j].key == 0)                                              \
                break;                                                          \
            uint32_t home = mpiscope_hash64((tab)[j].key) & (mask);                      \
            if (((j - home) & (mask)) >= ((j - hole) & (mask))) {               \
                (tab)[hole] = (tab)[j];                                         \
                hole = j;                                                       \
            }                                                                   \
        }                                                                       \
        memset(&(tab)[hole], 0, sizeof (tab)[hole]);                            \
    } while (0)

/* Index of key in an open-addressing table: its slot, or the empty slot where
 * it would go. */
#define MPISCOPE_PROBE(tab, mask, key)                                          \
    __extension__({                                                             \
        uint32_t i_ = mpiscope_hash64(key) & (mask);                                     \
        while ((tab)[i_].key != 0 && (tab)[i_].key != (key))                    \
            i_ = (i_ + 1) & (mask);                                             \
        i_;                                                                     \
    })

static mpiscope_comm_slot_t *comm_build(uint64_t key, MPI_Comm comm, uint32_t i)
{
    int inter = 0, n = 0;
    MPI_Group g = MPI_GROUP_NULL;
    /* An erroneous communicator gets no entry (the call will fail anyway). */
    if (PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS ||
        (inter ? PMPI_Comm_remote_group(comm, &g) : PMPI_Comm_group(comm, &g)) != MPI_SUCCESS)
        return NULL;
    if (PMPI_Group_size(g, &n) != MPI_SUCCESS) {
        PMPI_Group_free(&g);
        return NULL;
    }
    int *ranks = malloc(sizeof(int) * (size_t)(n > 0 ? n : 1));
    int *world = malloc(sizeof(int) * (size_t)(n > 0 ? n : 1));
    if (!ranks || !world) {
        free(ranks);
        free(world);
        PMPI_Group_free(&g);
        return NULL;
    }
    for (int r = 0; r < n; r++)
        ranks[r] = r;
    PMPI_Group_translate_ranks(g, n, ranks, comms_world_group, world);
    PMPI_Group_free(&g);
    free(ranks);
    int identity = 1;
    for (int r = 0; r < n && identity; r++)
        identity = world[r] == r;
    if (identity) {
        free(world);
        world = NULL;
    }
    mpiscope_comm_slot_t *s = &comms_tab[i];
    s->key = key;
    s->world = world;
    s->n = n;
    comms_count++;
    return s;
}

int mpiscope_comm_translate(MPI_Comm comm, int rank)
{
    if (!comms_tab || rank < 0 || comm == MPI_COMM_NULL)
        return -1;
    uint64_t key = MPISCOPE_HKEY(comm);
    int out = -1;
    mpiscope_lock();
    uint32_t i = MPISCOPE_PROBE(comms_tab, comms_mask, key);
    mpiscope_comm_slot_t *s = comms_tab[i].key == key ? &comms_tab[i] : NULL;
    if (!s) {
        if (comms_count >= comms_max)
            comms_overflow_bits |= MPISCOPE_OVF_COMMS;
        else
            s = comm_build(key, comm, i);
    }
    if (s && rank < s->n) {
        int w = s->world ? s->world[rank] : rank;
        out = w == MPI_UNDEFINED ? MPISCOPE_PEER_OTHER_JOB : w;   /* spawned, connected */
    }
    mpiscope_unlock();
    return out;
}

void mpiscope_comm_forget(MPI_Comm comm)
{
    if (!comms_tab || comm == MPI_COMM_NULL)
        return;
    uint64_t key = MPISCOPE_HKEY(comm);
    mpiscope_lock();
    uint32_t i = MPISCOPE_PROBE(comms_tab, comms_mask, key);
    if (comms_tab[i].key == key) {
        free(comms_tab[i].world);
        MPISCOPE_DELETE(comms_tab, comms_mask, i);
        comms_count--;
    }
    mpiscope_unlock();
}

int mpiscope_group_n(MPI_Comm comm, int *inter_out)
{
    int inter = 0, n = 0;
    if (comm == MPI_COMM_NULL || PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS ||
        (inter ? PMPI_Comm_remote_size(comm, &n) : PMPI_Comm_size(comm, &n)) != MPI_SUCCESS)
        n = 0;
    if (inter_out)
        *inter_out = inter;
    return n;
}

/* A neighbourhood collective's neighbours: in/out-degree (neighbours that are not
 * MPI_PROC_NULL), the length of its count arrays (positions), and which positions
 * are real neighbours (bit k; every position from 64 on is). RATIONALE: on a
 * non-periodic cartesian communicator a rank at the edge has MPI_PROC_NULL
 * neighbours; their blocks are in the buffers but nothing moves to or from them
 * (MPI 4.0, 8.6), so they count 0 bytes, as MPI_PROC_NULL does everywhere. */
void mpiscope_neighbors(MPI_Comm comm, int *indeg, int *outdeg, int *positions, uint64_t *real)
{
    int topo = MPI_UNDEFINED, n = 0, weighted = 0;
    *indeg = *outdeg = *positions = 0;
    *real = ~0ull;
    if (comm == MPI_COMM_NULL || PMPI_Topo_test(comm, &topo) != MPI_SUCCESS)
        return;
    if (topo == MPI_CART) {
        PMPI_Cartdim_get(comm, &n);
        *positions = 2 * n;
        *real = 0;
        for (int d = 0; d < n; d++) {
            int src = MPI_PROC_NULL, dst = MPI_PROC_NULL;
            PMPI_Cart_shift(comm, d, 1, &src, &dst);
            if (src != MPI_PROC_NULL || 2 * d >= 64)
                *real |= 2 * d < 64 ? 1ull << (2 * d) : 0, ++*indeg;
            if (dst != MPI_PROC_NULL || 2 * d + 1 >= 64)
                *real |= 2 * d + 1 < 64 ? 1ull << (2 * d + 1) : 0, ++*outdeg;
        }
        /* a cart's in- and out-neighbours are the same list: -1 then +1 per dimension */
        *indeg = *outdeg = *indeg + *outdeg;
    } else if (topo == MPI_GRAPH) {
        int rank;
        PMPI_Comm_rank(comm, &rank);
        PMPI_Graph_neighbors_count(comm, rank, &n);
        *indeg = *outdeg = *positions = n;
    } else if (topo == MPI_DIST_GRAPH) {
        PMPI_Dist_graph_neighbors_count(comm, indeg, outdeg, &weighted);
        *positions = -1;         /* in and out lists differ in length: each its own degree */
    }
}

void mpiscope_degrees(MPI_Comm comm, int *indeg, int *outdeg)
{
    int positions;
    uint64_t real;
    mpiscope_neighbors(comm, indeg, outdeg, &positions, &real);
}

volatile uint32_t mpiscope_type_gen = 1;

uint64_t mpiscope_bytes_slow(long count, MPI_Datatype type, unsigned slot)
{
    MPI_Count size = 0;
    if (count <= 0 || type == MPI_DATATYPE_NULL)
        return 0;
    if (PMPI_Type_size_x(type, &size) != MPI_SUCCESS || size < 0 || size == MPI_UNDEFINED)
        return 0;
    mpiscope_thread_t *t = mpiscope_tls;
    if (t && !MPISCOPE_SHARED(t)) {
        t->types[slot].type = (uintptr_t)type;
        t->types[slot].size = (uint64_t)size;
        t->types[slot].gen = mpiscope_type_gen;
    }
    return (uint64_t)count * (uint64_t)size;
}

/* --- persistent requests --------------------------------------------------------- */

void mpiscope_req_add(MPI_Request req, int peer, uint64_t sent, uint64_t recv, int cslot)
{
    if (!reqs_tab || req == MPI_REQUEST_NULL)
        return;
    uint64_t key = MPISCOPE_HKEY(req);
    mpiscope_lock();
    uint32_t i = MPISCOPE_PROBE(reqs_tab, reqs_mask, key);
    if (reqs_tab[i].key == 0 && reqs_count >= reqs_max) {
        comms_overflow_bits |= MPISCOPE_OVF_REQUESTS;
    } else {
        if (reqs_tab[i].key == 0)
            reqs_count++;
        reqs_tab[i] = (mpiscope_req_slot_t){key, peer, cslot, sent, recv};
    }
    mpiscope_unlock();
}

/* One (communicator, function) entry of a thread's per-communicator table:
 * only MPI_Start / MPI_Startall reach it this way, never through
 * mpiscope_record (they take no communicator), so the two never meet. */
static void cstat_add(mpiscope_thread_t *t, int cslot, int id, uint64_t calls, uint64_t sent,
                      uint64_t recv, uint64_t ticks)
{
    uint32_t ci = (uint32_t)cslot * MPISCOPE_NIDS + (uint32_t)id;
    mpiscope_cstat_t *cs = &t->cstats[ci];
    if (!cs->calls && !cs->sent && !cs->recv && !cs->ticks && (calls || sent || recv || ticks)) {
        t->cused[t->ncused] = ci;
        __atomic_store_n(&t->ncused, t->ncused + 1, __ATOMIC_RELEASE);
    }
    cs->calls += calls;
    cs->sent += sent;
    cs->recv += recv;
    cs->ticks += ticks;
}

/* After a successful MPI_Start / MPI_Startall (first: its first request): each
 * request moves what its _init call described, counted in the call's bytes,
 * to its peer, and in its communicator's row; the call itself (and its time)
 * is filed under the first request's communicator, so every row stays exact
 * when one MPI_Startall starts requests of several communicators. */
void mpiscope_req_start(mpiscope_call_t *c, MPI_Request req, int first)
{
    if (!reqs_tab || req == MPI_REQUEST_NULL)
        return;
    uint64_t key = MPISCOPE_HKEY(req);
    mpiscope_req_slot_t found = {0, -1, -1, 0, 0};
    mpiscope_lock();
    uint32_t i = MPISCOPE_PROBE(reqs_tab, reqs_mask, key);
    if (reqs_tab[i].key == key)
        found = reqs_tab[i];
    mpiscope_unlock();
    if (found.key == 0)
        return;
    c->sent += found.sent;
    c->recv += found.recv;
    int shared = MPISCOPE_SHARED(c->t);
    if (shared)
        mpiscope_shared_lock();
    if (found.peer >= 0)
        mpiscope_peer_add(c->t, found.peer, found.sent);
    else if (found.peer == MPISCOPE_PEER_OTHER_JOB)
        c->t->overflow |= MPISCOPE_OVF_OTHER_JOB;
    if (found.cslot >= 0)
        cstat_add(c->t, found.cslot, c->id, first ? 1u : 0u, found.sent, found.recv,
                  first ? c->t1 - c->t0 : 0u);
    if (shared)
        mpiscope_shared_unlock();
}

void mpiscope_req_forget(MPI_Request req)
{
    if (!reqs_tab || req == MPI_REQUEST_NULL)
        return;
    uint64_t key = MPISCOPE_HKEY(req);
    mpiscope_lock();
    uint32_t i = MPISCOPE_PROBE(reqs_tab, reqs_mask, key);
    if (reqs_tab[i].key == key) {
        MPISCOPE_DELETE(reqs_tab, reqs_mask, i);
        reqs_count--;
    }
    mpiscope_unlock();
}
