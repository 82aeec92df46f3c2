"""A real one-node Slurm cluster for tests: slurmctld + slurmd from Debian's slurm-wlm,
started in the foreground from a temporary directory and stopped at the end.

- ``AuthType=auth/none`` and ``CredType=cred/none`` (Slurm 22.05 still ships
  both), so no munge daemon or key is needed.
- Everything runs as the user running the tests, root or not: ``SlurmUser``
  and ``SlurmdUser`` name that user, so slurmd (whose default ``SlurmdUser`` is
  root) starts its job steps as itself; nothing needs root. The daemons live in
  /usr/sbin, which is not on a normal user's PATH: they are looked up there too.
- One node named after this machine (``hostname -s``) with its real CPU count;
  jobs that start more ranks than CPUs ask for ``--overcommit``.
- Free TCP ports for slurmctld and slurmd, job ids from a random first id and
  its own TmpFS (where srun's PMIx plugin makes per-job directories named by
  job id), so a second cluster (another pytest worker) does not collide;
  clients find it through ``SLURM_CONF``.
"""

from __future__ import annotations

import contextlib
import os
import pwd
import random
import shutil
import socket
import subprocess
import time
from pathlib import Path

DAEMONS = ("slurmctld", "slurmd")
CLIENTS = ("sbatch", "srun", "sinfo")
# Where Debian (and most distributions) put daemons; a user's PATH often lacks them.
SBIN = ("/usr/local/sbin", "/usr/sbin", "/sbin")


def find(program: str) -> str | None:
    """The program on PATH, else in the sbin directories."""
    path = os.pathsep.join([os.environ.get("PATH", os.defpath), *SBIN])
    return shutil.which(program, path=path)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def write_conf(root: Path, ctld_port: int, slurmd_port: int) -> Path:
    host = socket.gethostname().split(".")[0]
    cpus = os.cpu_count() or 1
    for d in ("state", "spool", "log", "tmp"):
        (root / d).mkdir(parents=True, exist_ok=True)
    conf = root / "slurm.conf"
    # The user these daemons run as (from the uid: $USER may be stale under su or sudo).
    user = pwd.getpwuid(os.getuid()).pw_name
    conf.write_text(f"""\
ClusterName=mpiscopetest
SlurmctldHost={host}(127.0.0.1)
SlurmctldPort={ctld_port}
SlurmdPort={slurmd_port}
AuthType=auth/none
CredType=cred/none
SlurmUser={user}
SlurmdUser={user}
StateSaveLocation={root}/state
TmpFS={root}/tmp
FirstJobId={random.randrange(1000, 1_000_000, 1000)}
SlurmdSpoolDir={root}/spool
SlurmctldPidFile={root}/slurmctld.pid
SlurmdPidFile={root}/slurmd.pid
SlurmctldLogFile={root}/log/slurmctld.log
SlurmdLogFile={root}/log/slurmd.log
ProctrackType=proctrack/pgid
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MpiDefault=none
ReturnToService=2
SchedulerType=sched/builtin
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MessageTimeout=5
SlurmdParameters=config_overrides
NodeName={host} NodeAddr=127.0.0.1 CPUs={cpus} State=UNKNOWN
PartitionName=test Nodes={host} Default=YES MaxTime=INFINITE State=UP
""")
    return conf


@contextlib.contextmanager
def cluster(root: Path, start_timeout: float = 60):
    """Start the cluster; yield the environment clients need (SLURM_CONF); stop it."""
    missing = [d for d in DAEMONS if find(d) is None] + \
        [c for c in CLIENTS if shutil.which(c) is None]
    if missing:
        raise RuntimeError(f"Slurm is not installed ({', '.join(missing)} not found on PATH"
                           f" or in {', '.join(SBIN)}): scripts/setup.sh installs slurm-wlm")
    conf = write_conf(root, _free_port(), _free_port())
    env = dict(os.environ, SLURM_CONF=str(conf))
    procs = []
    try:
        for d in DAEMONS:
            # -D: stay in the foreground, so the test owns the process and its id.
            args = [find(d), "-D", "-f", str(conf)] + (["-c", "-i"] if d == "slurmctld" else [])
            procs.append(subprocess.Popen(args, env=env, stdout=subprocess.DEVNULL,
                                          stderr=open(root / "log" / f"{d}.stderr", "wb"),
                                          start_new_session=True))
            time.sleep(0.5)
        deadline = time.monotonic() + start_timeout
        while True:
            for p in procs:
                if p.poll() is not None:
                    raise RuntimeError(f"{Path(p.args[0]).name} exited with {p.returncode}"
                                       f"{_cause(root, Path(p.args[0]).name)}: " + _logs(root))
            out = subprocess.run(["sinfo", "-h", "-o", "%T"], env=env, capture_output=True,
                                 text=True)
            if out.returncode == 0 and out.stdout.strip() in ("idle", "mixed", "allocated"):
                break
            if time.monotonic() > deadline:
                raise RuntimeError(f"the Slurm node did not come up (sinfo: "
                                   f"{out.stdout.strip() or out.stderr.strip()}): " + _logs(root))
            time.sleep(0.5)
        yield env
    finally:
        for p in reversed(procs):
            p.terminate()
        for p in reversed(procs):
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()


def _cause(root: Path, daemon: str) -> str:
    """The daemon's own last fatal or error line, if it wrote one."""
    for f in (root / "log" / f"{daemon}.stderr", root / "log" / f"{daemon}.log"):
        try:
            lines = f.read_text(errors="replace").splitlines()
        except OSError:
            continue
        bad = [ln for ln in lines if "fatal" in ln.lower()] or \
              [ln for ln in lines if "error" in ln.lower()]
        if bad:
            return f" ({bad[-1].strip()})"
    return ""


def _logs(root: Path) -> str:
    text = []
    for f in sorted((root / "log").glob("*")):
        lines = f.read_text(errors="replace").splitlines()[-5:]
        text.append(f"{f.name}: " + " | ".join(lines))
    return "; ".join(text)
