#!/usr/bin/env python3
"""Generate the Fortran-symbol wrappers of libmpiscope.so from the one list of
wrapped MPI functions (runtime/wrappers/functions.py, the same list gen_wrappers.py reads).

    gen_fortran.py --impl openmpi|mpich --out fortran_wrappers.c [--symbols symbols.txt]

Each wrapper converts its Fortran arguments (handles with MPI_*_f2c, the
Fortran sentinels MPI_BOTTOM / MPI_IN_PLACE / MPI_STATUS(ES)_IGNORE, CHARACTER
arguments with their hidden length) and calls the C wrapper MPI_<Name> of the
runtime, which records the call once and calls PMPI_<Name>.

Which Fortran symbols get a wrapper depends on how the MPI's own Fortran layer
reaches C (docs/fortran.md has the evidence):
  * Open MPI 4.x: mpif.h / use mpi (mpi_send_, mpi_send__, mpi_send, MPI_SEND)
    and use mpi_f08 (mpi_send_f08_) all call PMPI_* directly, so every listed
    function gets all five symbols;
  * MPICH 4.x: mpif.h / use mpi and mpi_f08's choice-buffer routines
    (mpi_send_f08ts_) call the C MPI_* functions, which the C wrappers already
    count: no wrapper (a second one would count twice). mpi_f08's routines
    without a choice buffer (mpi_wait_f08_, mpi_init_f08_, ...) call PMPI_*
    directly: those get their _f08_ symbol.
MPI-4 entries of the list are read only with --mpicc and where that MPI's
mpi.h declares them (as for the C wrappers); on MPICH that gives mpi_f08's
buffer-less MPI-4 routines (mpi_pready_f08_...) their wrapper, the rest
reaching the C wrappers. Large-count MPI_X_c get no Fortran wrapper
(docs/fortran.md, "MPI-4").
MPI_Pcontrol is written by hand (fortran_pcontrol.c): its name argument is
IPM's extension, not a rule of this generator.

Functions whose arguments this generator cannot convert are listed in the
generated file's header and with --symbols, never silently dropped.
Only the standard library is used; the output has no timestamp.
"""

from __future__ import annotations

import argparse
import importlib.util
import re
import sys
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent

HANDLES = ("Comm", "Datatype", "Op", "Group", "Win", "File", "Info", "Errhandler",
           "Request", "Message")

# Written by hand in fortran_pcontrol.c.
HAND_WRITTEN = {"MPI_Pcontrol"}

# MPI_Init's argc/argv do not exist in Fortran; the C call gets NULL for both.
ARGV_TYPES = {"char ***"}


@dataclass(frozen=True)
class Param:
    ctype: str          # normalised C type, e.g. "MPI_Request *", "int []", "void *"
    name: str


@dataclass(frozen=True)
class Function:
    name: str           # "MPI_Send"
    params: tuple[Param, ...]


# --- reading the list -------------------------------------------------------

def normalise_type(ctype: str) -> str:
    """'const  MPI_Datatype' -> 'MPI_Datatype'; 'int*' -> 'int *'; arrays keep []."""
    t = re.sub(r"\bconst\b", " ", ctype)
    t = t.replace("*", " * ").replace("[", " [").replace("] [", "][")
    t = " ".join(t.split())
    t = t.replace("* *", "**").replace("** *", "***")
    return t


def parse_prototype(proto: str) -> Function:
    """A C prototype ('int MPI_Send(const void *buf, int count, ...)') as a Function."""
    m = re.match(r"\s*int\s+(MPI_\w+)\s*\((.*)\)\s*;?\s*$", proto, re.S)
    if not m:
        raise ValueError(f"not an MPI prototype: {proto!r}")
    params = []
    body = m.group(2).strip()
    if body and body != "void":
        for part in body.split(","):
            part = part.strip()
            if part == "...":
                params.append(Param("...", "..."))
                continue
            pm = re.match(r"(.*?)(\w+)\s*((?:\[\s*\w*\s*\])*)$", part, re.S)
            if not pm:
                raise ValueError(f"cannot parse argument {part!r} of {m.group(1)}")
            ctype = pm.group(1) + ("".join("[" + d.strip("[] ") + "]"
                                           for d in re.findall(r"\[[^\]]*\]", pm.group(3)))
                                   if pm.group(3) else "")
            params.append(Param(normalise_type(ctype), pm.group(2)))
    return Function(m.group(1), tuple(params))


