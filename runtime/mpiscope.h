/*
 * mpiscope.h - the runtime's internal interface: per-thread tables, the hot
 * path (timer + record), and the entry points of each feature file.
 *
 * Files: lifecycle.c (Init/Finalize/Abort/Pcontrol, threads), comms.c
 * (communicator translation, persistent requests, group sizes), regions.c
 * (Pcontrol regions), iofiles.c (MPI-IO hints), merge.c (binomial-tree set
 * union), writer.c (the profile file), summary.c (MPISCOPE_MODE=summary),
 * settings.c, buf.c, stacking.c (the next definition each wrapper calls),
 * tables/mpit.c (MPI_T performance variables), tables/environ.c (the ENV section:
 * affinity, variables, MPI_Init/Finalize time), tables/callsites.c (call sites: the
 * slow path of mpiscope_site_add, the process's site registry), tables/modules.c (which
 * loaded object an address is in), output/callsites_out.c (their records),
 * tables/sampling.c (sampled compute: per-thread CPU-time timers). Generated:
 * mpiscope_ids.h, mpiscope_table.c,
 * mpiscope_next.h, mpiscope_wrappers.c (gen_wrappers.py from functions.py).
 *
 * RATIONALE: everything here is hidden (not exported from libmpiscope.so),
 * so calls and global loads on the hot path need no PLT or GOT indirection;
 * only the MPI_* wrappers (declared by mpi.h) and the Fortran entry points
 * are exported.
 */
#ifndef MPISCOPE_H
#define MPISCOPE_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

#include "mpiscope_ids.h"
#include "mpiscope_next.h"
#include "profile_format.h"
#include "settings.h"

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#define MPISCOPE_CLOCK "rdtsc"
#else
#include <time.h>
#define MPISCOPE_CLOCK "clock_gettime"
#endif

#pragma GCC visibility push(hidden)

#define MPISCOPE_VERSION "0.1.0"
#define MPISCOPE_NBUCKETS 64       /* log2 size buckets: 0 bytes, then [2^(b-1), 2^b) */
#define MPISCOPE_MAX_THREADS 256   /* tables of one thread each (reused after a thread exits);
                                      more threads at once share one, under a lock */
#define MPISCOPE_REGION_DEPTH 64   /* nesting depth of open regions */
#define MPISCOPE_REGION_NAME_MAX 256   /* region names are cut to 255 bytes (UTF-8 safe) */

/* Timer ticks: TSC on x86 (calibrated against CLOCK_MONOTONIC at Init and
 * Finalize), nanoseconds elsewhere. */
static inline uint64_t mpiscope_now(void)
{
#if defined(__x86_64__) || defined(__i386__)
    return __rdtsc();
#else
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
#endif
}

typedef struct {                 /* one (function id, region slot) */
    uint64_t calls, sent, recv;
    uint64_t ticks, min, max;
} mpiscope_stat_t;

typedef struct {                 /* one (communicator slot, function id) */
    uint64_t calls, sent, recv, ticks;
} mpiscope_cstat_t;

#define MPISCOPE_COMM_WORLD_RANKS 32   /* world ranks listed per communicator in META */
enum mpiscope_comm_kind {             /* how a communicator was made (functions.py roles) */
    MPISCOPE_COMM_DUP = 1, MPISCOPE_COMM_SPLIT, MPISCOPE_COMM_SPLIT_TYPE, MPISCOPE_COMM_CREATE,
    MPISCOPE_COMM_CREATE_GROUP, MPISCOPE_COMM_INTERCOMM, MPISCOPE_COMM_MERGE, MPISCOPE_COMM_CART,
    MPISCOPE_COMM_CART_SUB, MPISCOPE_COMM_GRAPH, MPISCOPE_COMM_DIST_GRAPH, MPISCOPE_COMM_IDUP
};

typedef struct {                 /* one (histogram slot, region slot, bucket) */
    uint64_t count, ticks;
} mpiscope_hbin_t;

typedef struct {                 /* open addressing; key = world rank + 1, 0 = empty */
    uint32_t key;
    uint32_t pad;
    uint64_t msgs, bytes;
} mpiscope_peer_slot_t;

/* One (function, return address) of one thread, one cache line: the call
 * site table (tables/callsites.c, docs/runtime.md "Call sites"). */
typedef struct {
    uint64_t key;                /* return address | (function id + 1) << 48; 0 = empty */
    uint32_t site;               /* the process's site index, or >= MPISCOPE_SITE_LOOK: ask the slow path */
    uint32_t aux;                /* the slow path's (callsites.c) */
    uint64_t calls, ticks, min, max, sent, recv;
} mpiscope_site_t;
#define MPISCOPE_SITE_LOOK 0xFFFFFFF0u

