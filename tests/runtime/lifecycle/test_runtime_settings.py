"""MPISCOPE_* settings: the table (runtime/settings.h) and docs/settings.md agree;
bad values warn and fall back to the default without touching the
application; an unwritable directory gives one warning and the application's
exit code; an existing profile is never overwritten; MPISCOPE_QUIET silences
the runtime.
"""

from __future__ import annotations

import re
from pathlib import Path

import mpitest
import mpiscope
from mpiscope import native

REPO = Path(__file__).resolve().parents[3]


def table_rows() -> list[tuple[str, str, str]]:
    """(name, type, default) of every row of MPISCOPE_SETTINGS in settings.h."""
    text = (REPO / "runtime" / "settings.h").read_text()
    return re.findall(r'X\((\w+), (\w+), "([^"]*)"', text)


def test_doc_lists_exactly_the_table():
    doc = (REPO / "docs" / "settings.md").read_text()
    rows = re.findall(r"^\| `MPISCOPE_(\w+)` \| (\w+) \| ([^|]+) \|", doc, re.M)
    documented = {name: (typ, default.strip().strip("`")) for name, typ, default in rows}
    table = {name: (typ, default) for name, typ, default in table_rows()}
    assert set(documented) == set(table)
    for name, (typ, default) in table.items():
        assert documented[name][0] == typ, name
        if default:      # an empty default (DIR) is described in words
            assert documented[name][1] == default, name
    assert {"MODE", "DIR", "SYNC", "QUIET"} <= set(table)


def _run(impl: str, tmp_path: Path, env: dict, prog: str = "proc_null", n: int | None = None):
    n = n or min(mpitest.NRANKS[impl], 4)
    lib = str(native.runtime_library(impl))
    cmd = mpitest.launcher(impl, n)
    if impl == "openmpi":
        cmd += ["-x", "LD_PRELOAD", *[a for k in env for a in ("-x", k)]]
    env = {"LD_PRELOAD": lib, **env}
    return mpitest.run(cmd + [str(native.program(impl, f"tests/{prog}"))], cwd=tmp_path, env=env,
                       timeout=120, check=False)


def _result_lines(stdout: str) -> list[str]:
    return sorted(line for line in stdout.splitlines() if " checksum " in line)


def test_bad_values_warn_and_use_defaults(impl, tmp_path):
    plain = mpitest.run(mpitest.launcher(impl, min(mpitest.NRANKS[impl], 4))
                        + [str(native.program(impl, "tests/proc_null"))], timeout=120)
    proc = _run(impl, tmp_path, {"MPISCOPE_SYNC": "banana", "MPISCOPE_MODE": "everything",
                                 "MPISCOPE_MAX_PEERS": "-3", "MPISCOPE_MAX_REGIONS": "12x",
                                 "MPISCOPE_DIR": str(tmp_path)})
    assert proc.returncode == 0, proc.stderr
    assert _result_lines(proc.stdout) == _result_lines(plain.stdout)
    warnings = [l for l in proc.stderr.splitlines() if l.startswith("mpiscope: warning:")]
    assert len(warnings) == 4, proc.stderr           # one line each, rank 0 only
    assert any("MPISCOPE_SYNC=banana" in w and "using 0" in w for w in warnings)
    assert any("MPISCOPE_MODE=everything" in w and "using full" in w for w in warnings)
    assert "Traceback" not in proc.stderr and "Segmentation" not in proc.stderr
    (path,) = tmp_path.glob("*.mpiscope")
    prof = mpiscope.read(str(path))
    s = prof.meta["settings"]
    assert s["MPISCOPE_SYNC"] == 0 and s["MPISCOPE_MODE"] == "full"
    assert s["MPISCOPE_MAX_PEERS"] == 4096 and s["MPISCOPE_MAX_REGIONS"] == 64
    assert prof.mode == "full" and not prof.flags & 4


def test_unwritable_directory_warns_and_keeps_exit_code(impl, tmp_path):
    missing = tmp_path / "no" / "such" / "dir"
    proc = _run(impl, tmp_path, {"MPISCOPE_DIR": str(missing)})
    assert proc.returncode == 0, proc.stderr
    warnings = [l for l in proc.stderr.splitlines() if l.startswith("mpiscope: warning:")]
    assert len(warnings) == 1 and str(missing) in warnings[0], proc.stderr
    assert not list(tmp_path.rglob("*.mpiscope"))


def test_existing_profile_is_never_overwritten(impl, tmp_path):
    env = {"MPISCOPE_DIR": str(tmp_path), "SLURM_JOB_ID": "4242"}
    first = tmp_path / "proc_null.4242.mpiscope"
    first.write_bytes(b"precious")
    for _ in range(2):
        proc = _run(impl, tmp_path, env)
        assert proc.returncode == 0, proc.stderr
    assert first.read_bytes() == b"precious"
    names = sorted(p.name for p in tmp_path.glob("*.mpiscope"))
    assert names == ["proc_null.4242.1.mpiscope", "proc_null.4242.2.mpiscope", "proc_null.4242.mpiscope"]
    assert mpiscope.read(str(tmp_path / "proc_null.4242.2.mpiscope")).meta["job_id"] == "4242"


def test_quiet_prints_nothing(impl, tmp_path):
    loud = _run(impl, tmp_path, {"MPISCOPE_DIR": str(tmp_path)})
    assert "mpiscope: wrote" in loud.stderr
    quiet = _run(impl, tmp_path, {"MPISCOPE_DIR": str(tmp_path), "MPISCOPE_QUIET": "1"})
    assert quiet.returncode == 0
    assert "mpiscope" not in quiet.stderr
    assert len(list(tmp_path.glob("*.mpiscope"))) == 2


def test_sync_setting_records_barrier_time(impl, tmp_path):
    proc = _run(impl, tmp_path, {"MPISCOPE_DIR": str(tmp_path), "MPISCOPE_SYNC": "1"},
                prog="coll_blocking")
    assert proc.returncode == 0, proc.stderr
    (path,) = tmp_path.glob("*.mpiscope")
    prof = mpiscope.read(str(path))
    assert prof.flags & 4
    names = prof.meta["functions"]
    kinds = prof.meta["function_kinds"]
    n = prof.nranks
    sync_calls = {}
    for f in prof.funcs:
        name = names[f["func"]]
        if kinds[f["func"]] == "sync":
            sync_calls[name] = sync_calls.get(name, 0) + int(f["calls"])
    # one timed barrier per blocking collective call, on every rank
    coll_calls = {}
    for f in prof.funcs:
        if kinds[f["func"]] == "coll":
            coll_calls[names[f["func"]] + ":sync"] = coll_calls.get(names[f["func"]] + ":sync", 0) + int(f["calls"])
    assert sync_calls == coll_calls and sync_calls["MPI_Bcast:sync"] == n
    assert (prof.ranks["sync"] > 0).all()
    assert (prof.ranks["mpi"] >= prof.ranks["sync"]).all()
