"""Render a report dict (``build.build_report``) as Cray-profiler-style rich tables.

Formats: seconds with 3 decimals (scientific below 0.01 s), counts exact up to
999,999 then with k/M/G/T suffixes of 3 significant digits, bytes in binary
units (KiB, MiB, ...), percentages with one decimal. ``--json`` has the exact
values.
"""

from __future__ import annotations

import datetime as _dt

from rich import box
from rich.console import Console
from rich.table import Table
from .snapshot import rank_list_text, snapshot_lines

NA = "-"


def fmt_time(v) -> str:
    if v is None:
        return NA
    if v == 0:
        return "0"
    if abs(v) < 0.01:
        return f"{v:.2e}"
    return f"{v:,.3f}"


def fmt_count(v) -> str:
    if v is None:
        return NA
    v = int(v)
    if abs(v) < 1_000_000:
        return f"{v:,}"
    for unit, scale in (("T", 10**12), ("G", 10**9), ("M", 10**6)):
        if abs(v) >= scale:
            return f"{v / scale:.3g}{unit}"
    return str(v)  # pragma: no cover


def fmt_bytes(v) -> str:
    if v is None:
        return NA
    v = int(v)
    if v < 1024:
        return f"{v} B"
    x = float(v)
    for unit in ("KiB", "MiB", "GiB", "TiB", "PiB"):
        x /= 1024.0
        if x < 1024 or unit == "PiB":
            return f"{x:.2f} {unit}"
    return str(v)  # pragma: no cover


def fmt_pct(v) -> str:
    return NA if v is None else f"{v:.1f}%"


def fmt_utc(seconds) -> str:
    """Seconds since 1970 as ``YYYY-MM-DD HH:MM:SS UTC``; a time no clock can show
    (a corrupt header or META) is said as such, never raised."""
    try:
        return f"{_dt.datetime.fromtimestamp(seconds, _dt.timezone.utc):%Y-%m-%d %H:%M:%S} UTC"
    except (OverflowError, ValueError, OSError, TypeError):
        return f"an impossible time ({seconds!r} s since 1970)"


def fmt_pe(v) -> str:
    return NA if v is None else str(v)


def _table(title: str, *columns: str, left: int = 1) -> Table:
    t = Table(title=title, title_justify="left", box=box.SIMPLE_HEAD, title_style="bold")
    for i, c in enumerate(columns):
        t.add_column(c, justify="left" if i < left else "right", no_wrap=i < left)
    return t


def _stat_cells(s: dict | None, fmt=fmt_time) -> list[str]:
    if s is None:
        return [NA] * 6
    return [fmt(s["min"]), fmt(s["max"]), fmt(s["avg"]), fmt_pe(s["min_pe"]),
            fmt_pe(s["max_pe"]), fmt_pct(s["imbalance_pct"])]


def _word(text: str) -> str:
    """A program name or argument as one terminal word: quoted, with newlines and
    other control characters escaped, when it is not plain (the program's own
    argv is input too: a newline in it must not forge a line of the report)."""
    plain = text and text.isprintable() and not any(c in text for c in " '\"\\")
    return text if plain else repr(text)


def header_lines(rep: dict) -> list[str]:
    p = rep["profile"]
    args = " ".join(_word(a) for a in p["argv"][1:]) if p.get("argv") else ""
    program = _word(p["program"]) if p["program"] else "?"
    lines = [f"Profile of {program}{' ' + args if args else ''}  ({p['path']})"]
    nodes = "" if p["nnodes"] is None else f", {p['nnodes']} node(s)"
    if p["ppn_model"]:
        nodes += f" modelled as {p['ppn_model']} ranks per node"
    lines.append(f"Number of processes {p['nranks']:,}{nodes}, {p['mode']} mode"
                 + (", MPISCOPE_SYNC on" if p["sync"] else ""))
    if p["mpi_library_line"]:
        lines.append(f"MPI library {p['mpi_library_line']}")
    if p["start_time"]:
        when = fmt_utc(p["start_time"])
        lines.append(f"Started {'at ' if when.startswith('an ') else ''}{when}, job {p['job_id']}")
    if rep["region_filter"] is not None:
        lines.append(f"Functions, histogram and regions restricted to region "
                     f"{rep['region_filter']!r}")
    return lines


