/*
 * MPI-IO on one shared file (argv[1], default "mpiio.dat" in the current
 * directory; removed at the end by rank 0 with MPI_File_delete). P = size, r = rank:
 *   MPI_File_open (collective, create) ; MPI_File_write_at_all 16 ints at r*64;
 *   MPI_File_sync; MPI_File_read_at 16 ints of left's block (independent);
 *   MPI_File_write_at 8 ints at P*64 + r*32 (independent); MPI_File_sync;
 *   MPI_File_read_at_all 8 ints of right's independent block; MPI_File_close.
 * MPI_File_sync is collective, so each rank's reads see the other ranks' writes.
 */
#include <mpi.h>
#include "known.h"

int main(int argc, char **argv)
{
    int rank, size, ok = 1, out[16], in[16], n;
    long long check = 0;
    MPI_File fh;
    MPI_Status st;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int P = size, r = rank, left = (r - 1 + P) % P, right = (r + 1) % P;
    const char *path = argc > 1 ? argv[1] : "mpiio.dat";

    if (MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh)
        != MPI_SUCCESS) {
        known_result("mpiio", rank, 0, 0);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    for (int i = 0; i < 16; i++)
        out[i] = known_val(r, 1, i);
    MPI_File_write_at_all(fh, (MPI_Offset)r * 64, out, 16, MPI_INT, &st);
    MPI_Get_count(&st, MPI_INT, &n);
    ok &= n == 16;
    MPI_File_sync(fh);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_File_sync(fh);
    MPI_File_read_at(fh, (MPI_Offset)left * 64, in, 16, MPI_INT, &st);
    for (int i = 0; i < 16; i++)
        ok &= in[i] == known_val(left, 1, i), check += in[i];

    for (int i = 0; i < 8; i++)
        out[i] = known_val(r, 2, i);
    MPI_File_write_at(fh, (MPI_Offset)P * 64 + r * 32, out, 8, MPI_INT, MPI_STATUS_IGNORE);
    MPI_File_sync(fh);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_File_sync(fh);
    MPI_File_read_at_all(fh, (MPI_Offset)P * 64 + right * 32, in, 8, MPI_INT, &st);
    MPI_Get_count(&st, MPI_INT, &n);
    ok &= n == 8;
    for (int i = 0; i < 8; i++)
        ok &= in[i] == known_val(right, 2, i), check += in[i];
    MPI_File_close(&fh);
    MPI_Barrier(MPI_COMM_WORLD);
    if (r == 0)
        MPI_File_delete(path, MPI_INFO_NULL);
    known_result("mpiio", rank, check, ok);
    MPI_Finalize();
    return 0;
}
