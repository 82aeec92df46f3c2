/*
 * roles.h - what each argument role of runtime/wrappers/functions.py does.
 *
 * The generated wrappers (mpiscope_wrappers.c) call MPISCOPE_PRE_<role>(&c,
 * args...) before the PMPI call and MPISCOPE_POST_<role>(&c, rc, args...)
 * after it; functions.ROLES says which. c is the call in flight
 * (mpiscope_call_t): roles set its bytes, its peer and its root status, and
 * mpiscope_record() files it. A role never changes what the application
 * passed in a way it could observe: the only substitution is our own
 * MPI_Status where the application passed MPI_STATUS_IGNORE.
 *
 * Bytes: "the size of the buffers the arguments describe" (docs/runtime.md):
 * count x MPI_Type_size_x, so derived datatypes count their data, not their
 * extent; where the call returns a status, what the status says arrived or
 * was read; MPI_IN_PLACE sends 0 bytes; MPI_PROC_NULL moves 0 bytes; a call
 * that fails moves nothing (MPISCOPE_FAILED, applied by every wrapper).
 */
#ifndef MPISCOPE_ROLES_H
#define MPISCOPE_ROLES_H

#include "mpiscope.h"

#pragma GCC visibility push(hidden)

/* --- sizes ---------------------------------------------------------------- */

/* Count arrays are int [] or, in the MPI-4 large-count MPI_X_c, MPI_Count []:
 * one body for both widths, chosen at compile time (no cost for either). */
#define MPISCOPE_SUM_COUNTS_BODY                  \
    uint64_t s = 0;                               \
    for (int i = 0; counts && i < n; i++)         \
        if (counts[i] > 0)                        \
            s += (uint64_t)counts[i];             \
    return s
static inline uint64_t mpiscope_sum_int(const int *counts, int n) { MPISCOPE_SUM_COUNTS_BODY; }
static inline uint64_t mpiscope_sum_count(const MPI_Count *counts, int n) { MPISCOPE_SUM_COUNTS_BODY; }
#define mpiscope_sum_counts(counts, n)                                               \
    _Generic((counts), const MPI_Count *: mpiscope_sum_count, MPI_Count *: mpiscope_sum_count, \
             default: mpiscope_sum_int)((counts), (n))

#define MPISCOPE_SUM_W_BODY                                  \
    uint64_t s = 0;                                          \
    for (int i = 0; counts && types && i < n; i++)           \
        s += mpiscope_bytes((long)counts[i], types[i]);      \
    return s
static inline uint64_t mpiscope_sum_w_int(const int *counts, const MPI_Datatype *types, int n)
{
    MPISCOPE_SUM_W_BODY;
}
static inline uint64_t mpiscope_sum_w_count(const MPI_Count *counts, const MPI_Datatype *types, int n)
{
    MPISCOPE_SUM_W_BODY;
}
#define mpiscope_sum_w(counts, types, n)                                                  \
    _Generic((counts), const MPI_Count *: mpiscope_sum_w_count, MPI_Count *: mpiscope_sum_w_count, \
             default: mpiscope_sum_w_int)((counts), (types), (n))

#define MPISCOPE_PRE_send(c, count, type) ((c)->sent += (c)->nosend ? 0 : mpiscope_bytes((count), (type)))
#define MPISCOPE_PRE_recv(c, count, type) ((c)->recv += (c)->norecv ? 0 : mpiscope_bytes((count), (type)))
/* Partitioned: partitions x count elements, each MPI_Start one message. */
#define MPISCOPE_PRE_send_p(c, parts, count, type) \
    ((c)->sent += (parts) <= 0 ? 0 : mpiscope_bytes((count), (type)) * (uint64_t)(parts))
#define MPISCOPE_PRE_recv_p(c, parts, count, type) \
    ((c)->recv += (parts) <= 0 ? 0 : mpiscope_bytes((count), (type)) * (uint64_t)(parts))
