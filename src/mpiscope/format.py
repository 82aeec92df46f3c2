"""The on-disk layout of an mpiscope profile, as numpy dtypes.

The Python half of the contract whose C half is ``runtime/output/profile_format.h``
and whose prose is ``docs/profile-format.md``. Every section is an array of
fixed-size little-endian records, so the reader maps each one straight into a
numpy structured array.
"""

import numpy as np

MAGIC = b"MPISCOPE"
FORMAT_VERSION = 1

MODE_FULL = 0
MODE_SUMMARY = 1

FLAG_PARTIAL = 1 << 0
FLAG_OVERFLOW = 1 << 1
FLAG_SYNC = 1 << 2

OVERFLOW_BITS = {1 << 0: "peers", 1 << 1: "regions", 1 << 2: "requests", 1 << 3: "comms",
                 1 << 4: "per-communicator", 1 << 5: "threads", 1 << 6: "cancels",
                 1 << 7: "other-job", 1 << 8: "call sites", 1 << 9: "call-site modules",
                 1 << 10: "samples"}
# Overflow bits that drop nothing: what the report says instead of "some data was dropped".
OVERFLOW_NOTES = {
    "threads": "had more than 256 threads in MPI at once: the extra threads shared one table "
               "under a lock (every call counted; a snapshot shows 257 threads per rank)",
    "cancels": "had more than 64 cancelled receives pending at once, or more than 4,096 in "
               "the run: the bytes of those that could not be followed stay counted",
    "other-job": "sent point-to-point messages to processes of another job (spawned or "
                 "connected): counted as calls and bytes, but no peer record holds them, so "
                 "the point-to-point totals leave them out",
}

SEC_META = 1
SEC_RANKS = 2
SEC_FUNCS = 3
SEC_HIST = 4
SEC_PEERS = 5
SEC_REGIONS = 6
SEC_NODES = 7
SEC_SUMMARY = 8
SEC_INFLIGHT = 9
SEC_COMMS = 10
SEC_ENV = 11
SEC_MPIT = 12
SEC_MODULES = 13
SEC_CALLSITES = 14
SEC_TIMELINE = 15
SEC_SAMPLES = 16
SEC_MEMBERS = 17

ALL_RANKS = 0xFFFFFFFF
SUMMARY_RANK_LEVEL = 0xFFFF

RANK_METRICS = ["wall", "mpi", "wait", "sync", "compute",
                "on_node_msgs", "on_node_bytes", "off_node_msgs", "off_node_bytes"]
FUNC_METRICS = ["calls", "bytes_sent", "bytes_recv", "time"]
# Rank-level SUMMARY metrics after RANK_METRICS: each rank's ENV values, reduced the same way
# (unbound: 1 or 0; oversub: threads beyond the CPUs of its mask).
ENV_METRICS = ["init", "init_own", "finalize", "cpu_time", "ncpus", "threads", "overlap",
               "unbound", "oversub", "load", "node_cpus", "run_delay", "node_idle"]
# ENV_METRICS a runtime before ENV layout 2 or 3 did not reduce (their summary records are
# absent: read as 0, unknown).
ENV_METRICS_V2 = ("node_cpus", "run_delay", "node_idle")
SUMMARY_RANK_METRICS = RANK_METRICS + ENV_METRICS

HEADER = np.dtype([
    ("magic", "S8"), ("version", "<u4"), ("header_bytes", "<u4"),
    ("mode", "<u4"), ("flags", "<u4"), ("nranks", "<u8"),
    ("nsections", "<u4"), ("section_entry_bytes", "<u4"),
    ("section_table_offset", "<u8"), ("start_time", "<f8"), ("file_bytes", "<u8"),
])

SECTION = np.dtype([
    ("kind", "<u4"), ("version", "<u4"), ("offset", "<u8"),
    ("length", "<u8"), ("count", "<u8"),
])

RANK = np.dtype([
    ("rank", "<u4"), ("node", "<u4"),
    ("wall", "<f8"), ("mpi", "<f8"), ("wait", "<f8"), ("sync", "<f8"),
    ("func_first", "<u8"), ("hist_first", "<u8"), ("peer_first", "<u8"), ("region_first", "<u8"),
    ("func_count", "<u4"), ("hist_count", "<u4"), ("peer_count", "<u4"), ("region_count", "<u4"),
    ("on_node_msgs", "<u8"), ("on_node_bytes", "<u8"),
    ("off_node_msgs", "<u8"), ("off_node_bytes", "<u8"),
    ("overflow", "<u4"), ("threads", "<u4"),
])

