"""Do `mpiscope bench` kernels give the OSU micro-benchmarks' numbers?  Alternating runs.

    python3 perf/bench_accuracy/run.py [--mpi openmpi] [--runs 5] [--scale 1]
                                       [-o perf/bench_accuracy/results-openmpi.json]

writes the JSON and, beside it, the same as markdown tables (.md).

For each method the kernel (through `mpiscope bench`, as a user runs it) and
the OSU-method reference `bench/osu_method.c` (a minimal implementation of the
OSU micro-benchmarks' documented method, sharing no code with the kernels) run
alternately, `--runs` times each, 2 ranks on one node: p2p latency (0 B ..
4 MiB, osu_latency), windowed bandwidth (1 B .. 4 MiB, osu_bw), bidirectional
bandwidth (osu_bibw), and the six collectives (1 B .. 1 MiB; 2 ranks). Per size
the median over runs of each side's OSU number (the mean over all timed
iterations) is compared: ratio = kernel / reference. Targets (issue 18): p2p
latency and windowed bandwidth within 5 % at every size, collectives within
10 %. The fastest-batch medians are recorded beside them (less disturbed by
other load). `--control` runs the reference a second time in each round
(kernel, reference, reference again): the reference against itself is the
noise floor of this machine, the smallest difference the comparison can
resolve, and is reported beside every ratio. `--per-size` (p2p methods)
launches each side once per message size and alternates size by size, so
the two numbers of a ratio are taken seconds apart, not a sweep apart: on a
machine whose speed drifts over tens of seconds this is the fairer pairing. `--scale 0.1` divides every iteration count by 10 on both sides
(a quick look on a loaded machine; the result records it). The load average
before and after is recorded: on a busy machine the means measure the other
jobs as much as MPI, and the ratios say how much.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "src"))

from mpiscope import native  # noqa: E402

# OSU's counts (osu_util.h): (iters, skip, iters_large, skip_large), large above 8 KiB.
COUNTS = {"latency": (10000, 100, 1000, 10), "bw": (100, 10, 20, 2), "bibw": (100, 10, 20, 2),
          "coll": (1000, 100, 100, 10)}
OPS = ("barrier", "bcast", "reduce", "allreduce", "allgather", "alltoall")
TARGET = {"latency": 0.05, "bw": 0.05, "bibw": None, "coll": 0.10}


def env() -> dict:
    e = dict(os.environ)
    e.update({"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
              "OMPI_MCA_btl_vader_single_copy_mechanism": "none",
              "PYTHONPATH": str(REPO / "src") + os.pathsep + e.get("PYTHONPATH", "")})
    return e


def launcher(mpi: str) -> list[str]:
    if mpi == "openmpi":
        return ["mpirun.openmpi", "--bind-to", "core", "-n", "2"]
    return ["mpirun.mpich", "-n", "2"]


def counts(kind: str, scale: float) -> tuple[int, int, int, int]:
    return tuple(max(5 if i % 2 == 0 else 1, round(c * scale)) for i, c in enumerate(COUNTS[kind]))


def run(cmd: list[str], timeout: float = 3600) -> str:
    proc = subprocess.run(cmd, env=env(), capture_output=True, text=True, timeout=timeout)
    if proc.returncode != 0:
        raise SystemExit(f"failed ({proc.returncode}): {' '.join(cmd)}\n{proc.stderr[-2000:]}")
    return proc.stdout


def kernel(mpi: str, test: str, scale: float, tmp: Path,
           size: int | None = None) -> dict[tuple, tuple[float, float]]:
    """{(op, size): (OSU mean, fastest batch)} from one `mpiscope bench` run (one size if given)."""
    out = tmp / "k.json"
    if test == "coll":
        it, sk, itl, skl = counts("coll", scale)
        args = ["collectives", "--comm-sizes", "2", "--max-size", "1M", "--iters", str(it),
                "--skip", str(sk), "--iters-large", str(itl), "--skip-large", str(skl)]
    else:
        lit, lsk, litl, lskl = counts("latency", scale)
        bit, bsk, bitl, bskl = counts("bw", scale)
        args = ["p2p", "--locality", "on-node", "--tests", test, "--max-size", "4M",
                "--iters", str(lit), "--skip", str(lsk), "--iters-large", str(litl),
                "--skip-large", str(lskl), "--bw-iters", str(bit), "--bw-skip", str(bsk),
                "--bw-iters-large", str(bitl), "--bw-skip-large", str(bskl)]
        if size is not None:
            args += ["--min-size", str(size), "--max-size", str(size)]
    run([sys.executable, "-m", "mpiscope.cli", "bench", *args, "-o", str(out), "--force",
         "--", *launcher(mpi)])
    res = json.loads(out.read_text())
    got = {}
    for r in res["rows"]:
        if test == "coll":
            got[(r["op"], r["size"])] = (r["time_us_avg"], r["time_best_us_avg"])
        elif test == "latency":
            got[("latency", r["size"])] = (r["latency_us_avg"], r["latency_best_us_avg"])
        else:
            got[(test, r["size"])] = (r["bandwidth_MBps_avg"], r["bandwidth_best_MBps_avg"])
    return got


def reference(mpi: str, test: str, scale: float,
              size: int | None = None) -> dict[tuple, tuple[float, float]]:
    prog = str(native.program(mpi, "bench-reference/osu_method"))
    got = {}
    for op in (OPS if test == "coll" else (test,)):
        it, sk, itl, skl = counts(test if test != "bibw" else "bw", scale)
        lo, hi = ("0", str(4 << 20)) if test == "latency" else \
            ("1", str(1 << 20 if test == "coll" else 4 << 20))
        if size is not None:
            lo = hi = str(size)
        if op == "barrier":
            lo = hi = "0"
        out = run([*launcher(mpi), prog, op, lo, hi, str(it), str(sk), str(itl), str(skl)])
        for line in out.splitlines():
            f = line.split()
            if len(f) == 3 and f[0].isdigit():
                got[(op, int(f[0]))] = (float(f[1]), float(f[2]))
    return got


def fmt(v: float | None) -> str:
    if v is None:
        return "-"
    return f"{v:.3g}" if abs(v) < 1000 else f"{v:,.0f}"


def markdown(report: dict) -> str:
    """The report as the tables docs/performance.md shows."""
    out = [f"{report['mpi']}, `{' '.join(report['launcher'])}`, {report['runs']} alternating "
           f"runs per side, iteration counts x {report['scale']:g} of OSU's, started "
           f"{report['started']}, load average {report['load_before'][0]} before and "
           f"{report['load_after'][0]} after, {report['seconds']:.0f} s."]
    for test, t in report["tests"].items():
        tol = f"within {t['tolerance'] * 100:.0f} %" if t["tolerance"] is not None else "no target"
        out.append(f"\n### {test} ({t['unit']}; {tol}: {t['within']} of {t['of']})\n")
        if "control_within" in t:
            out.append(f"The reference against itself (the noise floor): {t['control_within']} "
                       f"of {t['of']} sizes {tol}.\n")
        ctl = "control" in t["rows"][0] if t["rows"] else False
        out.append("| op | size (B) | kernel, median of OSU means | reference | ratio | "
                   + ("reference again | control ratio | " if ctl else "")
                   + "kernel, median fastest batch | reference | ratio |")
        out.append("|---|---:|---:|---:|---:|---:|---:|---:|" + ("---:|---:|" if ctl else ""))
        for r in t["rows"]:
            extra = f"{fmt(r['control'])} | {fmt(r['control_ratio'])} | " if ctl else ""
            out.append(f"| {r['op']} | {r['size']} | {fmt(r['kernel'])} | {fmt(r['reference'])} | "
                       f"{fmt(r['ratio'])} | {extra}{fmt(r['kernel_best'])} | "
                       f"{fmt(r['reference_best'])} | {fmt(r['ratio_best'])} |")
    return "\n".join(out) + "\n"


def save(report: dict, out_path: Path, t0: float) -> None:
    report["seconds"] = round(time.time() - t0, 1)
    report["load_after"] = [round(x, 2) for x in os.getloadavg()]
    out_path.write_text(json.dumps(report, indent=1) + "\n")
    out_path.with_suffix(".md").write_text(markdown(report))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mpi", default="openmpi", choices=("openmpi", "mpich"))
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--scale", type=float, default=1.0)
    ap.add_argument("--tests", default="latency,bw,bibw,coll")
    ap.add_argument("--control", action="store_true",
                    help="run the reference twice per round: its ratio to itself is the noise floor")
    ap.add_argument("--per-size", action="store_true",
                    help="p2p: alternate the sides size by size (one launch per size) instead of "
                         "sweep by sweep, so that the two sides of a ratio run seconds apart")
    ap.add_argument("-o", "--output", type=Path)
    a = ap.parse_args()
    out_path = a.output or Path(__file__).with_name(f"results-{a.mpi}.json")
    load_before = os.getloadavg()
    t0 = time.time()
    report = {"mpi": a.mpi, "launcher": launcher(a.mpi), "runs": a.runs, "scale": a.scale,
              "control": a.control, "per_size": a.per_size,
              "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t0)),
              "load_before": [round(x, 2) for x in load_before], "tests": {}}
    with tempfile.TemporaryDirectory() as tmpdir:
        tmp = Path(tmpdir)
        for test in a.tests.split(","):
            ks, rs, cs = [], [], []
            sizes = [None]
            if a.per_size and test != "coll":
                sizes = ([0] if test == "latency" else []) + [1 << k for k in range(23)]
            for i in range(a.runs):  # alternate, so that load hits both sides alike
                k, r, c = {}, {}, {}
                for size in sizes:
                    k.update(kernel(a.mpi, test, a.scale, tmp, size))
                    r.update(reference(a.mpi, test, a.scale, size))
                    if a.control:
                        c.update(reference(a.mpi, test, a.scale, size))
                ks.append(k)
                rs.append(r)
                if a.control:
                    cs.append(c)
                print(f"{test}: run {i + 1}/{a.runs} done (load {os.getloadavg()[0]:.1f})",
                      file=sys.stderr)
            rows = []
            for key in sorted(set(ks[0]) & set(rs[0]), key=lambda k: (k[0], k[1])):
                km = statistics.median(k[key][0] for k in ks)
                rm = statistics.median(r[key][0] for r in rs)
                kb = statistics.median(k[key][1] for k in ks)
                rb = statistics.median(r[key][1] for r in rs)
                rows.append({"op": key[0], "size": key[1], "kernel": km, "reference": rm,
                             "ratio": km / rm if rm else None, "kernel_best": kb,
                             "reference_best": rb, "ratio_best": kb / rb if rb else None})
                if cs:
                    cm = statistics.median(c[key][0] for c in cs)
                    rows[-1].update(control=cm, control_ratio=cm / rm if rm else None)
            tol = TARGET[test]
            misses = [r for r in rows if tol is not None and r["ratio"] is not None
                      and abs(r["ratio"] - 1) > tol]
            report["tests"][test] = {"unit": "MB/s" if test in ("bw", "bibw") else "us",
                                     "tolerance": tol, "rows": rows,
                                     "within": len(rows) - len(misses), "of": len(rows)}
            if cs:
                report["tests"][test]["control_within"] = sum(
                    1 for r in rows if tol is None or (r["control_ratio"] is not None
                                                       and abs(r["control_ratio"] - 1) <= tol))
            print(f"{test}: {len(rows) - len(misses)}/{len(rows)} sizes within "
                  f"{tol if tol is not None else '-'}", file=sys.stderr)
            save(report, out_path, t0)  # after each method: a long run keeps what it has
    save(report, out_path, t0)
    print(out_path)


if __name__ == "__main__":
    main()
