/* io: the parallel I/O strategies of seed 003 writing one logical file of
 * P blocks (rank r's block at offset r * size), and metadata rates:
 *   rank0     MPI_Gather to rank 0, which write()s everything
 *   perrank   each rank write()s its block to its own file
 *   indep     MPI_File_write_at, independent, one shared file
 *   coll      MPI_File_write_at_all, collective, one shared file
 *
 * Method: per block size and strategy, `iters` repetitions of: remove the
 * old file(s), barrier, t0, open + write + (fsync with --sync) + close,
 * barrier, t1. Each rank's time to its own completion is reduced to
 * min/avg/max; bandwidth = P * size / (t1 - t0) (best repetition). After the
 * last repetition rank 0 reads the logical contents back (the per-rank files
 * concatenated in rank order) and reports their FNV-1a 64 checksum beside
 * the checksum of the data the ranks meant to write.
 * Metadata: every rank creates --meta-files files in one shared directory,
 * then opens, stats and removes them; each phase between barriers;
 * rate = P * files / phase time. */
#define _GNU_SOURCE
#include "common.h"

#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *io_dir;
static int io_sync;
static const char *const io_names[] = {"rank0", "perrank", "indep", "coll"};

static void io_fill(char *buf, long size, int rank)
{
    for (long i = 0; i < size; i++) buf[i] = (char)((rank * 131 + i * 7 + i / 4093) & 0xff);
}

static uint64_t io_fnv(uint64_t h, const char *p, long n)
{
    for (long i = 0; i < n; i++) { h ^= (unsigned char)p[i]; h *= 1099511628211ULL; }
    return h;
}

static void io_path(char *out, size_t len, const char *strategy, int rank)
{
    if (rank >= 0) snprintf(out, len, "%s/io-%s.%d.dat", io_dir, strategy, rank);
    else snprintf(out, len, "%s/io-%s.dat", io_dir, strategy);
}

static void io_write_posix(const char *path, const char *buf, long size)
{
    int fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0644);
    if (fd < 0) { perror(path); MPI_Abort(MPI_COMM_WORLD, 1); }
    for (long done = 0; done < size;) {
        ssize_t w = write(fd, buf + done, (size_t)(size - done));
        if (w <= 0) { perror(path); MPI_Abort(MPI_COMM_WORLD, 1); }
        done += w;
    }
    if (io_sync) fsync(fd);
    close(fd);
}

static void io_write_mpi(const char *path, const char *buf, long size, int collective)
{
    MPI_File fh;
    MPI_Offset off = (MPI_Offset)bench_rank * size;
    if (MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh)) {
        fprintf(stderr, "mpiscope bench io: cannot open %s\n", path);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    if (collective) MPI_File_write_at_all(fh, off, buf, (int)size, MPI_BYTE, MPI_STATUS_IGNORE);
    else MPI_File_write_at(fh, off, buf, (int)size, MPI_BYTE, MPI_STATUS_IGNORE);
    if (io_sync) MPI_File_sync(fh);
    MPI_File_close(&fh);
}

/* One strategy, one repetition; returns this rank's seconds. */
static double io_once(int strategy, const char *buf, char *gathered, long size)
{
    char path[4096];
    io_path(path, sizeof path, io_names[strategy], strategy == 1 ? bench_rank : -1);
    if (strategy == 1 || bench_rank == 0) unlink(path);
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    switch (strategy) {
    case 0:
        MPI_Gather(buf, (int)size, MPI_BYTE, gathered, (int)size, MPI_BYTE, 0, MPI_COMM_WORLD);
        if (bench_rank == 0) io_write_posix(path, gathered, size * bench_size);
        break;
    case 1: io_write_posix(path, buf, size); break;
    default: io_write_mpi(path, buf, size, strategy == 3); break;
    }
    return MPI_Wtime() - t0;
}

/* FNV-1a of the logical contents a strategy left on disk (rank 0 only). */
static uint64_t io_readback(int strategy, long size, char *scratch)
{
    uint64_t h = 1469598103934665603ULL;
    for (int r = 0; r < (strategy == 1 ? bench_size : 1); r++) {
        char path[4096];
        io_path(path, sizeof path, io_names[strategy], strategy == 1 ? r : -1);
        FILE *f = fopen(path, "rb");
        size_t n;
        if (!f) return 0;
        while ((n = fread(scratch, 1, (size_t)size, f)) > 0) h = io_fnv(h, scratch, (long)n);
        fclose(f);
    }
    return h;
}

static void io_cleanup(void)
{
    char path[4096];
    for (int s = 0; s < 4; s++) {
        io_path(path, sizeof path, io_names[s], s == 1 ? bench_rank : -1);
        if (s == 1 || bench_rank == 0) unlink(path);
    }
}

