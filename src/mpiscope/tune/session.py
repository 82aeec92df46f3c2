"""The tune loop: probe, diagnose, candidates, alternating rounds, verdicts, a recommendation.

1. The probe: one baseline run, diagnosed (never timed: it warms the caches and the
   budget estimate). It must succeed, or there is nothing to tune.
2. The plan: a candidate per finding with a mechanical fix (candidates.py), each turned
   into the exact launch command, environment and files it runs with; saved in
   tune.json, so a resumed tune tries the same candidates.
3. Rounds 1..N: the baseline and every candidate once each, the order rotating from round
   to round (round 1: A B C, round 2: B C A, ...). A candidate whose run fails is dropped
   from the later rounds.
4. Verdicts (stats.py, outputs.py): a candidate is kept when its runs exited as the
   baseline's, printed what the baseline's printed, and both 95 % intervals of its gain
   on the run's time (MPI_Init to MPI_Finalize, the longest rank) lie above 0.
5. When two or more independent candidates were kept: their combination, in N rounds
   against the baseline, judged the same way.
6. The recommendation: the combination if kept, else the kept candidate of largest gain,
   else the command as it is.

``--budget``: no run is started that would end past it (the median run's time is the
estimate); rounds cut short leave fewer pairs, and a candidate judged on fewer than
stats.MIN_PAIRS is not kept.
"""

from __future__ import annotations

import shlex
import statistics
import time
from pathlib import Path

from ..errors import UserError
from ..run.launcher_args import parse
from ..scale.runner import processes as point_procs
from . import candidates as cands_mod
from . import outputs, stats, tunedir
from .runner import run_once

PROBE = "probe"
BASELINE = "baseline"
COMBINED = "combined"
# A run taking this many times the probe's time (and at least TIMEOUT_MIN_S) is stopped
# and counted as failed: a candidate that makes the program hang is dropped.
TIMEOUT_FACTOR = 10.0
TIMEOUT_MIN_S = 60.0
# What is timed: the run's wall time in its profile (the longest rank's, MPI_Init to
# MPI_Finalize). The job's time (run_s + the longest MPI_Init + the longest wait in
# MPI_Finalize) is reported beside it: MPI_Init alone varied 0.15-0.5 s between identical
# 2-rank runs here, noise that no candidate here acts on.
TIMED = "run_s"


def apply(argv: list[str], cand: dict, impl: str, files: Path) -> dict:
    """The candidate's launch command, environment and files (created under ``files``)."""
    from ..place.output.launchers import apply_order

    cmd = parse(argv, impl)
    launch = cmd.without(*cand["drop"]).argv(*cand["options"])
    env = dict(cand["env"])
    written: list[str] = []
    if cand["order"]:
        path = files / f"order-{cand['kind']}.{cand['order']['format']}"
        if not path.exists():
            path.write_text(cand["order"]["text"])
        before = set(files.iterdir())
        launch, extra = apply_order(launch, str(path), impl, directory=str(files))
        env.update(extra)
        written = [str(path), *sorted(str(p) for p in set(files.iterdir()) - before)]
    return {"launch": launch, "launch_env": env, "files": written}


def _plan(root: Path, plan: dict, probe: dict, argv: list[str], impl: str) -> dict:
    from ..diagnose import diagnose
    from ..reader import read
    from ..report import build_report

    prof = read(Path(probe["dir"]) / probe["profile"])
    diag = diagnose(prof, build_report(prof))
    found, manual = cands_mod.candidates(prof, diag, parse(argv, impl))
    for c in found:
        c.update(apply(argv, c, impl, root / "files"))
    plan.update({"candidates": found, "not_mechanical": manual,
                 "baseline_findings": [{"rule": f["rule"], "title": f["title"],
                                        "cost_s": f["cost_s"], "cost_pct": f["cost_pct"]}
                                       for f in diag["findings"]]})
    tunedir.write_json(root / tunedir.PLAN, plan)
    return plan


def schedule(prefix: str, labels: list[str], rounds: int) -> list[tuple[str, str]]:
    """(run name, label) in the order they run: round r rotates [baseline, *labels] by r-1."""
    out = []
    seq = [BASELINE, *labels]
    for r in range(1, rounds + 1):
        k = (r - 1) % len(seq)
        out += [(f"{prefix}{r:02d}-{lab}", lab) for lab in seq[k:] + seq[:k]]
    return out


