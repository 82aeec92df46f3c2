"""Run a page's marked shell blocks the way a user would, and say what differs.

All marked blocks of one page run in order in ONE bash process in one
temporary directory, so a block can use the files and variables of the
blocks before it (``EX=...`` in one block, ``$EX/stencil`` in the next; a
profile written by one, reported by the next). ``mpiscope`` is found on
PATH, from the virtual environment of the Python running the tests (as after
``source .venv/bin/activate``), and paths come from ``mpiscope path``.

A block is either a console transcript (``$ command`` lines, continued by
``> `` lines or a trailing backslash, each followed by the output it printed)
or a plain list of commands (each line one command, or continued by a
trailing backslash). Every command's exit status must be 0 (``exit=N``: N),
and a transcript's shown output must match what the command printed
(tests/docs/matcher.py).

Block options (in the mark ``<!-- doctest: OPTIONS -->``):
  exit=N        every command of the block exits with N
  ordered       shown lines come in the printed order (default: paragraphs in order,
                the lines of a paragraph in any order)
  unordered     shown lines may come in any order, paragraphs too (findings by cost)
  numbers       deterministic output: numbers are compared as written
  exact=REGEX   these shown substrings must be printed verbatim (counts, bytes)
  ignore-output run, check the exit status, do not compare the output
  cwd=repo      run in the repository's top directory (a subshell: nothing carries over)
  timeout=S     seconds the block may take (default 120)
Hidden commands (``<!-- doctest-setup ... -->``) run before the next block;
``$DOCTEST_FIXTURES`` is tests/docs/fixtures, ``$DOCTEST_REPO`` the repository.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import signal
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import doc_matcher as matcher
from doc_blocks import Block

REPO = Path(__file__).resolve().parents[2]
FIXTURES = Path(__file__).resolve().parent / "fixtures"
RUN_OPTIONS = {"exit", "unordered", "ordered", "numbers", "exact", "ignore-output", "cwd", "timeout"}
NOT_RUN = {"synopsis", "measured", "skip", "options-of", "paths"}
SEP = "\x1edoctest"


@dataclass
class Command:
    text: str                       # what bash runs
    shown: str | None = None        # the output shown after it (transcripts), else None
    line: int = 0                   # line of the page where it is written


@dataclass
class Result:
    command: Command
    block: Block
    rc: int | None = None
    output: str = ""
    setup: bool = False
    problems: list[str] = field(default_factory=list)


def is_run(block: Block) -> bool:
    return block.mark is not None and not (set(block.mark) & NOT_RUN)


def is_python(block: Block) -> bool:
    """A Python session: a ```python block whose statements are written ``>>> ``."""
    return block.info == "python" and block.text.lstrip().startswith(">>> ")


def python_statements(block: Block) -> list[Command]:
    """``>>> `` statements (continued by ``... ``), each with the output shown after it."""
    out: list[Command] = []
    for i, ln in enumerate(block.text.split("\n")):
        if ln.startswith(">>> "):
            out.append(Command(ln[4:], "", block.line + 1 + i))
        elif (ln.startswith("... ") or ln == "...") and out and not out[-1].shown:
            out[-1].text += "\n" + ln[4:]
        elif out:
            out[-1].shown = (out[-1].shown + "\n" if out[-1].shown else "") + ln
    return out


# Runs the statements of a Python session in one namespace, as the interpreter
# would show them: an expression's repr, or the exception's last line.
PY_SESSION = r"""
import json, sys
def _dt_run(_dt_steps):
    ns = {"__name__": "__main__"}
    for k, src in _dt_steps:
        print("\n%s begin %d" % (SEP, k), flush=True)
        rc = 0
        try:
            try:
                code = compile(src, "<doc>", "eval")
            except SyntaxError:
                exec(compile(src, "<doc>", "exec"), ns)
            else:
                value = eval(code, ns)
                if value is not None:
                    print(repr(value))
        except Exception as e:
            t = type(e)
            name = t.__qualname__ if t.__module__ == "builtins" else t.__module__ + "." + t.__qualname__
            print("%s: %s" % (name, e))
            rc = 1
        sys.stdout.flush()
        print("\n%s end %d %d" % (SEP, k, rc), flush=True)
_dt_run(json.loads(sys.stdin.read()))
"""


def commands(block: Block) -> list[Command]:
    """The commands of a block, each with the output shown after it."""
    if is_python(block):
        return python_statements(block)
    lines = block.text.split("\n")
    transcript = any(ln.startswith("$ ") for ln in lines)
    out: list[Command] = []
    i = 0
    while i < len(lines):
        ln = lines[i]
        if transcript and not ln.startswith("$ "):
            if out:
                out[-1].shown = (out[-1].shown + "\n" if out[-1].shown else "") + ln
            elif ln.strip():
                raise ValueError(f"{block.where}: output before the first '$ ' command")
            i += 1
            continue
        if not transcript and (not ln.strip() or ln.lstrip().startswith("#")):
            i += 1
            continue
        text = [ln[2:] if transcript else ln]
        line = block.line + 1 + i
        i += 1
        while i < len(lines) and (text[-1].rstrip().endswith("\\") or
                                  (transcript and lines[i].startswith("> "))):
            nxt = lines[i]
            text.append(nxt[2:] if transcript and nxt.startswith("> ") else nxt)
            i += 1
        out.append(Command("\n".join(text), "" if transcript else None, line))
    return out


def environment(tmp: Path) -> dict:
    env = dict(os.environ)
    venv_bin = str(Path(sys.executable).parent)
    env.update({
        "PATH": venv_bin + os.pathsep + env.get("PATH", ""),
        # mpiscope from the source tree being tested (as the other tests import it),
        # with the native parts of the virtual environment
        "PYTHONPATH": str(REPO / "src") + os.pathsep + env.get("PYTHONPATH", ""),
        # What a user's Open MPI needs on this machine: root, more ranks than cores,
        # no CMA single copy in a container (tests/mpitest.py)
        "OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
        "OMPI_MCA_rmaps_base_oversubscribe": "1",
        "OMPI_MCA_btl_vader_single_copy_mechanism": "none",
        # Python's stdout to a pipe is block-buffered; a terminal shows it interleaved
        # with stderr as printed
        "PYTHONUNBUFFERED": "1",
        "COLUMNS": "1000", "TERM": "dumb", "NO_COLOR": "1", "MPLBACKEND": "Agg",
        "LC_ALL": "C.UTF-8", "TZ": "UTC",
        "DOCTEST_FIXTURES": str(FIXTURES), "DOCTEST_REPO": str(REPO),
    })
    env.pop("VIRTUAL_ENV", None)
    env.pop("MPISCOPE_DIR", None)
    return env


def script(blocks: list[Block]) -> tuple[str, list[tuple[Block, Command | None]]]:
    """One bash script for the page; markers before and after each command."""
    parts = ["exec 2>&1", "__dt() { printf '\\n" + SEP + " %s\\n' \"$*\"; }"]
    steps: list[tuple[Block, Command | None]] = []
    for b in blocks:
        if b.setup:
            k = len(steps)
            steps.append((b, None))
            parts += [f"__dt begin {k}", *b.setup, f"__dt end {k} $?"]
        if is_python(b):
            todo = []
            for c in commands(b):
                todo.append((len(steps), c.text))
                steps.append((b, c))
            program = PY_SESSION.replace("SEP", repr(SEP))
            # warnings of pandas and friends go to stderr, which the page does not show
            parts.append(f"PYTHONWARNINGS=ignore python3 -c {shlex.quote(program)} <<'__DOCTEST_PY__'\n"
                         f"{json.dumps(todo)}\n__DOCTEST_PY__")
            continue
        for c in commands(b):
            k = len(steps)
            steps.append((b, c))
            text = c.text
            if b.mark.get("cwd") == "repo":
                text = f'(cd "$DOCTEST_REPO" && {text}\n)'
            parts += [f"__dt begin {k}", text, f"__dt end {k} $?"]
    return "\n".join(parts) + "\n", steps


def run_page(blocks: list[Block], tmp: Path, timeout: float) -> list[Result]:
    """Run the page's marked blocks; one Result per command (and per hidden setup)."""
    blocks = [b for b in blocks if is_run(b)]
    text, steps = script(blocks)
    (tmp / ".doctest.sh").write_text(text)
    budget = sum(float(b.mark.get("timeout", 120)) for b in blocks)
    proc = subprocess.Popen(["bash", "--noprofile", "--norc", str(tmp / ".doctest.sh")],
                            cwd=tmp, env=environment(tmp), stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            start_new_session=True)
    try:
        raw, _ = proc.communicate(timeout=min(budget, timeout))
        timed_out = False
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        raw, _ = proc.communicate()
        timed_out = True
    output = raw.decode("utf-8", "replace")
    results = [Result(c or Command("\n".join(b.setup), None, b.line), b, setup=c is None)
               for b, c in steps]
    current, buf = None, []
    for ln in output.split("\n"):
        m = re.match("^" + SEP + r" (begin|end) (\d+)(?: (\d+))?$", ln)
        if not m:
            if current is not None:
                buf.append(ln)
            continue
        k = int(m.group(2))
        if m.group(1) == "begin":
            current, buf = k, []
        else:
            results[k].rc = int(m.group(3))
            results[k].output = "\n".join(buf).strip("\n")
            current = None
    if current is not None:
        results[current].output = "\n".join(buf)
    for r in results:
        r.problems = check(r, timed_out)
    return results


def check(r: Result, timed_out: bool) -> list[str]:
    c, mark = r.command, r.block.mark
    if r.rc is None:
        return ["did not run to its end" + (" (the page's time ran out)" if timed_out else ""),
                *("    | " + ln for ln in r.output.split("\n")[-20:])]
    if is_python(r.block):   # a statement may raise only where the page shows the exception
        last = (c.shown or "").strip().split("\n")[-1]
        want = 1 if re.match(r"^[\w.]*(Error|Exception)\b[^:]*:", last) else 0
    else:
        want = 0 if r.setup else int(mark.get("exit", 0))
    problems = []
    if r.rc != want:
        problems.append(f"exited {r.rc}, expected {want}")
    if c.shown and not mark.get("ignore-output"):
        problems += matcher.compare(c.shown, r.output, unordered=bool(mark.get("unordered")),
                                    exact=mark.get("exact", []), numbers=bool(mark.get("numbers")),
                                    ordered=bool(mark.get("ordered")))
    if problems and r.rc != want:
        problems += ["  output:", *("    | " + ln for ln in r.output.split("\n")[-25:])]
    return problems


def report(results: list[Result]) -> str:
    out = []
    for r in results:
        if r.problems:
            out.append(f"{r.block.page}:{r.command.line}: $ {r.command.text.splitlines()[0]}")
            out += ["  " + p for p in r.problems]
    return "\n".join(out)