/* Everything one thread records. Allocated (mmap, zero pages cost nothing
 * until touched) the first time a thread calls MPI; never freed.
 * RATIONALE for the order: what every call touches comes first, in the first
 * two cache lines (table pointers, counts, the snapshot's now_* fields); the
 * communicator cache sits after the type cache. With the 256-byte
 * communicator cache between them (as it was first added) a call on
 * MPI_COMM_WORLD cost 6-15 ns more on MPICH (perf/run_overhead.sh, same run,
 * docs/performance.md). */
typedef struct mpiscope_thread {
    mpiscope_stat_t *stats;      /* [MPISCOPE_NIDS][nslots] */
    mpiscope_hbin_t *hist;       /* [MPISCOPE_NHIST][nslots][MPISCOPE_NBUCKETS] */
    uint32_t *used;              /* stats indices with calls > 0, in first-use order */
    uint32_t *hused;             /* hist indices with count > 0 */
    uint32_t nused, nhused;
    mpiscope_peer_slot_t *peers; /* capacity peer_mask + 1 */
    uint32_t peer_mask, npeers;
    uint32_t overflow;           /* enum mpiscope_overflow bits */
    /* The call this thread is in, for snapshots (snapshot.c reads it from
     * another thread): now_func is the function id + 1, 0 outside MPI. */
    volatile uint32_t now_func;
    int32_t now_to, now_from;
    uint64_t now_t0;
    mpiscope_cstat_t *cstats;    /* [MAX_COMM_TABLES + 1][MPISCOPE_NIDS] */
    uint32_t *cused;             /* cstats indices with calls > 0 */
    uint32_t ncused;
    uint32_t tl_shift;           /* timeline bin width: 2^tl_shift ticks */
    int32_t now_cslot;           /* the call in flight's communicator slot, -1 none (snapshots) */
    uint64_t *tl;                /* timeline: [mpiscope_tl_nbins][MPISCOPE_TL_ROWS] (timeline.c) */
    uint32_t site_mask;          /* call sites: capacity - 1 (tables/callsites.c) */
    mpiscope_site_t *sites;      /* [capacity], then the sites' histogram [capacity][NBUCKETS] */
    uint32_t *shused;            /* sites' histogram indices with count > 0 */
    uint32_t nshused;
    struct {                     /* datatype handle -> MPI_Type_size_x, direct-mapped */
        uintptr_t type;
        uint64_t size;           /* 64-bit: a derived type may hold 2 GiB or more */
        uint32_t gen;
    } types[64];
    struct {                     /* communicator handle -> table slot, direct-mapped */
        uintptr_t comm;
        uint32_t slot, gen;
    } ccache[16];
    volatile uint32_t tl_seq;    /* odd while the timeline's bins are merged (snapshots retry) */
    struct mpiscope_sitecold *site_cold;  /* the slow path's per-thread state (callsites.c) */
    volatile uint32_t idle;      /* its thread exited: waits for the next new thread */
    struct mpiscope_samp *samp;  /* sampled compute (tables/sampling.c), NULL when off */
} mpiscope_thread_t;

#define MPISCOPE_PEER_OTHER_JOB (-3)   /* mpiscope_call_t.peer: a process of another job
                                          (spawned, connected): no world rank */
typedef struct {                 /* one call in flight (see roles.h) */
    mpiscope_thread_t *t;
    int id, hist, sync_id;
    int root;                    /* 1 root, 0 leaf, -1 not involved (intercomm PROC_NULL) */
    int inter;                   /* the communicator is an intercommunicator */
    int nosend, norecv;          /* MPI_IN_PLACE: skip the send / receive roles */
    int peer;                    /* world rank of a point-to-point destination, or -1 */
    int from;                    /* world rank a blocking receive waits for (-1 none, -2 any) */
    int cslot;                   /* per-communicator table slot, -1 none */
    void *ret;                   /* the wrapper's return address (its call site), NULL: none */
    uint64_t sent, recv;
    uint64_t t0, t1;
} mpiscope_call_t;

/* Process state (lifecycle.c). */
extern volatile int mpiscope_on;         /* between our MPI_Init and MPI_Finalize */
extern int mpiscope_multi;               /* MPI_THREAD_MULTIPLE: shared tables take a lock */
extern int mpiscope_world_rank_, mpiscope_world_size;
extern unsigned mpiscope_nslots;         /* region slots (MPISCOPE_MAX_REGIONS) */
extern unsigned mpiscope_region_slot;    /* innermost open region's slot, 0 = none */
extern mpiscope_settings_t mpiscope_settings;
extern __thread mpiscope_thread_t *mpiscope_tls __attribute__((tls_model("initial-exec")));
extern int mpiscope_sites_on;            /* call sites recorded (MPISCOPE_CALLSITES) */

mpiscope_thread_t *mpiscope_thread_attach(void);  /* first MPI call of a thread */
int mpiscope_in_init(void);   /* inside MPI_Init / MPI_Init_thread (the MPI's own threads start there) */
/* MPI_Init / MPI_Init_thread (thread != 0) around the MPI's own init, and the
 * profile's part of MPI_Finalize: the wrappers and pmpi_lifecycle.c's hooks. */
