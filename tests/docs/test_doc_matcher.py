"""The doc tests' matcher and block parser: what they accept and what they refuse."""

from __future__ import annotations

import pytest

import doc_blocks
import doc_matcher as m
import doc_options
import doc_runner

REPORT = """\
Profile of /opt/venv/lib/mpiscope/_native/openmpi/libexec/mpiscope/examples/stencil
Number of processes 4, 1 node(s), full mode
  Function          % MPI   total time   calls
 ───────────────────────────────────────────────
  MPI_Waitall       95.7%        0.491   1,600
  MPI_Isend          0.3%     1.40e-03   3,200
  MPI_Irecv          0.2%     9.13e-04   3,200
RESULT stencil grid=512x512 checksum=609e18a45a916319
"""


def test_numbers_ids_and_rules_normalise():
    assert m.normalise("  MPI_Isend   0.3%   1.40e-03  3,200 ") == "MPI_Isend N% N N"
    assert m.normalise("Started 2026-11-23 14:03:50 UTC, job 894763009") == "Started N-N-N N:N:N UTC, job N"
    assert m.normalise("checksum=609e18a45a916319 ───────") == "checksum=H ─"
    assert m.normalise("log2 p2p MPI_Type_vector f08") == "log2 p2p MPI_Type_vector f08"


def test_same_structure_other_timings_matches():
    shown = REPORT.replace("/opt/venv/lib/mpiscope/_native/openmpi/libexec/mpiscope", "...")
    shown = shown.replace("0.491", "0.123").replace("95.7%", "99.1%").replace("9.13e-04", "0.012")
    assert m.compare(shown, REPORT) == []


def test_a_missing_or_renamed_line_is_found():
    assert m.compare(REPORT.replace("MPI_Irecv", "MPI_Recv"), REPORT)
    assert m.compare(REPORT.replace("total time", "total  (s)"), REPORT)
    # a line the command prints but the page leaves out, with no '...' cut
    assert m.compare(REPORT.replace("  MPI_Isend          0.3%     1.40e-03   3,200\n", ""), REPORT)


def test_a_cut_line_stands_for_any_lines():
    shown = "\n".join(REPORT.split("\n")[:4]) + "\n...\nRESULT stencil grid=512x512 checksum=609e18a45a916319\n"
    assert m.compare(shown, REPORT, ordered=True) == []
    assert m.compare(shown.replace("RESULT stencil", "RESULT pcg"), REPORT, ordered=True)
    assert m.compare(shown, REPORT) == []
    assert m.compare(shown.replace("RESULT stencil", "RESULT pcg"), REPORT)
    assert m.compare("... (the tables)\n", REPORT) == []


def test_paragraphs_in_order_rows_in_any_order():
    lines = REPORT.split("\n")
    swapped = "\n".join(lines[:4] + [lines[5], lines[4]] + lines[6:])
    assert m.compare(swapped, REPORT) == []                 # rows of one table: any order
    assert m.compare(swapped, REPORT, ordered=True)         # unless ordered
    two = "Title A\n\nrow 1\nrow 2\n\nTitle B\n"
    assert m.compare(two, two) == []
    assert m.compare("Title B\n\nrow 1\nrow 2\n\nTitle A\n", two)   # paragraphs keep their order
    assert m.compare("Title A\n\nrow 1\n\nTitle B\n", two)           # a row left out
    assert m.compare("Title A\n\nrow 1\n...\n\nTitle B\n", two) == []
    assert m.compare("Title A\n\n...\n", two) == []
    assert m.compare("Title A\n\nrow 2\nrow 1\n", two)                # Title B not shown, no cut
    assert m.compare("...\nrow 2\n\nTitle B\n", two) == []          # cut first: paragraphs before
    assert m.compare("Title A\n...\n\nTitle B\n", two) == []        # cut last: paragraphs after
    assert m.compare("Title A\n\nTitle B\n", two)                    # no cut: row paragraph missing
    assert m.compare("...\nTitle B\n\nrow 1\n", two)                # order kept after a cut
    assert m.compare(swapped, REPORT, unordered=True) == []
    # unordered still wants every printed line shown, unless cut
    assert m.compare("\n".join(lines[:5]), REPORT, unordered=True)
    assert m.compare("\n".join(lines[:5] + ["..."]), REPORT, unordered=True) == []


def test_exact_numbers():
    assert m.compare(REPORT, REPORT, exact=[r"[\d,]+$"]) == []
    wrong = REPORT.replace("1,600", "1,700")
    assert m.compare(wrong, REPORT) == []          # numbers are not compared...
    assert m.compare(wrong, REPORT, exact=[r"(?m)\d[\d,]*$"])   # ...unless named


