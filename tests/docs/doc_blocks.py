"""The parts of a Markdown page the doc tests read: fenced blocks, tables and marks.

A mark is an HTML comment (invisible when the page is rendered) on the line
right before a fenced block or a table:

    <!-- doctest -->                     run the block (docs/architecture.md, "Executable docs")
    <!-- doctest: unordered exit=2 -->   with options
    <!-- doctest-setup                   commands run (hidden) before the next block
    cp "$DOCTEST_FIXTURES/app.c" .
    -->

Options are words or key=value pairs; a value with blanks is written in
double quotes (``exact="calls: \\d+"``). The parser knows no option: the
runner and the checks do (tests/docs/runner.py, tests/docs/test_docs.py).
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path

MARK = re.compile(r"^<!--\s*doctest(-setup)?\b:?(.*?)(-->)?\s*$")


@dataclass
class Block:
    """A fenced code block or a table, with the mark written before it (if any)."""
    page: str
    line: int                    # 1-based line of the opening fence (or the table's first row)
    kind: str                    # "code" or "table"
    info: str                    # the fence's info string ("", "toml", "python", ...)
    text: str                    # the block's content, without the fences
    mark: dict | None = None     # options of the <!-- doctest ... --> mark, None if unmarked
    setup: list[str] = field(default_factory=list)   # hidden <!-- doctest-setup --> commands
    context: str = ""            # the page's text since the previous block
    section: str = ""            # the page's text (blocks left out) since the last heading

    @property
    def where(self) -> str:
        return f"{self.page}:{self.line}"


def parse_options(text: str) -> dict:
    """``unordered exit=2 exact="a b"`` -> {"unordered": True, "exit": "2", "exact": ["a b"]}.

    ``exact`` may be repeated, so it is always a list."""
    opts: dict = {}
    for word in shlex.split(text):
        key, eq, value = word.partition("=")
        if key == "exact":
            opts.setdefault("exact", []).append(value)
        else:
            opts[key] = value if eq else True
    return opts


def blocks(path: Path, name: str | None = None) -> list[Block]:
    """Every fenced block and table of the page, in order, with its mark."""
    lines = path.read_text().split("\n")
    name = name or path.name
    out: list[Block] = []
    pending: dict | None = None
    setup: list[str] = []
    context: list[str] = []
    section: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        m = MARK.match(line.strip())
        if m:
            is_setup, body, closed = m.group(1), m.group(2), m.group(3)
            extra = []
            while not closed:
                i += 1
                if i >= len(lines):
                    raise ValueError(f"{name}:{i}: unclosed <!-- doctest comment")
                if lines[i].strip().endswith("-->"):
                    extra.append(lines[i].strip()[:-3])
                    closed = True
                else:
                    extra.append(lines[i])
            if is_setup:
                setup.extend(ln for ln in [body.strip(), *extra] if ln.strip())
            else:
                pending = parse_options(" ".join([body, *extra]))
            i += 1
            continue
        fence = re.match(r"^(\s*)(```+|~~~+)(.*)$", line)
        if fence:
            indent, ticks, info = fence.groups()
            start = i
            body = []
            i += 1
            while i < len(lines) and not lines[i].strip().startswith(ticks):
                body.append(lines[i][len(indent):] if lines[i].startswith(indent) else lines[i])
                i += 1
            out.append(Block(name, start + 1, "code", info.strip(), "\n".join(body), pending,
                             setup, "\n".join(context), "\n".join(section)))
            pending, setup, context = None, [], []
            i += 1
            continue
        if line.startswith("|") and i + 1 < len(lines) and re.match(r"^\|[\s:|-]+\|\s*$", lines[i + 1]):
            start = i
            rows = []
            while i < len(lines) and lines[i].startswith("|"):
                rows.append(lines[i])
                i += 1
            out.append(Block(name, start + 1, "table", "", "\n".join(rows), pending, setup,
                             "\n".join(context), "\n".join(section)))
            pending, setup, context = None, [], []
            continue
        if line.strip() and pending is not None:
            raise ValueError(f"{name}:{i + 1}: a <!-- doctest --> mark must come right before "
                             "a fenced block or a table")
        if line.startswith("#"):
            section = []
        context.append(line)
        section.append(line)
        i += 1
    if pending is not None or setup:
        raise ValueError(f"{name}: a <!-- doctest --> mark at the end of the page marks nothing")
    return out


def table_cells(text: str) -> list[list[str]]:
    """A Markdown table's rows (header first, the ---- line left out) as cell lists.
    ``\\|`` inside a cell is a literal bar."""
    rows = []
    for ln in text.split("\n"):
        if re.match(r"^\|[\s:|-]+\|\s*$", ln):
            continue
        cells = re.split(r"(?<!\\)\|", ln.strip().strip("|"))
        rows.append([c.strip().replace("\\|", "|") for c in cells])
    return rows