def summary_table(rep: dict) -> Table:
    t = _table("Profile summary (seconds per rank)", "", "min", "max", "avg", "minPE", "maxPE",
               "imb.")
    for row in rep["summary"]:
        t.add_row(row["label"], *_stat_cells(row))
    return t


def function_table(rows: list[dict], title: str) -> Table:
    t = _table(title, "Function", "% MPI", "total time", "calls", "bytes sent", "bytes recv",
               "avg/rank", "min/rank", "max/rank", "minPE", "maxPE", "imb.")
    for r in rows:
        s = r["time_per_rank"]
        t.add_row(r["name"], fmt_pct(r["pct_mpi"]), fmt_time(r["time"]), fmt_count(r["calls"]),
                  fmt_bytes(r["bytes_sent"]), fmt_bytes(r["bytes_recv"]), fmt_time(s["avg"]),
                  fmt_time(s["min"]), fmt_time(s["max"]), fmt_pe(s["min_pe"]),
                  fmt_pe(s["max_pe"]), fmt_pct(s["imbalance_pct"]))
    return t


def callsites_table(cs: dict) -> Table:
    """Call sites, most time first: where (and in which function), totals, time per rank."""
    deep = (cs.get("depth") or 1) > 1
    rows = cs["rows"] if cs["top"] is None else cs["rows"][:cs["top"]]
    more = "" if len(rows) == len(cs["rows"]) else f", top {len(rows)} of {len(cs['rows'])}; " \
                                                    "--callsites all lists every one"
    t = Table(title=f"Call sites (time per rank in seconds{more})", title_justify="left",
              box=box.SIMPLE_HEAD, title_style="bold")
    t.add_column("#", justify="right", no_wrap=True)
    t.add_column("Function", no_wrap=True)
    t.add_column("Site (parent function)", overflow="fold", ratio=1)
    if deep:
        t.add_column("called from", overflow="fold", ratio=1)
    for c in ("% MPI", "total time", "calls", "bytes", "avg/rank", "min/rank", "max/rank",
              "minPE", "maxPE", "imb."):
        t.add_column(c, justify="right", no_wrap=True)
    for r in rows:
        s = r["time_per_rank"]
        where = r["location"] + (f" ({r['parent']})" if r["parent"] else "")
        callers = " < ".join(callsite_frame_text(f) for f in r["frames"][1:])
        t.add_row(str(r["rank_by_time"]), r["function"], where, *([callers or NA] if deep else []),
                  fmt_pct(r["pct_mpi"]), fmt_time(r["time"]), fmt_count(r["calls"]),
                  fmt_bytes(r["bytes_sent"] + r["bytes_recv"]), fmt_time(s["avg"]),
                  fmt_time(s["min"]), fmt_time(s["max"]), fmt_pe(s["min_pe"]), fmt_pe(s["max_pe"]),
                  fmt_pct(s["imbalance_pct"]))
    return t


def samples_table(sm: dict) -> Table:
    """Compute by function (sampled): share of the compute samples with its standard
    error, estimated CPU time per rank."""
    from .samples import where
    rows = sm["functions"] if sm["top"] is None else sm["functions"][:sm["top"]]
    more = "" if len(rows) == len(sm["functions"]) else \
        f", top {len(rows)} of {len(sm['functions'])}; report --json lists every one"
    t = _table(f"Compute by function (sampled at {sm['hz']:g} Hz; estimated CPU seconds per "
               f"rank{more})", "Function", "Where", "% compute", "±", "samples", "avg/rank",
               "min/rank", "max/rank", "minPE", "maxPE", "imb.", left=2)
    for r in rows:
        s = r["time_per_rank"]
        t.add_row(r["function"], where(r), fmt_pct(100 * r["share"]), fmt_pct(100 * r["share_se"]),
                  fmt_count(r["samples"]), fmt_time(s["avg"]), fmt_time(s["min"]),
                  fmt_time(s["max"]), fmt_pe(s["min_pe"]), fmt_pe(s["max_pe"]),
                  fmt_pct(s["imbalance_pct"]))
    return t


