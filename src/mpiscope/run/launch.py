"""`mpiscope run`: launch an MPI program with the runtime preloaded.

    mpiscope run [--mode full|summary] [--sync] [--mpit] [--dir DIR] [--mpi IMPL] [--order FILE] \
        -- mpirun -n 16 ./app args

The runtime built for the launcher's MPI is prepended to ``LD_PRELOAD`` (the
user's own preloads are kept, after ours), the ``MPISCOPE_*`` settings are put
in the environment, and Open MPI's ``mpirun`` is told to forward them with
``-x`` (MPICH's hydra and Slurm's srun forward the whole environment); a
user's own LD_PRELOAD on the launcher's command line is merged, ours first.
Only the launcher's own options are looked at (``launcher_args``). SIGTERM,
SIGINT, SIGHUP and SIGQUIT are passed on to the launcher, which ends the job;
the launcher also gets SIGTERM if ``mpiscope run`` dies (``lifetime``). The
launcher's exit code is returned, and the profile the run wrote is named.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import List, Optional

import typer

from .. import native
from ..errors import UserError
from .launcher_args import LaunchCommand, Option, launcher_kind, parse
from .lifetime import PARENT_GONE, end_with_parent

MODES = ("full", "summary")
# Signals that end a job: passed on to the launcher, which stops every rank
# (a launcher left behind would run on, re-parented to init).
FORWARDED_SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGQUIT)


def snapshot_signal(env: dict) -> signal.Signals | None:
    """The runtime's snapshot signal (MPISCOPE_SNAPSHOT_SIGNAL, default USR1), or
    None; it is passed on too, so `kill -USR1` reaches the ranks through us."""
    name = env.get("MPISCOPE_SNAPSHOT_SIGNAL", "USR1")
    return getattr(signal, f"SIG{name}", None) if name in ("USR1", "USR2", "URG") else None


def _prepend_preload(lib: str, current: str | None) -> str:
    """LD_PRELOAD with ``lib`` first and the user's entries kept (once each)."""
    kept = [p for p in (current or "").replace(" ", ":").split(":") if p and p != lib]
    return ":".join([lib, *kept])


DEFAULT_SAMPLE_HZ = 100


def mpi_option():
    """--mpi, as every command that launches under the runtime takes it (run, tune)."""
    return typer.Option(None, "--mpi", metavar="openmpi|mpich|...",
                        help="Which MPI's runtime to preload (default: guessed from the "
                             "launcher's name, else the program's libraries).")


# run's own options that take a value (the next word is theirs, not the launch command).
_VALUE_OPTIONS = ("--mode", "--dir", "--mpi", "--order", "--parent-pid", "--sample")
_RATE = re.compile(r"^[-+]?[\d.]+$")


def expand_bare_sample(argv: list[str]) -> list[str]:
    """``mpiscope run --sample`` without a rate means DEFAULT_SAMPLE_HZ. click has no option
    whose value may be left out, so before parsing, a ``--sample`` among run's own options
    (before the launch command) that is not followed by a number becomes
    ``--sample=DEFAULT_SAMPLE_HZ``; a number after it is its rate (checked by sample_hz)."""
    if not argv or argv[0] != "run":
        return argv
    out, i = list(argv), 1
    while i < len(out) and out[i] != "--" and out[i].startswith("-"):
        if out[i] == "--sample" and not (i + 1 < len(out) and _RATE.match(out[i + 1])):
            out[i] = f"--sample={DEFAULT_SAMPLE_HZ}"
        elif out[i] in _VALUE_OPTIONS:
            i += 1
        i += 1
    return out


def sample_hz(value: str | None) -> int | None:
    """--sample's rate (None: not sampled); a word that is not 1..10000 is refused."""
    if value is None:
        return None
    try:
        hz = int(value)
    except ValueError:
        hz = 0
    if not 1 <= hz <= 10000:
        raise UserError(f"--sample takes a whole number of Hz (1 to 10000), not {value!r}")
    return hz


def run_environment(lib: str, base: dict, mode: str | None, sync: bool,
                    outdir: str, mpit: bool = False, sample: int | None = None) -> dict:
    """The environment of the launch: base + LD_PRELOAD + the MPISCOPE_* settings."""
    env = dict(base)
    env["LD_PRELOAD"] = _prepend_preload(lib, base.get("LD_PRELOAD"))
    env["MPISCOPE_DIR"] = outdir
    if mode is not None:
        env["MPISCOPE_MODE"] = mode
    if sync:
        env["MPISCOPE_SYNC"] = "1"
    if mpit:
        env["MPISCOPE_MPIT"] = "1"
    if sample is not None:
        env["MPISCOPE_SAMPLE"] = str(sample)
    return env


