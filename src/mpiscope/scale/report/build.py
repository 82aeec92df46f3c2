"""Build the scale report of a study directory: one JSON-ready dict holding every number shown.

The terminal tables, ``--json``, the plots and the HTML page all render this
dict. Schema ``mpiscope-scale/1`` (docs/scaling.md).
"""

from __future__ import annotations

from pathlib import Path

from ...errors import UserError
from . import aggregate, models
from .collect import COMPUTE, collect
from ..study import Study

SCHEMA = "mpiscope-scale/1"
# Functions below this share of a run's wall time (at every P) are left out of
# the per-function tables and models: their times are mostly timer noise.
MIN_SHARE = 0.005


def build_scale_report(study: Study, root: Path) -> dict:
    """Every number of ``mpiscope scale report``.

    Raises:
        UserError: fewer than 2 rank counts with a done run, or a study
            directory mixing programs (see collect.collect).
    """
    data = collect(study, root)
    runs = data["runs"]
    done_nps = sorted({r["np"] for r in runs})
    if len(done_nps) < 2:
        bad = ", ".join(f"np={f['np']} rep={f['rep']}: {f['reason']}" for f in data["failed"][:3])
        raise UserError(f"{root}: a scaling report needs done runs at 2 or more rank counts, "
                        f"this study has {len(done_nps)}" + (f" (failed: {bad})" if bad else "")
                        + (f" ({len(data['missing'])} points not run yet: mpiscope scale run)"
                           if data["missing"] else ""))
    rows = aggregate.per_p(runs, study.kind)
    names = aggregate.function_names(runs, MIN_SHARE)
    times = aggregate.function_times(runs, names)
    notes = []
    if data["failed"]:
        notes.append(f"{len(data['failed'])} point(s) failed and are left out: "
                     + "; ".join(f"np={f['np']} rep={f['rep']} ({f['reason']})"
                                 for f in data["failed"]))
    if data["missing"]:
        notes.append(f"{len(data['missing'])} point(s) not finished yet: "
                     + ", ".join(f"np={m['np']} rep={m['rep']} ({m['status']})"
                                 for m in data["missing"]))
    if study.kind == "strong":
        amdahl = models.amdahl([r["np"] for r in runs], [r["wall_s"] for r in runs])
        kf = models.karp_flatt(rows)
    else:
        amdahl = {"available": False, "why_not": "Amdahl's law is about a fixed problem "
                  "(strong scaling)", "serial_fraction": None, "serial_fraction_err": None,
                  "t1_s": None, "max_speedup": None}
        kf = []
    fm = models.function_models(times)
    extrap = []
    if fm["available"]:  # else models.why_not says why (every view shows it once)
        extrap = models.extrapolate(fm["models"], study.kind, rows[0]["np"],
                                    rows[0]["wall_avg_s"]["median"], rows[-1]["np"])
    return {
        "schema": SCHEMA,
        "study": {"name": study.name, "kind": study.kind, "dir": str(root),
                  "ranks": study.ranks, "repetitions": study.repetitions,
                  "program": runs[0]["program"] if runs else None},
        "points": rows,
        "functions": [{"name": n, **times[n]} for n in names],
        "amdahl": amdahl,
        "karp_flatt": kf,
        "models": {"available": fm["available"], "why_not": fm["why_not"],
                   "functions": [{**m.as_dict(), "curve": m.curve(rows[0]["np"], rows[-1]["np"])}
                                 for m in fm["models"].values()]},
        "extrapolation": extrap,
        "failed": data["failed"],
        "missing": data["missing"],
        "notes": notes,
        "compute_name": COMPUTE,
    }

