/*
 * lifecycle.c - the hand-written wrappers (MPI_Init, MPI_Init_thread,
 * MPI_Finalize, MPI_Abort, MPI_Pcontrol), per-thread tables, and the step
 * from the tables to the writers at MPI_Finalize.
 *
 * RATIONALE: nothing is written before MPI_Finalize, and MPI_Abort adds no
 * MPI call of ours, so a job that aborts or loses a rank is never held up by
 * the runtime. Everything the profile needs is collected in MPI_Finalize
 * before PMPI_Finalize, on a private duplicate of MPI_COMM_WORLD so our
 * messages never match the application's.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "mpiscope.h"
#include "safe_read.h"
#include "fortran/fortran_entry.h"
#include "tables/callsites.h"
#include "tables/sampling.h"
#include "wrappers/stacking.h"

volatile int mpiscope_on;
int mpiscope_multi;
int mpiscope_world_rank_, mpiscope_world_size;
unsigned mpiscope_nslots = 1;
unsigned mpiscope_region_slot;
mpiscope_settings_t mpiscope_settings;
__thread mpiscope_thread_t *mpiscope_tls __attribute__((tls_model("initial-exec")));

static pthread_mutex_t life_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t life_thread_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t life_shared_lock = PTHREAD_MUTEX_INITIALIZER;
/* Every table ever made: MPISCOPE_MAX_THREADS of one thread each, then the
 * shared one (threads beyond that many at once, marked MPISCOPE_OVF_THREADS). */
static mpiscope_thread_t *life_threads[MPISCOPE_MAX_THREADS + 1];
static unsigned life_nthreads;
static mpiscope_thread_t *life_free[MPISCOPE_MAX_THREADS];  /* tables of threads that exited */
static unsigned life_nfree;
static mpiscope_thread_t *life_shared;
static uint32_t life_threads_seen;        /* threads that called MPI (RANKS "threads") */
static pthread_key_t life_thread_key;
static pthread_once_t life_key_once = PTHREAD_ONCE_INIT;
static uint64_t life_tsc0;                /* ticks at the return of MPI_Init */
static struct timespec life_mono0;        /* CLOCK_MONOTONIC at the same moment */
static double life_epoch0;                /* CLOCK_REALTIME at the same moment */
static int life_started, life_finished;
static uint64_t life_tsc_end;             /* ticks at the entry of MPI_Finalize, 0 before */
static MPI_Comm life_comm = MPI_COMM_NULL;  /* private duplicate of MPI_COMM_WORLD */
static mpiscope_final_t life_final;         /* node identity, filled at MPI_Init */
static void life_node(mpiscope_final_t *f);
static void life_clock_pair(struct timespec *mono, uint64_t *tick);

void mpiscope_lock(void)
{
    if (mpiscope_multi)
        pthread_mutex_lock(&life_lock);
}

void mpiscope_unlock(void)
{
    if (mpiscope_multi)
        pthread_mutex_unlock(&life_lock);
}