FUNC = np.dtype([
    ("rank", "<u4"), ("func", "<u2"), ("reserved", "<u2"), ("region", "<u8"),
    ("calls", "<u8"), ("bytes_sent", "<u8"), ("bytes_recv", "<u8"),
    ("time", "<f8"), ("time_min", "<f8"), ("time_max", "<f8"),
])

HIST = np.dtype([
    ("rank", "<u4"), ("func", "<u2"), ("bucket", "u1"), ("reserved", "u1"),
    ("region", "<u8"), ("count", "<u8"), ("time", "<f8"),
])

PEER = np.dtype([("rank", "<u4"), ("peer", "<u4"), ("msgs", "<u8"), ("bytes", "<u8")])

REGION = np.dtype([
    ("rank", "<u4"), ("depth", "<u4"), ("region", "<u8"), ("parent", "<u8"),
    ("entries", "<u8"), ("wall", "<f8"),
])

NODE = np.dtype([("node", "<u4"), ("nranks", "<u4"), ("hostname", "S64")])

SUMMARY = np.dtype([
    ("func", "<u2"), ("metric", "<u2"), ("reserved", "<u4"), ("region", "<u8"),
    ("min", "<f8"), ("max", "<f8"), ("sum", "<f8"),
    ("min_rank", "<u4"), ("max_rank", "<u4"), ("nonzero", "<u8"),
])

# Per (rank, communicator, function): META "communicators" names the ids.
COMM = np.dtype([
    ("rank", "<u4"), ("func", "<u2"), ("reserved", "<u2"), ("comm", "<u8"),
    ("calls", "<u8"), ("bytes_sent", "<u8"), ("bytes_recv", "<u8"), ("time", "<f8"),
])

# MPI_T performance variables (MPISCOPE_MPIT=1), per (rank, variable); META
# "mpit" "variables" describes each variable. In summary mode the MPIT section
# holds SUMMARY records instead: func = variable, metric = MPIT_METRICS index.
MPIT_METRICS = ["value", "peak"]
MPIT = np.dtype([
    ("rank", "<u4"), ("var", "<u2"), ("reserved", "<u2"),
    ("value", "<f8"), ("peak", "<f8"), ("samples", "<u8"),
])

# Call sites (docs/profile-format.md "CALLSITES", "MODULES"): a site is a function and its
# frames, each (module, offset); META "callsites" "sites" names them, MODULES the objects.
MODULE_ELF = 1
MODULE_PYTHON = 2
MODULE_PATH = 4096
MODULE = np.dtype([
    ("key", "<u8"), ("kind", "<u2"), ("build_id_len", "<u2"), ("path_len", "<u4"),
    ("file_size", "<u8"), ("mtime", "<f8"), ("build_id", "u1", (40,)), ("path", f"S{MODULE_PATH}"),
])
SITE_TOTAL = 0xFF  # bucket of a site's totals record; b < 64: its calls of size bucket b
SITE_LOST = 0  # the site id of calls no room was left for (MPISCOPE_MAX_CALLSITES)
CALLSITE = np.dtype([
    ("rank", "<u4"), ("func", "<u2"), ("bucket", "u1"), ("reserved", "u1"), ("site", "<u8"),
    ("calls", "<u8"), ("bytes_sent", "<u8"), ("bytes_recv", "<u8"),
    ("time", "<f8"), ("time_min", "<f8"), ("time_max", "<f8"),
])
# Summary mode: CALLSITES holds SUMMARY records, func = function, region = site, metric:
SITE_METRICS = FUNC_METRICS + ["call_time_min", "call_time_max"]  # 0..5
SITE_BUCKET_CALLS = 64  # + bucket: sum = the calls of that size bucket over all ranks
SITE_BUCKET_TIME = 128  # + bucket: sum = their time

