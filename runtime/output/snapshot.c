/*
 * snapshot.c - every rank writes its tables so far, without any collective
 * call, when a timer fires (MPISCOPE_SNAPSHOT=seconds), when it receives the
 * snapshot signal (MPISCOPE_SNAPSHOT_SIGNAL, SIGUSR1 by default) and when it
 * receives SIGTERM (MPISCOPE_SNAPSHOT_TERM), so a hung or killed job can be
 * inspected (docs/runtime.md "Snapshots").
 *
 * RATIONALE: a dedicated thread of our own does all the work; it never calls
 * MPI (the application may run MPI_THREAD_SINGLE, and a hung rank sits inside
 * MPI). The signal handlers only write one byte to a pipe (async-signal
 * safe); the SIGTERM handler then waits, with a bound, for the thread to say
 * the snapshot is on disk and runs the program's own SIGTERM action. Each
 * rank writes one chunk with one pwrite into its own slot of the spool
 * (one file per node by default), so a snapshot of P ranks costs P writes and
 * P / ranks-per-node files, and a reader sees either the old chunk or the new
 * one (the chunk's checksum tells a torn read).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "mpiscope.h"
#include "output/callsites_out.h"

#define SNAP_MAX_INFLIGHT (MPISCOPE_MAX_THREADS + 1)   /* + the shared table */
#define SNAP_TERM_GRACE_MS 5000     /* the longest SIGTERM waits for its snapshot */

static struct {
    int on;
    volatile int live;             /* the thread answers; 0 once stopped (the handlers stay) */
    int wake[2];                   /* handler -> thread: one byte per request (a signal number) */
    int done[2];                   /* thread -> SIGTERM handler: the snapshot is written */
    pthread_t thread;
    int sig;                       /* the snapshot signal, 0 if none */
    struct sigaction old_sig, old_term;
    int have_sig, have_term;
    char dir[MPISCOPE_PATH_MAX];   /* the spool directory (same on every rank) */
    char file[MPISCOPE_PATH_MAX + 64];
    uint64_t slot_off;             /* where this rank's chunk goes in its file */
    int node_index, leader;
    mpiscope_buf_t meta;           /* META JSON of this job (the first rank to snapshot writes meta.json) */
    int fd;
    uint32_t seq;
    mpiscope_thread_t *scratch;    /* every thread's tables summed */
    char *chunk;                   /* SNAPSHOT_BYTES */
    mpiscope_func_t *funcs;        /* room for every possible record (mmap: untouched pages are free) */
    mpiscope_hist_t *hist;
    mpiscope_peer_t *peers;
    mpiscope_region_t *regs;
    mpiscope_inflight_t inflight[SNAP_MAX_INFLIGHT];
    mpiscope_member_t *members;    /* the communicators this rank is in */
    const char **member_names;
    unsigned members_cap;
} snap = {.wake = {-1, -1}, .done = {-1, -1}, .fd = -1};