def samples_lines(sm: dict) -> list[str]:
    lines = []
    if sm["mpi"]:
        total = sm["samples"] or 1
        parts = ", ".join(f"{m['function']} {fmt_pct(100 * m['samples'] / total)}"
                          for m in sm["mpi"][:5])
        lines.append(f"Samples in MPI: {fmt_pct(100 * sm['mpi_samples'] / total)} of all "
                     f"({parts})")
    return lines + [f"Samples: {n}" for n in sm["notes"]]


def callsite_frame_text(frame: dict) -> str:
    """A calling frame: file:line (function), or module+offset."""
    import os
    if frame["file"] and frame["line"]:
        fn = f" ({frame['function']})" if frame["function"] else ""
        return f"{os.path.basename(frame['file'])}:{frame['line']}{fn}"
    if frame["module"]:
        return f"{os.path.basename(frame['module'])}+0x{frame['offset']:x}"
    return f"0x{frame['offset']:x}"


def callsite_lines(cs: dict) -> list[str]:
    """Why call sites are missing or shown as module+offset."""
    if not cs.get("recorded"):
        return ["Call sites: not recorded (MPISCOPE_CALLSITES=0, or a profile of an older runtime)"]
    return [f"Call sites: {n}" for n in cs["notes"]]


def comm_table(rows: list[dict]) -> Table:
    """--by-comm: one row per communicator, its members as world ranks."""
    t = _table("MPI per communicator (whole run; members as world ranks)", "communicator", "size",
               "members", "% MPI", "total time", "calls", "bytes sent", "bytes recv", "functions")
    for r in rows:
        size, members, funcs = comm_texts(r)
        t.add_row(r["name"], size, members, fmt_pct(r["pct_mpi"]), fmt_time(r["time"]),
                  fmt_count(r["calls"]), fmt_bytes(r["bytes_sent"]), fmt_bytes(r["bytes_recv"]),
                  funcs)
    return t


def comm_texts(r: dict) -> tuple[str, str, str]:
    """A communicator row's size, members (world ranks) and busiest functions, as text."""
    def group(ranks, size):
        return NA if ranks is None else (rank_list_text(ranks) +
                                         ("..." if size and size > len(ranks) else ""))

    members = group(r["world_ranks"], r["size"])
    size = NA if r["size"] is None else f"{r['size']:,}"
    if r["inter"] and r.get("remote_world_ranks") is not None:
        members += " | " + group(r["remote_world_ranks"], r.get("remote_size"))
        size += f" + {r['remote_size']:,}" if r.get("remote_size") is not None else ""
    size += " (inter)" if r["inter"] else ""
    funcs = ", ".join(f"{f['name']} {fmt_count(f['calls'])}" for f in r["functions"][:4])
    return size, members, funcs + (", ..." if len(r["functions"]) > 4 else "")


def fmt_value(v) -> str:
    """An MPI_T value: integers exact (k/M/G above a million), fractions with 3 significant digits."""
    if v is None:
        return NA
    if float(v).is_integer():
        return fmt_count(v)
    return f"{v:.3g}"


