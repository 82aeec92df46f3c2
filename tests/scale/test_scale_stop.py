"""Stopping a local study: SIGTERM, SIGHUP or SIGINT to `scale run`, a runner killed
outright, a point's timeout; one run at a time per study directory.

The points are Open MPI jobs whose ranks are shells that never enter MPI and
ignore SIGTERM (a wrapper script, work before MPI_Init with its own handler):
mpirun, signalled once, sends them SIGTERM and SIGKILLs them a second later;
signalled twice, it exits at once and leaves them running, re-parented to init.
Every process of a point carries STOPMARK=<uuid> in its environment, so the
test finds them by pid, whatever session or process group they are in, and
asserts that none is left.
"""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
import time
import uuid
from pathlib import Path

import mpitest
from test_scale import assert_one_line_error, scale

NP = 2


def stop_study(tmp_path: Path, name: str, mark: str, extra: str = "") -> Path:
    f = tmp_path / f"{name}.toml"
    f.write_text(f"""
[study]
kind = "strong"
ranks = [{NP}]
command = '''sh -c "trap '' TERM; echo started; sleep 300"'''
output = "{name}"
{extra}
[launcher]
command = "mpirun.openmpi --oversubscribe -n {{np}}"
mpi = "openmpi"
[env]
OMPI_ALLOW_RUN_AS_ROOT = "1"
OMPI_ALLOW_RUN_AS_ROOT_CONFIRM = "1"
STOPMARK = "{mark}"
""")
    return f


def marked(mark: str) -> dict[int, str]:
    return mpitest.marked_processes("STOPMARK", mark)


def start(study: Path, tmp_path: Path, tag: str) -> subprocess.Popen:
    """scale run in the background (its own session: the test's signals reach only it)."""
    with open(tmp_path / f"{tag}.out", "w") as out, open(tmp_path / f"{tag}.err", "w") as err:
        return subprocess.Popen(mpitest.mpiscope_cmd("scale", "run", str(study)),
                                env=mpitest.mpi_env(), stdout=out, stderr=err,
                                start_new_session=True)


def wait_for_ranks(mark: str, runner: subprocess.Popen, timeout: float = 120) -> dict:
    """Until both ranks (the sleeps) of the point run."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        procs = marked(mark)
        if sum(cmd.startswith("sleep ") for cmd in procs.values()) == NP:
            return procs
        assert runner.poll() is None, f"scale run ended early ({runner.returncode})"
        time.sleep(0.2)
    raise AssertionError(f"the point's ranks did not start: {marked(mark)}")


def record(out: Path, attempt: int) -> dict:
    return json.loads((out / f"points/np{NP:05d}-rep1/attempt{attempt}/point.json").read_text())


def test_signals_stop_the_point_and_leave_no_process(tmp_path):
    mark = uuid.uuid4().hex
    study = stop_study(tmp_path, "stop", mark)
    out = tmp_path / "stop"
    runner = None
    try:
        # SIGTERM (a batch time limit, kill), while a second run is refused.
        runner = start(study, tmp_path, "term")
        procs = wait_for_ranks(mark, runner)
        assert any("mpirun.openmpi" in c for c in procs.values()), procs
        second = scale("run", str(study), check=False)
        assert_one_line_error(second, "in use by another mpiscope scale run",
                              f"(pid {runner.pid} on {socket.gethostname()})")
        assert sorted(p.name for p in (out / f"points/np{NP:05d}-rep1").iterdir()) == \
            ["attempt1"]
        runner.send_signal(signal.SIGTERM)
        assert runner.wait(timeout=120) == 128 + signal.SIGTERM
        # scale run returns only once no process of the point is left: no grace here.
        assert marked(mark) == {}
        err = (tmp_path / "term.err").read_text()
        assert "Traceback" not in err and "stopped by SIGTERM" in err, err
        rec = record(out, 1)
        assert rec["status"] == "failed" and rec["reason"] == "stopped by SIGTERM", rec

        # A runner killed outright runs no handler: the point's mpiscope run gets
        # SIGTERM from the kernel (PR_SET_PDEATHSIG) and ends the job by itself.
        runner = start(study, tmp_path, "kill")
        wait_for_ranks(mark, runner)
        runner.kill()
        runner.wait(timeout=60)
        deadline = time.monotonic() + 60
        while marked(mark) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert marked(mark) == {}
        assert not (out / f"points/np{NP:05d}-rep1/attempt2/point.json").exists()

        # SIGHUP (logout) and SIGINT (Ctrl-C); the killed run's lock went with it.
        for n, sig in ((3, signal.SIGHUP), (4, signal.SIGINT)):
            runner = start(study, tmp_path, sig.name)
            wait_for_ranks(mark, runner)
            runner.send_signal(sig)
            assert runner.wait(timeout=120) == 128 + sig
            assert marked(mark) == {}
            rec = record(out, n)
            assert rec["status"] == "failed" and rec["reason"] == f"stopped by {sig.name}", rec
        status = scale("status", str(out)).stdout
        assert status.splitlines()[-1] == "1 failed", status
        # Nothing wrote into the closed attempts after they were closed.
        assert list(out.rglob("*.mpiscope")) == []
    finally:
        if runner is not None and runner.poll() is None:
            runner.kill()
        for pid in marked(mark):  # never leave a job behind, even on failure
            subprocess.run(["kill", "-9", str(pid)], check=False)


def test_timeout_stops_the_point_and_leaves_no_process(tmp_path):
    mark = uuid.uuid4().hex
    study = stop_study(tmp_path, "slow", mark, extra="timeout = 15")
    try:
        proc = scale("run", str(study), check=False)
        assert proc.returncode == 1, proc.stderr
        assert marked(mark) == {}
        out = tmp_path / "slow"
        rec = record(out, 1)
        assert rec["status"] == "failed" and rec["reason"] == "timed out after 15 s", rec
        # The ranks had started (the timeout met them running, not mpirun starting up).
        assert (out / f"points/np{NP:05d}-rep1/attempt1/stdout.txt").read_text() \
            .count("started") == NP
        assert "1 point(s) run: 0 done, 1 failed" in proc.stdout
    finally:
        for pid in marked(mark):
            subprocess.run(["kill", "-9", str(pid)], check=False)
