/*
 * An I/O-heavy code's habit: MPI_File_set_errhandler(MPI_FILE_NULL,
 * MPI_ERRORS_ARE_FATAL) (every later MPI_File_open uses MPI_FILE_NULL's
 * handler), then one MPI_Allreduce, MPI_Finalize, and exit code argv[1]
 * (default 3). The runtime's own profile I/O must not obey that handler: with
 * an unwritable profile directory the job still exits with the program's
 * code, and the runtime prints its one-line warning.
 */
#include <mpi.h>
#include <stdlib.h>
#include "known.h"

int main(int argc, char **argv)
{
    int rank, size, sum, code = argc > 1 ? atoi(argv[1]) : 3;
    MPI_Errhandler eh = MPI_ERRHANDLER_NULL;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_ARE_FATAL);
    MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_File_get_errhandler(MPI_FILE_NULL, &eh);
    known_result("file_errors_fatal", rank, sum, sum == size * (size - 1) / 2 && eh == MPI_ERRORS_ARE_FATAL);
    MPI_Finalize();
    return code;
}
