/*
 * fortran_support.h - what the generated Fortran-symbol wrappers
 * (gen_fortran.py -> fortran_wrappers.c) share: the Fortran sentinels of each
 * MPI, and small helpers for buffers, strings and temporary arrays.
 *
 * RATIONALE: the Fortran sentinels (MPI_BOTTOM, MPI_IN_PLACE,
 * MPI_STATUS(ES)_IGNORE) are the addresses of variables the MPI library
 * exports for its Fortran modules and mpif.h common blocks. We reference the
 * same symbols, weakly, so the dynamic linker hands us the very address the
 * program passes (the program's own copy of a common block wins for every
 * library alike), and a C-only program, which loads no Fortran library, still
 * starts: the weak references are then NULL and never match.
 */
#ifndef MPISCOPE_FORTRAN_SUPPORT_H
#define MPISCOPE_FORTRAN_SUPPORT_H

#include <mpi.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* Fortran INTEGER and LOGICAL are C int here: out-arguments of type int are
 * passed through, never copied. */
_Static_assert(sizeof(MPI_Fint) == sizeof(int), "mpiscope Fortran wrappers assume MPI_Fint == int");

/* gfortran (>= 8) passes the hidden length of a CHARACTER argument as size_t. */
typedef size_t mpiscope_flen_t;

#define MPISCOPE_F_MATCH(p, sym) (&(sym) != NULL && (const void *)(p) == (const void *)&(sym))

#if defined(OPEN_MPI)
/* Open MPI 4.x: the same variables serve mpif.h, use mpi and use mpi_f08
 * (ompi/mpi/fortran/base/constants.h, gfortran's one-underscore names). */
extern MPI_Fint mpi_fortran_bottom_ __attribute__((weak));
extern MPI_Fint mpi_fortran_in_place_ __attribute__((weak));
extern MPI_Fint mpi_fortran_status_ignore_ __attribute__((weak));
extern MPI_Fint mpi_fortran_statuses_ignore_ __attribute__((weak));
extern MPI_Fint mpi_fortran_unweighted_ __attribute__((weak));
extern MPI_Fint mpi_fortran_weights_empty_ __attribute__((weak));
#define MPISCOPE_F_IS_BOTTOM(p) MPISCOPE_F_MATCH(p, mpi_fortran_bottom_)
#define MPISCOPE_F_IS_IN_PLACE(p) MPISCOPE_F_MATCH(p, mpi_fortran_in_place_)
#define MPISCOPE_F_IS_STATUS_IGNORE(p) MPISCOPE_F_MATCH(p, mpi_fortran_status_ignore_)
#define MPISCOPE_F_IS_STATUSES_IGNORE(p) MPISCOPE_F_MATCH(p, mpi_fortran_statuses_ignore_)
#define MPISCOPE_F_IS_UNWEIGHTED(p) MPISCOPE_F_MATCH(p, mpi_fortran_unweighted_)
#define MPISCOPE_F_IS_WEIGHTS_EMPTY(p) MPISCOPE_F_MATCH(p, mpi_fortran_weights_empty_)
#define MPISCOPE_F_INDEX_BASE 1
#elif defined(MPICH_VERSION)
/* MPICH: mpif.h and use mpi reach the C MPI_* functions (so the C wrappers
 * count them); only mpi_f08's routines without a choice buffer call PMPI_*
 * directly, and those are the only ones wrapped here. Their sentinels are
 * the f08 objects mpi.h declares (libmpich always defines them, so no weak
 * reference is needed). */
/* MPICH's mpi.h declares MPI_STATUSES_IGNORE as a 0-length array, which
 * gcc's -Wstringop-overflow mistakes for a buffer overflow in every call. */
#pragma GCC diagnostic ignored "-Wstringop-overflow"
#define MPISCOPE_F_IS(p, obj) ((const void *)(p) == (const void *)&(obj))
#define MPISCOPE_F_IS_BOTTOM(p) MPISCOPE_F_IS(p, MPIR_F08_MPI_BOTTOM)
#define MPISCOPE_F_IS_IN_PLACE(p) MPISCOPE_F_IS(p, MPIR_F08_MPI_IN_PLACE)
#define MPISCOPE_F_IS_STATUS_IGNORE(p) MPISCOPE_F_IS(p, MPIR_F08_MPI_STATUS_IGNORE_OBJ)
#define MPISCOPE_F_IS_STATUSES_IGNORE(p) MPISCOPE_F_IS(p, MPIR_F08_MPI_STATUSES_IGNORE_OBJ)
/* mpi_f08's MPI_UNWEIGHTED / MPI_WEIGHTS_EMPTY live in libmpichfort only. */
extern MPI_Fint __mpi_f08_link_constants_MOD_mpi_unweighted __attribute__((weak));
extern MPI_Fint __mpi_f08_link_constants_MOD_mpi_weights_empty __attribute__((weak));
#define MPISCOPE_F_IS_UNWEIGHTED(p) MPISCOPE_F_MATCH(p, __mpi_f08_link_constants_MOD_mpi_unweighted)
#define MPISCOPE_F_IS_WEIGHTS_EMPTY(p) \
    MPISCOPE_F_MATCH(p, __mpi_f08_link_constants_MOD_mpi_weights_empty)