#define MPISCOPE_PRE_send_n(c, count, type, comm) \
    ((c)->sent += (c)->nosend ? 0 : mpiscope_bytes((count), (type)) * (uint64_t)mpiscope_group_n((comm), NULL))
#define MPISCOPE_PRE_recv_n(c, count, type, comm) \
    ((c)->recv += (c)->norecv ? 0 : mpiscope_bytes((count), (type)) * (uint64_t)mpiscope_group_n((comm), NULL))
#define MPISCOPE_PRE_send_v(c, counts, type, comm) \
    ((c)->sent += (c)->nosend ? 0 : mpiscope_sum_counts((counts), mpiscope_group_n((comm), NULL)) * mpiscope_bytes(1, (type)))
#define MPISCOPE_PRE_recv_v(c, counts, type, comm) \
    ((c)->recv += (c)->norecv ? 0 : mpiscope_sum_counts((counts), mpiscope_group_n((comm), NULL)) * mpiscope_bytes(1, (type)))
#define MPISCOPE_PRE_send_w(c, counts, types, comm) \
    ((c)->sent += (c)->nosend ? 0 : mpiscope_sum_w((counts), (types), mpiscope_group_n((comm), NULL)))
#define MPISCOPE_PRE_recv_w(c, counts, types, comm) \
    ((c)->recv += (c)->norecv ? 0 : mpiscope_sum_w((counts), (types), mpiscope_group_n((comm), NULL)))

/* The roles query the application's communicator before the call; an
 * erroneous one (MPI_COMM_NULL) is never passed on to MPI by the runtime (it
 * would raise an error of ours), and a failed query counts nothing. */
static inline int mpiscope_local_size(MPI_Comm comm)
{
    int n = 0;
    if (comm == MPI_COMM_NULL || PMPI_Comm_size(comm, &n) != MPI_SUCCESS)
        return 0;
    return n;
}

static inline int mpiscope_local_rank(MPI_Comm comm)
{
    int r = 0;
    if (comm == MPI_COMM_NULL || PMPI_Comm_rank(comm, &r) != MPI_SUCCESS)
        return -1;
    return r;
}

#define MPISCOPE_PRE_send_sum(c, counts, type, comm) \
    ((c)->sent += (c)->nosend ? 0 : mpiscope_sum_counts((counts), mpiscope_local_size(comm)) * mpiscope_bytes(1, (type)))
/* counts[my rank] x size; counts is int [] or MPI_Count [] (MPI_X_c). */
#define MPISCOPE_PRE_recv_mine(c, counts, type, comm)                                   \
    do {                                                                               \
        int mpiscope_r = (c)->norecv || !(counts) ? -1 : mpiscope_local_rank(comm);     \
        if (mpiscope_r >= 0)                                                           \
            (c)->recv += mpiscope_bytes((long)(counts)[mpiscope_r], (type));           \
    } while (0)

static inline int mpiscope_outdeg(MPI_Comm comm)
{
    int in, out;
    mpiscope_degrees(comm, &in, &out);
    return out;
}

static inline int mpiscope_indeg(MPI_Comm comm)
{
    int in, out;
    mpiscope_degrees(comm, &in, &out);
    return in;
}

#define MPISCOPE_PRE_send_out(c, count, type, comm) \
    ((c)->sent += (c)->nosend ? 0 : mpiscope_bytes((count), (type)) * (uint64_t)mpiscope_outdeg(comm))
#define MPISCOPE_PRE_recv_in(c, count, type, comm) \
    ((c)->recv += (c)->norecv ? 0 : mpiscope_bytes((count), (type)) * (uint64_t)mpiscope_indeg(comm))
/* v and w neighbourhood collectives: the count arrays have one block per neighbour
 * position, MPI_PROC_NULL ones included (a non-periodic cart's edge): only real
 * neighbours' blocks count (comms.c, mpiscope_neighbors). */
#define MPISCOPE_NBR_SUM_BODY(term)                                              \
    int in, out, positions;                                                      \
    uint64_t real, s = 0;                                                        \
    mpiscope_neighbors(comm, &in, &out, &positions, &real);                     \
    int n = positions >= 0 ? positions : outgoing ? out : in;                    \
    for (int i = 0; counts && i < n; i++)                                        \
        if (i >= 64 || (real >> i & 1u))                                         \
            s += (term);                                                         \
    return s
