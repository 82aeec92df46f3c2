/* zonal: zonal means of a longitude x latitude x level field split over a
 * PI x PK grid of ranks (longitude x latitude patches, all levels in a patch,
 * as TOMCAT-GLOMAP). Reproduces seed 002 (SORZM).
 *
 *   zonal [--grid NLONxNLATxNLEV] [--procs PIxPK] [--steps N] [--work W]
 *         [--variant gather|distributed]
 *
 * gather: every rank sends its whole patch to rank 0 (MPI_Gatherv), which
 *   computes every zonal mean alone: rank 0's received bytes and time grow
 *   with the number of ranks (the original code).
 * distributed: each rank sums its own longitudes, the sums are reduced along
 *   the row of ranks that share a latitude band, and the row leaders' means go
 *   to rank 0 with one MPI_Gatherv whose datatypes place each band straight
 *   into the (level, latitude) array (the fix).
 *
 * Field values are integers below 2^20, so every sum is exact and both
 * variants, at any decomposition, print the same last line:
 *   RESULT zonal grid=<grid> steps=<n> checksum=<16 hex> mean=<x>
 *
 * Regions (MPI_Pcontrol): "setup", "physics", "zonal", "check". */
#include "miniapp.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define APP "zonal"
#define VALUE_MASK ((1u << 20) - 1)

enum variant { GATHER, DISTRIBUTED };

struct opts {
    int n[3];     /* longitudes, latitudes, levels */
    int p[2];     /* ranks along longitude, along latitude */
    int steps, work;
    enum variant variant;
};

struct patch {
    int rank, size;
    int c[2], start[2], len[2]; /* patch coordinates, first lon/lat, lon/lat lengths */
    int nlev;
};

static const char usage[] =
    "usage: zonal [--grid NLONxNLATxNLEV] [--procs PIxPK] [--steps N] [--work W]\n"
    "             [--variant gather|distributed]\n"
    "  --grid     longitudes x latitudes x levels (default 320x160x20)\n"
    "  --procs    ranks along longitude x along latitude, product = number of ranks\n"
    "             (default: MPI_Dims_create, more ranks along latitude)\n"
    "  --steps    time steps, each followed by a zonal mean (default 10)\n"
    "  --work     physics iterations per point per step (default 4)\n"
    "  --variant  gather: rank 0 receives every patch and computes all means;\n"
    "             distributed: local row sums + MPI_Gatherv of the sums (default gather)\n";

static void parse(int argc, char **argv, int nranks, struct opts *o)
{
    int grid[3] = {320, 160, 20}, procs[3] = {0, 0, 0}, nprocs = 0;
    o->steps = 10;
    o->work = 4;
    o->variant = GATHER;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            miniapp_help(usage);
        } else if (!strcmp(a, "--grid")) {
            if (miniapp_dims(APP, a, miniapp_value(APP, argc, argv, &i), grid) != 3)
                miniapp_fail(APP, "--grid needs 3 values: longitudes x latitudes x levels");
        } else if (!strcmp(a, "--procs")) {
            nprocs = miniapp_dims(APP, a, miniapp_value(APP, argc, argv, &i), procs);
            if (nprocs != 2)
                miniapp_fail(APP, "--procs needs 2 values: ranks along longitude x latitude");
        } else if (!strcmp(a, "--steps")) {
            o->steps = (int)miniapp_int(APP, a, miniapp_value(APP, argc, argv, &i), 0, 1L << 30);
        } else if (!strcmp(a, "--work")) {
            o->work = (int)miniapp_int(APP, a, miniapp_value(APP, argc, argv, &i), 0, 1L << 20);
        } else if (!strcmp(a, "--variant")) {
            const char *v = miniapp_value(APP, argc, argv, &i);
            if (!strcmp(v, "gather"))
                o->variant = GATHER;
            else if (!strcmp(v, "distributed"))
                o->variant = DISTRIBUTED;
            else
                miniapp_fail(APP, "--variant must be gather or distributed, not '%s'", v);
        } else {
            miniapp_fail(APP, "unknown option '%s' (see --help)", a);
        }
    }
    memcpy(o->n, grid, sizeof o->n);
    if ((long)o->n[0] * o->n[1] * o->n[2] > (1L << 31) - 1 || o->n[0] > (1 << 20))
        miniapp_fail(APP, "--grid %dx%dx%d is too large (at most 2^31 points, 2^20 longitudes)",
                     o->n[0], o->n[1], o->n[2]);
    if (nprocs) {
        if ((long)procs[0] * procs[1] != nranks)
            miniapp_fail(APP, "--procs %dx%d is %ld ranks but the job has %d", procs[0], procs[1],
                         (long)procs[0] * procs[1], nranks);
        o->p[0] = procs[0];
        o->p[1] = procs[1];
    } else {
        int dims[2] = {0, 0};
        MPI_Dims_create(nranks, 2, dims); /* dims[0] >= dims[1] */
        o->p[0] = dims[1];
        o->p[1] = dims[0];
    }
    for (int d = 0; d < 2; d++)
        if (o->n[d] < o->p[d])
            miniapp_fail(APP, "%d %s for %d ranks: every rank needs at least one", o->n[d],
                         d ? "latitudes" : "longitudes", o->p[d]);
}

