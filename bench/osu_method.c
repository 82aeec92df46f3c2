/* osu_method: a minimal, independent implementation of the OSU micro-benchmarks'
 * documented method, used as the reference the kernels are checked against
 * (tests/bench/test_bench_method.py, perf/bench_accuracy/). It shares no code with
 * the kernels (no common.c): written from the method, not from the kernels.
 *
 *   osu_method latency|bw|bibw|barrier|bcast|reduce|allreduce|allgather|alltoall
 *              [min_size [max_size [iters skip iters_large skip_large [batches]]]]
 *
 * The method (OSU 7): sizes double from min to max (latency from 0); above
 * 8 KiB the large counts apply; defaults 10000/100 and 1000/10 (latency),
 * 100/10 and 20/2 (bw, bibw; window 64), 1000/100 and 100/10 (collectives).
 * One page-aligned send buffer and one receive buffer, written at allocation
 * and (point-to-point) the size's bytes again before each size; a barrier, the untimed warm-up, then every timed iteration timed on its
 * own and summed. latency: one-way = sum / (2 iters) on rank 0; bw/bibw:
 * (1 or 2) * size * 64 * iters / sum on rank 0; collectives: every call timed
 * and followed by a barrier (barrier: back to back), each rank's sum / iters
 * averaged over the ranks; reductions in MPI_FLOAT. Rank 0 prints
 * "size mean best" per line (best: fastest of `batches` (5) equal batches of
 * the timed iterations, the same quantity in the same units). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WINDOW 64

static char *sbuf, *rbuf;
static MPI_Status stats[2 * WINDOW];
static int rank, nprocs, batches = 5;

static double one(const char *test, int size, MPI_Request *req)
{
    int other = 1 - rank;
    double t0 = MPI_Wtime();
    if (!strcmp(test, "latency")) {
        if (rank == 0) {
            MPI_Send(sbuf, size, MPI_CHAR, 1, 7, MPI_COMM_WORLD);
            MPI_Recv(rbuf, size, MPI_CHAR, 1, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(rbuf, size, MPI_CHAR, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(sbuf, size, MPI_CHAR, 0, 7, MPI_COMM_WORLD);
        }
    } else if (!strcmp(test, "bw")) {
        for (int w = 0; w < WINDOW; w++) {
            if (rank == 0) MPI_Isend(sbuf, size, MPI_CHAR, 1, 8, MPI_COMM_WORLD, &req[w]);
            else MPI_Irecv(rbuf, size, MPI_CHAR, 0, 8, MPI_COMM_WORLD, &req[w]);
        }
        MPI_Waitall(WINDOW, req, stats);
        char ack[4] = {0};
        if (rank == 0) MPI_Recv(ack, 4, MPI_CHAR, 1, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        else MPI_Send(ack, 4, MPI_CHAR, 0, 9, MPI_COMM_WORLD);
    } else if (!strcmp(test, "bibw")) {
        for (int w = 0; w < WINDOW; w++)
            MPI_Irecv(rbuf, size, MPI_CHAR, other, 10, MPI_COMM_WORLD, &req[w]);
        for (int w = 0; w < WINDOW; w++)
            MPI_Isend(sbuf, size, MPI_CHAR, other, 10, MPI_COMM_WORLD, &req[WINDOW + w]);
        MPI_Waitall(2 * WINDOW, req, stats);
    } else if (!strcmp(test, "barrier")) {
        MPI_Barrier(MPI_COMM_WORLD);
    } else if (!strcmp(test, "bcast")) {
        MPI_Bcast(sbuf, size, MPI_CHAR, 0, MPI_COMM_WORLD);
    } else if (!strcmp(test, "reduce")) {
        MPI_Reduce(sbuf, rbuf, size / 4, MPI_FLOAT, MPI_SUM, 0, MPI_COMM_WORLD);
    } else if (!strcmp(test, "allreduce")) {
        MPI_Allreduce(sbuf, rbuf, size / 4, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    } else if (!strcmp(test, "allgather")) {
        MPI_Allgather(sbuf, size, MPI_CHAR, rbuf, size, MPI_CHAR, MPI_COMM_WORLD);
    } else if (!strcmp(test, "alltoall")) {
        MPI_Alltoall(sbuf, size, MPI_CHAR, rbuf, size, MPI_CHAR, MPI_COMM_WORLD);
    }
    return MPI_Wtime() - t0;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    const char *test = argc > 1 ? argv[1] : "latency";
    int pt2pt = !strcmp(test, "latency") || !strcmp(test, "bw") || !strcmp(test, "bibw");
    int coll = !pt2pt;
    long lo = argc > 2 ? atol(argv[2]) : (!strcmp(test, "latency") ? 0 : 1);
    long hi = argc > 3 ? atol(argv[3]) : (pt2pt ? 4L << 20 : 1L << 20);
    int it = coll ? 1000 : !strcmp(test, "latency") ? 10000 : 100;
    int sk = coll ? 100 : !strcmp(test, "latency") ? 100 : 10;
    int it_l = coll ? 100 : !strcmp(test, "latency") ? 1000 : 20;
    int sk_l = coll ? 10 : !strcmp(test, "latency") ? 10 : 2;
    if (argc > 7) { it = atoi(argv[4]); sk = atoi(argv[5]); it_l = atoi(argv[6]); sk_l = atoi(argv[7]); }
    if (argc > 8) batches = atoi(argv[8]);
    if ((pt2pt && nprocs != 2) || hi > (1L << 30) || lo < 0 || batches < 1 || it < batches ||
        it_l < batches || sk < 0 || sk_l < 0) {
        if (rank == 0) fprintf(stderr, "osu_method: bad arguments or rank count\n");
        MPI_Finalize();
        return 2;
    }
    size_t bytes = (size_t)(hi > 0 ? hi : 1) * (coll ? (size_t)nprocs : 1);
    if (posix_memalign((void **)&sbuf, 4096, bytes) || posix_memalign((void **)&rbuf, 4096, bytes))
        MPI_Abort(MPI_COMM_WORLD, 1);
    memset(sbuf, 'a', bytes);
    memset(rbuf, 'b', bytes);
    MPI_Request req[2 * WINDOW];
    for (long size = lo; size <= hi; size = size ? 2 * size : 1) {
        if (!strcmp(test, "barrier") && size != lo) break;
        if ((!strcmp(test, "reduce") || !strcmp(test, "allreduce")) && size < 4) continue;
        if (size == 0 && strcmp(test, "latency") && strcmp(test, "barrier")) continue;
        int iters = size > 8192 ? it_l : it, skip = size > 8192 ? sk_l : sk;
        /* as OSU's set_buffer_pt2pt: the bytes of this size; collectives' buffers
         * are written once, at allocation */
        if (pt2pt) {
            memset(sbuf, 'a', (size_t)size);
            memset(rbuf, 'b', (size_t)size);
        }
        double sum = 0.0, batch = 0.0, best = 1e300;
        int per = iters / batches;
        MPI_Barrier(MPI_COMM_WORLD);
        for (int i = 0; i < skip + iters; i++) {
            double t = one(test, (int)size, req);
            if (coll && strcmp(test, "barrier")) MPI_Barrier(MPI_COMM_WORLD);
            if (i < skip) continue;
            sum += t;
            batch += t;
            if ((i - skip + 1) % per == 0) {
                if (batch / per < best) best = batch / per;
                batch = 0.0;
            }
        }
        double mean = sum / iters, out[2];
        if (!strcmp(test, "latency")) { mean /= 2; best /= 2; }
        if (!strcmp(test, "bw") || !strcmp(test, "bibw")) {
            double moved = (double)size * WINDOW * (strcmp(test, "bibw") ? 1 : 2) / 1e6;
            mean = moved / mean;
            best = moved / best;
        }
        double mine[2] = {mean, best};
        if (coll) {
            MPI_Reduce(mine, out, 2, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
            out[0] /= nprocs;
            out[1] /= nprocs;
        } else {
            out[0] = mean;
            out[1] = best;
        }
        double scale = (!strcmp(test, "bw") || !strcmp(test, "bibw")) ? 1.0 : 1e6;
        if (rank == 0) printf("%ld %.6g %.6g\n", size, out[0] * scale, out[1] * scale);
        fflush(stdout);
    }
    free(sbuf);
    free(rbuf);
    MPI_Finalize();
    return 0;
}
