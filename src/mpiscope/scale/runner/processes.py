"""The processes of a running point, and the signals that stop a study.

Every process of a point carries ``MPISCOPE_POINT=<attempt folder>`` in its
environment: ``mpiscope run``, the launcher, hydra's proxies, the ranks and
whatever they start, whichever session or process group they moved to (Open
MPI puts each rank in a process group of its own, hydra each proxy and rank
in a session of its own), so that is how the runner finds them on this node.

Stopping a point (a timeout, Ctrl-C, SIGTERM or SIGHUP to ``scale run``,
``scancel`` of a point's Slurm job) sends ONE SIGTERM to the point's
``mpiscope run``, which passes it on to the launcher once; the launcher ends
its ranks. (A launcher signalled twice gives up: Open MPI's mpirun takes a
second SIGTERM as "exit now" and leaves ranks that are not yet inside MPI
running.) Whatever is still alive after ``STOP_GRACE_S`` is SIGKILLed, and
the runner checks that no process of the point is left before it closes the
attempt.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

from ...errors import UserError

TAG = "MPISCOPE_POINT"
# Seconds the launcher has to end its ranks after the SIGTERM before everything
# left is SIGKILLed; less than Slurm's KillWait (30 s by default), so a point's
# job step cleans up before Slurm kills the step itself.
STOP_GRACE_S = 10.0
# Seconds to wait for SIGKILLed processes to disappear.
KILL_WAIT_S = 10.0
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


class Interrupted(BaseException):
    """scale run / scale point got a stop signal: the running point was stopped and its
    attempt closed as failed; the command ends with 128 + the signal number. A
    BaseException like KeyboardInterrupt, so no ``except Exception`` swallows it."""

    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum = signum

    @property
    def name(self) -> str:
        return signal.Signals(self.signum).name


class StopSignals:
    """SIGINT, SIGTERM and SIGHUP, noted rather than raised: the runner polls ``first``
    while a point runs and between points, so a signal never cuts a record or the
    cleanup in half. A second signal makes the cleanup skip its grace time."""

    def __init__(self):
        self.received: list[int] = []

    def _handler(self, signum, _frame):
        self.received.append(signum)

    @property
    def first(self) -> int | None:
        return self.received[0] if self.received else None

    @property
    def hurry(self) -> bool:
        return len(self.received) > 1

    def check(self) -> None:
        """Raise Interrupted if a stop signal came."""
        if self.received:
            raise Interrupted(self.received[0])

    @contextlib.contextmanager
    def active(self):
        old = {s: signal.signal(s, self._handler) for s in STOP_SIGNALS}
        try:
            yield self
        finally:
            for s, h in old.items():
                signal.signal(s, signal.SIG_DFL if h is None else h)


def tagged(tag: str) -> list[int]:
    """Pids of live processes on this node whose environment has MPISCOPE_POINT=tag
    (zombies have no environment left, so they are not listed)."""
    want = f"{TAG}={tag}".encode()
    me = os.getpid()
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == me:
            continue
        try:
            with open(f"/proc/{entry}/environ", "rb") as f:
                if want in f.read().split(b"\0"):
                    found.append(int(entry))
        except OSError:  # gone meanwhile, or another user's
            pass
    return found


def kill_tagged(tag: str, wait_s: float = KILL_WAIT_S) -> tuple[int, list[int]]:
    """SIGKILL every process of the point; return (how many were killed, pids still
    alive after ``wait_s``)."""
    killed = set()
    deadline = time.monotonic() + wait_s
    while True:
        left = tagged(tag)
        if not left or time.monotonic() > deadline:
            return len(killed), left
        for pid in left:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
                killed.add(pid)
        time.sleep(0.05)


def stop(proc: subprocess.Popen, tag: str, signals: StopSignals | None = None,
         grace_s: float = STOP_GRACE_S) -> tuple[int, list[int]]:
    """End a point: one SIGTERM to its ``mpiscope run``, up to ``grace_s`` for the
    launcher to end the job (less if a second stop signal came), then SIGKILL for
    every process of the point left. Returns (how many needed that SIGKILL, pids
    that survived even that)."""
    if proc.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            proc.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + grace_s
        while proc.poll() is None and time.monotonic() < deadline:
            if signals is not None and signals.hurry:
                break
            time.sleep(0.05)
    killed, left = kill_tagged(tag)
    if proc.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            proc.kill()
    proc.wait()
    return killed, left


@dataclass
class Supervised:
    """How a supervised run ended: its exit code, why it was stopped (None: it ended by
    itself), its seconds, how many processes needed SIGKILL at the stop and after the
    end, and the pids that survived even that."""

    exit_code: int
    reason: str | None
    elapsed_s: float
    killed_at_stop: int = 0
    killed_after_end: int = 0
    left: list[int] = field(default_factory=list)


def supervise(argv: list[str], env: dict, cwd, out_dir: Path, tag: str,
              signals: StopSignals, timeout: float | None = None) -> Supervised:
    """Run ``argv`` (an ``mpiscope run``, its environment tagged with ``tag``) in a
    session of its own, its output into ``out_dir``/stdout.txt and stderr.txt; stop it at
    a stop signal or after ``timeout`` seconds. No process of the run is left when this
    returns (what could not be killed is listed). scale's points and tune's runs."""
    t0 = time.monotonic()
    reason, killed_at_stop, left = None, 0, []
    with open(out_dir / "stdout.txt", "wb") as out, open(out_dir / "stderr.txt", "wb") as err:
        try:
            proc = subprocess.Popen(argv, stdout=out, stderr=err, cwd=cwd, env=env,
                                    stdin=subprocess.DEVNULL, start_new_session=True)
        except OSError as e:
            raise UserError(f"cannot start {argv[0]}: {e}") from None
        while proc.poll() is None:
            if signals.first is not None:
                reason = f"stopped by {signal.Signals(signals.first).name}"
            elif timeout is not None and time.monotonic() - t0 > timeout:
                reason = f"timed out after {timeout:g} s"
            if reason:
                killed_at_stop, left = stop(proc, tag, signals)
                break
            time.sleep(0.02)
        rc = proc.wait()
    elapsed = time.monotonic() - t0
    # The launcher is gone; anything of the run still alive (a rank it lost track of)
    # would go on using the cores and could write into the run's folder.
    killed, still = kill_tagged(tag)
    return Supervised(rc, reason, elapsed, killed_at_stop, killed, sorted(set(left) | set(still)))
