"""`place grid` writes every launcher's format (--format, --hosts, -o FILE) like the
other order-writing commands; a descending range in an order file is named."""

import pytest

from mpiscope.errors import UserError
from mpiscope.place.output.writers import read_order_file
from test_place_cli import place, rows


def test_grid_formats_match_the_cray_nodes(tmp_path):
    args = ["-R", "-c", "2,3", "-g", "5,6"]  # 5 rows: regions of unequal cells
    cray = [[int(x) for x in r.split(",")] for r in rows(place("grid", *args).stdout)]
    hosts = [f"n{j}" for j in range(len(cray))]
    for fmt in ("openmpi", "slurm", "hydra"):
        out = tmp_path / f"order.{fmt}"
        proc = place("grid", *args, "--format", fmt, "--hosts", ",".join(hosts), "-o", str(out))
        assert proc.returncode == 0 and proc.stdout == "", proc.stderr
        lines = proc.stderr.strip().splitlines()
        assert lines.pop(0) == f"mpiscope: wrote {out}"
        if fmt == "hydra":  # cells of 2x3 rows: no host's ranks are consecutive (hydra splits it)
            assert lines.pop(0).startswith("mpiscope: warning: the order gives n0, n1, n2 and ")
        assert lines == []
        back = read_order_file(str(out))
        assert back.fmt == fmt
        # Every rank on the host of the cray line (node) that lists it, in line order.
        for node, line in enumerate(cray):
            assert [back.host[r] for r in line] == [hosts[node]] * len(line)
        if fmt == "openmpi":
            assert [back.slot[r] for r in cray[1]] == list(range(len(cray[1])))
        again = place("grid", *args, "--format", fmt, "--hosts", ",".join(hosts), "-o", str(out))
        assert again.returncode == 2 and again.stderr.strip() == \
            f"mpiscope: error: {out} exists; not overwriting it"
    # Cray format to a file is exactly what stdout shows; no hosts needed for openmpi (+nK).
    out = tmp_path / "MPICH_RANK_ORDER"
    assert place("grid", *args, "-o", str(out)).returncode == 0
    assert out.read_text() == place("grid", *args).stdout
    text = place("grid", "-R", "-c", "2", "-g", "2,2", "--format", "openmpi").stdout
    assert rows(text) == ["rank 0=+n0 slot=0", "rank 1=+n0 slot=1", "rank 2=+n1 slot=0",
                          "rank 3=+n1 slot=1"]
    bad = place("grid", "-R", "-c", "2", "-g", "2,2", "--format", "slurm")
    assert bad.returncode == 2 and bad.stderr.strip() == \
        "mpiscope: error: --format slurm needs the node host names: --hosts h1,h2,..."


def test_descending_range_is_named(tmp_path):
    order = tmp_path / "MPICH_RANK_ORDER"
    order.write_text("3-0\n")
    with pytest.raises(UserError, match=r"the range 3-0 is descending; list the ranks \(3,2,1,0\)"):
        read_order_file(str(order))
    proc = place("evaluate", "-n", "2", "--grid", "2,2", "--order", str(order))
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert proc.stderr.strip().startswith("mpiscope: error: ") and "descending" in proc.stderr
    order.write_text("0-1\n3-2\n")
    with pytest.raises(UserError, match="the range 3-2 is descending"):
        read_order_file(str(order))
    order.write_text("0-1\n2,3\n")
    assert read_order_file(str(order)).lines == [[0, 1], [2, 3]]
