/*
 * pthread_create.c - libmpiscope.so only: the C library's pthread_create,
 * interposed so that sampled compute (tables/sampling.c, docs/sampling.md)
 * reaches threads that never call MPI, such as OpenMP workers.
 *
 * RATIONALE:
 * - Only in the shared library: a fully static program linked with
 *   libmpiscope.a has no RTLD_NEXT to find the C library's definition.
 * - The call, its arguments and its result are the C library's own; a
 *   thread is routed through mpiscope_samples_thread_main only while
 *   MPISCOPE_SAMPLE asks for samples and outside MPI_Init and MPI calls
 *   (threads started there are the MPI's own). Without memory for the
 *   small start record the thread starts unsampled.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

#include "tables/sampling.h"

int pthread_create(pthread_t *thread, const pthread_attr_t *attr, void *(*fn)(void *), void *arg)
{
    static __typeof__(pthread_create) *next;
    int saved = errno;      /* the caller's errno is the C library's doing alone (dlsym sets it) */
    __typeof__(pthread_create) *call = __atomic_load_n(&next, __ATOMIC_ACQUIRE);
    if (!call) {
        call = (__typeof__(pthread_create) *)dlsym(RTLD_NEXT, "pthread_create");
        if (!call)
            return EAGAIN;
        __atomic_store_n(&next, call, __ATOMIC_RELEASE);
    }
    errno = saved;
    if (!fn || !mpiscope_samples_wants_thread())
        return call(thread, attr, fn, arg);
    mpiscope_thread_start_t *start = malloc(sizeof *start);
    errno = saved;
    if (!start)
        return call(thread, attr, fn, arg);
    start->fn = fn;
    start->arg = arg;
    int rc = call(thread, attr, mpiscope_samples_thread_main, start);
    if (rc != 0)
        free(start);
    return rc;
}