def _merge_user_preload(lib: str, value: str) -> str:
    """A user's own LD_PRELOAD from the launcher's command line, ours first."""
    return _prepend_preload(lib, value)


def _srun_export(value: str, lib: str, names: list[str]) -> str:
    """srun --export with our variables in it (unless ALL already passes them on)."""
    entries = [e for e in value.split(",") if e]
    entries = [f"LD_PRELOAD={_merge_user_preload(lib, e.split('=', 1)[1])}"
               if e.startswith("LD_PRELOAD=") else e for e in entries]
    if "ALL" in entries:
        return ",".join(entries)
    entries = [e for e in entries if e != "NONE"]
    present = {e.split("=", 1)[0] for e in entries}
    return ",".join([*entries, *(n for n in names if n not in present)])


def forward_args(argv: list[str], impl: str, env: dict) -> list[str]:
    """argv with what the launcher needs to pass our variables on to the ranks.

    Open MPI's mpirun/mpiexec forwards only the variables named with ``-x``;
    MPICH's hydra and srun forward the whole environment already (srun not
    with ``--export``, which gets our names added), and a command that is not
    a launcher (a singleton run) needs nothing. A user's own LD_PRELOAD set on
    the launcher's command line (``-x LD_PRELOAD=...``, ``-genv``/``-env
    LD_PRELOAD ...``, ``--export=LD_PRELOAD=...``) would replace ours in the
    ranks and silently switch profiling off: it is merged, ours first. Only the
    launcher's own options are looked at, never the program's arguments.
    """
    cmd = parse(argv, impl)
    lib = env["LD_PRELOAD"].split(":")[0]
    names = ["LD_PRELOAD", *sorted(k for k in env if k.startswith("MPISCOPE_"))]
    options = []
    user_preload = False
    for opt in cmd.options:
        if cmd.kind == "openmpi" and opt.name == "x" and opt.values[0].split("=")[0] == "LD_PRELOAD":
            user_preload = True
            if "=" in opt.values[0]:
                merged = _merge_user_preload(lib, opt.values[0].split("=", 1)[1])
                opt = Option(opt.name, (f"LD_PRELOAD={merged}",), ("-x", f"LD_PRELOAD={merged}"))
        elif cmd.kind == "hydra" and opt.name in ("genv", "env") and opt.values[0] == "LD_PRELOAD":
            merged = _merge_user_preload(lib, opt.values[1])
            opt = Option(opt.name, ("LD_PRELOAD", merged), (f"-{opt.name}", "LD_PRELOAD", merged))
        elif cmd.kind == "srun" and opt.name == "export":
            value = _srun_export(opt.values[0], lib, names)
            opt = Option(opt.name, (value,), (f"--export={value}",))
        options.append(opt)
    cmd = LaunchCommand(cmd.launcher, cmd.kind, tuple(options), cmd.program)
    if cmd.kind != "openmpi":
        return cmd.argv()
    extra = [a for name in names if not (name == "LD_PRELOAD" and user_preload)
             for a in ("-x", name)]
    return cmd.argv(*extra)


def srun_export_all_preload(argv: list[str], impl: str) -> str | None:
    """The LD_PRELOAD entry of an ``srun --export=ALL,...,LD_PRELOAD=...``, or None.

    With ALL in the list, Slurm 22.05 gives the tasks the environment's
    LD_PRELOAD rather than the one listed: the launch environment must hold the
    same (merged) value, or the user's library is dropped silently.
    """
    cmd = parse(argv, impl)
    if cmd.kind != "srun":
        return None
    for opt in cmd.options:
        entries = opt.values[0].split(",") if opt.name == "export" else []
        if "ALL" in entries:
            for e in entries:
                if e.startswith("LD_PRELOAD="):
                    return e.split("=", 1)[1]
    return None


def _profiles(outdir: Path) -> dict[str, tuple[int, int]]:
    try:
        return {p.name: (st.st_ino, st.st_mtime_ns)
                for p in outdir.glob("*.mpiscope") if (st := p.stat())}
    except OSError:
        return {}


def new_profiles(before: dict, after: dict) -> list[str]:
    """Names of profile files created (or replaced) between two directory snapshots."""
    return sorted(n for n, sig in after.items() if before.get(n) != sig)


def _apply_order(argv: list[str], order_file: str, impl: str,
                 directory: str | None = None) -> tuple[list[str], dict]:
    try:
        from ..place.output.launchers import apply_order
    except ImportError:
        raise UserError("--order is not available: mpiscope.place.output.launchers is not "
                        "built yet") from None
    return apply_order(argv, order_file, impl, directory=directory)


