/*
 * callsites.c - where each wrapped call came from (docs/runtime.md "Call
 * sites"): the slow path behind mpiscope_site_add (mpiscope.h), the
 * process's registry of sites, and every thread's counts summed per site.
 *
 * The fast path keys a per-thread open-addressing table by (return address,
 * function) and finds a plain site in one probe. Everything else lands here:
 *   - a new key: the module the return address is in decides what it is
 *     (modules.c): the program's or a library's code is a site; the MPI's
 *     own layers or ours (a Fortran binding calling the C function) are
 *     skipped: the unwinder finds the first frame above them, and the key
 *     remembers where on the stack that frame's return address lies, so the
 *     next call reads one word instead of unwinding ("redirect"); mpi4py's
 *     extension module means the site is the Python line that called it;
 *   - MPISCOPE_CALLSITE_DEPTH > 1: the site is the chain of that many
 *     return addresses. Each key remembers the stack slots and values of the
 *     chain it saw last; a call whose slots hold the same values has the
 *     same chain (frames have a fixed size at a given return address), so it
 *     costs those loads; another chain costs one unwind;
 *   - a collision: linear probing.
 * A site is registered once per process (sites lock); its id is a hash of
 * the function and its frames as (module, offset), so ranks agree on it.
 *
 * RATIONALE: x86-64 keeps a return address at its callee's CFA - 8, which
 * makes the redirect and the chain check a load each; elsewhere both unwind
 * on every call that needs them (correct, slower; docs/performance.md).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unwind.h>

#include "mpiscope.h"
#include "tables/callsites.h"
#include "tables/modules.h"

int mpiscope_sites_on;

/* Values of mpiscope_site_t.site besides registry indices. */
#define SITE_LOST (MPISCOPE_SITE_LOOK - 1)       /* calls no site could be kept for (per function) */
#define SITE_REDIRECT (MPISCOPE_SITE_LOOK + 1)   /* a skipped layer's return address; aux: see below */
#define SITE_PYTHON (MPISCOPE_SITE_LOOK + 2)     /* mpi4py's: the site is the Python line */
#define SITE_DEEP (MPISCOPE_SITE_LOOK + 3)       /* depth > 1: the chain decides */
#define AUX_UNWIND 0xFFFFFFFFu                   /* redirect: unwind on every call */
#define REDIRECT_CHECK 4096u                     /* a redirect is checked by unwinding every this many calls */

/* Keys besides (return address | (function id + 1) << 48): bit 63 set. */
#define KEY_ALT (1ull << 63)
#define KEY_LOST(id) (KEY_ALT | (1ull << 62) | (uint64_t)(id))
#define KEY_LOW48 ((1ull << 48) - 1)

#define MAX_FRAMES 128                            /* frames one unwind looks at */

static unsigned sites_depth = 1, sites_max = 1024, sites_cap;
static pthread_mutex_t sites_lock = PTHREAD_MUTEX_INITIALIZER;
static mpiscope_sitedef_t *defs;          /* [sites_max] */
static unsigned ndefs;
static uint32_t *def_index;               /* id -> index + 1, open addressing, [2 x pow2 >= sites_max] */
static uint32_t def_mask;
static uint32_t sites_overflow;

typedef struct {                          /* depth > 1: the chain a key saw last */
    uint32_t chain;                       /* its slot */
    uint32_t n;                           /* frames checked (0: unwind) */
    uint32_t off[MPISCOPE_SITE_DEPTH_MAX];    /* from the slow path's CFA to each frame's return address */
    uintptr_t val[MPISCOPE_SITE_DEPTH_MAX];
} memo_t;

struct mpiscope_sitecold {                /* a thread's state the fast path never reads */
    uint32_t *used;                       /* slots holding a site (or the lost calls), in first-use order */
    uint32_t nused;
    uint32_t nkeys;                       /* keys of any kind */
    memo_t *memo;                         /* depth > 1: [capacity] */
    struct {
        void *code;
        int in_mpi4py;
    } pycode[64];                         /* Python code object -> part of mpi4py? (its references held) */
};

