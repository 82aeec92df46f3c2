/* safe_read.h - copy bytes the program may not own, never faulting (safe_read.c). */
#ifndef MPISCOPE_SAFE_READ_H
#define MPISCOPE_SAFE_READ_H

#include <stddef.h>

#pragma GCC visibility push(hidden)   /* internal: not exported (mpiscope.h) */

/* Copy len bytes from src to dst: 1 if all of them were readable, 0 if not
 * (dst then holds nothing useful). */
int mpiscope_safe_read(void *dst, const void *src, size_t len);

#pragma GCC visibility pop

#endif
