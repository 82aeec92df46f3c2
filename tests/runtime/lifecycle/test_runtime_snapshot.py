"""Snapshots of running, hung and killed jobs (docs/runtime.md "Snapshots").

tests/programs/deadlock.c hangs on purpose after known traffic; the test
signals every rank with SIGUSR1 while it hangs and reads the spool.
tests/programs/snap_long.c runs for a while: killed by `timeout -s TERM`, and
snapshotted every second with MPISCOPE_SNAPSHOT=1.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import threading
import time
from pathlib import Path

import numpy as np
import pytest

import mpitest
from mpiscope import format as fmt
from mpiscope import native, read
from mpiscope.errors import UserError
from profile_expect import assert_timeline_totals


def ranks(impl: str) -> int:
    return min(4, mpitest.NRANKS[impl])


def program(impl: str, name: str) -> str:
    return str(native.program(impl, f"tests/{name}"))


def preload_cmd(impl: str, n: int, env_names=("MPISCOPE_DIR",)) -> list[str]:
    lib = str(native.runtime_library(impl))
    if impl == "openmpi":
        return [*mpitest.launcher(impl, n), "-x", f"LD_PRELOAD={lib}",
                *[a for name in env_names for a in ("-x", name)]]
    return [*mpitest.launcher(impl, n), "-genv", "LD_PRELOAD", lib]


class Job:
    """A launched job whose ranks print "<name>: rank R pid P" lines."""

    def __init__(self, cmd: list[str], cwd: Path, env: dict, nranks: int):
        self.proc = subprocess.Popen(cmd, cwd=cwd, env=mpitest.mpi_env(env), text=True,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.lines: list[str] = []
        self.pids: dict[int, int] = {}
        self.nranks = nranks
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        self.err = ""
        threading.Thread(target=self._read_err, daemon=True).start()

    def _read(self):
        for line in self.proc.stdout:
            self.lines.append(line)
            m = re.search(r"rank (\d+) pid (\d+)", line)
            if m:
                self.pids[int(m.group(1))] = int(m.group(2))

    def _read_err(self):
        self.err = self.proc.stderr.read()

    def wait_pids(self, timeout: float = 120) -> dict[int, int]:
        end = time.time() + timeout
        while len(self.pids) < self.nranks:
            assert time.time() < end and self.proc.poll() is None, "".join(self.lines)
            time.sleep(0.05)
        return self.pids

    def signal_ranks(self, sig: int) -> None:
        for pid in self.pids.values():
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                pass

    def finish(self, timeout: float = 60) -> int:
        try:
            return self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.signal_ranks(signal.SIGKILL)
            return self.proc.wait(timeout=30)


def spool_of(workdir: Path) -> Path:
    spools = list(workdir.glob("*.spool"))
    assert len(spools) == 1, spools
    return spools[0]


def wait_answers(workdir: Path, nranks: int, reason: str, timeout: float = 60):
    """The spool's profile once every rank answered for `reason`."""
    end, last = time.time() + timeout, None
    while time.time() < end:
        spools = list(workdir.glob("*.spool"))
        if spools:
            try:
                prof = read(spools[0])
                last = prof.meta["snapshot"]
                if last["answered"] == nranks and last["reasons"] == [reason]:
                    return prof
            except UserError as err:
                last = str(err)
        time.sleep(0.1)
    raise AssertionError(f"not every rank answered: {last}")


def calls(prof, name: str) -> np.ndarray:
    fid = prof.func_id(name)
    rows = prof.funcs[prof.funcs["func"] == fid]
    return np.bincount(rows["rank"], weights=rows["calls"], minlength=prof.nranks).astype(int)


