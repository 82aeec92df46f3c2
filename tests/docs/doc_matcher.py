"""Compare the output a page shows with the output a command printed.

Shown output is real output from some earlier run: its structure (which lines,
section titles, table headers, function and option names, units) must still be
what the command prints, but its timings and ids need not be. So both sides
are normalised line by line before they are compared:

1. Blank lines are dropped, runs of blanks become one blank, runs of the box
   drawing character ``─`` become one.
2. Every number becomes ``N``: integers, ``1,600``, ``0.166``, ``9.70e-03``,
   ``-1.5``, the digits of dates, times, job ids and ``2x2x1``. Hex ids of 8
   or more digits (checksums, region ids) become ``H``.
3. On the shown side, ``...`` inside a line matches any text (``.../examples/stencil``
   for an install path, ``stencil.<job>.mpiscope`` is written ``stencil....mpiscope``
   or with ``<...>``: ``<anything in angle brackets>`` matches any text too); a line
   that is only ``...``, or starts with ``...`` followed by a blank, stands for
   any number of lines that were cut.

Then, by default, the output is compared paragraph by paragraph (paragraphs
are separated by blank lines, as the tables of a report are): the shown
paragraphs must be the printed ones in the same order, and the lines of a
paragraph the printed paragraph's lines in any order (rows of a table sorted
by time change places from run to run), all of them unless the paragraph has
a cut line. A paragraph that is only a cut line stands for any number of
printed paragraphs; so does a cut line that begins a paragraph (for those
before it) or ends one (for those after it): "...\nProfile summary" finds the
summary wherever it is, and a table ending in "..." may be followed by
paragraphs that are not shown. With the block option ``ordered`` the lines themselves
must come in the shown order; with ``unordered`` (findings ranked by cost)
each shown line must match a different printed line anywhere; without a cut
line, every printed line must be matched as well.

With the block option ``numbers`` (deterministic output: rank orders, bounds,
placement counts) numbers and ids are compared as written. Numbers that are
deterministic and worth checking in otherwise timed output (call counts, bytes, ranks
of a planted imbalance) are named with ``exact="REGEX"``: every match of
REGEX in the shown output must appear verbatim in the printed output (runs
of blanks count as one, as table columns are aligned to their widest cell).
"""

from __future__ import annotations

import re

NUMBER = re.compile(r"(?<![A-Za-z_\d])[-+]?\d[\d,]*(?:\.\d+)?(?:[eE][-+]?\d+)?")
HEX = re.compile(r"\b(?=[0-9a-f]*[a-f])(?=[0-9a-f]*\d)[0-9a-f]{8,}\b")
ANGLE = re.compile(r"<[^<>\s][^<>]*>")
CUT = re.compile(r"^\.\.\.(\s.*)?$")


def normalise(line: str, numbers: bool = False) -> str:
    """The comparable form of a line; numbers=True keeps the numbers as written."""
    if not numbers:
        line = HEX.sub("H", line)
        line = NUMBER.sub("N", line)
    line = re.sub(r"─+", "─", line)
    line = re.sub(r"\s+", " ", line).strip()
    return line


def is_cut(shown_line: str) -> bool:
    return bool(CUT.match(shown_line.strip()))


def pattern(shown_line: str, numbers: bool = False) -> re.Pattern:
    """The regex a normalised shown line stands for: ``...`` and ``<...>`` match anything."""
    text = normalise(ANGLE.sub("\0", shown_line), numbers)
    parts = re.split(r"\.\.\.|\0", text)
    return re.compile("^" + ".*".join(re.escape(p) for p in parts) + "$")


def lines_of(text: str) -> list[str]:
    return [ln for ln in text.split("\n") if ln.strip()]


def paragraphs_of(text: str) -> list[list[str]]:
    out, cur = [], []
    for ln in text.split("\n"):
        if ln.strip():
            cur.append(ln)
        elif cur:
            out.append(cur)
            cur = []
    return out + ([cur] if cur else [])


def compare(shown: str, printed: str, unordered: bool = False, exact: list[str] = (),
            numbers: bool = False, ordered: bool = False) -> list[str]:
    """Problems found, as readable lines; [] when the printed output matches.
    numbers=True: the output is deterministic, numbers are compared as written."""
    problems = []
    s_lines, p_lines = lines_of(shown), lines_of(printed)
    p_norm = [normalise(ln, numbers) for ln in p_lines]
    if unordered:
        problems += _unordered(s_lines, p_lines, p_norm, numbers)
    elif ordered:
        problems += _ordered(s_lines, p_lines, p_norm, numbers)
    else:
        problems += _paragraphs(shown, printed, numbers)
    flat = re.sub(r"\s+", " ", printed)
    for rx in exact:
        for m in re.finditer(rx, shown):
            if re.sub(r"\s+", " ", m.group(0)) not in flat:
                problems.append(f"exact: {m.group(0)!r} is shown but not printed")
    return problems


