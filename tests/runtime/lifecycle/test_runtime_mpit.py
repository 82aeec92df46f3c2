"""MPI_T performance variables (docs/runtime.md "MPI_T performance variables").

tests/programs/mpit_flood.c floods rank 0 with unexpected messages, or
pre-posts its receives; with MPISCOPE_MPIT=1 the profile records Open MPI's
queue lengths per rank, with their sampled high-water marks on rank 0 and
not on the others. MPICH 4.0 here lists no performance variables: the
report says so. Without MPISCOPE_MPIT nothing is recorded. A program with
its own MPI_T session (tests/programs/mpit_user.c) sees the same with and
without the runtime's.
"""

from __future__ import annotations

import json
import re

import numpy as np

import mpitest
from mpiscope import format as fmt
from mpiscope import native, read

N = 50          # messages each rank sends to rank 0


def ranks(impl: str) -> int:
    return min(4, mpitest.NRANKS[impl])


def run_prog(impl: str, tmp_path, *args: str, env: dict | None = None, mode: str | None = None,
             run_opts: tuple[str, ...] = ()):
    n = ranks(impl)
    cmd = mpitest.mpiscope_cmd("run", "--mpi", impl, "--dir", str(tmp_path), *run_opts,
                               *(["--mode", mode] if mode else []), "--",
                               *mpitest.launcher(impl, n), *args)
    proc = mpitest.run(cmd, cwd=tmp_path, env=env, timeout=240)
    [path] = re.findall(r"mpiscope: profile: (\S+)", proc.stderr)
    return n, proc, path


def flood(impl: str, tmp_path, how: str, mpit: bool = True, mode: str | None = None):
    # `mpiscope run --mpit` sets MPISCOPE_MPIT=1 for the ranks
    return run_prog(impl, tmp_path, str(native.program(impl, "tests/mpit_flood")), how, str(N),
                    mode=mode, run_opts=("--mpit",) if mpit else ())


def report(path: str, *extra: str) -> dict:
    return json.loads(mpitest.run(mpitest.mpiscope_cmd("report", "--json", *extra, path)).stdout)


def variable(rep: dict, fragment: str) -> dict:
    found = [v for v in rep["mpit"]["variables"] if fragment in v["name"]]
    assert found, [v["name"] for v in rep["mpit"]["variables"]]
    return found[0]


def per_rank(prof, fragment: str, key: str) -> np.ndarray:
    """One MPIT field of a variable, indexed by rank (full mode)."""
    idx = next(i for i, v in enumerate(prof.mpit_variables) if fragment in v["name"])
    recs = prof.mpit[prof.mpit["var"] == idx]
    out = np.zeros(prof.nranks)
    out[recs["rank"]] = recs[key]
    return out


def assert_none_available(rep: dict, path: str) -> None:
    """MPICH 4.0 here: asked for, nothing available, and the report says so."""
    assert rep["mpit"]["recorded"] and rep["mpit"]["variables"] == []
    assert rep["mpit"]["why_none"] == "no MPI_T performance variables available from this MPI library"
    text = mpitest.run(mpitest.mpiscope_cmd("report", path)).stdout
    assert "MPI_T: no MPI_T performance variables available from this MPI library" in text


