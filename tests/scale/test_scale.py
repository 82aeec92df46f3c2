"""mpiscope scale: study files, local runs, resuming, tables, models, export, bad input.

The synthetic studies run tests/scale/scale_synthetic_app.py under `mpiscope run` as
each point's program: it writes a profile whose per-function costs follow
known laws of P (allreduce a + b log2 P, compute c / P, gather d P), so the
models must recover them. The stencil studies are real Open MPI runs.
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
import shutil
import sys
from pathlib import Path

import pytest

import mpitest
from mpiscope import native

HERE = Path(__file__).resolve().parent
APP = HERE / "scale_synthetic_app.py"
sys.path.insert(0, str(HERE))
import scale_synthetic_app as law  # noqa: E402


def scale(*args, cwd=None, check=True, env=None, timeout=600):
    return mpitest.run(mpitest.mpiscope_cmd("scale", *args), cwd=cwd, check=check, env=env,
                       timeout=timeout)


def assert_one_line_error(proc, *words):
    assert proc.returncode == 2, proc.stdout + proc.stderr
    err = proc.stderr.strip()
    assert "Traceback" not in err and len(err.splitlines()) == 1, err
    assert err.startswith("mpiscope: error: "), err
    for w in words:
        assert w in err, err


def synthetic_study(tmp_path: Path, ranks=(1, 2, 4, 8, 16, 32), extra="", name="syn",
                    reps=1, params="") -> Path:
    f = tmp_path / f"{name}.toml"
    f.write_text(f"""
