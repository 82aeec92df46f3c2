"""runtime/fortran/gen_fortran.py: the right Fortran symbols, for the right functions.

The symbol sets are checked against the MPI libraries installed here: a
wrapper for a symbol the MPI's Fortran layer does not call would be dead
code, a missing one would lose calls, and on MPICH a wrapper for a routine
that reaches the C MPI_* function would count it twice.
"""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys

import pytest

import mpitest
from mpiscope import native

GEN_PATH = mpitest.REPO / "runtime" / "fortran" / "gen_fortran.py"
_spec = importlib.util.spec_from_file_location("gen_fortran", GEN_PATH)
gen = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = gen
_spec.loader.exec_module(gen)

WAITSOME = ("int MPI_Waitsome(int incount, MPI_Request array_of_requests[], int *outcount, "
            "int array_of_indices[], MPI_Status array_of_statuses[])")
SEND = "int MPI_Send(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm)"
FILE_OPEN = ("int MPI_File_open(MPI_Comm comm, const char *filename, int amode, MPI_Info info, "
             "MPI_File *fh)")
ALLTOALLW = ("int MPI_Alltoallw(const void *sendbuf, const int sendcounts[], const int sdispls[], "
             "const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[], "
             "const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm)")


def test_prototypes_parse_into_normalised_types():
    fn = gen.parse_prototype(WAITSOME)
    assert fn.name == "MPI_Waitsome"
    assert [(p.ctype, p.name) for p in fn.params] == [
        ("int", "incount"), ("MPI_Request []", "array_of_requests"), ("int *", "outcount"),
        ("int []", "array_of_indices"), ("MPI_Status []", "array_of_statuses")]
    grp = gen.parse_prototype("int MPI_Group_range_incl(MPI_Group group, int n, int ranges[][3], "
                              "MPI_Group *newgroup)")
    assert grp.params[2].ctype == "int [][3]"
    with pytest.raises(ValueError):
        gen.parse_prototype("void MPI_Nothing(int)")


def test_arguments_are_classified_by_type_and_role():
    kinds = lambda proto: [gen.classify(f, i) for f in [gen.parse_prototype(proto)]
                           for i in range(len(f.params))]
    assert kinds(WAITSOME) == ["int", "harr_inout", "outcount", "indices", "statuses"]
    assert kinds(SEND) == ["buf", "int", "h_in", "int", "int", "h_in"]
    assert kinds(FILE_OPEN) == ["h_in", "string", "int", "h_in", "h_out"]
    assert kinds("int MPI_Wait(MPI_Request *request, MPI_Status *status)") == ["h_inout", "status"]
    assert kinds("int MPI_Isend(const void *buf, int count, MPI_Datatype datatype, int dest, "
                 "int tag, MPI_Comm comm, MPI_Request *request)")[-1] == "h_out"
    assert kinds("int MPI_Init(int *argc, char ***argv)") == ["argv", "argv"]
    assert kinds("int MPI_Pcontrol(const int level, ...)")[-1] == "unsupported"


def test_generated_code_converts_and_calls_the_c_wrapper():
    code, why = gen.emit_function(gen.parse_prototype(WAITSOME), "openmpi")
    assert why is None
    assert "rc = MPI_Waitsome((int)*incount, c_array_of_requests, outcount" in code
    assert "array_of_indices[i] += MPISCOPE_F_INDEX_BASE" in code
    assert "array_of_requests[i] = PMPI_Request_c2f(c_array_of_requests[i])" in code
    for sym in ("mpi_waitsome_", "mpi_waitsome__", "mpi_waitsome", "MPI_WAITSOME",
                "mpi_waitsome_f08_"):
        assert f' {sym} __attribute__((alias("mpiscope_f_waitsome")))' in code
    send, _ = gen.emit_function(gen.parse_prototype(SEND), "openmpi")
    assert "mpiscope_f_buf(buf)" in send and "PMPI_Type_f2c(*datatype)" in send
    fopen, _ = gen.emit_function(gen.parse_prototype(FILE_OPEN), "openmpi")
    assert "mpiscope_flen_t filename_len" in fopen.split("{")[0]  # hidden length comes last
    assert "if (rc == MPI_SUCCESS) *fh = PMPI_File_c2f(c_fh);" in fopen
    a2aw, _ = gen.emit_function(gen.parse_prototype(ALLTOALLW), "openmpi")
    assert "mpiscope_f_types_len(c_comm, 0, 1)" in a2aw
    assert a2aw.index("MPI_Comm c_comm") < a2aw.index("mpiscope_f_types_len")