static inline uint64_t mpiscope_nbr_sum_int(const int *counts, MPI_Comm comm, int outgoing)
{
    MPISCOPE_NBR_SUM_BODY(counts[i] > 0 ? (uint64_t)counts[i] : 0u);
}
static inline uint64_t mpiscope_nbr_sum_count(const MPI_Count *counts, MPI_Comm comm, int outgoing)
{
    MPISCOPE_NBR_SUM_BODY(counts[i] > 0 ? (uint64_t)counts[i] : 0u);
}
static inline uint64_t mpiscope_nbr_sum_w_int(const int *counts, const MPI_Datatype *types,
                                              MPI_Comm comm, int outgoing)
{
    MPISCOPE_NBR_SUM_BODY(types ? mpiscope_bytes((long)counts[i], types[i]) : 0u);
}
static inline uint64_t mpiscope_nbr_sum_w_count(const MPI_Count *counts, const MPI_Datatype *types,
                                                MPI_Comm comm, int outgoing)
{
    MPISCOPE_NBR_SUM_BODY(types ? mpiscope_bytes((long)counts[i], types[i]) : 0u);
}
#define mpiscope_nbr_sum(counts, comm, outgoing)                                              \
    _Generic((counts), const MPI_Count *: mpiscope_nbr_sum_count, MPI_Count *: mpiscope_nbr_sum_count, \
             default: mpiscope_nbr_sum_int)((counts), (comm), (outgoing))
#define mpiscope_nbr_sum_w(counts, types, comm, outgoing)                                         \
    _Generic((counts), const MPI_Count *: mpiscope_nbr_sum_w_count, MPI_Count *: mpiscope_nbr_sum_w_count, \
             default: mpiscope_nbr_sum_w_int)((counts), (types), (comm), (outgoing))
#define MPISCOPE_PRE_send_outv(c, counts, type, comm) \
    ((c)->sent += (c)->nosend ? 0 : mpiscope_nbr_sum((counts), (comm), 1) * mpiscope_bytes(1, (type)))
#define MPISCOPE_PRE_recv_inv(c, counts, type, comm) \
    ((c)->recv += (c)->norecv ? 0 : mpiscope_nbr_sum((counts), (comm), 0) * mpiscope_bytes(1, (type)))
#define MPISCOPE_PRE_send_outw(c, counts, types, comm) \
    ((c)->sent += (c)->nosend ? 0 : mpiscope_nbr_sum_w((counts), (types), (comm), 1))
#define MPISCOPE_PRE_recv_inw(c, counts, types, comm) \
    ((c)->recv += (c)->norecv ? 0 : mpiscope_nbr_sum_w((counts), (types), (comm), 0))

/* MPI_IN_PLACE: the send (receive) arguments may be garbage, so the roles
 * listed after it never look at them (functions.py lists inplace first). */
#define MPISCOPE_PRE_inplace(c, buf) \
    ((c)->nosend = (const void *)(buf) == (const void *)MPI_IN_PLACE)
#define MPISCOPE_PRE_inplace_recv(c, buf) \
    ((c)->norecv = (const void *)(buf) == (const void *)MPI_IN_PLACE)

/* --- rooted collectives ------------------------------------------------------ */

static inline void mpiscope_root(mpiscope_call_t *c, int root, MPI_Comm comm)
{
    int inter = 0;
    if (comm == MPI_COMM_NULL || PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS) {
        c->root = -1;      /* an erroneous call: it moves nothing */
        return;
    }
    c->inter = inter;
    if (inter)
        c->root = root == MPI_ROOT ? 1 : root == MPI_PROC_NULL ? -1 : 0;
    else
        c->root = root == mpiscope_local_rank(comm) ? 1 : 0;
}
#define MPISCOPE_PRE_root(c, root, comm) mpiscope_root((c), (root), (comm))
#define MPISCOPE_QUAL_root(c) ((c)->root == 1)
#define MPISCOPE_QUAL_leaf(c) ((c)->root == 0)
#define MPISCOPE_QUAL_member(c) ((c)->root == 0 || ((c)->root == 1 && !(c)->inter))