/* MPICH before 4.1 returns 0-based indices from mpi_f08's Waitany, Testany,
 * Waitsome and Testsome (pmodels/mpich#6270, fixed by pmodels/mpich#5763).
 * We return what the library returns, so profiling never changes a program. */
#if MPICH_NUMVERSION < 40100000
#define MPISCOPE_F_INDEX_BASE 0
#else
#define MPISCOPE_F_INDEX_BASE 1
#endif
#else
#error "mpiscope Fortran wrappers: unknown MPI (neither Open MPI nor MPICH)"
#endif

/* A choice buffer as C sees it. */
static inline void *mpiscope_f_buf(void *p)
{
    if (MPISCOPE_F_IS_BOTTOM(p))
        return MPI_BOTTOM;
    if (MPISCOPE_F_IS_IN_PLACE(p))
        return MPI_IN_PLACE;
    return p;
}

/* A weights array of the distributed-graph constructors as C sees it. */
static inline int *mpiscope_f_weights(MPI_Fint *p)
{
    if (MPISCOPE_F_IS_UNWEIGHTED(p))
        return MPI_UNWEIGHTED;
    if (MPISCOPE_F_IS_WEIGHTS_EMPTY(p))
        return MPI_WEIGHTS_EMPTY;
    return p;
}

/* Temporary arrays for converted handles and statuses: on the stack up to
 * MPISCOPE_F_STACK entries (the common case, no allocation), else malloc. */
#define MPISCOPE_F_STACK 32
#define MPISCOPE_F_TMP(type, var, n)                                         \
    type var##_stack[MPISCOPE_F_STACK];                                      \
    type *var = (n) <= MPISCOPE_F_STACK ? var##_stack                        \
                                        : (type *)malloc(sizeof(type) * (size_t)(n))
#define MPISCOPE_F_TMP_FREE(var)                                             \
    do {                                                                     \
        if (var != var##_stack)                                              \
            free(var);                                                       \
    } while (0)

/* A Fortran CHARACTER argument as a NUL-terminated C string without the
 * trailing blanks Fortran pads with; buf holds cap bytes. Longer strings are
 * cut (MPI's own limits, MPI_MAX_*, are far below cap). */
static inline char *mpiscope_f_string(const char *s, mpiscope_flen_t len, char *buf, size_t cap)
{
    size_t n = s ? len : 0;
    while (n > 0 && s[n - 1] == ' ')
        n--;
    if (n >= cap)
        n = cap - 1;
    if (n)
        memcpy(buf, s, n);
    buf[n] = '\0';
    return buf;
}

#define MPISCOPE_F_STRING_CAP 4096

/* Length of the sendtypes / recvtypes arrays of an (I)alltoallw or an
 * (I)neighbor_alltoallw: the (remote) group size, or the topology's
 * out- / in-degree. */
static inline int mpiscope_f_types_len(MPI_Comm comm, int neighbor, int send)
{
    int n = 0, flag = 0, topo = MPI_UNDEFINED;
    if (!neighbor) {
        PMPI_Comm_test_inter(comm, &flag);
        if (flag)
            PMPI_Comm_remote_size(comm, &n);
        else
            PMPI_Comm_size(comm, &n);
        return n;
    }
    PMPI_Topo_test(comm, &topo);
    if (topo == MPI_CART) {
        PMPI_Cartdim_get(comm, &n);
        return 2 * n;
    }
    if (topo == MPI_GRAPH) {
        int rank;
        PMPI_Comm_rank(comm, &rank);
        PMPI_Graph_neighbors_count(comm, rank, &n);
        return n;
    }
    if (topo == MPI_DIST_GRAPH) {
        int indeg, outdeg;
        PMPI_Dist_graph_neighbors_count(comm, &indeg, &outdeg, &flag);
        return send ? outdeg : indeg;
    }
    return 0;
}

#endif