def _ordered(s_lines, p_lines, p_norm, numbers) -> list[str]:
    # Backtracking over cut lines: a cut matches any number of printed lines.
    items = [None if is_cut(s) else (s, pattern(s, numbers)) for s in s_lines]
    memo: dict = {}

    def match(i: int, j: int) -> int:
        """-1 if shown[i:] matches printed[j:], else the deepest shown index reached."""
        key = (i, j)
        if key in memo:
            return memo[key]
        if i == len(items):
            res = -1 if j == len(p_norm) else i
        elif items[i] is None:
            res = i
            for k in range(j, len(p_norm) + 1):
                r = match(i + 1, k)
                if r == -1:
                    res = -1
                    break
                res = max(res, r)
        elif j < len(p_norm) and items[i][1].match(p_norm[j]):
            res = match(i + 1, j + 1)
        else:
            res = i
        memo[key] = res
        return res

    reached = match(0, 0)
    if reached == -1:
        return []
    if reached >= len(items):
        return ["the output goes on after the last line shown (add a line '...' where it is cut):",
                *_excerpt(p_lines, len(p_lines) - 5, len(p_lines))]
    s = s_lines[reached]
    near = [p for p, n in zip(p_lines, p_norm) if _similar(items[reached][1], n)]
    return [f"shown line {reached + 1} was not printed where it is shown: {s.strip()!r}",
            *(["  printed lines like it:", *("    " + p.strip() for p in near[:3])] if near else
              ["  printed output:", *_excerpt(p_lines, 0, 40)])]


def _paragraph_matches(shown: list[str], printed: list[str], numbers: bool) -> str | None:
    """None if the printed paragraph holds the shown one's lines (all of them unless
    the shown paragraph has a cut line), in any order; else the first shown line
    that is missing, or "" for printed lines left over."""
    free = [normalise(p, numbers) for p in printed]
    cut = any(is_cut(s) for s in shown)
    lines = [s for s in shown if not is_cut(s)]
    for s in sorted(lines, key=lambda s: "..." in s or "<" in s):
        rx = pattern(s, numbers)
        hit = next((j for j, n in enumerate(free) if n is not None and rx.match(n)), None)
        if hit is None:
            return s
        free[hit] = None
    return None if cut or all(n is None for n in free) else ""


def _paragraphs(shown: str, printed: str, numbers: bool) -> list[str]:
    s_par, p_par = paragraphs_of(shown), paragraphs_of(printed)
    memo: dict = {}
    best = [(-1, -1, None)]   # deepest (shown paragraph, printed paragraph, missing line) reached

    def match(i: int, j: int) -> bool:
        if (i, j) in memo:
            return memo[(i, j)]
        if i == len(s_par):
            res = j == len(p_par)
            if not res:
                best.append((i, j, None))
        elif all(is_cut(s) for s in s_par[i]):
            res = any(match(i + 1, k) for k in range(j, len(p_par) + 1))
        else:
            # a cut first line: printed paragraphs may come before this one;
            # a cut last line: and after it, before the next one shown
            lead, trail = is_cut(s_par[i][0]), is_cut(s_par[i][-1])
            res = False
            for k in (range(j, len(p_par)) if lead else range(j, min(j + 1, len(p_par)))):
                miss = _paragraph_matches(s_par[i], p_par[k], numbers)
                if miss is not None:
                    best.append((i, k, miss))
                    continue
                nxt = range(k + 1, len(p_par) + 1) if trail else range(k + 1, k + 2)
                if any(match(i + 1, k2) for k2 in nxt):
                    res = True
                    break
            if j >= len(p_par):
                best.append((i, j, s_par[i][0]))
        memo[(i, j)] = res
        return res

    if match(0, 0):
        return []
    i, j, miss = max(best, key=lambda t: (t[0], -t[1]))
    if i >= len(s_par):
        return ["the output goes on after the last paragraph shown (add a line '...' where it "
                "is cut):", *_excerpt(p_lines_of(p_par[j:]), 0, 8)]
    where = f"shown paragraph {i + 1} (starting {s_par[i][0].strip()!r})"
    if j >= len(p_par):
        return [f"{where}: the output ended before it"]
    if miss == "":
        return [f"{where}: the printed paragraph has more lines (add a line '...' where it is cut):",
                *_excerpt(p_par[j], 0, 12)]
    return [f"{where}: not printed: {miss.strip()!r}", "  the printed paragraph there:",
            *_excerpt(p_par[j], 0, 12)]


def p_lines_of(pars):
    return [ln for p in pars for ln in p]


def _unordered(s_lines, p_lines, p_norm, numbers) -> list[str]:
    problems = []
    free = list(range(len(p_norm)))
    cut = any(is_cut(s) for s in s_lines)
    shown = [s for s in s_lines if not is_cut(s)]
    # lines without wildcards first, so that a wildcard line cannot take their match
    order = sorted(range(len(shown)), key=lambda k: "..." in shown[k] or "<" in shown[k])
    for k in order:
        rx = pattern(shown[k], numbers)
        hit = next((j for j in free if rx.match(p_norm[j])), None)
        if hit is None:
            problems.append(f"shown line not printed: {shown[k].strip()!r}")
        else:
            free.remove(hit)
    if not cut and free and not problems:
        problems.append("printed but not shown (add a line '...' where the output is cut):")
        problems += ["    " + p_lines[j].strip() for j in free[:10]]
    if problems and len(problems) < 30:
        problems += ["  printed output:", *_excerpt(p_lines, 0, 60)]
    return problems


def _similar(rx: re.Pattern, norm: str) -> bool:
    words = set(re.findall(r"[A-Za-z_]{3,}", rx.pattern.replace("\\", "")))
    return len(words) > 0 and len(words & set(re.findall(r"[A-Za-z_]{3,}", norm))) >= max(1, len(words) // 2)


def _excerpt(lines, a, b):
    return ["    | " + ln for ln in lines[max(0, a):b]]