def _usable_dir(out: Path) -> None:
    """Create the output directory if needed; refuse before the launch if no
    profile could be written there, so a job never runs to the end only to
    lose its profile to a typo (the runtime itself, preloaded by hand, can
    only warn at MPI_Finalize)."""
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise UserError(f"cannot create the output directory {out}: "
                        f"{err.strerror or err}") from None
    try:
        fd, probe = tempfile.mkstemp(prefix=".mpiscope-probe-", dir=out)
    except OSError as err:
        raise UserError(f"cannot write in the output directory {out}: "
                        f"{err.strerror or err}") from None
    os.close(fd)
    os.unlink(probe)


def _profile_line(path: Path) -> str:
    """``mpiscope: profile: PATH``, or a warning if the file does not read as a
    complete profile (the runtime's write failed or was cut short)."""
    from ..reader import read

    try:
        read(path)
    except UserError as err:
        return f"mpiscope: warning: incomplete profile {path}: {str(err).split(': ', 1)[-1]}"
    return f"mpiscope: profile: {path}"


def _run_forwarding_signals(cmd: list[str], env: dict, name: str, kind: str) -> int:
    """Run the launcher; pass FORWARDED_SIGNALS on to it and wait for it to end.

    MPICH's hydra ignores SIGHUP (its job would run on after a hangup), so it
    gets SIGTERM instead.
    """
    # hydra: SIGHUP -> SIGTERM; our parent gone (PARENT_GONE, however many times
    # it comes) -> one SIGTERM.
    translate = {signal.SIGHUP: signal.SIGTERM} if kind == "hydra" else {}
    translate[PARENT_GONE] = signal.SIGTERM
    proc: list = []
    pending: list[int] = []
    parent_gone: list[int] = []

    def forward(signum, _frame):
        if signum == PARENT_GONE:
            if parent_gone:
                return
            parent_gone.append(signum)
        if proc:
            try:
                proc[0].send_signal(translate.get(signum, signum))
            except ProcessLookupError:  # already gone; wait() reaps it
                pass
        else:
            pending.append(signum)

    snap = snapshot_signal(env)
    old = {s: signal.signal(s, forward)
           for s in (*FORWARDED_SIGNALS, PARENT_GONE, *([snap] if snap else []))}
    me = os.getpid()
    try:
        try:
            # The launcher ends with us: SIGTERM (it then ends its ranks) if we are
            # killed, so a job is never left behind by a SIGKILLed mpiscope run.
            proc.append(subprocess.Popen(cmd, env=env, preexec_fn=lambda: end_with_parent(me)))
        except FileNotFoundError:
            raise UserError(f"launcher not found: {name}") from None
        except PermissionError:
            raise UserError(f"launcher not executable: {name}") from None
        for signum in pending:
            proc[0].send_signal(translate.get(signum, signum))
        return proc[0].wait()
    finally:
        for signum, handler in old.items():
            # None: the handler was installed outside Python (an embedding program
            # or a test harness); signal.signal cannot put that back, the default can.
            signal.signal(signum, signal.SIG_DFL if handler is None else handler)


