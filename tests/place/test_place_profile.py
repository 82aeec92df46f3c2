"""from-profile and aggregators on profiles written to disk and read back."""

import subprocess

import numpy as np

import mpitest
from mpiscope import format as fmt
from mpiscope.place import evaluate, patterns
from mpiscope.place.orders import search
from mpiscope.place.output.writers import read_order_file
from mpiscope.testing import default_meta, records, write_profile


def place(*args, cwd=None):
    return subprocess.run(mpitest.mpiscope_cmd("place", *args), capture_output=True, text=True,
                          env=mpitest.mpi_env(), timeout=120, cwd=cwd)


def scrambled_stencil_profile(path, grid=(16, 16), seed=3, msg_bytes=800):
    st = patterns.make_stencil(grid, 5, False)
    src, dst = patterns.edge_list(st)
    perm = np.random.default_rng(seed).permutation(st.nranks)  # app rank at grid point g
    peers = np.zeros(len(src), fmt.PEER)
    peers["rank"], peers["peer"] = perm[src], perm[dst]
    peers["msgs"], peers["bytes"] = 10, 10 * msg_bytes
    write_profile(path, nranks=st.nranks, peers=peers)
    return st, perm


def test_from_profile_recovers_locality(tmp_path):
    path = tmp_path / "scrambled.mpiscope"
    st, perm = scrambled_stencil_profile(path)
    proc = place("from-profile", str(path), "-n", "16", "-o", str(tmp_path / "order"))
    assert proc.returncode == 0, proc.stderr
    order = read_order_file(str(tmp_path / "order")).sequence()
    # Off-node messages of the found order, in grid terms.
    node_of_app_rank = evaluate.node_of_rank(order, 16)
    node_of_grid_point = node_of_app_rank[perm]
    found = evaluate.traffic_of_stencil(node_of_grid_point, st).off_msgs
    best, _, bound = search.search(st, 16)
    smp = evaluate.traffic_of_stencil(np.arange(st.nranks)[perm] // 16, st).off_msgs
    assert bound == best.traffic.off_msgs == 192
    assert found <= 1.25 * bound < smp
    assert "partitioned order" in proc.stderr and "SMP order" in proc.stderr


def test_from_profile_errors(tmp_path):
    empty = tmp_path / "empty.mpiscope"
    write_profile(empty, nranks=4)
    proc = place("from-profile", str(empty), "-n", "2")
    assert proc.returncode == 2 and "no point-to-point traffic" in proc.stderr
    path = tmp_path / "p.mpiscope"
    scrambled_stencil_profile(path, grid=(4, 4))
    proc = place("from-profile", str(path), "-n", "3")
    assert proc.returncode == 2 and "does not divide" in proc.stderr
    (tmp_path / "exists").write_text("keep me")
    proc = place("from-profile", str(path), "-n", "4", "-o", str(tmp_path / "exists"))
    assert proc.returncode == 2 and "not overwriting" in proc.stderr
    assert (tmp_path / "exists").read_text() == "keep me"
    proc = place("from-profile", str(tmp_path / "missing.mpiscope"), "-n", "4")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr


def io_profile(path, nranks, node, cb_nodes):
    functions = ["MPI_File_write_at_all", "MPI_Send"]
    ranks = np.zeros(nranks, fmt.RANK)
    ranks["rank"] = np.arange(nranks)
    ranks["node"] = node
    funcs = records(fmt.FUNC, [dict(rank=r, func=0, calls=1, bytes_sent=4096)
                               for r in range(nranks)])
    meta = default_meta(functions, io_files=[{"name": "wrfout", "cb_nodes": cb_nodes,
                                              "cb_config_list": "*:1"}])
    write_profile(path, nranks=nranks, meta=meta, ranks=ranks, funcs=funcs)


def test_aggregators_spread_and_crowded(tmp_path):
    path = tmp_path / "io.mpiscope"
    io_profile(path, 32, np.arange(32) // 8, 4)
    proc = place("aggregators", str(path), "--json")
    assert proc.returncode == 0, proc.stderr
    import json
    rep = json.loads(proc.stdout)[0]
    assert rep["aggregators"] == [0, 8, 16, 24] and not rep["crowded"]
    assert rep["aggregator_io_bytes"] == [4096] * 4 and rep["collective_io_bytes"] == 32 * 4096
    # The WRF case (seed 000): after a reorder that puts ranks 0, 8, 16, 24
    # together, stride-chosen aggregators share one node; ROMIO's stay apart.
    order = tmp_path / "reorder"
    order.write_text("\n".join(",".join(str(r + 8 * k) for r in (i, i + 1) for k in range(4))
                               for i in range(0, 8, 2)) + "\n")
    proc = place("aggregators", str(path), "--rule", "stride", "--ppn", "8",
                 "--order", str(order), "--json")
    rep = json.loads(proc.stdout)[0]
    assert rep["aggregators"] == [0, 8, 16, 24] and rep["nodes"] == [0, 0, 0, 0]
    assert rep["crowded"]
    proc = place("aggregators", str(path), "--ppn", "8", "--order", str(order), "--json")
    rep = json.loads(proc.stdout)[0]
    assert rep["distinct_nodes"] == 4 and not rep["crowded"]
    proc = place("aggregators", str(path), "--rule", "stride", "--ppn", "8",
                 "--order", str(order))
    assert "warning" in proc.stdout

def test_real_stencil_run_from_profile(tmp_path):
    """The stencil mini-app, scrambled, profiled on Open MPI: from-profile finds 2x2 blocks."""
    impl = "openmpi"
    app = mpitest.native.program(impl, "examples/stencil")
    perm = np.random.default_rng(5).permutation(16)
    (tmp_path / "scramble").write_text(",".join(map(str, perm)) + "\n")
    mpitest.run(mpitest.mpiscope_cmd("run", "--", *mpitest.launcher(impl, 16), str(app),
                                     "--grid", "64x64", "--procs", "4x4", "--steps", "5",
                                     "--rank-order", "scramble"), cwd=tmp_path, timeout=240)
    prof = next(tmp_path.glob("*.mpiscope"))
    proc = place("from-profile", str(prof), "-n", "4", "--weight", "msgs",
                 "-o", str(tmp_path / "order"))
    assert proc.returncode == 0, proc.stderr
    order = read_order_file(str(tmp_path / "order")).sequence()
    node = evaluate.node_of_rank(order, 4)
    from mpiscope import read
    p = read(prof)
    off = evaluate.traffic_of_pairs(node, p.peers["rank"].astype(int), p.peers["peer"].astype(int),
                                    p.peers["msgs"].astype(int), p.peers["bytes"].astype(int))
    smp = evaluate.traffic_of_pairs(np.arange(16) // 4, p.peers["rank"].astype(int),
                                    p.peers["peer"].astype(int), p.peers["msgs"].astype(int),
                                    p.peers["bytes"].astype(int))
    # 4x4 grid, 2x2 blocks: 16 of 48 neighbour pairs cross nodes (the optimum).
    per_pair = p.peers["msgs"].max()
    assert off.off_msgs == 16 * per_pair < smp.off_msgs


def test_real_mpiio_run_aggregators(impl, nranks, tmp_path):
    """The stencil mini-app writing with MPI-IO: the file and its hints reach the report."""
    app = mpitest.native.program(impl, "examples/stencil")
    mpitest.run(mpitest.mpiscope_cmd("run", "--", *mpitest.launcher(impl, nranks), str(app),
                                     "--grid", "32x32", "--steps", "4", "--io", "mpiio",
                                     "--io-every", "2", "--io-file", "field.dat"),
                cwd=tmp_path, timeout=240)
    prof = next(tmp_path.glob("*.mpiscope"))
    ppn = nranks // 2
    import json
    proc = place("aggregators", str(prof), "--ppn", str(ppn), "--json")
    assert proc.returncode == 0, proc.stderr
    rep = [f for f in json.loads(proc.stdout) if f["name"].endswith("field.dat")]
    assert len(rep) == 1
    f = rep[0]
    assert f["ranks_with_collective_io"] == nranks and f["collective_io_bytes"] > 0
    hinted = f["cb_config_list"] is not None
    if impl == "mpich":  # ROMIO reports its hints: one aggregator per node
        assert hinted and f["cb_nodes"] >= 1
    assert f["distinct_nodes"] == len(set(f["nodes"])) and not f["crowded"]