static void *zalloc(size_t bytes)
{
    void *p = mmap(NULL, bytes ? bytes : 1, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

static uint64_t fnv(uint64_t h, uint64_t v)
{
    return mpiscope_fnv1a64_bytes(h, &v, sizeof v);
}
#define FNV_START 0xCBF29CE484222325ull

static inline uint32_t slot_hash(uint64_t key)
{
    return (uint32_t)((key * 0x9E3779B97F4A7C15ull) >> 32);   /* as mpiscope_site_add */
}

void mpiscope_sites_init(void)
{
    mpiscope_sites_on = mpiscope_settings.CALLSITES != 0;
    sites_depth = (unsigned)mpiscope_settings.CALLSITE_DEPTH;
    sites_max = (unsigned)mpiscope_settings.MAX_CALLSITES;
    /* Keys (sites, skipped layers' return addresses, chains) may fill half
     * the table; the lost calls of every function always find room. */
    sites_cap = 64;
    while (sites_cap < 2u * sites_max + 2u * MPISCOPE_NIDS)
        sites_cap <<= 1;
    if (!mpiscope_sites_on)
        return;
    def_mask = 1;
    while (def_mask < 2u * sites_max)
        def_mask <<= 1;
    defs = zalloc(sizeof *defs * sites_max);
    def_index = zalloc(sizeof *def_index * def_mask);
    def_mask--;
    if (!defs || !def_index)
        mpiscope_sites_on = 0;
}

unsigned mpiscope_sites_depth(void)
{
    return sites_depth;
}

unsigned mpiscope_sites_max(void)
{
    return sites_max;
}

int mpiscope_sites_thread_init(mpiscope_thread_t *t)
{
    if (!mpiscope_sites_on)
        return 1;
    /* one mapping: the table, then its histogram (mpiscope_site_add's layout) */
    t->sites = zalloc((size_t)sites_cap * (sizeof(mpiscope_site_t) +
                                           MPISCOPE_NBUCKETS * sizeof(mpiscope_hbin_t)));
    t->shused = zalloc((size_t)sites_cap * MPISCOPE_NBUCKETS * sizeof *t->shused);
    t->site_cold = zalloc(sizeof *t->site_cold);
    if (!t->sites || !t->shused || !t->site_cold)
        return 0;
    t->site_cold->used = zalloc((size_t)sites_cap * sizeof *t->site_cold->used);
    if (!t->site_cold->used)
        return 0;
    if (sites_depth > 1 && !(t->site_cold->memo = zalloc((size_t)sites_cap * sizeof(memo_t))))
        return 0;
    t->site_mask = sites_cap - 1;
    return 1;
}

/* --- the thread's table ------------------------------------------------------------ */

/* The slot holding key, or the empty one where it would go (NULL: the table is full). */
static mpiscope_site_t *slot_find(mpiscope_thread_t *t, uint64_t key)
{
    uint32_t i = slot_hash(key) & t->site_mask;
    for (uint32_t n = 0; n <= t->site_mask; n++, i = (i + 1) & t->site_mask) {
        mpiscope_site_t *s = &t->sites[i];
        if (s->key == key || s->key == 0)
            return s;
    }
    return NULL;
}

/* Fill the empty slot s with key; a site (or the lost calls) joins the used
 * list a snapshot reads. The key is stored last. */
static mpiscope_site_t *slot_put(mpiscope_thread_t *t, mpiscope_site_t *s, uint64_t key, uint32_t site,
                                 uint32_t aux)
{
    struct mpiscope_sitecold *cold = t->site_cold;
    s->site = site;
    s->aux = aux;
    s->min = UINT64_MAX;
    cold->nkeys++;
    if (site <= SITE_LOST) {
        cold->used[cold->nused] = (uint32_t)(s - t->sites);
        __atomic_store_n(&cold->nused, cold->nused + 1, __ATOMIC_RELEASE);
    }
    __atomic_store_n(&s->key, key, __ATOMIC_RELEASE);
    return s;
}

/* The keys other than a function's lost calls may use half the table. */
static int room(mpiscope_thread_t *t)
{
    return t->site_cold->nkeys < (t->site_mask + 1u) / 2u;
}

/* The calls of function id no site could be kept for. */
static mpiscope_site_t *lost(mpiscope_call_t *c)
{
    mpiscope_thread_t *t = c->t;
    uint64_t key = KEY_LOST(c->id);
    mpiscope_site_t *s = slot_find(t, key);
    __atomic_or_fetch(&sites_overflow, MPISCOPE_OVF_CALLSITES, __ATOMIC_RELAXED);
    if (!s)
        return NULL;
    return s->key == key ? s : slot_put(t, s, key, SITE_LOST, 0);
}

/* --- the registry (sites lock held) ---------------------------------------------- */

/* The index of site (func, frames), registered if new; -1 if no room. */
static int def_get(int func, unsigned n, const int32_t *module, const uint64_t *offset)
{
    uint64_t id = fnv(FNV_START, (uint64_t)func);
    for (unsigned k = 0; k < n; k++) {
        const mpiscope_modinfo_t *m = mpiscope_module(module[k]);
        id = fnv(fnv(id, m ? m->rec.key : 0), offset[k]);
    }
    id = id ? id : 1;     /* 0 is the lost calls' site */
    uint32_t i = (uint32_t)(id ^ (id >> 29)) & def_mask;
    for (; def_index[i]; i = (i + 1) & def_mask)
        if (defs[def_index[i] - 1].id == id)
            return (int)def_index[i] - 1;
    if (ndefs >= sites_max)
        return -1;
    mpiscope_sitedef_t *d = &defs[ndefs];
    d->id = id;
    d->func = (uint16_t)func;
    d->nframes = (uint16_t)n;
    memcpy(d->module, module, sizeof *module * n);
    memcpy(d->offset, offset, sizeof *offset * n);
    def_index[i] = ndefs + 1;
    __atomic_store_n(&ndefs, ndefs + 1, __ATOMIC_RELEASE);
    return (int)ndefs - 1;
}

/* A frame as (module, offset): the offset is the address as linked. */
static void frame_of(uintptr_t ip, int32_t *module, uint64_t *offset)
{
    int m = mpiscope_module_of(ip);
    const mpiscope_modinfo_t *mi = mpiscope_module(m);
    *module = mi ? m : -1;
    *offset = mi ? (uint64_t)(ip - mi->base) : (uint64_t)ip;
}

static int role_of(uintptr_t ip)
{
    const mpiscope_modinfo_t *m = mpiscope_module(mpiscope_module_of(ip));
    return m ? m->role : MPISCOPE_ROLE_USER;
}

/* A new slot for key holding the site of these return addresses. */
static mpiscope_site_t *site_new(mpiscope_call_t *c, uint64_t key, const uintptr_t *ip, unsigned n)
{
    mpiscope_thread_t *t = c->t;
    int32_t module[MPISCOPE_SITE_DEPTH_MAX];
    uint64_t offset[MPISCOPE_SITE_DEPTH_MAX];
    pthread_mutex_lock(&sites_lock);
    for (unsigned k = 0; k < n; k++)
        frame_of(ip[k], &module[k], &offset[k]);
    int d = def_get(c->id, n, module, offset);
    pthread_mutex_unlock(&sites_lock);
    mpiscope_site_t *s = slot_find(t, key);
    if (d < 0 || !s || !room(t))
        return lost(c);
    return slot_put(t, s, key, (uint32_t)d, 0);
}

/* --- unwinding -------------------------------------------------------------------- */

typedef struct {
    int n;
    uintptr_t ip[MAX_FRAMES], cfa[MAX_FRAMES];
} stack_t_;

static _Unwind_Reason_Code collect(struct _Unwind_Context *ctx, void *arg)
{
    stack_t_ *s = arg;
    if (s->n >= MAX_FRAMES)
        return _URC_END_OF_STACK;
    s->ip[s->n] = (uintptr_t)_Unwind_GetIP(ctx);
    s->cfa[s->n] = (uintptr_t)_Unwind_GetCFA(ctx);
    s->n++;
    return _URC_NO_REASON;
}

typedef struct {                 /* the frames above the wrapper: ip[0] is its return address */
    int n;
    uintptr_t ip[MAX_FRAMES];
    uintptr_t at[MAX_FRAMES];    /* where ip[k] is on the stack (x86-64: its callee's CFA - 8) */
} chain_t;

static __attribute__((noinline)) int unwind_chain(mpiscope_call_t *c, chain_t *out)
{
    static __thread stack_t_ st;     /* 2 KiB: not on the application's stack */
    st.n = 0;
    _Unwind_Backtrace(collect, &st);
    out->n = 0;
    for (int w = 1; w < st.n; w++)
        if (st.ip[w] == (uintptr_t)c->ret) {
            /* libgcc's context for a frame holds the CFA of the frame it
             * was unwound from: the one the return address was pushed for */
            for (int k = w; k < st.n; k++) {
                out->ip[out->n] = st.ip[k];
                out->at[out->n] = st.cfa[k] - sizeof(void *);
                out->n++;
            }
            return 1;
        }
    return 0;
}

/* The first frame of the chain outside the skipped layers, -1 if none. */
static int first_user(const chain_t *ch)
{
    int j = -1;
    pthread_mutex_lock(&sites_lock);
    for (int k = 0; k < ch->n && j < 0; k++)
        if (role_of(ch->ip[k]) != MPISCOPE_ROLE_SKIP)
            j = k;
    pthread_mutex_unlock(&sites_lock);
    return j;
}

#if defined(__x86_64__)
#define SLOTS_KNOWN 1
#else
#define SLOTS_KNOWN 0
#endif

/* The offset from cfa to where a return address lies, if the redirect and
 * chain checks can use it. */
static int offset_ok(uintptr_t at, const char *cfa, uint32_t *off)
{
    if (!SLOTS_KNOWN || at <= (uintptr_t)cfa || at - (uintptr_t)cfa >= (1u << 24))
        return 0;
    *off = (uint32_t)(at - (uintptr_t)cfa);
    return 1;
}

/* --- depth > 1 --------------------------------------------------------------------- */

/* The chain of s's return address (frame k of ch) and the depth - 1 above it. */
static mpiscope_site_t *chain_site(mpiscope_call_t *c, mpiscope_site_t *s, const chain_t *ch, int k,
                                   const char *cfa)
{
    mpiscope_thread_t *t = c->t;
    unsigned n = 0;
    uint64_t key = fnv(FNV_START, (uint64_t)c->id);
    uintptr_t ip[MPISCOPE_SITE_DEPTH_MAX];
    for (int j = k; j < ch->n && n < sites_depth; j++) {
        ip[n++] = ch->ip[j];
        key = fnv(key, ch->ip[j]);
    }
    key |= KEY_ALT;
    key &= ~(1ull << 62);      /* never a lost-calls key */
    mpiscope_site_t *cs = slot_find(t, key);
    if (cs && cs->key != key)
        cs = room(t) ? site_new(c, key, ip, n) : lost(c);
    if (!cs)
        return NULL;
    /* Remember where the frames above lie: the same values there next time
     * mean the same chain. n - 1 < depth - 1 means the stack ended there. */
    memo_t *m = &t->site_cold->memo[s - t->sites];
    m->chain = (uint32_t)(cs - t->sites);
    m->n = 0;
    unsigned j = 1;
    while (j < n && offset_ok(ch->at[k + (int)j], cfa, &m->off[j - 1])) {
        m->val[j - 1] = ip[j];
        j++;
    }
    m->n = j == n ? n - 1 : 0;     /* 0: unwind every time */
    return cs;
}

static mpiscope_site_t *deep(mpiscope_call_t *c, mpiscope_site_t *s, const char *cfa)
{
    mpiscope_thread_t *t = c->t;
    memo_t *m = &t->site_cold->memo[s - t->sites];
    if (m->n) {
        unsigned j = 0;
        while (j < m->n && *(const uintptr_t *)(cfa + m->off[j]) == m->val[j])
            j++;
        if (j == m->n)
            return &t->sites[m->chain];
    }
    chain_t *ch = malloc(sizeof *ch);
    mpiscope_site_t *out = NULL;
    if (ch && unwind_chain(c, ch)) {
        uintptr_t ip = (uintptr_t)(s->key & KEY_LOW48);
        for (int k = 0; k < ch->n && !out; k++)
            if (ch->ip[k] == ip)
                out = chain_site(c, s, ch, k, cfa);
    }
    free(ch);
    return out ? out : lost(c);
}

/* --- mpi4py ------------------------------------------------------------------------ */

/* The few Python C API functions used, found in the process (mpi4py loaded
 * means an interpreter is there); never linked. */
static struct {
    int state;                   /* 0 unknown, 1 usable, -1 not */
    int (*is_initialized)(void);
    int (*is_finalizing)(void);
    int (*ensure)(void);
    void (*release)(int);
    void *(*get_frame)(void);
    void *(*frame_code)(void *);
    void *(*frame_back)(void *);
    int (*frame_line)(void *);
    int (*frame_lasti)(void *);
    void *(*getattr)(void *, const char *);
    const char *(*utf8)(void *);
    void (*incref)(void *);
    void (*decref)(void *);
} py;

static int py_usable(void)
{
    if (py.state)
        return py.state > 0;
    pthread_mutex_lock(&sites_lock);
    if (!py.state) {
#define PYSYM(field, name) (*(void **)&py.field = dlsym(RTLD_DEFAULT, name))
        PYSYM(is_initialized, "Py_IsInitialized");
        if (!PYSYM(is_finalizing, "Py_IsFinalizing"))
            PYSYM(is_finalizing, "_Py_IsFinalizing");
        PYSYM(ensure, "PyGILState_Ensure");
        PYSYM(release, "PyGILState_Release");
        PYSYM(get_frame, "PyEval_GetFrame");
        PYSYM(frame_code, "PyFrame_GetCode");
        PYSYM(frame_back, "PyFrame_GetBack");
        PYSYM(frame_line, "PyFrame_GetLineNumber");
        PYSYM(frame_lasti, "PyFrame_GetLasti");      /* 3.11+; else the line keys the site */
        PYSYM(getattr, "PyObject_GetAttrString");
        PYSYM(utf8, "PyUnicode_AsUTF8");
        PYSYM(incref, "Py_IncRef");
        PYSYM(decref, "Py_DecRef");
#undef PYSYM
        int ok = py.is_initialized && py.ensure && py.release && py.get_frame && py.frame_code &&
                 py.frame_back && py.frame_line && py.getattr && py.utf8 && py.incref && py.decref;
        __atomic_store_n(&py.state, ok ? 1 : -1, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&sites_lock);
    return py.state > 0;
}

/* co_filename of a code object (GIL held); NULL if unknown. */
static const char *py_filename(void *code, void **hold)
{
    void *f = py.getattr(code, "co_filename");
    *hold = f;
    return f ? py.utf8(f) : NULL;
}

/* Is this code object mpi4py's own Python code (mpi4py/util, futures...)? */
static int py_in_mpi4py(struct mpiscope_sitecold *cold, void *code)
{
    unsigned i = (unsigned)(((uintptr_t)code >> 4) & 63u);
    if (cold->pycode[i].code == code)
        return cold->pycode[i].in_mpi4py;
    void *hold;
    const char *name = py_filename(code, &hold);
    int in = name && strstr(name, "/mpi4py/") != NULL;
    if (hold)
        py.decref(hold);
    if (cold->pycode[i].code)
        py.decref(cold->pycode[i].code);
    py.incref(code);             /* held while cached: its address names it */
    cold->pycode[i].code = code;
    cold->pycode[i].in_mpi4py = in;
    return in;
}

/* The site of a call made by mpi4py: the Python frames that called it.
 * RATIONALE: mpi4py calls MPI with the GIL released; the wrapper takes it
 * back only after the MPI call returned, as mpi4py itself does next, so this
 * adds no wait an MPI call could depend on. */
static mpiscope_site_t *python_site(mpiscope_call_t *c, mpiscope_site_t *s)
{
    mpiscope_thread_t *t = c->t;
    if (!py_usable() || !py.is_initialized() || (py.is_finalizing && py.is_finalizing()))
        return NULL;
    int g = py.ensure();
    void *frames[MPISCOPE_SITE_DEPTH_MAX], *codes[MPISCOPE_SITE_DEPTH_MAX];
    unsigned n = 0;
    uint64_t key = fnv(FNV_START, (uint64_t)c->id);
    void *f = py.get_frame();          /* borrowed */
    if (f)
        py.incref(f);
    while (f && n < sites_depth) {
        void *code = py.frame_code(f);
        void *back = py.frame_back(f);
        if (n == 0 && code && py_in_mpi4py(t->site_cold, code)) {
            py.decref(code);
            py.decref(f);
            f = back;
            continue;
        }
        frames[n] = f;
        codes[n] = code;
        n++;
        key = fnv(fnv(key, (uint64_t)(uintptr_t)code),
                  (uint64_t)(py.frame_lasti ? py.frame_lasti(f) : py.frame_line(f)));
        f = back;
    }
    if (f)
        py.decref(f);
    key = (key | KEY_ALT) & ~(1ull << 62);
    mpiscope_site_t *out = NULL;
    if (n) {
        out = slot_find(t, key);
        if (out && out->key != key) {
            int32_t module[MPISCOPE_SITE_DEPTH_MAX];
            uint64_t offset[MPISCOPE_SITE_DEPTH_MAX];
            int d = -1;
            pthread_mutex_lock(&sites_lock);
            for (unsigned k = 0; k < n; k++) {
                void *hold;
                module[k] = mpiscope_module_python(py_filename(codes[k], &hold));
                if (hold)
                    py.decref(hold);
                offset[k] = (uint64_t)py.frame_line(frames[k]);
            }
            d = def_get(c->id, n, module, offset);
            pthread_mutex_unlock(&sites_lock);
            if (d >= 0 && room(t)) {
                for (unsigned k = 0; k < n; k++)
                    py.incref(codes[k]);      /* held for good: their addresses key the site */
                out = slot_put(t, out, key, (uint32_t)d, 0);
            } else {
                out = lost(c);
            }
        }
    }
    for (unsigned k = 0; k < n; k++) {
        if (codes[k])
            py.decref(codes[k]);
        py.decref(frames[k]);
    }
    py.release(g);
    (void)s;
    return out;
}

/* --- the slow path ----------------------------------------------------------------- */

static mpiscope_site_t *resolve(mpiscope_call_t *c, mpiscope_site_t *s, const char *cfa, int hops);

/* A key never seen by this thread: what its return address is decides. */
static mpiscope_site_t *discover(mpiscope_call_t *c, uint64_t key, uintptr_t ip, const char *cfa, int hops)
{
    mpiscope_thread_t *t = c->t;
    if (!room(t))
        return lost(c);
    pthread_mutex_lock(&sites_lock);
    int role = role_of(ip);
    pthread_mutex_unlock(&sites_lock);
    mpiscope_site_t *s = slot_find(t, key);
    if (!s)
        return lost(c);
    if (role == MPISCOPE_ROLE_SKIP && hops == 0) {
        chain_t *ch = malloc(sizeof *ch);
        int j = ch && unwind_chain(c, ch) ? first_user(ch) : -1;
        uint32_t off = AUX_UNWIND;
        uintptr_t real = j > 0 ? ch->ip[j] : 0;
        if (j > 0)
            offset_ok(ch->at[j], cfa, &off);
        free(ch);
        if (j > 0) {
            slot_put(t, s, key, SITE_REDIRECT, off);
            uint64_t key2 = (uint64_t)real | ((uint64_t)(c->id + 1) << 48);
            mpiscope_site_t *s2 = slot_find(t, key2);
            if (s2 && s2->key == key2)
                return resolve(c, s2, cfa, hops + 1);
            return discover(c, key2, real, cfa, hops + 1);
        }
        /* no frame above the MPI's layers: the site is where they were left */
    }
    if (role == MPISCOPE_ROLE_MPI4PY && hops == 0) {
        slot_put(t, s, key, SITE_PYTHON, 0);
        return resolve(c, s, cfa, hops + 1);
    }
    if (sites_depth > 1) {
        slot_put(t, s, key, SITE_DEEP, 0);
        return deep(c, s, cfa);
    }
    return site_new(c, key, &ip, 1);
}

/* The fallback site of an mpi4py call whose Python frames are out of reach
 * (the interpreter finalizing, no Python frame): mpi4py's own code. */
static mpiscope_site_t *mpi4py_frame(mpiscope_call_t *c)
{
    uint64_t key = (uint64_t)(uintptr_t)c->ret | ((uint64_t)(c->id + 1) << 48) | KEY_ALT;
    mpiscope_site_t *s = slot_find(c->t, key);
    if (s && s->key == key)
        return s;
    uintptr_t ip = (uintptr_t)c->ret;
    return room(c->t) ? site_new(c, key, &ip, 1) : lost(c);
}

static mpiscope_site_t *resolve(mpiscope_call_t *c, mpiscope_site_t *s, const char *cfa, int hops)
{
    if (s->site <= SITE_LOST)
        return s;
    if (hops > 3)
        return lost(c);
    if (s->site == SITE_DEEP)
        return deep(c, s, cfa);
    if (s->site == SITE_PYTHON) {
        mpiscope_site_t *p = python_site(c, s);
        return p ? p : mpi4py_frame(c);
    }
    /* SITE_REDIRECT: the caller of the skipped layers */
    uintptr_t real = 0;
    if (s->aux != AUX_UNWIND && ++s->calls % REDIRECT_CHECK != 0) {
        real = *(const uintptr_t *)(cfa + s->aux);
    } else {
        chain_t *ch = malloc(sizeof *ch);
        int j = ch && unwind_chain(c, ch) ? first_user(ch) : -1;
        if (j > 0) {
            real = ch->ip[j];
            uint32_t off;
            /* the slot moved (a frame of varying size): unwind from now on */
            if (s->aux != AUX_UNWIND && (!offset_ok(ch->at[j], cfa, &off) || off != s->aux))
                s->aux = AUX_UNWIND;
        }
        free(ch);
        if (!real)
            return lost(c);
    }
    uint64_t key2 = (uint64_t)real | ((uint64_t)(c->id + 1) << 48);
    mpiscope_site_t *s2 = slot_find(c->t, key2);
    if (s2 && s2->key == key2)
        return resolve(c, s2, cfa, hops + 1);
    return discover(c, key2, real, cfa, hops + 1);
}

/* RATIONALE for noinline: the redirect and chain offsets are relative to
 * this function's own CFA, which is at a fixed distance from its caller's
 * frame only if it is a real call from the one place each wrapper calls it. */
__attribute__((noinline)) mpiscope_site_t *mpiscope_site_slow(mpiscope_call_t *c, uint64_t key)
{
    const char *cfa = __builtin_dwarf_cfa();
    mpiscope_thread_t *t = c->t;
    if (!t->sites)
        return NULL;
    mpiscope_site_t *s = slot_find(t, key);
    if (s && s->key == key)
        return resolve(c, s, cfa, 0);
    return discover(c, key, (uintptr_t)c->ret, cfa, 0);
}

/* --- what the writers read ---------------------------------------------------------- */

int mpiscope_sites_module_at(uintptr_t addr)
{
    pthread_mutex_lock(&sites_lock);
    int m = mpiscope_module_of(addr);
    pthread_mutex_unlock(&sites_lock);
    return m;
}

unsigned mpiscope_sites_count(void)
{
    return __atomic_load_n(&ndefs, __ATOMIC_ACQUIRE);
}

const mpiscope_sitedef_t *mpiscope_site_def(unsigned i)
{
    return i < mpiscope_sites_count() ? &defs[i] : NULL;
}

uint32_t mpiscope_sites_overflow(void)
{
    return __atomic_load_n(&sites_overflow, __ATOMIC_RELAXED) | mpiscope_modules_overflow();
}

static void acc_add(mpiscope_siteacc_t *a, const mpiscope_site_t *s)
{
    if (!s->calls)
        return;
    if (!a->calls || s->min < a->min)
        a->min = s->min;
    if (s->max > a->max)
        a->max = s->max;
    a->calls += s->calls;
    a->ticks += s->ticks;
    a->sent += s->sent;
    a->recv += s->recv;
}

int mpiscope_sites_sum(mpiscope_sites_sum_t *out)
{
    memset(out, 0, sizeof *out);
    out->n = mpiscope_sites_count();
    out->acc = zalloc(sizeof *out->acc * (out->n ? out->n : 1));
    out->hist = zalloc(sizeof *out->hist * MPISCOPE_NBUCKETS * (out->n ? out->n : 1));
    out->lost = zalloc(sizeof *out->lost * MPISCOPE_NIDS);
    if (!out->acc || !out->hist || !out->lost) {
        mpiscope_sites_sum_free(out);
        return 0;
    }
    mpiscope_thread_t *threads[MPISCOPE_MAX_THREADS + 1];   /* + the shared table (lifecycle.c) */
    unsigned nt = mpiscope_threads_list(threads, MPISCOPE_MAX_THREADS + 1);
    for (unsigned k = 0; k < nt; k++) {
        mpiscope_thread_t *t = threads[k];
        if (!t->sites || !t->site_cold)
            continue;
        uint32_t nu = __atomic_load_n(&t->site_cold->nused, __ATOMIC_ACQUIRE);
        for (uint32_t u = 0; u < nu; u++) {
            const mpiscope_site_t *s = &t->sites[t->site_cold->used[u]];
            if (s->site == SITE_LOST)
                acc_add(&out->lost[s->key & 0xFFFFu], s);
            else if (s->site < out->n)
                acc_add(&out->acc[s->site], s);
        }
        const mpiscope_hbin_t *hist = (const mpiscope_hbin_t *)(t->sites + t->site_mask + 1);
        uint32_t nh = __atomic_load_n(&t->nshused, __ATOMIC_ACQUIRE);
        for (uint32_t u = 0; u < nh; u++) {
            uint32_t i = t->shused[u];
            const mpiscope_site_t *s = &t->sites[i / MPISCOPE_NBUCKETS];
            if (s->site < out->n) {
                mpiscope_hbin_t *h = &out->hist[(size_t)s->site * MPISCOPE_NBUCKETS + i % MPISCOPE_NBUCKETS];
                h->count += hist[i].count;
                h->ticks += hist[i].ticks;
            }
        }
    }
    out->overflow = mpiscope_sites_overflow();
    return 1;
}

void mpiscope_sites_sum_free(mpiscope_sites_sum_t *s)
{
    if (s->acc)
        munmap(s->acc, sizeof *s->acc * (s->n ? s->n : 1));
    if (s->hist)
        munmap(s->hist, sizeof *s->hist * MPISCOPE_NBUCKETS * (s->n ? s->n : 1));
    if (s->lost)
        munmap(s->lost, sizeof *s->lost * MPISCOPE_NIDS);
    memset(s, 0, sizeof *s);
}
