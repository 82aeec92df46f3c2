/* Dynamic processes: the job spawns ROUNDS child jobs of CHILDREN ranks each
 * (this same program with the argument "child"), one after the other. Each
 * child job: a barrier on its parent intercommunicator, rank 0 sends its
 * world size to the parent root (8 bytes... one int), a barrier among the
 * children, a disconnect. The parent root receives that int from child 0 of
 * every round and checks it; every parent rank prints one line per round
 * with the spawn's wall time (the test compares it with and without the
 * runtime).
 *   spawn [ROUNDS [CHILDREN]]
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm parent;
    MPI_Comm_get_parent(&parent);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    if (parent != MPI_COMM_NULL) {
        MPI_Barrier(parent);
        if (rank == 0)
            MPI_Send(&size, 1, MPI_INT, 0, 7, parent);
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Comm_disconnect(&parent);
        MPI_Finalize();
        return 0;
    }

    int rounds = argc > 1 ? atoi(argv[1]) : 3;
    int children = argc > 2 ? atoi(argv[2]) : 2;
    char *child_argv[] = {"child", NULL};
    int bad = 0;
    for (int r = 0; r < rounds; r++) {
        MPI_Comm inter;
        int *errcodes = malloc(sizeof(int) * (size_t)children);
        double t0 = MPI_Wtime();
        MPI_Comm_spawn(argv[0], child_argv, children, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter,
                       errcodes);
        double dt = MPI_Wtime() - t0;
        for (int i = 0; i < children; i++)
            bad |= errcodes[i] != MPI_SUCCESS;
        free(errcodes);
        MPI_Barrier(inter);
        if (rank == 0) {
            int got = -1;
            MPI_Recv(&got, 1, MPI_INT, 0, 7, inter, MPI_STATUS_IGNORE);
            bad |= got != children;
        }
        MPI_Comm_disconnect(&inter);
        printf("rank %d round %d spawn %.3f s\n", rank, r, dt);
        fflush(stdout);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        printf("%s: %d rounds of %d children from %d ranks\n", bad ? "FAILED" : "ok", rounds,
               children, size);
    MPI_Finalize();
    return bad;
}
