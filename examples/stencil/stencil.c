/* stencil: explicit heat equation (Jacobi sweep) on a 2-D or 3-D grid split
 * over a Px x Py (x Pz) Cartesian grid of ranks. Reproduces seed 000 (WRF/CM1:
 * load imbalance, rank placement, rank-0 I/O) and seed 003 (the IBM SP
 * guide's five halo-exchange strategies).
 *
 *   stencil [--grid NXxNY[xNZ]] [--procs PXxPY[xPZ]] [--steps N]
 *           [--points 5|9|7|27] [--halo bsbr|sere|isbr|isir|iris]
 *           [--hot-rank R --hot-factor F] [--io none|rank0|mpiio]
 *           [--io-every K] [--io-file PATH] [--reorder] [--rank-order FILE]
 *
 * The last line rank 0 prints is
 *   RESULT stencil grid=<grid> points=<p> steps=<n> checksum=<16 hex> sum=<x>
 * and is the same for every decomposition, halo strategy, hot rank, I/O mode
 * and rank order: each point's update is the same arithmetic wherever it is
 * computed, and the checksum is a sum modulo 2^64 (order-independent).
 *
 * Regions (MPI_Pcontrol): "setup", "halo", "compute", "io", "check". */
#include "miniapp.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define APP "stencil"
#define ALPHA 0.1 /* diffusion number: stable for every stencil here */

enum halo { BSBR, SERE, ISBR, ISIR, IRIS };
static const char *const halo_names[] = {"bsbr", "sere", "isbr", "isir", "iris"};
enum io { IO_NONE, IO_RANK0, IO_MPIIO };
static const char *const io_names[] = {"none", "rank0", "mpiio"};

struct opts {
    int ndims, n[3], p[3], points, steps;
    enum halo halo;
    int hot_rank;
    double hot_factor;
    enum io io;
    int io_every;
    const char *io_file, *rank_order;
    int reorder;
};

/* The local block: dimension 0 is x, the fastest-varying index in memory. */
struct grid {
    MPI_Comm comm;
    int rank, size, ndims, world; /* rank in comm, its size, dimensions, MPI_COMM_WORLD rank */
    int coord[3], lo[3], hi[3];       /* coords; neighbour ranks (MPI_PROC_NULL at the edge) */
    int start[3], len[3], ext[3], g[3]; /* global start, interior length, with ghosts, ghost width */
    MPI_Datatype send[3][2], recv[3][2], interior;
};

static const char usage[] =
    "usage: stencil [--grid NXxNY[xNZ]] [--procs PXxPY[xPZ]] [--steps N] [--points 5|9|7|27]\n"
    "               [--halo bsbr|sere|isbr|isir|iris] [--hot-rank R --hot-factor F]\n"
    "               [--io none|rank0|mpiio] [--io-every K] [--io-file PATH]\n"
    "               [--reorder] [--rank-order FILE]\n"
    "  --grid       global interior points (default 256x256); 3 values make a 3-D run\n"
    "  --procs      ranks per dimension, product = number of ranks (default: MPI_Dims_create)\n"
    "  --steps      time steps (default 100)\n"
    "  --points     stencil: 5 or 9 in 2-D, 7 or 27 in 3-D (default 5 / 7)\n"
    "  --halo       halo exchange: bsbr Send/Recv ordered by parity, sere Sendrecv,\n"
    "               isbr Isend+Recv, isir Isend+Irecv+Waitall, iris Irecv first (default iris)\n"
    "  --hot-rank R --hot-factor F   MPI_COMM_WORLD rank R does F (>= 1) times the compute\n"
    "               work (default: none)\n"
    "  --io         write the field every --io-every steps: rank0 gathers it to rank 0 of the\n"
    "               grid communicator, which writes alone; mpiio writes collectively (default none)\n"
    "  --io-every   steps between writes (default 10)\n"
    "  --io-file    output file, must not exist (default stencil-field.dat)\n"
    "  --reorder    let MPI_Cart_create renumber the ranks (reorder = 1)\n"
    "  --rank-order FILE  MPICH_RANK_ORDER-style list: the k-th entry is the grid rank of world\n"
    "               rank k (the k-th launched process)\n";

