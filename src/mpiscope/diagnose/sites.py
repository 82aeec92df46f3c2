"""Call sites in findings: when one line of the program holds most of the time of the
functions a finding is about, the finding quotes it ("MPI_Allreduce at pcg.f90:212 (solve)
holds 80 % of MPI_Allreduce's time"). Rules call :func:`site_evidence` with the function
names they are about and add what it returns to their evidence; the report's call-site
rows (``rep["callsites"]``) are the only input, so no rule reads the file again.
"""

from __future__ import annotations

from .common import ev

# One site "dominates" the functions' time from this share on.
DOMINANT_SHARE = 0.5


def dominant_site(rep: dict, *functions: str) -> dict | None:
    """The call site holding at least DOMINANT_SHARE of these functions' total time:
    {"function", "location", "parent", "time", "share_pct"}, or None."""
    cs = rep.get("callsites") or {}
    rows = [r for r in cs.get("rows", ()) if r["function"] in functions and not r["lost"]]
    total = sum(r["time"] for r in rep.get("functions", ()) if r["name"] in functions)
    if not rows or total <= 0:
        return None
    best = max(rows, key=lambda r: r["time"])
    share = best["time"] / total
    if share < DOMINANT_SHARE:
        return None
    return {"function": best["function"], "location": best["location"], "parent": best["parent"],
            "time": best["time"], "share_pct": 100.0 * share}


def site_text(site: dict) -> str:
    """``MPI_Allreduce at pcg.f90:212 (solve)``."""
    return f"{site['function']} at {site['location']}" + \
        (f" ({site['parent']})" if site["parent"] else "")


def site_evidence(rep: dict, *functions: str, what: str | None = None) -> list[dict]:
    """[one evidence item quoting the dominant call site of these functions], or [].
    ``what`` names the time it is a share of (default: the one function's name)."""
    site = dominant_site(rep, *functions)
    if site is None:
        return []
    what = what or (functions[0] if len(functions) == 1 else "these functions'")
    return [ev(f"{site_text(site)} holds this share of the {what} time", site["share_pct"], "%")]
