/*
 * mpit.c - MPI_T performance variables (MPISCOPE_MPIT=1): what the MPI
 * library itself counts that explains waiting -- its unexpected-message and
 * posted-receive queues, time spent matching, eager vs rendezvous traffic --
 * recorded per rank (docs/runtime.md "MPI_T performance variables").
 *
 * Which variables: the rules table below (a name fragment, a class, what it
 * means, how its elements become one number); every variable the library
 * lists is matched against it once at MPI_Init, and what matches is
 * recorded. A library that lists none (this MPICH build) or none the table
 * knows leaves an empty MPIT section and a reason in META "mpit".
 *
 * RATIONALE (lifetime): the tools session is opened after PMPI_Init(_thread)
 * returned and closed -- final read, handles and session freed,
 * MPI_T_finalize -- inside our MPI_Finalize BEFORE PMPI_Finalize and before
 * the runtime's own finalize traffic (so our messages are not counted; and
 * an MPI_T_finalize after MPI_Finalize crashed Open MPI 4.1). MPI_T_init_thread
 * and MPI_T_finalize are reference counted by the standard, so a program with
 * its own MPI_T session keeps it. Calls go to PMPI_T_*: a tool preloaded
 * after us that wraps MPI_T_* never sees ours.
 *
 * RATIONALE (sampling): a queue length is a level; at MPI_Finalize it is
 * usually 0, so one read at the end says nothing. Its high-water mark is the
 * largest of samples read at the exit of any wrapper once the sampling
 * interval has passed (one compare in mpiscope_record), in the thread that
 * made the MPI call, never from another thread: the application's thread
 * level may forbid MPI_T calls concurrent with its own MPI calls. The interval
 * is MPISCOPE_MPIT_INTERVAL microseconds or 100 times the last sample's cost,
 * whichever is longer, so sampling costs at most about 1% of the run even
 * when a variable holds one value per peer (Open MPI's queue lengths hold one
 * per rank of the communicator: O(P) per read at any scale).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mpiscope.h"

/* How a variable's value is read over the run, from its class. */
enum mpit_kind {
    MPIT_LEVEL,      /* a level (queue length, size): sampled; peak = highest sample */
    MPIT_GROWS,      /* counter, timer, aggregate: the value at Finalize minus the value at Init */
    MPIT_MARK        /* high/low-water mark, state: the library's own value at Finalize */
};

/* How the elements of a variable (e.g. one per peer of the communicator it
 * is bound to) become one number per rank; MPIT_NEVER: not even touched. */
enum mpit_over { MPIT_SUM, MPIT_MAX, MPIT_NEVER };

/* The rules: a variable is recorded if its name contains `name` and its
 * class is `cls` (-1: any); the first matching row wins, so specific rows
 * come first. Names are the libraries' own (Open MPI's pml_ob1_*, its
 * software performance counters OMPI_SPC_*, MPICH's recvq statistics). */
typedef struct {
    const char *name;
    int cls;
    const char *what;            /* what the number means, for the report */
    int over;                    /* enum mpit_over */
} mpit_rule_t;