static int pick(const char *opt, const char *text, const char *const *names, int n)
{
    char all[128] = "";
    for (int i = 0; i < n; i++) {
        if (strcmp(text, names[i]) == 0)
            return i;
        strncat(all, i ? "|" : "", sizeof all - strlen(all) - 1);
        strncat(all, names[i], sizeof all - strlen(all) - 1);
    }
    miniapp_fail(APP, "%s must be one of %s, not '%s'", opt, all, text);
}

static void parse(int argc, char **argv, int nranks, struct opts *o)
{
    int grid[3] = {256, 256, 1}, procs[3] = {0, 0, 0}, nproc_dims = 0, points = 0;
    o->ndims = 2;
    o->steps = 100;
    o->halo = IRIS;
    o->hot_rank = -1;
    o->hot_factor = 1.0;
    o->io = IO_NONE;
    o->io_every = 10;
    o->io_file = "stencil-field.dat";
    o->rank_order = NULL;
    o->reorder = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            miniapp_help(usage);
        } else if (!strcmp(a, "--grid")) {
            o->ndims = miniapp_dims(APP, a, miniapp_value(APP, argc, argv, &i), grid);
        } else if (!strcmp(a, "--procs")) {
            nproc_dims = miniapp_dims(APP, a, miniapp_value(APP, argc, argv, &i), procs);
        } else if (!strcmp(a, "--steps")) {
            o->steps = (int)miniapp_int(APP, a, miniapp_value(APP, argc, argv, &i), 0, 1L << 30);
        } else if (!strcmp(a, "--points")) {
            points = (int)miniapp_int(APP, a, miniapp_value(APP, argc, argv, &i), 5, 27);
        } else if (!strcmp(a, "--halo")) {
            o->halo = pick(a, miniapp_value(APP, argc, argv, &i), halo_names, 5);
        } else if (!strcmp(a, "--hot-rank")) {
            o->hot_rank = (int)miniapp_int(APP, a, miniapp_value(APP, argc, argv, &i), 0, nranks - 1);
        } else if (!strcmp(a, "--hot-factor")) {
            o->hot_factor = miniapp_double(APP, a, miniapp_value(APP, argc, argv, &i), 1.0);
        } else if (!strcmp(a, "--io")) {
            o->io = pick(a, miniapp_value(APP, argc, argv, &i), io_names, 3);
        } else if (!strcmp(a, "--io-every")) {
            o->io_every = (int)miniapp_int(APP, a, miniapp_value(APP, argc, argv, &i), 1, 1L << 30);
        } else if (!strcmp(a, "--io-file")) {
            o->io_file = miniapp_value(APP, argc, argv, &i);
        } else if (!strcmp(a, "--reorder")) {
            o->reorder = 1;
        } else if (!strcmp(a, "--rank-order")) {
            o->rank_order = miniapp_value(APP, argc, argv, &i);
        } else {
            miniapp_fail(APP, "unknown option '%s' (see --help)", a);
        }
    }
    if (points == 0)
        points = o->ndims == 2 ? 5 : 7;
    if ((o->ndims == 2 && points != 5 && points != 9) || (o->ndims == 3 && points != 7 && points != 27))
        miniapp_fail(APP, "--points %d is not a %d-D stencil (2-D: 5 or 9, 3-D: 7 or 27)", points, o->ndims);
    o->points = points;
    if (nproc_dims && nproc_dims != o->ndims)
        miniapp_fail(APP, "--procs has %d values but --grid has %d", nproc_dims, o->ndims);
    int dims[3] = {0, 0, 0};
    if (nproc_dims) {
        long prod = 1;
        for (int d = 0; d < o->ndims; d++)
            prod *= procs[d];
        if (prod != nranks)
            miniapp_fail(APP, "--procs product is %ld but the job has %d ranks", prod, nranks);
        memcpy(dims, procs, sizeof dims);
    } else {
        MPI_Dims_create(nranks, o->ndims, dims);
    }
    for (int d = 0; d < 3; d++) {
        o->n[d] = d < o->ndims ? grid[d] : 1;
        o->p[d] = d < o->ndims ? dims[d] : 1;
        if (o->n[d] < o->p[d])
            miniapp_fail(APP, "dimension %d has %d points for %d ranks: every rank needs at least one",
                         d, o->n[d], o->p[d]);
    }
    if (o->hot_factor > 1.0 && o->hot_rank < 0)
        miniapp_fail(APP, "--hot-factor needs --hot-rank");
    if (o->reorder && o->rank_order)
        miniapp_fail(APP, "--reorder and --rank-order exclude each other");
}