int mpiscope_init(int thread, int *argc, char ***argv, int required, int *provided,
                  int (*init)(int *, char ***), int (*init_thread)(int *, char ***, int, int *));
void mpiscope_finalize(void);
/* The shared table (overflow bit MPISCOPE_OVF_THREADS, set on it alone while
 * recording) is updated under this lock; its type and communicator caches
 * are never filled (they would be torn between threads). */
void mpiscope_shared_lock(void);
void mpiscope_shared_unlock(void);
#define MPISCOPE_SHARED(t) __builtin_expect(((t)->overflow & MPISCOPE_OVF_THREADS) != 0, 0)
void mpiscope_lock(void);                         /* no-ops unless mpiscope_multi */
void mpiscope_unlock(void);

#define MPISCOPE_CALL(c, id_, hist_, sync_)                                        \
    mpiscope_call_t c;                                                             \
    c.t = mpiscope_tls ? mpiscope_tls : mpiscope_thread_attach();                  \
    c.id = (id_); c.hist = (hist_); c.sync_id = (sync_);                           \
    c.root = 1; c.inter = 0; c.nosend = 0; c.norecv = 0; c.peer = -1; c.from = -1; c.cslot = -1; \
    c.ret = mpiscope_sites_on ? __builtin_return_address(0) : NULL;                \
    c.sent = 0; c.recv = 0

void mpiscope_peer_new(mpiscope_thread_t *t, int world_peer, uint64_t bytes);  /* insert or overflow */

/* One more message of `bytes` to world rank `peer`. */
static inline void mpiscope_peer_add(mpiscope_thread_t *t, int peer, uint64_t bytes)
{
    uint32_t key = (uint32_t)peer + 1u, i = (key * 2654435761u) & t->peer_mask;
    for (;;) {
        mpiscope_peer_slot_t *p = &t->peers[i];
        if (p->key == key) {
            p->msgs++;
            p->bytes += bytes;
            return;
        }
        if (p->key == 0) {
            mpiscope_peer_new(t, peer, bytes);   /* rare: a new peer */
            return;
        }
        i = (i + 1) & t->peer_mask;
    }
}

static inline void mpiscope_stat_add(mpiscope_thread_t *t, int id, uint64_t dt, uint64_t sent,
                                     uint64_t recv)
{
    uint32_t idx = (uint32_t)id * mpiscope_nslots + mpiscope_region_slot;
    mpiscope_stat_t *s = &t->stats[idx];
    if (s->calls++ == 0) {
        /* release: a snapshot thread that reads nused sees the entry (costs no instruction on x86) */
        t->used[t->nused] = idx;
        __atomic_store_n(&t->nused, t->nused + 1, __ATOMIC_RELEASE);
        s->min = dt;
    }
    s->sent += sent;
    s->recv += recv;
    s->ticks += dt;
    if (dt < s->min)
        s->min = dt;
    if (dt > s->max)
        s->max = dt;
}

/* tables/mpit.c: the tick at which the next MPI_T sample is due (UINT64_MAX:
 * never, the default), checked at the end of every wrapper. */
extern uint64_t mpiscope_mpit_due;
void mpiscope_mpit_sample(uint64_t now);

/* Around the call to the MPI: what a snapshot shows this thread sitting in. */
static inline void mpiscope_enter(mpiscope_call_t *c)
{
    mpiscope_thread_t *t = c->t;
    t->now_to = c->peer;
    t->now_from = c->from;
    t->now_cslot = c->cslot;
    t->now_t0 = c->t0;
    __atomic_store_n(&t->now_func, (uint32_t)c->id + 1u, __ATOMIC_RELEASE);
}
/* now_t0 then says since when the thread is outside MPI (a hung job: the rank
 * that never arrived, and since when). */
static inline void mpiscope_leave(mpiscope_call_t *c)
{
    __atomic_store_n(&c->t->now_func, 0u, __ATOMIC_RELAXED);
    c->t->now_t0 = c->t1;
}

/* tables/timeline.c: per-thread time bins, one row per function kind
 * (functions.KINDS) and one of bytes; bin b covers ticks [b, b + 1) x
 * 2^tl_shift from the job clock's zero. */
#define MPISCOPE_TL_ROWS (MPISCOPE_NKINDS + 1)
#define MPISCOPE_TL_BYTES MPISCOPE_NKINDS
extern uint64_t mpiscope_tl_origin;       /* ticks at the job clock's zero (barrier at MPI_Init) */
extern uint32_t mpiscope_tl_nbins;        /* bins per table (1 when the timeline is off) */
void mpiscope_timeline_slow(mpiscope_thread_t *t, unsigned row, uint64_t t0, uint64_t t1, uint64_t bytes);

