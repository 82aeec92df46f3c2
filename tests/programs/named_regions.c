/*
 * Every argument is also a region name: for each argv[i] (i >= 1), in order,
 * MPI_Pcontrol(1, argv[i]); MPI_Barrier; MPI_Pcontrol(-1, argv[i]). For
 * names and arguments with quotes, markup, newlines, 300 bytes and bytes
 * that are not UTF-8 (tests/reliability/test_reliability_strings.py).
 */
#include <mpi.h>
#include "known.h"

int main(int argc, char **argv)
{
    int rank;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    for (int i = 1; i < argc; i++) {
        MPI_Pcontrol(1, argv[i]);
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Pcontrol(-1, argv[i]);
    }
    known_result("named_regions", rank, argc - 1, 1);
    MPI_Finalize();
    return 0;
}