/* Rank r's patch: longitude fastest in the rank numbering. */
static void patch_of(const struct opts *o, int r, struct patch *pt)
{
    pt->rank = r;
    pt->c[0] = r % o->p[0];
    pt->c[1] = r / o->p[0];
    for (int d = 0; d < 2; d++)
        pt->len[d] = miniapp_block(o->n[d], o->p[d], pt->c[d], &pt->start[d]);
    pt->nlev = o->n[2];
}

/* The patch is stored [lev][lat][lon], longitude fastest. */
static size_t at(const struct patch *pt, int k, int j, int i)
{
    return ((size_t)k * pt->len[1] + j) * pt->len[0] + i;
}

static void init_field(const struct opts *o, const struct patch *pt, double *f)
{
    for (int k = 0; k < pt->nlev; k++)
        for (int j = 0; j < pt->len[1]; j++)
            for (int i = 0; i < pt->len[0]; i++) {
                uint64_t g = ((uint64_t)k * o->n[1] + pt->start[1] + j) * o->n[0] + pt->start[0] + i;
                f[at(pt, k, j, i)] = (double)(miniapp_mix(0.0, g) & VALUE_MASK);
            }
}

/* "Physics": an integer recurrence per point, `work` times; the values stay
 * integers below 2^20 so that the zonal sums are exact. */
static void physics(const struct opts *o, const struct patch *pt, double *f, int step)
{
    size_t n = (size_t)pt->nlev * pt->len[1] * pt->len[0];
    for (size_t p = 0; p < n; p++) {
        uint32_t v = (uint32_t)f[p];
        for (int w = 0; w < o->work; w++)
            v = (v * 1103515245u + 12345u + (uint32_t)step) & VALUE_MASK;
        f[p] = (double)v;
    }
}