/* RATIONALE: on the timestamps the wrapper took anyway, two shifts and two
 * adds when the call starts and ends in one bin (the common case); a call
 * across bins, past the last bin (the width doubles) or before the origin
 * takes the slow path. */
static inline void mpiscope_timeline_add(mpiscope_thread_t *t, unsigned row, uint64_t t0, uint64_t t1,
                                         uint64_t bytes)
{
    uint64_t b = (t1 - mpiscope_tl_origin) >> t->tl_shift;
    if (__builtin_expect(b < mpiscope_tl_nbins && b == (t0 - mpiscope_tl_origin) >> t->tl_shift, 1)) {
        uint64_t *bin = &t->tl[b * MPISCOPE_TL_ROWS];
        bin[row] += t1 - t0;
        bin[MPISCOPE_TL_BYTES] += bytes;
        return;
    }
    mpiscope_timeline_slow(t, row, t0, t1, bytes);
}

/* tables/callsites.c: a key the fast path does not find as a plain site (a
 * new site, a collision, a Fortran binding's, mpi4py's, a deeper stack).
 * NULL: not recorded (MPISCOPE_CALLSITES=0 on this thread's table). */
mpiscope_site_t *mpiscope_site_slow(mpiscope_call_t *c, uint64_t key);

/* One call of c->id at its call site. RATIONALE: the call site is the
 * wrapper's return address, so the common case is one multiply, one load
 * and two compares, then the adds of the function's row; unwinding, module
 * look-up and Python frames happen in mpiscope_site_slow, once per new
 * (function, return address). */
static inline __attribute__((always_inline)) void mpiscope_site_add(mpiscope_call_t *c, uint64_t dt,
                                                                   unsigned bucket)
{
    mpiscope_thread_t *t = c->t;
    uint64_t key = (uint64_t)(uintptr_t)c->ret | ((uint64_t)(c->id + 1) << 48);
    mpiscope_site_t *s = &t->sites[(uint32_t)((key * 0x9E3779B97F4A7C15ull) >> 32) & t->site_mask];
    if (__builtin_expect(s->key != key || s->site >= MPISCOPE_SITE_LOOK, 0))
        if (!(s = mpiscope_site_slow(c, key)))
            return;
    s->calls++;
    s->ticks += dt;
    s->sent += c->sent;
    s->recv += c->recv;
    if (dt < s->min)
        s->min = dt;
    if (dt > s->max)
        s->max = dt;
    if (c->hist >= 0) {
        uint32_t i = (uint32_t)(s - t->sites) * MPISCOPE_NBUCKETS + bucket;
        mpiscope_hbin_t *h = (mpiscope_hbin_t *)(t->sites + t->site_mask + 1) + i;
        if (h->count++ == 0) {
            t->shused[t->nshused] = i;
            __atomic_store_n(&t->nshused, t->nshused + 1, __ATOMIC_RELEASE);
        }
        h->ticks += dt;
    }
}

/* The end of every wrapper: one call of c.id, its bytes, its size bucket,
 * its message to a peer, its call site. No allocation, no lock, no string. */
static inline __attribute__((always_inline)) void mpiscope_record(mpiscope_call_t *c)
{
    mpiscope_thread_t *t = c->t;
    int shared = MPISCOPE_SHARED(t);     /* one test of a bit in the first cache line */
    if (shared)
        mpiscope_shared_lock();
    uint64_t dt = c->t1 - c->t0;
    unsigned bucket = 0;
    mpiscope_stat_add(t, c->id, dt, c->sent, c->recv);
    mpiscope_timeline_add(t, mpiscope_func_kind_ids[c->id], c->t0, c->t1, c->sent + c->recv);
    if (c->hist >= 0) {
        uint64_t size = c->sent ? c->sent : c->recv;
        bucket = size ? 64u - (unsigned)__builtin_clzll(size) : 0u;
        if (bucket >= MPISCOPE_NBUCKETS)
            bucket = MPISCOPE_NBUCKETS - 1;
        uint32_t idx = ((uint32_t)c->hist * mpiscope_nslots + mpiscope_region_slot) * MPISCOPE_NBUCKETS + bucket;
        mpiscope_hbin_t *h = &t->hist[idx];
        if (h->count++ == 0) {
            t->hused[t->nhused] = idx;
            __atomic_store_n(&t->nhused, t->nhused + 1, __ATOMIC_RELEASE);
        }
        h->ticks += dt;
    }
    if (c->peer >= 0)
        mpiscope_peer_add(t, c->peer, c->sent);
    else if (__builtin_expect(c->peer == MPISCOPE_PEER_OTHER_JOB, 0))
        t->overflow |= MPISCOPE_OVF_OTHER_JOB;    /* no world rank to file it under */
    if (c->cslot >= 0) {
        uint32_t ci = (uint32_t)c->cslot * MPISCOPE_NIDS + (uint32_t)c->id;
        mpiscope_cstat_t *cs = &t->cstats[ci];
        if (cs->calls++ == 0) {
            t->cused[t->ncused] = ci;
            __atomic_store_n(&t->ncused, t->ncused + 1, __ATOMIC_RELEASE);
        }
        cs->sent += c->sent;
        cs->recv += c->recv;
        cs->ticks += dt;
    }
    if (c->ret)
        mpiscope_site_add(c, dt, bucket);
    if (shared)
        mpiscope_shared_unlock();
    if (__builtin_expect(c->t1 >= __atomic_load_n(&mpiscope_mpit_due, __ATOMIC_RELAXED), 0))
        mpiscope_mpit_sample(c->t1);
}

