"""`mpiscope bench` on bad input, failing launchers, partial runs, existing files, and plots."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

import mpitest
from mpiscope.bench import results

RANKS = {"openmpi": 4, "mpich": 2}


def bench(cwd: Path, *args: str, timeout: float = 120):
    return mpitest.run(mpitest.mpiscope_cmd("bench", *args), cwd=cwd, timeout=timeout,
                       check=False)


def assert_one_line_error(proc, *needles: str) -> None:
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("mpiscope: error: "), proc.stderr
    for needle in needles:
        assert needle in lines[0], lines[0]


def test_unknown_kernel(tmp_path):
    proc = bench(tmp_path, "pingpong", "--", "mpirun.openmpi", "-n", "2")
    assert_one_line_error(proc, "unknown kernel 'pingpong'", "p2p")


@pytest.mark.parametrize("size", ["4Q", "-1", "K", "1.5M"])
def test_sizes_that_do_not_parse(tmp_path, size):
    proc = bench(tmp_path, "p2p", "--max-size", size, "--", "mpirun.openmpi", "-n", "2")
    assert_one_line_error(proc, f"size '{size}' does not parse")


def test_min_size_above_max_size(tmp_path):
    proc = bench(tmp_path, "p2p", "--min-size", "8K", "--max-size", "1K", "--",
                 "mpirun.openmpi", "-n", "2")
    assert_one_line_error(proc, "--min-size 8192 is larger than --max-size 1024")


def test_more_pairs_than_ranks_from_the_launcher_line(tmp_path):
    proc = bench(tmp_path, "p2p", "--pairs", "3", "--", "mpirun.openmpi", "-n", "4")
    assert_one_line_error(proc, "--pairs 3 needs 6 ranks", "starts 4")


def test_more_pairs_than_ranks_found_by_the_kernel(impl, tmp_path):
    # The rank count is hidden in a shell wrapper: the kernel itself must refuse.
    launch = " ".join(mpitest.launcher(impl, 2))
    proc = bench(tmp_path, "p2p", "--pairs", "2", "--mpi", impl, "--",
                 "sh", "-c", f'exec {launch} "$@"', "sh")
    assert_one_line_error(proc, "--pairs 2 needs 4 ranks, the run has 2")
    assert list(tmp_path.iterdir()) == []  # nothing measured, nothing written


def test_off_node_pairs_on_one_machine(impl, tmp_path):
    proc = bench(tmp_path, "p2p", "--locality", "off-node", "--", *mpitest.launcher(impl, 2))
    assert_one_line_error(proc, "no off-node pairs: the 2 ranks are on 1 node(s)")
    assert list(tmp_path.iterdir()) == []


def test_zero_pairs_and_zero_timeout(tmp_path):
    assert_one_line_error(bench(tmp_path, "p2p", "--pairs", "0", "--", "mpirun.openmpi", "-n", "2"),
                          "--pairs 0: at least 1 pair is needed")
    assert_one_line_error(bench(tmp_path, "p2p", "--timeout", "0", "--", "mpirun.openmpi", "-n", "2"),
                          "--timeout 0: must be more than 0 seconds")


def test_launcher_not_found(tmp_path):
    proc = bench(tmp_path, "p2p", "--mpi", "openmpi", "--", "no-such-mpirun", "-n", "2")
    assert_one_line_error(proc, "launcher 'no-such-mpirun' not found")


def test_launcher_fails(tmp_path):
    proc = bench(tmp_path, "p2p", "--mpi", "openmpi", "--", "sh", "-c", "echo broken >&2; exit 7")
    assert_one_line_error(proc, "launcher exited with status 7", "broken")
    assert list(tmp_path.iterdir()) == []


def test_no_launcher_and_unknown_mpi(tmp_path):
    assert_one_line_error(bench(tmp_path, "p2p"), "no launcher given")
    assert_one_line_error(bench(tmp_path, "p2p", "--", "sh", "-c", "true"),
                          "cannot tell which MPI 'sh' launches", "--mpi")


def test_ranks_needs_a_rank_flag(tmp_path):
    proc = bench(tmp_path, "startup", "--ranks", "2,4", "--mpi", "openmpi", "--", "mpirun.openmpi")
    assert_one_line_error(proc, "--ranks needs a launcher rank count")
    proc = bench(tmp_path, "startup", "--ranks", "2,x", "--", "mpirun.openmpi", "-n", "2")
    assert_one_line_error(proc, "--ranks '2,x' does not parse")


def test_launcher_dies_after_some_sizes(impl, tmp_path):
    """The launcher is killed after 4 rows: those rows are kept, the result is partial."""
    launch = " ".join(mpitest.launcher(impl, 2))
    fake = ["sh", "-c", f'{launch} "$@" | head -n 5; exit 3', "sh"]
    out = tmp_path / "cut.json"
    proc = bench(tmp_path, "p2p", "--tests", "latency", "--max-size", "1K", "--iters", "20",
                 "--mpi", impl, "-o", str(out), "--", *fake)
    assert_one_line_error(proc, "launcher exited with status 3", f"partial results kept in {out}")
    res = results.load(out)
    assert res["partial"] is True
    assert res["runs"][0]["complete"] is False and res["runs"][0]["exit_code"] == 3
    assert [r["size"] for r in res["rows"]] == [0, 1, 2, 4]  # meta line + 4 rows got through
    # (the launcher may add its last words, e.g. Open MPI's "abort is already in progress")
    assert len(res["errors"]) == 1 and res["errors"][0].startswith("launcher exited with status 3")


def test_timeout_keeps_partial_results(impl, tmp_path):
    out = tmp_path / "slow.json"
    # Sizes up to 4 MiB with 20000 round trips each take about a minute, far longer than
    # the 8 s allowed; the small sizes finish within a second.
    proc = bench(tmp_path, "p2p", "--min-size", "1", "--iters", "20000", "--iters-large", "20000",
                 "--timeout", "8", "-o", str(out), "--", *mpitest.launcher(impl, 2))
    assert_one_line_error(proc, "timed out after 8 s", "partial results kept")
    res = results.load(out)
    assert res["partial"] is True and res["runs"][0]["exit_code"] is None
    assert 0 < len(res["rows"]) < 23


def test_existing_result_is_never_overwritten(impl, tmp_path):
    out = tmp_path / "mine.json"
    out.write_text("precious")
    args = ["collectives", "--ops", "barrier", "--iters", "3", "--skip", "0"]
    launch = mpitest.launcher(impl, 2)
    proc = bench(tmp_path, *args, "-o", str(out), "--", *launch)
    assert_one_line_error(proc, f"{out} exists", "--force")
    assert out.read_text() == "precious"
    # Default names: a second run picks a new name.
    for _ in range(2):
        assert bench(tmp_path, *args, "--", *launch).returncode == 0
    made = sorted(p.name for p in tmp_path.glob(f"bench-collectives-{impl}-*.json"))
    assert len(made) == 2
    # --force replaces.
    assert bench(tmp_path, *args, "-o", str(out), "--force", "--", *launch).returncode == 0
    assert results.load(out)["kernel"] == "collectives"


def test_plot_side_by_side(tmp_path):
    # Two real results (docs/bench's Open MPI and MPICH p2p runs): the plot needs no new run
    # (test_bench_kernels.py runs the kernels; two p2p runs here took 90 s per MPI in CI).
    for name, mpi in (("a", "openmpi"), ("b", "mpich")):
        (tmp_path / f"{name}.json").write_bytes(
            (mpitest.REPO / "docs" / "bench" / f"p2p-{mpi}.json").read_bytes())
    proc = bench(tmp_path, "plot", "a.json", "b.json", "-o", "ab.png")
    assert proc.returncode == 0, proc.stderr
    png = (tmp_path / "ab.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    # Two columns of panels: twice as wide as a single result's figure.
    bench(tmp_path, "plot", "a.json", "-o", "a.png")
    import struct
    width = lambda b: struct.unpack(">I", b[16:20])[0]  # noqa: E731
    assert width(png) == 2 * width((tmp_path / "a.png").read_bytes())
    # Never overwrite an image silently.
    assert_one_line_error(bench(tmp_path, "plot", "a.json", "-o", "ab.png"), "ab.png exists")


@pytest.mark.parametrize("kernel", ["p2p", "collectives"])
def test_plot_titles_stay_in_their_columns(kernel):
    """Two results side by side (docs/bench's Open MPI and MPICH runs): no title runs into
    another or past its own panel (the p2p latency panel's long title did, in both columns)."""
    from itertools import combinations

    from mpiscope import plots
    from mpiscope.bench import plot

    rs = [results.load(mpitest.REPO / "docs" / "bench" / f"{kernel}-{m}.json")
          for m in ("openmpi", "mpich")]
    fig = plots.grid([plot.panels(r) for r in rs], [plot.column_title(r) for r in rs])
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    axes = [ax for ax in fig.axes if ax.get_visible()]
    columns = [t for ax in axes for t in ax.texts]
    assert [t.get_text() for t in columns] == [plot.column_title(r) for r in rs]
    titles = [ax.title for ax in axes if ax.title.get_text()]
    assert len(titles) == len(axes) >= 4
    boxes = [t.get_window_extent(renderer) for t in titles + columns]
    for a, b in combinations(boxes, 2):
        assert not a.overlaps(b), (a, b)
    for ax in axes:
        box, title = ax.get_window_extent(renderer), ax.title.get_window_extent(renderer)
        assert box.x0 - 1 <= title.x0 and title.x1 <= box.x1 + 1, ax.title.get_text()
    assert all(0 <= b.x0 and b.x1 <= fig.bbox.x1 and b.y1 <= fig.bbox.y1 for b in boxes)


def test_plot_bad_input(tmp_path):
    (tmp_path / "junk.json").write_text("{not json")
    (tmp_path / "other.json").write_text(json.dumps({"hello": 1}))
    assert_one_line_error(bench(tmp_path, "plot", "missing.json", "-o", "x.png"),
                          "missing.json: no such file")
    assert_one_line_error(bench(tmp_path, "plot", "junk.json", "-o", "x.png"), "not a JSON file")
    assert_one_line_error(bench(tmp_path, "plot", "other.json", "-o", "x.png"),
                          "not an mpiscope bench result")


def test_plot_refuses_mixed_kernels(tmp_path):
    a = results.new_result("p2p", "openmpi", ["mpirun"], {}, {})
    b = results.new_result("io", "openmpi", ["mpirun"], {}, {})
    a["rows"] = [{"table": "p2p", "nranks": 2, "locality": "on-node", "pairs": 1, "size": 1,
                  "latency_us_min": 1, "latency_us_avg": 1, "latency_us_max": 1,
                  "bandwidth_MBps_min": 1, "bandwidth_MBps_avg": 1, "bandwidth_MBps_max": 1}]
    results.save(a, tmp_path / "a.json")
    results.save(b, tmp_path / "b.json")
    assert_one_line_error(bench(tmp_path, "plot", "a.json", "b.json", "-o", "x.png"),
                          "different kernels")
    assert_one_line_error(bench(tmp_path, "plot", "b.json", "-o", "x.png"), "no rows")


def test_list_names_every_kernel(tmp_path):
    proc = bench(tmp_path, "list")
    assert proc.returncode == 0
    for name in ("p2p", "collectives", "jitter", "halo", "triad", "mpimem", "io", "startup"):
        assert name in proc.stdout


def test_io_dir_must_exist(tmp_path):
    proc = bench(tmp_path, "io", "--dir", str(tmp_path / "nope"), "--",
                 *mpitest.launcher("openmpi", 2))
    assert_one_line_error(proc, "nope: not a directory")


def test_unwritable_result_directory(impl, tmp_path):
    ro = tmp_path / "ro"
    ro.mkdir()
    os.chmod(ro, stat.S_IRUSR | stat.S_IXUSR)
    try:
        if os.access(ro, os.W_OK):  # root ignores permissions: use a path under a file instead
            target = tmp_path / "afile"
            target.write_text("")
            out = target / "r.json"
        else:
            out = ro / "r.json"
        proc = bench(tmp_path, "collectives", "--ops", "barrier", "--iters", "2", "-o", str(out),
                     "--", *mpitest.launcher(impl, 2))
        assert_one_line_error(proc, "cannot write")
    finally:
        os.chmod(ro, stat.S_IRWXU)