/* Metadata phases over `files` files per rank in dir/meta; prints one row per phase. */
static void io_metadata(int files)
{
    static const char *ops[] = {"create", "open", "stat", "remove"};
    char dir[4096], path[4200];
    snprintf(dir, sizeof dir, "%s/meta", io_dir);
    if (bench_rank == 0) mkdir(dir, 0755);
    for (int op = 0; op < 4; op++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        for (int i = 0; i < files; i++) {
            struct stat st;
            int fd;
            snprintf(path, sizeof path, "%s/m.%d.%d", dir, bench_rank, i);
            switch (op) {
            case 0: fd = open(path, O_CREAT | O_WRONLY, 0644); if (fd >= 0) close(fd); break;
            case 1: fd = open(path, O_RDONLY); if (fd >= 0) close(fd); break;
            case 2: stat(path, &st); break;
            case 3: unlink(path); break;
            }
        }
        double mine = MPI_Wtime() - t0;
        MPI_Barrier(MPI_COMM_WORLD);
        double t = MPI_Wtime() - t0;
        bench_stats st = bench_stats_of(mine, MPI_COMM_WORLD);
        bench_row_begin("metadata");
        bench_field_str("op", ops[op]);
        bench_field_int("files", (long)files * bench_size);
        bench_field_num("rate_per_s", files * bench_size / t);
        bench_field_stats("time_s", st);
        bench_row_end();
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (bench_rank == 0) rmdir(dir);
}

int main(int argc, char **argv)
{
    static const bench_common defaults = {1L << 20, 16L << 20, 0, 3, 0, 3, 0, 1};
    const char *strategies = "rank0,perrank,indep,coll";
    int keep = 0, files = 64;
    bench_opt opts[] = {
        {"dir", BENCH_STRING, &io_dir, "directory to write in (must exist)"},
        {"strategies", BENCH_STRING, &strategies, "rank0,perrank,indep,coll"},
        {"meta-files", BENCH_INT, &files, "files per rank for the metadata rates (0: skip)"},
        {"sync", BENCH_FLAG, &io_sync, "fsync / MPI_File_sync before close"},
        {"keep", BENCH_FLAG, &keep, "leave the last size's files in --dir"},
        {0},
    };
    bench_init(&argc, &argv, "io", &defaults, opts);
    struct stat st;
    if (!io_dir || stat(io_dir, &st) || !S_ISDIR(st.st_mode))
        bench_die("--dir: '%s' is not a directory", io_dir ? io_dir : "(none)");
    const char *bad = bench_unknown_word(strategies, io_names, 4);
    if (bad) bench_die("--strategies: unknown strategy '%s'", bad);
    if (bench_opts.min_size < 1) bench_die("io needs a block size of at least 1 byte");
    long *sizes;
    int nsizes = bench_sizes(&sizes);
    char *buf = bench_buffer((size_t)bench_opts.max_size);
    char *big = bench_rank == 0 ? bench_buffer((size_t)bench_opts.max_size * bench_size) : NULL;
    for (int z = 0; z < nsizes; z++) {
        long size = sizes[z];
        uint64_t expect = 1469598103934665603ULL;
        for (int r = 0; bench_rank == 0 && r < bench_size; r++) {
            io_fill(big, size, r);
            expect = io_fnv(expect, big, size);
        }
        io_fill(buf, size, bench_rank);
        for (int s = 0; s < 4; s++) {
            if (!bench_has_word(strategies, io_names[s])) continue;
            double best = 1e30, mine = 0.0;
            for (int it = 0; it < bench_opts.iters; it++) {
                mine = io_once(s, buf, big, size);
                MPI_Barrier(MPI_COMM_WORLD);
                double all = mine;
                MPI_Allreduce(MPI_IN_PLACE, &all, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
                if (all < best) best = all;
            }
            bench_stats t = bench_stats_of(mine, MPI_COMM_WORLD);
            char got[32] = "", want[32] = "";
            if (bench_rank == 0) {
                snprintf(got, sizeof got, "%016llx", (unsigned long long)io_readback(s, size, big));
                snprintf(want, sizeof want, "%016llx", (unsigned long long)expect);
            }
            bench_row_begin("io");
            bench_field_str("strategy", io_names[s]);
            bench_field_int("size", size);
            bench_field_num("bandwidth_MBps", (double)size * bench_size / best / 1e6);
            bench_field_stats("time_s", t);
            bench_field_str("checksum", got);
            bench_field_str("expected_checksum", want);
            bench_row_end();
        }
        MPI_Barrier(MPI_COMM_WORLD);
        if (!keep || z + 1 < nsizes) io_cleanup();
    }
    if (files > 0) io_metadata(files);
    free(buf); free(big); free(sizes);
    bench_finish();
    return 0;
}
