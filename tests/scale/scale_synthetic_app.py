"""A stand-in for an MPI program in scale tests: writes one synthetic profile whose
per-function costs follow known laws of P, into $MPISCOPE_DIR (as the runtime would).

    python3 scale_synthetic_app.py NP [--program NAME] [--fail-if PATH] [--noise SEED] [--env NAME]

Per rank: MPI_Allreduce  A + B log2 P,  compute  C / P,  MPI_Gather  D P.
"""

import math
import os
import sys

import numpy as np

from mpiscope import format as fmt
from mpiscope.testing import default_meta, records, write_profile

A, B, C, D = 2e-3, 1.5e-3, 4.0, 1e-3


def main(argv):
    n = int(argv[0])
    program = "/synthetic/solver"
    if "--program" in argv:
        program = argv[argv.index("--program") + 1]
    if "--env" in argv:  # what the point's program sees of its environment
        name = argv[argv.index("--env") + 1]
        print(f"{name}={os.environ.get(name, '(unset)')}")
    if "--fail-if" in argv and os.path.exists(argv[argv.index("--fail-if") + 1]):
        print("synthetic failure", file=sys.stderr)
        return 3
    scale = 1.0
    if "--noise" in argv:
        rng = np.random.default_rng(int(argv[argv.index("--noise") + 1]) * 1000 + n)
        scale = 1.0 + rng.normal(0, 0.01)
    allreduce = (A + B * math.log2(n)) * scale
    compute = C / n * scale
    gather = D * n * scale
    funcs = []
    for r in range(n):
        funcs.append(dict(rank=r, func=0, calls=10, time=allreduce))
        funcs.append(dict(rank=r, func=1, calls=1, time=gather))
    ranks = np.zeros(n, fmt.RANK)
    ranks["rank"] = np.arange(n)
    ranks["mpi"] = allreduce + gather
    ranks["wall"] = compute + allreduce + gather
    ranks["threads"] = 1
    meta = default_meta(["MPI_Allreduce", "MPI_Gather"], ["coll", "coll"],
                        program=program, argv=[program, str(n)], job_id=str(os.getpid()))
    out = os.environ.get("MPISCOPE_DIR", ".")
    write_profile(os.path.join(out, f"solver.{os.getpid()}.mpiscope"), nranks=n, meta=meta,
                  ranks=ranks, funcs=records(fmt.FUNC, funcs))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