static void *snap_zalloc(size_t bytes)
{
    void *p = mmap(NULL, bytes ? bytes : 1, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

/* sum over the chunk's 8-byte words w[i] of w[i] * (2i + 1), mod 2^64: a
 * reader checks it with one vectorized numpy expression (a torn read, where
 * the writer was mid-pwrite, fails it). */
static uint64_t snap_checksum(const void *p, size_t n)
{
    const unsigned char *b = p;
    uint64_t sum = 0;
    for (size_t i = 0; i < n / 8; i++) {
        uint64_t w;
        memcpy(&w, b + 8 * i, 8);
        sum += w * (2u * (uint64_t)i + 1u);
    }
    return sum;
}

/* --- signals -------------------------------------------------------------------- */

static void snap_chain(const struct sigaction *old, int sig, siginfo_t *si, void *uc)
{
    if (old->sa_flags & SA_SIGINFO) {
        if (old->sa_sigaction)
            old->sa_sigaction(sig, si, uc);
    } else if (old->sa_handler != SIG_IGN && old->sa_handler != SIG_DFL) {
        old->sa_handler(sig);
    } else if (old->sa_handler == SIG_DFL && sig == SIGTERM) {
        /* the default action: die of SIGTERM once this handler returns */
        sigaction(SIGTERM, old, NULL);
        raise(SIGTERM);
    }
}

static void snap_handler(int sig, siginfo_t *si, void *uc)
{
    int saved = errno;
    unsigned char b = (unsigned char)sig;
    int live = snap.live;
    if (sig == SIGTERM) {
        char junk[16];
        while (live && read(snap.done[0], junk, sizeof junk) > 0) {
        }
        if (live && write(snap.wake[1], &b, 1) == 1) {
            struct pollfd pf = {snap.done[0], POLLIN, 0};
            poll(&pf, 1, SNAP_TERM_GRACE_MS);
        }
        errno = saved;
        snap_chain(&snap.old_term, sig, si, uc);
        return;
    }
    if (live) {
        ssize_t rc = write(snap.wake[1], &b, 1);
        (void)rc;
    }
    errno = saved;
    if (sig == snap.sig && snap.have_sig)
        snap_chain(&snap.old_sig, sig, si, uc);
}

static int snap_signal_number(long choice)
{
    switch (choice) {      /* index in "USR1|USR2|URG|none" */
    case 0: return SIGUSR1;
    case 1: return SIGUSR2;
    case 2: return SIGURG;
    default: return 0;
    }
}

/* --- the chunk ------------------------------------------------------------------- */

static size_t pad8(size_t n)
{
    return (n + 7u) & ~(size_t)7u;
}

/* Build this rank's chunk in snap.chunk; returns its length. Layout: header,
 * RANK, NODE, FUNCS, HIST, PEERS, REGIONS, INFLIGHT, region names, timeline. */
static size_t snap_build(int sig)
{
    mpiscope_final_t f;
    uint64_t now_tsc;
    mpiscope_state_now(snap.scratch, &f, &now_tsc);
    struct timespec rt;
    clock_gettime(CLOCK_REALTIME, &rt);

    mpiscope_rank_t me;
    memset(&me, 0, sizeof me);
    uint32_t nf = mpiscope_funcs_fill(&f, snap.funcs);
    uint32_t nh = mpiscope_hist_fill(&f, snap.hist);
    uint32_t np = mpiscope_peers_fill(&f, snap.peers, &me);
    uint32_t nr = mpiscope_regions_fill(&f, snap.regs);
    unsigned ni = mpiscope_threads_inflight(snap.inflight, SNAP_MAX_INFLIGHT, now_tsc, f.sec_per_tick);
    mpiscope_node_t node;
    mpiscope_node_fill(&f, &node);
    unsigned nm = mpiscope_commtab_live(snap.members, snap.member_names, snap.members_cap);
    size_t mnames = 0;
    for (unsigned i = 0; i < nm; i++)
        mnames += 4 + strlen(snap.member_names[i]);
    mnames = pad8(mnames);

    me.rank = (uint32_t)f.rank;
    me.node = (uint32_t)f.node;
    me.wall = f.wall;
    mpiscope_rank_totals(&f, &me.mpi, &me.wait, &me.sync);
    me.overflow = f.overflow;
    me.threads = f.threads;

    /* Region names: u32 length + bytes each, in REGIONS order. */
    size_t names = 0;
    for (uint32_t i = 0; i < nr; i++) {
        uint64_t id, parent, entries, ticks;
        uint32_t depth;
        const char *name;
        mpiscope_region_info(i + 1, &id, &parent, &depth, &entries, &ticks, &name);
        names += 4 + strlen(name);
    }
    names = pad8(names);
    mpiscope_buf_t sites = {0};       /* call sites: records and their JSON (callsites_out.c) */
    uint32_t nsites = mpiscope_sites_on ? mpiscope_sites_chunk(&f, &sites) : 0;

    /* What does not fit the slot is dropped: call sites, histogram, then
     * peers, then function records (never the header, RANK, NODE, in-flight
     * records). */
    size_t cap = (size_t)mpiscope_settings.SNAPSHOT_BYTES;
    uint32_t flags = 0;
    size_t fixed = sizeof(mpiscope_snap_header_t) + sizeof me + sizeof node +
                   sizeof(mpiscope_inflight_t) * ni + sizeof(mpiscope_region_t) * nr + names +
                   sizeof(mpiscope_member_t) * nm + mnames;
    size_t need = fixed + sizeof(mpiscope_func_t) * nf + sizeof(mpiscope_hist_t) * nh +
                  sizeof(mpiscope_peer_t) * np + sites.len;
    if (need > cap && sites.len) {
        flags |= MPISCOPE_SNAPF_TRUNCATED;
        need -= sites.len;
        sites.len = 0;
        nsites = 0;
    }
    if (need > cap) {
        flags |= MPISCOPE_SNAPF_TRUNCATED;
        need -= sizeof(mpiscope_hist_t) * nh;
        nh = 0;
    }
    if (need > cap) {
        size_t drop = (need - cap + sizeof(mpiscope_peer_t) - 1) / sizeof(mpiscope_peer_t);
        drop = drop > np ? np : drop;
        np -= (uint32_t)drop;
        need -= sizeof(mpiscope_peer_t) * drop;
    }
    if (need > cap) {
        size_t drop = (need - cap + sizeof(mpiscope_func_t) - 1) / sizeof(mpiscope_func_t);
        drop = drop > nf ? nf : drop;
        nf -= (uint32_t)drop;
        need -= sizeof(mpiscope_func_t) * drop;
    }
    if (need > cap) {          /* regions and their names alone exceed the slot */
        need -= sizeof(mpiscope_region_t) * nr + names;
        nr = 0;
        names = 0;
    }
    if (need > cap) {          /* so do the communicators */
        nm = 0;
        mnames = 0;
    }
    me.func_count = nf;
    me.hist_count = nh;
    me.peer_count = np;
    me.region_count = nr;

    char *p = snap.chunk + sizeof(mpiscope_snap_header_t);
#define PUT(src, n)                 \
    do {                            \
        memcpy(p, (src), (n));      \
        p += (n);                   \
    } while (0)
    PUT(&me, sizeof me);
    PUT(&node, sizeof node);
    PUT(snap.funcs, sizeof(mpiscope_func_t) * nf);
    PUT(snap.hist, sizeof(mpiscope_hist_t) * nh);
    PUT(snap.peers, sizeof(mpiscope_peer_t) * np);
    PUT(snap.regs, sizeof(mpiscope_region_t) * nr);
    PUT(snap.inflight, sizeof(mpiscope_inflight_t) * ni);
    char *names_at = p;
    for (uint32_t i = 0; i < nr && names; i++) {
        uint64_t id, parent, entries, ticks;
        uint32_t depth;
        const char *name;
        mpiscope_region_info(i + 1, &id, &parent, &depth, &entries, &ticks, &name);
        uint32_t len = (uint32_t)strlen(name);
        PUT(&len, 4);
        PUT(name, len);
    }
    memset(p, 0, (size_t)(names_at + names - p));
    p = names_at + names;
    if (sites.len)
        memcpy(p, sites.data, sites.len);
    p += sites.len;
    PUT(snap.members, sizeof(mpiscope_member_t) * nm);
    names_at = p;
    for (unsigned i = 0; i < nm && mnames; i++) {
        uint32_t len = (uint32_t)strlen(snap.member_names[i]);
        PUT(&len, 4);
        PUT(snap.member_names[i], len);
    }
#undef PUT
    memset(p, 0, (size_t)(names_at + mnames - p));
    p = names_at + mnames;
    /* The timeline goes last, in whatever room the slot has left (it is dropped first). */
    uint32_t tl_bins = 0;
    double tl_width = 0;
    size_t room = cap > (size_t)(p - snap.chunk) ? cap - (size_t)(p - snap.chunk) : 0;
    size_t tl_bytes = mpiscope_timeline_snapshot(snap.scratch, f.sec_per_tick, f.wall, p, room, &tl_bins,
                                                 &tl_width);
    if (!tl_bytes && mpiscope_timeline_enabled())
        flags |= MPISCOPE_SNAPF_TRUNCATED;
    p += tl_bytes;

    mpiscope_snap_header_t h;
    memset(&h, 0, sizeof h);
    memcpy(h.magic, MPISCOPE_SPOOL_MAGIC, 8);
    h.version = 1;
    h.header_bytes = sizeof h;
    h.chunk_bytes = (uint64_t)(p - snap.chunk);
    h.rank = (uint32_t)f.rank;
    h.nranks = (uint32_t)f.size;
    h.seq = ++snap.seq;
    h.reason = sig == 0 ? MPISCOPE_SNAP_TIMER : sig == SIGTERM ? MPISCOPE_SNAP_TERM : MPISCOPE_SNAP_SIGNAL;
    h.time = (double)rt.tv_sec + 1e-9 * (double)rt.tv_nsec;
    h.start_time = f.start_time;
    h.nfuncs = nf;
    h.nhist = nh;
    h.npeers = np;
    h.nregions = nr;
    h.ninflight = ni;
    h.names_bytes = (uint32_t)names;
    h.flags = flags;
    h.signal = (uint32_t)sig;
    h.tl_bins = tl_bins;
    h.tl_rows = tl_bins ? MPISCOPE_TL_ROWS : 0;
    h.tl_width = tl_width;
    h.ncallsites = nsites;
    h.callsite_bytes = (uint32_t)sites.len;
    mpiscope_buf_free(&sites);
    h.nmembers = nm;
    h.member_names_bytes = (uint32_t)mnames;
    memcpy(snap.chunk, &h, sizeof h);
    h.checksum = snap_checksum(snap.chunk, h.chunk_bytes);
    memcpy(snap.chunk, &h, sizeof h);
    return h.chunk_bytes;
}

/* meta.json, made once by whichever rank comes first (link() is atomic). */
static void snap_write_meta(void)
{
    char final[MPISCOPE_PATH_MAX + 16], tmp[MPISCOPE_PATH_MAX + 48];
    snprintf(final, sizeof final, "%s/meta.json", snap.dir);
    if (access(final, F_OK) == 0)
        return;
    snprintf(tmp, sizeof tmp, "%s/.meta.json.%d", snap.dir, mpiscope_world_rank_);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0)
        return;
    ssize_t n = write(fd, snap.meta.data, snap.meta.len);
    close(fd);
    if (n == (ssize_t)snap.meta.len)
        (void)link(tmp, final);
    unlink(tmp);
}

static void snap_take(int sig)
{
    if (snap.fd < 0) {
        if (mkdir(snap.dir, 0755) != 0 && errno != EEXIST)
            return;
        snap.fd = open(snap.file, O_WRONLY | O_CREAT, 0644);
        if (snap.fd < 0) {
            if (snap.leader)
                fprintf(stderr, "mpiscope: warning: cannot write the snapshot spool %s: %s\n",
                        snap.file, strerror(errno));
            return;
        }
    }
    if (snap.seq == 0)           /* once per rank: one metadata look-up, not one per snapshot */
        snap_write_meta();
    size_t n = snap_build(sig);
    ssize_t rc = pwrite(snap.fd, snap.chunk, n, (off_t)snap.slot_off);
    (void)rc;
}

static double snap_mono(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void *snap_main(void *arg)
{
    (void)arg;
    double period = (double)mpiscope_settings.SNAPSHOT;
    double next = period > 0 ? snap_mono() + period : 0;
    for (;;) {
        int timeout = -1;
        if (period > 0) {
            double left = next - snap_mono();
            timeout = left <= 0 ? 0 : (int)(left * 1000.0) + 1;
        }
        struct pollfd pf = {snap.wake[0], POLLIN, 0};
        int rc = poll(&pf, 1, timeout);
        if (rc < 0 && errno == EINTR)
            continue;
        if (rc > 0) {
            unsigned char b[64];
            ssize_t n = read(snap.wake[0], b, sizeof b);
            if (n <= 0)
                continue;
            int stop = 0, term = 0, sig = 0;
            for (ssize_t i = 0; i < n; i++) {
                stop |= b[i] == 0;
                term |= b[i] == SIGTERM;
                sig = b[i] ? b[i] : sig;
            }
            if (stop)
                return NULL;
            snap_take(term ? SIGTERM : sig);
            if (term) {
                unsigned char ok = 1;
                ssize_t w = write(snap.done[1], &ok, 1);
                (void)w;
            }
            continue;
        }
        if (period > 0 && snap_mono() >= next) {
            snap_take(0);
            while (next <= snap_mono())
                next += period;
        }
    }
}

/* --- start and stop -------------------------------------------------------------- */

void mpiscope_snapshot_init(mpiscope_final_t *life, MPI_Comm comm)
{
    mpiscope_final_t mine = *life, *f = &mine;
    f->rank = mpiscope_world_rank_;
    f->size = mpiscope_world_size;
    snap.sig = snap_signal_number(mpiscope_settings.SNAPSHOT_SIGNAL);
    int want = mpiscope_settings.SNAPSHOT > 0 || snap.sig || mpiscope_settings.SNAPSHOT_TERM;
    if (!want)
        return;
    /* The spool's name is rank 0's (program, job id), the same on every rank:
     * one broadcast here, where every rank is in MPI_Init anyway. */
    char job[256] = "", prog[256];
    mpiscope_program_and_job(prog, sizeof prog, job, sizeof job);
    if (f->rank == 0) {
        snprintf(snap.dir, sizeof snap.dir, "%s/%s.%s.spool", mpiscope_settings.DIR_value, prog, job);
        for (int k = 1; access(snap.dir, F_OK) == 0 && k < 100000; k++)
            snprintf(snap.dir, sizeof snap.dir, "%s/%s.%s.%d.spool", mpiscope_settings.DIR_value,
                     prog, job, k);
    }
    PMPI_Bcast(snap.dir, (int)sizeof snap.dir, MPI_CHAR, 0, comm);
    snap.dir[sizeof snap.dir - 1] = 0;

    int by_node = mpiscope_settings.SPOOL == 0;
    snap.node_index = 0;
    for (int i = 0; i < f->node_size; i++)
        if (f->node_ranks[i] == f->rank)
            snap.node_index = i;
    snap.leader = snap.node_index == 0;
    if (by_node) {
        snprintf(snap.file, sizeof snap.file, "%s/node%d.snap", snap.dir, f->node);
        snap.slot_off = (uint64_t)snap.node_index * (uint64_t)mpiscope_settings.SNAPSHOT_BYTES;
    } else {
        snprintf(snap.file, sizeof snap.file, "%s/rank%d.snap", snap.dir, f->rank);
        snap.slot_off = 0;
    }
    {   /* every rank can write meta.json, so a spool is readable whichever ranks answer */
        f->sec_per_tick = 0;     /* not known yet; the records carry seconds */
        mpiscope_meta_common(f, &snap.meta, job, NULL, NULL);
        if (snap.meta.len && snap.meta.data[snap.meta.len - 1] == '}') {
            snap.meta.len--;
            mpiscope_buf_printf(&snap.meta, ", \"nranks\": %d, \"spool\": {\"layout\": \"%s\", "
                                "\"slot_bytes\": %ld, \"timeline_rows\": [", f->size, by_node ? "node" : "rank",
                                mpiscope_settings.SNAPSHOT_BYTES);
            for (int k = 0; k < MPISCOPE_NKINDS; k++)      /* a chunk's timeline block: these rows */
                mpiscope_buf_printf(&snap.meta, "\"%s\", ", mpiscope_kind_names[k]);
            mpiscope_buf_str(&snap.meta, "\"bytes\"]}}");
        }
    }

    size_t nstat = (size_t)MPISCOPE_NIDS * mpiscope_nslots;
    size_t nhist = (size_t)MPISCOPE_NHIST * mpiscope_nslots * MPISCOPE_NBUCKETS;
    snap.scratch = mpiscope_table_new();
    snap.chunk = snap_zalloc((size_t)mpiscope_settings.SNAPSHOT_BYTES);
    snap.funcs = snap_zalloc(nstat * sizeof *snap.funcs);
    snap.hist = snap_zalloc(nhist * sizeof *snap.hist);
    snap.peers = snap_zalloc((snap.scratch ? snap.scratch->peer_mask + 1u : 1u) * sizeof *snap.peers);
    snap.regs = snap_zalloc((size_t)mpiscope_nslots * sizeof *snap.regs);
    snap.members_cap = mpiscope_commtab_count();
    snap.members = snap_zalloc(snap.members_cap * sizeof *snap.members);
    snap.member_names = snap_zalloc(snap.members_cap * sizeof *snap.member_names);
    if (!snap.scratch || !snap.chunk || !snap.funcs || !snap.hist || !snap.peers || !snap.regs ||
        !snap.members || !snap.member_names)
        return;
    if (pipe2(snap.wake, O_CLOEXEC | O_NONBLOCK) != 0 || pipe2(snap.done, O_CLOEXEC | O_NONBLOCK) != 0)
        return;

    /* The thread blocks every signal, so a process-directed signal goes to
     * an application thread and our handler never waits for itself. */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int rc = pthread_create(&snap.thread, NULL, snap_main, NULL);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc != 0)
        return;
    snap.on = 1;
    snap.live = 1;

    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = snap_handler;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    if (snap.sig && sigaction(snap.sig, &sa, &snap.old_sig) == 0)
        snap.have_sig = 1;
    if (mpiscope_settings.SNAPSHOT_TERM && snap.sig != SIGTERM &&
        sigaction(SIGTERM, &sa, &snap.old_term) == 0)
        snap.have_term = 1;
}

void mpiscope_snapshot_stop(void)
{
    if (!snap.on)
        return;
    /* RATIONALE: the handlers stay installed. Given back here, a snapshot
     * signal that reaches a rank after this point (it is still in
     * MPI_Finalize, or the job is ending) would get SIGUSR1's default action
     * and kill a rank of a job that is finishing normally (and Open MPI then
     * aborts the job). From now on the handler only runs the program's own
     * action: the handler it had before MPI_Init, or for SIGTERM the default. */
    snap.live = 0;
    unsigned char stop = 0;
    if (write(snap.wake[1], &stop, 1) == 1)
        pthread_join(snap.thread, NULL);
    snap.on = 0;
    if (snap.fd >= 0)
        close(snap.fd);
    snap.fd = -1;
}