def mpit_table(mpit: dict) -> Table:
    """MPI_T performance variables: per rank, the value at MPI_Finalize and, for a
    level (a queue length), its highest sample."""
    t = _table("MPI_T performance variables (per rank; peak = highest sample of a level)",
               "variable", "", "min", "max", "avg", "minPE", "maxPE", "what", left=2)
    t.columns[-1].justify = "left"
    for v in mpit["variables"]:
        rows = [("at end", v["value"])]
        if v.get("kind") == "level":
            rows.append(("peak", v["peak"]))
        for i, (label, s) in enumerate(rows):
            cells = [NA] * 5 if s is None else [fmt_value(s["min"]), fmt_value(s["max"]),
                                                 fmt_value(s["avg"]), fmt_pe(s["min_pe"]),
                                                 fmt_pe(s["max_pe"])]
            t.add_row(v["name"] if i == 0 else "", label, *cells, (v.get("what") or "") if i == 0 else "")
    return t


def mpit_lines(mpit: dict) -> list[str]:
    """Why no MPI_T variable is shown, when the run asked for them."""
    if not mpit.get("recorded") or mpit["variables"]:
        return []
    return [f"MPI_T: {mpit['why_none']}"]


def histogram_table(rows: list[dict]) -> Table:
    t = _table("Message sizes (calls per log2 bucket, all ranks)", "bytes", "calls", "% calls",
               "time", "functions")
    total = sum(r["count"] for r in rows) or 1
    for r in rows:
        size = "0" if r["bucket"] == 0 else f"{fmt_bytes(r['lo'])} - {fmt_bytes(r['hi'])}"
        funcs = ", ".join(f"{n} {fmt_count(c)}" for n, c in
                          sorted(r["by_function"].items(), key=lambda kv: (-kv[1], kv[0])))
        t.add_row(size, fmt_count(r["count"]), fmt_pct(100.0 * r["count"] / total),
                  fmt_time(r["time"]), funcs)
    return t


def p2p_table(p2p: dict) -> Table:
    how = {"ranks": "as placed in the run", "summary": "as placed in the run",
           "peers": f"modelled with {p2p['ppn_model']} consecutive ranks per node"}[p2p["source"]]
    t = _table(f"Point-to-point messages on-node vs off-node ({how})", "", "messages", "bytes",
               "% messages", "% bytes")
    tm, tb = p2p["total_msgs"] or 1, p2p["total_bytes"] or 1
    for label, key in (("on-node", "on_node"), ("off-node", "off_node")):
        m, b = p2p[f"{key}_msgs"], p2p[f"{key}_bytes"]
        t.add_row(label, fmt_count(m), fmt_bytes(b), fmt_pct(100.0 * m / tm),
                  fmt_pct(100.0 * b / tb))
    t.add_row("total", fmt_count(p2p["total_msgs"]), fmt_bytes(p2p["total_bytes"]), "", "")
    return t


def pairs_table(rows: list[dict]) -> Table:
    t = _table("Top communicating pairs (both directions)", "ranks", "messages", "bytes",
               "bytes a->b", "bytes b->a", "node")
    for r in rows:
        node = NA if "on_node" not in r else ("on" if r["on_node"] else "off")
        t.add_row(f"{r['a']} <-> {r['b']}", fmt_count(r["msgs"]), fmt_bytes(r["bytes"]),
                  fmt_bytes(r["bytes_ab"]), fmt_bytes(r["bytes_ba"]), node)
    return t


def region_table(reg: dict) -> Table:
    t = _table(f"Region {reg['name']!r} (depth {reg['depth']}, parent {reg['parent'] or '-'}, "
               f"{fmt_count(reg['entries'])} entries on {fmt_count(reg['ranks'])} ranks)",
               "", "min", "max", "avg", "minPE", "maxPE", "imb.")
    t.add_row("Region wall time (inclusive)", *_stat_cells(reg["wall"]))
    t.add_row("MPI time in region (inclusive)", *_stat_cells(reg["mpi"]))
    return t


POP_COLUMNS = [("parallel_efficiency", "parallel eff."), ("load_balance", "load balance"),
               ("communication_efficiency", "comm. eff."), ("serialisation", "serialisation"),
               ("transfer", "transfer")]


