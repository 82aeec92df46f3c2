"""The rerun a fix names: the user's own launch, changed only where the fix says.

A finding's ``change`` is the fix in machine-readable form (docs/diagnose.md "Next
commands"), and its ``command`` the same change applied to the launch the profile came
from:

- the launch is the one ``mpiscope run`` recorded (META settings ``MPISCOPE_LAUNCH``);
  without it (a profile made with ``LD_PRELOAD`` by hand) it is rebuilt from the profile:
  the launcher of the profile's MPI found on this machine (``mpirun.mpich`` where
  ``mpirun`` is Open MPI's), ``-n`` ranks, ``--oversubscribe`` where a node ran more ranks
  than it has CPUs, and the program's own arguments;
- the change removes the launcher options it replaces (binding, mapping, a variable the
  launch already sets, the rank count), adds its own in the launcher's syntax (Open MPI,
  MPICH's hydra, Slurm's srun), and drops a pinning wrapper (``taskset``, ``numactl``)
  from the program's part when the fix is to bind with the launcher;
- ``mpiscope run`` keeps the profile's mode, ``--sync`` and ``--mpit``, and names the MPI
  (``--mpi``) when the launcher's name does not say it.

Pure functions of the profile; which launcher exists is looked up on PATH (the machine
where the diagnosis is read, normally the cluster's login node).
"""

from __future__ import annotations

import os
import re
import shlex
import shutil

import numpy as np

from .. import format as fmt
from .. import native
from ..profile import Profile
from ..run.launcher_args import LaunchCommand, Option, parse

# Launchers of each MPI family, in the order they are tried on PATH (the first whose MPI,
# by name or by the file it resolves to, is the family's wins; none found: the first).
LAUNCHERS = {"openmpi": ("mpirun", "mpiexec", "mpirun.openmpi", "mpiexec.openmpi"),
             "mpich": ("mpiexec", "mpirun", "mpiexec.mpich", "mpirun.mpich", "mpiexec.hydra"),
             "intel": ("mpiexec", "mpirun", "mpiexec.hydra"),
             "other": ("mpirun",)}
# mpi_family() names -> native implementation names (mpiscope run --mpi).
IMPL = {"openmpi": "openmpi", "mpich": "mpich", "intel": "intelmpi"}
# Launcher options a binding/mapping change replaces, by launcher kind.
BINDING = {"openmpi": ("bind-to", "map-by", "cpus-per-proc", "cpus-per-rank", "cpu-set",
                       "cpu-list", "rank-by", "bind-to-core", "bind-to-socket", "bycore",
                       "bysocket", "npersocket", "report-bindings"),
           "hydra": ("bind-to", "map-by"),
           "srun": ("cpu-bind", "cpus-per-task", "distribution", "hint")}
# Wrappers that pin a program to CPUs: (options taking a separate value, does a bare mask
# or CPU list follow the options).
WRAPPERS = {"taskset": ((), True),
            "numactl": (("-C", "-N", "-m", "-p", "-i", "-P"), False)}


def mpi_family(prof: Profile) -> str:
    """"openmpi", "mpich", "intel" or "other", from META mpi_library (MPI_Get_library_version)."""
    lib = str(prof.meta.get("mpi_library") or "")
    if "Open MPI" in lib:
        return "openmpi"
    if "Intel(R) MPI" in lib or "Intel MPI" in lib:
        return "intel"
    if "MPICH" in lib:
        return "mpich"
    return "other"


def recorded_launch(prof: Profile) -> list[str] | None:
    """The launch command mpiscope run recorded (MPISCOPE_LAUNCH), as words, or None."""
    text = (prof.meta.get("settings") or {}).get("MPISCOPE_LAUNCH")
    if not isinstance(text, str) or not text.strip():
        return None
    try:
        return shlex.split(text)
    except ValueError:
        return None


def _launcher_name(family: str) -> str:
    names = LAUNCHERS.get(family, LAUNCHERS["other"])
    want = IMPL.get(family)
    for name in names:
        if shutil.which(name) and (want is None or _impl_by_name(name) in
                                   ({"mpich", "intelmpi"} if family == "intel" else {want})):
            return name
    return names[0]


def _impl_by_name(name: str) -> str | None:
    """The MPI of a launcher by its name or the file it resolves to (no program probed)."""
    return native.impl_of_launcher([name])


def ranks_per_node(prof: Profile) -> np.ndarray:
    """Ranks on each node the run used (its own node map)."""
    node = np.asarray(prof.node_of_rank(None)) if not prof.is_summary else np.zeros(0, int)
    if len(node) == 0:
        return np.array([prof.nranks])
    return np.unique(node, return_counts=True)[1]


def node_cpus(prof: Profile, rep: dict) -> int:
    """The CPUs a node of the run offers the job (the smallest over nodes); 0 if unknown."""
    env = rep.get("environment") or {}
    if not env.get("available") or "node_cpus" not in env:
        return 0
    return int(env["node_cpus"]["min"] or 0)


