/*
 * MPI-IO reads count what the status says was read. Each rank writes 2 ints
 * to its own file (MPI_COMM_SELF, short_read.<rank> in the working
 * directory), then asks for 100 ints at offset 0 and gets 2:
 *   MPI_File_write_at 2 ints (8 bytes sent);
 *   MPI_File_read_at 100 ints with a status: 8 bytes received;
 *   MPI_File_read_at 100 ints with MPI_STATUS_IGNORE: 8 bytes received;
 *   MPI_File_read (individual pointer at 0) 100 ints: 8 bytes; then at end of
 *     file, MPI_File_read 100 ints: 0 bytes;
 *   MPI_File_read_at_all 100 ints at offset 4: 4 bytes.
 * The file is closed and deleted.
 */
#include <mpi.h>
#include <stdio.h>
#include "known.h"

int main(int argc, char **argv)
{
    int rank, ok = 1, n = -1, two[2], in[100];
    char name[64];
    MPI_File fh;
    MPI_Status st;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    snprintf(name, sizeof name, "short_read.%d", rank);
    two[0] = known_val(rank, 1, 0);
    two[1] = known_val(rank, 1, 1);
    MPI_File_open(MPI_COMM_SELF, name, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh);
    MPI_File_write_at(fh, 0, two, 2, MPI_INT, &st);
    MPI_File_read_at(fh, 0, in, 100, MPI_INT, &st);
    MPI_Get_count(&st, MPI_INT, &n);
    ok &= n == 2 && in[1] == two[1];
    MPI_File_read_at(fh, 0, in, 100, MPI_INT, MPI_STATUS_IGNORE);
    MPI_File_read(fh, in, 100, MPI_INT, &st);
    MPI_Get_count(&st, MPI_INT, &n);
    ok &= n == 2;
    MPI_File_read(fh, in, 100, MPI_INT, &st);
    MPI_Get_count(&st, MPI_INT, &n);
    ok &= n == 0;
    MPI_File_read_at_all(fh, 4, in, 100, MPI_INT, &st);
    MPI_Get_count(&st, MPI_INT, &n);
    ok &= n == 1 && in[0] == two[1];
    MPI_File_close(&fh);
    MPI_File_delete(name, MPI_INFO_NULL);
    known_result("short_read", rank, two[1], ok);
    MPI_Finalize();
    return 0;
}
