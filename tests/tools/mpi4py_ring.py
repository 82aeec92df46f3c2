"""An mpi4py program for tests/runtime/counting/test_runtime_python.py: STEPS rounds of one
ring Sendrecv of 16 doubles and one Allreduce of one double, per rank.

    python3 mpi4py_ring.py --steps N
"""

import sys

import numpy as np
from mpi4py import MPI

steps = int(sys.argv[sys.argv.index("--steps") + 1]) if "--steps" in sys.argv else 3
comm = MPI.COMM_WORLD
rank, size = comm.Get_rank(), comm.Get_size()
out, inp, total = np.full(16, float(rank)), np.empty(16), np.empty(1)
for _ in range(steps):
    comm.Sendrecv(out, dest=(rank + 1) % size, recvbuf=inp, source=(rank - 1) % size)
    comm.Allreduce(np.array([1.0]), total)
assert total[0] == size and inp[0] == (rank - 1) % size
if rank == 0:
    print(f"mpi4py_ring: {steps} steps on {size} ranks")