/* --- point to point ------------------------------------------------------------ */

static inline void mpiscope_dest(mpiscope_call_t *c, int dest, MPI_Comm comm)
{
    if (dest == MPI_PROC_NULL)
        c->sent = 0;
    else
        c->peer = mpiscope_world_of(comm, dest);
}
#define MPISCOPE_PRE_dest(c, dest, comm) mpiscope_dest((c), (dest), (comm))
#define MPISCOPE_PRE_source(c, source) \
    do { if ((source) == MPI_PROC_NULL) (c)->recv = 0; } while (0)
/* Only for snapshots (what a rank waits for); MPI_ANY_SOURCE stays "any". */
static inline int mpiscope_from(int source, MPI_Comm comm)
{
    if (source == MPI_ANY_SOURCE)
        return MPISCOPE_PEER_ANY;
    if (source == MPI_PROC_NULL || source < 0)
        return MPISCOPE_PEER_NONE;
    return mpiscope_world_of(comm, source);
}
#define MPISCOPE_PRE_from(c, source, comm) ((c)->from = mpiscope_from((source), (comm)))
#define MPISCOPE_PRE_message(c, message) \
    do { if ((message) && *(message) == MPI_MESSAGE_NO_PROC) (c)->recv = 0; } while (0)

/* The received size comes from the status, so a status the application
 * ignores is replaced by ours (declared in the wrapper's scope). */
#define MPISCOPE_PRE_recv_status(c, type, status) \
    MPI_Status mpiscope_own_status;               \
    if ((status) == MPI_STATUS_IGNORE)            \
        (status) = &mpiscope_own_status
/* RATIONALE: MPI_Get_elements_x, not MPI_Get_count: the count of a message
 * of 2 GiB or more does not fit an int (MPI_Get_count says MPI_UNDEFINED). */
static inline void mpiscope_recv_status(mpiscope_call_t *c, int rc, MPI_Status *st)
{
    MPI_Count n = 0;
    if (rc == MPI_SUCCESS && PMPI_Get_elements_x(st, MPI_BYTE, &n) == MPI_SUCCESS && n > 0 &&
        n != MPI_UNDEFINED)
        c->recv += (uint64_t)n;
}
#define MPISCOPE_POST_recv_status(c, rc, type, status) mpiscope_recv_status((c), (rc), (status))

/* --- persistent requests ---------------------------------------------------------- */

/* One rule for every persistent request (MPI_Send_init, MPI_Recv_init, the
 * partitioned MPI_Psend_init / MPI_Precv_init, the persistent collectives
 * MPI_X_init): the roles before it computed what one start moves (bytes each
 * way, the peer of a send); the request keeps that, the _init call itself
 * moves nothing, and each MPI_Start / MPI_Startall counts it (comms.c). */
#define MPISCOPE_POST_persist(c, rc, request)                                        \
    do {                                                                             \
        if ((rc) == MPI_SUCCESS && (request))                                        \
            mpiscope_req_add(*(request), (c)->peer, (c)->sent, (c)->recv, (c)->cslot); \
        (c)->sent = 0, (c)->recv = 0, (c)->peer = -1;                                \
    } while (0)
/* After the call, and only if it succeeded: a start that failed sent nothing. */
#define MPISCOPE_POST_start(c, rc, request) \
    do { if ((rc) == MPI_SUCCESS && (request)) mpiscope_req_start((c), *(request), 1); } while (0)
#define MPISCOPE_POST_startall(c, rc, count, requests)                                         \
    do {                                                                                       \
        for (int mpiscope_i = 0; (rc) == MPI_SUCCESS && (requests) && mpiscope_i < (count);    \
             mpiscope_i++)                                                                     \
            mpiscope_req_start((c), (requests)[mpiscope_i], mpiscope_i == 0);                  \
    } while (0)
