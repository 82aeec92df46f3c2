"""The tune result dict in the terminal (``--json`` prints the same dict).

Printed with the literal console (terminal.console): commands, paths and titles come from
the user's program and print character for character, so no line here uses markup."""

from __future__ import annotations


def _pct(v) -> str:
    return "-" if v is None else f"{v:+.1f} %"


def _ci(ci) -> str:
    return "-" if ci is None else f"[{ci[0]:+.1f}, {ci[1]:+.1f}] %"


def _secs(v) -> str:
    return "-" if v is None else f"{v:.3f} s"


def render(res: dict, console) -> None:
    from rich.table import Table
    from rich.text import Text

    b = res["baseline"]
    console.print(f"mpiscope tune: {res['command']} ({res['mpi']}; "
                  f"{res['rounds']} round(s); runs in {res['directory']})", highlight=False)
    console.print(f"baseline: {b['runs']} timed run(s), run time median {_secs(b['time_s'])} "
                  f"(min {_secs(b['min_s'])}, max {_secs(b['max_s'])})", highlight=False)
    findings = b["findings"]
    if findings:
        console.print("findings of the probe run: " + "; ".join(
            f"{f['rule']} (~{f['cost_s']:.3g} s, {f['cost_pct']:.0f} %)" for f in findings),
            highlight=False)
    else:
        console.print("findings of the probe run: none", highlight=False)
    if res["candidates"]:
        t = Table(title="Candidates (gain on the run's time, MPI_Init to MPI_Finalize; 95 % interval, paired by round)",
                  title_justify="left")
        for col, just in (("candidate", "left"), ("change", "left"), ("runs", "right"),
                          ("time", "right"), ("gain", "right"), ("95 % interval", "right"),
                          ("finding cost (base -> cand)", "right"), ("verdict", "left")):
            t.add_column(col, justify=just, overflow="fold")
        for c in res["candidates"]:
            cost = c["finding_cost_s"]
            cost_txt = ("-" if cost["baseline"] is None or cost["candidate"] is None
                        else f"{cost['baseline']:.3g} -> {cost['candidate']:.3g} s")
            t.add_row(c["kind"], c["change"], str(c["pairs"]), _secs(c["time_s"]),
                      _pct(c["gain_pct"]), _ci(c["ci_pct"]), cost_txt,
                      Text("kept", style="green") if c["kept"] else c["verdict"])
        console.print(t)
        for c in res["candidates"]:
            if not c["kept"]:
                console.print(f"  {c['kind']}: {c['why']}", highlight=False)
    if res["skipped"]:
        console.print(f"not tried (--only): {', '.join(res['skipped'])}", highlight=False)
    for m in res["not_mechanical"]:
        console.print(f"not tried, no mechanical fix: {m['rule']}: {m['title']} "
                      f"(mpiscope diagnose says what to do)", highlight=False)
    if res["budget"]["cut_short"]:
        console.print(f"the budget of {res['budget']['minutes']:g} min cut the rounds short: "
                      f"run again with a larger --budget to resume", highlight=False)
    r = res["recommended"]
    if r["kind"]:
        console.print(f"recommended ({r['kind']}, {_pct(r['gain_pct'])}, 95 % "
                      f"interval {_ci(r['ci_pct'])}):", style="bold", highlight=False)
        env = " ".join(f"{k}={v}" for k, v in r["env"].items())
        console.print(f"  {env + ' ' if env else ''}{r['command']}",
                      highlight=False, soft_wrap=True)
        for f in r["files"]:
            console.print(f"  file: {f}", highlight=False)
    else:
        console.print(f"recommended: {r['why']}", style="bold", highlight=False)
