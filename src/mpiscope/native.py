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


def impl_of_binary(path: str) -> str | None:
    """Which MPI a dynamically linked program uses, from the libraries it needs."""
    exe = shutil.which(path) or path
    try:
        out = subprocess.run(["ldd", exe], capture_output=True, text=True, timeout=20).stdout
    except (OSError, subprocess.TimeoutExpired):
        return None
    if "libmpi.so.40" in out or "libopen-rte" in out or "libopen-pal" in out:
        return "openmpi"
    if "libmpich" in out or "libmpi.so.12" in out:
        if "intel" in out.lower():
            return "intelmpi"
        return "mpich"
    return None


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
    # The program is the first argument that is an executable file.
    for arg in argv[1:]:
        cand = shutil.which(arg) if "/" not in arg else (arg if os.access(arg, os.X_OK) else None)
        if cand and os.path.isfile(cand):
            impl = impl_of_binary(cand)
            if impl:
                return impl
    return None


def resolve_impl(argv: list[str], mpi: str | None) -> str:
    """The MPI whose build runs a launch command: --mpi if given, else guessed
    from the command, else the only MPI mpiscope was built for."""
    if mpi:
        return mpi
    impl = impl_of_launcher(argv)
    if impl is None:
        built = available_impls()
        if len(built) != 1:
            raise UserError(f"cannot tell which MPI '{argv[0]}' launches; pass --mpi "
                            f"({' or '.join(built) or 'none built'})")
        impl = built[0]
    return impl
