"""The pure parts of `mpiscope bench`: size parsing, launcher rewriting, output parsing, naming."""

from __future__ import annotations

import pytest

from mpiscope.bench import driver, kernels, results
from mpiscope.errors import UserError


@pytest.mark.parametrize("text,value", [("0", 0), ("64", 64), ("8K", 8192), ("8k", 8192),
                                        ("4MiB", 4 << 20), ("1G", 1 << 30), ("16B", 16),
                                        ("2KB", 2048)])
def test_parse_size(text, value):
    assert kernels.parse_size(text) == value


@pytest.mark.parametrize("text", ["", "K", "4Q", "-1", "1.5M", "4 MiBs"])
def test_parse_size_rejects(text):
    with pytest.raises(UserError, match="does not parse"):
        kernels.parse_size(text)


def test_unknown_kernel_names_the_known_ones():
    with pytest.raises(UserError, match="unknown kernel 'x'.*p2p.*startup"):
        kernels.kernel("x")


@pytest.mark.parametrize("argv,n,rewritten", [
    (["mpirun", "-n", "4"], 4, ["mpirun", "-n", "8"]),
    (["mpiexec", "-np", "2", "--bind-to", "none"], 2, ["mpiexec", "-np", "8", "--bind-to", "none"]),
    (["srun", "--ntasks=16"], 16, ["srun", "--ntasks=8"]),
    (["mpirun", "--oversubscribe", "-c", "3"], 3, ["mpirun", "--oversubscribe", "-c", "8"]),
])
def test_ranks_in_and_with_ranks(argv, n, rewritten):
    before = list(argv)
    assert driver.ranks_in(argv) == n
    assert driver.with_ranks(argv, 8) == rewritten
    assert argv == before  # the caller's list is not modified


def test_with_ranks_needs_a_flag():
    assert driver.ranks_in(["mpirun", "-host", "a,b"]) is None
    with pytest.raises(UserError, match="--ranks needs a launcher rank count"):
        driver.with_ranks(["mpirun", "-host", "a,b"], 4)


def test_parse_lines_ignores_noise_and_a_cut_last_line():
    text = ('Warning: something from the launcher\n'
            '{"type":"meta","nranks":2,"mpi_library":"X"}\n'
            '{"type":"row","table":"p2p","size":1}\n'
            '{"type":"note","text":"no off-node pairs"}\n'
            '{"type":"row","table":"p2p","si')
    out = results.parse_lines(text)
    assert out.meta == {"nranks": 2, "mpi_library": "X"}
    assert out.rows == [{"table": "p2p", "size": 1}]
    assert out.notes == ["no off-node pairs"]
    assert out.ended is False and out.errors == []


def test_add_run_marks_partial_and_tags_rows():
    res = results.new_result("p2p", "openmpi", ["mpirun", "-n", "2"], {}, {"x": "y"})
    done = results.parse_lines('{"type":"meta","nranks":2}\n{"type":"row","table":"t","a":1}\n'
                               '{"type":"end"}\n')
    results.add_run(res, done, ["cmd"], 0, 1.0)
    assert res["partial"] is False and res["rows"] == [{"nranks": 2, "table": "t", "a": 1}]
    cut = results.parse_lines('{"type":"meta","nranks":4}\n{"type":"row","table":"t","a":2}\n')
    results.add_run(res, cut, ["cmd"], 0, 1.0)
    assert res["partial"] is True
    assert res["rows"][-1] == {"nranks": 4, "table": "t", "a": 2}
    assert [r["complete"] for r in res["runs"]] == [True, False]


def test_free_path_never_reuses_a_name(tmp_path):
    p = tmp_path / "r.json"
    assert results.free_path(p) == p
    p.write_text("1")
    assert results.free_path(p) == tmp_path / "r-1.json"
    (tmp_path / "r-1.json").write_text("2")
    assert results.free_path(p) == tmp_path / "r-2.json"


def test_every_kernel_documents_its_numbers():
    for kern in kernels.KERNELS.values():
        assert kern.methods, kern.name
        assert kern.summary and kern.study
