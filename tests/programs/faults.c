/*
 * Faults a profiled program may have (tests/reliability/test_reliability_faults.py runs
 * each with and without the runtime and compares): argv[1] picks one.
 *   segv            rank 1 (rank 0 at 1 rank) raises SIGSEGV after a barrier
 *                   while the others wait in a second barrier
 *   no_finalize     every rank does one MPI_Allreduce and returns 0 without
 *                   MPI_Finalize
 *   before_init     MPI_Comm_rank before MPI_Init (erroneous), then a normal run
 *   after_finalize  a normal run, then MPI_Barrier after MPI_Finalize (erroneous)
 *   finalize_twice  a normal run that calls MPI_Finalize twice (erroneous)
 *   wait_forever    one barrier, "ready" on stdout, then sleeps until killed
 *                   (for SIGTERM to the launcher)
 *   fsize BYTES     after MPI_Init every rank limits its files to BYTES
 *                   (RLIMIT_FSIZE, as a quota would), then a normal run
 *   remove_dir DIR  rank 0 removes the (empty) directory DIR after a barrier,
 *                   then a normal run (the profile directory vanishing mid-run)
 * "Normal run": one MPI_Allreduce of the ranks, checked, printed as a known
 * result line before the fault, so the outputs with and without the runtime
 * can be compared.
 */
#include <mpi.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <string.h>
#include <unistd.h>
#include "known.h"

static int allreduce_ok(int rank, int size)
{
    int sum = -1;
    MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    return sum == size * (size - 1) / 2;
}

int main(int argc, char **argv)
{
    const char *what = argc > 1 ? argv[1] : "";
    int rank = -1, size = 0;
    if (!strcmp(what, "before_init")) {
        int early = -1;
        MPI_Comm_rank(MPI_COMM_WORLD, &early);
        printf("faults before_init returned, rank %d\n", early);
        fflush(stdout);
    }
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (!strcmp(what, "segv")) {
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == (size > 1)) {
            printf("faults rank %d raises SIGSEGV\n", rank);
            fflush(stdout);
            raise(SIGSEGV);
        }
        MPI_Barrier(MPI_COMM_WORLD);
    } else if (!strcmp(what, "fsize") && argc > 2) {
        /* Set here, not by the launcher: Open MPI's own shared-memory files
         * exceed a few KiB at MPI_Init and would die of SIGXFSZ first. */
        struct rlimit lim = {(rlim_t)atol(argv[2]), (rlim_t)atol(argv[2])};
        if (setrlimit(RLIMIT_FSIZE, &lim) != 0)
            perror("faults fsize");
    } else if (!strcmp(what, "remove_dir") && argc > 2) {
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 0 && rmdir(argv[2]) != 0)
            perror("faults remove_dir");
        MPI_Barrier(MPI_COMM_WORLD);
    } else if (!strcmp(what, "wait_forever")) {
        MPI_Barrier(MPI_COMM_WORLD);
        printf("faults rank %d ready\n", rank);
        fflush(stdout);
        for (;;)
            sleep(1);
    }
    known_result("faults", rank, size, allreduce_ok(rank, size));
    if (!strcmp(what, "no_finalize"))
        return 0;
    MPI_Finalize();
    if (!strcmp(what, "after_finalize"))
        MPI_Barrier(MPI_COMM_WORLD);
    if (!strcmp(what, "finalize_twice"))
        MPI_Finalize();
    printf("faults rank %d returns\n", rank);
    fflush(stdout);
    return 0;
}
