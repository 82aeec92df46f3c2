"""Does `mpiscope diagnose` tell the truth?  Each finding's claimed cost against what its fix
really gains, measured over alternating runs (issue 29).

    python3 perf/truth/truth.py [--runs 5] [--cases NAME,...] [--list]
                                [-o perf/truth/results.json]

writes the JSON and, beside it, the table as markdown (.md).

Each case is a program with a planted problem and its fixed twin: the new small programs of
tests/programs (omp_truth_work: CPU work of a fixed total at any rank count; truth_msgs:
messages split or packed, with planted lateness; truth_coll: two scalar allreduces per step
or one fused), the existing test programs (pingpong, diag_steps) and the mini-apps
(examples/). The problem runs under `mpiscope run`; its diagnosis gives the case's rule's
claim (cost as % of the run, whether it is a bound). The fix is the finding's own next
command where it is a rerun (the change it names: binding, fewer ranks, OpenMP threads, the
eager limit), else the case's twin (a code change: fused allreduces, packed messages,
balanced work, collective I/O). Problem and fix then run alternately (A B A B ...), each
under mpiscope so that both are timed the same way (the profile's run time: the longest
rank's MPI_Init return to MPI_Finalize), and the gain is 1 - median(B) / median(A).

A fix that removes calls also removes the profiler's own cost per call (the part of each
wrapper outside its clock, ~45 ns here), which a user's unprofiled run never paid: 248,000
fewer calls took 11 ms more off the profiled run of small-messages-latency than off the
plain one. For a case whose program times its own work (``own_seconds``, a pattern of its
output: truth_msgs prints "seconds=T", pcg its solver's time), problem and fix also run
alternately without mpiscope, and the verdict
compares the claim in seconds with that gain, as a share of the plain problem's time.

Verdicts (issue 29's targets): "false alarm" when the claim is >= 5 % and the gain < 2 %;
"ok" when the claim is within 0.5x-2x of the gain, or is labelled as a bound ("up to") and
the gain does not exceed it, or the finding gives a range ("~X, up to Y") the gain lies in; "missed" when the rule stays below 5 % while the fix gains 5 %
or more; "silent ok" when both are small; else "over" / "under". The load average before
and after each case is recorded: on a busy machine the other jobs' share of the CPUs moves
every CPU-bound number (the CPU rules price exactly that).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "src"))

from mpiscope import native, read  # noqa: E402
from mpiscope.diagnose import diagnose  # noqa: E402
from mpiscope.report import build_report  # noqa: E402

FALSE_ALARM_CLAIM, FALSE_ALARM_GAIN = 5.0, 2.0
LAUNCHER = {"openmpi": "mpirun.openmpi", "mpich": "mpirun.mpich"}
BIND = {"openmpi": ["--bind-to", "core"], "mpich": ["-bind-to", "core"]}


@dataclass
class Case:
    """A planted problem (``problem``) and its fix: ``fix`` launch words, or None to take the
    finding's own next command (``fix_from_finding``), falling back to ``fix``."""

    name: str
    rule: str
    impl: str
    problem: list[str]                       # launcher options + program + args
    fix: list[str] | None = None
    env: dict = field(default_factory=dict)  # for the problem (and the fix, unless fix_env)
    fix_env: dict | None = None
    fix_from_finding: bool = False
    hog: str | None = None                   # CPU list a busy process runs on during the problem
    fix_hog: bool = True                     # ... and during the fix
    what: str = ""
    own_seconds: str | None = None           # the program's own time in its output (a regex)


def prog(impl: str, name: str) -> str:
    return str(native.program(impl, name))


MSGS_SECONDS = r"seconds=([0-9.eE+-]+)"     # truth_msgs: its steps' time
PCG_SECONDS = r", ([0-9.]+) s$"             # pcg: its solver's time (ms resolution)


