"""DWARF look-ups through binutils' ``addr2line`` (docs/callsites.md "Symbolization" says
why this backend: it reads DWARF 2-5, follows inlined subroutines to the line written,
demangles C++, and resolves thousands of addresses of a large binary in one process
faster than pure-Python DWARF parsing).

One process per file: every address of that file on its standard input, ``-a`` so each
answer starts with its address (an address has as many answer lines as inlined frames).
"""

from __future__ import annotations

import re
import shutil
import subprocess

# (function, file, line): one frame of an answer; "??" / None when unknown.
Frame = tuple[str | None, str | None, int | None]

_ADDR = re.compile(r"^0x[0-9a-f]+$")
_LOC = re.compile(r"^(.*):(\d+|\?)(?: \(discriminator \d+\))?$")


def available() -> bool:
    return shutil.which("addr2line") is not None


def lookup(path: str, addresses: list[int], timeout: float = 600) -> dict[int, list[Frame]]:
    """address -> frames (innermost inlined frame first) for each address in path.

    Raises:
        OSError: addr2line missing or failed to run.
    """
    if not addresses:
        return {}
    exe = shutil.which("addr2line")
    if exe is None:
        raise OSError("addr2line (binutils) not found")
    text = "".join(f"{a:x}\n" for a in addresses)
    proc = subprocess.run([exe, "-a", "-f", "-i", "-C", "-e", path], input=text,
                          capture_output=True, text=True, timeout=timeout)
    if proc.returncode != 0:
        raise OSError(proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else
                      f"addr2line exited {proc.returncode}")
    out: dict[int, list[Frame]] = {}
    lines = proc.stdout.splitlines()
    i, current = 0, None
    while i < len(lines):
        line = lines[i]
        if _ADDR.match(line):
            current = int(line, 16)
            out[current] = []
            i += 1
            continue
        if current is None or i + 1 >= len(lines):
            break
        func, loc = line, lines[i + 1]
        i += 2
        m = _LOC.match(loc)
        file, num = (m.group(1), m.group(2)) if m else (None, "?")
        out[current].append((None if func == "??" else func, None if file in (None, "??", "") else file,
                             int(num) if num.isdigit() and int(num) > 0 else None))
    return out
