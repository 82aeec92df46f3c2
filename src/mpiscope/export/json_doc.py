"""JSON export: the profile's facts and every per-rank view as columns.

    {"schema": "mpiscope-export/1", "profile": {...report "profile" facts...},
     "ranks": {"rank": [...], "wall": [...], ...}, "functions": {...}, "peers": {...},
     "regions": {...}, "hist": {...}, "callsites": {...}}

Each view is an object of equal-length column arrays (``pandas.DataFrame(doc["functions"])``
rebuilds the frame); a summary-mode profile has "summary" and "hist" instead; either has
"timeline" when the profile has one.
"""

from __future__ import annotations

import json
from pathlib import Path

from ..profile import Profile
from ..report.build import _profile_info
from .frames import frame

SCHEMA = "mpiscope-export/1"


def write(prof: Profile, path: Path) -> list[Path]:
    views = ("summary", "hist") if prof.is_summary else ("ranks", "functions", "peers",
                                                         "regions", "hist")
    if prof.timeline_bins is not None:
        views += ("timeline",)
    if "callsites" in prof.meta and not prof.is_summary:   # per-rank records (full mode)
        views += ("callsites",)
    with open(path, "w", encoding="utf-8") as f:
        f.write('{"schema": %s, "profile": %s' % (json.dumps(SCHEMA),
                                                  json.dumps(_profile_info(prof, None))))
        for v in views:
            f.write(f', "{v}": ' + _columns(frame(prof, v)))
        f.write("}\n")
    return [path]


def _columns(df) -> str:
    """A frame as {column: [values]}; pandas writes each column in C (None/NaN as null)."""
    return "{" + ", ".join(f"{json.dumps(c)}: {df[c].to_json(orient='values', double_precision=15)}"
                           for c in df.columns) + "}"