def cases() -> list[Case]:
    o, m = "openmpi", "mpich"
    work = lambda impl, *a: [prog(impl, "tests/omp_truth_work"), *a]  # noqa: E731
    msgs = lambda impl, *a: [prog(impl, "tests/truth_msgs"), *a]  # noqa: E731
    coll = lambda impl, *a: [prog(impl, "tests/truth_coll"), *a]  # noqa: E731
    one = {"OMP_NUM_THREADS": "1"}
    over = ["--oversubscribe"]
    return [
        Case("oversubscribed-unbound", "oversubscribed", o,
             over + ["--bind-to", "none", "-n", "4", *work(o, "20", "4e7")], env=one,
             fix_from_finding=True, fix=over + ["--bind-to", "none", "-n", "2", *work(o, "20", "4e7")],
             what="4 ranks on 2 CPUs, unbound; fix: the finding's (2 ranks, "
             "same total work)"),
        Case("oversubscribed-bound", "oversubscribed", o,
             over + ["--bind-to", "core:overload-allowed", "-n", "4", *work(o, "20", "4e7")],
             env=one, fix_from_finding=True,
             fix=over + ["--bind-to", "core:overload-allowed", "-n", "2", *work(o, "20", "4e7")],
             what="4 ranks on 2 CPUs, bound with "
             "overload-allowed (issue 29 item 1)"),
        Case("oversubscribed-openmp", "oversubscribed", o,
             BIND[o] + ["-n", "2", *work(o, "20", "4e7")], env={"OMP_NUM_THREADS": "2"},
             fix_from_finding=True, fix=BIND[o] + ["-n", "2", *work(o, "20", "4e7")], fix_env=one,
             what="2 ranks x 2 OpenMP threads on 2 CPUs, a core each"),
        Case("openmp-oversubscribed", "openmp-oversubscribed", o,
             BIND[o] + ["-n", "1", *work(o, "20", "2e7")], env={"OMP_NUM_THREADS": "2"},
             fix_from_finding=True, fix=["--map-by", "slot:PE=2", "--bind-to", "core", "-n", "1",
                                         *work(o, "20", "2e7")],
             what="1 rank x 2 threads on 1 core of a 2-CPU node; fix: "
             "the finding's (a core per thread)"),
        Case("openmp-threads-share", "openmp-oversubscribed", o,
             BIND[o] + ["-n", "1", *work(o, "20", "2e7")], env={"OMP_NUM_THREADS": "2"},
             fix=BIND[o] + ["-n", "1", *work(o, "20", "2e7")], fix_env=one,
             what="the same, fixed by OMP_NUM_THREADS=1 instead (issue 29 item 5's measurement: "
             "the rule's cost is for the finding's fix, so this is context, not a verdict)"),
        Case("unbound-contention", "unbound-ranks", o,
             ["--bind-to", "none", "-n", "2", *work(o, "20", "4e7")], env=one, hog="0-1",
             fix_from_finding=True, fix=BIND[o] + ["-n", "2", *work(o, "20", "4e7")], what="2 unbound ranks beside a busy process free to run on "
             "both CPUs; fix: the finding's (bound), the busy process still there"),
        Case("unbound-mpich", "unbound-ranks", m,
             ["-bind-to", "none", "-n", "2", *work(m, "20", "4e7")], env=one,
             fix_from_finding=True, fix=BIND[m] + ["-n", "2", *work(m, "20", "4e7")], what="MPICH, 2 unbound busy-polling ranks (issue 29 item 3)"),
        Case("cpu-overlap", "cpu-overlap", o,
             ["--bind-to", "none", "-n", "2", "taskset", "-c", "0", *work(o, "20", "4e7")],
             env=one, fix_from_finding=True, fix=BIND[o] + ["-n", "2", *work(o, "20", "4e7")],
             what="both ranks under taskset -c 0"),
        Case("cpu-starved", "cpu-starved", o, BIND[o] + ["-n", "2", *work(o, "20", "4e7")],
             env=one, hog="1", fix=BIND[o] + ["-n", "2", *work(o, "20", "4e7")], fix_hog=False,
             what="2 bound ranks, a busy process on CPU 1; fix: no busy process"),
        Case("compute-imbalance", "compute-imbalance", o,
             BIND[o] + ["-n", "2", *work(o, "20", "4e7", "3")],
             fix=BIND[o] + ["-n", "2", *work(o, "20", "4e7")], env=one,
             what="rank 0 does 3x rank 1's part; fix: even parts, same total"),
        Case("late-arrival", "late-arrival", o,
             BIND[o] + ["-n", "2", prog(o, "tests/diag_steps"), "40", "20000", "allreduce"],
             fix=BIND[o] + ["-n", "2", prog(o, "tests/diag_steps"), "40", "30000", "allreduce",
                            "even"],
             what="odd rank 40 ms, even 20 ms per step before an allreduce; fix: 30 ms each"),
        Case("barriers", "excessive-barriers", o,
             BIND[o] + ["-n", "2", prog(o, "tests/diag_steps"), "200", "300", "barrier"],
             fix=BIND[o] + ["-n", "2", prog(o, "tests/diag_steps"), "200", "300", "none"],
             what="a barrier after every uneven step, the same ranks late every step; fix: none"),
        Case("barriers-rotating", "excessive-barriers", o,
             BIND[o] + ["-n", "2", prog(o, "tests/diag_steps"), "200", "300", "barrier", "rotate"],
             fix=BIND[o] + ["-n", "2", prog(o, "tests/diag_steps"), "200", "300", "none",
                            "rotate"],
             what="a barrier after every uneven step, the late rank changing every step "
             "(without barriers the steps overlap: 1.5 x 300 us per step, not 2 x); fix: none"),
        Case("small-collectives-latency", "small-collectives", o,
             BIND[o] + ["-n", "2", *coll(o, "20000", "split", "0", "5")],
             fix=BIND[o] + ["-n", "2", *coll(o, "20000", "fused", "0", "5")],
             what="two 8-byte allreduces per 5 us step; fix: one 16-byte"),
        Case("small-collectives-waiting", "small-collectives", o,
             BIND[o] + ["-n", "2", *coll(o, "1000", "split", "1000", "100")],
             fix=BIND[o] + ["-n", "2", *coll(o, "1000", "fused", "1000", "100")],
             what="the same, the odd rank 1 ms late each step (waiting, not latency)"),
        # 30,000 iterations: at 3,000 the runs lasted 20-40 ms, and start-up noise spread
        # them over a factor of two (the ranges overlapped)
        Case("small-collectives-pcg", "small-collectives", o,
             BIND[o] + ["-n", "2", prog(o, "examples/pcg"), "--grid", "4x4", "--maxiter", "30000",
                        "--tol", "0", "--variant", "classic"],
             fix=BIND[o] + ["-n", "2", prog(o, "examples/pcg"), "--grid", "4x4", "--maxiter",
                            "30000", "--tol", "0", "--variant", "cg"],
             what="pcg classic CG vs Chronopoulos-Gear (mini-app)", own_seconds=PCG_SECONDS),
        Case("small-messages-latency", "small-messages", o,
             BIND[o] + ["-n", "2", *msgs(o, "2000", "16", "64", "split", "nonblocking", "0", "20")],
             fix=BIND[o] + ["-n", "2", *msgs(o, "2000", "16", "64", "packed", "nonblocking", "0",
                                             "20")],
             what="16 messages of 64 B per neighbour per step; fix: one of 1 KiB",
             own_seconds=MSGS_SECONDS),
        Case("small-messages-waiting", "small-messages", o,
             BIND[o] + ["-n", "2", *msgs(o, "500", "16", "64", "split", "blocking", "2000")],
             fix=BIND[o] + ["-n", "2", *msgs(o, "500", "16", "64", "packed", "blocking", "2000")],
             what="the same with blocking Sendrecv, the odd rank 2 ms late per step",
             own_seconds=MSGS_SECONDS),
        Case("eager-limit-hit", "eager-limit", o,
             BIND[o] + ["-n", "2", prog(o, "tests/pingpong"), "6000", "20000"],
             fix_from_finding=True,
             fix=BIND[o] + ["--mca", "btl_vader_eager_limit", "9216", "-n", "2",
                            prog(o, "tests/pingpong"), "6000", "20000"],
             what="ping-pong of 6000 B over a 4 KiB eager limit; fix: the finding's"),
        Case("eager-limit-mpich", "eager-limit", m,
             BIND[m] + ["-n", "2", prog(m, "tests/pingpong"), "12000", "5000"],
             fix_from_finding=True,
             fix=BIND[m] + ["-genv", "UCX_RNDV_THRESH", "17408", "-n", "2",
                            prog(m, "tests/pingpong"), "12000", "5000"],
             what="MPICH (ch4:ucx) ping-pong of 12000 B over UCX's 8 KiB; fix: the finding's"),
        Case("eager-limit-waiting", "eager-limit", o,
             BIND[o] + ["-n", "2", *msgs(o, "300", "1", "6000", "split", "blocking", "2000")],
             fix_from_finding=True,
             fix=BIND[o] + ["--mca", "btl_vader_eager_limit", "9216", "-n", "2",
                            *msgs(o, "300", "1", "6000", "split", "blocking", "2000")],
             what="6000 B Sendrecv after the odd rank is 2 ms late (BT-like: waiting, not "
             "protocol); fix: the limit raised"),
        Case("root-hotspot", "root-hotspot", o,
             BIND[o] + ["-n", "2", prog(o, "examples/zonal"), "--steps", "10", "--variant",
                        "gather"],
             fix=BIND[o] + ["-n", "2", prog(o, "examples/zonal"), "--steps", "10", "--variant",
                            "distributed"],
             what="zonal: every patch gathered to rank 0; fix: distributed"),
    ]


