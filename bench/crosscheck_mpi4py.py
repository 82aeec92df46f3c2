#!/usr/bin/env python3
"""Cross-check `mpiscope bench p2p` and `collectives` with an independent timing loop.

The independent method: the same measurements written again in Python with
mpi4py (numpy buffers through the buffer interface, no pickling; MPI.Wtime
around every call after `skip` warm-up calls, summed per batch; separate send
and receive buffers; each collective call followed by an untimed barrier, as
OSU does; per-rank times reduced to min/avg/max with comm.gather). It shares no code with bench/*.c:
a different language, loop, buffer allocation and statistics code, so an
error in common.c or the kernels would show up as a disagreement. Python adds
roughly a microsecond per MPI call, which is visible at small sizes only.

    python3 bench/crosscheck_mpi4py.py [--np 2] [--max-size 1048576] [--repeats 3]

runs, in one go and interleaved `--repeats` times, `mpiscope bench p2p`,
`mpiscope bench collectives` and this file under the launcher in worker mode,
and prints Markdown tables of both figures side by side: the fastest of
`--batches` batches (both methods split their timed calls the same way) and
the mean over all timed calls (OSU's number), each the minimum over repeats. mpi4py must be built against the launcher's MPI
(scripts/setup.sh: MPICC=mpicc.openmpi pip install mpi4py).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

COLLECTIVES = ("barrier", "bcast", "allreduce", "alltoall")


def sizes_upto(max_size: int, min_size: int = 1) -> list[int]:
    out, s = [], min_size
    while s <= max_size:
        out.append(s)
        s *= 2
    return out


def iters_for(size: int, a) -> tuple[int, int]:
    return (a.iters_large, a.skip_large) if size > a.large_size else (a.iters, a.skip)


def worker(a) -> None:
    import numpy as np
    from mpi4py import MPI

    comm = MPI.COMM_WORLD
    rank, nranks = comm.Get_rank(), comm.Get_size()
    out: dict = {"p2p": [], "collectives": []}

    def stats(value: float) -> dict | None:
        vals = comm.gather(value, root=0)
        if rank:
            return None
        return {"min": min(vals), "avg": sum(vals) / len(vals), "max": max(vals)}

    def timed(body, iters: int, skip: int, after=None) -> tuple[float, float]:
        """(mean over all timed calls, fastest batch's mean) of body() in seconds.

        Every call is timed on its own (OSU 7) and `after` (a barrier, for the
        collectives) runs untimed after each call, warm-up included."""
        batches = min(a.batches, iters)
        per = iters // batches
        for _ in range(skip):
            body()
            if after:
                after()
        total, best = 0.0, float("inf")
        for _ in range(batches):
            batch = 0.0
            for _ in range(per):
                t0 = MPI.Wtime()
                body()
                batch += MPI.Wtime() - t0
                if after:
                    after()
            total += batch
            best = min(best, batch / per)
        return total / (per * batches), best

    # separate send and receive buffers, written before use, as OSU and applications do
    sbuf = np.full(max(a.max_size, 1), ord("a"), dtype=np.uint8)
    rbuf = np.full(max(a.max_size, 1), ord("b"), dtype=np.uint8)
    for size in sizes_upto(a.max_size):
        iters, skip = iters_for(size, a)
        sview, rview = sbuf[:size], rbuf[:size]
        comm.Barrier()
        if rank < 2:
            peer = 1 - rank
            if rank == 0:
                def body():
                    comm.Send(sview, dest=peer, tag=1)
                    comm.Recv(rview, source=peer, tag=1)
            else:
                def body():
                    comm.Recv(rview, source=peer, tag=1)
                    comm.Send(sview, dest=peer, tag=1)
            mean, best = timed(body, iters, skip)
        comm.Barrier()
        if rank == 0:
            out["p2p"].append({"size": size, "latency_us": mean / 2 * 1e6,
                               "latency_best_us": best / 2 * 1e6})

    send = np.ones(max(a.max_size, 8) * nranks // 8, dtype=np.float64)
    recv = np.zeros_like(send)
    sendb, recvb = send.view(np.uint8), recv.view(np.uint8)
    calls = {
        "barrier": lambda n: comm.Barrier(),
        "bcast": lambda n: comm.Bcast(sendb[:n], root=0),
        "allreduce": lambda n: comm.Allreduce(send[:n // 8], recv[:n // 8], op=MPI.SUM),
        "alltoall": lambda n: comm.Alltoall(sendb[:n * nranks], recvb[:n * nranks]),
    }
    for op in COLLECTIVES:
        for size in ([0] if op == "barrier" else sizes_upto(a.max_size, 8)):
            iters, skip = iters_for(size, a)
            fn = calls[op]
            comm.Barrier()
            # OSU: each call followed by an untimed barrier (barrier: back to back)
            mean, best = timed(lambda: fn(size), iters, skip,
                               None if op == "barrier" else comm.Barrier)
            st, st_best = stats(mean * 1e6), stats(best * 1e6)
            if rank == 0:
                out["collectives"].append({"op": op, "size": size, "comm_size": nranks,
                                           "time_us": st, "time_best_us": st_best})
    if rank == 0:
        print(json.dumps(out))


def run(cmd: list[str], env: dict) -> str:
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=1800)
    if proc.returncode:
        sys.exit(f"crosscheck: {' '.join(cmd)} failed ({proc.returncode}):\n{proc.stderr[-2000:]}")
    return proc.stdout


def fmt(v: float) -> str:
    return f"{v:.3g}" if v < 100 else f"{v:,.0f}"


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--np", type=int, default=2)
    p.add_argument("--launcher", default="mpirun.openmpi")
    p.add_argument("--max-size", type=int, default=1 << 20)
    p.add_argument("--iters", type=int, default=2000)
    p.add_argument("--skip", type=int, default=200)
    p.add_argument("--iters-large", type=int, default=200)
    p.add_argument("--skip-large", type=int, default=20)
    p.add_argument("--large-size", type=int, default=8192)
    p.add_argument("--batches", type=int, default=10)
    p.add_argument("--repeats", type=int, default=3, help="interleaved repeats of each method")
    p.add_argument("--save", type=Path, help="also keep the mpiscope results here (directory)")
    a = p.parse_args()
    if a.worker:
        worker(a)
        return
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    launcher = [a.launcher, "-n", str(a.np)]
    common = ["--max-size", str(a.max_size), "--iters", str(a.iters), "--skip", str(a.skip),
              "--iters-large", str(a.iters_large), "--skip-large", str(a.skip_large),
              "--large-size", str(a.large_size), "--batches", str(a.batches)]
    outdir = a.save or Path(tempfile.mkdtemp(prefix="crosscheck-"))
    outdir.mkdir(parents=True, exist_ok=True)
    mpiscope = [sys.executable, "-m", "mpiscope.cli", "bench"]
    # Interleaved repeats; each number printed is the minimum over repeats, so a repeat
    # disturbed by other load on a shared machine does not count.
    ours_runs, coll_runs, py_runs = [], [], []
    for rep in range(a.repeats):
        p2p_json = outdir / f"crosscheck-p2p-{rep}.json"
        coll_json = outdir / f"crosscheck-collectives-{rep}.json"
        run(mpiscope + ["p2p", "--tests", "latency", "--min-size", "1", *common,
                        "-o", str(p2p_json), "--force",
                        "--", *launcher], env)
        run(mpiscope + ["collectives", "--ops", ",".join(COLLECTIVES), "--comm-sizes",
                        str(a.np), *common, "-o", str(coll_json), "--force", "--", *launcher], env)
        py_runs.append(json.loads(run(launcher + [sys.executable, __file__, "--worker"] + common,
                                      env).strip().splitlines()[-1]))
        ours_runs.append(json.loads(p2p_json.read_text()))
        coll_runs.append(json.loads(coll_json.read_text()))
    ours = ours_runs[0]
    lib = ours["mpi"]["library_version"].splitlines()[0].split(",")[0]
    load = ours["machine"].get("load_average")
    print(f"## p2p, {a.np} ranks, {lib}, {ours['machine']['cpu_model']}, load average at "
          f"start {load}")

    def table(title, ours_key, theirs_key):
        mine, theirs = {}, {}
        for res in ours_runs:
            for r in res["rows"]:
                if r.get("table") == "p2p" and r.get("pairs") == 1:
                    mine.setdefault(r["size"], []).append(r[f"{ours_key}_avg"])
        for res in py_runs:
            for r in res["p2p"]:
                theirs.setdefault(r["size"], []).append(r[theirs_key])
        print(f"\n### {title}\n")
        print("| size | mpiscope latency (us) | mpi4py latency (us) | mpiscope MB/s | "
              "mpi4py MB/s | mpi4py / mpiscope |")
        print("|---:|---:|---:|---:|---:|---:|")
        for size in sorted(theirs):
            m, t = min(mine[size]), min(theirs[size])
            print(f"| {size} | {fmt(m)} | {fmt(t)} | {fmt(size / m)} | {fmt(size / t)} | "
                  f"{t / m:.2f} |")

    table("fastest batch (min over repeats)", "latency_best_us", "latency_best_us")
    table("mean over all timed iterations, OSU's number (min over repeats)", "latency_us",
          "latency_us")
    for which, ours_key in (("fastest batch", "time_best_us"), ("mean, OSU's number", "time_us")):
        print(f"\n## collectives, {a.np} ranks: {which}, average over ranks, min over "
              f"repeats (us)\n")
        print("| op | size | mpiscope | mpi4py | mpi4py / mpiscope |")
        print("|---|---:|---:|---:|---:|")
        mine_c, theirs_c = {}, {}
        for res in coll_runs:
            for r in res["rows"]:
                mine_c.setdefault((r["op"], r["size"]), []).append(r[f"{ours_key}_avg"])
        for res in py_runs:
            for r in res["collectives"]:
                theirs_c.setdefault((r["op"], r["size"]), []).append(r[ours_key]["avg"])
        for key in theirs_c:
            if key in mine_c:
                m, t = min(mine_c[key]), min(theirs_c[key])
                print(f"| {key[0]} | {key[1]} | {fmt(m)} | {fmt(t)} | {t / m:.2f} |")

if __name__ == "__main__":
    main()
