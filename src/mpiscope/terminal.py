"""Terminal output: every string that comes from a program prints literally.

A profile is input: its program's name and arguments, region and communicator
names, host and file names come from the program (or whoever named its
files). On a terminal they must print as the characters they are, in every
command: never as rich markup (``x[bold red]EVIL`` is those 16 characters),
never as emoji codes, never as escape sequences the terminal would obey
(ANSI colours, cursor moves, a title change), never as a newline that forges
a line of the report or breaks a table row, never reordered by Unicode
direction overrides. :func:`literal` makes a string safe; :func:`console` is
the rich console every command prints with: markup and emoji codes off, and
every string it renders (lines and table cells alike) passed through
:func:`literal`, so no renderer can forget. ``--json`` keeps the exact
strings (JSON escapes them itself); HTML has its own escaping
(``html/escape.py``).
"""

from __future__ import annotations

import re

from rich.console import Console

# C0 controls (newline and tab too: a cell or line is one line), DEL, C1 controls (a
# terminal may take U+009B as CSI), the Unicode line and paragraph separators, the
# direction embeddings, overrides and isolates, and lone surrogates.
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape(m: re.Match) -> str:
    c = m.group()
    if c in _NAMED:
        return _NAMED[c]
    return f"\\x{ord(c):02x}" if ord(c) < 0x100 else f"\\u{ord(c):04x}"


def literal(value) -> str:
    """``value`` as text a terminal shows character for character: unsafe characters
    become ``\\n``, ``\\t``, ``\\xNN`` or ``\\uNNNN``; bytes are read as UTF-8 (U+FFFD for
    what is not)."""
    if isinstance(value, bytes):
        value = value.decode("utf-8", "replace")
    return _UNSAFE.sub(_escape, str(value))


class LiteralConsole(Console):
    """A rich Console that renders every string literally (see the module docstring)."""

    def __init__(self, **kwargs):
        kwargs.setdefault("markup", False)
        kwargs.setdefault("emoji", False)
        super().__init__(**kwargs)

    def render_str(self, text: str, **kwargs):
        kwargs["markup"] = False
        kwargs["emoji"] = False
        return super().render_str(literal(text), **kwargs)


def console(min_width: int | None = None, **kwargs) -> LiteralConsole:
    """The console a command prints with, at least ``min_width`` columns wide."""
    if min_width is not None:
        kwargs["width"] = max(Console().width, min_width)
    return LiteralConsole(**kwargs)