class _Runs:
    """Runs the schedule within the budget, skipping runs already done."""

    def __init__(self, root: Path, impl: str, cwd: str, signals: point_procs.StopSignals,
                 deadline: float | None, timeout: float, say):
        self.root, self.impl, self.cwd, self.signals = root, impl, cwd, signals
        self.deadline, self.timeout, self.say = deadline, timeout, say
        self.durations: list[float] = []
        self.cut_short = False
        self.started = 0

    def record(self, name: str, launch: list[str], env: dict) -> dict | None:
        rec = tunedir.latest_record(self.root, name)
        if rec is not None and rec["status"] == "done":
            self.durations.append(rec["elapsed_s"])
            return rec
        if self.deadline is not None:
            est = statistics.median(self.durations) if self.durations else 0.0
            if time.monotonic() + est > self.deadline:
                self.cut_short = True
                return None
        self.signals.check()
        self.say(f"run {name}")
        rec = run_once(self.root, name, launch, env, self.impl, self.cwd, self.signals,
                       self.timeout)
        self.started += 1
        self.signals.check()
        if rec["status"] == "done":
            self.durations.append(rec["elapsed_s"])
        else:
            self.say(f"run {name} failed: {rec['reason']} (see {rec['dir']})")
        return rec


def _rounds(runs: _Runs, prefix: str, argv: list[str], cands: list[dict], rounds: int) -> dict:
    """Run the rounds; {label: {run name: record}} of what ran (or had run)."""
    by_label = {c["kind"]: c for c in cands}
    done: dict[str, dict] = {BASELINE: {}, **{k: {} for k in by_label}}
    dropped: set[str] = set()
    for name, label in schedule(prefix, list(by_label), rounds):
        if label in dropped or runs.cut_short:
            continue
        c = by_label.get(label)
        rec = runs.record(name, c["launch"] if c else argv, c["launch_env"] if c else {})
        if rec is None:
            continue
        done[label][name] = rec
        if c and rec["status"] != "done":
            dropped.add(label)
    return done


def _median(values) -> float | None:
    values = list(values)
    return statistics.median(values) if values else None


def verdict(cand: dict, base_recs: dict, cand_recs: dict, base_outputs: list[str],
            prefix: str) -> dict:
    """The candidate's gain, interval and verdict from its runs and the baseline's."""
    def rnd(name: str) -> str:
        return name[len(prefix):].split("-", 1)[0]

    base = {rnd(n): r for n, r in base_recs.items() if r["status"] == "done"}
    mine = {rnd(n): r for n, r in cand_recs.items()}
    failed = [r for r in mine.values() if r["status"] != "done"]
    ok = {k: r for k, r in mine.items() if r["status"] == "done"}
    pairs = sorted(set(base) & set(ok))
    b = [base[k][TIMED] for k in pairs]
    c = [ok[k][TIMED] for k in pairs]
    paired = stats.paired_gain(b, c)
    welch = stats.welch_gain([r[TIMED] for r in base.values()], [r[TIMED] for r in ok.values()])
    job = stats.paired_gain([base[k]["job_s"] for k in pairs], [ok[k]["job_s"] for k in pairs])
    rules = [f["rule"] for f in cand["findings"]]
    cost = {"baseline": _median(sum(r["finding_costs"].get(x, 0.0) for x in rules)
                                for r in base.values()),
            "candidate": _median(sum(r["finding_costs"].get(x, 0.0) for x in rules)
                                 for r in ok.values())}
    changed = None
    for k in sorted(ok):
        why = outputs.differs(base_outputs, Path(ok[k]["dir"], "stdout.txt").read_text(
            errors="replace"))
        if why:
            changed = f"round {k}: {why}"
            break
    if failed:
        f = failed[0]
        code = f.get("exit_code")
        if code not in (0, None) and f["reason"].startswith("exit code"):
            state, why = "changed results", f"exit code {code} where the baseline's is 0 ({f['dir']})"
        else:
            state, why = "failed", f"{f['reason']} ({f['dir']})"
    elif changed:
        state, why = "changed results", changed
    elif len(pairs) < stats.MIN_PAIRS:
        state, why = "too few runs", f"{len(pairs)} round(s) with both runs done"
    elif stats.above_zero(paired, welch):
        state, why = "kept", "both 95 % intervals of the gain lie above 0"
    elif paired["ci_pct"][1] < 0:
        state, why = "slower", "the candidate is slower: its 95 % interval lies below 0"
    else:
        state, why = "no gain shown", "the 95 % interval of the gain includes 0"
    return {"kind": cand["kind"], "change": cand["change"],
            "findings": cand["findings"], "command": shlex.join(cand["launch"]),
            "env": cand["launch_env"], "files": cand["files"], "runs": len(ok),
            "pairs": len(pairs), "time_s": _median(c), "baseline_time_s": _median(b),
            "gain_pct": paired["gain_pct"], "ci_pct": paired["ci_pct"],
            "welch_gain_pct": welch["gain_pct"], "welch_ci_pct": welch["ci_pct"],
            "job_gain_pct": job["gain_pct"], "job_ci_pct": job["ci_pct"],
            "finding_cost_s": cost, "kept": state == "kept", "verdict": state, "why": why,
            **({"parts": cand["parts"]} if "parts" in cand else {})}