def load_functions(list_module: Path, mpicc: str | None = None) -> list[Function]:
    """The wrapped functions, read through runtime/wrappers/functions.py's load().
    MPI-4 entries only with mpicc, where that MPI's mpi.h declares them (the C
    wrappers exist only there: gen_wrappers.mpi_declared), and never the
    large-count MPI_X_c (docs/fortran.md, "MPI-4")."""
    spec = importlib.util.spec_from_file_location("mpiscope_functions", list_module)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    declared = set()
    if mpicc:
        sys.path.insert(0, str(list_module.parent))
        from gen_wrappers import mpi_declared
        declared = mpi_declared(mod, mpicc)
    return [parse_prototype(prototype_of(entry)) for entry in mod.load(declared=declared)
            if not (getattr(entry, "mpi4", False) and entry.name.endswith("_c"))]


def prototype_of(entry) -> str:
    """The C prototype text of one list entry (whatever shape load() returns)."""
    for attr in ("prototype", "proto", "c_prototype", "signature"):
        val = getattr(entry, attr, None) if not isinstance(entry, dict) else entry.get(attr)
        if isinstance(val, str) and "(" in val:
            return val
    name = entry["name"] if isinstance(entry, dict) else entry.name
    args = entry["args"] if isinstance(entry, dict) else getattr(entry, "args", None)
    if args is None:
        raise ValueError(f"cannot find the C signature of list entry {name}")
    text = []
    for a in args:
        ctype = a["type"] if isinstance(a, dict) else a.type
        aname = a["name"] if isinstance(a, dict) else a.name
        text.append(f"{ctype} {aname}")
    return f"int {name}({', '.join(text)})"


# --- classifying arguments ---------------------------------------------------

INOUT_HANDLE_FUNCS = re.compile(
    r"_free$|^MPI_(Wait|Test|Start|Cancel|Mrecv|Imrecv|File_close|Type_commit|Comm_disconnect)")


def handle_of(ctype: str) -> str | None:
    m = re.match(r"MPI_(\w+)", ctype)
    return m.group(1) if m and m.group(1) in HANDLES else None


def conv(handle: str, way: str) -> str:
    """The PMPI conversion function of a handle type: conv('Datatype', 'f2c') -> PMPI_Type_f2c."""
    return f"PMPI_{'Type' if handle == 'Datatype' else handle}_{way}"


def classify(fn: Function, i: int) -> str:
    """The conversion kind of argument i of fn (see emit_function)."""
    p = fn.params[i]
    t = p.ctype
    if t == "...":
        return "unsupported"
    if t in ARGV_TYPES:
        return "argv"
    if t == "int *" and i + 1 < len(fn.params) and fn.params[i + 1].ctype in ARGV_TYPES:
        return "argv"
    if t == "void *":
        return "rawptr" if p.name == "baseptr" else "buf"
    if t == "int":
        return "int"
    if t == "int *":
        if p.name in ("index", "indx"):
            return "index"
        if p.name == "outcount":
            return "outcount"
        return "pass"
    if t.startswith("int ["):
        if p.name in ("sourceweights", "destweights", "weights"):
            return "weights"
        return "indices" if p.name == "array_of_indices" else "pass"
    if t in ("MPI_Aint", "MPI_Offset", "MPI_Count"):
        return "deref"
    if t in ("MPI_Aint *", "MPI_Offset *", "MPI_Count *", "MPI_Aint []", "MPI_Count []"):
        return "pass"
    if t == "MPI_Status *":
        return "status"
    if t == "MPI_Status []":
        return "statuses"
    if t == "char *":
        return "string"
    h = handle_of(t)
    if h and t == f"MPI_{h}":
        return "h_in"
    if h and t == f"MPI_{h} *":
        return "h_inout" if INOUT_HANDLE_FUNCS.search(fn.name) else "h_out"
    if h and t == f"MPI_{h} []":
        return "harr_inout" if h == "Request" else "harr_in"
    return "unsupported"


def array_length(fn: Function, i: int) -> str | None:
    """C expression for the length of array argument i (None: cannot tell)."""
    p = fn.params[i]
    names = [q.name for q in fn.params]
    if p.name in ("sendtypes", "recvtypes"):
        comm = next((q.name for q in fn.params if q.ctype == "MPI_Comm"), None)
        if comm is None:
            return None
        side = "1" if p.name == "sendtypes" else "0"
        neighbor = "1" if "neighbor" in fn.name.lower() else "0"
        return f"mpiscope_f_types_len(c_{comm}, {neighbor}, {side})"
    for cnt in ("count", "incount"):
        if cnt in names and names.index(cnt) < i:
            return f"(int)*{cnt}"
    return None


