/*
 * passthrough.c - the least a PMPI tool can do: wrappers that only call
 * PMPI_X, for the operations perf/overhead/overhead.c times. Preloading it
 * shows what interposition alone costs, next to what libmpiscope adds.
 */
#include <mpi.h>

int MPI_Iprobe(int source, int tag, MPI_Comm comm, int *flag, MPI_Status *status)
{
    return PMPI_Iprobe(source, tag, comm, flag, status);
}

int MPI_Comm_rank(MPI_Comm comm, int *rank)
{
    return PMPI_Comm_rank(comm, rank);
}

int MPI_Send(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm)
{
    return PMPI_Send(buf, count, datatype, dest, tag, comm);
}

int MPI_Recv(void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
             MPI_Status *status)
{
    return PMPI_Recv(buf, count, datatype, source, tag, comm, status);
}

int MPI_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                  MPI_Comm comm)
{
    return PMPI_Allreduce(sendbuf, recvbuf, count, datatype, op, comm);
}
