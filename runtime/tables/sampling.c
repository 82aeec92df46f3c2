/*
 * sampling.c - what the compute is (docs/sampling.md): MPISCOPE_SAMPLE=HZ
 * gives every thread that has its own tables a timer on its own CPU time;
 * each expiry sends that thread SIGPROF, whose handler counts the
 * interrupted program counter (or, inside a wrapped MPI call, the function)
 * in the thread's fixed table. At MPI_Finalize the addresses become
 * (module, offset) through modules.c, as call sites' frames do, and the
 * offline symbolizer (src/mpiscope/symbols/) names their functions.
 *
 * RATIONALE:
 * - timer_create(CLOCK_THREAD_CPUTIME_ID) with SIGEV_THREAD_ID, not
 *   setitimer(ITIMER_PROF): ITIMER_PROF counts the whole process's CPU time
 *   and its signal is process-directed, so the kernel may deliver it to any
 *   thread, also one blocked in read or poll (which then returns EINTR),
 *   and a thread's share is not its own CPU time. A thread CPU-time timer
 *   expires only while its thread runs and signals that thread alone: a
 *   thread asleep in read, sleep or poll uses no CPU time and is never
 *   interrupted there, and MPI's own helper threads (progress, PMIx), which
 *   never call a wrapper, get no timer.
 * - The handler is async-signal-safe: no allocation, no lock, no call but
 *   none; it reads its thread's table through initial-exec TLS and only that
 *   thread writes it. A full table (probes exhausted) counts in "lost".
 * - Only the program counter, no stack: frame pointers are omitted at -O2
 *   on x86-64, so a frame-pointer walk would return wrong callers, and an
 *   unwinder that reads DWARF is not async-signal-safe.
 * - A sample inside a wrapped MPI call (now_func, set by mpiscope_enter)
 *   counts for that function, never as the MPI library's code: the call
 *   sites (CALLSITES) already time each site exactly.
 * - SIGPROF is taken only if the program left it at its default action: a
 *   program (or profiler) with its own SIGPROF handler is not sampled.
 * - Threads that never call MPI (OpenMP workers, a program's own pthreads)
 *   have no tables: wrappers/pthread_create.c starts them through
 *   mpiscope_samples_thread_main, which gives each a sample table of its own ("solo" tables,
 *   reported after the tables of the threads that called MPI) and its timer.
 *   Only threads a program thread (one with tables, or a sampled one)
 *   starts between MPI_Init and MPI_Finalize outside MPI calls: one started
 *   inside an MPI call or MPI_Init is the MPI's own (progress, PMIx, UCX's
 *   async thread), one a library's thread starts is that library's, and
 *   one started before MPI_Init may be a library constructor's.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>
#include <unwind.h>

#include "mpiscope.h"
#include "tables/callsites.h"
#include "tables/modules.h"
#include "tables/sampling.h"

#define SAMP_SLOTS 4096u               /* per thread: distinct addresses kept */
#define SAMP_FILL (SAMP_SLOTS * 3u / 4u)
#define SAMP_PROBES 32u
#define KEY_MPI (1ull << 63)           /* key of a sample in MPI: KEY_MPI | function id + 1 */

typedef struct {
    uint64_t key, count;               /* key: program counter, or KEY_MPI | id + 1; 0 = empty */
} samp_slot_t;

typedef struct mpiscope_samp {
    timer_t timer;
    int armed;
    uint32_t nused;                    /* slots taken (the handler's only) */
    uint64_t lost;                     /* samples no slot was left for */
    samp_slot_t slot[SAMP_SLOTS];
} samp_t;

static int samp_hz;                    /* 0: off */
static volatile int samp_running;      /* between MPI_Init and MPI_Finalize's entry */

/* Threads without tables (mpiscope_samples_thread_main): their sample tables, kept after they
 * exit (their samples count) and reused by the next such thread. */
#define SOLO_MAX 256u
typedef struct {
    samp_t *s;
    int alive;
} solo_t;
static solo_t solo[SOLO_MAX];
static unsigned nsolo;
static pthread_mutex_t solo_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_key_t solo_key;
static pthread_once_t solo_once = PTHREAD_ONCE_INIT;
static __thread samp_t *samp_own __attribute__((tls_model("initial-exec")));

static uint64_t pc_of(void *ucv)
{
    const ucontext_t *uc = ucv;
#if defined(__x86_64__)
    return (uint64_t)uc->uc_mcontext.gregs[REG_RIP];
#elif defined(__aarch64__)
    return (uint64_t)uc->uc_mcontext.pc;
#else
    (void)uc;
    return 0;
#endif
}

