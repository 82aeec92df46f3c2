"""Did a candidate change what the program computes? Its exit code and output against the
baseline's.

A program's standard output may hold its own timings (``stencil: ... 1.234 s``), which
differ between any two runs, and its ranks' lines may come in any order. So the
baseline runs themselves say what is stable: a line printed by every baseline run (as
many times) must be printed by every candidate run; the other lines are compared with
their numbers masked (a timing may change, the line's words may not), and the number of
lines must match. A checksum printed the same by every baseline run is a stable line:
one digit changed and the candidate is rejected.

UCX (the transport under Open MPI's UCX PML and MPICH's ch4:ucx) logs to standard
output: ``[1764390000.123] [node2:123:0]  flush.c:57  UCX  ERROR ... Endpoint timeout``
(the pid padded to a width: ``[node2:4567 :0]``)
on a slow link, in some runs and not others, while the run ends well. Such lines are the
library's, not the program's, and are left out of the comparison (the exit code is
checked on its own).
"""

from __future__ import annotations

import re
from collections import Counter

_NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")
# [time] [host:pid:thread] file:line UCX LEVEL ...; UCX pads the pid to a width
# ("[node1:4567 :0]"), so the second bracket is matched whole.
_UCX_LOG = re.compile(r"^\[\d+\.\d+\]\s+\[[^\]]+\]\s+\S+:\d+\s+UCX\s+[A-Z]+\s")


def _lines(text: str) -> Counter:
    return Counter(line.rstrip() for line in text.splitlines()
                   if line.strip() and not _UCX_LOG.match(line))


def _masked(lines: Counter) -> Counter:
    out: Counter = Counter()
    for line, n in lines.items():
        out[_NUMBER.sub("N", line)] += n
    return out


def stable_lines(baselines: list[str]) -> Counter:
    """The lines every baseline output holds, with the smallest count seen."""
    counts = [_lines(t) for t in baselines]
    common = counts[0].copy()
    for c in counts[1:]:
        common &= c
    return common


def differs(baselines: list[str], candidate: str) -> str | None:
    """Why ``candidate``'s output differs from the baselines' (None: it does not).

    Arguments:
        baselines: the standard output of the baseline runs (at least one).
        candidate: one candidate run's standard output.
    """
    stable = stable_lines(baselines)
    cand = _lines(candidate)
    missing = stable - cand
    if missing:
        line = next(iter(missing))
        return f"a line every baseline run printed is missing or changed: {line[:120]!r}"
    rest = _masked(cand - stable)
    shapes = {frozenset((_masked(_lines(t) - stable)).items()) for t in baselines}
    if frozenset(rest.items()) not in shapes:
        extra = (rest - _masked(_lines(baselines[0]) - stable)) or rest
        line = next(iter(extra), "")
        return (f"its output has other lines than the baseline's"
                + (f": {line[:120]!r}" if line else " (fewer lines)"))
    return None
