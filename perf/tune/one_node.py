"""`mpiscope tune` on one node, measured: the eager limit (both MPIs), core binding of an
oversubscribed unbound run, and the false-claim check (tunes of a run whose one candidate
cannot help: none may keep it).

    .venv/bin/python perf/tune/one_node.py [--runs 5] [--tunes 10] [--only eager,binding,aa]
        [-o perf/tune/one-node.json]

eager     tests/programs/late_receiver at 1.5x the eager limit (25 x 30 ms), bound ranks:
          the candidate raises the limit as diagnose says (Open MPI and MPICH)
binding   4 Open MPI ranks of tests/programs/omp_steps (20 steps, 1 thread) on this
          machine's cores, --bind-to none: the candidate binds with --bind-to
          core:overload-allowed
aa        the false-claim check: 2 bound Open MPI ranks of late_receiver below the eager
          limit (nothing to fix), and a candidate that changes nothing (a variable no
          program reads, written into the plan before the rounds: an A/A test); over
          --tunes tunes, how many keep it (the target: none)

Each tune is one `mpiscope tune --json --runs N` in a directory of its own; the JSON
written holds every result, the load average before and after, date and machine.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(REPO / "src")]

from mpiscope import native  # noqa: E402

ENV = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
       "OMPI_MCA_btl_vader_single_copy_mechanism": "none"}
EAGER = {"openmpi": (["mpirun.openmpi", "--bind-to", "core", "-n", "2"], 6144),
         "mpich": (["mpirun.mpich", "-bind-to", "core", "-n", "2"], 12288)}


def prog(impl: str, name: str) -> str:
    return str(native.program(impl, f"tests/{name}"))


def noop_plan(root: Path, launch: list[str]) -> None:
    """A tune directory whose plan holds one candidate that changes nothing: the same
    launch with a variable nothing reads. tune runs the probe and then the rounds."""
    cand = {"kind": "noop", "change": "MPISCOPE_TUNE_NOOP=1 (read by nothing)",
            "options": [], "drop": [], "env": {"MPISCOPE_TUNE_NOOP": "1"}, "order": None,
            "knobs": ["MPISCOPE_TUNE_NOOP"], "findings": [], "launch": launch,
            "launch_env": {"MPISCOPE_TUNE_NOOP": "1"}, "files": []}
    (root / "runs").mkdir(parents=True)
    (root / "files").mkdir()
    (root / "tune.json").write_text(json.dumps({
        "schema": "mpiscope-tune/1", "command": launch, "mpi": "openmpi", "cwd": str(root.parent),
        "candidates": [cand], "not_mechanical": [], "baseline_findings": []}))


def tune(work: Path, name: str, runs: int, launch: list[str], noop: bool = False) -> dict:
    if noop:
        noop_plan(work / name, launch)
    cmd = [sys.executable, "-m", "mpiscope.cli", "tune", "--json", "--runs", str(runs),
           "--dir", str(work / name), "--", *launch]
    env = {**os.environ, **ENV, "PYTHONPATH": str(REPO / "src")}
    t0 = time.monotonic()
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, cwd=work)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed:\n{proc.stderr}")
    res = json.loads(proc.stdout)
    out = {"name": name, "command": " ".join(launch), "seconds": time.monotonic() - t0,
           "baseline_s": res["baseline"]["time_s"],
           "candidates": [{k: c[k] for k in ("kind", "change", "time_s", "gain_pct", "ci_pct",
                                             "welch_ci_pct", "kept", "verdict", "pairs")}
                          for c in res["candidates"]]}
    for c in out["candidates"]:
        ci = c["ci_pct"]
        print(f"{name:>16} {c['kind']:>12}: gain {c['gain_pct']:+6.1f} % "
              f"[{ci[0]:+6.1f}, {ci[1]:+6.1f}] {c['verdict']}", flush=True)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--tunes", type=int, default=10)
    ap.add_argument("--only", default="eager,binding,aa")
    ap.add_argument("-o", "--output", default=str(REPO / "perf/tune/one-node.json"))
    args = ap.parse_args()
    if Path(args.output).exists():
        print(f"one_node.py: {args.output} exists; not overwriting it", file=sys.stderr)
        return 2
    only = set(args.only.split(","))
    load_before = os.getloadavg()
    results = {}
    with tempfile.TemporaryDirectory(prefix="tune-perf-") as tmp:
        work = Path(tmp)
        if "eager" in only:
            results["eager"] = [
                tune(work, f"eager-{impl}", args.runs,
                     [*launch, prog(impl, "late_receiver"), str(nbytes), "25", "30"])
                for impl, (launch, nbytes) in EAGER.items() if impl in native.available_impls()]
        if "binding" in only:
            results["binding"] = tune(work, "binding", args.runs, [
                "mpirun.openmpi", "--oversubscribe", "--bind-to", "none", "-n", "4",
                prog("openmpi", "omp_steps"), "20", "2000000"])
        if "aa" in only:
            aa = [tune(work, f"aa-{i}", args.runs, [
                "mpirun.openmpi", "--bind-to", "core", "-n", "2",
                prog("openmpi", "late_receiver"), "1024", "25", "30"], noop=True)
                for i in range(args.tunes)]
            results["aa"] = {"tunes": aa, "kept": sum(c["kept"] for t in aa
                                                      for c in t["candidates"])}
            print(f"false-claim check: {results['aa']['kept']} of {args.tunes} tunes kept a "
                  f"candidate", flush=True)
    doc = {"date": time.strftime("%Y-%m-%d %H:%M:%S %Z"), "machine": os.uname().nodename,
           "cores": os.cpu_count(), "load_before": load_before, "load_after": os.getloadavg(),
           "runs": args.runs, "command": " ".join(sys.argv), "results": results}
    Path(args.output).write_text(json.dumps(doc, indent=1) + "\n")
    print(f"wrote {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