def test_hung_job_shows_where_each_rank_waits(impl, tmp_path):
    n = ranks(impl)
    job = Job(mpitest.mpiscope_cmd("run", "--mpi", impl, "--dir", str(tmp_path), "--",
                                   *mpitest.launcher(impl, n), program(impl, "deadlock")),
              tmp_path, {}, n)
    try:
        job.wait_pids()
        time.sleep(0.5)                 # let every rank enter its last call
        job.signal_ranks(signal.SIGUSR1)
        prof = wait_answers(tmp_path, n, "signal")
        assert prof.is_partial and prof.flags & fmt.FLAG_PARTIAL
        assert job.proc.poll() is None, "the job must still hang after the snapshot"

        # what ran until then, exactly; the calls in flight are not counted yet
        assert calls(prof, "MPI_Allreduce").tolist() == [1] * n
        assert calls(prof, "MPI_Sendrecv").tolist() == [1] * n
        sr = prof.funcs[prof.funcs["func"] == prof.func_id("MPI_Sendrecv")]
        assert sr["bytes_sent"].tolist() == [32] * n and sr["bytes_recv"].tolist() == [32] * n
        assert calls(prof, "MPI_Recv").sum() == 0 and calls(prof, "MPI_Barrier").sum() == 0

        # issue 27 item 5: the time in the call a rank is stuck in is MPI time of that call
        # (up to the snapshot), not compute
        for rec in prof.inflight[prof.inflight["thread"] == 0]:
            r, name = int(rec["rank"]), prof.functions[int(rec["func"])]
            row = prof.funcs[(prof.funcs["rank"] == r) & (prof.funcs["func"] == rec["func"])]
            assert name == ("MPI_Barrier" if r == n - 1 else "MPI_Recv")
            assert rec["seconds"] >= 0.4, rec
            assert len(row) == 1 and row["calls"][0] == 0
            assert abs(row["time"][0] - rec["seconds"]) < 1e-6 * max(1.0, rec["seconds"]), (row, rec)
            assert prof.ranks["mpi"][r] >= rec["seconds"] and prof.ranks["mpi"][r] <= prof.ranks["wall"][r]
            if name == "MPI_Recv":
                assert prof.ranks["wait"][r] >= rec["seconds"]

        rep = json.loads(mpitest.run(mpitest.mpiscope_cmd("report", "--json", str(spool_of(tmp_path)))).stdout)
        where = {(w["state"], w["from"]): (w["count"], w["ranks"]) for w in rep["snapshot"]["where"]}
        assert where == {("MPI_Recv", n - 1): (n - 1, list(range(n - 1))),
                         ("MPI_Barrier", None): (1, [n - 1])}
        assert rep["snapshot"]["answered"] == n and rep["profile"]["partial"] is True
        text = mpitest.run(mpitest.mpiscope_cmd("report", str(spool_of(tmp_path)))).stdout
        plural = "rank" if n == 2 else "ranks"
        assert f"{n - 1} {plural} in MPI_Recv from rank {n - 1}: " in text
        assert f"1 rank in MPI_Barrier: {n - 1}" in text
        assert f"{n} of {n} ranks answered" in text

        # issue 27 item 6: diagnose names the hang: the wait-for cycle, and since when
        diag = json.loads(mpitest.run(mpitest.mpiscope_cmd("diagnose", "--json",
                                                           str(spool_of(tmp_path)))).stdout)
        top = diag["findings"][0]
        assert top["rule"] == "hang" and top["kind"] == "deadlock" and not diag["clean"], diag
        assert top["ranks"]["count"] == n and top["ranks"]["list"] == list(range(n))
        evidence = {e["label"]: e["value"] for e in top["evidence"]}
        assert evidence["wait-for cycle"] == (f"rank 0 (MPI_Recv from rank {n - 1} on world) -> "
                                              f"rank {n - 1} (MPI_Barrier on world) -> rank 0")
        recv = f"{n - 1} rank{'s' if n > 2 else ''} in MPI_Recv from rank {n - 1} on world: " \
               f"{'0' if n == 2 else f'0-{n - 2}'}"
        assert evidence[recv] >= 0.4 and evidence[f"1 rank in MPI_Barrier on world: {n - 1}"] >= 0.4
        assert "UTC" in evidence["deadlocked since"]
        said = mpitest.run(mpitest.mpiscope_cmd("diagnose", str(spool_of(tmp_path)))).stdout
        assert "No scaling problem" not in said and "Deadlock: ranks 0-" in said

        # merged into one file: the same records, partial flag, in-flight section
        out = mpitest.run(mpitest.mpiscope_cmd("merge", str(spool_of(tmp_path)))).stdout.strip()
        merged = read(out)
        assert merged.is_partial
        assert merged.funcs.tobytes() == prof.funcs.tobytes()
        assert merged.inflight.tobytes() == prof.inflight.tobytes()
        again = mpitest.run(mpitest.mpiscope_cmd("merge", str(spool_of(tmp_path))), check=False)
        assert again.returncode == 2 and "exists" in again.stderr and "Traceback" not in again.stderr
    finally:
        job.signal_ranks(signal.SIGKILL)
        job.finish()


