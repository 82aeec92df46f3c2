"""Generate, from runtime/wrappers/functions.py, a C program that calls every wrapped
function with one erroneous argument at a time under MPI_ERRORS_RETURN
(issue 21, "Erroneous calls"; tests/runtime/counting/test_runtime_error_calls.py runs it).

Each case is one call in which every argument is valid and harmless except
one: a null handle (communicator, datatype, operation, group, window, file,
request, message), a rank of P + 5, a count of -1 or a tag of -5. The
harmless defaults keep a call that an MPI does not reject from moving data or
waiting (peers are MPI_PROC_NULL, collectives run on one rank, windows and
files are the program's own); with a null communicator, which every MPI
rejects, the peer is rank 0 instead, so that the runtime's rank translation
meets the null communicator. The program prints ``try <i>`` before case i
and ``case <i> <function> <variant> <error class>`` after it, so a driver can
tell a crash at case i apart and restart the program at case i + 1.
Arguments: first case, last case, then the cases to skip.

Left out of the sweep (LEFT_OUT): the hand-written lifecycle wrappers, and
calls that would start processes or wait for another job if an MPI accepted
their erroneous argument.
"""

from __future__ import annotations

import sys
from pathlib import Path

RUNTIME = Path(__file__).resolve().parent.parent / "runtime" / "wrappers"

LEFT_OUT = {
    "MPI_Init": "lifecycle (hand-written, tested in test_runtime_failures)",
    "MPI_Init_thread": "lifecycle (hand-written)",
    "MPI_Finalize": "lifecycle (hand-written)",
    "MPI_Abort": "ends the job by design",
    "MPI_Pcontrol": "has no erroneous argument (any level is valid)",
    "MPI_Comm_spawn": "would start processes if the MPI accepted the argument",
    "MPI_Comm_spawn_multiple": "would start processes if the MPI accepted the argument",
    "MPI_Comm_accept": "waits for another job to connect",
    "MPI_Comm_connect": "waits for another job to accept",
    "MPI_Comm_join": "waits on a socket",
    "MPI_File_delete": "has no handle, rank, count or datatype argument",
}

# Arguments that name a rank, and their harmless default.
RANKS = {"dest": "MPI_PROC_NULL", "source": "MPI_PROC_NULL", "target_rank": "MPI_PROC_NULL",
         "root": "0", "rank": "0", "local_leader": "0", "remote_leader": "0"}
COUNTS = {"count", "sendcount", "recvcount", "origin_count", "target_count", "result_count",
          "incount", "n", "ndims", "indegree", "outdegree", "nnodes", "size", "maxprocs",
          "partitions"}
INTS = ("int", "const int", "MPI_Count")     # a count may be an MPI_Count (MPI-4 MPI_X_c)
TAGS = {"tag", "sendtag", "recvtag"}
# Handles passed by pointer that the call reads (not only writes).
INOUT = {("MPI_Comm_free", "comm"), ("MPI_Comm_disconnect", "comm"), ("MPI_Type_free", "datatype"),
         ("MPI_Group_free", "group"), ("MPI_Win_free", "win"), ("MPI_File_close", "fh"),
         ("MPI_Start", "request"), ("MPI_Request_free", "request"), ("MPI_Cancel", "request"),
         ("MPI_Wait", "request"), ("MPI_Test", "request"), ("MPI_Mrecv", "message"),
         ("MPI_Imrecv", "message")}
NULLS = {"MPI_Comm": "MPI_COMM_NULL", "MPI_Datatype": "MPI_DATATYPE_NULL", "MPI_Op": "MPI_OP_NULL",
         "MPI_Group": "MPI_GROUP_NULL", "MPI_Win": "MPI_WIN_NULL", "MPI_File": "MPI_FILE_NULL",
         "MPI_Request": "MPI_REQUEST_NULL", "MPI_Message": "MPI_MESSAGE_NULL"}
DEFAULT_HANDLE = {"MPI_Comm": "MPI_COMM_WORLD", "MPI_Datatype": "MPI_INT", "MPI_Op": "MPI_SUM",
                  "MPI_Group": "world_group", "MPI_Win": "win", "MPI_File": "fh",
                  "MPI_Request": "MPI_REQUEST_NULL", "MPI_Message": "MPI_MESSAGE_NO_PROC",
                  "MPI_Info": "MPI_INFO_NULL"}