static const mpit_rule_t mpit_rules[] = {
    /* never touched. RATIONALE: MPI_T_init_thread makes Open MPI 4.1 open every
     * component of every framework to list their variables, so an MTL that is
     * not the one in use lists variables too, and MPI_T_pvar_handle_alloc on
     * one of PSM2's (mtl_psm2_tx_eager_num...) crashed every rank here (no
     * PSM2 network). Its eager / rendezvous counts would be the ones wanted. */
    {"mtl_", -1, NULL, MPIT_NEVER},
    /* message queues */
    {"unexpected_msgq_length", -1, "unexpected-message queue length (messages arrived before their receive)", MPIT_SUM},
    {"unexpected_recvq_length", -1, "unexpected-message queue length (messages arrived before their receive)", MPIT_SUM},
    {"MAX_UNEXPECTED_IN_QUEUE", -1, "unexpected-message queue high-water mark (library's own)", MPIT_MAX},
    {"UNEXPECTED_IN_QUEUE", -1, "unexpected-message queue length (messages arrived before their receive)", MPIT_SUM},
    {"unexpected_recvq_buffer_size", -1, "bytes held by unexpected messages", MPIT_SUM},
    {"posted_recvq_length", -1, "posted-receive queue length (receives waiting for their message)", MPIT_SUM},
    {"MAX_OOS_IN_QUEUE", -1, "out-of-sequence queue high-water mark", MPIT_MAX},
    {"OOS_IN_QUEUE", -1, "out-of-sequence message queue length", MPIT_SUM},
    /* matching */
    {"posted_recvq_match_attempts", -1, "match attempts against the posted-receive queue", MPIT_SUM},
    {"unexpected_recvq_match_attempts", -1, "match attempts against the unexpected queue", MPIT_SUM},
    {"time_failed_matching_postedq", -1, "time spent in failed matches against posted receives", MPIT_SUM},
    {"time_matching_unexpectedq", -1, "time spent matching the unexpected queue", MPIT_SUM},
    {"MATCH_TIME", -1, "time spent matching messages", MPIT_SUM},
    {"SPC_UNEXPECTED", -1, "messages that arrived unexpected", MPIT_SUM},
    {"OUT_OF_SEQUENCE", -1, "messages that arrived out of sequence", MPIT_SUM},
    /* protocols and progress */
    {"eager", MPI_T_PVAR_CLASS_COUNTER, "eager-protocol messages or bytes", MPIT_SUM},
    {"rndv", MPI_T_PVAR_CLASS_COUNTER, "rendezvous-protocol messages or bytes", MPIT_SUM},
    {"rendezvous", MPI_T_PVAR_CLASS_COUNTER, "rendezvous-protocol messages or bytes", MPIT_SUM},
    {"progress", MPI_T_PVAR_CLASS_TIMER, "time in the library's progress engine", MPIT_SUM},
    {"progress", MPI_T_PVAR_CLASS_COUNTER, "calls of the library's progress engine", MPIT_SUM},
};
#define MPIT_NRULES (sizeof mpit_rules / sizeof *mpit_rules)

static const struct {
    int cls;
    const char *name;
    int kind;                    /* enum mpit_kind */
} mpit_classes[] = {
    {MPI_T_PVAR_CLASS_STATE, "state", MPIT_MARK},
    {MPI_T_PVAR_CLASS_LEVEL, "level", MPIT_LEVEL},
    {MPI_T_PVAR_CLASS_SIZE, "size", MPIT_LEVEL},
    {MPI_T_PVAR_CLASS_PERCENTAGE, "percentage", MPIT_LEVEL},
    {MPI_T_PVAR_CLASS_HIGHWATERMARK, "highwatermark", MPIT_MARK},
    {MPI_T_PVAR_CLASS_LOWWATERMARK, "lowwatermark", MPIT_MARK},
    {MPI_T_PVAR_CLASS_COUNTER, "counter", MPIT_GROWS},
    {MPI_T_PVAR_CLASS_AGGREGATE, "aggregate", MPIT_GROWS},
    {MPI_T_PVAR_CLASS_TIMER, "timer", MPIT_GROWS},
    {MPI_T_PVAR_CLASS_GENERIC, "generic", MPIT_MARK},
};
#define MPIT_NCLASSES (sizeof mpit_classes / sizeof *mpit_classes)

enum mpit_type { MPIT_T_INT, MPIT_T_UNSIGNED, MPIT_T_ULONG, MPIT_T_ULL, MPIT_T_COUNT, MPIT_T_DOUBLE };
static const char *const mpit_kind_names[] = {"level", "grows", "mark"};

#define MPIT_NAME 128
#define MPIT_DESC 256

typedef struct {
    MPI_T_pvar_handle h;
    int index, count, started;
    int type;                    /* enum mpit_type */
    int cls, kind, rule;         /* index into mpit_classes, enum mpit_kind, index into mpit_rules */
    int bound;                   /* bound to a communicator (world, and those followed) */
    double start, last, peak;
    uint64_t samples;
    char name[MPIT_NAME];
    char desc[MPIT_DESC];
} mpit_var_t;