def test_killed_by_sigterm_leaves_a_partial_profile(impl, tmp_path):
    """SIGTERM to every rank, as Slurm sends at a time limit or scancel before SIGKILL:
    each rank leaves its snapshot and its own SIGTERM handler still runs after ours.

    (Not `timeout -s TERM mpirun`: Open MPI 4.1's mpirun then SIGKILLs the ranks
    within its 1 s odls_base_sigkill_timeout, often before any rank sees the
    SIGTERM; without mpiscope the program's own handler ran in 1 of 3 such runs.
    And once one rank has died, Open MPI tears the others down, which lost a
    rank's handler in 9 of 40 loaded runs without mpiscope: snap_long's handler
    therefore waits for every rank's marker before it dies.)
    """
    n = ranks(impl)
    job = Job([*preload_cmd(impl, n), program(impl, "snap_long"), "60", "own-term"],
              tmp_path, {"MPISCOPE_DIR": str(tmp_path)}, n)
    job.wait_pids()
    time.sleep(1.5)
    job.signal_ranks(signal.SIGTERM)
    rc = job.finish()
    assert rc != 0, job.err[-2000:]
    assert not list(tmp_path.glob("*.mpiscope")), "no full profile: MPI_Finalize never ran"
    prof = read(spool_of(tmp_path))
    snap = prof.meta["snapshot"]
    assert prof.is_partial and snap["reasons"] == ["SIGTERM"]
    # The handler's marker files, not its output: a launcher may drop a dying rank's last line.
    handled = {int(p.name.split(".")[1]) for p in tmp_path.glob("own_term.*")}
    answered = sorted(set(range(n)) - set(snap["missing"]))
    # Every rank got the signal itself, and none dies before all have handled it.
    assert answered == list(range(n)) and handled == set(range(n)), (answered, handled)
    allreduce = calls(prof, "MPI_Allreduce")
    assert all(allreduce[r] > 10 for r in answered), allreduce
    assert all(prof.ranks["wall"][r] > 1.0 for r in answered)
    # the timeline up to the snapshot: every rank's bins on one grid, its calls in them
    assert_timeline_totals(prof)
    tl = prof.timeline_bins
    assert tl.end_seconds == pytest.approx(prof.ranks["wall"].max())
    merged = read(mpitest.run(mpitest.mpiscope_cmd("merge", str(spool_of(tmp_path)))).stdout.strip())
    assert merged.timeline.tobytes() == prof.timeline.tobytes()


def test_snapshot_every_second_each_readable(impl, tmp_path):
    n = ranks(impl)
    job = Job([*preload_cmd(impl, n, ("MPISCOPE_DIR", "MPISCOPE_SNAPSHOT")),
               program(impl, "snap_long"), "5"],
              tmp_path, {"MPISCOPE_DIR": str(tmp_path), "MPISCOPE_SNAPSHOT": "1"}, n)
    seen = []
    try:
        job.wait_pids()
        while job.proc.poll() is None:
            time.sleep(0.7)
            spools = list(tmp_path.glob("*.spool"))
            if not spools or not (spools[0] / "meta.json").exists():
                continue
            prof = read(spools[0])      # every read while the job runs must succeed
            snap = prof.meta["snapshot"]
            assert snap["reasons"] == ["timer"]
            seen.append((snap["seq"]["max"], snap["answered"], calls(prof, "MPI_Allreduce")))
    finally:
        rc = job.finish()
    assert rc == 0, job.err[-2000:]
    full = [p for p in tmp_path.glob("*.mpiscope")]
    assert len(full) == 1 and not read(full[0]).is_partial
    assert len(seen) >= 3, seen
    seqs = [s[0] for s in seen]
    assert seqs == sorted(seqs) and seqs[-1] >= 3
    for (_, _, a), (_, _, b) in zip(seen, seen[1:]):
        assert (b >= a).all()                 # counts only grow between snapshots
    assert seen[-1][1] == n
    final_calls = calls(read(full[0]), "MPI_Allreduce")
    assert (final_calls >= seen[-1][2]).all()