#define MPISCOPE_PRE_free_request(c, request) \
    do { if (request) { mpiscope_req_forget(*(request)); mpiscope_cancel_forget(*(request)); } } while (0)

/* --- cancelled receives (cancels.c) ---------------------------------------------------- */

/* Every posted receive, 0 bytes too: its entry replaces whatever an earlier
 * request with the same (reused) handle left. */
#define MPISCOPE_POST_recv_req(c, rc, request) \
    do { if ((rc) == MPI_SUCCESS && (request)) mpiscope_recv_posted((c), *(request)); } while (0)
#define MPISCOPE_POST_cancel(c, rc, request) \
    do { if ((rc) == MPI_SUCCESS && (request)) mpiscope_cancel_asked(*(request)); } while (0)

/* Completion calls: nothing but one load unless a cancelled receive is pending. */
#define MPISCOPE_DONE_DECL mpiscope_done_t mpiscope_dn; mpiscope_dn.n = 0
#define MPISCOPE_PRE_done(c, request, status) \
    MPISCOPE_DONE_DECL; \
    if (mpiscope_cancels_pending && (request)) mpiscope_done_pre(&mpiscope_dn, 1, (request), &(status), 1)
#define MPISCOPE_POST_done(c, rc, request, status) \
    do { if (mpiscope_dn.n) mpiscope_done_post(&mpiscope_dn, (rc), MPISCOPE_DONE_ONE, NULL, NULL, NULL, NULL, (status)); } while (0)
#define MPISCOPE_PRE_done_flag(c, flag, request, status) MPISCOPE_PRE_done((c), (request), (status))
#define MPISCOPE_POST_done_flag(c, rc, flag, request, status) \
    do { if (mpiscope_dn.n) mpiscope_done_post(&mpiscope_dn, (rc), MPISCOPE_DONE_ONE, (flag), NULL, NULL, NULL, (status)); } while (0)
#define MPISCOPE_PRE_done_v(c, flag, request, status) \
    MPISCOPE_DONE_DECL; \
    if (mpiscope_cancels_pending) mpiscope_done_pre(&mpiscope_dn, 1, &(request), &(status), 1)
#define MPISCOPE_POST_done_v(c, rc, flag, request, status) MPISCOPE_POST_done_flag((c), (rc), (flag), (request), (status))
#define MPISCOPE_PRE_done_all(c, count, requests, flag, statuses) \
    MPISCOPE_DONE_DECL; \
    if (mpiscope_cancels_pending) mpiscope_done_pre(&mpiscope_dn, (count), (requests), &(statuses), 0)
#define MPISCOPE_POST_done_all(c, rc, count, requests, flag, statuses) \
    do { if (mpiscope_dn.n) mpiscope_done_post(&mpiscope_dn, (rc), MPISCOPE_DONE_ALL, (flag), NULL, NULL, NULL, (statuses)); } while (0)
#define MPISCOPE_PRE_done_any(c, count, requests, index, flag, status) \
    MPISCOPE_DONE_DECL; \
    if (mpiscope_cancels_pending) mpiscope_done_pre(&mpiscope_dn, (count), (requests), &(status), 1)
#define MPISCOPE_POST_done_any(c, rc, count, requests, index, flag, status) \
    do { if (mpiscope_dn.n) mpiscope_done_post(&mpiscope_dn, (rc), MPISCOPE_DONE_ANY, (flag), (index), NULL, NULL, (status)); } while (0)
#define MPISCOPE_PRE_done_some(c, count, requests, outcount, indices, statuses) \
    MPISCOPE_DONE_DECL; \
    if (mpiscope_cancels_pending) mpiscope_done_pre(&mpiscope_dn, (count), (requests), &(statuses), 0)
#define MPISCOPE_POST_done_some(c, rc, count, requests, outcount, indices, statuses) \
    do { if (mpiscope_dn.n) mpiscope_done_post(&mpiscope_dn, (rc), MPISCOPE_DONE_SOME, NULL, NULL, (outcount), (indices), (statuses)); } while (0)

