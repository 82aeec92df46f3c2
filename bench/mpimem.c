/* mpimem: resident memory per rank that MPI itself takes, against P (seed
 * 003, "MPI Memory Usage"; the driver reruns the kernel at each P of --ranks).
 *
 * Method: VmRSS and VmHWM from /proc/self/status at three points:
 *   init       right after MPI_Init (before anything else of this kernel)
 *   connected  after a 1-byte MPI_Isend/MPI_Irecv with every other rank, so
 *              transports that connect lazily have opened all P-1 connections
 *   collectives after MPI_Barrier, MPI_Bcast, MPI_Allreduce and MPI_Alltoall
 *              of --max-size bytes per rank (per peer for alltoall); the user
 *              buffers are allocated and touched before the "connected"
 *              reading, so the difference is MPI's own
 * Rows give min/avg/max over ranks, in KiB. */
#include "common.h"

#include <stdlib.h>

static void mpimem_row(const char *stage, long rss, long hwm, long user)
{
    bench_stats r = bench_stats_of((double)rss, MPI_COMM_WORLD);
    bench_stats h = bench_stats_of((double)hwm, MPI_COMM_WORLD);
    bench_row_begin("mpimem");
    bench_field_str("stage", stage);
    bench_field_int("nranks", bench_size);
    bench_field_stats("rss_kib", r);
    bench_field_stats("hwm_kib", h);
    bench_field_int("user_buffers_kib", user);
    bench_row_end();
}

int main(int argc, char **argv)
{
    static const bench_common defaults = {0, 65536, 0, 1, 0, 1, 0, 1};
    bench_init(&argc, &argv, "mpimem", &defaults, NULL);
    long init_rss = bench_rss_at_init, init_hwm = bench_rss_kib("VmHWM");
    size_t n = (size_t)bench_opts.max_size, all = n * (size_t)bench_size;
    char *send = bench_buffer(all), *recv = bench_buffer(all);
    long user = (long)(2 * all / 1024);
    char *one = bench_buffer((size_t)bench_size);
    MPI_Request *req = malloc(sizeof(MPI_Request) * 2 * (size_t)bench_size);
    int nreq = 0;
    for (int r = 0; r < bench_size; r++) {
        if (r == bench_rank) continue;
        MPI_Irecv(one + r, 1, MPI_BYTE, r, 3, MPI_COMM_WORLD, &req[nreq++]);
        MPI_Isend(one + bench_rank, 1, MPI_BYTE, r, 3, MPI_COMM_WORLD, &req[nreq++]);
    }
    MPI_Waitall(nreq, req, MPI_STATUSES_IGNORE);
    long conn_rss = bench_rss_kib("VmRSS"), conn_hwm = bench_rss_kib("VmHWM");
    for (int i = 0; i < bench_opts.iters; i++) {
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Bcast(send, (int)n, MPI_BYTE, 0, MPI_COMM_WORLD);
        MPI_Allreduce(send, recv, (int)(n / 8), MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        MPI_Alltoall(send, (int)n, MPI_BYTE, recv, (int)n, MPI_BYTE, MPI_COMM_WORLD);
    }
    long coll_rss = bench_rss_kib("VmRSS"), coll_hwm = bench_rss_kib("VmHWM");
    mpimem_row("init", init_rss, init_hwm, 0);
    mpimem_row("connected", conn_rss, conn_hwm, user);
    mpimem_row("collectives", coll_rss, coll_hwm, user);
    free(send); free(recv); free(one); free(req);
    bench_finish();
    return 0;
}
