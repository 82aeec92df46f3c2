"""`mpiscope diagnose`: rules that find the seeds' scaling problems in a profile.

``diagnose(prof, rep)`` runs every rule, one module each in ``rules/`` (thresholds
named at the top of each, explained in docs/diagnose.md), and returns the diagnosis
dict (schema ``mpiscope-diagnosis/1``): findings ranked by the time they
cost, a headline, and the limits of what this profile can support. A rule is
a pure function ``(Profile, report dict) -> list[finding]``; ``render`` and
``--json`` only print the dict.
"""

from __future__ import annotations

import numpy as np

from ..profile import Profile
from .common import MIN_COST_PCT, job_time, runtime
from .rules import RULES, hang, threads

SCHEMA = "mpiscope-diagnosis/1"
# Run-queue wait (share of the run) from which the limits warn that times are stretched.
CPU_WAIT_LIMIT = 0.2


def diagnose(prof: Profile, rep: dict) -> dict:
    """The diagnosis of a profile and its report (``build_report(prof, ppn=...)``)."""
    findings = [f for r in RULES for f in r(prof, rep)]
    # a hung job first (it will not end by itself), then threads-summed: it costs nothing
    # but explains silent rules
    findings.sort(key=lambda f: (f["rule"] != hang.RULE, f["rule"] != threads.RULE, -f["cost_s"],
                                 f["rule"]))
    t = runtime(rep)
    if findings:
        top = next((f for f in findings if f["cost_s"] > 0), findings[0])
        of = top.get("pct_of", "run")
        headline = (f"{len(findings)} finding(s); the costliest: {top['title']} "
                    f"(~{top['cost_s']:.3g} s, {top['cost_pct']:.0f}% of the "
                    f"{job_time(rep) if of == 'job' else t:.3g} s {of})")
    else:
        headline = (f"No scaling problem found: no rule found anything costing "
                    f"{MIN_COST_PCT:.0f}% or more of the {t:.3g} s run.")
    return {"schema": SCHEMA, "clean": not findings, "headline": headline,
            "findings": findings, "limits": limits(prof, rep)}


def limits(prof: Profile, rep: dict) -> list[str]:
    """What this profile cannot support, in one sentence each."""
    out = []
    p = rep["profile"]
    if prof.is_summary:
        out.append("summary-mode profile (no per-rank rows, no peers): late senders, rank "
                   "placement and serialised I/O cannot be checked; compute imbalance, late "
                   "arrival and root hot spots name only the extreme rank (minPE/maxPE); "
                   "rerun with --mode full at a smaller scale for the rank lists")
    if not p["sync"]:
        out.append("no MPISCOPE_SYNC data: time in collectives cannot be split into late "
                   "arrival and the collective itself (rerun with mpiscope run --sync)")
    ppn = p.get("ppn_model")
    if ppn and prof.nranks % ppn and not prof.is_summary:
        out.append(f"--ppn {ppn} leaves the last node with {prof.nranks % ppn} rank(s): rank "
                   "placement is not judged (a rank order fills whole nodes)")
    if not prof.is_summary and (p["nnodes"] or 0) < 2:
        out.append("all ranks on one node: off-node placement and MPI-IO aggregator crowding "
                   "cannot be judged (diagnose --ppn N models N ranks per node)")
    if rep.get("environment", {}).get("available"):
        out.append("MPI_Finalize's own teardown, after the profile is written, is not timed "
                   "(its wait for the last rank is)")
    else:
        out.append("no environment records (a profile from an older runtime, or a snapshot): "
                   "MPI_Init/MPI_Finalize time, CPU binding and OpenMP threads cannot be checked")
    env = rep.get("environment") or {}
    wall = float(next(r for r in rep["summary"] if r["metric"] == "wall")["max"] or 0.0)
    if env.get("available") and wall > 0:
        if len(prof.env):  # per thread: the runtime sums a rank's threads' waits
            waited = float((prof.env["run_delay"] / np.maximum(prof.env["threads"], 1)).max())
        else:
            waited = float(env["run_delay"]["max"]) / max(float(env["threads"]["max"]), 1.0)
        if waited >= CPU_WAIT_LIMIT * wall:
            out.append(f"ranks waited up to {100 * waited / wall:.0f}% of the run for a CPU: "
                       "every time in this profile is stretched by the work that held the "
                       "CPUs, so costs priced from waiting and latency are less certain; "
                       "profile again on CPUs of the job's own")
    out += [f"profile warning: {w}" for w in rep.get("warnings", [])
            if "all ranks ran on one node" not in w]
    return out


__all__ = ["SCHEMA", "RULES", "diagnose", "limits"]