/* A call that failed moved no data: it is counted, but not its bytes or its
 * message to a peer (the peer may not even exist: MPI_ERR_RANK). */
#define MPISCOPE_FAILED(c) ((c)->sent = 0, (c)->recv = 0, (c)->peer = -1)

/* --- communicators, files, sync ------------------------------------------------- */

#define MPISCOPE_POST_free_type(c, rc, type) __atomic_add_fetch(&mpiscope_type_gen, 1, __ATOMIC_RELEASE)
#define MPISCOPE_PRE_free_comm(c, comm) \
    do { if (comm) { mpiscope_comm_forget(*(comm)); mpiscope_comm_unmap(*(comm)); } } while (0)

/* --- per-communicator tables (commtab.c) ------------------------------------------ */

#define MPISCOPE_PRE_comm_of(c, comm) ((c)->cslot = mpiscope_comm_slot(comm))
/* Only a call that succeeded made a communicator (an erroneous call may pass
 * MPI_COMM_NULL or a NULL output pointer: never touched then). */
#define MPISCOPE_COMM_MADE(rc, made) ((rc) == MPI_SUCCESS && (made) ? *(made) : MPI_COMM_NULL)
#define MPISCOPE_POST_comm_new(c, rc, parent, made, kind) \
    mpiscope_comm_created((parent), (rc), MPISCOPE_COMM_MADE(rc, made), (kind), 0, 0, NULL)
#define MPISCOPE_POST_comm_split(c, rc, parent, color, made) \
    mpiscope_comm_created((parent), (rc), MPISCOPE_COMM_MADE(rc, made), MPISCOPE_COMM_SPLIT, (long)(color), 0, NULL)
#define MPISCOPE_POST_comm_split_type(c, rc, parent, type, made) \
    mpiscope_comm_created((parent), (rc), MPISCOPE_COMM_MADE(rc, made), MPISCOPE_COMM_SPLIT_TYPE, (long)(type), 0, NULL)
#define MPISCOPE_POST_comm_create_group(c, rc, parent, tag, made) \
    mpiscope_comm_created((parent), (rc), MPISCOPE_COMM_MADE(rc, made), MPISCOPE_COMM_CREATE_GROUP, (long)(tag), 0, NULL)
#define MPISCOPE_POST_comm_cart(c, rc, parent, ndims, dims, made) \
    mpiscope_comm_created((parent), (rc), MPISCOPE_COMM_MADE(rc, made), MPISCOPE_COMM_CART, 0, (ndims), (dims))
#define MPISCOPE_POST_comm_name(c, rc, comm, name) mpiscope_comm_named((comm), (rc), (name))
#define MPISCOPE_POST_file_open(c, rc, comm, filename, fh) \
    do { if ((rc) == MPI_SUCCESS) mpiscope_io_file_opened((comm), (filename), *(fh)); } while (0)

/* MPISCOPE_SYNC=1: the time a collective waits for late ranks, measured by
 * a barrier of our own just before it, recorded as <collective>:sync. */
static inline void mpiscope_sync(mpiscope_call_t *c, MPI_Comm comm)
{
    if (!mpiscope_settings.SYNC || c->sync_id < 0 || comm == MPI_COMM_NULL)
        return;
    uint64_t t0 = mpiscope_now();
    PMPI_Barrier(comm);
    uint64_t t1 = mpiscope_now();
    int shared = MPISCOPE_SHARED(c->t);
    if (shared)
        mpiscope_shared_lock();
    mpiscope_stat_add(c->t, c->sync_id, t1 - t0, 0, 0);
    mpiscope_timeline_add(c->t, mpiscope_func_kind_ids[c->sync_id], t0, t1, 0);
    if (shared)
        mpiscope_shared_unlock();
}
#define MPISCOPE_PRE_sync(c, comm) mpiscope_sync((c), (comm))

#pragma GCC visibility pop

#endif