# --- emitting C --------------------------------------------------------------

def fortran_symbols(fn: Function, impl: str) -> list[str]:
    low = fn.name.lower()
    if impl == "openmpi":
        return [low + "_", low + "__", low, fn.name.upper(), low + "_f08_"]
    if impl == "mpich":
        kinds = [classify(fn, i) for i in range(len(fn.params))]
        return [] if "buf" in kinds else [low + "_f08_"]
    raise ValueError(f"unknown MPI implementation {impl!r}")


# Kinds converted by one expression: (Fortran parameter, C argument) templates.
SIMPLE = {
    "buf": ("void *{n}", "mpiscope_f_buf({n})"),
    "rawptr": ("void *{n}", "{n}"),
    "int": ("MPI_Fint *{n}", "(int)*{n}"),
    "weights": ("MPI_Fint *{n}", "mpiscope_f_weights({n})"),
    "deref": ("{t} *{n}", "*{n}"),
    "status": ("MPI_Fint *{n}",
               "MPISCOPE_F_IS_STATUS_IGNORE({n}) ? MPI_STATUS_IGNORE : (MPI_Status *){n}"),
    "statuses": ("MPI_Fint *{n}",
                 "MPISCOPE_F_IS_STATUSES_IGNORE({n}) ? MPI_STATUSES_IGNORE : (MPI_Status *){n}"),
}


def emit_function(fn: Function, impl: str) -> tuple[str | None, str | None]:
    """(C code, None) for a wrapper, or (None, reason) if it cannot be generated."""
    kinds = [classify(fn, i) for i in range(len(fn.params))]
    bad = [fn.params[i] for i, k in enumerate(kinds) if k == "unsupported"]
    if bad:
        return None, "argument types " + ", ".join(f"{p.ctype} {p.name}" for p in bad)
    symbols = fortran_symbols(fn, impl)
    if not symbols:
        return None, None
    fname = "mpiscope_f_" + fn.name[4:].lower()
    # pre: scalar conversions; arrays: temporaries (which may need a converted
    # communicator, so they come after); post: results back to Fortran.
    fargs, hidden, pre, arrays, post, cargs, temps = [], [], [], [], [], [], []
    for i, (p, k) in enumerate(zip(fn.params, kinds)):
        n = p.name
        if k == "argv":
            cargs.append("NULL")
            continue
        if k in SIMPLE:
            ftmpl, ctmpl = SIMPLE[k]
            fargs.append(ftmpl.format(n=n, t=p.ctype))
            cargs.append(ctmpl.format(n=n))
        elif k in ("pass", "index", "outcount", "indices"):
            base = p.ctype.split(" [")[0].split(" *")[0]
            ftype = "MPI_Fint" if base == "int" else base
            fargs.append(f"{ftype} *{n}")
            cast = "(int (*)[3])" if p.ctype == "int [][3]" else ""
            cargs.append(cast + n)
            if k == "index":
                post.append(f"if (rc == MPI_SUCCESS && *{n} != MPI_UNDEFINED) *{n} += MPISCOPE_F_INDEX_BASE;")
            if k == "indices":
                outc = next(q.name for q, kk in zip(fn.params, kinds) if kk == "outcount")
                post.append(f"if (rc == MPI_SUCCESS && *{outc} != MPI_UNDEFINED)")
                post.append(f"    for (int i = 0; i < *{outc}; i++) {n}[i] += MPISCOPE_F_INDEX_BASE;")
        elif k == "string":
            fargs.append(f"char *{n}")
            hidden.append(f"mpiscope_flen_t {n}_len")
            pre.append(f"char c_{n}_buf[MPISCOPE_F_STRING_CAP];")
            cargs.append(f"mpiscope_f_string({n}, {n}_len, c_{n}_buf, sizeof c_{n}_buf)")
        elif k == "h_in":
            h = handle_of(p.ctype)
            fargs.append(f"MPI_Fint *{n}")
            pre.append(f"MPI_{h} c_{n} = {conv(h, 'f2c')}(*{n});")
            cargs.append(f"c_{n}")
        elif k in ("h_out", "h_inout"):
            h = handle_of(p.ctype)
            fargs.append(f"MPI_Fint *{n}")
            if k == "h_inout":
                pre.append(f"MPI_{h} c_{n} = {conv(h, 'f2c')}(*{n});")
                post.append(f"*{n} = {conv(h, 'c2f')}(c_{n});")
            else:
                pre.append(f"MPI_{h} c_{n};")
                post.append(f"if (rc == MPI_SUCCESS) *{n} = {conv(h, 'c2f')}(c_{n});")
            cargs.append(f"&c_{n}")
        elif k in ("harr_in", "harr_inout"):
            h = handle_of(p.ctype)
            length = array_length(fn, i)
            if length is None:
                return None, f"no length for array argument {n}"
            fargs.append(f"MPI_Fint *{n}")
            arrays.append(f"int n_{n} = {length};")
            arrays.append(f"MPISCOPE_F_TMP(MPI_{h}, c_{n}, n_{n});")
            temps.append((h, n, k))
            cargs.append(f"c_{n}")
    if temps:
        arrays.append("if (" + " || ".join(f"c_{n} == NULL" for _, n, _ in temps) + ") {")
        arrays += [f"    MPISCOPE_F_TMP_FREE(c_{n});" for _, n, _ in temps]
        arrays += ["    if (ierr) *ierr = MPI_ERR_NO_MEM;", "    return;", "}"]
        arrays += [f"for (int i = 0; i < n_{n}; i++) c_{n}[i] = {conv(h, 'f2c')}({n}[i]);"
                   for h, n, _ in temps]
        post += [f"for (int i = 0; i < n_{n}; i++) {n}[i] = {conv(h, 'c2f')}(c_{n}[i]);"
                 for h, n, k in temps if k == "harr_inout"]
        post += [f"MPISCOPE_F_TMP_FREE(c_{n});" for _, n, _ in temps]
    fargs.append("MPI_Fint *ierr")
    fargs.extend(hidden)
    lines = [f"/* {fn.name} */",
             f"static void {fname}({', '.join(fargs)})", "{", "    int rc;"]
    lines += ["    " + s for s in pre + arrays]
    lines.append(f"    rc = {fn.name}({', '.join(cargs)});")
    lines += ["    " + s for s in post]
    lines.append("    if (ierr) *ierr = rc;")
    lines.append("}")
    for sym in symbols:
        lines.append(f'extern __typeof__({fname}) {sym} __attribute__((alias("{fname}")));')
    return "\n".join(lines) + "\n", None


