/* The floor of any one-file MPI-IO profile writer, without mpiscope: one
 * collective MPI_File_open, one MPI_File_write_at_all of BYTES per rank, one
 * MPI_File_close, timed on the slowest rank. perf/run_finalize.sh runs it
 * beside the runtime so the two numbers come from the same machine state.
 *   mpiio_floor FILE BYTES */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    int bytes = argc > 2 ? atoi(argv[2]) : 1024;
    char *buf = calloc((size_t)bytes + 1, 1);
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    MPI_File fh;
    MPI_File_open(MPI_COMM_WORLD, argv[1], MPI_MODE_CREATE | MPI_MODE_EXCL | MPI_MODE_WRONLY,
                  MPI_INFO_NULL, &fh);
    MPI_File_write_at_all(fh, (MPI_Offset)rank * bytes, buf, bytes, MPI_BYTE, MPI_STATUS_IGNORE);
    MPI_File_close(&fh);
    double dt = MPI_Wtime() - t0, slowest;
    MPI_Reduce(&dt, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("floor %.6f\n", slowest);
    free(buf);
    MPI_Finalize();
    return 0;
}