static struct {
    int enabled;                 /* MPISCOPE_MPIT=1 */
    int open;                    /* MPI_T initialized and the session alive */
    int library_pvars;           /* MPI_T_pvar_get_num */
    char why[192];               /* why nothing is recorded, "" otherwise */
    MPI_T_pvar_session s;
    mpit_var_t *v;
    unsigned n, nlevel;
    void *buf;                   /* one read: the largest count x 8 bytes */
    int buf_count;
    uint64_t tsc0;               /* ticks and CLOCK_MONOTONIC at MPI_Init, for the interval */
    struct timespec mono0;
    double interval_ns;          /* MPISCOPE_MPIT_INTERVAL */
    uint64_t last_cost;          /* ticks the last sample took */
    int busy;                    /* one thread samples at a time */
} mpit;

uint64_t mpiscope_mpit_due = UINT64_MAX;

/* Communicators the program made, alive now, whose queues are followed too:
 * one handle per communicator-bound level (count 0: none). */
#define MPIT_COMMS 16
typedef struct {
    MPI_Comm comm;
    MPI_T_pvar_handle *h;        /* [mpit.n] */
    int *count;                  /* [mpit.n] */
} mpit_comm_t;
static mpit_comm_t mpit_comms[MPIT_COMMS];
static unsigned mpit_ncomms, mpit_nbound;   /* followed now; communicator-bound levels */
static uint64_t mpit_comms_missed;          /* made while MPIT_COMMS were followed */

static int mpit_match(const char *name, int cls)
{
    for (unsigned r = 0; r < MPIT_NRULES; r++)
        if ((mpit_rules[r].cls < 0 || mpit_rules[r].cls == cls) && strstr(name, mpit_rules[r].name))
            return mpit_rules[r].over == MPIT_NEVER ? -1 : (int)r;
    return -1;
}

static int mpit_seen(const char *name)
{
    for (unsigned i = 0; i < mpit.n; i++)
        if (strcmp(mpit.v[i].name, name) == 0)
            return 1;
    return 0;
}

/* Whether a variable belongs to an Open MPI PML that is not the one in use.
 * RATIONALE: MPI_T_init_thread registers the variables of every PML Open MPI
 * has, and pml_ob1_* read ob1's per-communicator queues through the
 * communicator's PML data: where UCX or cm is the PML (most InfiniBand and
 * OmniPath clusters), that is another PML's data or NULL. Open MPI names a
 * variable <framework>_<component>_<name>, and its global `mca_pml` starts
 * with the selected PML's add_procs function, whose file (or symbol) names
 * the component: pml_ob1_* is read only if that is mca_pml_ob1. Where this
 * cannot be told (no `mca_pml`: not Open MPI), pml_* variables are not read. */
static int mpit_idle_pml(const char *name)
{
    if (strncmp(name, "pml_", 4) != 0)
        return 0;
    const char *end = strchr(name + 4, '_');
    if (!end)
        return 1;
    char want[64];
    snprintf(want, sizeof want, "pml_%.*s", (int)(end - (name + 4)), name + 4);
    void *const *pml = dlsym(RTLD_DEFAULT, "mca_pml");
    Dl_info info;
    if (!pml || !*pml || !dladdr(*pml, &info))
        return 1;
    char mod[80], fn[80];
    snprintf(mod, sizeof mod, "mca_%s.", want);   /* mca_pml_ob1.so */
    snprintf(fn, sizeof fn, "mca_%s_", want);     /* mca_pml_ob1_add_procs (components built in) */
    return !((info.dli_fname && strstr(info.dli_fname, mod)) || (info.dli_sname && strstr(info.dli_sname, fn)));
}

static int mpit_class(int cls)
{
    for (unsigned k = 0; k < MPIT_NCLASSES; k++)
        if (mpit_classes[k].cls == cls)
            return (int)k;
    return -1;
}