def generate(functions: list[Function], impl: str) -> tuple[str, dict[str, list[str]], dict[str, str]]:
    """(C source, {function: symbols}, {function: reason not wrapped})."""
    bodies, wrapped, skipped = [], {}, {}
    for fn in sorted(functions, key=lambda f: f.name):
        if fn.name in HAND_WRITTEN:
            continue
        code, reason = emit_function(fn, impl)
        if code:
            bodies.append(code)
            wrapped[fn.name] = fortran_symbols(fn, impl)
        elif reason:
            skipped[fn.name] = reason
    head = [f"/* Generated by runtime/fortran/gen_fortran.py for {impl}: DO NOT EDIT. */",
            "/* Fortran-symbol wrappers: convert, then call the C wrapper MPI_<Name>."]
    if skipped:
        head.append(" * Not wrapped from Fortran (arguments this generator cannot convert):")
        head += [f" *   {name}: {why}" for name, why in sorted(skipped.items())]
    head += [" */", '#include "fortran_support.h"', ""]
    return "\n".join(head) + "\n" + "\n".join(bodies), wrapped, skipped


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--impl", required=True, choices=("openmpi", "mpich"))
    ap.add_argument("--out", required=True, type=Path)
    ap.add_argument("--list", type=Path, default=HERE.parent / "wrappers" / "functions.py",
                    help="the module whose load() returns the wrapped functions")
    ap.add_argument("--symbols", type=Path,
                    help="also write 'function symbol...' lines (and '# not wrapped' lines)")
    ap.add_argument("--mpicc", help="the MPI's C compiler: its mpi.h says which MPI-4 functions exist")
    args = ap.parse_args(argv)
    functions = load_functions(args.list, args.mpicc)
    source, wrapped, skipped = generate(functions, args.impl)
    write_if_changed(args.out, source)
    if args.symbols:
        lines = [f"{name} {' '.join(syms)}" for name, syms in sorted(wrapped.items())]
        lines += [f"# not wrapped: {name}: {why}" for name, why in sorted(skipped.items())]
        write_if_changed(args.symbols, "\n".join(lines) + "\n")
    return 0


def write_if_changed(path: Path, text: str) -> None:
    """Leave an unchanged file alone so the build does not recompile it."""
    if path.exists() and path.read_text() == text:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


if __name__ == "__main__":
    sys.exit(main())
