/*
 * cancels.c - a receive the application cancels moves nothing (issue 22).
 *
 * MPI_Irecv and MPI_Imrecv count their posted size when posted (the status,
 * the only word on what arrived, comes at completion). A receive that is
 * cancelled, and whose cancellation succeeds (MPI_Test_cancelled on its
 * completion status), moved nothing: its bytes are taken back.
 *
 * RATIONALE: the hot path pays one hash insert per posted receive (the size
 * and where it was recorded, keyed by request handle; an entry is replaced
 * when MPI reuses the handle) and one load of `cancels_pending` per
 * completion call. Only while a cancelled request is still pending do the
 * completion wrappers look at request handles and statuses (the slow path,
 * which may allocate a status array when the program passed
 * MPI_STATUSES_IGNORE). The corrections are kept in a list and applied to the
 * tables at MPI_Finalize (mpiscope_cancels_apply), when no thread records:
 * under MPI_THREAD_MULTIPLE the thread that completes a request need not be
 * the one whose table holds its posted size.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "mpiscope.h"

typedef struct {
    uint64_t key;                /* handle + 1; 0 = empty */
    mpiscope_thread_t *t;        /* table the posting call was recorded in */
    uint64_t bytes;
    uint32_t id, slot;           /* function id, region slot */
    int hist;                    /* histogram slot, -1 none */
    int cslot;                   /* per-communicator table slot, -1 none */
} cancel_entry_t;

#define CANCEL_PENDING_MAX MPISCOPE_DONE_MAX   /* cancelled, not yet completed: one completion
                                                  call can follow every one of them */
#define CANCEL_FIX_MAX 4096      /* successful cancellations kept for MPI_Finalize */

static cancel_entry_t *posted;   /* open addressing, never deleted (handles are reused) */
static uint32_t posted_mask, posted_count, posted_max;
static cancel_entry_t pending[CANCEL_PENDING_MAX];
volatile uint32_t mpiscope_cancels_pending;
static cancel_entry_t *fixes;
static uint32_t nfixes;

#define HKEY(h) ((uint64_t)(uintptr_t)(h) + 1u)

/* The slot of key in the posted table, or the empty slot where it would go
 * (under the lock). */
static uint32_t posted_find(uint64_t key)
{
    uint32_t i = mpiscope_hash64(key) & posted_mask;
    while (posted[i].key != 0 && posted[i].key != key)
        i = (i + 1) & posted_mask;
    return i;
}

