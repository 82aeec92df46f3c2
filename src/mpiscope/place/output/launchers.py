"""Apply a rank order file to a launch command (``mpiscope run --order FILE``).

Where a rank goes is (host, slot); slot s of a host is its core s, to which
the rank is bound. The hosts and their slot counts come from the launch
command (Open MPI ``--host h:n,...`` / ``-H`` / ``--hostfile``; hydra
``-hosts h:n,...`` / ``-f``); with none given, the launch is on this machine
only, and each line of a cray-format order is one *virtual node*: node j is
bound to core j mod (cores here). That is how the order is proven on one
machine; on real nodes, node j is the j-th host. On this machine a slot past
its cores (``--host vm:4`` on 2 cores) is likewise core s mod (cores here):
Open MPI refuses a binding to a core that does not exist, and exits 1 without
a word.

* Open MPI: a rankfile (``rank r=host slot=s``) and ``--rankfile``.
* MPICH hydra: a machine file of ``host:count`` runs (``-f``), which puts
  each rank on its host (each run is a node of its own for MPICH: an order giving
  a host ranks that are not consecutive is warned about, see
  writers.hydra_split_hosts); and ``-bind-to user:c0,c1,...`` binding local rank i
  to core c_i when every host wants the same core list (always on one host).
* srun: SLURM_HOSTFILE and ``--distribution=arbitrary`` (run on a one-node test cluster).

Only the launcher's own options (before the program) are read or replaced
(``mpiscope.run.launcher_args``); the program's arguments are never touched.
"""

from __future__ import annotations

import os
import socket
import sys
import tempfile
from pathlib import Path

from ...errors import UserError
from ...run.launcher_args import LaunchCommand, parse
from .writers import OrderFile, host_runs, hydra_split_warning, read_order_file

# The launcher's options that fight with a rankfile / machine file / arbitrary
# distribution (names as mpiscope.run.launcher_args gives them); dropped.
_OMPI_DROP = ("host", "hostfile", "map-by", "bind-to", "rank-by", "npernode", "N", "ppr",
              "pernode", "npersocket", "bynode", "byslot", "bycore", "bind-to-core",
              "bind-to-socket", "cpu-set", "cpu-list", "rankfile")
_HYDRA_DROP = ("hostfile", "host", "ppn", "bind-to", "map-by", "rr")
_SRUN_DROP = ("distribution",)


def _hosts_from_list(text: str) -> list[tuple[str, int | None]]:
    out = []
    for item in text.split(","):
        name, _, count = item.partition(":")
        out.append((name, int(count) if count.isdigit() else None))
    return out


def _hosts_from_file(path: str) -> list[tuple[str, int | None]]:
    try:
        rows = Path(path).read_text().splitlines()
    except OSError as err:
        raise UserError(f"cannot read host file {path}: {err.strerror}") from None
    out = []
    for row in rows:
        row = row.split("#", 1)[0].strip()
        if not row:
            continue
        parts = row.split()
        name, _, count = parts[0].partition(":")
        for p in parts[1:]:
            if p.startswith("slots="):
                count = p[6:]
        out.append((name, int(count) if count.isdigit() else None))
    return out


def launch_hosts(cmd: LaunchCommand) -> list[tuple[str, int | None]] | None:
    """(host, slots) the launcher's options name, or None if they name none."""
    listed = cmd.value("host")
    if listed:
        return _hosts_from_list(listed)
    hostfile = cmd.value("hostfile")
    if hostfile:
        return _hosts_from_file(hostfile)
    return None


def _nranks(cmd: LaunchCommand) -> int | None:
    value = cmd.value("np", "ntasks")
    if value is None:
        return None
    try:
        return int(value)
    except ValueError:
        raise UserError(f"cannot read the rank count {value!r} of the launch command") from None