def test_deterministic_numbers():
    assert m.compare("0,1,2,3\n4,5,6,7", "0,1,2,3\n4,5,6,7", numbers=True) == []
    assert m.compare("0,1,2,3\n4,5,6,7", "0,1,2,3\n4,5,7,6", numbers=True)
    assert m.compare("0,1,2,3\n4,5,6,7", "4,5,6,7\n0,1,2,3", numbers=True, ordered=True)
    assert m.compare("0,1,2,3\n4,5,6,7", "0,1,2,3\n4,5,7,6") == []


def test_angle_placeholder():
    assert m.compare("mpiscope: wrote <dir>/stencil.<job>.mpiscope",
                     "mpiscope: wrote /tmp/x/stencil.894763009.mpiscope") == []
    assert m.compare("mpiscope: wrote <dir>/stencil.<job>.mpiscope",
                     "mpiscope: wrote /tmp/x/pcg.894763009.mpiscope")


def test_marks_and_commands(tmp_path):
    page = tmp_path / "p.md"
    page.write_text("""# T

<!-- doctest-setup
touch x
-->
<!-- doctest: unordered exact="calls: \\d+" -->
```
$ mpiscope report a \\
      --ppn 4
out 1
$ cat > s.toml <<EOF
> [study]
> EOF
```

| a | b |
|---|---|
| `x` | y |

```
mpiscope run -- mpirun -n 2 ./app   # comment
```
""")
    b = doc_blocks.blocks(page)
    assert [x.kind for x in b] == ["code", "table", "code"]
    assert b[0].mark == {"unordered": True, "exact": ["calls: \\d+"]} and b[0].setup == ["touch x"]
    cmds = doc_runner.commands(b[0])
    assert [c.text for c in cmds] == ["mpiscope report a \\\n      --ppn 4", "cat > s.toml <<EOF\n[study]\nEOF"]
    assert cmds[0].shown == "out 1" and cmds[1].shown == ""
    assert doc_runner.commands(b[2])[0].shown is None
    assert doc_blocks.table_cells(b[1].text) == [["a", "b"], ["`x`", "y"]]
    page.write_text("<!-- doctest -->\ntext\n```\nls\n```\n")
    with pytest.raises(ValueError):
        doc_blocks.blocks(page)


def test_options_of_written_commands():
    inv = doc_options.invocations("LD_PRELOAD=$(mpiscope path --mpi openmpi) mpirun -x LD_PRELOAD ./app")
    assert [(i.path, i.options) for i in inv] == [(("path",), ["--mpi"])]
    inv = doc_options.invocations("mpiscope bench p2p --pairs 2 --nope -- mpirun -n 4 | tee x")[0]
    assert doc_options.unknown_options(inv) == ["'mpiscope bench p2p' has no option --nope"]
    inv = doc_options.invocations("mpiscope scale reprt DIR")[0]
    assert doc_options.unknown_options(inv) == ["no command 'mpiscope scale reprt'"]


def test_a_page_runs_in_one_shell(tmp_path):
    page = tmp_path / "p.md"
    page.write_text("""
<!-- doctest -->
```
X=hello
```
<!-- doctest -->
```
$ echo $X world 42
hello world 7
$ ls nothing-here
ls: cannot access 'nothing-here': No such file or directory
```
""")
    results = doc_runner.run_page(doc_blocks.blocks(page), tmp_path, timeout=60)
    assert [r.rc for r in results] == [0, 0, 2]
    assert [bool(r.problems) for r in results] == [False, False, True]
    assert "exited 2, expected 0" in results[2].problems[0]


def test_a_python_session_runs_statement_by_statement(tmp_path):
    page = tmp_path / "p.md"
    page.write_text('''
<!-- doctest -->
```
$ echo 21 > n.txt
```
<!-- doctest -->
```python
>>> n = int(open("n.txt").read())
>>> for i in range(2):
...     print(i * n)
0
21
>>> "seen %d" % n
'shown 21'
>>> {}["x"]
KeyError: 'x'
>>> int("z")
```
''')
    results = doc_runner.run_page(doc_blocks.blocks(page), tmp_path, timeout=60)
    assert [r.rc for r in results] == [0, 0, 0, 0, 1, 1]
    assert [bool(r.problems) for r in results] == [False, False, False, True, False, True]
    assert results[5].output == "ValueError: invalid literal for int() with base 10: 'z'"
