/*
 * merge.c - the union over all ranks of small sets of (a, b, text) entries:
 * region names, MPI-IO files, summary keys.
 *
 * Binomial tree (as Caliper's aggregate_over_mpi): at step k a rank with bit
 * k set sends its set to rank - 2^k and is done; the others receive from
 * rank + 2^k and merge. log2(P) steps; each message holds distinct entries
 * only, so data is O(distinct entries), not O(P). Entries are serialized as
 * {u64 a, u64 b, u32 len, u32 0, text padded to 8}. mpiscope_set_union_top
 * bounds the union: entries carry a u64 weight as their text, summed over
 * ranks, and each step keeps the cap entries of most weight.
 */
#include <stdlib.h>
#include <string.h>

#include "mpiscope.h"

#define MERGE_TAG 7702

static int cmp_entry(const void *x, const void *y)
{
    const mpiscope_entry_t *p = x, *q = y;
    if (p->a != q->a)
        return p->a < q->a ? -1 : 1;
    if (p->b != q->b)
        return p->b < q->b ? -1 : 1;
    return 0;
}

/* The same key, then the earlier text in the buffer the entries were parsed
 * from: the receiver's own entries come before what it received from a
 * higher rank, so the first text of a key is the lowest rank's (a
 * communicator's name as its lowest member sees it), whatever qsort does. */
static int cmp_entry_stable(const void *x, const void *y)
{
    int c = cmp_entry(x, y);
    const mpiscope_entry_t *p = x, *q = y;
    return c ? c : (p->text > q->text) - (p->text < q->text);
}

static void serialize(const mpiscope_entry_t *e, size_t n, mpiscope_buf_t *b)
{
    static const char zero[8];
    for (size_t i = 0; i < n; i++) {
        uint32_t hdr[2] = {e[i].len, 0};
        mpiscope_buf_put(b, &e[i].a, 8);
        mpiscope_buf_put(b, &e[i].b, 8);
        mpiscope_buf_put(b, hdr, 8);
        mpiscope_buf_put(b, e[i].text ? e[i].text : "", e[i].len);
        mpiscope_buf_put(b, zero, (8 - e[i].len % 8) % 8);
    }
}

/* Entries pointing into data (which must outlive them). */
static size_t parse(const char *data, size_t len, mpiscope_entry_t **out)
{
    size_t n = 0, cap = 16, off = 0;
    mpiscope_entry_t *e = malloc(cap * sizeof *e);
    while (e && off + 24 <= len) {
        mpiscope_entry_t x;
        uint32_t hdr[2];
        memcpy(&x.a, data + off, 8);
        memcpy(&x.b, data + off + 8, 8);
        memcpy(hdr, data + off + 16, 8);
        x.len = hdr[0];
        x.text = data + off + 24;
        off += 24 + x.len + (8 - x.len % 8) % 8;
        if (off > len)
            break;
        if (n == cap) {
            cap *= 2;
            mpiscope_entry_t *g = realloc(e, cap * sizeof *e);
            if (!g)
                break;
            e = g;
        }
        e[n++] = x;
    }
    *out = e;
    return e ? n : 0;
}

static uint64_t weight_of(const mpiscope_entry_t *e)
{
    uint64_t w = 0;
    if (e->text && e->len == 8)
        memcpy(&w, e->text, 8);
    return w;
}

static int by_weight(const void *x, const void *y)
{
    uint64_t p = weight_of(x), q = weight_of(y);
    return p != q ? (p < q ? 1 : -1) : cmp_entry(x, y);
}

/* Sort, drop duplicates (the first text of a key wins), re-serialize. With
 * cap > 0 the texts are u64 weights: duplicates sum theirs, and only the cap
 * entries of most weight are kept. */