def test_flood_shows_the_unexpected_queue_high_water_mark_on_rank_0(impl, tmp_path):
    n, proc, path = flood(impl, tmp_path, "flood")
    sent = (n - 1) * N
    assert f"mpit_flood: flood, {sent} messages to rank 0 on {n} ranks" in proc.stdout
    rep = report(path)
    if impl == "mpich":
        assert_none_available(rep, path)
        return
    assert rep["mpit"]["library_pvars"] > 0
    unexpected = variable(rep, "unexpected_msgq_length")
    assert unexpected["kind"] == "level" and unexpected["bound"] == "communicators"
    assert unexpected["elements"] == n
    peak = unexpected["peak"]
    # every message sent sat in rank 0's queue at once; a barrier's own messages may add a few
    assert peak["max_pe"] == 0 and sent <= peak["max"] <= sent + n
    assert unexpected["value"]["max"] == 0          # drained by the receives
    prof = read(path)
    peaks = per_rank(prof, "unexpected_msgq_length", "peak")
    assert peaks[0] == peak["max"] and peaks[1:].max() < N, peaks
    assert per_rank(prof, "unexpected_msgq_length", "samples")[0] > 1
    frame = prof.to_pandas("mpit")
    rows = frame[frame["variable"] == "pml_ob1_unexpected_msgq_length"].set_index("rank")
    assert sorted(rows.index) == list(range(n)) and rows.loc[0, "peak"] == peak["max"]

    text = mpitest.run(mpitest.mpiscope_cmd("report", path)).stdout
    assert "MPI_T performance variables" in text and "pml_ob1_unexpected_msgq_length" in text
    html = tmp_path / "flood.html"
    mpitest.run(mpitest.mpiscope_cmd("html", path, "-o", str(html)))
    page = html.read_text()
    assert "MPI_T performance variables" in page and "pml_ob1_unexpected_msgq_length" in page


def test_queues_of_a_communicator_the_program_made_are_followed(tmp_path):
    """The flood on a duplicate of MPI_COMM_WORLD (freed before MPI_Finalize):
    its queue is in the dup's handle, summed into the same variable."""
    n, proc, path = flood("openmpi", tmp_path, "dup")
    sent = (n - 1) * N
    assert f"mpit_flood: dup, {sent} messages to rank 0 on {n} ranks" in proc.stdout
    rep = report(path)
    unexpected = variable(rep, "unexpected_msgq_length")
    assert unexpected["bound"] == "communicators"
    assert unexpected["peak"]["max_pe"] == 0 and sent <= unexpected["peak"]["max"] <= sent + n
    assert read(path).meta["mpit"]["communicators_missed"] == 0


def test_queues_of_mpi_comm_self_are_followed(tmp_path):
    """Issue 27 item 12: every rank floods itself on MPI_COMM_SELF, which the program never
    makes: its queue is read too ("the rank's queue over all its communicators")."""
    n, proc, path = flood("openmpi", tmp_path, "self")
    assert f"mpit_flood: self, {N} messages to itself on each of {n} ranks" in proc.stdout
    peaks = per_rank(read(path), "unexpected_msgq_length", "peak")
    assert (peaks >= N).all() and (peaks <= N + n).all(), peaks


def test_preposted_receives_keep_the_unexpected_queue_low(tmp_path):
    impl = "openmpi"                  # MPICH here has no performance variables (tests above)
    n, proc, path = flood(impl, tmp_path, "preposted")
    sent = (n - 1) * N
    assert f"mpit_flood: preposted, {sent} messages to rank 0 on {n} ranks" in proc.stdout
    rep = report(path)
    unexpected = variable(rep, "unexpected_msgq_length")
    assert unexpected["peak"]["max"] <= n       # at most a collective's own messages
    posted = variable(rep, "posted_recvq_length")
    # rank 0's receives were all posted, none matched, while it was sampled
    assert posted["peak"]["max"] == sent and posted["peak"]["max_pe"] == 0
    assert posted["value"]["max"] == 0
    prof = read(path)
    assert per_rank(prof, "posted_recvq_length", "peak")[1:].max() < N


def test_queue_variables_of_a_pml_not_in_use_are_not_read(tmp_path):
    """With the monitoring PML interposed, ob1 is not the PML in use: its queue
    variables would read another PML's data (on UCX clusters: NULL), so they
    are left alone, the program runs as always and the report says why."""
    n, proc, path = run_prog("openmpi", tmp_path, str(native.program("openmpi", "tests/mpit_flood")),
                             "flood", str(N), env={"MPISCOPE_MPIT": "1",
                                                   "OMPI_MCA_pml_monitoring_enable": "1"})
    assert f"mpit_flood: flood, {(n - 1) * N} messages to rank 0" in proc.stdout
    rep = report(path)
    assert rep["mpit"]["recorded"] and rep["mpit"]["variables"] == []
    assert "belong to a PML that is not the one in use" in rep["mpit"]["why_none"]