static int mpit_type_of(MPI_Datatype t)
{
    if (t == MPI_INT)
        return MPIT_T_INT;
    if (t == MPI_UNSIGNED)
        return MPIT_T_UNSIGNED;
    if (t == MPI_UNSIGNED_LONG)
        return MPIT_T_ULONG;
    if (t == MPI_UNSIGNED_LONG_LONG)
        return MPIT_T_ULL;
    if (t == MPI_COUNT)
        return MPIT_T_COUNT;
    if (t == MPI_DOUBLE)
        return MPIT_T_DOUBLE;
    return -1;                   /* MPI_CHAR (a string) and the rest: not a number */
}

/* One read of handle h of v (count elements) reduced over its elements; 0 if
 * the read failed. */
static int mpit_read_one(const mpit_var_t *v, MPI_T_pvar_handle h, int count, double *out)
{
    if (PMPI_T_pvar_read(mpit.s, h, mpit.buf) != MPI_SUCCESS)
        return 0;
    double acc = 0.0;
    for (int i = 0; i < count; i++) {
        double x;
        switch (v->type) {
        case MPIT_T_INT: x = ((const int *)mpit.buf)[i]; break;
        case MPIT_T_UNSIGNED: x = ((const unsigned *)mpit.buf)[i]; break;
        case MPIT_T_ULONG: x = (double)((const unsigned long *)mpit.buf)[i]; break;
        case MPIT_T_ULL: x = (double)((const unsigned long long *)mpit.buf)[i]; break;
        case MPIT_T_COUNT: x = (double)((const MPI_Count *)mpit.buf)[i]; break;
        default: x = ((const double *)mpit.buf)[i]; break;
        }
        if (mpit_rules[v->rule].over == MPIT_MAX)
            acc = i == 0 || x > acc ? x : acc;
        else
            acc += x;
    }
    *out = acc;
    return 1;
}

/* v's value now: its own handle and, for a level bound to communicators, the
 * handles of the communicators the program made that are alive now, summed
 * (or their maximum, for a MPIT_MAX variable). */
static int mpit_read(mpit_var_t *v, double *out)
{
    if (!mpit_read_one(v, v->h, v->count, out))
        return 0;
    unsigned i = (unsigned)(v - mpit.v);
    for (unsigned c = 0; v->kind == MPIT_LEVEL && v->bound && c < mpit_ncomms; c++) {
        double x;
        if (mpit_comms[c].count[i] > 0 && mpit_read_one(v, mpit_comms[c].h[i], mpit_comms[c].count[i], &x))
            *out = mpit_rules[v->rule].over == MPIT_MAX ? (x > *out ? x : *out) : *out + x;
    }
    return 1;
}

static void mpit_sample_levels(void)
{
    for (unsigned i = 0; i < mpit.n; i++) {
        mpit_var_t *v = &mpit.v[i];
        double x;
        if (v->kind == MPIT_LEVEL && mpit_read(v, &x)) {
            if (v->samples++ == 0 || x > v->peak)
                v->peak = x;
        }
    }
}

/* When the next sample is due: the interval, or 100 x what the last one
 * cost, from now, in timer ticks (their rate measured since MPI_Init). */
static void mpit_schedule(uint64_t now)
{
    struct timespec m;
    clock_gettime(CLOCK_MONOTONIC, &m);
    double ns = 1e9 * (double)(m.tv_sec - mpit.mono0.tv_sec) + (double)(m.tv_nsec - mpit.mono0.tv_nsec);
    double ticks_per_ns = ns > 0 && now > mpit.tsc0 ? (double)(now - mpit.tsc0) / ns : 1.0;
    if (ns < 1e6)
        ticks_per_ns = 1.0;      /* too early to tell: at least 1 tick/ns, so not later than asked */
    uint64_t gap = (uint64_t)(mpit.interval_ns * ticks_per_ns);
    if (gap < 100u * mpit.last_cost)
        gap = 100u * mpit.last_cost;
    __atomic_store_n(&mpiscope_mpit_due, now + gap, __ATOMIC_RELAXED);
}