def threads_per_node(prof: Profile, rep: dict) -> tuple[int, int]:
    """(the most threads one node runs, ranks on that node): ranks x their threads."""
    if len(prof.env):
        node = prof.ranks["node"].astype(np.int64)
        threads = np.maximum(prof.env["threads"].astype(np.int64), 1)
        per = np.bincount(node, weights=threads)
        k = int(np.argmax(per))
        return int(per[k]), int((node == k).sum())
    env = rep.get("environment") or {}
    ppn = int(ranks_per_node(prof).max())
    t = int((env.get("threads") or {}).get("max") or 1) if env.get("available") else 1
    return ppn * t, ppn


def rebuilt_launch(prof: Profile, rep: dict) -> list[str]:
    """A launch of this profile's program for a profile without a recorded one."""
    family = mpi_family(prof)
    launcher = _launcher_name(family)
    kind = parse([launcher], IMPL.get(family)).kind
    argv = prof.meta.get("argv")
    if not isinstance(argv, list) or not argv:
        argv = [str(prof.meta.get("program") or "./app")]
    interp = prof.meta.get("interpreter_argv")
    if prof.meta.get("interpreter") and isinstance(interp, list) and interp:
        argv = [str(a) for a in interp]  # python3 app.py ...: the interpreter's own line
    words = [launcher]
    ppn = int(ranks_per_node(prof).max())
    nodes = len(ranks_per_node(prof))
    cpus = node_cpus(prof, rep)
    if kind == "openmpi" and cpus and threads_per_node(prof, rep)[0] > cpus:
        words.append("--oversubscribe")
    if kind == "srun":
        words += ["-n", str(prof.nranks)] + (["-N", str(nodes)] if nodes > 1 else [])
    else:
        words += ["-n", str(prof.nranks)]
        if nodes > 1:
            words += ["--npernode", str(ppn)] if kind == "openmpi" else ["-ppn", str(ppn)]
    return words + [str(a) for a in argv]


def user_launch(prof: Profile, rep: dict) -> tuple[list[str], bool]:
    """(the launch as words, whether it is the recorded one)."""
    rec = recorded_launch(prof)
    return (rec, True) if rec else (rebuilt_launch(prof, rep), False)



def fixed_decomposition(prof: Profile) -> str | None:
    """A program argument that fixes the rank count, such as "4x4" or "2,2,4" whose product is
    the job's ranks (a Cartesian decomposition): a fix that changes the rank count must change
    it too, which mpiscope cannot do for the user. None if there is none."""
    argv = prof.meta.get("argv")
    for arg in (argv[1:] if isinstance(argv, list) else []):
        parts = re.split(r"[x,]", str(arg))
        if len(parts) > 1 and all(p.isdigit() and p for p in parts) and \
                int(np.prod([int(p) for p in parts])) == prof.nranks:
            return str(arg)
    return None

def change(kind: str, *, env: dict | None = None, launcher_add: list[str] | None = None,
           launcher_remove: tuple[str, ...] = (), nranks: int | None = None,
           run_options: list[str] | None = None, unwrap: bool = False,
           threads: int | None = None) -> dict:
    """A finding's machine-readable fix (docs/diagnose.md "The change")::

        {"kind": "launch" (rerun with the launch changed) | "measure" (rerun to tell what the
                 profile cannot) | "code" (change the program) | "order" (a rank order),
         "env": {NAME: value} to set for the ranks, "launcher_add": launcher words to add,
         "launcher_remove": launcher option names the change replaces, "nranks": a new rank
         count or null, "run_options": mpiscope run options to add (--sync, --order FILE),
         "unwrap": drop a pinning wrapper (taskset, numactl) from the program's part,
         "threads": OpenMP threads per rank the change runs, or null}
    """
    return {"kind": kind, "env": dict(env or {}), "launcher_add": list(launcher_add or []),
            "launcher_remove": list(launcher_remove), "nranks": nranks,
            "run_options": list(run_options or []), "unwrap": unwrap, "threads": threads}


def _strip_wrapper(program: tuple[str, ...]) -> tuple[str, ...]:
    """The program's words without a leading pinning wrapper and its options."""
    if not program or os.path.basename(program[0]) not in WRAPPERS:
        return program
    valued, mask = WRAPPERS[os.path.basename(program[0])]
    i = 1
    while i < len(program) and program[i].startswith("-") and program[i] != "--":
        i += 2 if program[i] in valued else 1
    if i < len(program) and program[i] == "--":
        i += 1
    elif mask:
        i += 1
    return program[i:]