static void normalize(mpiscope_entry_t *e, size_t n, size_t cap, mpiscope_buf_t *out)
{
    qsort(e, n, sizeof *e, cmp_entry_stable);
    uint64_t *w = cap ? malloc((n ? n : 1) * sizeof *w) : NULL;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (k == 0 || cmp_entry(&e[k - 1], &e[i]) != 0) {
            e[k++] = e[i];
            if (w)
                w[k - 1] = weight_of(&e[i]);
        } else if (w) {
            w[k - 1] += weight_of(&e[i]);
        }
    }
    if (w) {
        for (size_t i = 0; i < k; i++)
            e[i].text = (const char *)&w[i], e[i].len = 8;
        if (k > cap) {
            qsort(e, k, sizeof *e, by_weight);
            k = cap;
            qsort(e, k, sizeof *e, cmp_entry);
        }
    }
    serialize(e, k, out);
    free(w);
}

void mpiscope_set_union(MPI_Comm comm, const mpiscope_entry_t *mine, size_t n, int bcast,
                        mpiscope_set_t *out)
{
    mpiscope_set_union_top(comm, mine, n, bcast, 0, out);
}

/* RATIONALE: the cap is applied at every step of the tree, so no message
 * holds more than cap entries and the result is the cap keys of most weight
 * among what each subtree kept: exact for keys every subtree ranks high,
 * approximate (a key left out of every subtree's top) otherwise. */
void mpiscope_set_union_top(MPI_Comm comm, const mpiscope_entry_t *mine, size_t n, int bcast, size_t cap,
                            mpiscope_set_t *out)
{
    int rank, size;
    PMPI_Comm_rank(comm, &rank);
    PMPI_Comm_size(comm, &size);
    mpiscope_buf_t cur = {0};
    mpiscope_entry_t *tmp = malloc((n ? n : 1) * sizeof *tmp);
    if (tmp && n)
        memcpy(tmp, mine, n * sizeof *tmp);
    normalize(tmp, tmp ? n : 0, cap, &cur);
    free(tmp);
    for (int mask = 1; mask < size; mask <<= 1) {
        if (rank & mask) {
            PMPI_Send(cur.data ? cur.data : "", (int)cur.len, MPI_BYTE, rank - mask, MERGE_TAG, comm);
            break;
        }
        if (rank + mask < size) {
            MPI_Status st;
            int len = 0;
            PMPI_Probe(rank + mask, MERGE_TAG, comm, &st);
            PMPI_Get_count(&st, MPI_BYTE, &len);
            char *in = malloc((size_t)len + 1);
            PMPI_Recv(in, len, MPI_BYTE, rank + mask, MERGE_TAG, comm, MPI_STATUS_IGNORE);
            mpiscope_buf_t both = {0};
            mpiscope_buf_put(&both, cur.data, cur.len);
            mpiscope_buf_put(&both, in, (size_t)len);
            free(in);
            mpiscope_entry_t *e;
            size_t m = parse(both.data, both.len, &e);
            mpiscope_buf_free(&cur);
            normalize(e, m, cap, &cur);
            free(e);
            mpiscope_buf_free(&both);
        }
    }
    if (bcast) {
        unsigned long long len = rank == 0 ? cur.len : 0;
        PMPI_Bcast(&len, 1, MPI_UNSIGNED_LONG_LONG, 0, comm);
        if (rank != 0) {
            mpiscope_buf_free(&cur);
            char *d = malloc((size_t)len + 1);
            cur.data = d;
            cur.len = cur.cap = d ? (size_t)len : 0;
        }
        if (len)
            PMPI_Bcast(cur.data, (int)len, MPI_BYTE, 0, comm);
    } else if (rank != 0) {
        mpiscope_buf_free(&cur);
    }
    out->store = cur;
    out->n = parse(cur.data ? cur.data : "", cur.len, &out->e);
}

long mpiscope_entries_find(const mpiscope_entry_t *e, size_t n, uint64_t a, uint64_t b)
{
    long lo = 0, hi = (long)n - 1;
    while (lo <= hi) {
        long mid = (lo + hi) / 2;
        const mpiscope_entry_t *x = &e[mid];
        if (x->a == a && x->b == b)
            return mid;
        if (x->a < a || (x->a == a && x->b < b))
            lo = mid + 1;
        else
            hi = mid - 1;
    }
    return -1;
}

void mpiscope_set_free(mpiscope_set_t *s)
{
    free(s->e);
    mpiscope_buf_free(&s->store);
    s->e = NULL;
    s->n = 0;
}
