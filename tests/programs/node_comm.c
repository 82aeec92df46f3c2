/*
 * One communicator per node (issue 27 item 8, tests/cluster/test_cluster_slurm.py):
 * MPI_Comm_split_type(MPI_COMM_TYPE_SHARED) over the world, then on each node's
 * communicator one MPI_Allreduce (the node's lowest world rank, F) and F + 1
 * MPI_Barrier calls, so every node's row has counts of its own. Each rank prints
 * "node_comm: rank R first F size S".
 */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, first, size;
    MPI_Comm node;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Comm_size(node, &size);
    MPI_Allreduce(&rank, &first, 1, MPI_INT, MPI_MIN, node);
    for (int i = 0; i <= first; i++)
        MPI_Barrier(node);
    printf("node_comm: rank %d first %d size %d\n", rank, first, size);
    MPI_Comm_free(&node);
    MPI_Finalize();
    return 0;
}
