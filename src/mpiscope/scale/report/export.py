"""Export a study's runs: Extra-P's text input format, or a tidy CSV (one value per line).

Extra-P text format (read by ``extrap --text FILE`` and
``extrap.fileio.file_reader.text_file_reader.TextFileReader``): one parameter p
(the rank count), one metric "time" (seconds per rank), one REGION per MPI
function plus ``(compute)`` and ``(wall)``, one DATA line per rank count with a
value per repetition.
"""

from __future__ import annotations

import csv
import io

from . import aggregate
from .collect import COMPUTE

FORMATS = ("extrap", "csv")


def extrap_text(runs: list[dict], study_name: str) -> str:
    names = aggregate.function_names(runs)
    times = aggregate.function_times(runs, names)
    nps = sorted({r["np"] for r in runs})
    lines = [f"# mpiscope scale export: {study_name}, time per rank (s) by function",
             "PARAMETER p", "POINTS " + " ".join(str(n) for n in nps), "METRIC time"]
    walls = {n: [r["wall_s"] for r in runs if r["np"] == n] for n in nps}
    series = [("(wall)", [walls[n] for n in nps])] + [(n, times[n]["values"]) for n in names]
    for name, per_p in series:
        lines.append(f"REGION {name}")
        for vals in per_p:
            lines.append("DATA " + " ".join(repr(float(v)) for v in vals))
    return "\n".join(lines) + "\n"


def tidy_csv(runs: list[dict], study_name: str, kind: str) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["study", "kind", "np", "rep", "metric", "name", "value", "unit"])
    for r in sorted(runs, key=lambda r: (r["np"], r["rep"])):
        base = [study_name, kind, r["np"], r["rep"]]
        w.writerow(base + ["wall", "", repr(r["wall_s"]), "s"])
        w.writerow(base + ["wall_avg", "", repr(r["wall_avg_s"]), "s"])
        if r["elapsed_s"] is not None:
            w.writerow(base + ["launch_elapsed", "", repr(r["elapsed_s"]), "s"])
        w.writerow(base + ["mpi_pct", "", repr(r["mpi_pct"]), "%"])
        for name in sorted(r["functions"], key=lambda n: (n != COMPUTE, n)):
            w.writerow(base + ["time_per_rank", name, repr(r["functions"][name]), "s"])
        for k, v in (r["pop"] or {}).items():
            if v is not None:
                w.writerow(base + ["pop", k, repr(v), "1"])
    return buf.getvalue()