def pop_table(pop: dict) -> Table:
    """POP efficiency metrics (docs/metrics.md): whole run, then one row per region."""
    t = _table("POP efficiency metrics (parallel eff. = load balance x comm. eff.)", "",
               *(label for _, label in POP_COLUMNS))
    frac = lambda v: NA if v is None else f"{100.0 * v:.1f}%"  # noqa: E731
    t.add_row("whole run", *(frac(pop["whole"][k]) for k, _ in POP_COLUMNS))
    for r in pop["regions"]:
        t.add_row(f"region {r['name']!r}", *(frac(r[k]) for k, _ in POP_COLUMNS))
    return t


def pop_lines(pop: dict) -> list[str]:
    """Why a number is missing, and how the metrics were obtained."""
    lines = [] if pop["available"] else [f"POP metrics not available: {pop['why_not']}"]
    return lines + [f"note: {n}" for n in pop["notes"]]


def io_table(files: list[dict]) -> Table:
    keys = sorted({k for f in files for k in f if k != "name"})
    t = _table("MPI-IO files and hints (rank 0's view after MPI_File_open)", "file", *keys)
    for f in files:
        t.add_row(str(f.get("name", "?")),
                  *(NA if f.get(k) is None else str(f[k]) for k in keys))
    return t


ENV_TIME_ROWS = [("init", "MPI_Init (entry to exit)"), ("init_own", "  of it mpiscope's own setup"),
                 ("finalize", "MPI_Finalize: wait for the last rank"),
                 ("cpu_time", "CPU time (user + system)"),
                 ("run_delay", "waiting for a CPU (run queue)"),
                 ("node_idle", "its node's CPUs idle (CPU-seconds)")]


def environment_table(env: dict) -> Table:
    t = _table("Environment: MPI_Init, MPI_Finalize and CPU time (seconds per rank)", "", "min",
               "max", "avg", "minPE", "maxPE", "imb.")
    for key, label in ENV_TIME_ROWS:
        t.add_row(label, *_stat_cells(env[key]))
    return t


def _range(s: dict) -> str:
    lo, hi = s["min"], s["max"]
    return f"{lo:g}" if lo == hi else f"{lo:g}-{hi:g}"


def environment_lines(env: dict, nranks: int) -> list[str]:
    """OpenMP, CPUs, binding problems and the variables set, one fact per line."""
    lines = []
    omp = "" if env["openmp_ranks"] is None else \
        f"OpenMP runtime loaded on {env['openmp_ranks']:,} of {nranks:,} rank(s); "
    node = f"; CPUs per node: {_range(env['node_cpus'])}" if env["node_cpus"]["max"] else ""
    lines.append(f"{omp}CPUs in a rank's affinity mask: {_range(env['ncpus'])}; threads per "
                 f"rank: {_range(env['threads'])}; threads per CPU (max): {env['load']['max']:.2g}"
                 + node)
    for key, what in (("unbound_ranks", "unbound (free to run on every CPU of a shared node)"),
                      ("overlap_ranks", "bound to CPUs another bound rank of their node uses"),
                      ("oversub_ranks", "running more OpenMP threads than CPUs in their mask")):
        if env[key]:
            lines.append(f"{env[key]:,} rank(s) {what}")
    var = env["variables"]
    if var["all_ranks"]:
        lines.append("Variables set on every rank: " + " ".join(
            _word(f"{k}={v}") for k, v in var["all_ranks"].items()))
    for d in var["differing"]:
        vals = ", ".join(_word(v) + ("" if n is None else f" ({n:,} ranks)")
                         for v, n in d["values"].items())
        lines.append(f"Differs between ranks: {d['name']}: {vals}")
    if not var["all_ranks"] and not var["differing"]:
        lines.append("No MPI or OpenMP tuning variable set (MPICH_*, MPIR_CVAR_*, OMPI_MCA_*, "
                     "UCX_*, I_MPI_*, FI_*, OMP_*, GOMP_*, KMP_*)")
    if env["source"] == "summary":
        lines.append("Summary mode: CPU lists seen " + (", ".join(env["cpu_lists"]) or NA)
                     + "; which rank had which needs a full-mode profile")
    return lines


