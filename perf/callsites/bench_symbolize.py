#!/usr/bin/env python3
"""Which DWARF reader symbolizes call sites: binutils addr2line, elfutils eu-addr2line,
or pyelftools in pure Python (docs/callsites.md "Symbolization", docs/performance.md).

For each ELF file given (default: libc's separate debug file found by build ID, and
libmpiscope.so of this checkout rebuilt with -O2 -g), picks N addresses inside its
functions (the symbol table, seeded) and times resolving all of them:
  * addr2line -a -f -i -C (what mpiscope.symbols uses): one process per file;
  * eu-addr2line -f -i -C (if installed), one process;
  * pyelftools: decoding every compilation unit's line program and looking each
    address up (file:line only: no inlined chain, no function, no demangling,
    so it is the least pyelftools would have to do).
Each is run --repeat times; the best time is printed, with the outputs' agreement on
file:line of the innermost frame.

    python3 perf/callsites/bench_symbolize.py [--n 1000] [--repeat 3] [ELF ...]
"""

from __future__ import annotations

import argparse
import bisect
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "src"))

from elftools.elf.elffile import ELFFile  # noqa: E402
from elftools.elf.sections import SymbolTableSection  # noqa: E402

from mpiscope.symbols import addr2line  # noqa: E402
from mpiscope.symbols.elf import inspect  # noqa: E402


def sample(path: str, n: int, seed: int = 1) -> list[int]:
    """n addresses inside function symbols of path."""
    funcs = []
    with open(path, "rb") as f:
        elf = ELFFile(f)
        for name in (".symtab", ".dynsym"):
            sec = elf.get_section_by_name(name)
            if isinstance(sec, SymbolTableSection):
                funcs += [(s["st_value"], s["st_size"]) for s in sec.iter_symbols()
                          if s["st_info"]["type"] == "STT_FUNC" and s["st_size"] > 4]
    rng = random.Random(seed)
    return [v + rng.randrange(1, size) for v, size in (rng.choice(funcs) for _ in range(n))]


def by_addr2line(path: str, addrs: list[int]) -> dict[int, tuple]:
    out = addr2line.lookup(path, addrs)
    return {a: (Path(fr[0][1]).name if fr and fr[0][1] else None, fr[0][2] if fr else None)
            for a, fr in out.items()}


def by_eu(path: str, addrs: list[int]) -> dict[int, tuple]:
    text = "\n".join(f"0x{a:x}" for a in addrs) + "\n"
    proc = subprocess.run(["eu-addr2line", "-a", "-f", "-C", "-e", path], input=text,
                          capture_output=True, text=True, check=True)
    lines = proc.stdout.splitlines()
    out, i = {}, 0
    while i + 2 < len(lines) + 1 and i < len(lines):
        a = int(lines[i], 16)
        loc = lines[i + 2]
        file, _, rest = loc.rpartition(":") if loc.count(":") >= 2 else (loc, "", "")
        if loc.count(":") >= 2:
            file, line = loc.rsplit(":", 2)[0], loc.rsplit(":", 2)[1]
        else:
            file, line = loc.partition(":")[0], loc.partition(":")[2]
        out[a] = (Path(file).name if file and file != "??" else None,
                  int(line) if line.isdigit() and int(line) > 0 else None)
        i += 3
    return out


def by_pyelftools(path: str, addrs: list[int]) -> dict[int, tuple]:
    rows = []
    with open(path, "rb") as f:
        dwarf = ELFFile(f).get_dwarf_info()
        for cu in dwarf.iter_CUs():
            prog = dwarf.line_program_for_CU(cu)
            if prog is None:
                continue
            files = prog["file_entry"]
            base = 1 if prog.header["version"] < 5 else 0
            prev = None
            for e in prog.get_entries():
                st = e.state
                if st is None:
                    continue
                if prev is not None and not prev.end_sequence and st.address > prev.address:
                    fe = files[prev.file - base] if 0 <= prev.file - base < len(files) else None
                    name = fe.name.decode() if fe is not None else None
                    rows.append((prev.address, st.address, name, prev.line))
                prev = st
    rows.sort()
    starts = [r[0] for r in rows]
    out = {}
    for a in addrs:
        i = bisect.bisect_right(starts, a) - 1
        out[a] = (rows[i][2], rows[i][3]) if i >= 0 and a < rows[i][1] else (None, None)
    return out


def debug_libc() -> str | None:
    libc = "/lib/x86_64-linux-gnu/libc.so.6"
    info = inspect(libc) if os.path.exists(libc) else None
    if not info or not info.build_id:
        return None
    h = info.build_id.hex()
    p = f"/usr/lib/debug/.build-id/{h[:2]}/{h[2:]}.debug"
    return p if os.path.exists(p) else None


def build_runtime(tmp: Path) -> str:
    """libmpiscope.so of this checkout, -O2 -g (lots of inlining), Open MPI."""
    b = tmp / "build"
    subprocess.run(["cmake", "-S", str(REPO), "-B", str(b), "-DMPISCOPE_SINGLE_MPI=ON",
                    "-DCMAKE_C_COMPILER=mpicc.openmpi", "-DMPISCOPE_PARTS=runtime",
                    "-DCMAKE_BUILD_TYPE=RelWithDebInfo", "-DMPISCOPE_IMPL=openmpi"],
                   check=True, capture_output=True)
    subprocess.run(["cmake", "--build", str(b), "-j2"], check=True, capture_output=True)
    return str(b / "runtime" / "libmpiscope.so")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="*")
    ap.add_argument("--n", type=int, default=1000)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        files = args.files or [f for f in (debug_libc(), build_runtime(Path(tmp))) if f]
        methods = [("addr2line (binutils)", by_addr2line), ("pyelftools (line table only)", by_pyelftools)]
        if shutil.which("eu-addr2line"):
            methods.insert(1, ("eu-addr2line (elfutils)", by_eu))
        print(f"load average {os.getloadavg()[0]:.1f}; {args.n} addresses per file, best of "
              f"{args.repeat}\n")
        print("| file | DWARF size | method | time (s) | file:line as addr2line |")
        print("|---|---:|---|---:|---:|")
        for path in files:
            addrs = sample(path, args.n)
            with open(path, "rb") as f:
                elf = ELFFile(f)
                size = sum(s["sh_size"] for s in elf.iter_sections() if s.name.startswith(".debug"))
            ref = None
            for label, fn in methods:
                best, res = float("inf"), None
                for _ in range(args.repeat):
                    t0 = time.perf_counter()
                    res = fn(path, addrs)
                    best = min(best, time.perf_counter() - t0)
                ref = ref or res
                agree = sum(res.get(a) == ref.get(a) for a in addrs) / len(addrs)
                print(f"| {Path(path).name} | {size / 2**20:.1f} MiB | {label} | {best:.2f} | "
                      f"{100 * agree:.0f} % |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