def run_env(extra: dict) -> dict:
    e = dict(os.environ)
    e.update({"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
              "PYTHONPATH": str(REPO / "src") + os.pathsep + e.get("PYTHONPATH", "")})
    e.update(extra)
    return e


class Hog:
    """A busy process on the given CPUs (another job), for the problem's runs."""

    def __init__(self, cpus: str | None):
        self.cpus, self.proc = cpus, None

    def __enter__(self):
        if self.cpus:
            self.proc = subprocess.Popen(["taskset", "-c", self.cpus, sys.executable, "-c",
                                          "while True: pass"])
            time.sleep(0.2)
        return self

    def __exit__(self, *exc):
        if self.proc:
            self.proc.kill()
            self.proc.wait()


def profiled(words: list[str], outdir: Path, env: dict, impl: str) -> tuple[float, object]:
    """Run ``mpiscope run`` on words (a full mpiscope command, or launch words); return the
    profile's run time and the profile."""
    outdir.mkdir(parents=True, exist_ok=True)
    if words[:2] == ["mpiscope", "run"]:
        cmd = [sys.executable, "-m", "mpiscope.cli", "run", "--dir", str(outdir), *words[2:]]
    else:
        cmd = [sys.executable, "-m", "mpiscope.cli", "run", "--mpi", impl, "--dir", str(outdir),
               "--", LAUNCHER[impl], *words]
    before = set(outdir.glob("*.mpiscope"))
    proc = subprocess.run(cmd, env=run_env(env), capture_output=True, text=True, timeout=900)
    new = sorted(set(outdir.glob("*.mpiscope")) - before)
    if proc.returncode != 0 or len(new) != 1:
        raise RuntimeError(f"{shlex.join(cmd)} exited {proc.returncode}\n{proc.stderr[-2000:]}")
    prof = read(str(new[0]))
    return float(prof.ranks["wall"].max()) if len(prof.ranks) else 0.0, prof


