"""Offline symbolization: (module, offset) in, (function, file, line, inlined chain) out.

The runtime records code addresses as (module, offset): the loaded object (or Python
source file) and the address it was linked at (a Python frame: its line). It never
reads DWARF. This package turns them into source locations, in the reader:

    sym = Symbolizer()
    status = sym.module_status(module)          # found? rebuilt since the run? debug info?
    where = sym.resolve(module, [offset - 1])   # return addresses: ask for the call, ret - 1

``resolve`` returns, per address, the frames of the inlined chain, innermost first (the
line written inside an inlined function first, then where it was inlined). ELF files
are read with binutils' addr2line (DWARF) and pyelftools (build IDs, symbol tables);
a binary is used only if its GNU build ID is the one recorded (else it was rebuilt
after the run, and that is said, never a wrong name given); results are cached per
build ID (``$MPISCOPE_SYMBOL_CACHE``, else ``$XDG_CACHE_HOME/mpiscope/symbols``, else
``~/.cache/mpiscope/symbols``), so a binary rebuilt or deleted later still resolves
what was resolved before. Separate debug files are found by build ID under
``/usr/lib/debug/.build-id`` (and ``.gnu_debuglink``). docs/callsites.md
"Symbolization" has the rules; issue 31's sampled addresses use the same calls.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from .. import format as fmt
from . import addr2line, python_src
from .elf import Symbols, inspect

DEBUG_ROOTS = ("/usr/lib/debug",)
SYSTEM_HEADERS = ("/usr/include/", "/usr/lib/gcc/", "/usr/local/include/")


@dataclass(frozen=True)
class Module:
    """A MODULES record: key, kind (fmt.MODULE_ELF / MODULE_PYTHON), path, build ID."""
    key: int
    kind: int
    path: str
    build_id: bytes = b""
    file_size: int = 0
    mtime: float = 0.0

    @classmethod
    def from_record(cls, rec) -> "Module":
        n = min(int(rec["build_id_len"]), 40)
        path = bytes(rec["path"]).split(b"\0", 1)[0].decode("utf-8", "replace")
        return cls(int(rec["key"]), int(rec["kind"]), path, bytes(rec["build_id"][:n]),
                   int(rec["file_size"]), float(rec["mtime"]))

    @property
    def name(self) -> str:
        return os.path.basename(self.path) or self.path or "?"


@dataclass(frozen=True)
class Frame:
    """One source frame: any part may be unknown (None)."""
    function: str | None
    file: str | None
    line: int | None


@dataclass(frozen=True)
class ModuleStatus:
    """Whether and how a module's addresses can be resolved.

    status: "ok" (symbols of the very build that ran), "no-debug" (the right build, but
    only its symbol table: functions without file:line), "rebuilt" (the file changed
    after the run: build ID, or size and time, differ), "modified" (a Python source that
    changed), "missing" (not found), "unknown" (a frame in no loaded object).
    """
    status: str
    note: str
    elf: str | None = None         # the verified binary
    dwarf: str | None = None       # where its DWARF is (itself or a separate debug file)


def fortran_name(name: str | None) -> str | None:
    """gfortran's symbol names as written: __mod_MOD_proc -> mod::proc, MAIN__ -> the
    main program."""
    if not name:
        return name
    m = re.fullmatch(r"__(\w+?)_MOD_(\w+)", name)
    if m:
        return f"{m.group(1)}::{m.group(2)}"
    return "main program" if name == "MAIN__" else name


def cache_dir() -> Path:
    env = os.environ.get("MPISCOPE_SYMBOL_CACHE")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "mpiscope" / "symbols"


@dataclass
class Symbolizer:
    """Resolves (module, address) pairs; one per command, caching what it looked up.

    search_path: directories where moved binaries (by file name) and debug files (by
    build ID, ``.build-id/xx/yyyy.debug``) are also looked for.
    """
    search_path: tuple[str, ...] = ()
    use_cache: bool = True
    _status: dict = field(default_factory=dict)
    _cache: dict = field(default_factory=dict)

    # -- where a module's symbols are ---------------------------------------------------

    def module_status(self, m: Module) -> ModuleStatus:
        if m.key not in self._status:
            self._status[m.key] = self._locate(m)
        return self._status[m.key]

    def _locate(self, m: Module) -> ModuleStatus:
        if m.kind == fmt.MODULE_PYTHON:
            if m.path.startswith("<"):      # "<frozen importlib._bootstrap>", "<string>"
                return ModuleStatus("ok", "")
            if not os.path.isfile(m.path):
                return ModuleStatus("missing", f"{m.path}: not found")
            if m.build_id and python_src.content_hash(m.path) != m.build_id[:8]:
                return ModuleStatus("modified", f"{m.path} changed after the run: lines may have moved")
            return ModuleStatus("ok", "", elf=m.path)
        if m.kind != fmt.MODULE_ELF:
            return ModuleStatus("unknown", "not in any loaded object")
        candidates = [m.path] + [str(Path(d) / m.name) for d in self.search_path]
        found_other = False
        for path in candidates:
            if not os.path.isfile(path):
                continue
            info = inspect(path)
            if info is None:
                found_other = True
                continue
            if m.build_id:
                if info.build_id != m.build_id:
                    found_other = True
                    continue
            else:
                try:
                    st = os.stat(path)
                except OSError:
                    continue
                if m.file_size and (st.st_size != m.file_size or abs(st.st_mtime - m.mtime) > 1e-3):
                    found_other = True
                    continue
            dwarf = path if info.has_dwarf else self._debug_file(m, path, info.debuglink)
            if dwarf:
                return ModuleStatus("ok", "", elf=path, dwarf=dwarf)
            return ModuleStatus("no-debug", f"{m.name} has no debug information (built "
                                f"without -g, or stripped): functions only, no file:line",
                                elf=path)
        if found_other:
            why = "its build ID differs" if m.build_id else "its size or time differs"
            return ModuleStatus("rebuilt", f"{m.path} was rebuilt after the run ({why}): "
                                f"its sites are shown as {m.name}+offset")
        return ModuleStatus("missing", f"{m.path} not found: its sites are shown as "
                            f"{m.name}+offset")

    def _debug_file(self, m: Module, path: str, debuglink: str | None) -> str | None:
        """A separate debug file of the same build: by build ID, then .gnu_debuglink."""
        roots = [*DEBUG_ROOTS, *self.search_path]
        cands = []
        if m.build_id:
            h = m.build_id.hex()
            cands += [str(Path(r) / ".build-id" / h[:2] / f"{h[2:]}.debug") for r in roots]
        if debuglink:
            d = os.path.dirname(os.path.abspath(path))
            cands += [os.path.join(d, debuglink), os.path.join(d, ".debug", debuglink),
                      *(str(Path(r) / d.lstrip("/") / debuglink) for r in roots)]
        for c in cands:
            info = inspect(c) if os.path.isfile(c) else None
            if info and info.has_dwarf and (not m.build_id or info.build_id == m.build_id):
                return c
        return None

    # -- addresses -----------------------------------------------------------------------

    def resolve(self, m: Module, addresses) -> dict[int, tuple[Frame, ...]]:
        """address -> frames (innermost first) for each address of module m; () when
        nothing can be said (the module missing, rebuilt, stripped of symbols...).

        ELF: exact code addresses (for a return address, pass it minus 1).
        Python: line numbers.
        """
        addresses = sorted({int(a) for a in addresses})
        st = self.module_status(m)
        if m.kind == fmt.MODULE_PYTHON:
            ok = st.status == "ok" and st.elf is not None
            return {a: (Frame(python_src.function_at(m.path, a) if ok else None, m.path, a),)
                    for a in addresses}
        cache = self._cached(m)
        out = {a: tuple(Frame(*f) for f in cache[a]) for a in addresses if a in cache}
        todo = [a for a in addresses if a not in out]
        if not todo or st.status not in ("ok", "no-debug"):
            return {a: out.get(a, ()) for a in addresses}
        found: dict[int, list] = {}
        if st.dwarf and addr2line.available():
            try:
                found = {a: [(fortran_name(f), file, line) for f, file, line in frames]
                         for a, frames in addr2line.lookup(st.dwarf, todo).items()}
            except (OSError, UnicodeDecodeError):
                found = {}
        if any(not found.get(a) or all(f[0] is None for f in found[a]) for a in todo):
            syms = Symbols(st.elf)
            for a in todo:
                if not found.get(a) or all(f[0] is None for f in found[a]):
                    name = syms.function(a)
                    found[a] = [(fortran_name(name), None, None)] if name else []
        for a in todo:
            frames = [f for f in found.get(a, []) if any(x is not None for x in f)]
            out[a] = tuple(Frame(*f) for f in frames)
            cache[a] = [list(f) for f in frames]
        self._store(m)
        return {a: out[a] for a in addresses}

    def module_report(self, m: Module, resolved: dict[int, tuple[Frame, ...]]) -> dict:
        """The report's line on a module: its status and a note that says what its
        ``resolved`` addresses (``resolve``'s answer) really got: file:line, functions
        only, or module+offset; file:line out of the cache from an earlier command counts
        as file:line even where the binary no longer has (or is no longer) that build."""
        st = self.module_status(m)
        out = {"path": m.path, "build_id": m.build_id.hex(), "status": st.status,
               "note": st.note}
        if m.kind != fmt.MODULE_ELF or st.status == "ok" or not resolved:
            return out
        lines = sum(any(f.file and f.line for f in fr) for fr in resolved.values())
        names = sum(bool(fr) for fr in resolved.values()) - lines
        total = len(resolved)
        why = {"no-debug": "has no debug information (built without -g, or stripped)",
               "rebuilt": "was rebuilt after the run", "missing": "is not found"}.get(
                   st.status, "cannot be read")
        if lines:
            rest = total - lines
            out["note"] = (f"{m.path} {why}: file:line of {lines} of its {total} addresses "
                           "from the symbol cache (resolved from the same build earlier)"
                           + (f"; the other {rest}: " + ("functions only" if names else
                                                          f"{m.name}+offset") if rest else ""))
        elif st.status == "no-debug" and not names:
            out["note"] = (f"{m.name} has no debug information and no symbol table "
                           f"(stripped): its sites are shown as {m.name}+offset")
        return out

    # -- the cache per build ID ------------------------------------------------------------

    def _cache_file(self, m: Module) -> Path | None:
        if not self.use_cache or not m.build_id or m.kind != fmt.MODULE_ELF:
            return None
        return cache_dir() / f"{m.build_id.hex()}.json"

    def _cached(self, m: Module) -> dict[int, list]:
        if m.key in self._cache:
            return self._cache[m.key]
        entries: dict[int, list] = {}
        path = self._cache_file(m)
        if path is not None:
            try:
                doc = json.loads(path.read_text())
                entries = {int(k, 16): v for k, v in doc.get("addresses", {}).items()
                           if isinstance(v, list)}
            except (OSError, ValueError, AttributeError, TypeError):
                entries = {}
        self._cache[m.key] = entries
        return entries

    def _store(self, m: Module) -> None:
        """Write the module's cache file (atomically; a cache that cannot be written is
        only a slower next run)."""
        path = self._cache_file(m)
        if path is None:
            return
        doc = {"version": 1, "path": m.path,
               "addresses": {f"{a:x}": v for a, v in self._cache[m.key].items()}}
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_name(f".{path.name}.{os.getpid()}")
            tmp.write_text(json.dumps(doc))
            os.replace(tmp, path)
        except OSError:
            pass


def user_frame(frames: tuple[Frame, ...]) -> Frame | None:
    """The frame a user wrote: the innermost one outside the system's headers (an MPI
    call in an inline function of /usr/include is reported where it was inlined)."""
    for f in frames:
        if f.file and not f.file.startswith(SYSTEM_HEADERS):
            return f
    return frames[0] if frames else None