def _sections(path: str) -> set[int]:
    raw = open(path, "rb").read()
    h = np.frombuffer(raw, fmt.HEADER, count=1)[0]
    table = np.frombuffer(raw, fmt.SECTION, count=int(h["nsections"]),
                          offset=int(h["section_table_offset"]))
    return {int(k) for k in table["kind"]}


def test_without_mpiscope_mpit_nothing_is_recorded_and_nothing_changes(impl, tmp_path, monkeypatch):
    monkeypatch.delenv("MPISCOPE_MPIT", raising=False)
    n = ranks(impl)
    prog = [str(native.program(impl, "tests/mpit_flood")), "flood", str(N)]
    plain = mpitest.run(mpitest.launcher(impl, n) + prog, cwd=tmp_path, timeout=240)
    off_dir, on_dir = tmp_path / "off", tmp_path / "on"
    off_dir.mkdir()
    on_dir.mkdir()
    _, off, off_path = flood(impl, off_dir, "flood", mpit=False)
    _, on, _ = flood(impl, on_dir, "flood", mpit=True)
    line = [ln for ln in plain.stdout.splitlines() if ln.startswith("mpit_flood:")]
    assert len(line) == 1
    for proc in (off, on):
        assert [ln for ln in proc.stdout.splitlines() if ln.startswith("mpit_flood:")] == line
    assert fmt.SEC_MPIT not in _sections(off_path)
    prof = read(off_path)
    assert "mpit" not in prof.meta and len(prof.mpit) == 0
    assert prof.meta["settings"]["MPISCOPE_MPIT"] == 0
    rep = report(off_path)
    assert rep["mpit"] == {"recorded": False, "why_none": None, "library_pvars": None,
                           "sample_interval_us": None, "variables": []}
    assert "MPI_T" not in mpitest.run(mpitest.mpiscope_cmd("report", off_path)).stdout


def test_a_program_with_its_own_mpit_session_still_works(impl, tmp_path):
    n = ranks(impl)
    prog = str(native.program(impl, "tests/mpit_user"))
    plain = mpitest.run(mpitest.launcher(impl, n) + [prog], cwd=tmp_path, timeout=240)
    _, proc, path = run_prog(impl, tmp_path, prog, env={"MPISCOPE_MPIT": "1"})
    want = [ln for ln in plain.stdout.splitlines() if ln.startswith("mpit_user:")]
    assert len(want) == 1 and "init ok" in want[0] and f"sum {n * (n + 1) // 2}" in want[0]
    assert [ln for ln in proc.stdout.splitlines() if ln.startswith("mpit_user:")] == want
    rep = report(path)
    if impl == "mpich":
        assert_none_available(rep, path)
    else:
        m = re.search(r"(\d+) performance variables, (\d+) of (\d+) reads ok", want[0])
        assert int(m[1]) > 0 and m[2] == m[3] and int(m[3]) > 0
        assert variable(rep, "unexpected_msgq_length")["value"]["max"] == 0


def test_summary_mode_reduces_with_min_max_and_pes(impl, tmp_path):
    n, proc, path = flood(impl, tmp_path, "flood", mode="summary")
    rep = report(path)
    assert rep["profile"]["mode"] == "summary"
    if impl == "mpich":
        assert_none_available(rep, path)
        return
    sent = (n - 1) * N
    peak = variable(rep, "unexpected_msgq_length")["peak"]
    assert peak["max_pe"] == 0 and sent <= peak["max"] <= sent + n
    assert peak["min"] < N and peak["min_pe"] != 0
    assert peak["sum"] >= peak["max"]
    assert variable(rep, "unexpected_msgq_length")["samples"] is None
    frame = read(path).to_pandas("mpit")
    row = frame[(frame["variable"] == "pml_ob1_unexpected_msgq_length") & (frame["metric"] == "peak")]
    assert len(row) == 1 and row["max"].iloc[0] == peak["max"] and row["max_rank"].iloc[0] == 0
    assert "pml_ob1_unexpected_msgq_length" in mpitest.run(
        mpitest.mpiscope_cmd("report", path)).stdout