void mpiscope_mpit_sample(uint64_t now)
{
    if (__atomic_exchange_n(&mpit.busy, 1, __ATOMIC_ACQUIRE))
        return;                  /* another thread is sampling */
    if (mpit.open && now >= __atomic_load_n(&mpiscope_mpit_due, __ATOMIC_RELAXED)) {
        uint64_t t0 = mpiscope_now();
        mpit_sample_levels();
        uint64_t t1 = mpiscope_now();
        mpit.last_cost = t1 > t0 ? t1 - t0 : 0;
        mpit_schedule(t1);
    }
    __atomic_store_n(&mpit.busy, 0, __ATOMIC_RELEASE);
}

static void mpit_comm_drop(unsigned c);

static void mpit_close(void)
{
    while (mpit_ncomms)
        mpit_comm_drop(0);
    for (unsigned i = 0; i < mpit.n; i++) {
        if (mpit.v[i].started)
            PMPI_T_pvar_stop(mpit.s, mpit.v[i].h);
        PMPI_T_pvar_handle_free(mpit.s, &mpit.v[i].h);
    }
    PMPI_T_pvar_session_free(&mpit.s);
    PMPI_T_finalize();
    mpit.open = 0;
}

void mpiscope_mpit_init(int thread_level)
{
    if (!mpiscope_settings.MPIT)
        return;
    mpit.enabled = 1;
    mpit.interval_ns = 1e3 * (double)mpiscope_settings.MPIT_INTERVAL;
    int provided = 0, rc = PMPI_T_init_thread(thread_level, &provided);
    if (rc != MPI_SUCCESS) {
        snprintf(mpit.why, sizeof mpit.why, "MPI_T_init_thread failed (error %d)", rc);
        return;
    }
    int num = 0;
    if (PMPI_T_pvar_get_num(&num) != MPI_SUCCESS || num <= 0) {
        snprintf(mpit.why, sizeof mpit.why, "no MPI_T performance variables available from this MPI library");
        PMPI_T_finalize();
        return;
    }
    mpit.library_pvars = num;
    if (PMPI_T_pvar_session_create(&mpit.s) != MPI_SUCCESS) {
        snprintf(mpit.why, sizeof mpit.why, "MPI_T_pvar_session_create failed");
        PMPI_T_finalize();
        return;
    }
    mpit.open = 1;
    mpit.v = calloc((size_t)num, sizeof *mpit.v);
    size_t most = 1;
    int idle = 0;                /* variables of a PML not in use */
    for (int i = 0; mpit.v && i < num; i++) {
        mpit_var_t *v = &mpit.v[mpit.n];
        int name_len = MPIT_NAME, desc_len = MPIT_DESC, verbosity, cls, bind, readonly, continuous, atomic;
        MPI_Datatype type;
        MPI_T_enum enumtype;
        if (PMPI_T_pvar_get_info(i, v->name, &name_len, &verbosity, &cls, &type, &enumtype, v->desc,
                                 &desc_len, &bind, &readonly, &continuous, &atomic) != MPI_SUCCESS)
            continue;
        v->name[MPIT_NAME - 1] = v->desc[MPIT_DESC - 1] = 0;
        if (mpit_seen(v->name))
            continue;            /* Open MPI 4.1 lists pml_ob1_posted_recvq_length 29 times: the first */
        int skip = mpit_idle_pml(v->name);
        idle += skip && mpit_match(v->name, cls) >= 0;
        v->rule = skip ? -1 : mpit_match(v->name, cls);
        v->cls = mpit_class(cls);
        v->type = mpit_type_of(type);
        if (v->rule < 0 || v->cls < 0 || v->type < 0 ||
            (bind != MPI_T_BIND_NO_OBJECT && bind != MPI_T_BIND_MPI_COMM))
            continue;
        MPI_Comm world = MPI_COMM_WORLD;
        v->bound = bind == MPI_T_BIND_MPI_COMM;
        if (PMPI_T_pvar_handle_alloc(mpit.s, i, v->bound ? (void *)&world : NULL, &v->h, &v->count) != MPI_SUCCESS)
            continue;
        if (v->count <= 0) {
            PMPI_T_pvar_handle_free(mpit.s, &v->h);
            continue;
        }
        v->started = !continuous && PMPI_T_pvar_start(mpit.s, v->h) == MPI_SUCCESS;
        v->index = i;
        v->kind = mpit_classes[v->cls].kind;
        if ((size_t)v->count > most)
            most = (size_t)v->count;
        mpit.n++;
    }
    mpit.buf = calloc(most, 8);
    mpit.buf_count = (int)most;
    if (!mpit.buf || !mpit.v) {
        mpit.n = 0;
        snprintf(mpit.why, sizeof mpit.why, "out of memory");
    } else if (mpit.n == 0) {
        snprintf(mpit.why, sizeof mpit.why, "the MPI library lists %d MPI_T performance variables, "
                 "none of the kinds mpiscope records%s", num,
                 idle ? " (its queue variables belong to a PML that is not the one in use)" : "");
    }
    for (unsigned i = 0; i < mpit.n; i++) {
        mpit_var_t *v = &mpit.v[i];
        if (v->kind == MPIT_GROWS && !mpit_read(v, &v->start))
            v->start = 0.0;
        mpit.nlevel += v->kind == MPIT_LEVEL;
        mpit_nbound += v->kind == MPIT_LEVEL && v->bound;
    }
    if (mpit.n == 0) {
        mpit_close();
        return;
    }
    /* MPI_COMM_SELF's queues too (messages a rank sends itself): the program
     * never makes it, so no creating call would tell us */
    mpiscope_mpit_comm_made(MPI_COMM_SELF);
    clock_gettime(CLOCK_MONOTONIC, &mpit.mono0);
    mpit.tsc0 = mpiscope_now();
    mpit_sample_levels();
    if (mpit.nlevel)
        mpit_schedule(mpit.tsc0);
}

