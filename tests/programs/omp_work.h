/*
 * Real arithmetic for the OpenMP test programs (omp_steps.c, omp_truth_work.c): n
 * iterations shared by the rank's OpenMP threads, so threads that share a CPU take
 * longer. `step` varies the numbers from step to step.
 */
#ifndef MPISCOPE_TESTS_OMP_WORK_H
#define MPISCOPE_TESTS_OMP_WORK_H

static inline double work(long n, int step)
{
    double s = 0.0;
#pragma omp parallel for reduction(+ : s) schedule(static)
    for (long i = 0; i < n; i++) {
        double x = (double)((i * 2654435761u + (unsigned long)step) % 1000003u);
        s += x * 1e-9 / (1.0 + (double)(i % 7));
    }
    return s;
}

#endif
