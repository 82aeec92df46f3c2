/*
 * sites.c - one MPI function called from several lines with known counts
 * (tests/runtime/callsites/): each call line carries a "site:NAME" marker that
 * the test finds, and the counts are fixed by NAME below.
 *
 *   sites [reps [snap]]   reps (default 1) multiplies every count; "snap":
 *                         each rank raises the snapshot signal (SIGUSR1)
 *                         after its calls and waits until its snapshot is in
 *                         the spool under $MPISCOPE_DIR
 */
#include <glob.h>
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

/* Raise SIGUSR1 and wait (at most 60 s) until this rank's snapshot is in its
 * spool file (MPISCOPE_SPOOL=rank: <dir>/<prog>.<job>.spool/rank<R>.snap):
 * the chunk header's length is all there. */
static void snapshot_now(int rank)
{
    char pattern[4096];
    snprintf(pattern, sizeof pattern, "%s/*.spool/rank%d.snap", getenv("MPISCOPE_DIR"), rank);
    raise(SIGUSR1);
    for (int i = 0; i < 6000; i++) {
        glob_t g;
        int done = 0;
        if (glob(pattern, 0, NULL, &g) == 0) {
            FILE *fp = g.gl_pathc == 1 ? fopen(g.gl_pathv[0], "rb") : NULL;
            unsigned char head[24];
            struct stat st;
            if (fp && fread(head, 1, sizeof head, fp) == sizeof head && fstat(fileno(fp), &st) == 0) {
                unsigned long long len = 0;
                memcpy(&len, head + 16, 8);
                done = memcmp(head, "MPSCSNAP", 8) == 0 && (unsigned long long)st.st_size >= len;
            }
            if (fp)
                fclose(fp);
            globfree(&g);
        }
        if (done)
            break;
        struct timespec nap = {0, 10000000};
        nanosleep(&nap, NULL);
    }
}

/* A helper called from two lines: with MPISCOPE_CALLSITE_DEPTH >= 2 its
 * two callers are two sites. */
static __attribute__((noinline)) void reduce_helper(double *x, double *y, int n)
{
    for (int i = 0; i < n; i++)
        MPI_Allreduce(x, y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD); /* site:helper */
}

int main(int argc, char **argv)
{
    int rank, size, reps = argc > 1 ? atoi(argv[1]) : 1;
    double x = 1.0, y = 0.0, buf[64] = {0};
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (int i = 0; i < 3 * reps; i++)
        MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD); /* site:allreduce_a */
    for (int i = 0; i < 5 * reps; i++)
        MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD); /* site:allreduce_b */
    for (int i = 0; i < 7 * reps; i++)
        MPI_Bcast(buf, 64, MPI_DOUBLE, 0, MPI_COMM_WORLD); /* site:bcast */
    reduce_helper(&x, &y, 2 * reps); /* site:helper_from_1 */
    reduce_helper(&x, &y, 4 * reps); /* site:helper_from_2 */
    MPI_Barrier(MPI_COMM_WORLD); /* site:barrier */
    if (argc > 2 && strcmp(argv[2], "snap") == 0)
        snapshot_now(rank);
    if (rank == 0)
        printf("sites: %d ranks, y = %g\n", size, y);
    MPI_Finalize();
    return 0;
}
