"""mpiscope scale --submit slurm, mpiscope run -- srun, and srun rank orders, on a real
one-node Slurm cluster (slurmctld + slurmd started by the fixture, tests/slurmcluster.py).

Open MPI 4.1 jobs are launched by ``srun --mpi=pmix`` (Slurm's pmix_v4 plugin
and Open MPI's PMIx client); 16 ranks on this 2-CPU node ask for --overcommit.
"""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest

import mpitest
import slurmcluster
from mpiscope import native
from mpiscope.reader import read
from test_scale import assert_one_line_error, check_stencil_study, scale, stencil_study

SRUN = "srun --mpi=pmix -n {np}"


@pytest.fixture(scope="module")
def slurm(tmp_path_factory):
    root = tmp_path_factory.mktemp("slurm")
    with slurmcluster.cluster(root) as env:
        yield {"SLURM_CONF": env["SLURM_CONF"]}


@pytest.mark.parametrize("kind", ["strong", "weak"])
def test_stencil_study_through_slurm(tmp_path, slurm, kind):
    study = stencil_study(tmp_path, kind, SRUN, f"slurm-{kind}",
                          extra='[slurm]\noptions = ["--overcommit", "--time=00:10:00"]')
    proc = scale("run", str(study), "--submit", "slurm", "--wait", env=slurm)
    jobs = [ln.split()[-1] for ln in proc.stdout.splitlines() if ln.startswith("submitted")]
    assert len(jobs) == 5 and len(set(jobs)) == 5, proc.stdout
    out = tmp_path / f"slurm-{kind}"
    for n, job in zip((1, 2, 4, 8, 16), jobs):
        att = out / f"points/np{n:05d}-rep1/attempt1"
        assert json.loads((att / "job.json").read_text())["job_id"] == job
        script = (att / "job.sbatch").read_text()
        assert f"#SBATCH --ntasks={n}" in script and "#SBATCH --overcommit" in script
        rec = json.loads((att / "point.json").read_text())
        assert rec["status"] == "done", (rec, (att / "stderr.txt").read_text()[-2000:])
        # the point ran inside its own job, and srun (not mpirun) launched the ranks
        assert rec["slurm_job_id"] == job
        assert rec["command"][:2] == ["srun", "--mpi=pmix"]
        prof = read(att / rec["profile"])
        assert prof.nranks == n
        assert str(prof.meta.get("job_id")).startswith(job), prof.meta.get("job_id")
    status = scale("status", str(out), env=slurm).stdout
    assert status.splitlines()[-1] == "5 done"
    for job in jobs:
        assert job in status
    check_stencil_study(out, kind)
    # Resubmitting finds nothing to do.
    again = scale("run", str(study), "--submit", "slurm", env=slurm).stdout
    assert "nothing to submit" in again


def test_status_of_pending_job_and_job_that_died(tmp_path, slurm):
    """A job held in the queue shows as pending; cancelled, it is recorded as failed and
    the next run submits the point again in a new attempt."""
    exe = native.program("openmpi", "examples/stencil")
    f = tmp_path / "held.toml"
    f.write_text(f"""
[study]
kind = "strong"
ranks = [1, 2]
command = "{exe} --grid 64x64 --steps 5"
output = "held"
[launcher]
command = "{SRUN}"
mpi = "openmpi"
[slurm]
options = ["--hold"]
""")
    proc = scale("run", str(f), "--submit", "slurm", env=slurm)
    jobs = [ln.split()[-1] for ln in proc.stdout.splitlines() if ln.startswith("submitted")]
    status = scale("status", str(tmp_path / "held"), env=slurm).stdout
    assert status.splitlines()[-1] == "2 pending", status
    mpitest.run(["scancel", *jobs], env=slurm)
    status = scale("status", str(tmp_path / "held"), env=slurm).stdout
    assert status.splitlines()[-1] == "2 failed", status
    assert "without writing its record" in status
    rec = json.loads((tmp_path / "held/points/np00001-rep1/attempt1/point.json").read_text())
    assert rec["status"] == "failed" and rec["slurm_state"] == "CANCELLED"
    proc = scale("run", str(f), "--submit", "slurm", env=slurm)
    assert (tmp_path / "held/points/np00001-rep1/attempt2/job.json").exists()
    mpitest.run(["scancel", *[ln.split()[-1] for ln in proc.stdout.splitlines()
                              if ln.startswith("submitted")]], env=slurm)


def test_mpiscope_run_srun_with_rank_order(tmp_path, slurm):
    """mpiscope run -- srun, and --order with srun: SLURM_HOSTFILE + --distribution=arbitrary."""
    exe = str(native.program("openmpi", "examples/stencil"))
    host = socket.gethostname().split(".")[0]
    order = tmp_path / "order"
    mpitest.run(mpitest.mpiscope_cmd("place", "method", "0", "--ranks", "8", "-n", "8",
                                     "--format", "slurm", "--hosts", host, "-o", str(order)))
    assert order.read_text().split() == [host] * 8
    out = tmp_path / "prof"
    out.mkdir()
    proc = mpitest.run(mpitest.mpiscope_cmd(
        "run", "--dir", str(out), "--mpi", "openmpi", "--order", str(order), "--",
        "srun", "--mpi=pmix", "--overcommit", "-n", "8", exe, "--grid", "64x64",
        "--steps", "5"), env=slurm, timeout=300)
    assert "stencil: 8 ranks" in proc.stdout
    (path,) = out.glob("*.mpiscope")
    prof = read(path)
    assert prof.nranks == 8
    assert {h.decode() for h in prof.nodes["hostname"]} == {host}
    # srun's own distribution option, in its short spelling, gives way to the order's.
    proc = mpitest.run(mpitest.mpiscope_cmd(
        "run", "--dir", str(out), "--mpi", "openmpi", "--order", str(order), "--",
        "srun", "--mpi=pmix", "-m", "block", "--overcommit", "-n", "8", exe, "--grid", "64x64",
        "--steps", "5"), env=slurm, timeout=300)
    assert "stencil: 8 ranks" in proc.stdout
    # The hostfile is really what places the ranks: a host outside the cluster is refused.
    bad = tmp_path / "bad-order"
    bad.write_text("nosuchhost\n" * 8)
    proc = mpitest.run(mpitest.mpiscope_cmd(
        "run", "--dir", str(out), "--mpi", "openmpi", "--order", str(bad), "--",
        "srun", "--mpi=pmix", "--overcommit", "-n", "8", exe), env=slurm, check=False,
        timeout=120)
    assert proc.returncode != 0
    assert "nosuchhost" in proc.stderr or "invalid" in proc.stderr.lower(), proc.stderr


def test_slurm_not_answering(tmp_path):
    """A cluster whose controller is down: one line, nothing written."""
    conf = slurmcluster.write_conf(tmp_path / "dead", slurmcluster._free_port(),
                                   slurmcluster._free_port())
    exe = native.program("openmpi", "examples/stencil")
    f = tmp_path / "s.toml"
    f.write_text(f'[study]\nkind = "strong"\nranks = [1, 2]\ncommand = "{exe}"\n'
                 f'output = "s-out"\n[launcher]\ncommand = "{SRUN}"\n')
    proc = scale("run", str(f), "--submit", "slurm", check=False,
                 env={"SLURM_CONF": str(conf)})
    assert_one_line_error(proc, "Slurm is not answering", "Unable to contact slurm controller")
    assert not (tmp_path / "s-out").exists()