static void on_sample(int sig, siginfo_t *si, void *ucv)
{
    (void)sig;
    mpiscope_thread_t *t = mpiscope_tls;
    if (!samp_running || !si || si->si_code != SI_TIMER)
        return;
    samp_t *s = si->si_value.sival_ptr;
    if (!s || (s != samp_own && (!t || s != t->samp)))
        return;
    /* an expiry missed while the signal was pending still cost a period of CPU */
    uint64_t n = 1u + (uint64_t)(si->si_overrun > 0 ? si->si_overrun : 0);
    uint32_t fn = t ? t->now_func : 0u;
    uint64_t key = fn ? KEY_MPI | fn : pc_of(ucv);
    if (!key) {
        s->lost += n;
        return;
    }
    uint32_t i = (uint32_t)((key * 0x9E3779B97F4A7C15ull) >> 40) & (SAMP_SLOTS - 1u);
    for (unsigned p = 0; p < SAMP_PROBES; p++, i = (i + 1u) & (SAMP_SLOTS - 1u)) {
        samp_slot_t *e = &s->slot[i];
        if (e->key == key) {
            e->count += n;
            return;
        }
        if (e->key == 0) {
            if (s->nused >= SAMP_FILL)
                break;
            e->key = key;
            e->count = n;
            s->nused++;
            return;
        }
    }
    s->lost += n;
}