static void *zalloc(size_t bytes)
{
    void *p = mmap(NULL, bytes ? bytes : 1, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

static mpiscope_thread_t *thread_new(void)
{
    size_t nstat = (size_t)MPISCOPE_NIDS * mpiscope_nslots;
    size_t nhist = (size_t)MPISCOPE_NHIST * mpiscope_nslots * MPISCOPE_NBUCKETS;
    uint32_t cap = 16;
    while (cap < 2u * (uint32_t)mpiscope_settings.MAX_PEERS)
        cap <<= 1;
    mpiscope_thread_t *t = zalloc(sizeof *t);
    if (!t)
        return NULL;
    t->stats = zalloc(nstat * sizeof *t->stats);
    t->hist = zalloc(nhist * sizeof *t->hist);
    t->used = zalloc(nstat * sizeof *t->used);
    t->hused = zalloc(nhist * sizeof *t->hused);
    t->peers = zalloc(cap * sizeof *t->peers);
    t->peer_mask = cap - 1;
    size_t ncstat = ((size_t)mpiscope_settings.MAX_COMM_TABLES + 1u) * MPISCOPE_NIDS;
    t->cstats = zalloc(ncstat * sizeof *t->cstats);
    t->cused = zalloc(ncstat * sizeof *t->cused);
    if (!t->stats || !t->hist || !t->used || !t->hused || !t->peers || !t->cstats || !t->cused ||
        !mpiscope_timeline_alloc(t) || !mpiscope_sites_thread_init(t) || !mpiscope_samples_thread_init(t))
        return NULL;
    return t;
}

/* A thread that called MPI exits: its table (counts kept) serves the next
 * new thread. RATIONALE: a program that starts many short-lived threads
 * (a thread per task) would otherwise run out of tables after 256 threads,
 * while never having more than a few alive at once. */
static void life_thread_exit(void *p)
{
    mpiscope_thread_t *t = p;
    mpiscope_samples_thread_stop(t);
    mpiscope_tls = NULL;
    if (!t || t == life_shared)
        return;
    pthread_mutex_lock(&life_thread_lock);
    t->idle = 1;
    if (life_nfree < MPISCOPE_MAX_THREADS)
        life_free[life_nfree++] = t;
    pthread_mutex_unlock(&life_thread_lock);
}

static void life_key_make(void)
{
    pthread_key_create(&life_thread_key, life_thread_exit);
}

/* A thread's first MPI call: give it a table of its own (under a lock,
 * once): one a thread that exited left, else a new one; with
 * MPISCOPE_MAX_THREADS threads alive at once, the shared table, which every
 * record takes a lock for (mpiscope_record), and whose overflow bit says so. */
mpiscope_thread_t *mpiscope_thread_attach(void)
{
    pthread_once(&life_key_once, life_key_make);
    pthread_mutex_lock(&life_thread_lock);
    mpiscope_thread_t *t = NULL;
    if (life_nfree)
        t = life_free[--life_nfree];
    else if (life_nthreads < MPISCOPE_MAX_THREADS) {
        t = thread_new();
        if (t)
            __atomic_store_n(&life_threads[life_nthreads], t, __ATOMIC_RELAXED),
            __atomic_store_n(&life_nthreads, life_nthreads + 1, __ATOMIC_RELEASE);
    }
    if (!t && life_nthreads > 0) {   /* out of tables or memory */
        if (!life_shared && (life_shared = thread_new()) != NULL) {
            life_shared->overflow = MPISCOPE_OVF_THREADS;
            __atomic_store_n(&life_threads[life_nthreads], life_shared, __ATOMIC_RELAXED);
            __atomic_store_n(&life_nthreads, life_nthreads + 1, __ATOMIC_RELEASE);
        }
        t = life_shared;
    }
    if (t) {
        t->idle = 0;
        life_threads_seen++;
    }
    pthread_mutex_unlock(&life_thread_lock);
    mpiscope_tls = t;
    if (t) {
        pthread_setspecific(life_thread_key, t);
        mpiscope_samples_thread_start(t);   /* MPISCOPE_SAMPLE: this thread's CPU-time timer */
    }
    return t;
}

unsigned mpiscope_threads_list(mpiscope_thread_t **out, unsigned cap)
{
    unsigned n = __atomic_load_n(&life_nthreads, __ATOMIC_ACQUIRE);
    for (unsigned k = 0; k < n && k < cap; k++)
        out[k] = life_threads[k];
    return n < cap ? n : cap;
}

void mpiscope_shared_lock(void)
{
    pthread_mutex_lock(&life_shared_lock);
}

void mpiscope_shared_unlock(void)
{
    pthread_mutex_unlock(&life_shared_lock);
}

void mpiscope_peer_new(mpiscope_thread_t *t, int peer, uint64_t bytes)
{
    if (t->npeers >= (uint32_t)mpiscope_settings.MAX_PEERS) {
        t->overflow |= MPISCOPE_OVF_PEERS;
        return;
    }
    uint32_t key = (uint32_t)peer + 1u, i = (key * 2654435761u) & t->peer_mask;
    while (t->peers[i].key != 0)
        i = (i + 1) & t->peer_mask;
    t->peers[i].key = key;
    t->peers[i].msgs = 1;
    t->peers[i].bytes = bytes;
    t->npeers++;
}

static void life_start(int provided)
{
    if (life_started)
        return;
    life_started = 1;
    PMPI_Comm_rank(MPI_COMM_WORLD, &mpiscope_world_rank_);
    PMPI_Comm_size(MPI_COMM_WORLD, &mpiscope_world_size);
    mpiscope_settings_read(&mpiscope_settings, mpiscope_world_rank_ == 0);
    mpiscope_multi = provided == MPI_THREAD_MULTIPLE;
    mpiscope_nslots = (unsigned)mpiscope_settings.MAX_REGIONS;
    mpiscope_timeline_init();
    mpiscope_sites_init();
    mpiscope_samples_init();
    mpiscope_comms_init();
    mpiscope_cancels_init();
    mpiscope_commtab_init();
    mpiscope_regions_init();
    /* RATIONALE: the private communicator and the node table are made here,
     * not in MPI_Finalize: both are collective, and at MPI_Init every rank
     * is already synchronized by MPI itself. */
    PMPI_Comm_dup(MPI_COMM_WORLD, &life_comm);
    life_node(&life_final);
    if (!mpiscope_thread_attach())
        return;     /* no memory: stay a pass-through */
    if (mpiscope_world_rank_ == 0)
        mpiscope_stacking_report();
    if (mpiscope_world_rank_ == 0 && !mpiscope_settings.QUIET)
        fprintf(stderr, "mpiscope: profiling %d ranks (%s mode%s)\n", mpiscope_world_size,
                mpiscope_settings.MODE == MPISCOPE_MODE_VALUE_SUMMARY ? "summary" : "full",
                mpiscope_settings.SYNC ? ", sync" : "");
    mpiscope_timeline_barrier(life_comm);   /* the ranks' clocks start together (timeline.c) */
    struct timespec rt;
    clock_gettime(CLOCK_REALTIME, &rt);
    life_epoch0 = (double)rt.tv_sec + 1e-9 * (double)rt.tv_nsec;
    life_clock_pair(&life_mono0, &life_tsc0);
    mpiscope_env_started();
    mpiscope_timeline_origin(life_comm, life_tsc0);
    mpiscope_mpit_init(provided);   /* MPISCOPE_MPIT=1: the MPI_T session, after PMPI_Init */
    mpiscope_on = 1;
    /* after mpiscope_on: a snapshot may be taken from now on */
    mpiscope_snapshot_init(&life_final, life_comm);
}

/* MPI_Init and MPI_Init_thread (thread != 0), here and in the PMPI_ hooks of
 * pmpi_lifecycle.c, each with the MPI's own function to call. A nested entry
 * (a tool after us whose MPI_Init calls PMPI_Init, which is our hook) and a
 * copy of mpiscope that stands down for a later one only call it. */
static volatile int life_in_init;
int mpiscope_in_init(void)
{
    return life_in_init;
}

int mpiscope_init(int thread, int *argc, char ***argv, int required, int *provided,
                  int (*init)(int *, char ***), int (*init_thread)(int *, char ***, int, int *))
{
    mpiscope_next_resolve();   /* done already by the constructor, unless linked statically */
    if (life_in_init || mpiscope_stand_down())
        return thread ? init_thread(argc, argv, required, provided) : init(argc, argv);
    life_in_init = 1;
    int err = errno;
    mpiscope_env_init_enter();
    errno = err;
    int rc = thread ? init_thread(argc, argv, required, provided) : init(argc, argv);
    err = errno;    /* the program sees the MPI's errno, not what starting up left (settings' strtol...) */
    mpiscope_env_init_mpi_done();
    if (rc == MPI_SUCCESS)
        life_start(!thread ? MPI_THREAD_SINGLE : provided ? *provided : required);
    mpiscope_env_init_exit();
    life_in_init = 0;
    errno = err;
    return rc;
}

int MPI_Init(int *argc, char ***argv)
{
    mpiscope_next_resolve();
    return mpiscope_init(0, argc, argv, 0, NULL, mpiscope_next_MPI_Init, mpiscope_next_MPI_Init_thread);
}

int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    mpiscope_next_resolve();
    return mpiscope_init(1, argc, argv, required, provided, mpiscope_next_MPI_Init,
                         mpiscope_next_MPI_Init_thread);
}

int MPI_Abort(MPI_Comm comm, int errorcode)
{
    mpiscope_on = 0;       /* nothing more is recorded, nothing is written */
    return mpiscope_next_MPI_Abort(comm, errorcode);
}

/* CLOCK_MONOTONIC and the tick counter read at one moment: the tick is the
 * middle of two reads around the clock's, the pair with the narrowest
 * bracket of a few. RATIONALE: a rank preempted between two bare reads (a
 * loaded node) put tens of microseconds between them, an error in seconds
 * per tick of 1e-5 over a second's run: two snapshots of one rank gave
 * different wall times for the same ticks, and the ranks' timeline grids
 * disagreed. */
static void life_clock_pair(struct timespec *mono, uint64_t *tick)
{
    uint64_t best = UINT64_MAX;
    for (int i = 0; i < 8 && best > 2000; i++) {
        struct timespec m;
        uint64_t a = mpiscope_now();
        clock_gettime(CLOCK_MONOTONIC, &m);
        uint64_t b = mpiscope_now();
        if (b >= a && b - a < best) {
            best = b - a;
            *mono = m;
            *tick = a + (b - a) / 2;
        }
    }
    if (best == UINT64_MAX) {       /* the counter went back (never on an invariant TSC) */
        clock_gettime(CLOCK_MONOTONIC, mono);
        *tick = mpiscope_now();
    }
}

/* Seconds per tick from the TSC and CLOCK_MONOTONIC between Init and now; a
 * short run is stretched to 20 ms so the ratio is accurate. */
static double life_calibrate(uint64_t *tsc1_out)
{
#if defined(__x86_64__) || defined(__i386__)
    struct timespec m1;
    uint64_t t1;
    double dt;
    for (;;) {
        life_clock_pair(&m1, &t1);
        dt = (double)(m1.tv_sec - life_mono0.tv_sec) + 1e-9 * (double)(m1.tv_nsec - life_mono0.tv_nsec);
        if (dt >= 0.02 || t1 <= life_tsc0)
            break;
        struct timespec nap = {0, 20000000};
        nanosleep(&nap, NULL);
    }
    if (tsc1_out)
        *tsc1_out = t1;
    return t1 > life_tsc0 ? dt / (double)(t1 - life_tsc0) : 1e-9;
#else
    if (tsc1_out)
        *tsc1_out = mpiscope_now();
    return 1e-9;
#endif
}

/* Add table t into t0 (counts, histogram, peers, overflow). */
static void life_table_add(mpiscope_thread_t *t0, mpiscope_thread_t *t)
{
    uint32_t nused = __atomic_load_n(&t->nused, __ATOMIC_ACQUIRE);
    for (uint32_t u = 0; u < nused; u++) {
        uint32_t i = t->used[u];
        mpiscope_stat_t *a = &t0->stats[i], *b = &t->stats[i];
        if (a->calls == 0) {
            t0->used[t0->nused++] = i;
            *a = *b;
            continue;
        }
        a->calls += b->calls;
        a->sent += b->sent;
        a->recv += b->recv;
        a->ticks += b->ticks;
        if (b->min < a->min)
            a->min = b->min;
        if (b->max > a->max)
            a->max = b->max;
    }
    uint32_t nhused = __atomic_load_n(&t->nhused, __ATOMIC_ACQUIRE);
    for (uint32_t u = 0; u < nhused; u++) {
        uint32_t i = t->hused[u];
        if (t0->hist[i].count == 0)
            t0->hused[t0->nhused++] = i;
        t0->hist[i].count += t->hist[i].count;
        t0->hist[i].ticks += t->hist[i].ticks;
    }
    uint32_t ncused = __atomic_load_n(&t->ncused, __ATOMIC_ACQUIRE);
    for (uint32_t u = 0; u < ncused; u++) {
        uint32_t i = t->cused[u];
        mpiscope_cstat_t *a = &t0->cstats[i], *b = &t->cstats[i];
        if (a->calls == 0)
            t0->cused[t0->ncused++] = i;
        a->calls += b->calls;
        a->sent += b->sent;
        a->recv += b->recv;
        a->ticks += b->ticks;
    }
    for (uint32_t i = 0; i <= t->peer_mask; i++) {
        mpiscope_peer_slot_t *p = &t->peers[i];
        if (!p->key)
            continue;
        mpiscope_peer_add(t0, (int)p->key - 1, p->bytes);   /* one message + all bytes */
        uint32_t j = (p->key * 2654435761u) & t0->peer_mask;
        while (t0->peers[j].key != 0 && t0->peers[j].key != p->key)
            j = (j + 1) & t0->peer_mask;
        if (t0->peers[j].key == p->key)
            t0->peers[j].msgs += p->msgs - 1;
    }
    mpiscope_timeline_merge(t0, t);
    t0->overflow |= t->overflow;
}

/* Fold every other thread's tables into the first one. */
static void life_merge_threads(mpiscope_thread_t *t0)
{
    for (unsigned k = 1; k < life_nthreads; k++)
        life_table_add(t0, life_threads[k]);
}

mpiscope_thread_t *mpiscope_table_new(void)
{
    return thread_new();
}

/* Empty a table made by mpiscope_table_new, touching only what was used. */
static void life_table_clear(mpiscope_thread_t *t)
{
    for (uint32_t u = 0; u < t->nused; u++)
        memset(&t->stats[t->used[u]], 0, sizeof *t->stats);
    for (uint32_t u = 0; u < t->nhused; u++)
        memset(&t->hist[t->hused[u]], 0, sizeof *t->hist);
    for (uint32_t u = 0; u < t->ncused; u++)
        memset(&t->cstats[t->cused[u]], 0, sizeof *t->cstats);
    t->ncused = 0;
    if (t->npeers)
        memset(t->peers, 0, (t->peer_mask + 1u) * sizeof *t->peers);
    t->nused = t->nhused = t->npeers = 0;
    t->overflow = 0;
    mpiscope_timeline_clear(t);
}

/* For a snapshot: each call in flight counts as time in its function up to
 * now (not as a call: it has not completed). RATIONALE: a hung rank sits in
 * one call; without this its whole wait would be "compute" (issue 27). A
 * rank in MPI_Finalize is not: its wall time ends at MPI_Finalize's entry. */
static void life_inflight_time(mpiscope_thread_t *into, uint64_t now)
{
    unsigned n = __atomic_load_n(&life_nthreads, __ATOMIC_ACQUIRE);
    for (unsigned k = 0; k < n; k++) {
        mpiscope_thread_t *t = life_threads[k];
        uint32_t fn = __atomic_load_n(&t->now_func, __ATOMIC_ACQUIRE);
        uint64_t t0 = t->now_t0;
        if (t->idle || fn == 0 || fn > MPISCOPE_NIDS || fn == MPISCOPE_ID_MPI_Finalize + 1u || now <= t0)
            continue;
        uint32_t i = (fn - 1u) * mpiscope_nslots + mpiscope_region_slot;
        mpiscope_stat_t *s = &into->stats[i];
        if (s->calls == 0 && s->ticks == 0)
            into->used[into->nused++] = i;
        s->ticks += now - t0;
        if (now - t0 > s->max)
            s->max = now - t0;
        /* and in the timeline's bins, which sum to the function table per kind */
        mpiscope_timeline_slow(into, mpiscope_func_kind_ids[fn - 1u], t0, now, 0);
    }
}

/* For a snapshot (another thread, no MPI call): the sum of every thread's
 * tables so far, the calls in flight as time, and f as MPI_Finalize would
 * fill it; *now_out: the tick it is taken at. The counters are read while
 * the application may be updating them: a call that completes meanwhile may
 * be missing or half counted (docs/runtime.md). */
void mpiscope_state_now(mpiscope_thread_t *into, mpiscope_final_t *f, uint64_t *now_out)
{
    life_table_clear(into);
    unsigned n = __atomic_load_n(&life_nthreads, __ATOMIC_ACQUIRE);
    for (unsigned k = 0; k < n; k++)
        life_table_add(into, life_threads[k]);
    uint64_t now, end = __atomic_load_n(&life_tsc_end, __ATOMIC_ACQUIRE);
    *f = life_final;
    f->sec_per_tick = life_calibrate(&now);
    life_inflight_time(into, now);
    /* in MPI_Finalize: the wall time ends at its entry, as in the final profile */
    f->wall = (double)((end ? end : now) - life_tsc0) * f->sec_per_tick;
    f->start_time = life_epoch0;
    f->t = into;
    f->threads = __atomic_load_n(&life_threads_seen, __ATOMIC_RELAXED);
    f->overflow = into->overflow | mpiscope_comms_overflow() | mpiscope_regions_overflow() |
                  mpiscope_commtab_overflow() | mpiscope_sites_overflow();
    f->rank = mpiscope_world_rank_;
    f->size = mpiscope_world_size;
    *now_out = now;
}

/* What each thread is doing now: one record per thread with tables. */
unsigned mpiscope_threads_inflight(mpiscope_inflight_t *out, unsigned cap, uint64_t now, double spt)
{
    unsigned n = __atomic_load_n(&life_nthreads, __ATOMIC_ACQUIRE), m = 0;
    for (unsigned k = 0; k < n && m < cap; k++) {
        mpiscope_thread_t *t = life_threads[k];
        if (t->idle)             /* its thread exited */
            continue;
        uint32_t fn = __atomic_load_n(&t->now_func, __ATOMIC_ACQUIRE);
        mpiscope_inflight_t *r = &out[m++];
        memset(r, 0, sizeof *r);
        r->rank = (uint32_t)mpiscope_world_rank_;
        r->thread = (uint16_t)k;
        r->func = fn ? (uint16_t)(fn - 1) : MPISCOPE_NOT_IN_MPI;
        r->to = fn ? t->now_to : MPISCOPE_PEER_NONE;
        r->from = fn ? t->now_from : MPISCOPE_PEER_NONE;
        uint64_t t0 = t->now_t0;
        int32_t cslot = t->now_cslot;
        r->seconds = t0 && now > t0 ? (double)(now - t0) * spt : 0.0;
        r->comm = fn && cslot >= 0 ? mpiscope_commtab_id((unsigned)cslot) : 0;
    }
    return m;
}

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* Which ranks share this rank's node: MPI_Comm_split_type(SHARED), keyed by
 * world rank so the node communicator's rank 0 is the lowest world rank. */
static void life_node(mpiscope_final_t *f)
{
    MPI_Comm node;
    MPI_Group g, wg;
    PMPI_Comm_split_type(life_comm, MPI_COMM_TYPE_SHARED, mpiscope_world_rank_, MPI_INFO_NULL, &node);
    PMPI_Comm_size(node, &f->node_size);
    PMPI_Comm_group(node, &g);
    PMPI_Comm_group(life_comm, &wg);
    int *r = malloc(sizeof(int) * (size_t)f->node_size);
    f->node_ranks = malloc(sizeof(int) * (size_t)f->node_size);
    for (int i = 0; i < f->node_size; i++)
        r[i] = i;
    PMPI_Group_translate_ranks(g, f->node_size, r, wg, f->node_ranks);
    qsort(f->node_ranks, (size_t)f->node_size, sizeof(int), cmp_int);
    f->node = f->node_ranks[0];
    mpiscope_env_node(node, f->node_ranks, f->node_size);   /* node rank i = node_ranks[i] */
    free(r);
    PMPI_Group_free(&g);
    PMPI_Group_free(&wg);
    PMPI_Comm_free(&node);
}

int mpiscope_on_node(const mpiscope_final_t *f, int world_rank)
{
    int lo = 0, hi = f->node_size - 1;
    while (lo <= hi) {
        int mid = (lo + hi) / 2;
        if (f->node_ranks[mid] == world_rank)
            return 1;
        if (f->node_ranks[mid] < world_rank)
            lo = mid + 1;
        else
            hi = mid - 1;
    }
    return 0;
}

void mpiscope_rank_totals(mpiscope_final_t *f, double *mpi, double *wait, double *sync)
{
    uint64_t all = 0, w = 0, s = 0;
    mpiscope_thread_t *t = f->t;
    for (uint32_t u = 0; u < t->nused; u++) {
        uint32_t i = t->used[u];
        unsigned id = i / mpiscope_nslots;
        const char *k = mpiscope_func_kinds[id];
        all += t->stats[i].ticks;
        if (k[0] == 'w')          /* "wait" */
            w += t->stats[i].ticks;
        else if (k[0] == 's')     /* "sync" */
            s += t->stats[i].ticks;
    }
    *mpi = (double)all * f->sec_per_tick;
    *wait = (double)w * f->sec_per_tick;
    *sync = (double)s * f->sec_per_tick;
}

/* The profile's part of MPI_Finalize (here and in the PMPI_Finalize hook):
 * wait for every rank, then write. */
static void life_finalize(void);

/* The MPI's MPI_Finalize sees the program's errno, not what writing the profile left. */
void mpiscope_finalize(void)
{
    if (!mpiscope_on || life_finished)
        return;
    int err = errno;
    life_finalize();
    errno = err;
}

static void life_finalize(void)
{
    uint64_t tsc_end = mpiscope_now();
    mpiscope_samples_stop();    /* the samples end where the wall time does */
    life_finished = 1;
    /* Until every rank is here a snapshot may still be asked for (the
     * snapshot thread stays up, the handlers stay ours): it shows this
     * thread in MPI_Finalize, and the wall time ends at its entry. */
    mpiscope_thread_t *me = mpiscope_tls ? mpiscope_tls : mpiscope_thread_attach();
    if (me) {
        me->now_to = me->now_from = MPISCOPE_PEER_NONE;
        me->now_cslot = 0;       /* MPI_Finalize waits for every rank of MPI_COMM_WORLD */
        me->now_t0 = tsc_end;
        __atomic_store_n(&me->now_func, (uint32_t)MPISCOPE_ID_MPI_Finalize + 1u, __ATOMIC_RELEASE);
    }
    __atomic_store_n(&life_tsc_end, tsc_end, __ATOMIC_RELEASE);
    mpiscope_on = 0;
    mpiscope_mpit_finish();     /* last MPI_T read before our own traffic, MPI_T closed */
    mpiscope_env_finalize(life_comm);   /* the wait for the last rank */
    mpiscope_snapshot_stop();   /* every rank is here: no snapshot races the final write */
    mpiscope_regions_close_all(tsc_end);
    mpiscope_final_t f = life_final;
    uint64_t tsc1;
    f.sec_per_tick = life_calibrate(&tsc1);
    f.wall = (double)(tsc_end - life_tsc0) * f.sec_per_tick;
    f.start_time = life_epoch0;
    f.t = life_threads[0];
    f.threads = life_threads_seen;
    mpiscope_cancels_apply();
    life_merge_threads(f.t);
    f.overflow = f.t->overflow | mpiscope_comms_overflow() | mpiscope_regions_overflow() |
                 mpiscope_commtab_overflow() | mpiscope_sites_overflow();
    f.comm = life_comm;
    f.rank = mpiscope_world_rank_;
    f.size = mpiscope_world_size;
    if (mpiscope_settings.MODE == MPISCOPE_MODE_VALUE_SUMMARY)
        mpiscope_write_summary(&f);
    else
        mpiscope_write_profile(&f);
    free(f.node_ranks);
    PMPI_Comm_free(&life_comm);
    if (me)
        __atomic_store_n(&me->now_func, 0u, __ATOMIC_RELEASE);
}

int MPI_Finalize(void)
{
    mpiscope_finalize();
    return mpiscope_next_MPI_Finalize();
}

/* --- MPI_Pcontrol ------------------------------------------------------------------ */

/* Copy a C string that may not exist (a level passed without a name leaves
 * garbage in the variadic slot): read with mpiscope_safe_read, which fails
 * instead of faulting. Returns the length (a longer name is cut to cap - 1
 * bytes, see regions.c), or 0 if unreadable or holding control characters. */
static size_t life_safe_name(const char *s, char *buf, size_t cap)
{
    size_t n = 0;
    if (!s)
        return 0;
    while (n + 1 < cap) {
        size_t page = 4096 - ((uintptr_t)(s + n) & 4095);
        size_t want = cap - 1 - n < page ? cap - 1 - n : page;
        if (!mpiscope_safe_read(buf + n, s + n, want))
            return 0;
        for (size_t i = 0; i < want; i++) {
            unsigned char ch = (unsigned char)buf[n + i];
            if (ch == 0)
                return n + i;
            if (ch < 0x20 || ch == 0x7f)
                return 0;
        }
        n += want;
    }
    return n;      /* no terminator within cap - 1 bytes: the prefix is the name */
}

static void life_pcontrol(int level, const char *name, size_t len)
{
    if (mpiscope_on) {
        MPISCOPE_CALL(c, MPISCOPE_ID_MPI_Pcontrol, -1, -1);
        c.t0 = c.t1 = 0;    /* Pcontrol is bookkeeping, not time in MPI */
        c.ret = NULL;       /* and has no call site */
        mpiscope_record(&c); /* charged to the region it is called in */
        if (name && len)
            mpiscope_region_control(level, name, len);
    }
}

/* The Fortran binding's entry: MPI_Pcontrol has only the level in Fortran. */
int mpiscope_pcontrol(int level, const char *name, size_t len)
{
    int err = errno;     /* the caller's errno, not what a region's first use left */
    life_pcontrol(level, name, len);
    errno = err;
    return mpiscope_next_MPI_Pcontrol(level);
}

int MPI_Pcontrol(const int level, ...)
{
    char buf[MPISCOPE_REGION_NAME_MAX];
    size_t len = 0;
    const char *name = NULL;
    int err = errno;     /* the caller's errno, not what the name's read or a region's first use left */
    if (level == 1 || level == -1) {
        va_list ap;
        va_start(ap, level);
        name = va_arg(ap, const char *);
        va_end(ap);
        len = life_safe_name(name, buf, sizeof buf);
    }
    life_pcontrol(level, len ? buf : NULL, len);
    errno = err;
    /* a tool after us gets the name pointer the program passed, as it would without us */
    return len ? mpiscope_next_MPI_Pcontrol(level, name) : mpiscope_next_MPI_Pcontrol(level);
}
