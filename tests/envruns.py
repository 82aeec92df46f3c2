"""The runs of the environment tests (runtime records, report, diagnose rules): 2 ranks of
tests/programs/omp_steps (OpenMP work + an 8-byte allreduce per step) and pingpong, launched
with and without binding, through explainruns.run_program (each run made once per process).
"""

from __future__ import annotations

import explainruns as er

N = 2
# 20 steps of OpenMP work: about 0.1-0.2 s of compute per rank on a free core.
OMP_STEPS = ("omp_steps", "20", "2000000")
TASKSET0 = ("taskset", "-c", "0")

BIND_CORE, BIND_NONE = er.BIND_CORE, er.BIND_NONE


def omp_env(threads: int) -> tuple[tuple[str, str], ...]:
    return (("OMP_NUM_THREADS", str(threads)),)


def bound(impl: str, threads: int = 1, n: int = N, **kw):
    """Each of n ranks bound to its own core, ``threads`` OpenMP threads per rank."""
    return er.run_program(impl, n, OMP_STEPS, launch=BIND_CORE[impl], env=omp_env(threads), **kw)


def unbound(impl: str, **kw):
    """No binding: every rank may run on both cores (one thread each)."""
    return er.run_program(impl, N, OMP_STEPS, launch=BIND_NONE[impl], env=omp_env(1), **kw)


def pinned_together(impl: str, **kw):
    """No binding by the launcher, but every rank started under taskset -c 0: both on core 0."""
    return er.run_program(impl, N, OMP_STEPS, launch=BIND_NONE[impl], wrap=TASKSET0,
                          env=omp_env(1), **kw)