/* A box inside the local array (ghosts included), as an MPI subarray type. */
static MPI_Datatype box(const struct grid *g, const int lo[3], const int len[3])
{
    /* MPI sizes are in C order: z, y, x. */
    int sizes[3] = {g->ext[2], g->ext[1], g->ext[0]};
    int sub[3] = {len[2], len[1], len[0]};
    int start[3] = {lo[2], lo[1], lo[0]};
    MPI_Datatype t;
    MPI_Type_create_subarray(3, sizes, sub, start, MPI_ORDER_C, MPI_DOUBLE, &t);
    MPI_Type_commit(&t);
    return t;
}

/* Faces are exchanged one dimension after the other and the later ones
 * include the ghosts the earlier ones filled, so corner and edge ghosts
 * (needed by the 9- and 27-point stencils) arrive without diagonal messages.
 * Every strategy thus sends exactly one message per existing neighbour per
 * dimension per step. */
static void make_faces(struct grid *g)
{
    for (int d = 0; d < g->ndims; d++) {
        int lo[3], len[3];
        for (int e = 0; e < 3; e++) {
            lo[e] = e < d ? 0 : g->g[e];
            len[e] = e < d ? g->ext[e] : g->len[e];
        }
        len[d] = 1;
        lo[d] = g->g[d];               /* first interior layer -> low neighbour */
        g->send[d][0] = box(g, lo, len);
        lo[d] = g->len[d];             /* last interior layer -> high neighbour */
        g->send[d][1] = box(g, lo, len);
        lo[d] = 0;                     /* low ghost layer */
        g->recv[d][0] = box(g, lo, len);
        lo[d] = g->len[d] + 1;         /* high ghost layer */
        g->recv[d][1] = box(g, lo, len);
    }
    g->interior = box(g, g->g, g->len);
}

static void setup_grid(const struct opts *o, struct grid *g)
{
    int world, nranks;
    MPI_Comm_rank(MPI_COMM_WORLD, &world);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    MPI_Comm base = MPI_COMM_WORLD;
    if (o->rank_order) {
        int *order = malloc(sizeof(int) * (size_t)nranks);
        miniapp_rank_order(APP, o->rank_order, nranks, order);
        MPI_Comm_split(MPI_COMM_WORLD, 0, order[world], &base);
        free(order);
    }
    /* MPI numbers Cartesian ranks with the LAST dimension fastest; give it
     * the dimensions reversed so that x is fastest, as in memory. */
    int dims[3], periods[3] = {0, 0, 0}, c[3];
    for (int d = 0; d < o->ndims; d++)
        dims[d] = o->p[o->ndims - 1 - d];
    MPI_Cart_create(base, o->ndims, dims, periods, o->reorder, &g->comm);
    if (base != MPI_COMM_WORLD)
        MPI_Comm_free(&base);
    MPI_Comm_rank(g->comm, &g->rank);
    g->world = world;
    MPI_Comm_size(g->comm, &g->size);
    MPI_Cart_coords(g->comm, g->rank, o->ndims, c);
    g->ndims = o->ndims;
    for (int d = 0; d < 3; d++) {
        g->coord[d] = d < o->ndims ? c[o->ndims - 1 - d] : 0;
        g->lo[d] = g->hi[d] = MPI_PROC_NULL;
        if (d < o->ndims)
            MPI_Cart_shift(g->comm, o->ndims - 1 - d, 1, &g->lo[d], &g->hi[d]);
        g->len[d] = miniapp_block(o->n[d], o->p[d], g->coord[d], &g->start[d]);
        g->g[d] = d < o->ndims ? 1 : 0;
        g->ext[d] = g->len[d] + 2 * g->g[d];
    }
    make_faces(g);
}