void mpiscope_samples_init(void)
{
    samp_hz = (int)mpiscope_settings.SAMPLE;
    if (samp_hz <= 0)
        return;
    struct sigaction old;
    if (sigaction(SIGPROF, NULL, &old) != 0 || (old.sa_flags & SA_SIGINFO) ||
        (old.sa_handler != SIG_DFL && old.sa_handler != SIG_IGN)) {
        if (mpiscope_world_rank_ == 0)
            fprintf(stderr, "mpiscope: warning: MPISCOPE_SAMPLE: the program has its own SIGPROF "
                            "handler; not sampling\n");
        samp_hz = 0;
        return;
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_sample;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    /* RATIONALE: installed for good (never restored): a SIGPROF still
     * pending after the timers are deleted would otherwise end the process
     * with the default action. */
    if (sigaction(SIGPROF, &sa, NULL) != 0) {
        samp_hz = 0;
        return;
    }
    samp_running = 1;
}

int mpiscope_samples_enabled(void)
{
    return samp_hz > 0;
}

int mpiscope_samples_thread_init(mpiscope_thread_t *t)
{
    if (samp_hz <= 0)
        return 1;
    void *p = mmap(NULL, sizeof(samp_t), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return 0;
    t->samp = p;
    return 1;
}

/* A timer on the calling thread's CPU-time clock that signals that thread alone. */
static void arm(samp_t *s)
{
    struct sigevent ev;
    memset(&ev, 0, sizeof ev);
    ev.sigev_notify = SIGEV_THREAD_ID;
    ev.sigev_signo = SIGPROF;
    ev.sigev_value.sival_ptr = s;
    ev._sigev_un._tid = (pid_t)syscall(SYS_gettid);
    int saved = errno;
    if (timer_create(CLOCK_THREAD_CPUTIME_ID, &ev, &s->timer) == 0) {
        long ns = 1000000000L / samp_hz;
        /* RATIONALE: the first sample after a random part of the period, not a whole one
         * (as perf and gperftools randomize): a thread that lives for less CPU time than
         * one period was never sampled, so a program that does its work in many short
         * threads lost it all (76 samples of about 1,200 expected at 1000 Hz). With a
         * uniform offset each thread's expected samples are its CPU time x HZ. */
        uint64_t mix = (mpiscope_now() ^ ((uint64_t)ev._sigev_un._tid * 0x9E3779B97F4A7C15ull)) *
                       0xBF58476D1CE4E5B9ull;
        long first = 1 + (long)((mix >> 17) % (uint64_t)ns);
        struct itimerspec its = {{ns / 1000000000L, ns % 1000000000L},
                                 {first / 1000000000L, first % 1000000000L}};
        if (timer_settime(s->timer, 0, &its, NULL) == 0)
            s->armed = 1;
        else
            timer_delete(s->timer);
    }
    errno = saved;
}

static void disarm(samp_t *s)
{
    if (s && __atomic_exchange_n(&s->armed, 0, __ATOMIC_ACQ_REL))
        timer_delete(s->timer);
}

void mpiscope_samples_thread_start(mpiscope_thread_t *t)
{
    samp_t *s = t->samp;
    /* a solo thread that calls MPI keeps counting in its solo table */
    if (!samp_running || !s || s->armed || MPISCOPE_SHARED(t) || samp_own)
        return;
    arm(s);
}

void mpiscope_samples_thread_stop(mpiscope_thread_t *t)
{
    disarm(t ? t->samp : NULL);
}

void mpiscope_samples_stop(void)
{
    if (!samp_running)
        return;
    samp_running = 0;
    mpiscope_thread_t *threads[MPISCOPE_MAX_THREADS + 1];
    unsigned nt = mpiscope_threads_list(threads, MPISCOPE_MAX_THREADS + 1);
    for (unsigned k = 0; k < nt; k++)
        mpiscope_samples_thread_stop(threads[k]);
    pthread_mutex_lock(&solo_lock);
    for (unsigned j = 0; j < nsolo; j++)
        disarm(solo[j].s);
    pthread_mutex_unlock(&solo_lock);
}

/* --- threads that never call MPI ------------------------------------------------ */

static void solo_leave(void *p)
{
    solo_t *e = p;
    pthread_mutex_lock(&solo_lock);
    disarm(e->s);
    e->alive = 0;
    pthread_mutex_unlock(&solo_lock);
    samp_own = NULL;
}

static void solo_key_make(void)
{
    pthread_key_create(&solo_key, solo_leave);
}

/* The calling (new) thread's solo table: one an exited thread left, else a
 * new one, and its timer. None past SOLO_MAX at once. */
static void solo_join(void)
{
    pthread_once(&solo_once, solo_key_make);
    pthread_mutex_lock(&solo_lock);
    solo_t *e = NULL;
    for (unsigned j = 0; j < nsolo && !e; j++)
        if (!solo[j].alive)
            e = &solo[j];
    if (!e && nsolo < SOLO_MAX) {
        void *p = mmap(NULL, sizeof(samp_t), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p != MAP_FAILED) {
            e = &solo[nsolo];
            e->s = p;
            __atomic_store_n(&nsolo, nsolo + 1u, __ATOMIC_RELEASE);
        }
    }
    if (e) {
        e->alive = 1;
        samp_own = e->s;
        if (samp_running)
            arm(e->s);
    }
    pthread_mutex_unlock(&solo_lock);
    if (e)
        pthread_setspecific(solo_key, e);
}

/* The creator is a program thread (it called MPI, or is sampled as one)
 * outside MPI_Init and MPI calls: a thread a library's own thread starts is
 * that library's. */
int mpiscope_samples_wants_thread(void)
{
    mpiscope_thread_t *t = mpiscope_tls;
    return samp_running && (t || samp_own) && !mpiscope_in_init() && !(t && t->now_func);
}

void *mpiscope_samples_thread_main(void *p)
{
    mpiscope_thread_start_t a = *(mpiscope_thread_start_t *)p;
    int saved = errno;      /* the thread starts as the C library started it */
    free(p);
    solo_join();
    errno = saved;
    return a.fn(a.arg);
}

/* --- at MPI_Finalize ----------------------------------------------------------- */

typedef struct {
    mpiscope_sample_t r;
    int32_t module;
} row_t;

static int by_samples(const void *a, const void *b)
{
    const row_t *x = a, *y = b;
    if (x->r.samples != y->r.samples)
        return x->r.samples < y->r.samples ? 1 : -1;
    return x->r.thread != y->r.thread ? (x->r.thread > y->r.thread) - (x->r.thread < y->r.thread)
                                      : (x->r.offset > y->r.offset) - (x->r.offset < y->r.offset);
}

/* The tables to write, thread index k: the threads that called MPI (their
 * tables' order), then the solo threads. */
static unsigned tables_list(samp_t **out, unsigned cap)
{
    mpiscope_thread_t *threads[MPISCOPE_MAX_THREADS + 1];
    unsigned nt = mpiscope_threads_list(threads, MPISCOPE_MAX_THREADS + 1), n = 0;
    for (unsigned k = 0; k < nt && n < cap; k++)
        out[n++] = threads[k]->samp;
    unsigned ns = __atomic_load_n(&nsolo, __ATOMIC_ACQUIRE);
    for (unsigned j = 0; j < ns && n < cap; j++)
        out[n++] = solo[j].s;
    return n;
}

/* Table s (thread k)'s used slots into rows[n..]: (module, offset) or the MPI function. */
static size_t table_rows(const samp_t *s, unsigned k, int rank, row_t *rows, size_t n)
{
    int last = -1;
    for (uint32_t i = 0; i < SAMP_SLOTS; i++) {
        const samp_slot_t *e = &s->slot[i];
        if (!e->key || !e->count)
            continue;
        row_t *w = &rows[n++];
        w->r.rank = (uint32_t)rank;
        w->r.thread = (uint16_t)k;
        w->r.samples = e->count;
        w->module = -1;
        if (e->key & KEY_MPI) {
            w->r.func = (uint16_t)((e->key & 0xFFFFu) - 1u);
            continue;
        }
        w->r.func = MPISCOPE_SAMPLE_COMPUTE;
        uintptr_t pc = (uintptr_t)e->key;
        const mpiscope_modinfo_t *m = last >= 0 ? mpiscope_module(last) : NULL;
        if (!m || m->kind != MPISCOPE_MODULE_ELF || pc < m->lo || pc >= m->hi)
            last = mpiscope_sites_module_at(pc);
        m = last >= 0 ? mpiscope_module(last) : NULL;
        if (m) {
            if (m->role == MPISCOPE_ROLE_SKIP)
                w->r.func = MPISCOPE_SAMPLE_MPI_LAYER;
            w->module = last;
            w->r.module = m->rec.key;
            w->r.offset = (uint64_t)(pc - m->base);
        }
    }
    return n;
}

uint32_t mpiscope_samples_prepare(mpiscope_final_t *f, mpiscope_samples_out_t *o)
{
    memset(o, 0, sizeof *o);
    if (samp_hz <= 0)
        return 0;
    samp_t *tables[MPISCOPE_MAX_THREADS + 1 + SOLO_MAX];
    unsigned nt = tables_list(tables, MPISCOPE_MAX_THREADS + 1 + SOLO_MAX);
    size_t cap = 0;
    for (unsigned k = 0; k < nt; k++)
        if (tables[k])
            cap += tables[k]->nused + 1u;
    row_t *rows = calloc(cap ? cap : 1, sizeof *rows);
    uint64_t *other = calloc(nt ? nt : 1, sizeof *other);
    if (!rows || !other) {
        free(rows);
        free(other);
        return 0;
    }
    size_t n = 0;
    for (unsigned k = 0; k < nt; k++) {
        samp_t *s = tables[k];
        if (!s)
            continue;
        other[k] = s->lost;
        o->total += s->lost;
        if (s->lost)
            f->overflow |= MPISCOPE_OVF_SAMPLES;
        size_t first = n;
        n = table_rows(s, k, f->rank, rows, n);
        for (size_t i = first; i < n; i++)
            o->total += rows[i].r.samples;
    }
    qsort(rows, n, sizeof *rows, by_samples);
    size_t keep = n < (size_t)mpiscope_settings.SAMPLE_MAX ? n : (size_t)mpiscope_settings.SAMPLE_MAX;
    for (size_t i = keep; i < n; i++)
        other[rows[i].r.thread] += rows[i].r.samples;
    uint32_t nother = 0;
    for (unsigned k = 0; k < nt; k++)
        nother += other[k] != 0;
    o->recs = calloc(keep + nother + 1, sizeof *o->recs);
    o->module = calloc(keep + nother + 1, sizeof *o->module);
    if (o->recs && o->module) {
        for (size_t i = 0; i < keep; i++) {
            o->recs[o->nrecs] = rows[i].r;
            o->module[o->nrecs++] = rows[i].module;
        }
        for (unsigned k = 0; k < nt; k++)
            if (other[k]) {
                o->recs[o->nrecs] = (mpiscope_sample_t){(uint32_t)f->rank, MPISCOPE_SAMPLE_OTHER,
                                                        (uint16_t)k, 0, 0, other[k]};
                o->module[o->nrecs++] = -1;
            }
    }
    free(rows);
    free(other);
    return o->nrecs;
}

/* --- summary mode: by function ------------------------------------------------- */

static int fn_by_key(const void *a, const void *b)
{
    const mpiscope_sample_fn_t *x = a, *y = b;
    if (x->module != y->module)
        return x->module < y->module ? -1 : 1;
    return (x->offset > y->offset) - (x->offset < y->offset);
}

static int fn_by_samples(const void *a, const void *b)
{
    const mpiscope_sample_fn_t *x = a, *y = b;
    if (x->samples != y->samples)
        return x->samples < y->samples ? 1 : -1;
    return fn_by_key(a, b);
}

/* RATIONALE: the function an address is in, without symbols, from the
 * unwind tables (.eh_frame, kept in stripped objects and for static
 * functions): libgcc looks up pc - 1 (it expects return addresses), so a
 * sample at a function's first instruction is asked as pc + 1. Called at
 * MPI_Finalize only, never in the handler (it takes libgcc's locks).
 * Without an FDE the address stays its own. */
static uintptr_t function_start(uintptr_t pc, const mpiscope_modinfo_t *m)
{
    uintptr_t fn = (uintptr_t)_Unwind_FindEnclosingFunction((void *)(pc + 1));
    return fn && fn >= m->lo && fn <= pc ? fn : pc;
}

void mpiscope_samples_by_function(mpiscope_final_t *f, mpiscope_samples_by_fn_t *o)
{
    memset(o, 0, sizeof *o);
    if (samp_hz <= 0)
        return;
    samp_t *tables[MPISCOPE_MAX_THREADS + 1 + SOLO_MAX];
    unsigned nt = tables_list(tables, MPISCOPE_MAX_THREADS + 1 + SOLO_MAX);
    size_t cap = 1;
    for (unsigned k = 0; k < nt; k++)
        if (tables[k])
            cap += tables[k]->nused;
    mpiscope_sample_fn_t *fn = calloc(cap, sizeof *fn);
    if (!fn)
        return;
    size_t n = 0;
    int last = -1;
    for (unsigned k = 0; k < nt; k++) {
        const samp_t *s = tables[k];
        if (!s)
            continue;
        o->compute += s->lost;
        if (s->lost)
            f->overflow |= MPISCOPE_OVF_SAMPLES;
        for (uint32_t i = 0; i < SAMP_SLOTS; i++) {
            const samp_slot_t *e = &s->slot[i];
            if (!e->key || !e->count)
                continue;
            o->total += e->count;
            if (e->key & KEY_MPI) {
                uint32_t id = (uint32_t)(e->key & 0xFFFFu) - 1u;
                o->mpi[id < MPISCOPE_NIDS ? id : MPISCOPE_NIDS] += e->count;
                continue;
            }
            uintptr_t pc = (uintptr_t)e->key;
            const mpiscope_modinfo_t *m = last >= 0 ? mpiscope_module(last) : NULL;
            if (!m || m->kind != MPISCOPE_MODULE_ELF || pc < m->lo || pc >= m->hi)
                last = mpiscope_sites_module_at(pc);
            m = last >= 0 ? mpiscope_module(last) : NULL;
            if (m && m->role == MPISCOPE_ROLE_SKIP) {
                o->mpi[MPISCOPE_NIDS] += e->count;
                continue;
            }
            o->compute += e->count;
            fn[n++] = m ? (mpiscope_sample_fn_t){m->rec.key, (uint64_t)(function_start(pc, m) - m->base), e->count,
                                                 last}
                        : (mpiscope_sample_fn_t){0, 0, e->count, -1};
        }
        o->total += s->lost;
    }
    /* addresses of one function -> one row */
    qsort(fn, n, sizeof *fn, fn_by_key);
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (k && fn_by_key(&fn[k - 1], &fn[i]) == 0)
            fn[k - 1].samples += fn[i].samples;
        else
            fn[k++] = fn[i];
    }
    qsort(fn, k, sizeof *fn, fn_by_samples);
    if (k > (size_t)mpiscope_settings.SAMPLE_MAX)
        k = (size_t)mpiscope_settings.SAMPLE_MAX;
    o->mods = calloc(k + 1, sizeof *o->mods);
    for (size_t i = 0; o->mods && i < k; i++)
        o->mods[i] = fn[i].mod;
    o->fn = fn;
    o->nfn = (uint32_t)k;
}

void mpiscope_samples_by_function_free(mpiscope_samples_by_fn_t *o)
{
    free(o->fn);
    free(o->mods);
    memset(o, 0, sizeof *o);
}

void mpiscope_samples_meta(mpiscope_buf_t *meta)
{
    if (!meta->len || meta->data[meta->len - 1] != '}')
        return;
    meta->len--;
    mpiscope_buf_printf(meta, ", \"samples\": {\"hz\": %d, \"clock\": \"thread_cputime\", "
                              "\"signal\": \"SIGPROF\", \"max_records\": %ld, \"stack\": 0}}",
                        samp_hz, mpiscope_settings.SAMPLE_MAX);
}

void mpiscope_samples_out_free(mpiscope_samples_out_t *o)
{
    free(o->recs);
    free(o->module);
    memset(o, 0, sizeof *o);
}
