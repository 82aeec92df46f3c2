/*
 * MPI_Pcontrol region names from every kind of memory the runtime reads them
 * from (runtime/safe_read.c: directly where the bytes are certainly mapped,
 * else through process_vm_readv). Every rank, in order, each region holding
 * one MPI_Barrier:
 *   "literal"  a string literal (the program's loaded segments)
 *   "heap"     a small malloc'd copy (the brk heap)
 *   "mapped"   a copy in a 1 MiB malloc (its own mmap: not the brk heap)
 *   "stack"    a copy in main's frame (the calling thread's stack)
 *   "edge"     a copy whose terminator is the last byte before a PROT_NONE page
 *   then a "name" of 64 'x' that runs into the PROT_NONE page with no
 *   terminator: not a name, so no region opens and its MPI_Barrier stays
 *   outside every region (as do the enter and the matching exit).
 */
#include <mpi.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "known.h"

static void region(const char *name)
{
    MPI_Pcontrol(1, name);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Pcontrol(-1, name);
}

int main(int argc, char **argv)
{
    int rank;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    long page = sysconf(_SC_PAGESIZE);

    region("literal");
    char *heap = strdup("heap");
    region(heap);
    char *big = malloc(1 << 20);
    strcpy(big + 4096, "mapped");
    region(big + 4096);
    char stack[8] = "stack";
    region(stack);
    char *two = mmap(NULL, (size_t)(2 * page), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    int ok = two != MAP_FAILED && mprotect(two + page, (size_t)page, PROT_NONE) == 0;
    if (ok) {
        memcpy(two + page - 5, "edge", 5);
        region(two + page - 5);
        memset(two + page - 64, 'x', 64);
        region(two + page - 64);
        munmap(two, (size_t)(2 * page));
    }
    free(big);
    free(heap);
    known_result("region_names", rank, 5, ok);
    MPI_Finalize();
    return 0;
}