static void free_grid(struct grid *g)
{
    for (int d = 0; d < g->ndims; d++)
        for (int side = 0; side < 2; side++) {
            MPI_Type_free(&g->send[d][side]);
            MPI_Type_free(&g->recv[d][side]);
        }
    MPI_Type_free(&g->interior);
    MPI_Comm_free(&g->comm);
}

static size_t idx(const struct grid *g, int x, int y, int z)
{
    return ((size_t)z * g->ext[1] + y) * g->ext[0] + x;
}

/* Initial field: a deterministic pseudo-random value in [0, 1) per global
 * point; outside the domain the fixed boundary: 1 on the low-x face, else 0. */
static double initial(const struct opts *o, long gx, long gy, long gz)
{
    if (gx < 0)
        return 1.0;
    if (gx >= o->n[0] || gy < 0 || gy >= o->n[1] || gz < 0 || gz >= o->n[2])
        return 0.0;
    uint64_t k = ((uint64_t)gz * o->n[1] + gy) * o->n[0] + gx;
    return (double)(miniapp_mix(0.0, k) >> 11) * 0x1.0p-53;
}

static void init_field(const struct opts *o, const struct grid *g, double *u)
{
    for (int z = 0; z < g->ext[2]; z++)
        for (int y = 0; y < g->ext[1]; y++)
            for (int x = 0; x < g->ext[0]; x++)
                u[idx(g, x, y, z)] = initial(o, (long)g->start[0] + x - g->g[0],
                                             (long)g->start[1] + y - g->g[1],
                                             (long)g->start[2] + z - g->g[2]);
}

/* One sweep over the interior planes/rows [first, last) of the outermost
 * dimension. Neighbours are always added in the same order, so a point's new
 * value does not depend on where it is computed. */
static void sweep(const struct opts *o, const struct grid *g, const double *u, double *v,
                  int first, int last)
{
    const long sx = 1, sy = g->ext[0], sz = (long)g->ext[0] * g->ext[1];
    const int outer = g->ndims == 2 ? 1 : 2;
    for (int k = first; k < last; k++) {
        int zlo = outer == 2 ? k + 1 : 0, zhi = outer == 2 ? k + 2 : 1;
        int ylo = outer == 1 ? k + 1 : 1, yhi = outer == 1 ? k + 2 : g->len[1] + 1;
        for (int z = zlo; z < zhi; z++)
            for (int y = ylo; y < yhi; y++) {
                const double *c = u + idx(g, 1, y, z);
                double *out = v + idx(g, 1, y, z);
                for (int x = 0; x < g->len[0]; x++) {
                    const double *p = c + x;
                    double lap;
                    switch (o->points) {
                    case 5:
                        lap = p[-sx] + p[sx] + p[-sy] + p[sy] - 4.0 * p[0];
                        break;
                    case 9:
                        lap = (4.0 * (p[-sx] + p[sx] + p[-sy] + p[sy]) + p[-sx - sy] + p[sx - sy] +
                               p[-sx + sy] + p[sx + sy] - 20.0 * p[0]) / 6.0;
                        break;
                    case 7:
                        lap = p[-sx] + p[sx] + p[-sy] + p[sy] + p[-sz] + p[sz] - 6.0 * p[0];
                        break;
                    default: { /* 27 */
                        double s = 0.0;
                        for (int dz = -1; dz <= 1; dz++)
                            for (int dy = -1; dy <= 1; dy++)
                                for (int dx = -1; dx <= 1; dx++)
                                    s += p[dz * sz + dy * sy + dx * sx];
                        lap = (s - 27.0 * p[0]) / 26.0;
                    }
                    }
                    out[x] = p[0] + ALPHA * lap;
                }
            }
    }
}

/* The hot rank (CM1's storm cells) repeats its sweep: same result, F times
 * the work. The empty asm keeps the compiler from merging the repeats. */
