/*
 * The functions wrapped after comparing the list with the MPIs' exports
 * (issue 22, item 4), each called once per rank:
 *   MPI_Win_create_dynamic, MPI_Win_attach (64 ints), MPI_Win_detach, MPI_Win_free;
 *   on one shared file (extras.dat, MPI_COMM_WORLD, deleted on close):
 *   MPI_File_open, MPI_File_set_atomicity, MPI_File_set_info, MPI_File_seek,
 *   MPI_File_get_position, MPI_File_seek_shared, MPI_File_get_position_shared,
 *   MPI_File_get_size, MPI_File_close.
 */
#include <mpi.h>
#include "known.h"

int main(int argc, char **argv)
{
    int rank, ok = 1, mem[64];
    MPI_Win win;
    MPI_File fh;
    MPI_Offset pos = -1, shared = -1, size = -1;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    ok &= MPI_Win_attach(win, mem, sizeof mem) == MPI_SUCCESS;
    ok &= MPI_Win_detach(win, mem) == MPI_SUCCESS;
    MPI_Win_free(&win);
    MPI_File_open(MPI_COMM_WORLD, "extras.dat", MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE,
                  MPI_INFO_NULL, &fh);
    MPI_File_set_atomicity(fh, 1);
    MPI_File_set_info(fh, MPI_INFO_NULL);
    MPI_File_seek(fh, 16, MPI_SEEK_SET);
    MPI_File_get_position(fh, &pos);
    MPI_File_seek_shared(fh, 8, MPI_SEEK_SET);
    MPI_File_get_position_shared(fh, &shared);
    MPI_File_get_size(fh, &size);
    ok &= pos == 16 && shared == 8 && size == 0;
    MPI_File_close(&fh);
    known_result("rma_io_extras", rank, pos + shared, ok);
    MPI_Finalize();
    return 0;
}