def placement(order: OrderFile, hosts: list[tuple[str, int | None]] | None,
              ncores: int) -> tuple[list[str], list[int]]:
    """Host and slot (core) of every rank.

    Arguments:
        order: the order file read back.
        hosts: (name, slots) from the launch command, or None for this machine only.
        ncores: cores of this machine (virtual nodes wrap around them).
    """
    n = order.nranks
    host, slot = [""] * n, [0] * n
    if order.fmt == "cray" and hosts is None:
        here = socket.gethostname()
        for node, line in enumerate(order.lines):
            for r in line:
                host[r], slot[r] = here, node % ncores
        return host, slot
    if order.fmt == "cray":
        seq = order.sequence()
        cells = [(name, s) for name, count in hosts for s in range(count or ncores)]
        if len(cells) < n:
            raise UserError(f"the order places {n} ranks but the hosts have only "
                            f"{len(cells)} slots")
        for pos, r in enumerate(seq):
            host[r], slot[r] = cells[pos]
        return host, _wrap_here(host, slot, ncores)
    names = [h for h, _ in hosts] if hosts else [socket.gethostname()]
    used: dict[str, int] = {}
    for r in range(n):
        name = order.host[r]
        if name.startswith("+n"):
            k = int(name[2:])
            if k >= len(names):
                raise UserError(f"the order uses node +n{k} but the launch has "
                                f"{len(names)} host(s)")
            name = names[k]
        host[r] = name
        slot[r] = order.slot[r] if order.slot is not None else used.get(name, 0)
        used[name] = used.get(name, 0) + 1
    limits = dict(hosts) if hosts else {}
    for name, count in used.items():
        if limits.get(name) and count > limits[name]:
            raise UserError(f"the order places {count} ranks on {name}, which has "
                            f"{limits[name]} slots")
    return host, _wrap_here(host, slot, ncores)


def _wrap_here(host: list[str], slot: list[int], ncores: int) -> list[int]:
    """Slots on this machine as cores that exist here (s mod its core count)."""
    here = {socket.gethostname(), socket.gethostname().split(".")[0], "localhost",
            "127.0.0.1"}
    return [s % ncores if h in here else s for h, s in zip(host, slot)]


def _write(text: str, suffix: str, directory: str | None) -> str:
    fd, path = tempfile.mkstemp(prefix="mpiscope-order-", suffix=suffix, dir=directory)
    with os.fdopen(fd, "w") as f:
        f.write(text)
    return path


def _openmpi(cmd: LaunchCommand, host, slot, directory):
    path = _write("".join(f"rank {r}={h} slot={s}\n" for r, (h, s) in
                          enumerate(zip(host, slot))), ".rankfile", directory)
    return cmd.without(*_OMPI_DROP).argv("--rankfile", path), {}


def _hydra(cmd: LaunchCommand, host, slot, directory):
    warning = hydra_split_warning(host)
    if warning:
        print(warning, file=sys.stderr)
    path = _write("".join(f"{h}:{n}\n" for h, n in host_runs(host)), ".machinefile",
                  directory)
    extra = ["-f", path]
    per_host: dict[str, list[int]] = {}
    for h, s in zip(host, slot):
        per_host.setdefault(h, []).append(s)
    lists = {tuple(v) for v in per_host.values()}
    if len(lists) == 1:
        extra += ["-bind-to", "user:" + ",".join(map(str, lists.pop()))]
    return cmd.without(*_HYDRA_DROP).argv(*extra), {}


def _srun(cmd: LaunchCommand, host, slot, directory):
    path = _write("".join(f"{h}\n" for h in host), ".hostfile", directory)
    return cmd.without(*_SRUN_DROP).argv("--distribution=arbitrary"), {"SLURM_HOSTFILE": path}


def apply_order(argv: list[str], order_file: str, impl: str,
                directory: str | None = None) -> tuple[list[str], dict]:
    """The launch command and extra environment that put rank r where the order says.

    Arguments:
        argv: the launch command, e.g. ["mpirun", "-n", "16", "./app"].
        order_file: a file in any format of mpiscope.place.output.writers.
        impl: "openmpi" or "mpich" (the MPI behind the launcher).
        directory: where the launcher's rankfile / machine file / hostfile is
            written (``mpiscope run`` gives a directory it removes after the
            run); default: the system's temporary directory, left to the caller.
    Returns:
        (new argv, variables to add to the environment).
    """
    if not argv:
        raise UserError("no launch command to apply the order to")
    cmd = parse(argv, impl)
    if cmd.kind == "other":
        raise UserError(f"cannot apply a rank order through {argv[0]}: give the launcher's "
                        f"own command (mpirun/mpiexec of Open MPI or MPICH, or srun)")
    order = read_order_file(order_file)
    n = _nranks(cmd)
    if n is not None and n != order.nranks:
        raise UserError(f"the order file lists {order.nranks} ranks but the launch "
                        f"starts {n}")
    if cmd.kind == "srun" and (order.fmt == "cray"
                               or any(h.startswith("+n") for h in order.host)):
        raise UserError("srun needs an order naming hosts: write it with "
                        "--format slurm --hosts h1,h2,...")
    hosts = None if cmd.kind == "srun" else launch_hosts(cmd)
    host, slot = placement(order, hosts, os.cpu_count() or 1)
    return {"srun": _srun, "openmpi": _openmpi, "hydra": _hydra}[cmd.kind](cmd, host, slot,
                                                                           directory)
