/*
 * overhead.c - the cost the runtime adds to one MPI call, measured in one run
 * of one binary: each operation is timed through MPI_X (the runtime's wrapper
 * when libmpiscope.so is preloaded) and through PMPI_X (the library itself,
 * never wrapped), in many short alternating blocks; added = the median over
 * block pairs of (MPI_X block - PMPI_X block), which cancels slow drifts and
 * is robust to the odd preempted block.
 *
 *   mpirun -n 2 [-x LD_PRELOAD=.../libmpiscope.so] overhead [blocks [op]]
 *
 * Operations: MPI_Iprobe that finds nothing, MPI_Comm_rank, 8-byte
 * MPI_Send/MPI_Recv ping-pong (reported per call: round trip / 4), 8-byte
 * MPI_Allreduce, an MPI_Pcontrol region entered and left (per call: pair / 2;
 * the name is a string literal, as most codes pass). Rank 0 prints one JSON
 * line per operation.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

enum { OP_IPROBE, OP_RANK, OP_PINGPONG, OP_ALLREDUCE, OP_PCONTROL, NOPS };
static const char *op_name[NOPS] = {"MPI_Iprobe", "MPI_Comm_rank", "MPI_Send/MPI_Recv 8 B", "MPI_Allreduce 8 B",
                                    "MPI_Pcontrol region"};
static const int op_iters[NOPS] = {20000, 100000, 400, 400, 20000};
/* Wrapped calls per iteration on the timed path. RATIONALE: a ping-pong
 * round trip runs four calls in series (send and receive on each rank), and
 * each rank's time covers its partner's calls too, so the added time of a
 * round trip is that of 4 calls; an Allreduce's two calls run side by side. */
static const int op_calls[NOPS] = {1, 1, 4, 1, 2};

/* RATIONALE: CPU time of the calling thread, not wall time: on a shared
 * machine other jobs preempt the benchmark, and wall time would charge their
 * time slices to whichever variant happened to be running. A rank that waits
 * for its partner busy-polls (both MPIs do), so CPU time still covers the
 * whole call. */
static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* One block of iters iterations of op, through the wrapper (pmpi = 0) or not. */
static double block(int op, int pmpi, int iters, int rank)
{
    int flag, r;
    double x = 1.0, y;
    MPI_Status st;
    PMPI_Barrier(MPI_COMM_WORLD);
    double t0 = now();
    for (int i = 0; i < iters; i++) {
        switch (op) {
        case OP_IPROBE:
            if (pmpi) PMPI_Iprobe(MPI_ANY_SOURCE, 999, MPI_COMM_WORLD, &flag, &st);
            else MPI_Iprobe(MPI_ANY_SOURCE, 999, MPI_COMM_WORLD, &flag, &st);
            break;
        case OP_RANK:
            if (pmpi) PMPI_Comm_rank(MPI_COMM_WORLD, &r);
            else MPI_Comm_rank(MPI_COMM_WORLD, &r);
            break;
        case OP_PINGPONG:
            if (rank == 0) {
                if (pmpi) { PMPI_Send(&x, 1, MPI_DOUBLE, 1, 1, MPI_COMM_WORLD); PMPI_Recv(&y, 1, MPI_DOUBLE, 1, 1, MPI_COMM_WORLD, &st); }
                else { MPI_Send(&x, 1, MPI_DOUBLE, 1, 1, MPI_COMM_WORLD); MPI_Recv(&y, 1, MPI_DOUBLE, 1, 1, MPI_COMM_WORLD, &st); }
            } else if (rank == 1) {
                if (pmpi) { PMPI_Recv(&y, 1, MPI_DOUBLE, 0, 1, MPI_COMM_WORLD, &st); PMPI_Send(&x, 1, MPI_DOUBLE, 0, 1, MPI_COMM_WORLD); }
                else { MPI_Recv(&y, 1, MPI_DOUBLE, 0, 1, MPI_COMM_WORLD, &st); MPI_Send(&x, 1, MPI_DOUBLE, 0, 1, MPI_COMM_WORLD); }
            }
            break;
        case OP_ALLREDUCE:
            if (pmpi) PMPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
            else MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
            break;
        case OP_PCONTROL:
            if (pmpi) { PMPI_Pcontrol(1, "region"); PMPI_Pcontrol(-1, "region"); }
            else { MPI_Pcontrol(1, "region"); MPI_Pcontrol(-1, "region"); }
            break;
        }
    }
    double t = now() - t0, tmax;
    PMPI_Allreduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return tmax * 1e9 / ((double)iters * op_calls[op]);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

int main(int argc, char **argv)
{
    int rank, size, blocks = argc > 1 ? atoi(argv[1]) : 41;
    int only = argc > 2 ? atoi(argv[2]) : -1;      /* run one operation (0..4) */
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    int len;
    MPI_Get_library_version(lib, &len);
    for (int i = 0; i < len; i++)
        if (lib[i] == '\n' || lib[i] == '"' || lib[i] == '\t' || lib[i] == ',') { lib[i] = 0; break; }
    const char *preload = getenv("LD_PRELOAD");
    double *with = malloc(sizeof(double) * (size_t)blocks), *without = malloc(sizeof(double) * (size_t)blocks);
    double *diff = malloc(sizeof(double) * (size_t)blocks);
    for (int op = 0; op < NOPS; op++) {
        if (only >= 0 && op != only)
            continue;
        block(op, 0, op_iters[op] / 10, rank);     /* warm-up */
        block(op, 1, op_iters[op] / 10, rank);
        for (int b = 0; b < blocks; b++) {
            with[b] = block(op, 0, op_iters[op], rank);
            without[b] = block(op, 1, op_iters[op], rank);
            diff[b] = with[b] - without[b];
        }
        double mw = median(with, blocks), mo = median(without, blocks), md = median(diff, blocks);
        if (rank == 0)
            printf("{\"op\": \"%s\", \"mpi\": \"%s\", \"ranks\": %d, \"preload\": \"%s\", \"ns_per_call_mpi\": %.2f, "
                   "\"ns_per_call_pmpi\": %.2f, \"added_ns\": %.2f, \"blocks\": %d, \"iters\": %d}\n",
                   op_name[op], lib, size, preload ? preload : "", mw, mo, md, blocks, op_iters[op]);
        fflush(stdout);
    }
    free(with);
    free(without);
    free(diff);
    MPI_Finalize();
    return 0;
}