void mpiscope_mpit_finish(void)
{
    __atomic_store_n(&mpiscope_mpit_due, UINT64_MAX, __ATOMIC_RELAXED);
    if (!mpit.open)
        return;
    while (__atomic_exchange_n(&mpit.busy, 1, __ATOMIC_ACQUIRE))
        sched_yield();           /* a thread still sampling (MPI_THREAD_MULTIPLE) */
    for (unsigned i = 0; i < mpit.n; i++) {
        mpit_var_t *v = &mpit.v[i];
        double x;
        if (!mpit_read(v, &x))
            continue;            /* unreadable now: value 0, peak from the samples */
        if (v->kind == MPIT_GROWS)
            x -= v->start;
        v->last = x;
        if (v->kind == MPIT_LEVEL) {
            if (v->samples++ == 0 || x > v->peak)
                v->peak = x;
        } else {
            v->peak = x;
            v->samples = 1;
        }
    }
    mpit_close();
    __atomic_store_n(&mpit.busy, 0, __ATOMIC_RELEASE);
}

/* --- communicators the program makes -------------------------------------------- */

static void mpit_lock(void)
{
    while (__atomic_exchange_n(&mpit.busy, 1, __ATOMIC_ACQUIRE))
        sched_yield();
}

static void mpit_unlock(void)
{
    __atomic_store_n(&mpit.busy, 0, __ATOMIC_RELEASE);
}

/* A communicator the program made (commtab.c, after the creating call
 * returned): follow its queues too, up to MPIT_COMMS alive at once.
 * Intercommunicators are left out (Open MPI's per-peer arrays would be sized
 * by the other group), and so is an MPI_Comm_idup's (not usable yet). */