static void compute(const struct opts *o, const struct grid *g, const double *u, double *v)
{
    int planes = g->ndims == 2 ? g->len[1] : g->len[2];
    double f = o->hot_rank == g->world ? o->hot_factor : 1.0;
    int full = (int)f;
    for (int r = 0; r < full; r++) {
        sweep(o, g, u, v, 0, planes);
        __asm__ volatile("" ::: "memory");
    }
    int part = (int)lround((f - full) * planes);
    if (part > 0)
        sweep(o, g, u, v, 0, part);
}

static void exchange(const struct opts *o, const struct grid *g, double *u)
{
    MPI_Request r[4];
    for (int d = 0; d < g->ndims; d++) {
        const int up = 2 * d, down = 2 * d + 1; /* tags: data moving to +d, to -d */
        MPI_Datatype *s = (MPI_Datatype *)g->send[d], *v = (MPI_Datatype *)g->recv[d];
        switch (o->halo) {
        case BSBR: /* ordered by coordinate parity so blocking sends cannot deadlock */
            if (g->coord[d] % 2 == 0) {
                MPI_Send(u, 1, s[1], g->hi[d], up, g->comm);
                MPI_Recv(u, 1, v[0], g->lo[d], up, g->comm, MPI_STATUS_IGNORE);
                MPI_Send(u, 1, s[0], g->lo[d], down, g->comm);
                MPI_Recv(u, 1, v[1], g->hi[d], down, g->comm, MPI_STATUS_IGNORE);
            } else {
                MPI_Recv(u, 1, v[0], g->lo[d], up, g->comm, MPI_STATUS_IGNORE);
                MPI_Send(u, 1, s[1], g->hi[d], up, g->comm);
                MPI_Recv(u, 1, v[1], g->hi[d], down, g->comm, MPI_STATUS_IGNORE);
                MPI_Send(u, 1, s[0], g->lo[d], down, g->comm);
            }
            break;
        case SERE:
            MPI_Sendrecv(u, 1, s[1], g->hi[d], up, u, 1, v[0], g->lo[d], up, g->comm,
                         MPI_STATUS_IGNORE);
            MPI_Sendrecv(u, 1, s[0], g->lo[d], down, u, 1, v[1], g->hi[d], down, g->comm,
                         MPI_STATUS_IGNORE);
            break;
        case ISBR:
            MPI_Isend(u, 1, s[1], g->hi[d], up, g->comm, &r[0]);
            MPI_Isend(u, 1, s[0], g->lo[d], down, g->comm, &r[1]);
            MPI_Recv(u, 1, v[0], g->lo[d], up, g->comm, MPI_STATUS_IGNORE);
            MPI_Recv(u, 1, v[1], g->hi[d], down, g->comm, MPI_STATUS_IGNORE);
            MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
            break;
        case ISIR:
            MPI_Isend(u, 1, s[1], g->hi[d], up, g->comm, &r[0]);
            MPI_Isend(u, 1, s[0], g->lo[d], down, g->comm, &r[1]);
            MPI_Irecv(u, 1, v[0], g->lo[d], up, g->comm, &r[2]);
            MPI_Irecv(u, 1, v[1], g->hi[d], down, g->comm, &r[3]);
            MPI_Waitall(4, r, MPI_STATUSES_IGNORE);
            break;
        case IRIS:
            MPI_Irecv(u, 1, v[0], g->lo[d], up, g->comm, &r[0]);
            MPI_Irecv(u, 1, v[1], g->hi[d], down, g->comm, &r[1]);
            MPI_Isend(u, 1, s[1], g->hi[d], up, g->comm, &r[2]);
            MPI_Isend(u, 1, s[0], g->lo[d], down, g->comm, &r[3]);
            MPI_Waitall(4, r, MPI_STATUSES_IGNORE);
            break;
        }
    }
}

/* ---- I/O: the field (interior only, x fastest) once per snapshot, snapshot
 * s at byte offset s * nx*ny*nz*8. Both modes write identical files. */
struct writer {
    MPI_File fh;
    MPI_Datatype filetype;   /* mpiio: this rank's block in the global array */
    double *global, *staging; /* rank0: the whole field on the root */
    int *counts, *displs;
    MPI_Offset snapshot_bytes;
    int snapshots;
};