def launch(argv: list[str], *, mode: str | None = None, sync: bool = False, mpit: bool = False,
           outdir: str | None = None, mpi: str | None = None, order: str | None = None,
           base_env: dict | None = None, parent_pid: int | None = None,
           sample: int | None = None) -> int:
    """Run ``argv`` under the runtime; return its exit code (128 + signal if killed).

    ``parent_pid``: end the run as on SIGTERM when that process (our parent,
    e.g. ``mpiscope scale``'s runner) ends.
    """
    if parent_pid is not None:  # until its handler is in place, it ends us
        end_with_parent(parent_pid, PARENT_GONE)
    if not argv:
        raise UserError("no launch command: give one after --, e.g. "
                        "mpiscope run -- mpirun -n 4 ./app")
    if mode is not None and mode not in MODES:
        raise UserError(f"--mode must be one of {', '.join(MODES)}, not {mode!r}")
    base = dict(os.environ if base_env is None else base_env)
    # First, so that a misspelt launcher is named as such, not as a launcher of
    # an MPI mpiscope cannot tell (and before the output directory is made).
    if shutil.which(argv[0], path=base.get("PATH")) is None:
        how = "not executable" if os.path.exists(argv[0]) else "not found"
        raise UserError(f"launcher {how}: {argv[0]}")
    impl, chosen = native.resolve_impl_and_why(argv, mpi)
    native.check_linkage(argv, impl, chosen)   # a runtime of another MPI kills the ranks
    lib = str(native.runtime_library(impl))
    out = Path(outdir or base.get("MPISCOPE_DIR") or os.getcwd()).resolve()
    _usable_dir(out)
    env = run_environment(lib, base, mode, sync, str(out), mpit, sample)
    # the user's own launch, for the next commands diagnose suggests (docs/diagnose.md)
    env["MPISCOPE_LAUNCH"] = shlex.join(argv)
    # The order's host/rank files live only as long as the run (the launcher reads
    # them when it starts), in a directory of our own.
    order_dir = tempfile.mkdtemp(prefix="mpiscope-order-") if order is not None else None
    try:
        if order is not None:
            argv, extra_env = _apply_order(list(argv), order, impl, order_dir)
            env.update(extra_env)
        cmd = forward_args(argv, impl, env)
        preload = srun_export_all_preload(cmd, impl)
        if preload is not None:
            env["LD_PRELOAD"] = preload
        before = _profiles(out)
        rc = _run_forwarding_signals(cmd, env, argv[0], launcher_kind(argv[0], impl))
    finally:
        if order_dir is not None:
            shutil.rmtree(order_dir, ignore_errors=True)
    if rc < 0:
        rc = 128 - rc
    created = new_profiles(before, _profiles(out))
    for name in created:
        print(_profile_line(out / name), file=sys.stderr)
    if rc != 0:
        written = (f"{len(created)} profile(s) written (above)" if created
                   else f"no profile was written in {out}")
        print(f"mpiscope: error: {argv[0]} exited with code {rc}; {written}", file=sys.stderr)
    elif not created:
        print(f"mpiscope: warning: no profile was written in {out} "
              f"(did the program call MPI_Finalize? is the directory writable?)",
              file=sys.stderr)
    return rc


def register(app: typer.Typer) -> None:
    @app.command(context_settings={"allow_interspersed_args": False,
                                   "ignore_unknown_options": True})
    def run(
        command: List[str] = typer.Argument(..., metavar="-- LAUNCHER ARGS...",
                                            help="The launch command, e.g. "
                                                 "mpirun -n 16 ./app args."),
        mode: Optional[str] = typer.Option(None, "--mode", metavar="full|summary",
                                           help="full: per-rank rows (default); summary: the "
                                                "runtime reduces across ranks and the file "
                                                "does not grow with the number of ranks."),
        sync: bool = typer.Option(False, "--sync",
                                  help="Time a barrier before each collective and report it "
                                       "as collective sync time (MPISCOPE_SYNC=1)."),
        sample: Optional[str] = typer.Option(None, "--sample", metavar="[=HZ]",
                                             help="Sample each thread of the program (those that "
                                                  "call MPI and those they start, e.g. OpenMP "
                                                  "workers) at HZ per second of its CPU time "
                                                  "(default 100; "
                                                  "MPISCOPE_SAMPLE): the report's 'Compute by "
                                                  "function (sampled)' (docs/sampling.md)."),
        mpit: bool = typer.Option(False, "--mpit",
                                  help="Record the MPI library's queue variables through "
                                       "MPI_T (MPISCOPE_MPIT=1; Open MPI has them, MPICH "
                                       "none; about 0.2 s more start-up)."),
        outdir: Optional[str] = typer.Option(None, "--dir", metavar="DIR",
                                             help="Directory for the profile (default: "
                                                  "MPISCOPE_DIR, else the current directory); "
                                                  "created if missing. The program is not "
                                                  "started if no file can be written there."),
        mpi: Optional[str] = mpi_option(),
        order: Optional[str] = typer.Option(None, "--order", metavar="FILE",
                                            help="Apply a rank order file written by "
                                                 "mpiscope place."),
        parent_pid: Optional[int] = typer.Option(None, "--parent-pid", hidden=True,
                                                 help="End the run (as on SIGTERM) when this "
                                                      "process ends (mpiscope scale's points)."),
    ):
        """Run an MPI launch command with the mpiscope runtime preloaded, then print the
        path of the profile it wrote. Exits with the launcher's exit code."""
        if mpi is not None and mpi not in native.IMPLS:
            raise UserError(f"--mpi must be one of {', '.join(native.IMPLS)}, not {mpi!r}")
        if command and command[0] == "--":
            command = command[1:]
        hz = sample_hz(sample)
        rc = launch(list(command), mode=mode, sync=sync, mpit=mpit, outdir=outdir, mpi=mpi,
                    order=order, parent_pid=parent_pid, sample=hz)
        raise typer.Exit(rc)
