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
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

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
    if (!samp_running || !si || si->si_code != SI_TIMER || !t || !t->samp ||
        si->si_value.sival_ptr != t->samp)
        return;
    samp_t *s = t->samp;
    /* an expiry missed while the signal was pending still cost a period of CPU */
    uint64_t n = 1u + (uint64_t)(si->si_overrun > 0 ? si->si_overrun : 0);
    uint32_t fn = t->now_func;
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

void mpiscope_samples_thread_start(mpiscope_thread_t *t)
{
    samp_t *s = t->samp;
    if (!samp_running || !s || s->armed || MPISCOPE_SHARED(t))
        return;
    struct sigevent ev;
    memset(&ev, 0, sizeof ev);
    ev.sigev_notify = SIGEV_THREAD_ID;
    ev.sigev_signo = SIGPROF;
    ev.sigev_value.sival_ptr = s;
    ev._sigev_un._tid = (pid_t)syscall(SYS_gettid);
    int saved = errno;
    if (timer_create(CLOCK_THREAD_CPUTIME_ID, &ev, &s->timer) == 0) {
        long ns = 1000000000L / samp_hz;
        struct itimerspec its = {{ns / 1000000000L, ns % 1000000000L}, {ns / 1000000000L, ns % 1000000000L}};
        if (timer_settime(s->timer, 0, &its, NULL) == 0)
            s->armed = 1;
        else
            timer_delete(s->timer);
    }
    errno = saved;
}

void mpiscope_samples_thread_stop(mpiscope_thread_t *t)
{
    samp_t *s = t ? t->samp : NULL;
    if (s && s->armed) {
        s->armed = 0;
        timer_delete(s->timer);
    }
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

uint32_t mpiscope_samples_prepare(mpiscope_final_t *f, mpiscope_samples_out_t *o)
{
    memset(o, 0, sizeof *o);
    if (samp_hz <= 0)
        return 0;
    mpiscope_thread_t *threads[MPISCOPE_MAX_THREADS + 1];
    unsigned nt = mpiscope_threads_list(threads, MPISCOPE_MAX_THREADS + 1);
    size_t cap = 0;
    for (unsigned k = 0; k < nt; k++)
        if (threads[k]->samp)
            cap += threads[k]->samp->nused + 1u;
    row_t *rows = calloc(cap ? cap : 1, sizeof *rows);
    uint64_t *other = calloc(nt ? nt : 1, sizeof *other);
    if (!rows || !other) {
        free(rows);
        free(other);
        return 0;
    }
    size_t n = 0;
    int last = -1;
    for (unsigned k = 0; k < nt; k++) {
        samp_t *s = threads[k]->samp;
        if (!s)
            continue;
        other[k] = s->lost;
        o->total += s->lost;
        if (s->lost)
            f->overflow |= MPISCOPE_OVF_SAMPLES;
        for (uint32_t i = 0; i < SAMP_SLOTS; i++) {
            const samp_slot_t *e = &s->slot[i];
            if (!e->key || !e->count)
                continue;
            row_t *w = &rows[n++];
            w->r.rank = (uint32_t)f->rank;
            w->r.thread = (uint16_t)k;
            w->r.samples = e->count;
            w->module = -1;
            o->total += e->count;
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
