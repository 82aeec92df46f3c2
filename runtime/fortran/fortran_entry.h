/*
 * fortran_entry.h - the runtime's C entry points the Fortran wrappers call
 * besides the C wrappers MPI_<Name> themselves.
 */
#ifndef MPISCOPE_FORTRAN_ENTRY_H
#define MPISCOPE_FORTRAN_ENTRY_H

#include <stddef.h>

/* MPI_Pcontrol with an explicit region name (name == NULL: no name given);
 * name holds len bytes, not NUL-terminated. */
int mpiscope_pcontrol(int level, const char *name, size_t len);
#define MPISCOPE_F_PCONTROL(level, name, len) ((void)mpiscope_pcontrol(level, name, len))

#endif
