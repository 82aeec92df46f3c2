"""What changed in the environment from profile A to B (issue 29 item 9: the eager-limit fix
told the user to compare the two runs, and compare did not show the variable it changed).

From the two reports' "environment" sections (docs/report.md) and the launches mpiscope run
recorded: the MPI and OpenMP variables set, binding (unbound, overlapping and oversubscribed
ranks, the CPU lists), threads per rank and per CPU, the CPUs per node, and the launch
command: what the user set, not what the machine did (the time ranks waited for a CPU is in
the compared summary). Pure; both views print the same dict.
"""

from __future__ import annotations

from ..profile import Profile

# (key in the report's environment, label): counts compared as numbers
COUNTS = [("unbound_ranks", "unbound ranks"), ("overlap_ranks", "ranks sharing CPUs with another"),
          ("oversub_ranks", "ranks running more OpenMP threads than CPUs")]
# (key, stat, label): per-rank values compared by one statistic
STATS = [("threads", "max", "OpenMP threads per rank (max)"),
         ("ncpus", "min", "CPUs in a rank's mask (min)"),
         ("load", "max", "threads per CPU (max)"),
         ("node_cpus", "min", "CPUs per node")]


def _variables(env: dict) -> dict[str, str]:
    """Every variable with its value (one value on every rank), or its values per rank count."""
    v = dict(env["variables"]["all_ranks"])
    for d in env["variables"]["differing"]:
        v[d["name"]] = ", ".join(f"{val} ({n} ranks)" if n is not None else str(val)
                                 for val, n in d["values"].items())
    return v


def _launch(prof: Profile) -> str | None:
    text = (prof.meta.get("settings") or {}).get("MPISCOPE_LAUNCH")
    return text if isinstance(text, str) and text else None


def environment_changes(prof_a: Profile, rep_a: dict, prof_b: Profile, rep_b: dict) -> dict:
    """{"available", "why_not", "variables": [{"name", "a", "b"}] (set in one, or set to
    another value; None where unset), "binding": [{"what", "a", "b"}] (what differs),
    "launch": {"a", "b"} or None (the recorded launches, when they differ)}."""
    ea, eb = rep_a.get("environment") or {}, rep_b.get("environment") or {}
    la, lb = _launch(prof_a), _launch(prof_b)
    launch = {"a": la, "b": lb} if la != lb else None
    if not ea.get("available") or not eb.get("available"):
        side = "A" if not ea.get("available") else "B"
        return {"available": False, "why_not": f"{side} has no environment records (an older "
                "runtime, or a snapshot)", "variables": [], "binding": [], "launch": launch}
    va, vb = _variables(ea), _variables(eb)
    variables = [{"name": n, "a": va.get(n), "b": vb.get(n)} for n in sorted(set(va) | set(vb))
                 if va.get(n) != vb.get(n)]
    binding = []
    for key, label in COUNTS:
        if ea[key] != eb[key]:
            binding.append({"what": label, "a": ea[key], "b": eb[key]})
    for key, stat, label in STATS:
        a = (ea.get(key) or {}).get(stat)
        b = (eb.get(key) or {}).get(stat)
        if a != b:
            binding.append({"what": label, "a": a, "b": b})
    if ea["cpu_lists"] != eb["cpu_lists"]:
        binding.append({"what": "CPU lists of the ranks' masks", "a": " ".join(ea["cpu_lists"]),
                        "b": " ".join(eb["cpu_lists"])})
    return {"available": True, "why_not": None, "variables": variables, "binding": binding,
            "launch": launch}


def change_lines(env: dict) -> list[str]:
    """One sentence per change, for the terminal and the page."""
    out = []
    if env["launch"]:
        out.append(f"launch: {env['launch']['a'] or '(not recorded)'} -> "
                   f"{env['launch']['b'] or '(not recorded)'}")
    for v in env["variables"]:
        a = "(unset)" if v["a"] is None else v["a"]
        b = "(unset)" if v["b"] is None else v["b"]
        out.append(f"{v['name']}: {a} -> {b}")
    for b in env["binding"]:
        out.append(f"{b['what']}: {_val(b['a'])} -> {_val(b['b'])}")
    return out


def _val(v) -> str:
    if isinstance(v, float):
        return f"{v:.3g}"
    return "-" if v is None else str(v)