def load_functions(mpicc: str | None = None):
    """The wrapped functions; with mpicc, only the MPI-4 ones its mpi.h declares
    (those the runtime built with it wraps: gen_wrappers.py --mpicc)."""
    sys.path.insert(0, str(RUNTIME))
    from gen_wrappers import load_list, mpi_declared
    mod = load_list(RUNTIME / "functions.py")
    return mod.load(declared=mpi_declared(mod, mpicc) if mpicc else None)


def _default(f, a) -> str:
    """A valid, harmless C expression for argument a of function f."""
    t, n = a.type, a.name
    base = t.replace("const ", "").replace(" *", "").replace(" []", "").strip()
    if t in INTS:
        if n in RANKS:
            return RANKS[n]
        if n in COUNTS:
            return "1"
        if n == "whence":
            return "MPI_SEEK_SET"
        if n == "lock_type":
            return "MPI_LOCK_SHARED"
        if n == "amode":
            return "MPI_MODE_RDONLY"
        if n == "split_type":
            return "MPI_COMM_TYPE_SHARED"
        if n == "disp_unit":
            return "1"
        return "0"
    if t in ("MPI_Aint", "MPI_Offset"):
        return "8" if n == "size" else "1" if n == "disp_unit" else "0"
    if t in ("const void *", "void *"):
        return "(void *)buf"
    if t == "MPI_Status *":
        return "&st"
    if t == "MPI_Status []":
        return "sts"
    if t in ("int *", "MPI_Offset *"):
        return "&i_out" if t == "int *" else "&off_out"
    if t in ("int []", "const int []"):
        return "ones" if "count" in n or n in ("degrees", "maxprocs") else "zeros"
    if t == "const MPI_Count []":
        return "count_ones"
    if t == "int [][3]":
        return "ranges"
    if t in ("const MPI_Aint []",):
        return "aint_zeros"
    if t == "const MPI_Datatype []":
        return "types"
    if t == "const MPI_Info []":
        return "infos"
    if t == "MPI_Request []":
        return "reqs"
    if t == "const char *":
        return '"native"' if n == "datarep" else '"errcalls.dat"'
    if t.endswith("*") and base in NULLS or base == "MPI_Message":
        var = {"MPI_Comm": "comm_out", "MPI_Datatype": "type_out", "MPI_Group": "group_out",
               "MPI_Win": "win_out", "MPI_File": "file_out", "MPI_Request": "req_out",
               "MPI_Message": "msg_io"}[base]
        return "&" + var
    if base == "MPI_Comm" and "eighbor_" in f.name:
        return "cart"      # MPICH reads garbage degrees on a communicator without topology
    if base in DEFAULT_HANDLE:
        return DEFAULT_HANDLE[base]
    raise ValueError(f"{f.name}: no default for {t} {n}")


def variants(f) -> list[tuple[str, int, str, str]]:
    """(variant name, argument index, setup statement, C expression) per erroneous argument."""
    out = []
    for i, a in enumerate(f.args):
        t, n = a.type, a.name
        base = t.replace("const ", "").replace(" *", "").strip()
        if t in NULLS:
            out.append((f"null-{n}", i, "", NULLS[t]))
        elif t.endswith(" *") and base in NULLS and ((f.name, n) in INOUT):
            var = "bad_" + base[4:].lower()
            out.append((f"null-{n}", i, f"{var} = {NULLS[base]};", "&" + var))
        elif t in INTS and n in RANKS:
            out.append((f"rank-{n}", i, "", "size + 5"))
        elif t in INTS and n in COUNTS:
            out.append((f"count-{n}", i, "", "-1"))
        elif t in INTS and n in TAGS:
            out.append((f"tag-{n}", i, "", "-5"))
    return out


def cases(functions) -> list[tuple[str, str, str, str]]:
    """(function, variant, setup, call) for every case, in list order."""
    out = []
    for f in functions:
        if f.name in LEFT_OUT or f.hand:
            continue
        for name, i, setup, bad in variants(f):
            args = [bad if k == i else _default(f, a) for k, a in enumerate(f.args)]
            if name.startswith("null-comm"):
                # A real peer, not MPI_PROC_NULL: the runtime translates a real
                # rank through the communicator (this crashed on MPI_COMM_NULL).
                args = [("0" if k != i and a.name in ("dest", "source", "target_rank") else x)
                        for k, (a, x) in enumerate(zip(f.args, args))]
            msg = "msg_io = MPI_MESSAGE_NO_PROC; " if any(a.type == "MPI_Message *" for a in f.args) else ""
            out.append((f.name, name, msg + setup, f"{f.name}({', '.join(args)})"))
    return out


