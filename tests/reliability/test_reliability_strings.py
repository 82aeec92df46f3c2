"""Hostile strings: a program name and arguments (also used as region names,
tests/programs/named_regions.c) with quotes, <script>, a newline, 300 bytes
and bytes that are not UTF-8 survive into the profile and come out escaped in
the terminal report, valid in JSON, quoted in CSV and inert in HTML."""

from __future__ import annotations

import csv
import json
import os
import subprocess

import mpitest
from mpiscope import read

HERE = mpitest.REPO / "tests" / "programs"
ARGS = [b"q'\"", b"<script>alert(1)</script>", b"new\nline", b"x" * 300, b"bad\xff\xfeutf"]


def _cli(*args):
    return subprocess.run(mpitest.mpiscope_cmd(*args), env=mpitest.mpi_env(),
                          capture_output=True, timeout=300)


def test_hostile_names_survive_and_come_out_escaped(impl, tmp_path):
    exe = os.path.join(os.fsencode(tmp_path), b"ev'il \"<script>x\xff")
    subprocess.run([f"mpicc.{impl}", "-I", str(HERE), str(HERE / "named_regions.c"), "-o", exe],
                   check=True)
    n = mpitest.NRANKS[impl]
    proc = subprocess.run(mpitest.mpiscope_cmd("run", "--mpi", impl, "--dir", str(tmp_path), "--")
                          + [os.fsencode(a) for a in mpitest.launcher(impl, n)] + [exe, *ARGS],
                          env=mpitest.mpi_env(), capture_output=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    (path,) = tmp_path.glob("*.mpiscope")
    prof = read(path)
    argv = prof.meta["argv"]
    assert argv[1:5] == [a.decode() for a in ARGS[:4]]  # UTF-8 ones exactly
    assert argv[5].startswith("bad") and argv[5].endswith("utf")  # the others as text
    names = set(prof.region_names.values())
    assert {"q'\"", "<script>alert(1)</script>"} <= names
    assert any(nm.startswith("x" * 60) for nm in names)
    assert not any("\n" in nm for nm in names)

    text = _cli("report", str(path))
    assert text.returncode == 0, text.stderr
    out = text.stdout.decode()
    assert "'new\\nline'" in out.splitlines()[0]  # escaped, not a forged line
    assert not any(line.startswith("line") for line in out.splitlines())

    js = _cli("report", "--json", str(path))
    rep = json.loads(js.stdout)
    assert rep["profile"]["argv"] == argv

    csv_out = tmp_path / "rows.csv"
    exp = _cli("export", str(path), "-f", "csv", "-o", str(csv_out), "--force")
    assert exp.returncode == 0, exp.stderr
    with open(csv_out, newline="") as f:
        cells = {c for row in csv.reader(f) for c in row}
    assert {"q'\"", "<script>alert(1)</script>"} <= cells

    page = tmp_path / "page.html"
    html = _cli("html", str(path), "-o", str(page), "--force")
    assert html.returncode == 0, html.stderr
    body = page.read_text(errors="replace")
    assert "<script>alert(1)</script>" not in body
    assert "alert(1)" in body  # it is there, escaped


MARKUP_EXE = b"x[bold red]EVIL\x1b[31m:smile:q'\"<script>"
MARKUP_ARGS = [b"[bold red]R", b":smile:", b"<b>tag</b>"]


def test_markup_and_escapes_print_literally(impl, tmp_path):
    """Issue 27 item 13: a program named with rich markup, an ANSI escape, an emoji code,
    quotes and <script>, with regions named with markup: every command prints each
    character as it is (no markup applied, no escape sent to the terminal, no emoji)."""
    exe = os.path.join(os.fsencode(tmp_path), MARKUP_EXE)
    subprocess.run([f"mpicc.{impl}", "-I", str(HERE), str(HERE / "named_regions.c"), "-o", exe],
                   check=True)
    n = min(2, mpitest.NRANKS[impl])
    proc = subprocess.run(mpitest.mpiscope_cmd("run", "--mpi", impl, "--dir", str(tmp_path), "--")
                          + [os.fsencode(a) for a in mpitest.launcher(impl, n)] + [exe, *MARKUP_ARGS],
                          env=mpitest.mpi_env(), capture_output=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    (path,) = tmp_path.glob("*.mpiscope")
    assert read(path).meta["program"].endswith(MARKUP_EXE.decode())

    outputs = {}
    for cmd in (["report", str(path)], ["report", "--by-comm", str(path)],
                ["diagnose", str(path)], ["compare", str(path), str(path)]):
        got = _cli(*cmd)
        assert got.returncode == 0, (cmd, got.stderr)
        outputs[cmd[0] + cmd[1]] = got.stdout.decode()
    for name, out in outputs.items():
        assert "\x1b" not in out, name                      # no escape reaches the terminal
        assert "x[bold red]EVIL\\x1b[31m:smile:" in out, (name, out[:600])
        assert "\U0001f604" not in out, name                 # :smile: stays text
    report = outputs["report" + str(path)]
    for region in ("'[bold red]R'", "':smile:'", "'<b>tag</b>'"):
        assert region in report, region

    # a user error naming such a path: one line, the characters as they are
    missing = os.path.join(os.fsencode(tmp_path), b"no[bold]such\x1b[2J.mpiscope")
    err = subprocess.run(mpitest.mpiscope_cmd("report") + [missing], env=mpitest.mpi_env(),
                         capture_output=True, timeout=60)
    assert err.returncode == 2 and b"\x1b" not in err.stderr
    assert b"no[bold]such\\x1b[2J" in err.stderr and len(err.stderr.splitlines()) == 1

    page = tmp_path / "page.html"
    html = _cli("html", str(path), "-o", str(page), "--force")
    assert html.returncode == 0 and b"\x1b" not in html.stdout, html.stderr
    body = page.read_text(errors="replace")
    assert "\x1b" not in body and "<script>" not in body.split("EVIL", 1)[-1][:200]
