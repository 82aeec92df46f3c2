/* place_whereami: every rank reports where it runs, so tests can check that a
 * rank order was applied: "whereami <rank> <host> <cpu> <bound_cpus>".
 * cpu is sched_getcpu() after MPI_Init (the launcher has bound the rank by
 * then); bound_cpus is the affinity mask as a comma list, so a test can tell a
 * binding from a coincidence. Output is gathered to rank 0 so lines do not
 * interleave. */
#define _GNU_SOURCE
#include <mpi.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define LINE 512

int main(int argc, char **argv)
{
    int rank, size;
    char line[LINE], host[256], cpus[256] = "";
    cpu_set_t mask;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    gethostname(host, sizeof host);
    host[sizeof host - 1] = '\0';
    CPU_ZERO(&mask);
    if (sched_getaffinity(0, sizeof mask, &mask) == 0) {
        size_t used = 0;
        for (int c = 0; c < CPU_SETSIZE && used + 8 < sizeof cpus; c++)
            if (CPU_ISSET(c, &mask))
                used += (size_t)snprintf(cpus + used, sizeof cpus - used, "%s%d", used ? "," : "", c);
    }
    snprintf(line, LINE, "whereami %d %s %d %s", rank, host, sched_getcpu(), cpus);

    char all[64][LINE];
    if (size <= 64) {
        MPI_Gather(line, LINE, MPI_CHAR, all, LINE, MPI_CHAR, 0, MPI_COMM_WORLD);
        if (rank == 0)
            for (int r = 0; r < size; r++)
                printf("%s\n", all[r]);
    } else {
        printf("%s\n", line);
    }
    MPI_Finalize();
    return 0;
}