void mpiscope_mpit_comm_made(MPI_Comm comm)
{
    if (!mpit.open || !mpit_nbound || comm == MPI_COMM_NULL)
        return;
    int inter = 1;
    if (PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS || inter)
        return;
    mpit_lock();
    if (mpit_ncomms == MPIT_COMMS) {
        mpit_comms_missed++;
        mpit_unlock();
        return;
    }
    MPI_T_pvar_handle *h = calloc(mpit.n, sizeof *h);
    int *count = calloc(mpit.n, sizeof *count);
    for (unsigned i = 0; h && count && i < mpit.n; i++) {
        mpit_var_t *v = &mpit.v[i];
        if (v->kind != MPIT_LEVEL || !v->bound)
            continue;
        MPI_Comm c = comm;
        if (PMPI_T_pvar_handle_alloc(mpit.s, v->index, &c, &h[i], &count[i]) != MPI_SUCCESS)
            count[i] = 0;
        else if (count[i] <= 0 || count[i] > mpit.buf_count) {   /* larger than world: not read */
            PMPI_T_pvar_handle_free(mpit.s, &h[i]);
            count[i] = 0;
        }
    }
    if (h && count)
        mpit_comms[mpit_ncomms++] = (mpit_comm_t){comm, h, count};
    else {
        free(h);
        free(count);
    }
    mpit_unlock();
}

static void mpit_comm_drop(unsigned c)
{
    for (unsigned i = 0; i < mpit.n; i++)
        if (mpit_comms[c].count[i] > 0)
            PMPI_T_pvar_handle_free(mpit.s, &mpit_comms[c].h[i]);
    free(mpit_comms[c].h);
    free(mpit_comms[c].count);
    mpit_comms[c] = mpit_comms[--mpit_ncomms];
}

/* Before MPI_Comm_free / MPI_Comm_disconnect (commtab.c): its handles go
 * first (a handle must not outlive the object it is bound to). */
void mpiscope_mpit_comm_freed(MPI_Comm comm)
{
    if (!mpit.open || !mpit_ncomms)
        return;
    mpit_lock();
    for (unsigned c = 0; c < mpit_ncomms; c++)
        if (mpit_comms[c].comm == comm) {
            mpit_comm_drop(c);
            break;
        }
    mpit_unlock();
}

/* --- into the profile ------------------------------------------------------------ */

int mpiscope_mpit_enabled(void)
{
    return mpit.enabled;
}

uint32_t mpiscope_mpit_count(void)
{
    return mpit.n;
}

/* The union key of a variable: rule first (the report's order), then name. */
static uint64_t mpit_key(const mpit_var_t *v)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (const char *p = v->name; *p; p++)
        h = (h ^ (unsigned char)*p) * 0x100000001b3ull;
    return ((uint64_t)v->rule << 48) | (h & 0xffffffffffffull);
}

/* A variable's META entry: what the report needs to say what it shows. */
static void mpit_describe(const mpit_var_t *v, mpiscope_buf_t *b)
{
    mpiscope_buf_str(b, "{\"name\": ");
    mpiscope_buf_json_string(b, v->name);
    mpiscope_buf_str(b, ", \"what\": ");
    mpiscope_buf_json_string(b, mpit_rules[v->rule].what);
    mpiscope_buf_printf(b, ", \"class\": \"%s\", \"kind\": \"%s\", \"over\": \"%s\", \"elements\": %d, "
                        "\"bound\": %s, \"type\": \"%s\", \"desc\": ",
                        mpit_classes[v->cls].name, mpit_kind_names[v->kind],
                        mpit_rules[v->rule].over == MPIT_MAX ? "max" : "sum", v->count,
                        v->bound ? (v->kind == MPIT_LEVEL ? "\"communicators\"" : "\"MPI_COMM_WORLD\"") : "null",
                        v->type == MPIT_T_DOUBLE ? "double" : "integer");
    mpiscope_buf_json_string(b, v->desc);
    mpiscope_buf_str(b, "}");
}

static long mpit_find(const mpiscope_set_t *set, uint64_t key)
{
    long lo = 0, hi = (long)set->n - 1;
    while (lo <= hi) {
        long mid = (lo + hi) / 2;
        if (set->e[mid].a == key)
            return mid;
        if (set->e[mid].a < key)
            lo = mid + 1;
        else
            hi = mid - 1;
    }
    return -1;
}

