"""`mpiscope tune` on real MPI runs (one node): the eager limit raised as diagnose says is
kept with a gain whose interval is above 0 (both MPIs), an oversubscribed unbound run gets no
binding (diagnose reports oversubscription, not unbound ranks), a run with nothing to fix
keeps nothing; the directory holds every run, resumes without running anything again,
and bad input is one line.

tests/programs/late_receiver.c plants the eager limit's effect with sleeps: above the
limit each send waits for a receive its peer posts one sleep later, and the sender's own
sleep comes after that, so a run takes two sleeps per iteration instead of one, whatever
the machine's load. Few, short runs: 3 or 4 rounds, 1-2 s each.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import mpitest
from mpiscope import native

RUNS = 3
# Bound launches, so that the eager limit is the only mechanical finding (hydra binds
# nothing unless asked; Open MPI binds at 2 ranks but is told not to by mpitest's launcher).
BOUND = {"openmpi": ["mpirun.openmpi", "--bind-to", "core", "-n", "2"],
         "mpich": ["mpirun.mpich", "-bind-to", "core", "-n", "2"]}
# The messages: 1.5 x the eager limit diagnose names for this machine's libraries (Open MPI
# 4.1 shared memory: btl_vader_eager_limit 4096; MPICH 4.0 ch4:ucx: UCX_RNDV_THRESH auto,
# 8 KiB on-node), and the value the finding says to set (the messages' log2 bucket's top +
# 1 KiB).
EAGER = {"openmpi": (6144, "OMPI_MCA_btl_vader_eager_limit", "9216"),
         "mpich": (12288, "UCX_RNDV_THRESH", "17408")}
LATE = ("30", "30")  # iterations, ms of sleep: 0.9 s eager, 1.8 s by rendezvous
# Pairs for the eager limit: t's quantile is 4.3 at 3 pairs, 3.2 at 4; one run stalled by
# the machine's load (an eager run took 2.6 s instead of 1.1 s at load 25) is then less
# likely to pull the interval's low end below 0.
EAGER_RUNS = 4


def program(impl: str, name: str) -> str:
    return str(native.program(impl, f"tests/{name}"))


def tune(tmp_path: Path, *launch: str, runs: int = RUNS, check: bool = True,
         name: str = "t", env: dict | None = None,
         options: tuple[str, ...] = ()) -> tuple[dict | None, object]:
    proc = mpitest.run(mpitest.mpiscope_cmd("tune", "--json", "--runs", str(runs), "--dir",
                                            str(tmp_path / name), *options, "--", *launch),
                       cwd=tmp_path, check=check, timeout=600, env=env)
    return (json.loads(proc.stdout) if proc.returncode == 0 else None), proc


def assert_one_line_error(proc, *words):
    err = proc.stderr.strip()
    assert proc.returncode == 2 and "Traceback" not in err, proc.stdout + err
    assert len(err.splitlines()) == 1 and err.startswith("mpiscope: error: "), err
    assert all(w in err for w in words), err


def run_dirs(root: Path) -> dict[str, Path]:
    """run name -> its latest attempt folder."""
    return {d.name: sorted(d.iterdir())[-1] for d in (root / "runs").iterdir()}


@pytest.mark.alone
def test_eager_limit_raised_is_kept(impl, tmp_path):
    nbytes, var, value = EAGER[impl]
    launch = [*BOUND[impl], program(impl, "late_receiver"), str(nbytes), *LATE]
    res, _ = tune(tmp_path, *launch, runs=EAGER_RUNS)
    root = tmp_path / "t"
    assert [f["rule"] for f in res["baseline"]["findings"] if f["rule"] in
            ("eager-limit", "unbound-ranks", "cpu-overlap")] == ["eager-limit"]
    (cand,) = res["candidates"]
    assert cand["kind"] == "eager-limit" and cand["env"] == {var: value}, cand
    if impl == "openmpi":  # forwarded to ranks on other hosts too
        assert f"-x {var}" in cand["command"]
    assert cand["pairs"] == EAGER_RUNS and cand["runs"] == EAGER_RUNS
    # planted: one sleep per iteration instead of two. MPICH keeps it every time; Open MPI's
    # shared-memory transport showed +29 to +60 % under load but +4 % [-2.6, +10.8] on a
    # quiet machine (docs/tune.md): there the verdict must follow the intervals.
    lo, hi = cand["ci_pct"]
    if impl == "mpich" or cand["kept"]:
        assert cand["kept"] and cand["verdict"] == "kept", cand
        assert 0 < lo <= cand["gain_pct"] <= hi and cand["welch_ci_pct"][0] > 0
        # MPICH's gain is the planted one; Open MPI's is what its intervals prove (a CI run
        # kept +10.3 %, above 0 in both intervals)
        assert (20 if impl == "mpich" else 0) < cand["gain_pct"] < 70, cand
        rec = res["recommended"]
        assert rec["kind"] == "eager-limit" and rec["env"] == {var: value}
        assert rec["command"] == cand["command"] and rec["files"] == []
    else:
        assert cand["verdict"] == "no gain shown" and min(lo, cand["welch_ci_pct"][0]) <= 0, cand
        assert res["recommended"]["env"] == {}
    # the finding's own cost: the rule is silent once the limit is raised
    assert cand["finding_cost_s"]["baseline"] > 0 and cand["finding_cost_s"]["candidate"] == 0
    # every run: its profile, output and record; the output checked against the baseline's
    dirs = run_dirs(root)
    assert set(dirs) == {"probe", *(f"r{r:02d}-{k}" for r in range(1, EAGER_RUNS + 1)
                                    for k in ("baseline", "eager-limit"))}
    for name, d in dirs.items():
        record = json.loads((d / "run.json").read_text())
        assert record["status"] == "done" and record["exit_code"] == 0
        assert len(list(d.glob("*.mpiscope"))) == 1
        assert (d / "stdout.txt").read_text().startswith(f"late_receiver bytes={nbytes} ")
        assert record["env"] == ({var: value} if name.endswith("eager-limit") else {})
    assert json.loads((root / "result.json").read_text()) == res
    # resumed: nothing runs again, the same verdict
    again, _ = tune(tmp_path, *launch, runs=EAGER_RUNS)
    assert again["budget"]["runs_started"] == 0
    assert again["candidates"][0]["gain_pct"] == cand["gain_pct"]
    # two more rounds asked for, with a budget shorter than one run: none is started, the
    # verdict stands on the rounds done, and the result says the budget cut it short
    short, _ = tune(tmp_path, *launch, runs=EAGER_RUNS + 2, options=("--budget", "0.01"))
    assert short["budget"] | {"spent_s": 0} == {"minutes": 0.01, "spent_s": 0,
                                               "cut_short": True, "runs_started": 0}
    assert short["candidates"][0]["pairs"] == EAGER_RUNS
    assert short["candidates"][0]["kept"] == cand["kept"]
    # another command in the same directory: one line, nothing run
    _, proc = tune(tmp_path, *launch[:-1], "10", check=False)
    assert_one_line_error(proc, "holds a tune of another command")


def test_binding_an_oversubscribed_unbound_run(tmp_path):
    """4 Open MPI ranks of CPU-bound steps on 2 cores, no binding: more threads than CPUs,
    which diagnose reports as oversubscribed, not as unbound ranks (issue 29 item 1: bound
    with overload allowed the run took the same time, no binding gives 4 ranks 4 CPUs), so
    tune tries no binding; the oversubscribed finding, when its cost reaches 5 %, is listed
    as not mechanical (fewer ranks is the user's call)."""
    launch = ["mpirun.openmpi", "--oversubscribe", "--bind-to", "none", "-n", "4",
              program("openmpi", "omp_steps"), "10", "2000000"]
    res, _ = tune(tmp_path, *launch, runs=2, env={"OMP_NUM_THREADS": "1"})
    rules = {f["rule"] for f in res["baseline"]["findings"]}
    assert not {"unbound-ranks", "cpu-overlap"} & rules, rules
    assert not [c for c in res["candidates"] if c["kind"] == "binding"]
    assert ("oversubscribed" in rules) == ("oversubscribed" in {
        m["rule"] for m in res["not_mechanical"]})


def test_nothing_to_fix_keeps_nothing(tmp_path):
    launch = [*BOUND["mpich"], program("mpich", "sleeper"), "1"]
    res, _ = tune(tmp_path, *launch)
    assert res["candidates"] == [] and res["budget"]["runs_started"] == 1
    assert res["recommended"]["kind"] is None
    assert res["recommended"]["command"] == " ".join(launch)
    assert set(run_dirs(tmp_path / "t")) == {"probe"}


def test_bad_input_is_one_line(tmp_path):
    sleeper = program("mpich", "sleeper")
    for args, words in ((["--runs", "1", "--", *BOUND["mpich"], sleeper], ("--runs",)),
                        (["--budget", "0", "--", *BOUND["mpich"], sleeper], ("--budget",)),
                        (["--", "no-such-launcher", "-n", "2", sleeper], ("not found",)),
                        ([], ("tune: Missing argument",)),
                        (["--", "mpirun.mpich", "-n", "2", "false"], ("baseline run failed",))):
        proc = mpitest.run(mpitest.mpiscope_cmd("tune", "--dir", str(tmp_path / "bad"), *args),
                           cwd=tmp_path, check=False)
        err = proc.stderr.strip().splitlines()
        assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
        assert err[-1].startswith("mpiscope: error: ") and all(w in err[-1] for w in words), err


def test_output_check_ignores_the_transport_log_not_the_results():
    """A UCX log line on standard output (seen on the virtual cluster's 2mbit links: an
    endpoint timeout in one run of six, the run ending well) is not a changed result; a
    changed checksum or an extra line of the program's is."""
    from mpiscope.tune import outputs
    base = ["checksum 1.5\ntime 2.0 s\n", "checksum 1.5\ntime 2.1 s\n"]
    ucx = ("[1764390000.123456] [node2:12345:0]           flush.c:57   UCX  ERROR req 0x55d0 "
           "(0x55d0): error during flush: Endpoint timeout, flush comp 0x1 count 1")
    assert outputs.differs(base, f"checksum 1.5\ntime 1.0 s\n{ucx}\n") is None
    # UCX pads the pid (the virtual cluster's run of 2026-11-29 11:31: both orders rejected)
    padded = ucx.replace("[node2:12345:0]", "[node2:4567 :0]")
    assert outputs.differs(base, f"checksum 1.5\ntime 1.0 s\n{padded}\n") is None
    assert "checksum 1.5" in outputs.differs(base, "checksum 1.6\ntime 1.0 s\n")
    assert "UCX ERROR" in outputs.differs(base, "checksum 1.5\ntime 1.0 s\nUCX ERROR of mine\n")


def test_terminal_view_prints_program_strings_literally():
    """The command, paths and titles come from the user's program: rich markup, escapes
    and newlines in them print as the characters they are (issue 27 item 13)."""
    import io

    from mpiscope.terminal import console
    from mpiscope.tune.render import render
    evil = "x[bold red]EVIL\x1b[31m:smile:\n<script>"
    shown = "x[bold red]EVIL\\x1b[31m:smile:\\n<script>"
    cand = {"kind": "rank-order", "change": f"order of {evil}", "pairs": 3, "time_s": 1.0,
            "gain_pct": 5.0, "ci_pct": [1.0, 9.0], "finding_cost_s": {"baseline": None,
                                                                   "candidate": None},
            "kept": False, "verdict": "no gain shown", "why": f"why {evil}"}
    res = {"command": f"mpirun -n 2 ./{evil}", "mpi": "openmpi", "rounds": 3,
           "directory": f"/tmp/{evil}", "candidates": [cand], "skipped": [],
           "baseline": {"runs": 3, "time_s": 1.0, "min_s": 0.9, "max_s": 1.1,
                        "findings": []},
           "not_mechanical": [{"rule": "late-arrival", "title": f"late {evil}"}],
           "budget": {"cut_short": False, "minutes": 10},
           "recommended": {"kind": "rank-order", "gain_pct": 5.0, "ci_pct": [1.0, 9.0],
                           "env": {"SLURM_HOSTFILE": f"/tmp/{evil}"},
                           "command": f"srun ./{evil}", "files": [f"/tmp/{evil}"]}}
    out = io.StringIO()
    render(res, console(file=out, width=400))
    text = out.getvalue()
    assert "\x1b" not in text and "EVIL\n" not in text
    for what in (f"./{shown}", f"/tmp/{shown}", f"why {shown}", f"late {shown}",
                 f"srun ./{shown}", f"file: /tmp/{shown}"):
        assert what in text, (what, text)
