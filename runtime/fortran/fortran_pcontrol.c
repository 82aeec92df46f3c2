/*
 * fortran_pcontrol.c - MPI_Pcontrol from Fortran, with IPM's region names.
 *
 * IPM lets Fortran codes name regions with `call MPI_Pcontrol(1, "name")`
 * and `call MPI_Pcontrol(-1, "name")`. Through mpif.h (and MPICH's `use mpi`,
 * which has no explicit interface for it) that passes the level, the address
 * of the characters and, after the declared arguments, their length (gfortran
 * hidden-length convention). MPI_PCONTROL has no IERROR argument.
 *
 * RATIONALE: the same symbol is also called with the level alone (plain MPI,
 * and Open MPI's `use mpi` whose interface takes only the level); the name
 * and length registers then hold leftovers. So a name is believed only when
 * its length is plausible, its bytes can be read without faulting (copied
 * with mpiscope_safe_read, which fails instead of crashing) and they are
 * printable ASCII; anything else is a level without a name. mpi_f08's
 * interface takes only the level, so its symbol never looks for a name.
 *
 * Both MPIs' own Fortran MPI_Pcontrol drop the name (Open MPI calls
 * PMPI_Pcontrol, MPICH calls MPI_Pcontrol or, from mpi_f08, PMPI_Pcontrol with
 * the level only), so these symbols replace theirs on both.
 */
#define _GNU_SOURCE
#include "fortran_support.h"

#include "fortran_entry.h"
#include "../safe_read.h"

/* Longest region name taken from Fortran; longer "lengths" are leftovers. */
#define MPISCOPE_F_NAME_MAX 256

/* Copy a name that may not exist into buf; its length, or 0 if it is not a
 * readable printable name. */
static size_t mpiscope_f_region_name(const char *name, mpiscope_flen_t len, char *buf)
{
    if (name == NULL || len == 0 || len > MPISCOPE_F_NAME_MAX)
        return 0;
    if (!mpiscope_safe_read(buf, name, (size_t)len))
        return 0;
    for (size_t i = 0; i < len; i++)
        if ((unsigned char)buf[i] < 0x20 || (unsigned char)buf[i] > 0x7e)
            return 0;
    size_t n = len;
    while (n > 0 && buf[n - 1] == ' ')
        n--;
    return n;
}

static void mpiscope_f_pcontrol(MPI_Fint *level, const char *name, mpiscope_flen_t len)
{
    char buf[MPISCOPE_F_NAME_MAX];
    size_t n = mpiscope_f_region_name(name, len, buf);
    MPISCOPE_F_PCONTROL((int)*level, n ? buf : NULL, n);
}

static void mpiscope_f_pcontrol_f08(MPI_Fint *level)
{
    MPISCOPE_F_PCONTROL((int)*level, NULL, 0);
}

extern __typeof__(mpiscope_f_pcontrol) mpi_pcontrol_ __attribute__((alias("mpiscope_f_pcontrol")));
extern __typeof__(mpiscope_f_pcontrol) mpi_pcontrol__ __attribute__((alias("mpiscope_f_pcontrol")));
extern __typeof__(mpiscope_f_pcontrol) mpi_pcontrol __attribute__((alias("mpiscope_f_pcontrol")));
extern __typeof__(mpiscope_f_pcontrol) MPI_PCONTROL __attribute__((alias("mpiscope_f_pcontrol")));
extern __typeof__(mpiscope_f_pcontrol_f08) mpi_pcontrol_f08_
    __attribute__((alias("mpiscope_f_pcontrol_f08")));