/* A 64-bit handle key to a table index (the tables are open addressing). */
static inline uint32_t mpiscope_hash64(uint64_t k)
{
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdULL;
    k ^= k >> 33;
    return (uint32_t)k;
}

/* commtab.c: per-communicator tables. */
extern volatile uint32_t mpiscope_comm_gen;    /* bumped when a handle is freed */
int mpiscope_comm_slot_slow(MPI_Comm comm, unsigned cache);
static inline int mpiscope_comm_slot(MPI_Comm comm)
{
    if (comm == MPI_COMM_WORLD)
        return 0;
    uintptr_t k = (uintptr_t)comm;
    unsigned i = (unsigned)(k ^ (k >> 4) ^ (k >> 12)) & 15u;
    mpiscope_thread_t *t = mpiscope_tls;
    if (t && t->ccache[i].comm == k && t->ccache[i].gen == mpiscope_comm_gen)
        return (int)t->ccache[i].slot;
    return mpiscope_comm_slot_slow(comm, i);
}
void mpiscope_commtab_init(void);
void mpiscope_comm_created(MPI_Comm parent, int rc, MPI_Comm made, int kind, long arg, int ndims,
                           const int *dims);
void mpiscope_comm_named(MPI_Comm comm, int rc, const char *name);
void mpiscope_comm_unmap(MPI_Comm comm);
uint32_t mpiscope_commtab_overflow(void);
unsigned mpiscope_commtab_count(void);          /* slots, "other" included */
uint64_t mpiscope_commtab_id(unsigned slot);
/* For snapshots (another thread, no lock, no MPI call): the communicators this
 * rank is a member of now, world and self left out: id, size, name. */
unsigned mpiscope_commtab_live(mpiscope_member_t *out, const char **names, unsigned cap);
struct mpiscope_buf;
int mpiscope_commtab_entry(unsigned slot, uint64_t *id, struct mpiscope_buf *json);

/* comms.c */
int mpiscope_comm_translate(MPI_Comm comm, int rank);   /* world rank, -1 if unknown, or _OTHER_JOB */
static inline int mpiscope_world_of(MPI_Comm comm, int rank)
{
    return comm == MPI_COMM_WORLD ? rank : mpiscope_comm_translate(comm, rank);
}
void mpiscope_comm_forget(MPI_Comm comm);
int mpiscope_group_n(MPI_Comm comm, int *inter);        /* remote size of an intercomm, else size */
void mpiscope_degrees(MPI_Comm comm, int *indeg, int *outdeg);   /* neighbours not MPI_PROC_NULL */
void mpiscope_neighbors(MPI_Comm comm, int *indeg, int *outdeg, int *positions, uint64_t *real);
uint64_t mpiscope_bytes_slow(long count, MPI_Datatype type, unsigned slot);
extern volatile uint32_t mpiscope_type_gen;      /* bumped by MPI_Type_free */

/* count x MPI_Type_size_x(type), exact up to 2^63 (MPI_Type_size says
 * MPI_UNDEFINED for a type of 2 GiB or more). RATIONALE: the size is cached per thread by
 * handle; MPI_Type_free (the only way a handle can later name another type)
 * bumps a generation that invalidates every cache. */
static inline uint64_t mpiscope_bytes(long count, MPI_Datatype type)
{
    if (count <= 0)
        return 0;
    uintptr_t k = (uintptr_t)type;
    unsigned slot = (unsigned)(k ^ (k >> 6) ^ (k >> 12)) & 63u;
    mpiscope_thread_t *t = mpiscope_tls;
    if (t && t->types[slot].type == k && t->types[slot].gen == mpiscope_type_gen)
        return (uint64_t)count * t->types[slot].size;
    return mpiscope_bytes_slow(count, type, slot);
}
/* Persistent requests (p2p, partitioned, collective): what each start moves. */
void mpiscope_req_add(MPI_Request req, int peer, uint64_t sent, uint64_t recv, int cslot);
void mpiscope_req_start(mpiscope_call_t *c, MPI_Request req, int first);
void mpiscope_req_forget(MPI_Request req);
void mpiscope_comms_init(void);
uint32_t mpiscope_comms_overflow(void);

