"""sites_mpi4py.py - call sites of an mpi4py program (see sites.c): every
call line carries a "site:NAME" marker the test finds; the counts are fixed
by NAME.

    python sites_mpi4py.py [reps]
"""
import sys

import numpy as np
from mpi4py import MPI


def reduce_helper(comm, x, y, n):
    for _ in range(n):
        comm.Allreduce(x, y, op=MPI.SUM)  # site:helper


def main():
    reps = int(sys.argv[1]) if len(sys.argv) > 1 else 1
    comm = MPI.COMM_WORLD
    x, y = np.ones(1), np.zeros(1)
    for _ in range(3 * reps):
        comm.Allreduce(x, y, op=MPI.SUM)  # site:allreduce_a
    for _ in range(5 * reps):
        comm.Allreduce(x, y, op=MPI.SUM)  # site:allreduce_b
    for _ in range(7 * reps):
        comm.Bcast(x, root=0)  # site:bcast
    reduce_helper(comm, x, y, 2 * reps)  # site:helper_from_1
    reduce_helper(comm, x, y, 4 * reps)  # site:helper_from_2
    comm.Barrier()  # site:barrier
    if comm.Get_rank() == 0:
        print(f"sites_mpi4py: {comm.Get_size()} ranks, y = {y[0]:g}")


if __name__ == "__main__":
    main()
