/*
 * sites_libmain.c - loads libsites_lib.so (its path: argv[1]) with dlopen
 * after reserving a rank-dependent amount of address space, so the library
 * lands at a different address on every rank whatever ASLR does, and prints
 * each rank's load address of the library ("base <rank> <hex>").
 *
 *   sites_libmain LIB [reps]
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>

int main(int argc, char **argv)
{
    int rank, reps = argc > 2 ? atoi(argv[2]) : 1;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    /* the next mapping goes below this one: a different gap per rank */
    size_t gap = (size_t)(rank + 1) * 64 * 1024 * 1024;
    void *hole = mmap(NULL, gap, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    void *lib = dlopen(argv[1], RTLD_NOW);
    if (!lib || hole == MAP_FAILED) {
        fprintf(stderr, "sites_libmain: %s\n", lib ? "mmap failed" : dlerror());
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    void (*work)(int) = (void (*)(int))dlsym(lib, "sites_lib_work");
    Dl_info info;
    dladdr((void *)work, &info);
    printf("base %d %p\n", rank, info.dli_fbase);
    work(reps);
    MPI_Barrier(MPI_COMM_WORLD); /* site:main_barrier */
    MPI_Finalize();
    return 0;
}