[study]
kind = "strong"
ranks = {list(ranks)}
repetitions = {reps}
command = "{sys.executable} {APP} {{np}} {extra}"
output = "{name}-out"
[launcher]
command = ""
mpi = "openmpi"
{params}
""")
    return f


def report_json(directory: Path) -> dict:
    return json.loads(scale("report", str(directory), "--json").stdout)


def test_synthetic_laws_recovered_exactly(tmp_path):
    study = synthetic_study(tmp_path)
    proc = scale("run", str(study))
    assert "6 point(s) run: 6 done, 0 failed" in proc.stdout
    out = tmp_path / "syn-out"
    rep = report_json(out)
    assert [p["np"] for p in rep["points"]] == [1, 2, 4, 8, 16, 32]
    models = {m["name"]: m for m in rep["models"]["functions"]}
    # allreduce: a + b log2 P, modelled as T
    ar = models["MPI_Allreduce"]
    assert ar["modelled"] == "T"
    assert [(t["poly_exp"], t["log_exp"]) for t in ar["terms"]] == [(0.0, 1.0)]
    assert ar["constant"] == pytest.approx(law.A, rel=0.05)
    assert ar["terms"][0]["coefficient"] == pytest.approx(law.B, rel=0.05)
    # compute: c / P cannot be a PMNF term (no negative exponents): P x T = c, a constant
    comp = models["(compute)"]
    assert comp["modelled"] == "P x T"
    assert comp["terms"] == []
    assert comp["constant"] == pytest.approx(law.C, rel=0.05)
    # gather: d P
    ga = models["MPI_Gather"]
    assert ga["modelled"] == "T"
    assert [(t["poly_exp"], t["log_exp"]) for t in ga["terms"]] == [(1.0, 0.0)]
    assert ga["terms"][0]["coefficient"] == pytest.approx(law.D, rel=0.05)
    assert abs(ga["constant"]) < 1e-3 * law.D
    # Extrapolation: at 10x and 100x of 32 the gather dominates; the efficiency follows the laws.
    ex = {e["multiple"]: e for e in rep["extrapolation"]}
    for mult in (10, 100):
        P = 32 * mult
        t = law.A + law.B * math.log2(P) + law.C / P + law.D * P
        assert ex[mult]["np"] == P
        assert ex[mult]["dominant"] == "MPI_Gather"
        assert ex[mult]["time_s"] == pytest.approx(t, rel=1e-3)
        t1 = law.A + law.C + law.D
        assert ex[mult]["efficiency"] == pytest.approx(t1 / (P * t), rel=1e-3)
        assert ex[mult]["efficiency_lo"] <= ex[mult]["efficiency"] <= ex[mult]["efficiency_hi"]
    # Amdahl and Karp-Flatt on the measured wall times
    walls = {p["np"]: p["wall_s"]["median"] for p in rep["points"]}
    for n, w in walls.items():
        assert w == pytest.approx(law.A + law.B * math.log2(n) + law.C / n + law.D * n, rel=1e-9)
    kf = {k["np"]: k["serial_fraction"] for k in rep["karp_flatt"]}
    s32 = walls[1] / walls[32]
    assert kf[32] == pytest.approx((1 / s32 - 1 / 32) / (1 - 1 / 32))
    assert kf[2] < kf[4] < kf[8] < kf[16] < kf[32]  # growing overhead, not a fixed serial part
    assert 0 < rep["amdahl"]["serial_fraction"] < kf[32]

    # Tables render the same numbers.
    text = scale("report", str(out)).stdout
    assert "Strong scaling: syn-out" in text and "parallel eff." in text
    assert "0.002 + 0.0015 * log2(P)" in text and "(4) / P" in text

    # A second run has nothing to do and writes nothing.
    before = sorted(p for p in out.rglob("*"))
    assert "all 6 points of syn-out are done" in scale("run", str(study)).stdout
    assert sorted(p for p in out.rglob("*")) == before
    status = scale("status", str(out)).stdout
    assert status.splitlines()[-1] == "6 done"

    # Export: Extra-P's own reader loads the text; the CSV is tidy.
    from extrap.fileio.file_reader.text_file_reader import TextFileReader
    path = tmp_path / "syn.txt"
    scale("export", str(out), "--format", "extrap", "-o", str(path))
    exp = TextFileReader().read_experiment(str(path))
    assert [c[0] for c in exp.coordinates] == [1, 2, 4, 8, 16, 32]
    names = {cp.name for cp in exp.callpaths}
    assert names == {"(wall)", "(compute)", "MPI_Allreduce", "MPI_Gather"}
    again = scale("export", str(out), "--format", "extrap", "-o", str(path), check=False)
    assert_one_line_error(again, "exists")
    rows = list(csv.DictReader(io.StringIO(scale("export", str(out), "--format", "csv").stdout)))
    g = [r for r in rows if r["metric"] == "time_per_rank" and r["name"] == "MPI_Gather"]
    assert [(int(r["np"]), float(r["value"])) for r in g] == [
        (n, pytest.approx(law.D * n)) for n in (1, 2, 4, 8, 16, 32)]
    # Plots
    pdir = tmp_path / "plots"
    scale("report", str(out), "--plots", str(pdir))
    for name in ("scaling.png", "functions.png", "models.png"):
        assert (pdir / name).stat().st_size > 10_000
    # Nothing written is replaced without --force (more in test_scale_html.py).
    assert_one_line_error(scale("report", str(out), "--plots", str(pdir), check=False),
                          "scaling.png exists", "--force")


def test_failed_point_recorded_then_resumed(tmp_path):
    marker = tmp_path / "break-np4"
    marker.write_text("")
    study = synthetic_study(tmp_path, ranks=(1, 2, 4, 8), extra="{flag}",
                            params=f'[params]\nflag = ["", "", "--fail-if {marker}", ""]')
    proc = scale("run", str(study), check=False)
    assert proc.returncode == 1
    assert "4 point(s) run: 3 done, 1 failed" in proc.stdout
    out = tmp_path / "syn-out"
    rec = json.loads((out / "points/np00004-rep1/attempt1/point.json").read_text())
    assert rec["status"] == "failed" and rec["exit_code"] != 0
    assert "synthetic failure" in (out / "points/np00004-rep1/attempt1/stderr.txt").read_text()
    # The report goes on without it and says so; 3 rank counts are too few for Extra-P.
    rep = report_json(out)
    assert [p["np"] for p in rep["points"]] == [1, 2, 8]
    assert rep["failed"][0]["np"] == 4
    assert rep["models"]["available"] is False
    assert "at least 5 rank counts" in rep["models"]["why_not"]
    text = scale("report", str(out)).stdout
    assert "1 point(s) failed" in text and text.count("Extra-P needs at least 5") == 1
    # notes in yellow, not as printed markup (the console prints every string literally)
    assert "note: " in text and "[yellow]" not in text and "\\[" not in text
    assert "failed" in scale("status", str(out)).stdout
    # Fixed: a second run runs only the failed point, in a new attempt, keeping the old one.
    marker.unlink()
    proc = scale("run", str(study))
    assert "1 point(s) run: 1 done, 0 failed" in proc.stdout
    assert (out / "points/np00004-rep1/attempt1/point.json").exists()
    rec2 = json.loads((out / "points/np00004-rep1/attempt2/point.json").read_text())
    assert rec2["status"] == "done"
    assert [p["np"] for p in report_json(out)["points"]] == [1, 2, 4, 8]


def test_saved_study_file_resumes_with_its_name_environment_and_rank_check(tmp_path):
    """A study without study.output is named after its directory everywhere; its points
    see the environment scale run was given (no PYTHONPATH of mpiscope's); a profile
    of the wrong rank count (a launcher without {np}) fails its point when it ends;
    running the saved DIR/study.toml resumes DIR (no nested study)."""
    f = tmp_path / "base.toml"
    f.write_text(f"""
[study]
kind = "strong"
ranks = [1, 2]
command = "{sys.executable} {APP} 2 --env PYTHONPATH"
[launcher]
command = ""
mpi = "openmpi"
""")
    pythonpath = os.pathsep.join(["/no/such/dir", str(mpitest.REPO / "src")])
    env = {"PYTHONPATH": pythonpath}
    proc = scale("run", str(f), check=False, env=env)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "base: 2 point(s) run: 1 done, 1 failed" in proc.stdout, proc.stdout
    out = tmp_path / "base"
    for n in (1, 2):
        att = out / f"points/np0000{n}-rep1/attempt1"
        assert f"PYTHONPATH={pythonpath}\n" in (att / "stdout.txt").read_text()
    rec = json.loads((out / "points/np00001-rep1/attempt1/point.json").read_text())
    assert rec["status"] == "failed" and rec["profile"], rec
    assert rec["reason"].startswith("the profile has 2 ranks, not 1"), rec
    assert json.loads((out / "points/np00002-rep1/attempt1/point.json").read_text())[
        "status"] == "done"
    assert scale("status", str(out)).stdout.startswith("base (strong scaling)")
    rows = list(csv.DictReader(io.StringIO(scale("export", str(out), "--format", "csv").stdout)))
    assert {r["study"] for r in rows} == {"base"}
    # Resuming through the saved copy: the failed point again, in the same directory.
    proc = scale("run", str(out / "study.toml"), check=False, env=env)
    assert proc.returncode == 1 and "base: 1 point(s) run: 0 done, 1 failed" in proc.stdout
    assert (out / "points/np00001-rep1/attempt2/point.json").exists()
    assert not (out / "points/np00002-rep1/attempt2").exists()
    assert not (out / "study").exists()


def test_bad_studies_and_directories(tmp_path):
    good = synthetic_study(tmp_path, ranks=(1, 2))
    text = good.read_text()
    cases = [
        (text.replace('kind = "strong"', 'kind = "strng"'), ["study.kind", "strng"]),
        (text.replace('kind = "strong"\n', ""), ["missing key study.kind"]),
        (text.replace("ranks = [1, 2]", 'ranks = "1,2"'), ["ranks", "list of integers"]),
        (text.replace("ranks = [1, 2]", "ranks = [1, 1]"), ["repeats"]),
        (text.replace("repetitions = 1", "repetitons = 1"), ["unknown key", "repetitons"]),
        (text.replace("{np}", "{nranks}"), ["study.command", "unknown placeholder {nranks}"]),
        (text + "[params]\ngrid = ['a']\n", ["params.grid", "1 values for 2 rank counts"]),
        (text.replace("[study]", "[study"), ["not valid TOML"]),
        (text.replace('mpi = "openmpi"', 'mpi = "lam"'), ["launcher.mpi"]),
        (text + "[slurm]\noptions = '--time=1'\n", ["[slurm]", "options", "list of strings"]),
        (text + '[env]\n"A=B" = "1"\n', ["env", "'A=B'", "not an environment variable name"]),
        (text.replace("{np}", "{np[0]}"), ["study.command", "bad template"]),
        (text.replace("[study]", "[study]\ntimeout = nan"), ["study.timeout", "positive"]),
        (text.replace('output = "syn-out"', 'output = ""'), ["study.output", "directory"]),
    ]
    for i, (body, words) in enumerate(cases):
        f = tmp_path / f"bad{i}.toml"
        f.write_text(body)
        assert_one_line_error(scale("run", str(f), check=False), f"bad{i}.toml", *words)
    assert not (tmp_path / "syn-out").exists()  # refused before anything was written
    assert_one_line_error(scale("run", str(tmp_path / "nope.toml"), check=False),
                          "does not exist")
    assert_one_line_error(scale("report", str(tmp_path), check=False),
                          "not a study directory")
    assert_one_line_error(scale("run", str(good), "--submit", "pbs", check=False), "--submit")

    # One rank count: no scaling to report. Different programs in one directory: refused.
    one = synthetic_study(tmp_path, ranks=(2,), name="one")
    # A directory left by a run that stopped before its first point (nothing to protect)
    # takes the study file as it is now.
    (tmp_path / "one-out/points").mkdir(parents=True)
    (tmp_path / "one-out/study.toml").write_text("# an earlier version of one.toml\n")
    scale("run", str(one))
    assert (tmp_path / "one-out/study.toml").read_text() == one.read_text()
    assert_one_line_error(scale("report", str(tmp_path / "one-out"), check=False),
                          "2 or more rank counts", "has 1")
    mixed = synthetic_study(tmp_path, ranks=(1, 2), name="mixed", extra="--program {prog}",
                            params='[params]\nprog = ["/x/solver", "/y/other"]')
    scale("run", str(mixed))
    assert_one_line_error(scale("report", str(tmp_path / "mixed-out"), check=False),
                          "different programs", "solver (np 1)", "other (np 2)")
    # A changed study file cannot write into the old study's directory.
    mixed.write_text(mixed.read_text().replace("repetitions = 1", "repetitions = 2"))
    assert_one_line_error(scale("run", str(mixed), check=False), "different study")
    # Slurm not installed: no sbatch on PATH.
    env = {"PATH": str(Path(sys.executable).parent)}
    assert_one_line_error(scale("run", str(good), "--submit", "slurm", check=False, env=env),
                          "Slurm is not installed", "sbatch")


# ---------------------------------------------------------------------------
# A real study: the stencil mini-app on Open MPI, strong and weak.

WEAK_GRIDS = ["64x64", "128x64", "128x128", "256x128", "256x256"]


def stencil_study(tmp_path: Path, kind: str, launcher: str, name: str,
                  extra: str = "") -> Path:
    exe = native.program("openmpi", "examples/stencil")
    grid = "{grid}" if kind == "weak" else "256x256"
    f = tmp_path / f"{name}.toml"
    f.write_text(f"""
[study]
name = "{name}"
kind = "{kind}"
ranks = [1, 2, 4, 8, 16]
repetitions = 1
command = "{exe} --grid {grid} --steps 40"
output = "{name}"
timeout = 300
[params]
grid = {json.dumps(WEAK_GRIDS)}
[launcher]
command = "{launcher}"
mpi = "openmpi"
[env]
OMPI_ALLOW_RUN_AS_ROOT = "1"
OMPI_ALLOW_RUN_AS_ROOT_CONFIRM = "1"
{extra}
""")
    return f


def check_stencil_study(out: Path, kind: str) -> dict:
    """Every point done with its own profile; strong points compute the same answer."""
    results = set()
    for n in (1, 2, 4, 8, 16):
        att = out / f"points/np{n:05d}-rep1/attempt1"
        rec = json.loads((att / "point.json").read_text())
        assert rec["status"] == "done" and rec["exit_code"] == 0, rec
        line = [ln for ln in (att / "stdout.txt").read_text().splitlines()
                if ln.startswith("RESULT stencil")]
        assert len(line) == 1
        assert f"stencil: {n} ranks" in (att / "stdout.txt").read_text()
        results.add(line[0])
    if kind == "strong":
        assert len(results) == 1, results  # same problem at every P: same checksum
    else:
        assert len(results) == 5           # a bigger grid at every P
    rep = report_json(out)
    assert [p["np"] for p in rep["points"]] == [1, 2, 4, 8, 16]
    assert rep["points"][0]["efficiency"] == pytest.approx(1.0)
    names = {f["name"] for f in rep["functions"]}
    assert "(compute)" in names and "MPI_Waitall" in names
    assert rep["models"]["available"], rep["models"]["why_not"]
    assert [e["np"] for e in rep["extrapolation"]] == [160, 1600]
    for e in rep["extrapolation"]:
        assert e["dominant"] in names
    if kind == "strong":
        assert rep["points"][0]["speedup"] == pytest.approx(1.0)
        assert rep["amdahl"]["available"]
        assert len(rep["karp_flatt"]) == 4
    else:
        assert rep["amdahl"]["available"] is False and rep["karp_flatt"] == []
    from extrap.fileio.file_reader.text_file_reader import TextFileReader
    path = out.parent / f"{out.name}.extrap.txt"
    scale("export", str(out), "--format", "extrap", "-o", str(path))
    exp = TextFileReader().read_experiment(str(path))
    assert len(exp.coordinates) == 5 and "MPI_Waitall" in {c.name for c in exp.callpaths}
    return rep


@pytest.mark.parametrize("kind", ["strong", "weak"])
def test_stencil_study_local_openmpi(tmp_path, kind):
    study = stencil_study(tmp_path, kind, "mpirun.openmpi --oversubscribe --bind-to none -n {np}",
                          f"stencil-{kind}")
    scale("run", str(study))
    check_stencil_study(tmp_path / f"stencil-{kind}", kind)