void mpiscope_mpit_gather(mpiscope_final_t *f, int summary, mpiscope_mpit_out_t *out)
{
    memset(out, 0, sizeof *out);
    mpiscope_entry_t *mine = calloc(mpit.n + 1u, sizeof *mine);
    mpiscope_buf_t *texts = calloc(mpit.n + 1u, sizeof *texts);
    unsigned k = 0;
    for (unsigned i = 0; mine && texts && i < mpit.n; i++, k++) {
        mpit_describe(&mpit.v[i], &texts[k]);
        mine[k] = (mpiscope_entry_t){mpit_key(&mpit.v[i]), 0, texts[k].data, (uint32_t)texts[k].len};
    }
    mpiscope_set_union(f->comm, mine, k, 1, &out->names);
    const size_t V = out->names.n;
    if (!summary) {
        out->recs = calloc(k + 1u, sizeof *out->recs);
        for (unsigned i = 0; out->recs && i < k; i++) {
            long at = mpit_find(&out->names, mine[i].a);
            if (at < 0)
                continue;
            const mpit_var_t *v = &mpit.v[i];
            out->recs[out->nrecs++] = (mpiscope_mpit_t){(uint32_t)f->rank, (uint16_t)at, 0, v->last, v->peak,
                                                        v->samples};
        }
    } else if (V) {
        /* two metrics per variable, their statistics over ranks (rank_stats.c) */
        const size_t N = MPISCOPE_MPIT_NMETRICS * V;
        mpiscope_rank_stats_t st;
        int ready = mpiscope_rank_stats_init(&st, N, 0, 0);
        for (unsigned i = 0; ready && i < k; i++) {
            long at = mpit_find(&out->names, mine[i].a);
            if (at < 0)
                continue;
            st.v[MPISCOPE_MPIT_NMETRICS * (size_t)at + MPISCOPE_MPIT_VALUE] = mpit.v[i].last;
            st.v[MPISCOPE_MPIT_NMETRICS * (size_t)at + MPISCOPE_MPIT_PEAK] = mpit.v[i].peak;
        }
        if (mpiscope_rank_stats_reduce(&st, f->comm, f->rank) && f->rank == 0 &&
            (out->sum = calloc(N, sizeof *out->sum))) {
            for (size_t j = 0; j < N; j++)
                out->sum[j] = mpiscope_rank_stats_record(&st, j, (uint16_t)(j / MPISCOPE_MPIT_NMETRICS),
                                                         (uint16_t)(j % MPISCOPE_MPIT_NMETRICS), 0);
            out->nsum = (uint32_t)N;
        }
        mpiscope_rank_stats_free(&st);
    }
    for (unsigned i = 0; texts && i < k; i++)
        mpiscope_buf_free(&texts[i]);
    free(texts);
    free(mine);
}

void mpiscope_mpit_meta(const mpiscope_mpit_out_t *o, mpiscope_buf_t *meta)
{
    if (!meta->len || meta->data[meta->len - 1] != '}')
        return;
    meta->len--;
    mpiscope_buf_printf(meta, ", \"mpit\": {\"library_pvars\": %d, \"sample_interval_us\": %ld, "
                        "\"communicators_followed\": %d, \"communicators_missed\": %llu, \"why_none\": ",
                        mpit.library_pvars, (long)mpiscope_settings.MPIT_INTERVAL, MPIT_COMMS,
                        (unsigned long long)mpit_comms_missed);
    if (o->names.n || !mpit.why[0])
        mpiscope_buf_str(meta, "null");
    else
        mpiscope_buf_json_string(meta, mpit.why);
    mpiscope_buf_str(meta, ", \"variables\": [");
    for (size_t i = 0; i < o->names.n; i++) {
        mpiscope_buf_str(meta, i ? ", " : "");
        mpiscope_buf_put(meta, o->names.e[i].text, o->names.e[i].len);
    }
    mpiscope_buf_str(meta, "]}}");
}

void mpiscope_mpit_out_free(mpiscope_mpit_out_t *o)
{
    mpiscope_set_free(&o->names);
    free(o->recs);
    free(o->sum);
    memset(o, 0, sizeof *o);
}