# Sampled compute (docs/sampling.md, docs/profile-format.md "SAMPLES"): per rank and thread,
# samples at (module, offset) outside MPI, or in a wrapped MPI function; META "samples" "hz".
SAMPLE_COMPUTE = 0xFFFF  # func: outside MPI, at (module, offset)
SAMPLE_OTHER = 0xFFFE  # func: samples not kept (a full table, or past the rank's top rows)
SAMPLE_MPI_LAYER = 0xFFFD  # func: at (module, offset) in the MPI library or mpiscope's wrappers,
#                            outside a wrapped call's MPI part: counted as MPI, not compute
SAMPLE = np.dtype([
    ("rank", "<u4"), ("func", "<u2"), ("thread", "<u2"), ("module", "<u8"), ("offset", "<u8"),
    ("samples", "<u8"),
])
# Summary mode: one record per function over all ranks: a compute function is (module, offset
# of its start, from the unwind tables); min/max/sum of the ranks' sample counts (0 for a rank
# without it) with MINLOC/MAXLOC ranks. func as SAMPLE's (one MPI_LAYER row), and two totals:
SAMPLE_COMPUTE_ALL = 0xFFFB  # func: the rank's samples outside MPI (the functions and other)
SAMPLE_ALL = 0xFFFC  # func: every sample of the rank
SAMPLE_SUMMARY = np.dtype([
    ("func", "<u2"), ("reserved", "<u2"), ("nonzero", "<u4"), ("module", "<u8"), ("offset", "<u8"),
    ("min", "<f8"), ("max", "<f8"), ("sum", "<f8"), ("min_rank", "<u4"), ("max_rank", "<u4"),
])

# The environment of each rank (record r is rank r): META "environment" holds the CPU lists
# ("cpus") and variable sets ("variables") under the 16-hex-digit ids these records name.
ENV_UNBOUND = 1 << 0
ENV_OPENMP = 1 << 1
ENV_MASK_CUT = 1 << 2
ENV_VARS_CUT = 1 << 3
ENV_NO_RANK = 0xFFFFFFFF
# Layout 2 added node_cpus and run_delay, layout 3 node_idle; the reader widens an older
# section (ENV_V1, ENV_V2) to the newest with the new fields 0 (unknown).
ENV_VERSION = 3
ENV_V1 = np.dtype([
    ("rank", "<u4"), ("flags", "<u4"), ("cpus", "<u8"), ("vars", "<u8"),
    ("init", "<f8"), ("init_own", "<f8"), ("finalize", "<f8"), ("cpu_time", "<f8"),
    ("ncpus", "<u4"), ("threads", "<u4"), ("overlap", "<u4"), ("overlap_rank", "<u4"),
    ("load", "<f8"),
])
ENV_V2 = np.dtype(ENV_V1.descr + [("node_cpus", "<u4"), ("reserved", "<u4"), ("run_delay", "<f8")])
ENV = np.dtype(ENV_V2.descr + [("node_idle", "<f8")])

# What each thread of a rank was doing at a snapshot (partial profiles only).
NOT_IN_MPI = 0xFFFF
PEER_NONE = -1
PEER_ANY = -2
# seconds: in the call so far, or outside MPI since the thread's last MPI call returned;
# comm: the id of the call's communicator (as COMMS), 0 for none or unknown.
INFLIGHT = np.dtype([
    ("rank", "<u4"), ("func", "<u2"), ("thread", "<u2"), ("to", "<i4"), ("from", "<i4"),
    ("seconds", "<f8"), ("comm", "<u8"),
])

# The communicators each rank was a member of at a snapshot (world and self left out):
# who belongs to the communicator a rank waits in. Partial profiles only.
MEMBER = np.dtype([("rank", "<u4"), ("size", "<u4"), ("comm", "<u8")])