def masks_text(node_row: dict) -> str:
    """A node's ranks grouped by CPU mask: "0-1: 0,1; 2: 2 x4" (x: threads per rank)."""
    masks = "; ".join(f"{g['ranks']}: {g['cpus'] or '?'}" +
                      (f" x{g['threads']}" if g["threads"] != 1 else "") for g in node_row["groups"])
    if node_row["groups_total"] > len(node_row["groups"]):
        masks += f"; ... ({node_row['groups_total']} masks)"
    return masks


def affinity_caption(env: dict) -> str:
    """The affinity table's title, saying how many of the nodes it shows."""
    shown = len(env["nodes"])
    more = "" if shown == env["nodes_total"] else f", {shown} of {env['nodes_total']:,} nodes"
    return f"CPU affinity per node (ranks -> CPUs{more})"


def affinity_table(env: dict) -> Table:
    t = _table(affinity_caption(env), "node", "host", "ranks",
               "masks (ranks: CPUs x threads)", "unbound", "overlap", "threads/CPU")
    for n in env["nodes"]:
        t.add_row(str(n["node"]), n["hostname"] or NA, fmt_count(n["ranks"]), masks_text(n),
                  fmt_count(n["unbound"]), fmt_count(n["overlap"]), f"{n['load_max']:.2g}")
    return t


SPARK = " ▁▂▃▄▅▆▇█"
TIMELINE_COLUMNS = 64


def sparkline(values, widths, columns: int = TIMELINE_COLUMNS) -> str:
    """Shares (0..1) per bin as one character per column (bins averaged, weighted by
    their width, into at most ``columns`` columns): " " none, "█" the whole column."""
    n = len(values)
    if not n:
        return ""
    edges = [round(i * n / min(columns, n)) for i in range(min(columns, n) + 1)]
    out = []
    for a, b in zip(edges[:-1], edges[1:]):
        w = sum(widths[a:b])
        v = sum(x * y for x, y in zip(values[a:b], widths[a:b])) / w if w > 0 else 0.0
        v = min(max(v, 0.0), 1.0)
        out.append(SPARK[0] if v <= 0 else SPARK[max(1, min(8, int(round(v * 8))))])
    return "".join(out)


def timeline_lines(tl: dict) -> list[str]:
    """The timeline as sparkline rows (share of each bin's time, per rank), then its phases
    and bursts."""
    if not tl.get("available"):
        return []
    n = len(tl["width"])
    cols = min(TIMELINE_COLUMNS, n)
    col_s = tl["end_seconds"] / cols if cols else 0.0
    lines = [f"Timeline: {n} bins of {fmt_time(tl['bin_seconds'])} s over "
             f"{fmt_time(tl['end_seconds'])} s, one column = {fmt_time(col_s)} s; clocks agree "
             f"to {fmt_time(tl['clock_offset_max'])} s. Share of the time per rank (avg):"]
    rows = [(k, tl["share"][k]) for k in tl["kinds"]] + [("compute", tl["share"]["compute"])]
    rows += [("MPI most", tl["mpi_max"]), ("MPI least", tl["mpi_min"])]
    rows += [(f"ranks {g['ranks'][0]}" + (f"-{g['ranks'][1]}" if g["ranks"][1] != g["ranks"][0]
                                           else ""), g["mpi_share"]) for g in tl["rank_groups"]]
    for name, values in rows:
        total = sum(v * w for v, w in zip(values, tl["width"])) / max(sum(tl["width"]), 1e-300)
        lines.append(f"  {name:<11} |{sparkline(values, tl['width'])}| {100 * total:5.1f} %")
    lines.append("  (MPI most / least: the rank with the most / least MPI time in each bin"
                 + ("; ranks a-b: their MPI share)" if tl["rank_groups"] else ")"))
    for p in tl["phases"]:
        who = "" if p["least_mpi_rank"] is None else f", least MPI: rank {p['least_mpi_rank']}"
        kind = f" ({p['top_kind']})" if p["top_kind"] else ""
        lines.append(f"  phase {p['index'] + 1} ({p['label']}): {fmt_time(p['start'])}-"
                     f"{fmt_time(p['end'])} s ({100 * p['share_of_run']:.0f} % of the run): "
                     f"MPI {100 * p['mpi_share']:.0f} %{kind}, ranks apart by "
                     f"{100 * p['spread']:.0f} %{who}")
    b = tl.get("bursts")
    if b:
        lines.append(f"  bursts: every {fmt_time(b['period'])} s ({b['count']} times from "
                     f"{fmt_time(b['first'])} s), {fmt_time(b['duration'])} s each: MPI share "
                     f"{100 * b['mpi_share_in']:.0f} % in them, {100 * b['mpi_share_out']:.0f} % "
                     f"between")
    return lines


