"""`mpiscope place method / evaluate / auto`: exact outputs and one-line errors."""

import json
import subprocess

import mpitest
from mpiscope.place.output.writers import read_order_file


def place(*args, cwd=None):
    return subprocess.run(mpitest.mpiscope_cmd("place", *args), capture_output=True, text=True,
                          env=mpitest.mpi_env(), timeout=120, cwd=cwd)


def rows(text):
    return [r for r in text.splitlines() if not r.startswith("#")]


def test_methods_exact():
    assert rows(place("method", "0", "--ranks", "8", "-n", "2").stdout) == \
        ["0,4", "1,5", "2,6", "3,7"]
    assert rows(place("method", "1", "--ranks", "8", "-n", "2").stdout) == \
        ["0,1", "2,3", "4,5", "6,7"]
    # Folded: pass 0 over nodes 0..3, pass 1 back over 3..0.
    assert rows(place("method", "2", "--ranks", "8", "-n", "2").stdout) == \
        ["0,7", "1,6", "2,5", "3,4"]


def test_method_formats(tmp_path):
    out = place("method", "0", "--ranks", "4", "-n", "2", "--format", "hydra",
                "--hosts", "a,b").stdout
    assert rows(out) == ["a:1", "b:1", "a:1", "b:1"]
    out = place("method", "1", "--ranks", "4", "-n", "2", "--format", "slurm",
                "--hosts", "a,b").stdout
    assert rows(out) == ["a", "a", "b", "b"]
    custom = tmp_path / "c"
    custom.write_text("3,1\n0,2\n")
    out = place("method", "3", "--file", str(custom), "-n", "2", "--format", "openmpi").stdout
    assert rows(out) == ["rank 0=+n1 slot=0", "rank 1=+n0 slot=1", "rank 2=+n1 slot=1",
                         "rank 3=+n0 slot=0"]


def test_evaluate_json_by_hand(tmp_path):
    order = tmp_path / "o"
    order.write_text(place("grid", "-R", "-c", "2,2", "-g", "4,4").stdout)
    proc = place("evaluate", "-n", "4", "--grid", "4,4", "--stencil", "5", "--bytes", "8",
                 "--order", str(order), "--json")
    res = json.loads(proc.stdout)
    assert res["traffic"]["off_msgs"] == 16 and res["traffic"]["on_msgs"] == 32
    assert res["traffic"]["off_bytes"] == 128 and res["bound_off_msgs"] == 16
    smp = json.loads(place("evaluate", "-n", "4", "--grid", "4,4", "--json").stdout)
    assert smp["traffic"]["off_msgs"] == 24


def test_evaluate_names_the_bound_that_proves_it():
    # 16x16 9-point in 2 nodes: only the column bound sees the straight cut
    proc = place("evaluate", "-n", "128", "--grid", "16,16", "--stencil", "9", "--method", "1")
    assert proc.returncode == 0, proc.stderr
    assert "lower bound: off-node >= 92 msgs" in proc.stdout
    assert "from the column bound" in proc.stdout
    res = json.loads(place("evaluate", "-n", "16", "--grid", "16,16", "--stencil", "5",
                           "--json").stdout)
    assert res["bound_from"] == "per-node edge count" and res["bound_off_msgs"] == 192


def test_auto_writes_best_order(tmp_path):
    proc = place("auto", "--grid", "32,32", "--stencil", "7", "-n", "16")
    assert proc.returncode == 2 and "3-D grid" in proc.stderr
    out = tmp_path / "order"
    proc = place("auto", "--grid", "32,32", "--stencil", "5", "-n", "16", "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    assert "+0.0% over bound" in proc.stderr and "SMP (method 1)" in proc.stderr
    seq = read_order_file(str(out)).sequence()
    assert sorted(seq.tolist()) == list(range(1024))
    proc = place("auto", "--grid", "32,32", "--stencil", "5", "-n", "16", "-o", str(out))
    assert proc.returncode == 2 and "not overwriting" in proc.stderr


def test_bad_input_errors(tmp_path):
    bad = tmp_path / "bad"
    bad.write_text("hello world\n")
    for args, needle in [
        (["evaluate", "-n", "3", "--grid", "4,4"], "does not divide"),
        (["evaluate", "-n", "4", "--grid", "4,4", "--order", str(bad)], "not a rank order"),
        (["evaluate", "-n", "4", "--grid", "4,4", "--stencil", "6"], "unknown stencil"),
        (["method", "1", "--ranks", "8", "-n", "2", "--format", "pbs"], "unknown format"),
        (["method", "1", "--ranks", "8", "-n", "2", "--format", "slurm"], "--hosts"),
        (["method", "4", "--ranks", "8", "-n", "2"], "0, 1, 2 or 3"),
    ]:
        proc = place(*args)
        assert proc.returncode == 2, args
        assert needle in proc.stderr and proc.stderr.count("\n") == 1, (args, proc.stderr)


def test_every_format_reads_back_to_the_same_order(tmp_path):
    text = place("grid", "-R", "-c", "2,2", "-g", "4,4").stdout
    want = [int(x) for r in rows(text) for x in r.split(",")]
    src = tmp_path / "cray"
    src.write_text(text)
    for fmt in ("cray", "openmpi", "slurm", "hydra"):
        out = place("method", "3", "--file", str(src), "-n", "4", "--format", fmt,
                    "--hosts", "a,b,c,d").stdout
        (tmp_path / fmt).write_text(out)
        seq = read_order_file(str(tmp_path / fmt)).sequence().tolist()
        if fmt in ("cray", "openmpi"):
            assert seq == want, fmt
        else:  # host files keep the node of each rank, not the order inside a node
            assert [sorted(seq[i:i + 4]) for i in range(0, 16, 4)] == \
                [sorted(want[i:i + 4]) for i in range(0, 16, 4)], fmt


def test_too_large_grid_is_a_user_error():
    for args in (["grid", "-R", "-c", "2,2", "-g", "100000,100000"],
                 ["auto", "--grid", "100000,100000", "-n", "4"]):
        proc = place(*args)
        assert proc.returncode == 2 and "more than mpiscope place handles" in proc.stderr