void mpiscope_cancels_init(void)
{
    uint32_t cap = 16;
    posted_max = (uint32_t)mpiscope_settings.MAX_REQUESTS;
    while (cap < 2u * posted_max)
        cap <<= 1;
    void *p = mmap(NULL, sizeof(cancel_entry_t) * cap, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    posted = p == MAP_FAILED ? NULL : p;
    posted_mask = posted ? cap - 1 : 0;
}

/* A receive request was posted and recorded (c): remember where. */
void mpiscope_recv_posted(const mpiscope_call_t *c, MPI_Request req)
{
    if (!posted || req == MPI_REQUEST_NULL)
        return;
    uint64_t key = HKEY(req);
    mpiscope_lock();
    uint32_t i = posted_find(key);
    if (posted[i].key == key || posted_count < posted_max) {
        if (posted[i].key == 0)
            posted_count++;
        posted[i] = (cancel_entry_t){key, c->t, c->recv, (uint32_t)c->id, mpiscope_region_slot, c->hist,
                                     c->cslot};
    }
    mpiscope_unlock();
}

/* MPI_Cancel(req) returned: if req is a receive we counted, watch its completion. */
void mpiscope_cancel_asked(MPI_Request req)
{
    if (!posted || req == MPI_REQUEST_NULL)
        return;
    uint64_t key = HKEY(req);
    mpiscope_lock();
    uint32_t i = posted_find(key);
    if (posted[i].key == key && posted[i].bytes) {
        int free_slot = -1, dup = 0;
        for (int k = 0; k < CANCEL_PENDING_MAX; k++) {
            if (pending[k].key == key)
                dup = 1;
            else if (!pending[k].key && free_slot < 0)
                free_slot = k;
        }
        if (!dup && free_slot >= 0) {
            pending[free_slot] = posted[i];
            mpiscope_cancels_pending++;
        } else if (!dup) {
            __atomic_or_fetch(&mpiscope_tls->overflow, MPISCOPE_OVF_CANCELS, __ATOMIC_RELAXED);   /* cannot follow it: counted */
        }
    }
    mpiscope_unlock();
}

/* MPI_Request_free of a request: a cancellation pending on it is never seen
 * completed (its bytes stay counted, as documented); stop following it. */
void mpiscope_cancel_forget(MPI_Request req)
{
    if (!mpiscope_cancels_pending || req == MPI_REQUEST_NULL)
        return;
    mpiscope_lock();
    for (int k = 0; k < CANCEL_PENDING_MAX; k++)
        if (pending[k].key == HKEY(req)) {
            pending[k].key = 0;
            mpiscope_cancels_pending--;
        }
    mpiscope_unlock();
}

/* Slow path, before a completion call: which of its requests are pending
 * cancellations (their handles become MPI_REQUEST_NULL when they complete).
 * Statuses the program ignores are replaced by ours. */
void mpiscope_done_pre(mpiscope_done_t *d, int n, const MPI_Request *reqs, MPI_Status **statuses,
                       int one)
{
    d->n = 0;
    d->own = NULL;
    mpiscope_lock();
    for (int i = 0; reqs && i < n && d->n < MPISCOPE_DONE_MAX; i++) {
        if (reqs[i] == MPI_REQUEST_NULL)
            continue;
        for (int k = 0; k < CANCEL_PENDING_MAX; k++)
            if (pending[k].key == HKEY(reqs[i])) {
                d->idx[d->n] = i;
                d->slot[d->n++] = k;
                break;
            }
    }
    mpiscope_unlock();
    if (!d->n)
        return;
    if (one) {
        if (*statuses == MPI_STATUS_IGNORE)
            *statuses = &d->one;
    } else if (*statuses == MPI_STATUSES_IGNORE) {
        d->own = malloc(sizeof(MPI_Status) * (size_t)(n > 0 ? n : 1));
        if (d->own)
            *statuses = d->own;
        else
            d->n = 0;    /* out of memory: the cancellation stays counted */
    }
}

/* After it: request idx completed with status st (NULL: not completed). */
static void done_one(mpiscope_done_t *d, int j, const MPI_Status *st)
{
    int cancelled = 0;
    PMPI_Test_cancelled(st, &cancelled);
    mpiscope_lock();
    int k = d->slot[j];
    if (pending[k].key) {
        if (cancelled && fixes == NULL)
            fixes = calloc(CANCEL_FIX_MAX, sizeof *fixes);
        if (cancelled && fixes && nfixes < CANCEL_FIX_MAX)
            fixes[nfixes++] = pending[k];
        else if (cancelled)
            __atomic_or_fetch(&mpiscope_tls->overflow, MPISCOPE_OVF_CANCELS, __ATOMIC_RELAXED);
        pending[k].key = 0;
        mpiscope_cancels_pending--;
    }
    mpiscope_unlock();
}

/* completed(i) for request index i: which requests this call completed. */
void mpiscope_done_post(mpiscope_done_t *d, int rc, int how, const int *flag, const int *index,
                        const int *outcount, const int *indices, MPI_Status *statuses)
{
    for (int j = 0; j < d->n; j++) {
        int i = d->idx[j], done = 0, at = i;
        switch (how) {
        case MPISCOPE_DONE_ONE:     /* Wait, Test, Request_get_status */
            done = rc == MPI_SUCCESS && (!flag || *flag);
            at = 0;
            break;
        case MPISCOPE_DONE_ALL:     /* Waitall, Testall */
            done = (rc == MPI_SUCCESS || rc == MPI_ERR_IN_STATUS) && (!flag || *flag);
            break;
        case MPISCOPE_DONE_ANY:     /* Waitany, Testany: one status */
            done = rc == MPI_SUCCESS && (!flag || *flag) && index && *index == i;
            at = 0;
            break;
        case MPISCOPE_DONE_SOME:    /* Waitsome, Testsome */
            for (int s = 0; (rc == MPI_SUCCESS || rc == MPI_ERR_IN_STATUS) && outcount &&
                            *outcount != MPI_UNDEFINED && s < *outcount; s++)
                if (indices[s] == i) {
                    done = 1;
                    at = s;
                    break;
                }
            break;
        }
        if (done)
            done_one(d, j, &statuses[at]);
    }
    free(d->own);
    d->own = NULL;
}

/* At MPI_Finalize, before the threads' tables are merged: take back the
 * bytes of every receive whose cancellation succeeded, and move its call to
 * the 0-byte histogram bucket. */
void mpiscope_cancels_apply(void)
{
    for (uint32_t f = 0; f < nfixes; f++) {
        cancel_entry_t *e = &fixes[f];
        mpiscope_thread_t *t = e->t;
        mpiscope_stat_t *s = &t->stats[e->id * mpiscope_nslots + e->slot];
        s->recv -= e->bytes <= s->recv ? e->bytes : s->recv;
        if (e->cslot >= 0) {     /* and from its communicator's row */
            mpiscope_cstat_t *cs = &t->cstats[(uint32_t)e->cslot * MPISCOPE_NIDS + e->id];
            cs->recv -= e->bytes <= cs->recv ? e->bytes : cs->recv;
        }
        if (e->hist < 0)
            continue;
        unsigned b = 64u - (unsigned)__builtin_clzll(e->bytes);
        if (b >= MPISCOPE_NBUCKETS)
            b = MPISCOPE_NBUCKETS - 1;
        uint32_t base = ((uint32_t)e->hist * mpiscope_nslots + e->slot) * MPISCOPE_NBUCKETS;
        mpiscope_hbin_t *from = &t->hist[base + b], *to = &t->hist[base];
        if (from->count == 0)
            continue;
        /* The call's own time is not known apart from the others in its bucket:
         * it moves with the bucket's mean time. */
        uint64_t dt = from->ticks / from->count;
        from->ticks -= dt;
        if (--from->count == 0)      /* an emptied bucket leaves the used list */
            for (uint32_t u = 0; u < t->nhused; u++)
                if (t->hused[u] == base + b) {
                    t->hused[u] = t->hused[--t->nhused];
                    break;
                }
        if (to->count++ == 0)
            t->hused[t->nhused++] = base;
        to->ticks += dt;
    }
    nfixes = 0;
}
