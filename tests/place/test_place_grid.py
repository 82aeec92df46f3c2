"""`mpiscope place grid` reproduces grid_order's output exactly (seed 000 and NERSC docs)."""

import subprocess

import numpy as np
import pytest

import mpitest
from mpiscope.place.orders import curves, grid_order as go


def place(*args):
    return subprocess.run(mpitest.mpiscope_cmd("place", *args), capture_output=True, text=True,
                          env=mpitest.mpi_env(), timeout=60)


SEED_4x6_C = """# grid_order -C -Z -c 1,6 -g 4,6
# Region 0: 0,0 (0..23)
0,4,8,12,16,20
1,5,9,13,17,21
2,6,10,14,18,22
3,7,11,15,19,23
"""
SEED_4x6_R = """# grid_order -R -Z -c 1,6 -g 4,6
# Region 0: 0,0 (0..23)
0,1,2,3,4,5
6,7,8,9,10,11
12,13,14,15,16,17
18,19,20,21,22,23
"""


@pytest.mark.parametrize("args,expected", [
    (["-C", "-Z", "-c", "1,6", "-g", "4,6"], SEED_4x6_C),
    (["-R", "-Z", "-c", "1,6", "-g", "4,6"], SEED_4x6_R),
])
def test_seed_full_outputs(args, expected):
    proc = place("grid", *args)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == expected


def lines(args):
    proc = place("grid", *args)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.splitlines()


def test_seed_32x32_2x8():
    out = lines(["-C", "-Z", "-c", "2,8", "-g", "32,32"])
    assert out[:5] == ["# grid_order -C -Z -c 2,8 -g 32,32", "# Region 0: 0,0 (0..1023)",
                       "0,1,32,33,64,65,96,97,128,129,160,161,192,193,224,225",
                       "2,3,34,35,66,67,98,99,130,131,162,163,194,195,226,227",
                       "4,5,36,37,68,69,100,101,132,133,164,165,196,197,228,229"]
    assert out[-2:] == ["796,797,828,829,860,861,892,893,924,925,956,957,988,989,1020,1021",
                        "798,799,830,831,862,863,894,895,926,927,958,959,990,991,1022,1023"]
    assert len(out) == 2 + 64  # "64 rows by 16 columns"


def test_seed_64x64_cm1_rows():
    out = lines(["-C", "-Z", "-c", "2,8", "-g", "64,64"])
    assert out[:3] == ["# grid_order -C -Z -c 2,8 -g 64,64", "# Region 0: 0,0 (0..4095)",
                       "0,1,64,65,128,129,192,193,256,257,320,321,384,385,448,449"]
    # The slide's "145 2076,..." is line 145 of the file.
    assert out[144] == "2076,2077,2140,2141,2204,2205,2268,2269,2332,2333,2396,2397,2460,2461,2524,2525"
    assert out[-1] == "3646,3647,3710,3711,3774,3775,3838,3839,3902,3903,3966,3967,4030,4031,4094,4095"


def test_seed_wrf_81x144():
    rows = lines(["-R", "-Z", "-c", "8,2", "-g", "81,144"])
    assert rows[:6] == ["# grid_order -R -Z -c 8,2 -g 81,144", "# Region 0: 0,0 (0..11519)",
                        "0,1,144,145,288,289,432,433,576,577,720,721,864,865,1008,1009",
                        "2,3,146,147,290,291,434,435,578,579,722,723,866,867,1010,1011",
                        "4,5,148,149,292,293,436,437,580,581,724,725,868,869,1012,1013",
                        "6,7,150,151,294,295,438,439,582,583,726,727,870,871,1014,1015"]
    cols = lines(["-C", "-Z", "-c", "8,2", "-g", "81,144"])
    assert cols[:6] == ["# grid_order -C -Z -c 8,2 -g 81,144", "# Region 0: 0,0 (0..11519)",
                        "0,1,2,3,4,5,6,7,81,82,83,84,85,86,87,88",
                        "8,9,10,11,12,13,14,15,89,90,91,92,93,94,95,96",
                        "16,17,18,19,20,21,22,23,97,98,99,100,101,102,103,104",
                        "24,25,26,27,28,29,30,31,105,106,107,108,109,110,111,112"]
    # 81 rows do not divide by 8: the last row is a second region; all 11664 ranks once.
    ranks = [int(x) for row in rows if not row.startswith("#") for x in row.split(",")]
    assert sorted(ranks) == list(range(81 * 144))
    assert "# Region 1: 80,0 (11520..11663)" in rows


def test_seed_8x8_nodes():
    c = lines(["-C", "-c", "4,2", "-g", "8,8"])
    assert c[2:4] == ["0,1,2,3,8,9,10,11", "4,5,6,7,12,13,14,15"]
    r = lines(["-R", "-c", "4,2", "-g", "8,8"])
    assert r[2:4] == ["0,1,8,9,16,17,24,25", "2,3,10,11,18,19,26,27"]


def test_cell_size_rows_match_nersc_example():
    # NERSC's documented output of `grid_order -R -c 32 -g 4,4,4` (rows only:
    # the region comment of a one-number cell is not reproduced, see docs).
    out = lines(["-R", "-c", "32", "-g", "4,4,4"])
    assert out[2:] == [
        "0,1,2,3,16,17,18,19,32,33,34,35,48,49,50,51,4,5,6,7,20,21,22,23,36,37,38,39,52,53,54,55",
        "8,9,10,11,24,25,26,27,40,41,42,43,56,57,58,59,12,13,14,15,28,29,30,31,44,45,46,47,60,61,62,63"]


@pytest.mark.parametrize("curve", ["Z", "P", "H"])
@pytest.mark.parametrize("grid,cell", [((6, 10), (2, 5)), ((8, 8, 4), (2, 2, 2)),
                                       ((7, 9), (2, 4)), ((16, 16), (4, 4))])
def test_every_rank_once(curve, grid, cell):
    order = go.order(grid, cell, "R", curve)
    assert sorted(order.tolist()) == list(range(int(np.prod(grid))))


@pytest.mark.parametrize("extents", [(5, 3), (4, 3, 3), (2, 7)])
def test_serpentine_moves_one_step(extents):
    pts = curves.serpentine(extents, list(range(len(extents))))
    assert np.all(np.abs(np.diff(pts, axis=0)).sum(axis=1) == 1)


@pytest.mark.parametrize("extents", [(8, 8), (4, 4, 4), (16, 16)])
def test_hilbert_moves_one_step_in_power_of_two_boxes(extents):
    pts = curves.hilbert(extents, list(range(len(extents))))
    assert len({tuple(p) for p in pts}) == len(pts)
    assert np.all(np.abs(np.diff(pts, axis=0)).sum(axis=1) == 1)


def test_peano_reverses_alternate_rows():
    out = lines(["-R", "-P", "-c", "2,2", "-g", "4,4"])
    assert out[2:] == ["0,1,4,5", "2,3,6,7", "10,11,14,15", "8,9,12,13"]


@pytest.mark.parametrize("args,needle", [
    (["-g", "4,6", "-c", "1,6"], "-C"),
    (["-R", "-g", "4,6", "-c", "1,6,2"], "dimensions"),
    (["-R", "-g", "4,x", "-c", "1,6"], "-g"),
    (["-R", "-g", "4,6"], "-c"),
    (["-R", "-g", "4,6", "-c", "5,1"], "larger"),
    (["-R", "-g", "4,4,4", "-c", "7"], "cannot be cut"),
])
def test_bad_input_one_line_error(args, needle):
    proc = place("grid", *args)
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and needle in proc.stderr
    assert "Traceback" not in proc.stderr