def _judge(runs: _Runs, prefix: str, argv: list[str], cands: list[dict], rounds: int,
           probe: dict) -> tuple[list[dict], dict]:
    done = _rounds(runs, prefix, argv, cands, rounds)
    base_outputs = [Path(r["dir"], "stdout.txt").read_text(errors="replace")
                    for r in [probe, *done[BASELINE].values()] if r["status"] == "done"]
    return ([verdict(c, done[BASELINE], done[c["kind"]], base_outputs, prefix) for c in cands],
            done[BASELINE])


def _baseline_summary(recs: list[dict]) -> dict:
    ok = [r[TIMED] for r in recs if r["status"] == "done"]
    return {"runs": len(ok), "time_s": _median(ok), "min_s": min(ok, default=None),
            "max_s": max(ok, default=None)}


def tune(argv: list[str], root: Path, rounds: int, budget_s: float | None, impl: str,
         signals: point_procs.StopSignals, say=lambda _msg: None,
         only: list[str] | None = None) -> dict:
    """Tune ``argv`` (a launch command) in the tune directory ``root``; the result dict.
    ``only``: the candidate kinds to try (default: all); the others are listed as skipped.

    Raises:
        UserError: the directory holds another tune, or the probe run failed.
        point_procs.Interrupted: a stop signal came (the running run was stopped and
            recorded as failed; run again to resume).
    """
    start = time.monotonic()
    deadline = start + budget_s if budget_s is not None else None
    tunedir.create(root)
    with tunedir.lock(root):
        plan = tunedir.open_dir(root, argv, impl)
        cwd = plan.get("cwd") or "."
        probe = tunedir.latest_record(root, PROBE)
        probe_ran = probe is None or probe["status"] != "done"
        if probe_ran:
            say("run probe (the baseline, diagnosed)")
            probe = run_once(root, PROBE, argv, {}, impl, cwd, signals, budget_s)
            signals.check()
            if probe["status"] != "done":
                raise UserError(f"the baseline run failed ({probe['reason']}); nothing to "
                                f"tune (see {probe['dir']})")
        if "candidates" not in plan:
            plan = _plan(root, plan, probe, argv, impl)
        cands = [c for c in plan["candidates"] if only is None or c["kind"] in only]
        skipped = [c["kind"] for c in plan["candidates"] if c not in cands]
        timeout = max(TIMEOUT_MIN_S, TIMEOUT_FACTOR * probe["elapsed_s"])
        runs = _Runs(root, impl, cwd, signals, deadline, timeout, say)
        runs.durations.append(probe["elapsed_s"])
        results, base_recs = _judge(runs, "r", argv, cands, rounds, probe) if cands else ([], {})
        kept = [r for r, c in zip(results, cands) if r["kept"]]
        combined = None
        kept_cands = [c for r, c in zip(results, cands) if r["kept"]]
        if len(kept_cands) >= 2 and cands_mod.independent(kept_cands):
            comb = cands_mod.combine(kept_cands)
            comb["kind"] = COMBINED
            comb.update(apply(argv, comb, impl, root / "files"))
            (combined,), _ = _judge(runs, "c", argv, [comb], rounds, probe)
            results.append(combined)
        best = combined if combined and combined["kept"] else max(
            kept, key=lambda r: r["gain_pct"], default=None)
        if best:
            recommended = {"kind": best["kind"], "command": best["command"], "env": best["env"],
                           "files": best["files"], "gain_pct": best["gain_pct"],
                           "ci_pct": best["ci_pct"]}
        else:
            recommended = {"kind": None, "command": shlex.join(argv), "env": {}, "files": [],
                           "gain_pct": None, "ci_pct": None,
                           "why": ("no candidate gained with a 95 % interval above 0: keep "
                                   "the command as it is") if cands else
                                  "no candidate tried (--only): keep the command as it is"
                                  if plan["candidates"] else
                                  "no finding has a mechanical fix: keep the command as it is"}
        result = {"schema": tunedir.SCHEMA, "directory": str(root), "command": shlex.join(argv),
                  "mpi": impl, "rounds": rounds, "statistic":
                      "the run's wall time in its profile (the longest rank's, MPI_Init to "
                      "MPI_Finalize), paired by round; 95 % t intervals",
                  "baseline": {**_baseline_summary(list(base_recs.values())),
                               "probe": probe["dir"],
                               "findings": plan["baseline_findings"]},
                  "candidates": results, "skipped": skipped,
                  "not_mechanical": plan["not_mechanical"],
                  "recommended": recommended,
                  "budget": {"minutes": None if budget_s is None else budget_s / 60.0,
                             "spent_s": time.monotonic() - start, "cut_short": runs.cut_short,
                             "runs_started": runs.started + probe_ran}}
        tunedir.write_json(root / tunedir.RESULT, result)
        return result
