/*
 * The errno a program sees after each MPI call must be the MPI's doing alone:
 * the runtime's own work around a call (settings, tables, timers, files) must
 * not show through. Before each call errno is set to a marker; each rank
 * prints what errno holds after it (the marker, or what the MPI left), so a
 * profiled run's lines must equal an unprofiled run's.
 *   errno_kept
 */
#include <errno.h>
#include <mpi.h>
#include <stdio.h>
#include "known.h"

#define MARK 4242

int main(int argc, char **argv)
{
    int e[8], k = 0, rank, size, sum;
    errno = MARK;
    MPI_Init(&argc, &argv);
    e[k++] = errno;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    errno = MARK;
    MPI_Pcontrol(1, "phase");
    e[k++] = errno;
    MPI_Comm half;
    errno = MARK;
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
    e[k++] = errno;
    errno = MARK;
    MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, half);
    e[k++] = errno;
    errno = MARK;
    MPI_Comm_free(&half);
    e[k++] = errno;
    errno = MARK;
    MPI_Pcontrol(-1, "phase");
    e[k++] = errno;
    MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    errno = MARK;
    MPI_Finalize();
    e[k++] = errno;
    printf("errno_kept rank %d errno after Init %d Pcontrol %d Comm_split %d Allreduce %d "
           "Comm_free %d Pcontrol %d Finalize %d\n", rank, e[0], e[1], e[2], e[3], e[4], e[5],
           e[6]);
    known_result("errno_kept", rank, sum, sum == size * (size - 1) / 2);
    return 0;
}
