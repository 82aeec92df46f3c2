/* regions.c: IPM-style MPI_Pcontrol regions for the Fortran pcg.
 *
 * RATIONALE: the Fortran binding of MPI_Pcontrol is MPI_PCONTROL(LEVEL) only
 * (`use mpi` and `use mpi_f08` give it an explicit one-argument interface),
 * so a region name cannot be passed from Fortran portably. pcg calls this
 * shim, which calls the C MPI_Pcontrol(level, name) the profiler wraps. */
#include <mpi.h>

void pcg_region(int level, const char *name)
{
    MPI_Pcontrol(level, name);
}