def launcher_pid(job: Job, timeout: float = 60) -> int:
    """The pid of the launcher `mpiscope run` started (its child mpirun / mpiexec)."""
    end = time.time() + timeout
    while time.time() < end:
        kids = Path(f"/proc/{job.proc.pid}/task/{job.proc.pid}/children").read_text().split()
        for kid in kids:
            name = Path(f"/proc/{kid}/comm").read_text().strip()
            if name.startswith(("mpirun", "mpiexec", "orterun")):
                return int(kid)
        time.sleep(0.05)
    raise AssertionError("no launcher under mpiscope run")


def where_now(workdir: Path) -> dict:
    """{(state, from): ranks} of the spool's newest answers."""
    rep = json.loads(mpitest.run(mpitest.mpiscope_cmd("report", "--json", str(spool_of(workdir)))).stdout)
    return {(w["state"], w["from"]): w["ranks"] for w in rep["snapshot"]["where"]}


def finalize_wait_job(impl: str, workdir: Path, env: dict) -> tuple[Job, int]:
    n = ranks(impl)
    job = Job(mpitest.mpiscope_cmd("run", "--mpi", impl, "--dir", str(workdir), "--",
                                   *mpitest.launcher(impl, n), program(impl, "finalize_wait")),
              workdir, env, n)
    job.wait_pids()
    return job, n


def let_finish(job: Job, workdir: Path) -> int:
    """The last rank of finalize_wait goes on (the file "go"); the job's exit code."""
    (workdir / "go").touch()
    return job.finish(120)


def test_snapshot_signal_while_ranks_wait_in_finalize(impl, tmp_path):
    """Issue 27 item 1: ranks waiting in MPI_Finalize for a rank that still works
    answer a snapshot signal sent to the launcher (in MPI_Finalize), nobody dies
    of it, and the job ends normally with its full profile."""
    job, n = finalize_wait_job(impl, tmp_path, {})
    try:
        target = launcher_pid(job) if impl == "openmpi" else None
        in_finalize = {("MPI_Finalize", None): list(range(n - 1)), ("outside MPI", None): [n - 1]}
        seen, end = None, time.time() + 120
        while seen != in_finalize:
            assert time.time() < end, seen
            if target:
                os.kill(target, signal.SIGUSR1)     # the documented way: mpirun forwards it
            else:
                job.signal_ranks(signal.SIGUSR1)    # hydra does not forward SIGUSR1
            time.sleep(0.3)
            assert job.proc.poll() is None, job.err[-2000:]
            prof = wait_answers(tmp_path, n, "signal")
            seen = where_now(tmp_path)
        assert prof.meta["snapshot"]["missing_count"] == 0
        # issue 27 item 6: once they have waited a second, diagnose names the rank that never
        # arrived (outside MPI), and since when
        while min(prof.inflight["seconds"]) < 1.2:
            job.signal_ranks(signal.SIGUSR1)
            time.sleep(0.3)
            prof = wait_answers(tmp_path, n, "signal")
        diag = json.loads(mpitest.run(mpitest.mpiscope_cmd("diagnose", "--json",
                                                           str(spool_of(tmp_path)))).stdout)
        top = diag["findings"][0]
        assert top["rule"] == "hang" and top["kind"] == "stall", diag
        assert top["ranks"]["list"] == [n - 1] and "which never arrived" in top["title"]
        labels = [e["label"] for e in top["evidence"]]
        assert f"rank {n - 1} outside MPI (since its last MPI call returned)" in labels, labels
        # the wall time of a rank in MPI_Finalize ends at its entry: later snapshots agree
        wall = prof.ranks["wall"][: n - 1].copy()
        job.signal_ranks(signal.SIGUSR1)
        time.sleep(0.5)
        assert np.allclose(wait_answers(tmp_path, n, "signal").ranks["wall"][: n - 1], wall)
    finally:
        rc = let_finish(job, tmp_path)
    assert rc == 0, job.err[-3000:]
    assert "exited on signal" not in job.err
    assert sorted(int(m) for m in re.findall(r"rank (\d+) done", "".join(job.lines))) == list(range(n))
    [full] = list(tmp_path.glob("*.mpiscope"))
    assert not read(full).is_partial and calls(read(full), "MPI_Allreduce").tolist() == [1] * n


