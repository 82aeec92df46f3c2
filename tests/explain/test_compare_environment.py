"""`mpiscope compare` shows what changed in the environment (issue 29 item 9): the eager
limit a diagnosis told the user to raise, the binding, the threads, the launch; on real runs
(tests/envruns.py), in the dict, the terminal and the HTML page."""

from __future__ import annotations

import explainruns as er
import envruns
import mpitest
from mpiscope.compare import compare
from mpiscope.compare.environment import change_lines
from mpiscope.report import build_report


def cmp(pa, pb):
    return compare(pa, build_report(pa), pb, build_report(pb))


def test_the_variable_a_fix_changed_is_shown(tmp_path):
    limit = "OMPI_MCA_btl_vader_eager_limit"
    a, pa = er.run_program("openmpi", 2, ("pingpong", "6000", "200"))
    b, pb = er.run_program("openmpi", 2, ("pingpong", "6000", "200"), env=((limit, "9216"),))
    env = cmp(a, b)["environment"]
    assert env["available"] and env["variables"] == [{"name": limit, "a": None, "b": "9216"}]
    assert env["launch"] is None and env["binding"] == []  # the same launch and binding
    text = mpitest.run(mpitest.mpiscope_cmd("compare", pa, pb)).stdout
    assert "Environment changed, A -> B:" in text
    assert f"  - {limit}: (unset) -> 9216" in text
    out = tmp_path / "c.html"
    mpitest.run(mpitest.mpiscope_cmd("compare", pa, pb, "--html", "-o", str(out)))
    assert f"{limit}: (unset) -&gt; 9216" in out.read_text()


def test_binding_threads_and_the_launch_are_shown():
    a, _ = envruns.unbound("openmpi")
    b, _ = envruns.bound("openmpi", threads=2)
    env = cmp(a, b)["environment"]
    what = {x["what"]: (x["a"], x["b"]) for x in env["binding"]}
    assert what["unbound ranks"] == (2, 0)
    assert what["OpenMP threads per rank (max)"] == (1, 2)
    assert what["CPU lists of the ranks' masks"] == ("0-1", "0 1")
    assert {v["name"]: (v["a"], v["b"]) for v in env["variables"]}["OMP_NUM_THREADS"] == ("1", "2")
    assert "--bind-to none" in env["launch"]["a"] and "--bind-to core" in env["launch"]["b"]
    lines = change_lines(env)
    assert lines[0].startswith("launch: mpirun.openmpi --bind-to none -n 2 ")
    assert "unbound ranks: 2 -> 0" in lines
