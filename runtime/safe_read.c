/*
 * safe_read.c - copy bytes the program may not own (an MPI_Pcontrol region
 * name that may be a leftover register), without faulting and, where the
 * bytes are certainly mapped, without a system call.
 *
 * RATIONALE: process_vm_readv fails instead of faulting, but costs about a
 * microsecond in a VM (it pins the pages): pcg's four MPI_Pcontrol calls per
 * iteration spent 12 % of its run there. Bytes in the main program's loaded
 * segments (string literals), in the brk heap below its current end (a
 * Fortran `trim(name)//c_null_char` temporary) or on the calling thread's
 * stack above its current frame (a caller's buffer) stay mapped and
 * readable, so they are copied directly; anything else (another thread's
 * stack, an mmap'd arena, a dlopen'd library, garbage) still goes through
 * process_vm_readv.
 */
#define _GNU_SOURCE
#include <link.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "safe_read.h"

#define SAFE_SEGMENTS 16

typedef struct {
    uintptr_t lo, hi;
} safe_range_t;

static safe_range_t safe_exe[SAFE_SEGMENTS];   /* the main program's loaded segments */
static unsigned safe_nexe;
static uintptr_t safe_heap_lo;                 /* the brk heap's start, 0 if none */
static pthread_once_t safe_once = PTHREAD_ONCE_INIT;
static __thread uintptr_t safe_stack_lo, safe_stack_hi;   /* this thread's stack; hi 1: unknown */

static int safe_exe_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    (void)arg;
    for (unsigned i = 0; i < info->dlpi_phnum && safe_nexe < SAFE_SEGMENTS; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type == PT_LOAD && (ph->p_flags & PF_R) && ph->p_memsz > 0) {
            uintptr_t lo = (uintptr_t)info->dlpi_addr + (uintptr_t)ph->p_vaddr;
            safe_exe[safe_nexe++] = (safe_range_t){lo, lo + (uintptr_t)ph->p_memsz};
        }
    }
    return 1;     /* the first object is the main program: stop there */
}

static void safe_setup(void)
{
    dl_iterate_phdr(safe_exe_cb, NULL);
    FILE *f = fopen("/proc/self/maps", "r");
    if (!f)
        return;
    char line[512];
    unsigned long lo, hi;
    while (fgets(line, sizeof line, f))
        if (strstr(line, "[heap]") && sscanf(line, "%lx-%lx", &lo, &hi) == 2) {
            safe_heap_lo = (uintptr_t)lo;
            break;
        }
    fclose(f);
}

/* The top of the stack the frame is on, or 0 when the frame is not on this
 * thread's own stack (a coroutine's, a signal stack): the space between the
 * two may hold unmapped holes. */
static uintptr_t safe_stack_top(uintptr_t frame)
{
    if (!safe_stack_hi) {
        pthread_attr_t attr;
        void *addr;
        size_t size;
        safe_stack_hi = 1;
        if (pthread_getattr_np(pthread_self(), &attr) == 0) {
            if (pthread_attr_getstack(&attr, &addr, &size) == 0) {
                safe_stack_lo = (uintptr_t)addr;
                safe_stack_hi = (uintptr_t)addr + size;
            }
            pthread_attr_destroy(&attr);
        }
    }
    return frame >= safe_stack_lo && frame < safe_stack_hi ? safe_stack_hi : 0;
}

/* [p, p + len) lies in memory that stays mapped and readable. */
static int safe_known(uintptr_t p, size_t len)
{
    uintptr_t end = p + len;
    if (end < p)
        return 0;
    /* the stack from this frame up: every caller's frame is there */
    uintptr_t frame = (uintptr_t)__builtin_frame_address(0);
    if (p >= frame && end <= safe_stack_top(frame))
        return 1;
    pthread_once(&safe_once, safe_setup);
    /* glibc's sbrk(0) returns the cached break: no system call */
    if (safe_heap_lo && p >= safe_heap_lo && end <= (uintptr_t)sbrk(0))
        return 1;
    for (unsigned i = 0; i < safe_nexe; i++)
        if (p >= safe_exe[i].lo && end <= safe_exe[i].hi)
            return 1;
    return 0;
}

int mpiscope_safe_read(void *dst, const void *src, size_t len)
{
    if (!src)
        return 0;
    if (safe_known((uintptr_t)src, len)) {
        memcpy(dst, src, len);
        return 1;
    }
    struct iovec local = {dst, len}, remote = {(void *)src, len};
    return process_vm_readv(getpid(), &local, 1, &remote, 1, 0) == (ssize_t)len;
}
