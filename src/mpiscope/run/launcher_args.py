"""A launch command split into the launcher's own options and the program.

``mpirun -n 4 --host a:2 ./app -H 5 --map-by foo`` holds the launcher's
options ``-n 4 --host a:2`` and the program ``./app -H 5 --map-by foo``: only
the first part may be read or rewritten (``mpiscope run --order``, the ``-x``
forwarding of Open MPI); the program's arguments are the program's business.

Where the program starts depends on which options take values, so each
launcher's table of valued options is spelled out here, from its own parser:

* Open MPI 4.x ``mpirun``/``mpiexec`` (``mpirun --help all``): ``-name`` and
  ``--name`` are the same option, values are separate words, ``-mca``/``-gmca``
  take two.
* MPICH hydra ``mpiexec`` (its match table): one or two dashes, the value a
  separate word or after ``=``; ``-genv``/``-env`` take two.
* Slurm ``srun`` (getopt_long with ``+``): short options may be grouped and
  take their value attached (``-n4``, ``-mblock``) or as the next word; long
  options take ``--name=value`` or ``--name value`` (optional values only with
  ``=``), and may be abbreviated to any unique prefix; ``--`` ends the options.

A command whose launcher is none of these (a singleton run, ``sh -c ...``) has
no launcher options: everything is the program.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

from ..errors import UserError

_OMPI_LAUNCHER = re.compile(r"^(mpirun|mpiexec|orterun|prterun|oshrun)(\.openmpi)?$")
_HYDRA_LAUNCHER = re.compile(r"^(mpirun|mpiexec)(\.(mpich|hydra|intel))?$|^mpiexec\.hydra$")

# Open MPI 4.1 (mpirun --help all): options taking one value, and two.
_OMPI_VALUED = {
    "am", "app", "bind-to", "c", "cf", "cartofile", "cpu-list", "cpu-set", "cpus-per-proc",
    "cpus-per-rank", "debugger", "default-hostfile", "H", "host", "hnp", "hostfile",
    "launch-agent", "machinefile", "map-by", "max-restarts", "max-vm-size", "N", "n", "np",
    "npernode", "npersocket", "ompi-server", "output-filename", "path", "personality", "ppr",
    "prefix", "preload-files", "rank-by", "report-events", "report-pid", "report-uri", "rf",
    "rankfile", "stdin", "timeout", "tune", "wd", "wdir", "x", "xml-file", "xterm",
}
_OMPI_TWO = {"mca", "gmca"}
# Open MPI: several spellings of one option, by the name used here.
_OMPI_ALIASES = {"c": "np", "n": "np", "H": "host", "machinefile": "hostfile", "rf": "rankfile",
                 "wd": "wdir"}

# MPICH hydra (ui/mpich/utils.c match table, MPICH 4.0).
_HYDRA_VALUED = {
    "genvlist", "f", "hostfile", "machinefile", "machine", "machines", "machinelist", "host",
    "hosts", "hostlist", "ppn", "prepend-pattern", "outfile-pattern", "errfile-pattern",
    "outfile", "errfile", "wdir", "configfile", "envlist", "n", "np", "launcher",
    "launcher-exec", "bootstrap", "bootstrap-exec", "rmk", "ranks-per-proc", "bind-to",
    "binding", "map-by", "membind", "topolib", "ckpoint-interval", "ckpoint-prefix",
    "ckpoint-num", "ckpointlib", "demux", "iface", "nameserver", "order-nodes", "localhost",
    "usize", "gpus-per-proc", "tree-width",
}
_HYDRA_TWO = {"genv", "env"}
_HYDRA_ALIASES = {"n": "np", "f": "hostfile", "machinefile": "hostfile", "machine": "host",
                  "machines": "host", "machinelist": "host", "hosts": "host",
                  "hostlist": "host", "binding": "bind-to"}

# srun (Slurm 22.05 man page): long options by how they take a value.
_SRUN_REQUIRED = {
    "accel-bind", "account", "acctg-freq", "bb", "bbf", "bcast-exclude", "begin", "chdir",
    "cluster-constraint", "clusters", "comment", "constraint", "container", "core-spec",
    "cores-per-socket", "cpu-bind", "cpu-freq", "cpus-per-gpu", "cpus-per-task", "deadline",
    "delay-boot", "dependency", "distribution", "epilog", "error", "exclude", "export",
    "extra-node-info", "gid", "gpu-bind", "gpu-freq", "gpus", "gpus-per-node", "gpus-per-socket",
    "gpus-per-task", "gres", "gres-flags", "het-group", "hint", "input", "job-name", "jobid",
    "licenses", "mail-type", "mail-user", "mcs-label", "mem", "mem-bind", "mem-per-cpu",
    "mem-per-gpu", "mincpus", "mpi", "msg-timeout", "network", "nodefile", "nodelist", "nodes",
    "ntasks", "ntasks-per-core", "ntasks-per-gpu", "ntasks-per-node", "ntasks-per-socket",
    "open-mode", "output", "partition", "power", "prefer", "priority", "profile", "prolog",
    "qos", "relative", "reservation", "signal", "slurmd-debug", "sockets-per-node", "switches",
    "task-epilog", "task-prolog", "thread-spec", "threads", "threads-per-core", "time",
    "time-min", "tmp", "uid", "wait", "wckey",
}
_SRUN_OPTIONAL = {"bcast", "compress", "exclusive", "immediate", "kill-on-bad-exit", "nice",
                  "no-kill", "propagate", "resv-ports", "send-libs", "x11"}
_SRUN_FLAGS = {"contiguous", "disable-status", "exact", "help", "hold", "label", "multi-prog",
               "no-allocate", "overcommit", "overlap", "oversubscribe", "preserve-env", "pty",
               "quiet", "quit-on-interrupt", "reboot", "spread-job", "test-only", "unbuffered",
               "usage", "use-min-nodes", "verbose", "version"}
_SRUN_SHORT = {
    "A": "account", "B": "extra-node-info", "C": "constraint", "D": "chdir", "F": "nodefile",
    "G": "gpus", "J": "job-name", "L": "licenses", "M": "clusters", "N": "nodes",
    "S": "core-spec", "T": "threads", "W": "wait", "b": "begin", "c": "cpus-per-task",
    "d": "dependency", "e": "error", "i": "input", "m": "distribution", "n": "ntasks",
    "o": "output", "p": "partition", "q": "qos", "r": "relative", "t": "time", "w": "nodelist",
    "x": "exclude", "I": "immediate", "K": "kill-on-bad-exit", "k": "no-kill",
    "E": "preserve-env", "H": "hold", "O": "overcommit", "Q": "quiet", "V": "version",
    "X": "disable-status", "Z": "no-allocate", "h": "help", "l": "label", "s": "oversubscribe",
    "u": "unbuffered", "v": "verbose",
}
_SRUN_LONG = _SRUN_REQUIRED | _SRUN_OPTIONAL | _SRUN_FLAGS


@dataclass(frozen=True)
class Option:
    """One launcher option as written.

    Attributes:
        name: the option's name without dashes, aliases resolved to one name
            ("np" for -n/-np/-c, "host" for -H/-host/-hosts, "hostfile" for
            -f/-machinefile; srun's short options by their long name).
        values: its values (none for a flag).
        tokens: the words of the command it took, exactly as written.
    """

    name: str
    values: tuple[str, ...]
    tokens: tuple[str, ...]


@dataclass(frozen=True)
class LaunchCommand:
    """A launch command: launcher, the launcher's options, the program and its arguments.

    Attributes:
        kind: "openmpi", "hydra", "srun", or "other" (no launcher options known).
    """

    launcher: str
    kind: str
    options: tuple[Option, ...]
    program: tuple[str, ...]

    def value(self, *names: str) -> str | None:
        """The (last) value of any of the named options, or None."""
        found = [o.values[0] for o in self.options if o.name in names and o.values]
        return found[-1] if found else None

    def without(self, *names: str) -> "LaunchCommand":
        """The command with every option of these names removed."""
        return LaunchCommand(self.launcher, self.kind,
                             tuple(o for o in self.options if o.name not in names), self.program)

    def argv(self, *first: str) -> list[str]:
        """The command as words, with ``first`` inserted right after the launcher."""
        return [self.launcher, *first, *(t for o in self.options for t in o.tokens),
                *self.program]


def launcher_kind(argv0: str, impl: str | None) -> str:
    """Which option parser a launcher uses: openmpi, hydra, srun or other."""
    name = os.path.basename(argv0)
    if name == "srun":
        return "srun"
    if _OMPI_LAUNCHER.match(name) and (impl == "openmpi" or name.endswith(".openmpi")):
        return "openmpi"
    if _HYDRA_LAUNCHER.match(name) and impl in ("mpich", "intelmpi", None):
        return "hydra"
    return "other"


def parse(argv: list[str], impl: str | None = None) -> LaunchCommand:
    """Split a launch command; UserError if an option lacks its value."""
    if not argv:
        raise UserError("no launch command")
    kind = launcher_kind(argv[0], impl)
    words = list(argv[1:])
    split = {"openmpi": _split_dashed, "hydra": _split_dashed, "srun": _split_srun}.get(kind)
    if split is None:
        return LaunchCommand(argv[0], kind, (), tuple(words))
    options, program = split(words, kind)
    return LaunchCommand(argv[0], kind, tuple(options), tuple(program))


def _need(words: list[str], i: int, count: int, token: str) -> tuple[str, ...]:
    if i + count > len(words):
        raise UserError(f"launcher option {token} needs a value")
    return tuple(words[i:i + count])


def _split_dashed(words: list[str], kind: str) -> tuple[list[Option], list[str]]:
    """Open MPI and hydra: -name/--name, values as following words (hydra: or after =)."""
    if kind == "openmpi":
        valued, two, aliases = _OMPI_VALUED, _OMPI_TWO, _OMPI_ALIASES
    else:
        valued, two, aliases = _HYDRA_VALUED, _HYDRA_TWO, _HYDRA_ALIASES
    options, i = [], 0
    while i < len(words):
        token = words[i]
        if not token.startswith("-") or token in ("-", "--"):
            break
        name, attached = token.lstrip("-"), None
        if kind == "hydra" and "=" in name:
            name, attached = name.split("=", 1)
        count = 2 if name in two else 1 if name in valued else 0
        if attached is not None:
            values = (attached, *_need(words, i + 1, max(count - 1, 0), token))
        else:
            values = _need(words, i + 1, count, token)
        used = 1 + len(values) - (attached is not None)
        options.append(Option(aliases.get(name, name), values, tuple(words[i:i + used])))
        i += used
    return options, words[i:]


def _srun_long(name: str, token: str) -> str:
    if name in _SRUN_LONG:
        return name
    matches = sorted(n for n in _SRUN_LONG if n.startswith(name))
    if len(matches) == 1:
        return matches[0]
    return name  # unknown to us (a newer Slurm): taken as a flag, as it is left alone


def _split_srun(words: list[str], kind: str) -> tuple[list[Option], list[str]]:
    options, i = [], 0
    while i < len(words):
        token = words[i]
        if token == "--":
            options.append(Option("--", (), (token,)))
            i += 1
            break
        if not token.startswith("-") or token == "-":
            break
        if token.startswith("--"):
            name, eq, attached = token[2:].partition("=")
            name = _srun_long(name, token)
            if eq:
                values, used = (attached,), 1
            elif name in _SRUN_REQUIRED:
                values, used = _need(words, i + 1, 1, token), 2
            else:
                values, used = (), 1
            options.append(Option(name, values, tuple(words[i:i + used])))
            i += used
            continue
        # Short options, possibly grouped (-lmblock = -l -m block); a group is
        # split into one option per letter, which getopt reads the same way.
        j, used, group = 1, 1, []
        while j < len(token):
            letter, rest = token[j], token[j + 1:]
            name = _SRUN_SHORT.get(letter, letter)
            if name in _SRUN_REQUIRED:
                if rest:
                    group.append(Option(name, (rest,), ("-" + letter + rest,)))
                else:
                    value = _need(words, i + 1, 1, "-" + letter)
                    group.append(Option(name, value, ("-" + letter, *value)))
                    used = 2
                break
            if name in _SRUN_OPTIONAL and rest:
                group.append(Option(name, (rest,), ("-" + letter + rest,)))
                break
            group.append(Option(name, (), ("-" + letter,)))
            j += 1
        if len(group) == 1:
            group = [Option(group[0].name, group[0].values, tuple(words[i:i + used]))]
        options.extend(group)
        i += used
    return options, words[i:]