static void writer_open(const struct opts *o, const struct grid *g, struct writer *w)
{
    w->snapshots = 0;
    w->snapshot_bytes = (MPI_Offset)o->n[0] * o->n[1] * o->n[2] * (MPI_Offset)sizeof(double);
    int exists = 0;
    if (g->rank == 0) {
        struct stat st;
        exists = stat(o->io_file, &st) == 0;
    }
    MPI_Bcast(&exists, 1, MPI_INT, 0, g->comm);
    if (exists)
        miniapp_fail(APP, "--io-file %s exists; remove it or choose another name", o->io_file);
    int err = MPI_SUCCESS;
    if (o->io == IO_MPIIO) {
        int sizes[3] = {o->n[2], o->n[1], o->n[0]};
        int sub[3] = {g->len[2], g->len[1], g->len[0]};
        int start[3] = {g->start[2], g->start[1], g->start[0]};
        MPI_Type_create_subarray(3, sizes, sub, start, MPI_ORDER_C, MPI_DOUBLE, &w->filetype);
        MPI_Type_commit(&w->filetype);
        err = MPI_File_open(g->comm, o->io_file, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL,
                            &w->fh);
    } else {
        w->counts = malloc(sizeof(int) * (size_t)g->size);
        w->displs = malloc(sizeof(int) * (size_t)g->size);
        int mine = g->len[0] * g->len[1] * g->len[2];
        MPI_Gather(&mine, 1, MPI_INT, w->counts, 1, MPI_INT, 0, g->comm);
        if (g->rank == 0) {
            size_t total = (size_t)w->snapshot_bytes / sizeof(double);
            w->global = malloc(total * sizeof(double));
            w->staging = malloc(total * sizeof(double));
            for (int r = 0, off = 0; r < g->size; r++) {
                w->displs[r] = off;
                off += w->counts[r];
            }
            err = MPI_File_open(MPI_COMM_SELF, o->io_file, MPI_MODE_CREATE | MPI_MODE_WRONLY,
                                MPI_INFO_NULL, &w->fh);
        }
        MPI_Bcast(&err, 1, MPI_INT, 0, g->comm);
    }
    if (err != MPI_SUCCESS)
        miniapp_fail(APP, "cannot create --io-file %s", o->io_file);
}

/* rank0: gather every block to the root, which alone writes (seed 000's
 * WRF default and the TOMCAT anti-pattern). */
static void write_rank0(const struct opts *o, const struct grid *g, const double *u,
                        struct writer *w)
{
    MPI_Gatherv(u, 1, g->interior, w->staging, w->counts, w->displs, MPI_DOUBLE, 0, g->comm);
    if (g->rank != 0)
        return;
    for (int r = 0; r < g->size; r++) {
        int c[3] = {0, 0, 0}, cc[3], start[3], len[3];
        MPI_Cart_coords(g->comm, r, g->ndims, cc);
        for (int d = 0; d < g->ndims; d++)
            c[d] = cc[g->ndims - 1 - d];
        for (int d = 0; d < 3; d++)
            len[d] = miniapp_block(o->n[d], o->p[d], c[d], &start[d]);
        const double *src = w->staging + w->displs[r];
        for (int z = 0; z < len[2]; z++)
            for (int y = 0; y < len[1]; y++) {
                size_t dst = ((size_t)(start[2] + z) * o->n[1] + start[1] + y) * o->n[0] + start[0];
                memcpy(w->global + dst, src, sizeof(double) * (size_t)len[0]);
                src += len[0];
            }
    }
    MPI_File_write_at(w->fh, w->snapshots * w->snapshot_bytes, w->global,
                      (int)(w->snapshot_bytes / sizeof(double)), MPI_DOUBLE, MPI_STATUS_IGNORE);
}