def render(rep: dict, console: Console, by_comm: bool = False) -> None:
    """Print every section of the report ``rep`` on ``console`` (and the
    per-communicator table with ``by_comm``)."""
    for line in header_lines(rep):
        console.print(line, highlight=False)
    if rep.get("snapshot"):
        for line in snapshot_lines(rep["snapshot"]):
            console.print(line, style="bold", highlight=False)
    for w in rep["warnings"]:
        console.print(f"warning: {w}", style="yellow", highlight=False)
    console.print(summary_table(rep))
    pop = rep.get("pop")
    if pop is not None:
        if pop["available"]:
            console.print(pop_table(pop))
        for line in pop_lines(pop):
            console.print(line, style="dim", highlight=False)
    if rep["functions"]:
        scope = "" if rep["region_filter"] is None else f" in region {rep['region_filter']!r}"
        console.print(function_table(rep["functions"], f"MPI functions{scope} "
                                     "(time per rank in seconds)"))
    cs = rep.get("callsites")
    if cs and cs["rows"]:
        console.print(callsites_table(cs))
    for line in callsite_lines(cs) if cs else ():
        console.print(line, style="dim", highlight=False)
    sm = rep.get("samples")
    if sm and sm["functions"]:
        console.print(samples_table(sm))
    for line in samples_lines(sm) if sm and sm["hz"] else ():
        console.print(line, style="dim", highlight=False)
    if by_comm:
        if rep.get("communicators"):
            console.print(comm_table(rep["communicators"]))
        else:
            console.print("no per-communicator records in this profile (summary mode, or "
                          "written by an older runtime)", style="dim", highlight=False)
    mpit = rep.get("mpit")
    if mpit and mpit["variables"]:
        console.print(mpit_table(mpit))
    for line in mpit_lines(mpit or {}):
        console.print(line, style="dim", highlight=False)
    if rep["histogram"]:
        console.print(histogram_table(rep["histogram"]))
    if rep["p2p"]["total_msgs"]:
        console.print(p2p_table(rep["p2p"]))
    if rep["top_pairs"]:
        console.print(pairs_table(rep["top_pairs"]))
    for reg in rep["regions"]:
        if reg["wall"] is not None:
            console.print(region_table(reg))
        if reg["functions"]:
            console.print(function_table(reg["functions"],
                                         f"MPI functions in region {reg['name']!r} "
                                         "(exclusive of nested regions)"))
    if rep["io_files"]:
        console.print(io_table(rep["io_files"]))
    lines = timeline_lines(rep.get("timeline") or {})
    for line in lines:
        console.print(line, highlight=False)
    if lines:
        console.print()
    env = rep.get("environment")
    if env and env["available"]:
        console.print(environment_table(env))
        for line in environment_lines(env, rep["profile"]["nranks"]):
            console.print(line, highlight=False)
        if env["nodes"]:
            console.print(affinity_table(env))
