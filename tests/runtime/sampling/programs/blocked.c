/* A program blocked in read, nanosleep and poll between bursts of compute:
 * under sampling it must print the same and exit with the same code (3).
 * usage: blocked N */
#include <errno.h>
#include <mpi.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static int fds[2];
static volatile double sink = 1.0;

static void *writer(void *arg)
{
    (void)arg;
    struct timespec ts = {0, 150000000};
    nanosleep(&ts, NULL);
    if (write(fds[1], "hello\n", 6) != 6)
        return NULL;
    return NULL;
}

__attribute__((noinline)) void spin(long n)
{
    double x = sink;
    for (long i = 0; i < n; i++)
        x = x * 1.0000001 + 1e-9;
    sink = x;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    long n = argc > 1 ? atol(argv[1]) : 1000000;
    for (int round = 0; round < 2; round++) {
        spin(n);
        pthread_t th;
        if (pipe(fds) != 0 || pthread_create(&th, NULL, writer, NULL) != 0)
            return 1;
        char buf[16];
        ssize_t r = read(fds[0], buf, sizeof buf);       /* blocked until the writer writes */
        int e1 = r < 0 ? errno : 0;
        pthread_join(th, NULL);
        close(fds[0]);
        close(fds[1]);
        spin(n);
        struct timespec ts = {0, 100000000};
        int s = nanosleep(&ts, NULL);
        int e2 = s ? errno : 0;
        spin(n);
        int p = poll(NULL, 0, 100);
        int e3 = p < 0 ? errno : 0;
        printf("rank %d round %d read %zd errno %d sleep %d errno %d poll %d errno %d\n", rank, round,
               r, e1, s, e2, p, e3);
        fflush(stdout);
        MPI_Barrier(MPI_COMM_WORLD);
    }
    MPI_Finalize();
    return 3;
}
