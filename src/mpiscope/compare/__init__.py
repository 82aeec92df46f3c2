"""`mpiscope compare A B`: what changed between two profiles, worse first.

``compare(prof_a, rep_a, prof_b, rep_b, strict=False)`` returns one dict
(schema ``mpiscope-compare/1``, docs/compare.md) built from the two profiles
and their report dicts; ``render`` prints it. Every time, call and byte count
is a per-rank average (sum over ranks / ranks), so profiles of different rank
counts compare (weak or strong scaling); the dict says so.
"""

from .build import SCHEMA, compare

__all__ = ["SCHEMA", "compare"]