static void write_field(const struct opts *o, const struct grid *g, const double *u,
                        struct writer *w)
{
    if (o->io == IO_MPIIO) {
        MPI_File_set_view(w->fh, w->snapshots * w->snapshot_bytes, MPI_DOUBLE, w->filetype,
                          "native", MPI_INFO_NULL);
        MPI_File_write_all(w->fh, u, 1, g->interior, MPI_STATUS_IGNORE);
    } else {
        write_rank0(o, g, u, w);
    }
    w->snapshots++;
}

static void writer_close(const struct opts *o, const struct grid *g, struct writer *w)
{
    if (o->io == IO_MPIIO) {
        MPI_File_close(&w->fh);
        MPI_Type_free(&w->filetype);
    } else {
        if (g->rank == 0) {
            MPI_File_close(&w->fh);
            free(w->global);
            free(w->staging);
        }
        free(w->counts);
        free(w->displs);
    }
}

static void report(const struct opts *o, const struct grid *g, const double *u, double seconds)
{
    uint64_t local[2] = {0, 0}, total[2];
    for (int z = 0; z < g->len[2]; z++)
        for (int y = 0; y < g->len[1]; y++)
            for (int x = 0; x < g->len[0]; x++) {
                double v = u[idx(g, x + g->g[0], y + g->g[1], z + g->g[2])];
                uint64_t k = ((uint64_t)(g->start[2] + z) * o->n[1] + g->start[1] + y) * o->n[0] +
                             g->start[0] + x;
                local[0] += miniapp_mix(v, k);
                local[1] += (uint64_t)miniapp_fixed(v);
            }
    MPI_Reduce(local, total, 2, MPI_UINT64_T, MPI_SUM, 0, g->comm);
    double tmax;
    MPI_Reduce(&seconds, &tmax, 1, MPI_DOUBLE, MPI_MAX, 0, g->comm);
    if (g->rank != 0)
        return;
    printf("stencil: %d ranks as %dx%dx%d, halo %s, io %s, %.3f s\n", g->size, o->p[0], o->p[1],
           o->p[2], halo_names[o->halo], io_names[o->io], tmax);
    char grid[64];
    if (o->ndims == 2)
        snprintf(grid, sizeof grid, "%dx%d", o->n[0], o->n[1]);
    else
        snprintf(grid, sizeof grid, "%dx%dx%d", o->n[0], o->n[1], o->n[2]);
    printf("RESULT stencil grid=%s points=%d steps=%d checksum=%016" PRIx64 " sum=%.9f\n", grid,
           o->points, o->steps, total[0], ldexp((double)(int64_t)total[1], -32));
    fflush(stdout);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int nranks;
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    struct opts o;
    parse(argc, argv, nranks, &o);

    MINIAPP_ENTER("setup");
    struct grid g;
    setup_grid(&o, &g);
    size_t cells = (size_t)g.ext[0] * g.ext[1] * g.ext[2];
    double *u = malloc(cells * sizeof(double)), *v = malloc(cells * sizeof(double));
    if (!u || !v)
        miniapp_fail(APP, "out of memory for a %zu-point block", cells);
    init_field(&o, &g, u);
    memcpy(v, u, cells * sizeof(double));
    struct writer w;
    if (o.io != IO_NONE)
        writer_open(&o, &g, &w);
    MINIAPP_EXIT("setup");

    MPI_Barrier(g.comm);
    double t0 = MPI_Wtime();
    for (int step = 1; step <= o.steps; step++) {
        MINIAPP_ENTER("halo");
        exchange(&o, &g, u);
        MINIAPP_EXIT("halo");
        MINIAPP_ENTER("compute");
        compute(&o, &g, u, v);
        MINIAPP_EXIT("compute");
        double *t = u;
        u = v;
        v = t;
        if (o.io != IO_NONE && step % o.io_every == 0) {
            MINIAPP_ENTER("io");
            write_field(&o, &g, u, &w);
            MINIAPP_EXIT("io");
        }
    }
    double seconds = MPI_Wtime() - t0;

    MINIAPP_ENTER("check");
    if (o.io != IO_NONE)
        writer_close(&o, &g, &w);
    report(&o, &g, u, seconds);
    MINIAPP_EXIT("check");
    free_grid(&g);
    free(u);
    free(v);
    MPI_Finalize();
    return 0;
}