def plain_seconds(words: list[str], env: dict, impl: str, pattern: str) -> float:
    """The program's own time (``pattern``'s group in its stdout) of one run without
    mpiscope."""
    cmd = [LAUNCHER[impl], *words]
    proc = subprocess.run(cmd, env=run_env(env), capture_output=True, text=True, timeout=900)
    got = re.search(pattern, proc.stdout, re.MULTILINE)
    if proc.returncode != 0 or not got:
        raise RuntimeError(f"{shlex.join(cmd)} exited {proc.returncode}, no {pattern!r}\n"
                           f"{proc.stderr[-2000:]}")
    return float(got.group(1))


def claim_of(prof, rule: str) -> tuple[dict | None, list[dict]]:
    diag = diagnose(prof, build_report(prof))
    mine = next((f for f in diag["findings"] if f["rule"] == rule), None)
    return mine, diag["findings"]


def verdict(claim: float, bound: str | None, cost_max: float | None, gain: float) -> str:
    if claim >= FALSE_ALARM_CLAIM and gain < FALSE_ALARM_GAIN:
        return "false alarm"
    if claim < FALSE_ALARM_CLAIM:
        if gain >= FALSE_ALARM_CLAIM:
            if cost_max is not None and cost_max >= gain:
                return "ok (bound holds; --sync settles)"
            return "missed"
        return "silent ok"
    if bound == "upper" and gain <= claim * 1.0 + 1e-9:
        return "ok (bound holds)"
    if cost_max is not None and claim <= gain <= cost_max:
        return "ok (within its range)"   # "~claim, up to cost_max": the gain is in between
    ratio = claim / gain
    if 0.5 <= ratio <= 2.0:
        return "ok"
    return "over" if ratio > 2.0 else "under"


