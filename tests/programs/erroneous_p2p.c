/*
 * The erroneous point-to-point calls a new user makes (issue 21), under
 * MPI_ERRORS_RETURN, to a real peer ((rank + 1) % P): MPI_Send and MPI_Isend
 * on MPI_COMM_NULL (MPI_ERR_COMM), MPI_Send to rank P + 5 of MPI_COMM_WORLD
 * (MPI_ERR_RANK). Each rank prints the three error classes. The runtime used
 * to crash on the first two (its rank translation built a group from the null
 * communicator) and to record the third as a message to peer P + 5.
 */
#include <mpi.h>
#include "known.h"

int main(int argc, char **argv)
{
    int rank, size, buf[4] = {0}, cls[3];
    MPI_Request req = MPI_REQUEST_NULL;
    MPI_Init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int rc[3] = {MPI_Send(buf, 4, MPI_INT, (rank + 1) % size, 0, MPI_COMM_NULL),
                 MPI_Isend(buf, 4, MPI_INT, (rank + 1) % size, 0, MPI_COMM_NULL, &req),
                 MPI_Send(buf, 4, MPI_INT, size + 5, 0, MPI_COMM_WORLD)};
    for (int i = 0; i < 3; i++)
        MPI_Error_class(rc[i], &cls[i]);
    known_result("erroneous_p2p", rank, cls[0] * 10000 + cls[1] * 100 + cls[2],
                 cls[0] == MPI_ERR_COMM && cls[1] == MPI_ERR_COMM && cls[2] == MPI_ERR_RANK &&
                 req == MPI_REQUEST_NULL);
    MPI_Finalize();
    return 0;
}
