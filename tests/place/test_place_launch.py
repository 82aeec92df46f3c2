"""apply_order really puts rank r where the order says (host and core), on each MPI."""

import socket

import pytest

import mpitest
from mpiscope import native
from mpiscope.errors import UserError
from mpiscope.place.output.launchers import apply_order


def whereami(impl, argv, tmp_path):
    proc = mpitest.run(argv, cwd=tmp_path, timeout=120)
    seen = {}
    for line in proc.stdout.splitlines():
        if line.startswith("whereami "):
            _, rank, host, cpu, allowed = line.split()
            seen[int(rank)] = (host, int(cpu), allowed)
    return seen


def launch_cmd(impl, n):
    base = mpitest.launcher(impl, n)
    return base + [str(native.program(impl, "tests/place_whereami"))]


def test_reversed_pair_lands_reversed(impl, tmp_path):
    order = tmp_path / "MPICH_RANK_ORDER"
    order.write_text("# two virtual nodes of one rank\n1\n0\n")
    argv, env = apply_order(launch_cmd(impl, 2), str(order), impl, directory=str(tmp_path))
    seen = whereami(impl, argv, tmp_path)
    here = socket.gethostname()
    # Line j is virtual node j = core j: rank 1 on core 0, rank 0 on core 1.
    assert seen == {1: (here, 0, "0"), 0: (here, 1, "1")}


def test_grid_order_nodes_land_on_their_core(impl, nranks, tmp_path):
    # 4x4 grid, 2x4 cells: two nodes of 8 (Open MPI) / a 1x2 grid (MPICH).
    args = ["-R", "-c", "2,4", "-g", "4,4"] if nranks == 16 else ["-R", "-c", "1,1", "-g", "1,2"]
    text = mpitest.run(mpitest.mpiscope_cmd("place", "grid", *args)).stdout
    order = tmp_path / "order.txt"
    order.write_text(text)
    rows = [[int(x) for x in r.split(",")] for r in text.splitlines() if not r.startswith("#")]
    argv, _ = apply_order(launch_cmd(impl, nranks), str(order), impl,
                          directory=str(tmp_path))
    seen = whereami(impl, argv, tmp_path)
    assert len(seen) == nranks
    for node, ranks in enumerate(rows):
        for r in ranks:
            assert seen[r][1] == node % 2 and seen[r][2] == str(node % 2), (r, seen[r])


def test_rankfile_and_machine_file_inputs(impl, tmp_path):
    here = socket.gethostname()
    if impl == "openmpi":
        text = f"rank 0={here} slot=1\nrank 1=+n0 slot=0\n"
    else:
        text = f"{here}:2\n"
    order = tmp_path / "order"
    order.write_text(text)
    argv, _ = apply_order(launch_cmd(impl, 2), str(order), impl, directory=str(tmp_path))
    seen = whereami(impl, argv, tmp_path)
    if impl == "openmpi":
        assert seen[0][1:] == (1, "1") and seen[1][1:] == (0, "0")
    else:  # local ranks bound to cores in machine-file order
        assert seen[0][1:] == (0, "0") and seen[1][1:] == (1, "1")


def test_cray_order_on_more_slots_than_cores(tmp_path):
    """--host HERE:4 on a machine with fewer cores: slots past the cores wrap onto
    them (before: slot=2/3 in the rankfile, and mpirun exited 1 without a word)."""
    ncores = __import__("os").cpu_count()
    here = socket.gethostname()
    order = tmp_path / "MPICH_RANK_ORDER"
    order.write_text("0,1\n2,3\n")
    whereami = str(native.program("openmpi", "tests/place_whereami"))
    proc = mpitest.run(mpitest.mpiscope_cmd(
        "run", "--dir", str(tmp_path), "--order", str(order), "--", "mpirun.openmpi",
        "--host", f"{here}:{ncores + 2}", "--oversubscribe", "-n", "4", whereami),
        cwd=tmp_path, timeout=120)
    seen = {int(ln.split()[1]): int(ln.split()[3]) for ln in proc.stdout.splitlines()
            if ln.startswith("whereami ")}
    # cells of HERE are slots 0..ncores+1 in order; slot s is core s mod ncores
    assert seen == {r: r % ncores for r in range(4)}, (seen, proc.stderr)


def test_bad_orders(tmp_path):
    bad = tmp_path / "bad"
    bad.write_text("0,0,1\n")
    with pytest.raises(UserError, match="not 0..2"):
        apply_order(["mpirun", "-n", "3", "./a"], str(bad), "openmpi")
    good = tmp_path / "good"
    good.write_text("0,1,2,3\n")
    with pytest.raises(UserError, match="lists 4 ranks but the launch starts 8"):
        apply_order(["mpirun", "-n", "8", "./a"], str(good), "openmpi")
    with pytest.raises(UserError, match="only 2 slots"):
        apply_order(["mpirun", "--host", "a:1,b:1", "-n", "4", "./a"], str(good), "openmpi")
    with pytest.raises(UserError, match="cannot read"):
        apply_order(["mpirun", "-n", "4", "./a"], str(tmp_path / "missing"), "openmpi")


def test_multi_host_rewrites_without_running(tmp_path):
    # Not run (one machine here): the rewritten commands name the right hosts.
    order = tmp_path / "o"
    order.write_text("0,2\n1,3\n")
    argv, _ = apply_order(["mpirun", "--host", "a:2,b:2", "-n", "4", "./app"], str(order),
                          "openmpi", directory=str(tmp_path))
    assert argv[1] == "--rankfile" and "--host" not in argv
    rf = open(argv[2]).read().splitlines()
    assert rf == ["rank 0=a slot=0", "rank 1=b slot=0", "rank 2=a slot=1", "rank 3=b slot=1"]
    argv, _ = apply_order(["mpiexec", "-hosts", "a:2,b:2", "-n", "4", "./app"], str(order),
                          "mpich", directory=str(tmp_path))
    assert open(argv[argv.index("-f") + 1]).read() == "a:1\nb:1\na:1\nb:1\n"
    slurm = tmp_path / "s"
    slurm.write_text("a\nb\na\nb\n")
    argv, env = apply_order(["srun", "-n", "4", "./app"], str(slurm), "mpich",
                            directory=str(tmp_path))
    assert "--distribution=arbitrary" in argv and open(env["SLURM_HOSTFILE"]).read() == "a\nb\na\nb\n"


def test_mpiscope_run_order(impl, tmp_path):
    """The whole route: mpiscope run --order FILE -- mpirun ... (runtime preloaded)."""
    order = tmp_path / "MPICH_RANK_ORDER"
    order.write_text("1\n0\n")
    proc = mpitest.run(mpitest.mpiscope_cmd("run", "--order", str(order), "--",
                                            *launch_cmd(impl, 2)), cwd=tmp_path, timeout=120)
    seen = {int(l.split()[1]): int(l.split()[3]) for l in proc.stdout.splitlines()
            if l.startswith("whereami ")}
    assert seen == {0: 1, 1: 0}
    assert list(tmp_path.glob("*.mpiscope"))