def loadavg() -> float:
    return float(Path("/proc/loadavg").read_text().split()[0])


def run_case(c: Case, runs: int, work: Path) -> dict:
    load0 = loadavg()
    with Hog(c.hog):
        t_a, prof = profiled(c.problem, work / "a0", c.env, c.impl)
    finding, found = claim_of(prof, c.rule)
    fix_words, how = c.fix, "twin"
    fix_env = c.env if c.fix_env is None else c.fix_env
    if c.fix_from_finding and finding and finding.get("command") and \
            finding.get("change") and finding["change"]["kind"] == "launch":
        fix_words, how = shlex.split(finding["command"]), "the finding's command"
    if fix_words is None:
        return {"case": c.name, "rule": c.rule, "impl": c.impl, "what": c.what,
                "claim_pct": finding["cost_pct"] if finding else 0.0,
                "verdict": "no fix to run (the rule did not fire and the case has no twin)",
                "fired": [f["rule"] for f in found], "load": [load0, loadavg()]}
    a, b = [t_a], []
    claims, claims_s = [finding["cost_pct"] if finding else 0.0], [finding["cost_s"] if finding else 0.0]
    for i in range(runs):
        t, _ = profiled(fix_words, work / f"b{i}", fix_env, c.impl) if not c.fix_hog else \
            _with_hog(c.hog, fix_words, work / f"b{i}", fix_env, c.impl)
        b.append(t)
        if i + 1 < runs:
            with Hog(c.hog):
                t, p = profiled(c.problem, work / f"a{i + 1}", c.env, c.impl)
            a.append(t)
            f, _ = claim_of(p, c.rule)
            claims.append(f["cost_pct"] if f else 0.0)
            claims_s.append(f["cost_s"] if f else 0.0)
    ma, mb = statistics.median(a), statistics.median(b)
    gain = 100.0 * (1.0 - mb / ma) if ma > 0 else 0.0
    claim = statistics.median(claims)
    bound = finding.get("bound") if finding else None
    cmax = finding.get("cost_max_pct") if finding else None
    fixed_found, _ = claim_of(read(str(next((work / "b0").glob("*.mpiscope")))), c.rule)
    plain = {}
    if c.own_seconds:
        pa, pb = [], []
        for _ in range(runs):
            pa.append(plain_seconds(c.problem, c.env, c.impl, c.own_seconds))
            pb.append(plain_seconds(fix_words, fix_env, c.impl, c.own_seconds))
        pma, pmb = statistics.median(pa), statistics.median(pb)
        plain = {"plain_a": pa, "plain_b": pb, "profiled_gain_pct": gain,
                 "profiled_claim_pct": claim}
        # the claim in seconds against the plain run's gain, both as a share of its time
        gain = 100.0 * (1.0 - pmb / pma) if pma > 0 else 0.0
        claim = 100.0 * statistics.median(claims_s) / pma if pma > 0 else 0.0
        cmax = None if cmax is None else 100.0 * finding["cost_max_s"] / pma
    return {**plain, "case": c.name, "rule": c.rule, "impl": c.impl, "what": c.what,
            "problem": shlex.join(c.problem), "fix": shlex.join(fix_words), "fix_is": how,
            "runs_a": a, "runs_b": b, "claims_pct": claims, "claim_pct": claim,
            "bound": bound, "cost_max_pct": cmax, "gain_pct": gain,
            "ratio": claim / gain if gain > 0 else None,
            "verdict": verdict(claim, bound, cmax, gain),
            "fixed_twin_fires": fixed_found is not None and fixed_found["cost_pct"] >= 5.0,
            "fired": sorted({f["rule"] for f in found}), "load": [load0, loadavg()]}


def _with_hog(cpus, words, outdir, env, impl):
    with Hog(cpus):
        return profiled(words, outdir, env, impl)


def _spread(runs: list[float]) -> str:
    """The median and the range of one side's run times: the noise the gain is read against."""
    return f"{statistics.median(runs):.3g} s [{min(runs):.3g}-{max(runs):.3g}]"