/* cancels.c: a receive whose cancellation succeeds moved nothing. */
#define MPISCOPE_DONE_MAX 64     /* pending cancellations at once; a completion call follows all */
enum { MPISCOPE_DONE_ONE, MPISCOPE_DONE_ALL, MPISCOPE_DONE_ANY, MPISCOPE_DONE_SOME };
typedef struct {                 /* a completion call's pending cancellations (roles.h) */
    int n;
    int idx[MPISCOPE_DONE_MAX], slot[MPISCOPE_DONE_MAX];
    MPI_Status one, *own;
} mpiscope_done_t;
extern volatile uint32_t mpiscope_cancels_pending;
void mpiscope_cancels_init(void);
void mpiscope_recv_posted(const mpiscope_call_t *c, MPI_Request req);
void mpiscope_cancel_asked(MPI_Request req);
void mpiscope_cancel_forget(MPI_Request req);     /* MPI_Request_free */
void mpiscope_done_pre(mpiscope_done_t *d, int n, const MPI_Request *reqs, MPI_Status **statuses,
                       int one);
void mpiscope_done_post(mpiscope_done_t *d, int rc, int how, const int *flag, const int *index,
                        const int *outcount, const int *indices, MPI_Status *statuses);
void mpiscope_cancels_apply(void);

/* regions.c */
void mpiscope_regions_init(void);
int mpiscope_region_control(int level, const char *name, size_t len);
void mpiscope_regions_close_all(uint64_t now);
unsigned mpiscope_regions_count(void);                  /* slots in use, including 0 */
void mpiscope_region_info(unsigned slot, uint64_t *id, uint64_t *parent, uint32_t *depth,
                          uint64_t *entries, uint64_t *ticks, const char **name);
uint32_t mpiscope_regions_overflow(void);
uint64_t mpiscope_region_id(unsigned slot);                /* 0 for slot 0 */
uint64_t mpiscope_fnv1a64(const char *s, size_t n);       /* 0 mapped to 1 */
size_t mpiscope_utf8_cut(const char *s, size_t n, size_t max); /* buf.c */

/* iofiles.c */
void mpiscope_io_file_opened(MPI_Comm comm, const char *filename, MPI_File fh);