def test_mpich_wraps_only_mpi_f08_routines_without_a_choice_buffer():
    # MPICH's mpif.h, use mpi and mpi_f08 choice-buffer routines call the C
    # MPI_* functions: a wrapper would count twice.
    assert gen.fortran_symbols(gen.parse_prototype(SEND), "mpich") == []
    assert gen.fortran_symbols(gen.parse_prototype(WAITSOME), "mpich") == ["mpi_waitsome_f08_"]
    win = gen.parse_prototype("int MPI_Win_allocate(MPI_Aint size, int disp_unit, MPI_Info info, "
                              "MPI_Comm comm, void *baseptr, MPI_Win *win)")
    assert gen.fortran_symbols(win, "mpich") == ["mpi_win_allocate_f08_"]
    src, wrapped, _ = gen.generate([gen.parse_prototype(SEND), gen.parse_prototype(WAITSOME),
                                    gen.parse_prototype("int MPI_Pcontrol(const int level, ...)")],
                                   "mpich")
    assert set(wrapped) == {"MPI_Waitsome"}  # Pcontrol is hand-written (fortran_pcontrol.c)
    assert "DO NOT EDIT" in src


# --- against the built library and the installed MPIs ------------------------

def dynamic_symbols(lib: str, defined: bool = True) -> set[str]:
    args = ["nm", "-D", "--defined-only", lib] if defined else ["nm", "-D", lib]
    out = subprocess.run(args, capture_output=True, text=True, check=True).stdout
    return {line.split()[-1].split("@")[0] for line in out.splitlines() if line.strip()}


def fortran_libraries(impl: str) -> list[str]:
    """The MPI's Fortran libraries, from what the built Fortran test programs load."""
    libs = set()
    for prog in ("fortran_mpifh", "fortran_f08"):
        out = subprocess.run(["ldd", str(native.program(impl, f"tests/{prog}"))],
                             capture_output=True, text=True, check=True).stdout
        libs |= set(re.findall(r"=> (\S*(?:libmpi_mpifh|libmpi_usempif08|libmpichfort|libmpifort)"
                               r"\S*)", out))
    assert libs, f"no Fortran MPI library found for {impl}"
    return sorted(libs)


def symbol_file(impl: str) -> tuple[dict[str, list[str]], set[str]]:
    path = native.impl_dir(impl) / "share" / "mpiscope" / "fortran_symbols.txt"
    wrapped, skipped = {}, set()
    for line in path.read_text().splitlines():
        if line.startswith("# not wrapped: "):
            skipped.add(line.split(":")[1].strip())
        elif line.strip():
            name, *syms = line.split()
            wrapped[name] = syms
    return wrapped, skipped


def listed_functions(impl: str) -> list:
    """What the build for impl wraps: MPI-4 routines where its mpi.h declares them."""
    return gen.load_functions(mpitest.REPO / "runtime" / "wrappers" / "functions.py",
                              f"mpicc.{impl}")


def test_library_defines_exactly_the_generated_symbols(impl):
    wrapped, _ = symbol_file(impl)
    ours = dynamic_symbols(str(native.runtime_library(impl)))
    theirs = set().union(*(dynamic_symbols(lib) for lib in fortran_libraries(impl)))
    for name, syms in wrapped.items():
        for sym in syms:
            assert sym in ours, f"{sym} ({name}) not exported by libmpiscope.so"
            assert sym in theirs, f"{sym} ({name}): no such symbol in {impl}'s Fortran libraries"
    pcontrol = {"mpi_pcontrol_", "mpi_pcontrol__", "mpi_pcontrol", "MPI_PCONTROL",
                "mpi_pcontrol_f08_"}
    assert pcontrol <= ours
    assert "mpiscope_f_send" not in ours  # wrappers are static, only their aliases are global


def test_every_fortran_entry_that_bypasses_c_is_wrapped(impl):
    wrapped, skipped = symbol_file(impl)
    theirs = set().union(*(dynamic_symbols(lib) for lib in fortran_libraries(impl)))
    ours = dynamic_symbols(str(native.runtime_library(impl)))
    for fn in listed_functions(impl):
        if fn.name in gen.HAND_WRITTEN:
            continue
        low = fn.name.lower()
        if impl == "openmpi":
            # Open MPI's mpif.h / use mpi / mpi_f08 routines all call PMPI_* directly.
            needed = {s for s in (low + "_", low + "_f08_") if s in theirs}
        else:
            # MPICH: only mpi_f08's routines without a choice buffer (named
            # mpi_x_f08_, not mpi_x_f08ts_) call PMPI_* directly.
            needed = {low + "_f08_"} & theirs
            assert low + "_" not in ours, f"{low}_ would count {fn.name} twice on MPICH"
        if needed:
            assert fn.name in wrapped or fn.name in skipped, f"{fn.name} from Fortran is lost"
            if fn.name in wrapped:
                assert needed <= set(wrapped[fn.name])


def test_functions_not_wrapped_are_documented(impl):
    _, skipped = symbol_file(impl)
    doc = (mpitest.REPO / "docs" / "fortran.md").read_text()
    for name in skipped:
        assert name in doc, f"{name} is not wrapped from Fortran but docs/fortran.md does not say so"
