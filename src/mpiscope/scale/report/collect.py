"""Read a study directory into one row per run: the numbers the tables and models use.

Each done point's profile is read once and turned into the report dict
(``build_report``); everything below reads those dicts, never the file again.
"""

from __future__ import annotations

from pathlib import Path

from ...errors import UserError
from ...report.pop import KEYS as POP_KEYS
from .. import studydir
from ..study import Study

# Name of the computation outside MPI in per-function tables and models.
COMPUTE = "(compute)"


def run_row(point_np: int, rep: int, record: dict, rep_dict: dict) -> dict:
    """One run's numbers from its point.json and its profile's report dict."""
    summary = {r["metric"]: r for r in rep_dict["summary"]}
    wall = summary["wall"]
    mpi_avg = summary["mpi"]["avg"]
    funcs = {f["name"]: f["time_per_rank"]["avg"] for f in rep_dict["functions"]}
    funcs[COMPUTE] = summary["compute"]["avg"]
    pop = rep_dict.get("pop")
    whole = None
    if isinstance(pop, dict) and pop.get("available") and isinstance(pop.get("whole"), dict):
        whole = {k: pop["whole"].get(k) for k in POP_KEYS}
    return {
        "np": point_np, "rep": rep, "elapsed_s": record.get("elapsed_s"),
        "wall_s": wall["max"], "wall_avg_s": wall["avg"],
        "mpi_avg_s": mpi_avg,
        "mpi_pct": 100.0 * mpi_avg / wall["avg"] if wall["avg"] > 0 else 0.0,
        "functions": funcs, "pop": whole,
        "program": rep_dict["profile"]["program"],
        "nranks": rep_dict["profile"]["nranks"],
    }


def collect(study: Study, root: Path) -> dict:
    """Every point's latest attempt: rows of done runs, and the failed or missing points.

    Returns:
        {"runs": [row...], "failed": [{np, rep, reason, path}], "missing": [{np, rep, status}]}
    Raises:
        UserError: profiles of different programs, or a profile whose rank count
            is not its point's.
    """
    from ...reader import read
    from ...report.build import build_report

    runs, failed, missing = [], [], []
    for point in study.points():
        last = studydir.latest(root, point)
        if last is None or last.status in ("submitted", "incomplete"):
            missing.append({"np": point.np, "rep": point.rep,
                            "status": "not run" if last is None else last.status})
            continue
        if last.status != "done":
            failed.append({"np": point.np, "rep": point.rep,
                           "reason": last.record.get("reason") or "failed",
                           "path": str(last.path)})
            continue
        prof = read(last.path / last.record["profile"])
        row = run_row(point.np, point.rep, last.record, build_report(prof))
        if row["nranks"] != point.np:
            raise UserError(f"{last.path / last.record['profile']} has {row['nranks']} ranks, "
                            f"but its point is np={point.np}: was the launcher told {{np}}?")
        runs.append(row)
    programs = {}
    for row in runs:
        programs.setdefault(Path(row["program"] or "?").name, []).append(row["np"])
    if len(programs) > 1:
        which = "; ".join(f"{name} (np {', '.join(map(str, sorted(set(nps))))})"
                          for name, nps in sorted(programs.items()))
        raise UserError(f"{root} holds profiles of different programs: {which}; "
                        f"a study compares one program across rank counts")
    return {"runs": runs, "failed": failed, "missing": missing}