# The snapshot spool (docs/profile-format.md "Snapshot spool"): one chunk per
# rank, each starting with this header.
SPOOL_MAGIC = b"MPSCSNAP"
SNAP_REASONS = {1: "timer", 2: "signal", 3: "SIGTERM"}
SNAP_TRUNCATED = 1 << 0
SNAP_HEADER = np.dtype([
    ("magic", "S8"), ("version", "<u4"), ("header_bytes", "<u4"),
    ("chunk_bytes", "<u8"), ("checksum", "<u8"),
    ("rank", "<u4"), ("nranks", "<u4"), ("seq", "<u4"), ("reason", "<u4"),
    ("time", "<f8"), ("start_time", "<f8"),
    ("nfuncs", "<u4"), ("nhist", "<u4"), ("npeers", "<u4"), ("nregions", "<u4"),
    ("ninflight", "<u4"), ("names_bytes", "<u4"), ("flags", "<u4"), ("signal", "<u4"),
    ("tl_bins", "<u4"), ("tl_rows", "<u4"), ("tl_width", "<f8"),
    ("ncallsites", "<u4"), ("callsite_bytes", "<u4"),
    ("nmembers", "<u4"), ("member_names_bytes", "<u4"),
])

# The timeline (docs/profile-format.md "TIMELINE"): META "timeline" names the rows and
# gives the bins. Full mode: one float64 per (rank, row, bin), rank-major; summary mode:
# SUMMARY records, func = row, metric = bin. The MPI rows are function kinds (META
# function_kinds' names); "mpi" (summary mode) their sum, "compute" the time outside
# MPI, "bytes" the bytes of the calls that ended in the bin.
TIMELINE = np.dtype("<f8")
TIMELINE_DERIVED = ("mpi", "compute", "bytes")

SECTION_DTYPES = {
    SEC_RANKS: RANK, SEC_FUNCS: FUNC, SEC_HIST: HIST, SEC_PEERS: PEER,
    SEC_REGIONS: REGION, SEC_NODES: NODE, SEC_SUMMARY: SUMMARY, SEC_INFLIGHT: INFLIGHT, SEC_COMMS: COMM,
    SEC_MPIT: MPIT,
    SEC_ENV: ENV,
    SEC_MODULES: MODULE,
    SEC_CALLSITES: CALLSITE,
    SEC_TIMELINE: TIMELINE,
    SEC_SAMPLES: SAMPLE,
    SEC_MEMBERS: MEMBER,
}


# Section layout versions a reader accepts (1 for every kind not named), and the dtype of each
# older one.
SECTION_VERSIONS = {SEC_ENV: {1: ENV_V1, 2: ENV_V2, ENV_VERSION: ENV}}


def section_dtype(kind: int, mode: str) -> np.dtype:
    """The record dtype of a section kind in a profile of mode "full" or "summary"
    (MPIT, TIMELINE and CALLSITES hold SUMMARY records in summary mode, SAMPLES
    SAMPLE_SUMMARY records)."""
    if kind in (SEC_MPIT, SEC_TIMELINE, SEC_CALLSITES) and mode == "summary":
        return SUMMARY
    if kind == SEC_SAMPLES and mode == "summary":
        return SAMPLE_SUMMARY
    return SECTION_DTYPES[kind]

# Sizes are part of the contract; a mismatch with the C structs is a bug.
assert HEADER.itemsize == 64 and SECTION.itemsize == 32 and RANK.itemsize == 128
assert FUNC.itemsize == 64 and HIST.itemsize == 32 and PEER.itemsize == 24
assert REGION.itemsize == 40 and NODE.itemsize == 72 and SUMMARY.itemsize == 56
assert INFLIGHT.itemsize == 32 and SNAP_HEADER.itemsize == 128 and COMM.itemsize == 48
assert MPIT.itemsize == 32 and MEMBER.itemsize == 16
assert ENV_V1.itemsize == 80 and ENV_V2.itemsize == 96 and ENV.itemsize == 104
assert MODULE.itemsize == 4168 and CALLSITE.itemsize == 64 and SAMPLE.itemsize == 32
assert SAMPLE_SUMMARY.itemsize == 56


def fnv1a64(name: str) -> int:
    """Region id of a region name: FNV-1a 64-bit of its UTF-8 bytes (0 is reserved)."""
    h = 0xCBF29CE484222325
    for b in name.encode():
        h = ((h ^ b) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return h or 1


def fnv1a64_bytes(data: bytes) -> int:
    """FNV-1a 64-bit of data, 0 included (the runtime's hash of a Python source file)."""
    h = 0xCBF29CE484222325
    for b in data:
        h = ((h ^ b) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return h


def size_bucket(nbytes: int) -> int:
    """Histogram bucket of a message of nbytes: 0 for 0, else floor(log2)+1."""
    return int(nbytes).bit_length()
