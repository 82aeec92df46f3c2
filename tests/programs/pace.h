/*
 * How the test programs plant time: spin() keeps the CPU busy (compute the
 * runtime sees as time outside MPI, CPU time that counts), nap_ms() sleeps
 * (time that stays planted when ranks share cores: an oversubscribed rank
 * still wakes on time, a spinning one waits for its turn).
 */
#ifndef MPISCOPE_TESTS_PACE_H
#define MPISCOPE_TESTS_PACE_H

#include <mpi.h>
#include <time.h>

/* Busy for `seconds` of wall time (MPI_Wtime). */
static inline void spin(double seconds)
{
    double t0 = MPI_Wtime();
    while (MPI_Wtime() - t0 < seconds)
        ;
}

/* Asleep for `ms` milliseconds, resumed after a signal; nothing for ms <= 0. */
static inline void nap_ms(double ms)
{
    if (ms <= 0)
        return;
    struct timespec ts = {(time_t)(ms / 1000), (long)((ms - 1000.0 * (long)(ms / 1000)) * 1e6)};
    while (nanosleep(&ts, &ts) != 0)
        ;
}

#endif
