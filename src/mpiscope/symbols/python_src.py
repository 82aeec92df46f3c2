"""Python frames of mpi4py programs' call sites: a source file and a line (recorded by
the runtime); the function is found here, offline, from the file's syntax tree, and
only if the file still has the bytes it had during the run (its FNV-1a 64 hash, which
the runtime recorded in place of a build ID)."""

from __future__ import annotations

import ast
from functools import lru_cache
from pathlib import Path

from ..format import fnv1a64_bytes


def content_hash(path: str) -> bytes | None:
    """The runtime's hash of a source file (8 bytes, little-endian), None if unreadable."""
    try:
        data = Path(path).read_bytes()
    except OSError:
        return None
    return fnv1a64_bytes(data).to_bytes(8, "little")


@lru_cache(maxsize=64)
def _functions(path: str) -> list[tuple[int, int, str]]:
    """(first line, last line, qualified name) of every function and class in a file."""
    try:
        tree = ast.parse(Path(path).read_bytes(), filename=path)
    except (OSError, SyntaxError, ValueError, RecursionError):
        return []
    out = []

    def walk(node, prefix: str):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                name = f"{prefix}{child.name}"
                out.append((child.lineno, child.end_lineno or child.lineno, name))
                walk(child, name + ("." if isinstance(child, ast.ClassDef) else ".<locals>."))
            else:
                walk(child, prefix)
    walk(tree, "")
    return out


def function_at(path: str, line: int) -> str:
    """The innermost function (or class body) holding line; "<module>" at the top level."""
    best = None
    for first, last, name in _functions(path):
        if first <= line <= last and (best is None or first >= best[0]):
            best = (first, name)
    return best[1] if best else "<module>"
