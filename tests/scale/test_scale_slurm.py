"""mpiscope scale --submit slurm, mpiscope run -- srun, and srun rank orders, on a real
one-node Slurm cluster (slurmctld + slurmd started by the fixture, tests/slurmcluster.py).

Open MPI 4.1 jobs are launched by ``srun --mpi=pmix`` (Slurm's pmix_v4 plugin
and Open MPI's PMIx client); 16 ranks on this 2-CPU node ask for --overcommit.
"""

from __future__ import annotations

import json
import socket
import subprocess
import time
import uuid
from pathlib import Path

import pytest

import mpitest
import slurmcluster
from mpiscope import native
from mpiscope.reader import read
from test_scale import assert_one_line_error, check_stencil_study, scale, stencil_study
from test_scale_stop import marked, stop_study, wait_for_ranks

SRUN = "srun --mpi=pmix -n {np}"


@pytest.fixture(scope="module")
def slurm(tmp_path_factory):
    root = tmp_path_factory.mktemp("slurm")
    with slurmcluster.cluster(root) as env:
        yield {"SLURM_CONF": env["SLURM_CONF"]}


# Weak only: a kind changes what the points run, not how they are submitted, and the weak
# study also carries a parameter (the grid) into every job's script. Both kinds run
# locally (test_scale.py), which checks the models of each.
@pytest.mark.parametrize("kind", ["weak"])
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
        assert "PYTHONPATH" not in script  # the point's programs get the user's own
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
    # A local run does not run (or call done) points that are queued in Slurm.
    local = scale("run", str(f), check=False, env=slurm)
    assert_one_line_error(local, "2 point(s)", "queued or running in Slurm", jobs[0], jobs[1])
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
    # Cancelled jobs are failed points: a local run runs them (srun makes its own
    # allocation here), in new attempts.
    local = scale("run", str(f), env=slurm)
    assert "2 point(s) run: 2 done, 0 failed" in local.stdout, local.stdout
    assert json.loads((tmp_path / "held/points/np00002-rep1/attempt3/point.json")
                      .read_text())["status"] == "done"


def test_wait_exit_codes_refused_submission_and_spaces(tmp_path, slurm):
    """--wait exits 1 when a point failed in its job, a job failed before writing its
    record (a bad slurm.python) or sbatch refused a point; a refusal does not stop the
    later points; paths with spaces (and a %) reach #SBATCH intact."""
    where = tmp_path / "my study %x"
    where.mkdir()
    f = where / "codes.toml"
    f.write_text("""
[study]
kind = "strong"
ranks = [1, 2]
command = "sh -c 'echo in job; exit 7'"
[launcher]
command = ""
mpi = "openmpi"
[params]
opt = ["--no-such-sbatch-option", "--time=00:10:00"]
[slurm]
options = ["{opt}"]
""")
    proc = scale("run", str(f), "--submit", "slurm", "--wait", check=False, env=slurm)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr
    out = where / "codes"
    assert "not submitted: sbatch failed" in proc.stdout and "np=1 rep=1" in proc.stdout
    assert "codes: 0 point(s) done, 2 failed" in proc.stdout, proc.stdout
    refused = json.loads((out / "points/np00001-rep1/attempt1/point.json").read_text())
    assert refused["status"] == "failed" and "no-such-sbatch-option" in refused["reason"]
    att = out / "points/np00002-rep1/attempt1"
    rec = json.loads((att / "point.json").read_text())
    assert rec["status"] == "failed" and rec["exit_code"] == 7, rec
    assert "in job" in (att / "stdout.txt").read_text()
    assert len(list(att.glob("slurm-*.out"))) == 1  # --output with the space and the %
    # A job that cannot start mpiscope at all (FAILED, no record).
    bad = where / "badpy.toml"
    bad.write_text(f.read_text().replace('"{opt}"', '"--time=00:10:00"')
                   + 'python = "/no/such/python3"\n')
    proc = scale("run", str(bad), "--submit", "slurm", "--wait", check=False, env=slurm)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    status = scale("status", str(where / "badpy"), env=slurm).stdout
    assert status.splitlines()[-1] == "2 failed", status
    assert "(FAILED) without writing its record" in status, status


def test_scancel_stops_an_mpirun_point(tmp_path, slurm):
    """scancel of a point's job whose launcher is mpirun (not a Slurm step): under
    proctrack/pgid Slurm signals only `scale point`; the point's mpiscope run,
    mpirun and ranks (in a session of their own) must end with the job, and the
    attempt is closed once, by the job. --wait exits 1 for the CANCELLED job."""
    mark = uuid.uuid4().hex
    study = stop_study(tmp_path, "cancel", mark,
                       extra='[slurm]\noptions = ["--overcommit"]')
    out = tmp_path / "cancel"
    with open(tmp_path / "run.out", "w") as log:
        runner = subprocess.Popen(mpitest.mpiscope_cmd("scale", "run", str(study), "--submit",
                                                       "slurm", "--wait"),
                                  env=mpitest.mpi_env(slurm), stdout=log,
                                  stderr=subprocess.STDOUT, start_new_session=True)
    try:
        wait_for_ranks(mark, runner, timeout=240)
        job = json.loads((out / "points/np00002-rep1/attempt1/job.json").read_text())["job_id"]
        mpitest.run(["scancel", job], env=slurm)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            state = mpitest.run(["squeue", "-h", "-t", "all", "-j", job, "-o", "%T"],
                                env=slurm).stdout.strip()
            if state not in ("RUNNING", "COMPLETING"):
                break
            time.sleep(0.2)
        assert state == "CANCELLED", state
        assert marked(mark) == {}  # the job's end is the end of every process of the point
        assert runner.wait(timeout=120) == 1, (tmp_path / "run.out").read_text()
        rec = json.loads((out / "points/np00002-rep1/attempt1/point.json").read_text())
        assert rec["status"] == "failed" and rec["reason"] == "stopped by SIGTERM", rec
        assert rec["slurm_job_id"] == job
        assert list(out.rglob("*.mpiscope")) == []
    finally:
        if runner.poll() is None:
            runner.kill()
        for pid in marked(mark):
            subprocess.run(["kill", "-9", str(pid)], check=False)


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
    # A user's LD_PRELOAD in --export=ALL,... reaches the tasks after ours (Slurm 22.05
    # gives the tasks the environment's value, not the listed one, with ALL).
    lib = native.runtime_library("openmpi")
    proc = mpitest.run(mpitest.mpiscope_cmd(
        "run", "--dir", str(out), "--mpi", "openmpi", "--", "srun", "-n", "1",
        "--export=ALL,LD_PRELOAD=libm.so.6", "printenv", "LD_PRELOAD"), env=slurm, timeout=120)
    assert proc.stdout.strip() == f"{lib}:libm.so.6", proc.stdout


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