/* A growable byte buffer (buf.c); used only outside the hot path. */
typedef struct mpiscope_buf {
    char *data;
    size_t len, cap;
} mpiscope_buf_t;
void mpiscope_buf_put(mpiscope_buf_t *b, const void *p, size_t n);
void mpiscope_buf_str(mpiscope_buf_t *b, const char *s);
void mpiscope_buf_printf(mpiscope_buf_t *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void mpiscope_buf_json_string(mpiscope_buf_t *b, const char *s);
void mpiscope_buf_free(mpiscope_buf_t *b);

/* merge.c: union over ranks of (a, b, text) entries; the result lands on
 * rank 0 of comm (and on every rank if bcast). */
typedef struct {
    uint64_t a, b;
    const char *text;            /* may be NULL */
    uint32_t len;
} mpiscope_entry_t;
typedef struct {
    mpiscope_entry_t *e;
    size_t n;
    mpiscope_buf_t store;        /* owns the serialized entries */
} mpiscope_set_t;
void mpiscope_set_union(MPI_Comm comm, const mpiscope_entry_t *mine, size_t n, int bcast,
                        mpiscope_set_t *out);
/* The same, bounded: each entry's text is its u64 weight (len 8); weights of a
 * key are summed, and at most cap entries (the heaviest) are kept at each step. */
void mpiscope_set_union_top(MPI_Comm comm, const mpiscope_entry_t *mine, size_t n, int bcast, size_t cap,
                            mpiscope_set_t *out);
/* Index of key (a, b) in entries sorted by (a, b) (a set's), else -1. */
long mpiscope_entries_find(const mpiscope_entry_t *e, size_t n, uint64_t a, uint64_t b);
void mpiscope_set_free(mpiscope_set_t *s);
size_t mpiscope_io_files_entries(mpiscope_entry_t *out, size_t cap);   /* iofiles.c */

/* rank_stats.c: values of every rank reduced to rank 0 as summary records
 * hold them. The caller fills v[n] (all four statistics), extra[m] (only
 * summed), lo[k] and hi[k] (only their least / greatest); after the reduce,
 * rank 0 has sum[n], nonzero[n], extra_sum[m], min[n + k] (v's then lo's)
 * and max[n + k] (v's then hi's). */
typedef struct {
    double v;
    int rank;
} mpiscope_val_rank_t;
typedef struct {
    size_t n, m, k;
    double *v, *extra, *lo, *hi;                  /* this rank's values */
    double *sum, *nonzero, *extra_sum;            /* rank 0's results */
    mpiscope_val_rank_t *min, *max;
    mpiscope_val_rank_t *lo_in, *hi_in;           /* the reductions' inputs */
    void *block;                                  /* owns every array above */
} mpiscope_rank_stats_t;
/* Zeroed arrays for n, m, k values; 0 if memory ran out (reduce then skips on every rank). */
int mpiscope_rank_stats_init(mpiscope_rank_stats_t *s, size_t n, size_t m, size_t k);
/* Collective over comm (rank: this rank's in comm); 0 on every rank if a rank had no memory. */
int mpiscope_rank_stats_reduce(mpiscope_rank_stats_t *s, MPI_Comm comm, int rank);
/* Value j's summary record (rank 0, after a reduce that returned 1). */
mpiscope_summary_t mpiscope_rank_stats_record(const mpiscope_rank_stats_t *s, size_t j, uint16_t func,
                                              uint16_t metric, uint64_t region);
void mpiscope_rank_stats_free(mpiscope_rank_stats_t *s);

/* writer.c / summary.c: what Finalize hands to the writers. */
typedef struct {
    MPI_Comm comm;               /* private dup of MPI_COMM_WORLD */
    int rank, size;
    double sec_per_tick;
    double start_time;           /* epoch seconds at Init (this rank) */
    double wall;                 /* Init return .. Finalize entry, s */
    mpiscope_thread_t *t;        /* all threads merged */
    uint32_t threads;
    uint32_t overflow;
    int node;                    /* world rank of the lowest rank on this node */
    int node_size;
    int *node_ranks;             /* sorted world ranks of this node */
} mpiscope_final_t;

void mpiscope_write_profile(mpiscope_final_t *f);
/* A rank's records from f->t (sorts its used lists); out holds room for all. */
uint32_t mpiscope_funcs_fill(mpiscope_final_t *f, mpiscope_func_t *out);
uint32_t mpiscope_hist_fill(mpiscope_final_t *f, mpiscope_hist_t *out);
uint32_t mpiscope_peers_fill(mpiscope_final_t *f, mpiscope_peer_t *out, mpiscope_rank_t *me);
uint32_t mpiscope_regions_fill(mpiscope_final_t *f, mpiscope_region_t *out);
uint32_t mpiscope_comms_fill(mpiscope_final_t *f, mpiscope_comm_t *out);
void mpiscope_node_fill(mpiscope_final_t *f, mpiscope_node_t *node);
void mpiscope_program_and_job(char *prog, size_t pcap, char *job, size_t jcap);

/* environ.c: the ENV section (affinity, variables, MPI_Init / MPI_Finalize time). */
void mpiscope_env_init_enter(void);          /* MPI_Init wrapper entry */
void mpiscope_env_init_mpi_done(void);       /* the MPI's own MPI_Init returned */
void mpiscope_env_init_exit(void);           /* MPI_Init wrapper exit */
void mpiscope_env_started(void);             /* where the wall-time window opens */
void mpiscope_env_node(MPI_Comm node, const int *node_ranks, int node_size);  /* collective on node */
void mpiscope_env_finalize(MPI_Comm comm);   /* MPI_Finalize entry: collective (one barrier) */
void mpiscope_env_fill(const mpiscope_final_t *f, mpiscope_env_t *r);
void mpiscope_env_metrics(const mpiscope_final_t *f, double *out);   /* MPISCOPE_RM_ENV_COUNT */
size_t mpiscope_env_entries(mpiscope_entry_t *out, uint64_t a_cpus, uint64_t a_vars);  /* 2 */
void mpiscope_env_meta(mpiscope_buf_t *meta, const mpiscope_entry_t *e, size_t n, uint64_t a_cpus,
                       uint64_t a_vars);

/* program.c: what this process runs (the script, for a Python interpreter). */
typedef struct {
    char cmdline[65536];         /* /proc/self/cmdline, NUL-separated */
    size_t len;
    char exe[4096];              /* /proc/self/exe */
    char path[4096];             /* the program: exe, or the script's absolute path / module */
    char name[256];              /* for the file name: basename, a script without .py */
    size_t argv_off;             /* where the program's argv starts in cmdline */
} mpiscope_program_t;
int mpiscope_program_info(mpiscope_program_t *p);   /* 1 if run by an interpreter */

/* lifecycle.c, for snapshots: fresh tables; every thread's tables summed
 * into `into` (cleared first), the calls in flight as time, and f filled as
 * MPI_Finalize would (no MPI call); *now: the tick it was taken at. */
mpiscope_thread_t *mpiscope_table_new(void);
void mpiscope_state_now(mpiscope_thread_t *into, mpiscope_final_t *f, uint64_t *now);
unsigned mpiscope_threads_inflight(mpiscope_inflight_t *out, unsigned cap, uint64_t now, double spt);

/* tables/mpit.c: MPI_T performance variables (MPISCOPE_MPIT=1). init after
 * PMPI_Init(_thread) returned; finish (last read, session closed,
 * MPI_T_finalize) in MPI_Finalize before any finalize traffic of ours. */
void mpiscope_mpit_init(int thread_level);
void mpiscope_mpit_finish(void);
void mpiscope_mpit_comm_made(MPI_Comm comm);     /* commtab.c: follow its queues too */
void mpiscope_mpit_comm_freed(MPI_Comm comm);    /* commtab.c: before it is freed */
int mpiscope_mpit_enabled(void);
uint32_t mpiscope_mpit_count(void);              /* variables recorded on this rank */
typedef struct {
    mpiscope_set_t names;        /* union over ranks of the variables' META entries */
    mpiscope_mpit_t *recs;       /* full mode: this rank's records */
    uint32_t nrecs;
    mpiscope_summary_t *sum;     /* summary mode, rank 0: MPISCOPE_MPIT_NMETRICS per variable */
    uint32_t nsum;
} mpiscope_mpit_out_t;
/* Collective over f->comm: every rank calls it once any rank has MPISCOPE_MPIT=1. */
void mpiscope_mpit_gather(mpiscope_final_t *f, int summary, mpiscope_mpit_out_t *out);
void mpiscope_mpit_meta(const mpiscope_mpit_out_t *o, mpiscope_buf_t *meta);   /* + META "mpit" */
void mpiscope_mpit_out_free(mpiscope_mpit_out_t *o);

/* tables/timeline.c (docs/runtime.md "Timeline"). */
void mpiscope_timeline_init(void);                        /* settings read, before any table */
int mpiscope_timeline_alloc(mpiscope_thread_t *t);        /* a new table's bins; 0: no memory */
void mpiscope_timeline_barrier(MPI_Comm comm);           /* collective: the job clock's zero is right after */
void mpiscope_timeline_origin(MPI_Comm comm, uint64_t origin);  /* collective: bounds the clock offset */
void mpiscope_timeline_merge(mpiscope_thread_t *into, mpiscope_thread_t *from);
void mpiscope_timeline_clear(mpiscope_thread_t *t);
int mpiscope_timeline_enabled(void);
typedef struct {
    uint32_t nb, nrows;          /* common bins written, rows per rank */
    uint32_t maxbins;            /* MPISCOPE_TIMELINE_BINS in effect */
    double width, end, offset;   /* s: common bin width, last rank's end, clock offset bound */
    char rows[16][16];           /* row names, in file order */
    double *mine;                /* full mode: nrows x nb values of this rank */
    mpiscope_summary_t *sum;     /* summary mode, rank 0: nrows x nb records */
    uint32_t nsum;
} mpiscope_tl_out_t;
/* Collective over f->comm: every rank calls it once any rank has a timeline. */
void mpiscope_timeline_gather(mpiscope_final_t *f, int summary, mpiscope_tl_out_t *o);
void mpiscope_timeline_meta(const mpiscope_tl_out_t *o, mpiscope_buf_t *meta);   /* + META "timeline" */
void mpiscope_timeline_out_free(mpiscope_tl_out_t *o);
/* A snapshot's block: the rank's own bins in seconds (MPISCOPE_TL_ROWS rows x *nb);
 * returns the bytes written to out (at most cap), 0 if it does not fit. */
size_t mpiscope_timeline_snapshot(const mpiscope_thread_t *t, double spt, double wall, void *out,
                                  size_t cap, uint32_t *nb, double *width);

/* snapshot.c */
void mpiscope_snapshot_init(mpiscope_final_t *f, MPI_Comm comm);   /* at MPI_Init (collective) */
void mpiscope_snapshot_stop(void);                                  /* at MPI_Finalize */
void mpiscope_meta_common(mpiscope_final_t *f, mpiscope_buf_t *b, const char *job_id,
                          const mpiscope_set_t *regions, const mpiscope_set_t *iofiles);
#define MPISCOPE_PATH_MAX 4096
void mpiscope_counts_and_name(mpiscope_final_t *f, const uint64_t *counts, uint64_t *totals, int n,
                              char *path, size_t cap, char *job);
int mpiscope_open_output(mpiscope_final_t *f, MPI_File *fh, const char *path);
int mpiscope_write_pieces(mpiscope_final_t *f, MPI_File fh, const uint64_t *off, const uint64_t *len,
                          const void *const *ptr, int n);
void mpiscope_write_summary(mpiscope_final_t *f);
void mpiscope_header_fill(mpiscope_final_t *f, mpiscope_header_t *h, uint32_t mode, uint32_t nsections,
                          uint32_t any_overflow, uint64_t file_bytes);
void mpiscope_finish_file(mpiscope_final_t *f, MPI_File *fh, const char *path, const uint64_t *off,
                          const uint64_t *len, const void *const *ptr, int n);
void mpiscope_named_sets(mpiscope_final_t *f, uint64_t named_total, uint64_t io_total,
                         mpiscope_set_t *regions, mpiscope_set_t *iofiles);
void mpiscope_rank_totals(mpiscope_final_t *f, double *mpi, double *wait, double *sync);
int mpiscope_on_node(const mpiscope_final_t *f, int world_rank);

#pragma GCC visibility pop

#endif
