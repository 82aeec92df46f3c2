/*
 * A long run for the snapshot tests (tests/runtime/lifecycle/test_runtime_snapshot.py):
 *   snap_long SECONDS [own-term]
 * every rank runs steps of one MPI_Allreduce (1 int) and a 10 ms sleep until
 * SECONDS have passed (rank 0's clock decides, by the Allreduce), then
 * finalizes. With "own-term" it installs its own SIGTERM handler before
 * MPI_Init, which prints "snap_long: own SIGTERM handler, rank R step N" and
 * then dies of SIGTERM (as a cleanup handler does), so a test can check it
 * still runs under mpiscope. The handler also creates the file
 * "own_term.R" in the working directory: a launcher that is killing the job
 * may drop a dying rank's last output line, a file is not lost. Before it
 * dies, the handler waits (up to 30 s) until every rank's file exists:
 * once one rank has died, Open MPI tears the job down and a rank still on its
 * way into its handler never gets there (9 of 40 runs here lost one, without
 * mpiscope), which is the launcher's doing and not what the test checks.
 */
#include <fcntl.h>
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static volatile int my_rank = -1, my_size;
static volatile long my_step;

/* "own_term.R": the file that says rank R's own handler ran. */
static void marker_name(char *name, size_t size, int rank)
{
    snprintf(name, size, "own_term.%d", rank);
}

static int every_rank_marked(void)
{
    char mark[32];
    for (int r = 0; r < my_size; r++) {
        marker_name(mark, sizeof mark, r);
        if (access(mark, F_OK) != 0)
            return 0;
    }
    return 1;
}

static void own_term(int sig)
{
    char msg[128];
    int n = snprintf(msg, sizeof msg, "snap_long: own SIGTERM handler, rank %d step %ld\n", my_rank,
                     my_step);
    char mark[32];
    marker_name(mark, sizeof mark, my_rank);
    (void)sig;
    int fd = open(mark, O_CREAT | O_WRONLY, 0644);
    if (fd >= 0)
        close(fd);
    if (write(1, msg, (size_t)n) < 0)
        _exit(4);
    struct timespec nap = {0, 10000000};
    for (int waited = 0; waited < 3000 && !every_rank_marked(); waited++)
        nanosleep(&nap, NULL);
    signal(SIGTERM, SIG_DFL);
    raise(SIGTERM);
}

int main(int argc, char **argv)
{
    double seconds = argc > 1 ? atof(argv[1]) : 5.0;
    if (argc > 2 && strcmp(argv[2], "own-term") == 0)
        signal(SIGTERM, own_term);
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    my_size = size;
    my_rank = rank;
    printf("snap_long: rank %d pid %d\n", rank, (int)getpid());
    fflush(stdout);
    double t0 = MPI_Wtime();
    int go = 1;
    while (go) {
        int mine = rank == 0 ? MPI_Wtime() - t0 < seconds : 1;
        MPI_Allreduce(&mine, &go, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
        my_step++;
        struct timespec nap = {0, 10000000};
        nanosleep(&nap, NULL);
    }
    printf("snap_long: rank %d steps %ld\n", rank, my_step);
    MPI_Finalize();
    return 0;
}
