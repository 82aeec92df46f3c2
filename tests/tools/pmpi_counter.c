/*
 * pmpi_counter.c - a classic PMPI tool written for tests/runtime/wrappers/test_runtime_stacking.py:
 * its wrappers count calls and call PMPI_<Name> themselves (as mpiP and IPM
 * do). Built as a shared library by the test and preloaded before or after
 * libmpiscope.so. At MPI_Finalize every rank prints one line
 *   pmpi_counter rank R: MPI_Init=1 MPI_Send=... MPI_Finalize=1
 */
#include <mpi.h>
#include <stdio.h>

enum { INIT, SEND, RECV, ISEND, IRECV, WAITALL, ALLREDUCE, BCAST, BARRIER, GATHER, NCOUNTED };
static const char *const names[NCOUNTED] = {
    "MPI_Init", "MPI_Send", "MPI_Recv", "MPI_Isend", "MPI_Irecv", "MPI_Waitall",
    "MPI_Allreduce", "MPI_Bcast", "MPI_Barrier", "MPI_Gather"};
static long counts[NCOUNTED];

int MPI_Init(int *argc, char ***argv)
{
    counts[INIT]++;
    return PMPI_Init(argc, argv);
}

int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    counts[INIT]++;
    return PMPI_Init_thread(argc, argv, required, provided);
}

int MPI_Send(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm)
{
    counts[SEND]++;
    return PMPI_Send(buf, count, type, dest, tag, comm);
}

int MPI_Recv(void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
             MPI_Status *status)
{
    counts[RECV]++;
    return PMPI_Recv(buf, count, type, source, tag, comm, status);
}

int MPI_Isend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
              MPI_Request *req)
{
    counts[ISEND]++;
    return PMPI_Isend(buf, count, type, dest, tag, comm, req);
}

int MPI_Irecv(void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
              MPI_Request *req)
{
    counts[IRECV]++;
    return PMPI_Irecv(buf, count, type, source, tag, comm, req);
}

int MPI_Waitall(int n, MPI_Request reqs[], MPI_Status statuses[])
{
    counts[WAITALL]++;
    return PMPI_Waitall(n, reqs, statuses);
}

int MPI_Allreduce(const void *sbuf, void *rbuf, int count, MPI_Datatype type, MPI_Op op,
                  MPI_Comm comm)
{
    counts[ALLREDUCE]++;
    return PMPI_Allreduce(sbuf, rbuf, count, type, op, comm);
}

int MPI_Bcast(void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm)
{
    counts[BCAST]++;
    return PMPI_Bcast(buf, count, type, root, comm);
}

int MPI_Barrier(MPI_Comm comm)
{
    counts[BARRIER]++;
    return PMPI_Barrier(comm);
}

int MPI_Gather(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
               MPI_Datatype rtype, int root, MPI_Comm comm)
{
    counts[GATHER]++;
    return PMPI_Gather(sbuf, scount, stype, rbuf, rcount, rtype, root, comm);
}

int MPI_Finalize(void)
{
    int rank = -1;
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    char line[512];
    int n = snprintf(line, sizeof line, "pmpi_counter rank %d:", rank);
    for (int i = 0; i < NCOUNTED; i++)
        n += snprintf(line + n, sizeof line - (size_t)n, " %s=%ld", names[i], counts[i]);
    printf("%s MPI_Finalize=1\n", line);
    fflush(stdout);
    return PMPI_Finalize();
}
