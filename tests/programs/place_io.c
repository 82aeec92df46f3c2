/* place_io: which ranks really write a collectively written file, so a test can
 * check where the MPI library put its MPI-IO aggregators (two-phase I/O: a few
 * ranks gather the data and write it) against `mpiscope place aggregators`.
 *
 *   place_io PATH COUNT
 *
 * Every rank writes COUNT doubles with one MPI_File_write_at_all, interleaved
 * with the other ranks' (element i of rank r at file position i * size + r, a
 * vector file view), so the library must gather before writing: the ranks that
 * write to the file are its aggregators. Each rank reads write_bytes from
 * /proc/self/io (bytes this process caused to be written to storage, counted when
 * it dirties page-cache pages: file data only, not sockets, pipes or shared
 * memory) before MPI_File_open and after MPI_File_close. Rank 0 prints, one line
 * per rank,
 *     io <rank> <host> <write_bytes during the write>
 * then "place_io ok" if every byte read back is what its rank wrote. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define LINE 320

static long long write_bytes(void)
{
    char key[64];
    long long value, found = -1;
    FILE *f = fopen("/proc/self/io", "r");
    if (!f) return -1;
    while (fscanf(f, "%63s %lld", key, &value) == 2)
        if (strcmp(key, "write_bytes:") == 0) found = value;
    fclose(f);
    return found;
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc != 3 || atoi(argv[2]) < 1) {
        if (rank == 0) fprintf(stderr, "usage: place_io PATH COUNT\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int count = atoi(argv[2]);
    double *buf = malloc(sizeof(double) * (size_t)count);
    for (int i = 0; i < count; i++) buf[i] = rank * 1e6 + i;
    MPI_Datatype every_size;
    MPI_Type_vector(count, 1, size, MPI_DOUBLE, &every_size);
    MPI_Type_commit(&every_size);

    long long before = write_bytes();
    MPI_File fh;
    MPI_File_open(MPI_COMM_WORLD, argv[1], MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh);
    MPI_File_set_view(fh, (MPI_Offset)rank * sizeof(double), MPI_DOUBLE, every_size, "native",
                      MPI_INFO_NULL);
    MPI_File_write_at_all(fh, 0, buf, count, MPI_DOUBLE, MPI_STATUS_IGNORE);
    MPI_File_close(&fh);
    long long wrote = write_bytes() - before;

    /* Read back what every rank wrote (after every rank's close). */
    int ok = 1;
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_File_open(MPI_COMM_WORLD, argv[1], MPI_MODE_RDONLY, MPI_INFO_NULL, &fh);
    MPI_File_set_view(fh, (MPI_Offset)rank * sizeof(double), MPI_DOUBLE, every_size, "native",
                      MPI_INFO_NULL);
    memset(buf, 0, sizeof(double) * (size_t)count);
    MPI_File_read_at_all(fh, 0, buf, count, MPI_DOUBLE, MPI_STATUS_IGNORE);
    MPI_File_close(&fh);
    for (int i = 0; i < count; i++) ok &= buf[i] == rank * 1e6 + i;

    char line[LINE], host[256], *all = rank == 0 ? malloc((size_t)size * LINE) : NULL;
    gethostname(host, sizeof host);
    host[sizeof host - 1] = '\0';
    snprintf(line, LINE, "io %d %s %lld", rank, host, wrote);
    MPI_Gather(line, LINE, MPI_CHAR, all, LINE, MPI_CHAR, 0, MPI_COMM_WORLD);
    int all_ok;
    MPI_Reduce(&ok, &all_ok, 1, MPI_INT, MPI_LAND, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        for (int r = 0; r < size; r++) printf("%s\n", all + (size_t)r * LINE);
        printf("place_io %s\n", all_ok ? "ok" : "FAILED");
        free(all);
    }
    MPI_Type_free(&every_size);
    free(buf);
    MPI_Finalize();
    return 0;
}