PROLOGUE = r"""/* Generated by tests/error_calls.py from runtime/wrappers/functions.py: DO NOT EDIT. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void done(int i, const char *func, const char *variant, int rc, MPI_Request req)
{
    int cls = rc;
    if (rc != MPI_SUCCESS)
        MPI_Error_class(rc, &cls);
    else if (req != MPI_REQUEST_NULL)    /* accepted after all: finish it (it moves nothing) */
        MPI_Wait(&req, MPI_STATUS_IGNORE);
    printf("case %d %s %s %d\n", i, func, variant, cls);
    fflush(stdout);
}

int main(int argc, char **argv)
{
    static char buf[1 << 16];
    int first = argc > 1 ? atoi(argv[1]) : 0, last = argc > 2 ? atoi(argv[2]) : 1 << 30;
    int size, rank, i_out = 0;
    static char skip[NCASES + 1];
    for (int k = 3; k < argc; k++)       /* cases not to run (they crash the MPI itself) */
        if (atoi(argv[k]) >= 0 && atoi(argv[k]) < NCASES)
            skip[atoi(argv[k])] = 1;
    int ones[64], zeros[64], ranges[1][3] = {{0, 0, 1}};
    MPI_Aint aint_zeros[64];
    MPI_Count count_ones[64];
    MPI_Datatype types[64], type_out, bad_datatype;
    MPI_Info infos[64];
    MPI_Offset off_out;
    MPI_Status st, sts[64];
    MPI_Request reqs[64], req_out, bad_request;
    MPI_Comm comm_out, bad_comm, cart;
    MPI_Group world_group, group_out, bad_group;
    MPI_Win win, win_out, bad_win;
    MPI_File fh, file_out, bad_file;
    MPI_Message msg_io, bad_message;
    MPI_Init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_group(MPI_COMM_WORLD, &world_group);
    for (int k = 0; k < 64; k++) {
        ones[k] = 1, zeros[k] = 0, aint_zeros[k] = 0, types[k] = MPI_INT, infos[k] = MPI_INFO_NULL;
        count_ones[k] = 1;
        reqs[k] = MPI_REQUEST_NULL;
    }
    int one = 1, periodic = 1;
    MPI_Cart_create(MPI_COMM_WORLD, 1, &one, &periodic, 0, &cart);
    MPI_Win_create(buf + 32768, 1024, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    char fname[64];
    snprintf(fname, sizeof fname, "errcalls.%d.dat", rank);
    MPI_File_open(MPI_COMM_SELF, fname, MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE,
                  MPI_INFO_NULL, &fh);
    MPI_File_set_errhandler(fh, MPI_ERRORS_RETURN);
    (void)type_out; (void)off_out; (void)comm_out; (void)group_out; (void)win_out; (void)file_out;
    (void)bad_datatype; (void)bad_request; (void)bad_comm; (void)bad_group; (void)bad_win;
    (void)bad_file; (void)bad_message; (void)i_out;
"""

EPILOGUE = r"""
    printf("cases done\n");
    fflush(stdout);
    MPI_File_close(&fh);
    MPI_Win_free(&win);
    MPI_Group_free(&world_group);
    MPI_Comm_free(&cart);
    MPI_Finalize();
    return 0;
}
"""


def program(functions=None) -> tuple[str, list[tuple[str, str]]]:
    """The C source and the (function, variant) of every case, by case number
    (functions: default, the whole list)."""
    all_cases = cases(functions if functions is not None else load_functions())
    body = []
    for i, (func, name, setup, call) in enumerate(all_cases):
        body.append(f"    if ({i} >= first && {i} <= last && !skip[{i}]) {{\n"
                    f"        printf(\"try {i}\\n\"); fflush(stdout);\n"
                    f"        req_out = MPI_REQUEST_NULL; {setup}\n"
                    f"        int rc = {call};\n"
                    f"        done({i}, \"{func}\", \"{name}\", rc, req_out);\n"
                    f"    }}\n")
    head = PROLOGUE.replace("#include <string.h>\n", f"#include <string.h>\n\n#define NCASES {len(all_cases)}\n")
    return head + "".join(body) + EPILOGUE, [(f, n) for f, n, _, _ in all_cases]


if __name__ == "__main__":
    src, listed = program()
    sys.stdout.write(src)
    print(f"/* {len(listed)} cases */")