def _overlap(r: dict) -> bool:
    """The two sides' run times overlap: at this noise the sign of the gain is not shown."""
    a, b = (r["plain_a"], r["plain_b"]) if "plain_a" in r else (r["runs_a"], r["runs_b"])
    return max(b) >= min(a) and max(a) >= min(b)


def markdown(res: dict) -> str:
    lines = [f"Measured {res['date']} on {res['machine']}, {res['runs']} alternating runs per "
             f"side; load average {res['load_before']:.1f} before, {res['load_after']:.1f} "
             f"after.", "", "| case | rule | claimed | measured gain | verdict | load |",
             "|---|---|---:|---:|---|---:|"]
    for r in res["cases"]:
        if "gain_pct" not in r:
            lines.append(f"| {r['case']} | {r['rule']} | {r['claim_pct']:.1f}% | - | "
                         f"{r['verdict']} | {r['load'][0]:.0f} |")
            continue
        claim = f"{'up to ' if r['bound'] == 'upper' else ''}{r['claim_pct']:.1f}%"
        if r.get("cost_max_pct"):
            claim += f" (up to {r['cost_max_pct']:.0f}%)"
        runs = (f"A {_spread(r['runs_a'])}, B {_spread(r['runs_b'])}" if "plain_a" not in r else
                f"without mpiscope, the program's own timer: A {_spread(r['plain_a'])}, B "
                f"{_spread(r['plain_b'])}; profiled: {r['profiled_claim_pct']:.1f}% claimed, "
                f"{r['profiled_gain_pct']:.1f}% gained")
        lines.append(f"| {r['case']} | {r['rule']} | {claim} | {r['gain_pct']:.1f}% "
                     f"({runs}) | {r['verdict']}"
                     f"{'; fires on the fix too' if r.get('fixed_twin_fires') else ''}"
                     f"{'; the ranges overlap' if _overlap(r) else ''} | "
                     f"{r['load'][0]:.0f}-{r['load'][1]:.0f} |")
    fa = sum(r["verdict"] == "false alarm" for r in res["cases"])
    lines += ["", f"False alarms (claimed >= 5 %, gained < 2 %): {fa} of {len(res['cases'])}."]
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=5, help="runs of each side (default 5)")
    ap.add_argument("--cases", default="", help="comma-separated case names (default: all)")
    ap.add_argument("--list", action="store_true", help="list the cases and exit")
    ap.add_argument("-o", "--out", default=str(REPO / "perf" / "truth" / "results.json"),
                    help="JSON results (the markdown table goes beside it, .md)")
    args = ap.parse_args(argv)
    all_cases = cases()
    if args.list:
        for c in all_cases:
            print(f"{c.name:28} {c.rule:22} {c.impl:8} {c.what}")
        return 0
    chosen = [c for c in all_cases if not args.cases or c.name in args.cases.split(",")]
    res = {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
           "machine": f"{os.uname().nodename}, {os.cpu_count()} CPUs", "runs": args.runs,
           "load_before": loadavg(), "cases": []}
    with tempfile.TemporaryDirectory(prefix="mpiscope-truth-") as tmp:
        for c in chosen:
            print(f"{c.name} ...", file=sys.stderr, flush=True)
            try:
                r = run_case(c, args.runs, Path(tmp) / c.name)
            except RuntimeError as err:
                r = {"case": c.name, "rule": c.rule, "impl": c.impl, "what": c.what,
                     "claim_pct": 0.0, "verdict": f"run failed: {str(err).splitlines()[0]}",
                     "load": [loadavg(), loadavg()]}
            res["cases"].append(r)
            print(f"  {r['verdict']}: claimed {r.get('claim_pct', 0):.1f}%, gained "
                  f"{r.get('gain_pct', float('nan')):.1f}%", file=sys.stderr, flush=True)
            _write(res, Path(args.out))  # after every case: a stopped run keeps what it measured
    _write(res, Path(args.out))
    print(markdown(res))
    return 0


def _write(res: dict, out: Path) -> None:
    res["load_after"] = loadavg()
    out.write_text(json.dumps(res, indent=1) + "\n")
    out.with_suffix(".md").write_text(markdown(res))


if __name__ == "__main__":
    sys.exit(main())
