"""Where the compiled parts live: the runtime library, benchmarks, mini-apps.

They are built once per MPI (see CMakeLists.txt) into ``<root>/<impl>/`` with
``lib/libmpiscope.so``, ``libexec/mpiscope/...``. The root is the first of:
``$MPISCOPE_NATIVE``; the installed package's ``_native``; ``build/stage`` of
a source checkout (so ``PYTHONPATH=src`` works after ``cmake --build build``).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

from .errors import UserError

IMPLS = ("openmpi", "mpich", "intelmpi", "mpi")


def native_roots() -> list[Path]:
    roots = []
    env = os.environ.get("MPISCOPE_NATIVE")
    if env:
        roots.append(Path(env))
    here = Path(__file__).resolve().parent
    roots.append(here / "_native")
    roots.append(here.parent.parent / "build" / "stage")
    return [r for r in roots if r.is_dir()]


def available_impls() -> list[str]:
    """MPI implementations the native parts were built for, in search order."""
    found = []
    for root in native_roots():
        for impl in IMPLS:
            if (root / impl).is_dir() and impl not in found:
                found.append(impl)
    return found


def impl_dir(impl: str) -> Path:
    for root in native_roots():
        if (root / impl).is_dir():
            return root / impl
    built = ", ".join(available_impls()) or "none"
    raise UserError(f"mpiscope was not built for MPI '{impl}' (built for: {built}); "
                    f"rebuild with MPISCOPE_MPICC=<its mpicc> pip install .")


def runtime_library(impl: str) -> Path:
    lib = impl_dir(impl) / "lib" / "libmpiscope.so"
    if not lib.exists():
        raise UserError(f"runtime library missing: {lib}")
    return lib


def program(impl: str, name: str) -> Path:
    """A compiled helper program, e.g. program('openmpi', 'bench/p2p')."""
    path = impl_dir(impl) / "libexec" / "mpiscope" / name
    if not path.exists():
        raise UserError(f"program '{name}' was not built for {impl}: {path} missing")
    return path


_LAUNCHER_IMPL = [
    (re.compile(r"\.openmpi$|^orterun|^prterun"), "openmpi"),
    (re.compile(r"\.mpich$|\.hydra$"), "mpich"),
]


# MPI libraries by soname (DT_NEEDED): Open MPI's ABI is .so.40; MPICH's (.so.12) is shared by
# Intel MPI and Cray MPICH, told apart by the path ldd resolves.
_OMPI_SONAME = re.compile(r"^lib(mpi|mpi_mpifh|mpi_usempif08|mpi_usempi_ignore_tkr|mpi_cxx|"
                          r"open-rte|open-pal)\.so\.40")
_MPICH_SONAME = re.compile(r"^lib(mpich|mpichfort|mpichcxx|mpifort|mpicxx|mpi|mpi_cray)\.so\.12")
IMPL_NAMES = {"openmpi": "Open MPI", "mpich": "MPICH", "intelmpi": "Intel MPI", "mpi": "MPI"}


def needed_libraries(path: str) -> list[str] | None:
    """The DT_NEEDED entries of an ELF file (pyelftools), or None if it is not an ELF file."""
    from elftools.common.exceptions import ELFError
    from elftools.elf.dynamic import DynamicSection
    from elftools.elf.elffile import ELFFile

    try:
        with open(path, "rb") as fh:
            elf = ELFFile(fh)
            return [t.needed for sec in elf.iter_sections() if isinstance(sec, DynamicSection)
                    for t in sec.iter_tags() if t.entry.d_tag == "DT_NEEDED"]
    except (OSError, ELFError, ValueError):
        return None


def impl_of_sonames(names: list[str]) -> tuple[str, str] | None:
    """(impl, the soname that says so) of a list of needed libraries, or None."""
    for n in names:
        if _OMPI_SONAME.match(n):
            return "openmpi", n
    for n in names:
        if _MPICH_SONAME.match(n):
            return "mpich", n
    return None


def impl_of_binary(path: str) -> str | None:
    """Which MPI a dynamically linked program uses: the MPI library it needs itself (ELF
    DT_NEEDED), else one its libraries need (ldd, for a program linked through a library)."""
    return (linkage(path) or (None, None))[0]


def linkage(path: str) -> tuple[str, str] | None:
    """(impl, the library that says so) of a program, or None (not ELF, no MPI library)."""
    exe = shutil.which(path) or path
    direct = needed_libraries(exe)
    if direct is None:
        return None
    found = impl_of_sonames(direct)
    if found is None:
        try:
            out = subprocess.run(["ldd", exe], capture_output=True, text=True, timeout=20).stdout
        except (OSError, subprocess.TimeoutExpired):
            return None
        found = impl_of_sonames([line.split()[0] for line in out.splitlines() if line.split()])
        if found is None:
            return None
        resolved = next((line for line in out.splitlines() if found[1] in line), "")
    else:
        resolved = ""
    impl, soname = found
    if impl == "mpich" and "intel" in (resolved or exe).lower():
        impl = "intelmpi"
    return impl, soname


def program_in(argv: list[str]) -> str | None:
    """The MPI program of a launch command: the first word after the launcher (or the first
    word, when it is no launcher: a singleton run) that is an executable ELF file needing an
    MPI library, so wrappers such as taskset or numactl are looked through; None if there is
    none (a script, an interpreter)."""
    from .run.launcher_args import launcher_kind

    if not argv:
        return None
    name = os.path.basename(argv[0])
    launched = launcher_kind(argv[0], None) != "other" or name.startswith(("mpirun", "mpiexec"))
    for arg in argv[1:] if launched else argv:
        cand = shutil.which(arg) if "/" not in arg else (arg if os.access(arg, os.X_OK) else None)
        if cand and os.path.isfile(cand) and linkage(cand):
            return cand
    return None


def check_linkage(argv: list[str], impl: str, chosen: str) -> None:
    """Refuse (UserError, one line) to preload ``impl``'s runtime into a program linked against
    another MPI: the ranks would die in their first MPI call ("Invalid communicator").
    ``chosen`` says how impl was picked (for the message)."""
    prog = program_in(argv)
    found = linkage(prog) if prog else None
    if not found:
        return
    linked, soname = found
    compatible = {impl} | ({"mpich", "intelmpi"} if impl in ("mpich", "intelmpi") else set())
    if linked in compatible or impl == "mpi":
        return
    raise UserError(f"{os.path.basename(prog)} is linked against {IMPL_NAMES[linked]} ({soname}) "
                    f"but {chosen} is {IMPL_NAMES.get(impl, impl)}: run it with {IMPL_NAMES[linked]}'s "
                    f"launcher and --mpi {linked}")


def impl_of_launcher(argv: list[str]) -> str | None:
    """Guess the MPI of a launch command: the launcher's name, else the program's libraries."""
    if not argv:
        return None
    name = os.path.basename(argv[0])
    for pattern, impl in _LAUNCHER_IMPL:
        if pattern.search(name):
            return impl
    exe = shutil.which(argv[0])
    if exe:
        real = os.path.basename(os.path.realpath(exe))
        for pattern, impl in _LAUNCHER_IMPL:
            if pattern.search(real):
                return impl
    prog = program_in(argv)
    return impl_of_binary(prog) if prog else None


def resolve_impl(argv: list[str], mpi: str | None) -> str:
    """The MPI whose build runs a launch command: --mpi if given, else guessed
    from the command, else the only MPI mpiscope was built for."""
    return resolve_impl_and_why(argv, mpi)[0]


def resolve_impl_and_why(argv: list[str], mpi: str | None) -> tuple[str, str]:
    """(impl, how it was chosen, as words for a message) of :func:`resolve_impl`."""
    if mpi:
        return mpi, f"--mpi {mpi}"
    name = os.path.basename(argv[0]) if argv else ""
    impl = impl_of_launcher(argv)
    if impl is not None:
        return impl, f"the runtime for the launcher {name}"
    return _only_built(argv), "the only runtime built"


def _only_built(argv: list[str]) -> str:
    built = available_impls()
    if len(built) != 1:
        raise UserError(f"cannot tell which MPI '{argv[0]}' launches; pass --mpi "
                        f"({' or '.join(built) or 'none built'})")
    return built[0]