/* gather: rank 0 receives every patch whole and computes all the means. */
static void zonal_gather(const struct opts *o, const struct patch *me, const double *f,
                         double *all, const int *counts, const int *displs, double *zm)
{
    int mine = me->nlev * me->len[1] * me->len[0];
    MPI_Gatherv(f, mine, MPI_DOUBLE, all, counts, displs, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    if (me->rank != 0)
        return;
    memset(zm, 0, sizeof(double) * (size_t)o->n[2] * o->n[1]);
    for (int r = 0; r < me->size; r++) {
        struct patch pt;
        patch_of(o, r, &pt);
        const double *src = all + displs[r];
        for (int k = 0; k < pt.nlev; k++)
            for (int j = 0; j < pt.len[1]; j++) {
                double s = 0.0;
                for (int i = 0; i < pt.len[0]; i++)
                    s += src[at(&pt, k, j, i)];
                zm[(size_t)k * o->n[1] + pt.start[1] + j] += s;
            }
    }
    for (size_t q = 0; q < (size_t)o->n[2] * o->n[1]; q++)
        zm[q] /= o->n[0];
}

/* The communicators and datatypes of the distributed variant. */
struct distributed {
    MPI_Comm row;       /* ranks sharing my latitude band; its rank 0 holds lon 0 */
    MPI_Comm leaders;   /* the row leaders (MPI_COMM_NULL elsewhere); its rank 0 is world 0 */
    MPI_Datatype band;  /* on a leader: one latitude of its [lev][mylat] sums, all levels */
    MPI_Datatype column; /* on rank 0: one latitude of the [lev][nlat] means, all levels */
    int *counts, *displs;
    double *part, *rowsum;
};

static MPI_Datatype lat_column(int nlev, int stride)
{
    MPI_Datatype v, t;
    MPI_Type_vector(nlev, 1, stride, MPI_DOUBLE, &v);
    MPI_Type_create_resized(v, 0, sizeof(double), &t);
    MPI_Type_free(&v);
    MPI_Type_commit(&t);
    return t;
}

static void distributed_setup(const struct opts *o, const struct patch *me, struct distributed *ds)
{
    MPI_Comm_split(MPI_COMM_WORLD, me->c[1], me->c[0], &ds->row);
    MPI_Comm_split(MPI_COMM_WORLD, me->c[0] == 0 ? 0 : MPI_UNDEFINED, me->c[1], &ds->leaders);
    size_t band = (size_t)me->nlev * me->len[1];
    ds->part = malloc(sizeof(double) * band);
    ds->rowsum = malloc(sizeof(double) * band);
    ds->band = lat_column(me->nlev, me->len[1]);
    ds->column = lat_column(me->nlev, o->n[1]);
    ds->counts = malloc(sizeof(int) * (size_t)o->p[1]);
    ds->displs = malloc(sizeof(int) * (size_t)o->p[1]);
    for (int c = 0; c < o->p[1]; c++)
        ds->counts[c] = miniapp_block(o->n[1], o->p[1], c, &ds->displs[c]);
}

static void distributed_free(struct distributed *ds)
{
    MPI_Comm_free(&ds->row);
    if (ds->leaders != MPI_COMM_NULL)
        MPI_Comm_free(&ds->leaders);
    MPI_Type_free(&ds->band);
    MPI_Type_free(&ds->column);
    free(ds->counts);
    free(ds->displs);
    free(ds->part);
    free(ds->rowsum);
}

/* distributed: local sums over my longitudes, summed along the row of ranks
 * to its leader, divided there, then gathered to rank 0, each latitude band
 * landing at its place through the derived datatypes. */
static void zonal_distributed(const struct opts *o, const struct patch *me, const double *f,
                              struct distributed *ds, double *zm)
{
    int band = me->nlev * me->len[1];
    for (int k = 0; k < me->nlev; k++)
        for (int j = 0; j < me->len[1]; j++) {
            double s = 0.0;
            for (int i = 0; i < me->len[0]; i++)
                s += f[at(me, k, j, i)];
            ds->part[(size_t)k * me->len[1] + j] = s;
        }
    MPI_Reduce(ds->part, ds->rowsum, band, MPI_DOUBLE, MPI_SUM, 0, ds->row);
    if (ds->leaders == MPI_COMM_NULL)
        return;
    for (int q = 0; q < band; q++)
        ds->rowsum[q] /= o->n[0];
    MPI_Gatherv(ds->rowsum, me->len[1], ds->band, zm, ds->counts, ds->displs, ds->column, 0,
                ds->leaders);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, nranks;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    struct opts o;
    parse(argc, argv, nranks, &o);

    MINIAPP_ENTER("setup");
    struct patch me;
    patch_of(&o, rank, &me);
    me.size = nranks;
    size_t local = (size_t)me.nlev * me.len[1] * me.len[0];
    size_t nzm = (size_t)o.n[2] * o.n[1];
    double *f = malloc(sizeof(double) * local);
    double *zm = rank == 0 ? malloc(sizeof(double) * nzm) : NULL;
    double *all = NULL;
    int *counts = NULL, *displs = NULL;
    struct distributed ds;
    if (o.variant == GATHER) {
        counts = malloc(sizeof(int) * (size_t)nranks);
        displs = malloc(sizeof(int) * (size_t)nranks);
        for (int r = 0, off = 0; r < nranks; r++) {
            struct patch pt;
            patch_of(&o, r, &pt);
            counts[r] = pt.nlev * pt.len[1] * pt.len[0];
            displs[r] = off;
            off += counts[r];
        }
        if (rank == 0)
            all = malloc(sizeof(double) * (size_t)o.n[0] * o.n[1] * o.n[2]);
    } else {
        distributed_setup(&o, &me, &ds);
    }
    init_field(&o, &me, f);
    MINIAPP_EXIT("setup");

    uint64_t checksum = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (int step = 1; step <= o.steps; step++) {
        MINIAPP_ENTER("physics");
        physics(&o, &me, f, step);
        MINIAPP_EXIT("physics");
        MINIAPP_ENTER("zonal");
        if (o.variant == GATHER)
            zonal_gather(&o, &me, f, all, counts, displs, zm);
        else
            zonal_distributed(&o, &me, f, &ds, zm);
        MINIAPP_EXIT("zonal");
        if (rank == 0)
            for (size_t q = 0; q < nzm; q++)
                checksum += miniapp_mix(zm[q], q + (uint64_t)step * nzm);
    }
    double seconds = MPI_Wtime() - t0, tmax;

    MINIAPP_ENTER("check");
    MPI_Reduce(&seconds, &tmax, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        double mean = 0.0;
        for (size_t q = 0; q < nzm && o.steps > 0; q++)
            mean += zm[q];
        mean /= (double)nzm;
        printf("zonal: %d ranks as %dx%d, variant %s, %.3f s\n", nranks, o.p[0], o.p[1],
               o.variant == GATHER ? "gather" : "distributed", tmax);
        printf("RESULT zonal grid=%dx%dx%d steps=%d checksum=%016" PRIx64 " mean=%.12e\n", o.n[0],
               o.n[1], o.n[2], o.steps, checksum, mean);
        fflush(stdout);
    }
    MINIAPP_EXIT("check");
    if (o.variant == DISTRIBUTED)
        distributed_free(&ds);
    free(f);
    free(zm);
    free(all);
    free(counts);
    free(displs);
    MPI_Finalize();
    return 0;
}