def test_snapshot_timer_answers_in_finalize(impl, tmp_path):
    """Issue 27 item 1, the timer: a rank waiting in MPI_Finalize keeps answering."""
    job, n = finalize_wait_job(impl, tmp_path, {"MPISCOPE_SNAPSHOT": "1"})
    try:
        want = {("MPI_Finalize", None): list(range(n - 1)), ("outside MPI", None): [n - 1]}
        seen, end = None, time.time() + 120
        while seen != want:
            assert time.time() < end and job.proc.poll() is None, (seen, job.err[-2000:])
            time.sleep(0.5)
            if list(tmp_path.glob("*.spool")) and (spool_of(tmp_path) / "meta.json").exists():
                try:
                    seen = where_now(tmp_path)
                except AssertionError:      # no rank has written a snapshot yet
                    seen = None
    finally:
        rc = let_finish(job, tmp_path)
    assert rc == 0, job.err[-3000:]
    assert len(list(tmp_path.glob("*.mpiscope"))) == 1


def test_rank_that_does_not_answer(impl, tmp_path):
    """Issue 27 items 6 and 7: a rank that cannot answer (stopped) is not counted as a node
    of its own, diagnose names it as the rank the others wait for, and `mpiscope merge`
    given the profile directory merges the spool in it."""
    n = ranks(impl)
    job = Job(mpitest.mpiscope_cmd("run", "--mpi", impl, "--dir", str(tmp_path), "--",
                                   *mpitest.launcher(impl, n), program(impl, "deadlock")),
              tmp_path, {}, n)
    try:
        pids = job.wait_pids()
        time.sleep(0.5)
        os.kill(pids[n - 1], signal.SIGSTOP)
        others = [pid for r, pid in pids.items() if r != n - 1]
        end, prof = time.time() + 60, None
        while prof is None or min(prof.inflight["seconds"]) < 1.2:
            assert time.time() < end, prof and prof.meta["snapshot"]
            for pid in others:
                os.kill(pid, signal.SIGUSR1)
            time.sleep(0.3)
            try:
                got = read(spool_of(tmp_path))
            except (UserError, AssertionError):
                continue
            if got.meta["snapshot"]["answered"] == n - 1:
                prof = got
        assert prof.meta["snapshot"]["missing"] == [n - 1]
        spool = str(spool_of(tmp_path))
        rep = json.loads(mpitest.run(mpitest.mpiscope_cmd("report", "--json", spool)).stdout)
        assert rep["profile"]["nnodes"] == 1, rep["profile"]
        text = mpitest.run(mpitest.mpiscope_cmd("report", spool)).stdout
        assert f"Number of processes {n}, 1 node(s)" in text, text
        assert f"did not answer (1): {n - 1}" in text
        diag = json.loads(mpitest.run(mpitest.mpiscope_cmd("diagnose", "--json",
                                                           str(spool_of(tmp_path)))).stdout)
        top = diag["findings"][0]
        assert top["rule"] == "hang" and top["kind"] == "stall" and top["ranks"]["list"] == [n - 1]
        assert {e["label"]: e["value"] for e in top["evidence"]}[f"rank {n - 1}"] == \
            "did not answer the snapshot (gone or stopped)"
        # merge given the directory that holds the spool (MPISCOPE_DIR)
        out = mpitest.run(mpitest.mpiscope_cmd("merge", str(tmp_path))).stdout.strip().splitlines()
        assert len(out) == 1 and out[0].endswith(".partial.mpiscope")
        merged = read(out[0])
        assert merged.is_partial and merged.meta["snapshot"]["missing"] == [n - 1]
        assert merged.members.tobytes() == read(spool_of(tmp_path)).members.tobytes()
        again = mpitest.run(mpitest.mpiscope_cmd("merge", str(tmp_path)), check=False)
        assert again.returncode == 2 and "exists" in again.stderr and "Traceback" not in again.stderr
        empty = mpitest.run(mpitest.mpiscope_cmd("merge", str(tmp_path / "nothing")), check=False)
        assert empty.returncode == 2 and "not a directory" in empty.stderr
    finally:
        job.signal_ranks(signal.SIGCONT)
        job.signal_ranks(signal.SIGKILL)
        job.finish()
