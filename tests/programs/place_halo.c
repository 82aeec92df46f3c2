/* place_halo: where every rank runs, then a halo exchange of known traffic, so a
 * test can check both that a rank order was applied (each rank's host and core)
 * and that the off-node traffic the profile measured is what `mpiscope place
 * evaluate` predicts for that order.
 *
 *   place_halo PX PY BYTES STEPS
 *
 * Prints (rank 0, gathered so lines do not interleave) one line per rank,
 * "whereami <rank> <host> <cpu> <bound_cpus>" as place_whereami does, then runs
 * STEPS steps of a 5-point non-periodic halo exchange on a PX x PY grid of ranks
 * numbered row-major (rank = x * PY + y, grid_order's -R): each step every rank
 * sends one message of BYTES bytes to each neighbour that exists (MPI_Isend /
 * MPI_Irecv / MPI_Waitall), so rank r sends STEPS messages of BYTES to each of
 * its 2-4 neighbours and nothing else point-to-point. Last line:
 * "place_halo ok" if every received byte was the value its sender wrote. */
#define _GNU_SOURCE
#include <mpi.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define LINE 512

static void whereami(int rank, int size)
{
    char line[LINE], host[256], cpus[256] = "";
    cpu_set_t mask;
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
    char *all = rank == 0 ? malloc((size_t)size * LINE) : NULL;
    MPI_Gather(line, LINE, MPI_CHAR, all, LINE, MPI_CHAR, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        for (int r = 0; r < size; r++)
            printf("%s\n", all + (size_t)r * LINE);
        fflush(stdout);
        free(all);
    }
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc != 5) {
        if (rank == 0) fprintf(stderr, "usage: place_halo PX PY BYTES STEPS\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int px = atoi(argv[1]), py = atoi(argv[2]), bytes = atoi(argv[3]), steps = atoi(argv[4]);
    if (px * py != size || bytes < 1 || steps < 0) {
        if (rank == 0) fprintf(stderr, "place_halo: %d x %d is not %d ranks\n", px, py, size);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    whereami(rank, size);

    int x = rank / py, y = rank % py, nb[4], n = 0;
    if (x > 0) nb[n++] = rank - py;
    if (x < px - 1) nb[n++] = rank + py;
    if (y > 0) nb[n++] = rank - 1;
    if (y < py - 1) nb[n++] = rank + 1;
    unsigned char *out = malloc((size_t)bytes), *in = malloc((size_t)bytes * 4);
    MPI_Request req[8];
    int ok = 1;
    for (int s = 0; s < steps; s++) {
        memset(out, (rank * 31 + s) & 0xff, (size_t)bytes);
        for (int i = 0; i < n; i++)
            MPI_Irecv(in + (size_t)i * bytes, bytes, MPI_BYTE, nb[i], s, MPI_COMM_WORLD, &req[i]);
        for (int i = 0; i < n; i++)
            MPI_Isend(out, bytes, MPI_BYTE, nb[i], s, MPI_COMM_WORLD, &req[n + i]);
        MPI_Waitall(2 * n, req, MPI_STATUSES_IGNORE);
        for (int i = 0; i < n; i++)
            for (int b = 0; b < bytes; b++)
                ok &= in[(size_t)i * bytes + b] == ((nb[i] * 31 + s) & 0xff);
    }
    int all_ok;
    MPI_Reduce(&ok, &all_ok, 1, MPI_INT, MPI_LAND, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("place_halo %s\n", all_ok ? "ok" : "FAILED");
    free(out);
    free(in);
    MPI_Finalize();
    return 0;
}
