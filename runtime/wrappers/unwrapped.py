"""The MPI functions mpiscope deliberately does not wrap, and why.

runtime/wrappers/exports_diff.py compares runtime/wrappers/functions.py with every ``MPI_``
function each installed MPI library exports; every exported function must be
either wrapped (a line of functions.LIST) or matched here by a category
(the first that matches names its reason) (tests/runtime/wrappers/test_runtime_exports.py checks both MPIs). docs/runtime.md
("What is not wrapped") renders this table.

A function belongs in a profile when it moves data, synchronizes ranks, waits,
creates or frees what later calls are counted on (communicators, windows,
files), or touches the file system. What stays out is local: queries and
bookkeeping that cost nanoseconds and say nothing about communication, and
whose wrapping would only add overhead (MPI_Wtime is called in tight loops).
"""

from __future__ import annotations

import re

# (category, reason, regular expression matched against the whole name)
CATEGORIES = [
    ("MPI-4 sessions",
     "a program that uses only sessions never calls MPI_Init, where the runtime starts "
     "recording, so none of its calls would be recorded; the session calls are bookkeeping "
     "(process sets, info, error handlers). Not done: a program that mixes both models and makes "
     "communicators with MPI_Comm_create_from_group / MPI_Intercomm_create_from_groups has their "
     "calls counted, but those communicators are not named by how they were made (MPICH 4.0 "
     "exports these functions, Open MPI 4.1 does not)",
     r"MPI_Session_\w+|MPI_Comm_create_from_group|MPI_Intercomm_create_from_groups"
     r"|MPI_Group_from_session_pset"),
    ("removed MPI-1 functions",
     "deleted from the standard in MPI-3.0 (MPI_Address, MPI_Type_struct, MPI_Attr_put, "
     "MPI_Errhandler_set...); codes that still call them call their replacements' "
     "bookkeeping, which is not wrapped either",
     r"MPI_(Address|Type_(extent|hindexed|hvector|lb|ub|struct)|Attr_(delete|get|put)"
     r"|Keyval_(create|free)|Errhandler_(create|get|set))"),
    ("datatype construction and queries",
     "local: building, committing, naming and querying datatypes moves nothing "
     "(MPI_Type_free is wrapped: it invalidates the runtime's type-size cache)",
     r"MPI_Type_(?!free$)\w+|MPI_Get_address|MPI_Aint_(add|diff)|MPI_Get_(count|elements|elements_x)"
     r"|MPI_Status_set_\w+|MPI_Test_cancelled|MPI_Register_datarep"),
    ("packing",
     "local copies into or out of a user buffer; their time is the application's "
     "computation, and the message that carries the packed buffer is counted",
     r"MPI_(Pack|Unpack|Pack_size|Pack_external|Unpack_external|Pack_external_size)"),
    ("local queries of communicators, groups and topologies",
     "answered from local data: ranks, sizes, comparisons, neighbour lists, coordinates "
     "(MPI_Comm_rank and MPI_Comm_size are wrapped for the report's bookkeeping counts)",
     r"MPI_Comm_(remote_size|test_inter|compare|get_parent|get_name|set_name|get_info|set_info)"
     r"|MPI_Group_(rank|size|translate_ranks|compare)|MPI_Topo_test|MPI_Dims_create"
     r"|MPI_Cart(_coords|_get|_map|_rank|_shift|dim_get)|MPI_Graph(_get|_map|_neighbors"
     r"|_neighbors_count|dims_get)|MPI_Dist_graph_neighbors(_count)?"),
    ("attributes, keyvals, names, info and error handlers",
     "bookkeeping on handles; no rank waits and nothing moves",
     r"MPI_(Comm|Type|Win)_(create_keyval|free_keyval|set_attr|get_attr|delete_attr)"
     r"|MPI_(Comm|Win|File|Session)_(create_errhandler|set_errhandler|get_errhandler|call_errhandler)"
     r"|MPI_Errhandler_free|MPI_Add_error_(class|code|string)|MPI_Error_(class|string)"
     r"|MPI_Info_(create|create_env|delete|dup|free|get|get_nkeys|get_nthkey|get_string"
     r"|get_valuelen|set)"
     r"|MPI_Win_(get_name|set_name|get_info|set_info|get_group|shared_query)"
     r"|MPI_File_(get_group|get_info|get_amode|get_atomicity|get_view|get_byte_offset"
     r"|get_type_extent|get_errhandler|set_errhandler)"),
    ("handle conversion",
     "C/Fortran handle and status conversion: local and free",
     r"MPI_\w+_(c2f|f2c)|MPI_Status_(c2f|f2c)"),
    ("reduction operators",
     "creating and freeing MPI_Op, and MPI_Reduce_local (a local computation, no rank involved)",
     r"MPI_Op_(create|free|commutative)|MPI_Reduce_local"),
    ("environment queries and timers",
     "MPI_Wtime and MPI_Wtick are called in tight loops to time the program itself; the "
     "others read constants",
     r"MPI_(Wtime|Wtick|Initialized|Finalized|Query_thread|Is_thread_main|Get_version"
     r"|Get_library_version|Get_processor_name)"),
    ("buffered-send buffer",
     "MPI_Buffer_attach and MPI_Buffer_detach hand MPI a buffer for MPI_Bsend (counted "
     "itself); detach may wait for buffered messages to leave, a wait that is not attributed",
     r"MPI_Buffer_(attach|detach)"),
    ("memory allocation",
     "MPI_Alloc_mem and MPI_Free_mem allocate memory (possibly registered for RDMA); "
     "nothing is communicated",
     r"MPI_(Alloc_mem|Free_mem)"),
    ("generalized requests",
     "MPI_Grequest_start/complete: requests the application completes itself; waiting on "
     "them is counted by the Wait/Test wrappers",
     r"MPI_Grequest_(start|complete)"),
    ("name service and ports",
     "MPI_Open_port, MPI_Close_port, MPI_Publish_name, MPI_Lookup_name, "
     "MPI_Unpublish_name: strings handed between jobs; the connection itself "
     "(MPI_Comm_accept/connect) is wrapped",
     r"MPI_(Open_port|Close_port|Publish_name|Lookup_name|Unpublish_name)"),
    ("tools interface",
     "MPI_T_*: the MPI tools interface (performance and control variables), for tools "
     "such as this one, not for the application's communication",
     r"MPI_T_\w+"),
    ("predefined callbacks and Fortran helpers",
     "callback functions (MPI_COMM_DUP_FN, MPI_NULL_COPY_FN...) the library passes to "
     "itself, and Fortran-only entry points (MPI_WTIME_F90...)",
     r"MPI_[A-Z0-9_]+"),
]

_COMPILED = [(name, reason, re.compile(pattern)) for name, reason, pattern in CATEGORIES]


def category(function: str) -> str | None:
    """The first category that leaves ``function`` out, or None. An MPI-4
    large-count ``MPI_X_c`` whose base MPI_X is left out is left out for the
    same reason (MPI_Pack_c, MPI_Type_vector_c...); the ``_c`` of a wrapped
    function is wrapped (functions.py's ``_c`` flag)."""
    name = next((name for name, _, rx in _COMPILED if rx.fullmatch(function)), None)
    if name is None and function.endswith("_c"):
        return category(function[:-2])
    return name
