"""What the symbolizer needs to know about an ELF file, read with pyelftools: its GNU
build ID, whether it holds DWARF line tables, its separate debug file's name, and its
symbol tables (for a binary without DWARF: the function an address is in, checked
against the symbol's size, so a static function is never given its neighbour's name).
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass
from pathlib import Path

from elftools.common.exceptions import ELFError
from elftools.elf.elffile import ELFFile
from elftools.elf.sections import NoteSection, SymbolTableSection


@dataclass(frozen=True)
class ElfInfo:
    """One ELF file: build ID (bytes, b"" if none), DWARF present, .gnu_debuglink name."""
    path: str
    build_id: bytes
    has_dwarf: bool
    debuglink: str | None


def inspect(path: str | Path) -> ElfInfo | None:
    """The ElfInfo of path, or None if it is not a readable ELF file."""
    try:
        with open(path, "rb") as f:
            elf = ELFFile(f)
            build_id = b""
            for sec in elf.iter_sections():
                if isinstance(sec, NoteSection):
                    for note in sec.iter_notes():
                        if note["n_type"] == "NT_GNU_BUILD_ID":
                            build_id = bytes.fromhex(note["n_desc"])
            link = elf.get_section_by_name(".gnu_debuglink")
            debuglink = None
            if link is not None:
                data = link.data()
                debuglink = data[:data.index(b"\0")].decode("utf-8", "replace") if b"\0" in data else None
            line = elf.get_section_by_name(".debug_line")
            has_dwarf = line is not None and line.header["sh_type"] != "SHT_NOBITS" and \
                line.header["sh_size"] > 0
            return ElfInfo(str(path), build_id, has_dwarf, debuglink)
    except (OSError, ELFError, ValueError, KeyError, IndexError):
        return None


class Symbols:
    """Function symbols of an ELF file (.symtab, else .dynsym), for addresses without
    DWARF. An address names a function only inside [value, value + size)."""

    def __init__(self, path: str | Path):
        starts: dict[int, tuple[int, str]] = {}
        try:
            with open(path, "rb") as f:
                elf = ELFFile(f)
                for name in (".symtab", ".dynsym"):
                    sec = elf.get_section_by_name(name)
                    if not isinstance(sec, SymbolTableSection):
                        continue
                    for sym in sec.iter_symbols():
                        if sym["st_info"]["type"] == "STT_FUNC" and sym["st_value"] and sym.name:
                            starts.setdefault(int(sym["st_value"]), (int(sym["st_size"]), sym.name))
                    if starts:
                        break
        except (OSError, ELFError, ValueError, KeyError, IndexError):
            starts = {}
        self._starts = sorted(starts)
        self._info = [starts[s] for s in self._starts]

    def function(self, address: int) -> str | None:
        """The function symbol containing address, or None."""
        i = bisect.bisect_right(self._starts, address) - 1
        if i < 0:
            return None
        size, name = self._info[i]
        return name if address < self._starts[i] + max(size, 1) else None