def _env_options(kind: str, env: dict, cmd: LaunchCommand) -> tuple[LaunchCommand, list[str]]:
    """The launch without its own settings of these variables, and the launcher words that set
    them: Open MPI --mca for its MCA parameters and -x for the others, hydra -genv, srun
    --export (an MCA parameter or variable the launch already sets is replaced)."""
    words: list[str] = []
    names = set(env)
    keep = []
    for o in cmd.options:
        if kind == "openmpi" and o.name in ("mca", "gmca") and f"OMPI_MCA_{o.values[0]}" in names:
            continue
        if kind == "openmpi" and o.name == "x" and o.values[0].split("=", 1)[0] in names:
            continue
        if kind == "hydra" and o.name in ("genv", "env") and o.values[0] in names:
            continue
        keep.append(o)
    cmd = LaunchCommand(cmd.launcher, cmd.kind, tuple(keep), cmd.program)
    for name, value in env.items():
        if kind == "openmpi" and name.startswith("OMPI_MCA_"):
            words += ["--mca", name[len("OMPI_MCA_"):], str(value)]
        elif kind == "openmpi":
            words += ["-x", f"{name}={value}"]
        elif kind == "hydra":
            words += ["-genv", name, str(value)]
        elif kind == "srun":
            words.append(f"--export=ALL,{name}={value}")
    return cmd, words


def _set_ranks(cmd: LaunchCommand, n: int) -> LaunchCommand:
    name = "ntasks" if cmd.kind == "srun" else "np"
    opts, done = [], False
    for o in cmd.options:
        if o.name == name and o.values and not done:
            flag = o.tokens[0].split("=", 1)[0] if "=" in o.tokens[0] else o.tokens[0]
            if cmd.kind == "srun" and len(o.tokens) == 1 and not o.tokens[0].startswith("--"):
                tokens = (flag[:2] + str(n),)        # -n4
            elif len(o.tokens) == 1:
                tokens = (f"{flag}={n}",)            # --ntasks=4, -n=4 (hydra)
            else:
                tokens = (o.tokens[0], str(n))
            opts.append(Option(o.name, (str(n),), tokens))
            done = True
        elif o.name != name:
            opts.append(o)
    if not done:
        opts.insert(0, Option(name, (str(n),), ("-n", str(n))))
    return LaunchCommand(cmd.launcher, cmd.kind, tuple(opts), cmd.program)


def apply(prof: Profile, rep: dict, ch: dict) -> list[str]:
    """The launch words of the rerun ``ch`` asks for (without ``mpiscope run``)."""
    words, _ = user_launch(prof, rep)
    family = mpi_family(prof)
    cmd = parse(words, IMPL.get(family))
    if ch.get("launcher_remove"):
        cmd = cmd.without(*ch["launcher_remove"])
    add = list(ch.get("launcher_add") or [])
    env = dict(ch.get("env") or {})
    if env and cmd.kind != "other":
        cmd, env_words = _env_options(cmd.kind, env, cmd)
        add = env_words + add
    if ch.get("nranks"):
        cmd = _set_ranks(cmd, int(ch["nranks"]))
    if ch.get("unwrap"):
        cmd = LaunchCommand(cmd.launcher, cmd.kind, cmd.options, _strip_wrapper(cmd.program))
    if cmd.kind == "srun" and any(o.name == "--" for o in cmd.options):
        opts = [o for o in cmd.options if o.name != "--"]
        return [cmd.launcher, *(t for o in opts for t in o.tokens), *add, "--", *cmd.program]
    return [cmd.launcher, *(t for o in cmd.options for t in o.tokens), *add, *cmd.program]


def run_prefix(prof: Profile, launcher: str, extra: list[str] = ()) -> list[str]:
    """``mpiscope run`` with the profile's own settings kept (mode, --sync, --mpit) and
    ``--mpi`` when the launcher's name does not say which MPI it is."""
    words = ["mpiscope", "run"]
    impl = IMPL.get(mpi_family(prof))
    if impl and _impl_by_name(launcher) != impl:
        words += ["--mpi", impl]
    if prof.is_summary:
        words += ["--mode", "summary"]
    settings = prof.meta.get("settings") or {}
    if prof.flags & fmt.FLAG_SYNC and "--sync" not in extra:
        words.append("--sync")
    if settings.get("MPISCOPE_MPIT") in (1, "1"):
        words.append("--mpit")
    return words + list(extra)


def command(prof: Profile, rep: dict, ch: dict) -> str:
    """The next command of a change: ``mpiscope run ... -- <the changed launch>``; variables
    that the launcher cannot set (a launch that is no MPI launcher) go in front."""
    words = apply(prof, rep, ch)
    kind = parse(words, IMPL.get(mpi_family(prof))).kind
    env = "" if kind != "other" or not ch.get("env") else \
        " ".join(f"{k}={shlex.quote(str(v))}" for k, v in ch["env"].items()) + " "
    return env + shlex.join(run_prefix(prof, words[0], ch.get("run_options") or []) + ["--"]
                            + words)
