"""The table of benchmark kernels: what each measures, its options, and the method behind every number.

One entry per C program in ``bench/``. The CLI, ``mpiscope bench list``, the
results' ``methods`` and ``docs/bench.md`` all read this table, so an option or
a method is described in exactly one place.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Option:
    """A kernel option, passed to the C program as ``--name value``.

    kind: "int", "size" (bytes, K/M/G suffixes), "float", "str" or "flag".
    A default of None means "the kernel's own default" (given in ``default_text``).
    """
    name: str
    kind: str
    help: str
    default_text: str = ""


@dataclass(frozen=True)
class Kernel:
    name: str
    summary: str
    study: str                  # the case study it comes from (docs/case-studies.md): "study: section"
    options: tuple[Option, ...] = ()
    methods: dict[str, str] = field(default_factory=dict)
    defaults: str = ""          # the common options' kernel defaults, for --help
    # which COMMON_OPTIONS this kernel uses (its --help lists only these)
    common: tuple[str, ...] = ("min-size", "max-size", "large-size", "iters", "skip",
                               "iters-large", "skip-large", "batches")
    multi_ranks: bool = False   # the driver reruns the launcher at each P of --ranks
    needs_dir: bool = False     # the driver provides --dir (a temporary directory)


SIZES_NOTE = ("Message sizes double from --min-size to --max-size (0 first when "
              "--min-size is 0); --iters timed iterations after --skip warm-up ones per "
              "size, --iters-large/--skip-large above --large-size.")

_STATS = "min/avg/max over ranks"

KERNELS: dict[str, Kernel] = {k.name: k for k in [
    Kernel(
        "p2p", "latency and bandwidth by the OSU micro-benchmarks' methods (osu_latency, "
               "osu_bw, osu_bibw, osu_mbw_mr), pairs on one node and on different nodes, "
               "1, 2, 4 .. K concurrent pairs",
        "IBM SP scaling guide: Colony switch, intra/inter-node messaging",
        options=(
            Option("pairs", "int", "Largest number of concurrent pairs: runs 1, 2, 4 .. K pairs "
                                   "at once (needs 2K ranks).", "1"),
            Option("locality", "str", "Which pairs: on-node, off-node or both.",
                   "on-node,off-node"),
            Option("tests", "str", "Which methods: latency (osu_latency), bw (osu_bw), bibw "
                                   "(osu_bibw), mbw_mr (osu_mbw_mr).", "latency,bw,bibw,mbw_mr"),
            Option("window", "int", "Messages in flight per bandwidth iteration (OSU's -W).",
                   "64"),
            Option("bw-iters", "int", "Timed bandwidth iterations per size (bw, bibw, mbw_mr).",
                   "100"),
            Option("bw-skip", "int", "Warm-up bandwidth iterations per size.", "10"),
            Option("bw-iters-large", "int", "Timed bw/bibw iterations above --large-size "
                                            "(mbw_mr keeps --bw-iters, as osu_mbw_mr).", "20"),
            Option("bw-skip-large", "int", "Warm-up bw/bibw iterations above --large-size.",
                   "2"),
        ),
        methods={
            "latency_us": "table p2p, method osu_latency: per size a barrier, `skip` untimed "
                          "round trips (MPI_Send then MPI_Recv, separate page-aligned send and "
                          "receive buffers written before the size), then `iters` round trips "
                          "each timed on the pinging rank; one-way latency = sum / (2 * iters); "
                          "min/avg/max over the concurrent pairs (one pair: osu_latency's number)",
            "bandwidth_MBps": "p2p: size / latency_us (ping-pong bandwidth, 1 MB = 1e6 bytes); "
                              "p2p_bw (osu_bw): per iteration the sender posts `window` "
                              "MPI_Isend, MPI_Waitall, then receives a 4-byte acknowledgement, "
                              "bandwidth = size * window * iters / sum of the sender's iteration "
                              "times; p2p_bibw (osu_bibw): both ranks post `window` MPI_Irecv and "
                              "MPI_Isend and MPI_Waitall, 2 * size * window * iters / sum on the "
                              "first rank; p2p_mbw_mr: each pair's own bandwidth; min/avg/max "
                              "over the concurrent pairs",
            "aggregate_MBps": "p2p, p2p_bw, p2p_bibw: the pairs' bandwidths summed (avg * "
                              "pairs); p2p_mbw_mr (osu_mbw_mr: all pairs at once, a barrier of "
                              "the active ranks before each iteration): pairs * the first pair's "
                              "bandwidth, as OSU computes it from its rank 0",
            "messages_per_s": "p2p_mbw_mr: aggregate_MBps * 1e6 / size (osu_mbw_mr's "
                              "Messages/s)",
            "aggregate_sum_MBps": "p2p_mbw_mr: the pairs' own bandwidths summed (not OSU's: "
                                  "differs from aggregate_MBps when pairs are unequal)",
            "latency_best_us": "as latency_us, for the pair's fastest of `batches` equal batches "
                               "of the timed round trips (the least disturbed by other load; "
                               "not an OSU number)",
            "bandwidth_best_MBps": "size / latency_best_us (p2p); the fastest batch's bandwidth "
                                   "(p2p_bw, p2p_bibw, p2p_mbw_mr); not an OSU number",
            "aggregate_best_MBps": "p2p_mbw_mr: the pairs' fastest-batch bandwidths summed",
            "iters": "timed iterations of the row (OSU's counts: 10000, 1000 above 8 KiB for "
                     "latency; 100, 20 above 8 KiB for bw and bibw; 100 for mbw_mr)",
            "locality": "on-node: both ranks in one MPI_Comm_split_type(SHARED) communicator; "
                        "off-node: the k-th rank of node 2m with the k-th rank of node 2m+1",
        },
        defaults="sizes 0 B .. 4 MiB (bandwidths from 1 B), latency 10000/100 iterations "
                 "(1000/10 above 8 KiB), bandwidths 100/10 (20/2 above 8 KiB; mbw_mr 100/10), "
                 "window 64, 5 batches"),
    Kernel(
        "collectives", "barrier, bcast, reduce, allreduce, allgather, alltoall over sizes and "
                       "communicator sizes 2, 4, 8 .. P",
        "IBM SP scaling guide: MPI collectives, MPI_Barrier scaling",
        options=(
            Option("ops", "str", "Comma-separated collectives to measure.",
                   "barrier,bcast,reduce,allreduce,allgather,alltoall"),
            Option("comm-sizes", "str", "Communicator sizes (the first n world ranks).",
                   "2,4,8,..,P"),
        ),
        methods={
            "time_us": "OSU's method (osu_allreduce and siblings): per size a barrier, `skip` "
                       "untimed calls, then `iters` calls each timed on its own and followed by "
                       "an untimed MPI_Barrier (barrier: back to back, as osu_barrier); per "
                       "rank: sum / iters; " + _STATS + " of the communicator (avg: OSU's "
                       "Avg Latency)",
            "time_best_us": "as time_us, for the rank's fastest of `batches` equal batches of the "
                            "timed calls (the least disturbed by other load; not an OSU number)",
            "size": "bytes per rank (bcast, reduce, allreduce: the buffer; allgather, alltoall: "
                    "bytes per peer); reductions use MPI_FLOAT/MPI_SUM (OSU 5-6; OSU 7: "
                    "-T mpi_float), sizes < 4 B skipped",
        },
        defaults="sizes 1 B .. 1 MiB, 1000/100 iterations (100/10 above 8 KiB, OSU's "
                 "counts), 5 batches"),
    Kernel(
        "jitter", "many repetitions of a small allreduce: distribution, arrival spread, "
                  "time series",
        "POP on the Cray XT: allreduce jitter and ragged arrival",
        options=(
            Option("modes", "str", "plain (allreduce alone) and/or barrier (a timing barrier "
                                   "before each allreduce, as POP's t_barrierf).",
                   "plain,barrier"),
            Option("clock-rounds", "int", "Ping-pongs per rank used to align clocks to rank 0.",
                   "20"),
        ),
        methods={
            "time_us": "per repetition: max over ranks of the MPI_Allreduce duration "
                       "(--min-size bytes of MPI_DOUBLE, default 8 B); --iters repetitions",
            "spread_us": "per repetition: latest minus earliest entry into the allreduce, "
                         "with clocks aligned to rank 0 (offset from the ping-pong with the "
                         "smallest round trip)",
            "rank_lateness_us": "per rank: mean over repetitions of its entry time minus the "
                                "earliest entry",
            "median/p90/p99/max": "nearest-rank percentiles of the per-repetition values",
        },
        common=("min-size", "iters", "skip"),
        defaults="8 B (--min-size), 2000 repetitions (--iters) after 100 warm-up (--skip)"),
    Kernel(
        "halo", "the five halo-exchange strategies BSBR, SERE, ISBR, ISIR, IRIS over sizes "
                "and 2/4/6/8 neighbours, with and without compute to overlap",
        "IBM SP scaling guide: Halo communication I and II",
        options=(
            Option("strategies", "str", "Comma-separated strategies.", "BSBR,SERE,ISBR,ISIR,IRIS"),
            Option("neighbours", "str", "Neighbour counts: 2 (1-D ring), 4 (2-D), 6 (3-D), "
                                        "8 (2-D with diagonals).", "2,4,8"),
            Option("compute-us", "float", "Also run with this much busy compute per exchange, "
                                          "placed where it can overlap.", "0 (off)"),
        ),
        methods={
            "time_us": "per rank: elapsed time of `iters` exchanges (including the compute) / "
                       "iters after a barrier and `skip` untimed exchanges; " + _STATS,
            "time_best_us": "as time_us, for the rank's fastest of `batches` equal batches",
            "bytes_per_exchange": "bytes received by all ranks in one exchange (sum)",
            "checksum": "sum over ranks of a position-weighted sum of every receive buffer "
                        "after the last exchange: the same for every strategy",
            "compute_us": "busy loop calibrated on rank 0 (fastest of five timings, so it never "
                          "runs shorter than asked); BSBR/SERE compute before the exchange, ISBR "
                          "after the Isends, ISIR/IRIS before MPI_Waitall",
        },
        defaults="sizes 8 B .. 1 MiB per neighbour, 1000/100 iterations (100/10 above 8 KiB), "
                 "5 batches"),
    Kernel(
        "triad", "STREAM triad bandwidth with 1, 2 .. N ranks per node (memory contention)",
        "IBM SP scaling guide: Memory contention",
        options=(
            Option("length", "size", "Doubles per array (three arrays per rank).", "4M"),
            Option("ranks-per-node", "str", "Active ranks per node to measure.", "1..N"),
        ),
        methods={
            "bandwidth_MBps": "per active rank: 24 bytes * length / best of `iters` triads "
                              "(a[i] = b[i] + s*c[i]; STREAM counting, no write-allocate); "
                              "min/avg/max over active ranks",
            "node_MBps": "k * 24 * length / best time from one node barrier to the next while "
                         "the k active ranks of node 0 run one triad each",
            "valid": "1 if every a[i] equals b[i] + s*c[i] on every rank",
        },
        common=("iters", "skip"),
        defaults="10 repetitions (--iters) after 1 warm-up (--skip)"),
    Kernel(
        "mpimem", "resident memory per rank after MPI_Init, after all-to-all connections and "
                  "after collectives, against P",
        "IBM SP scaling guide: MPI memory usage",
        multi_ranks=True,
        methods={
            "rss_kib": "VmRSS of /proc/self/status in KiB; " + _STATS,
            "hwm_kib": "VmHWM (peak resident) of /proc/self/status in KiB; " + _STATS,
            "stage": "init: right after MPI_Init; connected: after a 1-byte Isend/Irecv with "
                     "every other rank; collectives: after Barrier, Bcast, Allreduce, Alltoall "
                     "of --max-size bytes (user buffers, user_buffers_kib, are allocated before "
                     "'connected')",
        },
        common=("max-size", "iters"),
        defaults="64 KiB per peer (--max-size) for the collectives, called once (--iters)"),
    Kernel(
        "io", "rank 0 writes all, file per rank, MPI-IO independent, MPI-IO collective; "
              "metadata create/open/stat/remove rates",
        "IBM SP scaling guide: Parallel I/O strategies, metadata",
        needs_dir=True,
        options=(
            Option("strategies", "str", "Comma-separated strategies.", "rank0,perrank,indep,coll"),
            Option("meta-files", "int", "Files per rank for the metadata rates (0: skip).", "64"),
            Option("sync", "flag", "fsync / MPI_File_sync before close (else the page cache "
                                   "may absorb the writes)."),
            Option("keep", "flag", "Leave the last size's files in --dir (without --dir: keep the "
                                   "temporary directory; the result's notes name it)."),
        ),
        methods={
            "bandwidth_MBps": "P * size / best of `iters` repetitions of (barrier, open + write "
                              "+ close, barrier) on all ranks",
            "time_s": "per rank: its own time from the first barrier to its completion, last "
                      "repetition; " + _STATS,
            "checksum": "FNV-1a 64 of the logical contents read back by rank 0 (file per rank: "
                        "the files concatenated in rank order); expected_checksum: of the data "
                        "the ranks meant to write",
            "rate_per_s": "P * files / time between the barriers around one metadata phase "
                          "(create, open, stat or remove of every rank's files in one shared "
                          "directory)",
        },
        common=("min-size", "max-size", "iters"),
        defaults="blocks of 1 MiB .. 16 MiB per rank (--min-size, --max-size), 3 repetitions "
                 "(--iters)"),
    Kernel(
        "startup", "MPI_Init and MPI_Finalize duration against P", "IBM SP scaling guide: Job startup",
        multi_ranks=True,
        methods={
            "init_s": "per rank: wall clock after MPI_Init minus before; " + _STATS,
            "finalize_s": "per rank: wall clock after MPI_Finalize minus before (each rank "
                          "prints its own; reduced by the driver); " + _STATS,
            "launch_to_main_s": "latest rank's entry into main minus the driver's clock when "
                                "it started the launcher",
            "wall_s": "the whole launcher command, measured by the driver",
        },
        common=(),
        defaults="one launch per P"),
]}

COMMON_OPTIONS: tuple[Option, ...] = (
    Option("min-size", "size", "Smallest message size (bytes; K/M/G suffixes)."),
    Option("max-size", "size", "Largest message size."),
    Option("large-size", "size", "Sizes above this use --iters-large/--skip-large."),
    Option("iters", "int", "Timed iterations per size (repetitions for jitter, triad, io; "
                           "collective rounds for mpimem)."),
    Option("skip", "int", "Warm-up iterations per size."),
    Option("iters-large", "int", "Timed iterations above --large-size."),
    Option("skip-large", "int", "Warm-up iterations above --large-size."),
    Option("batches", "int", "Split the timed iterations into this many batches and also "
                             "report the fastest batch's mean (latency_best_us, time_best_us: "
                             "least disturbed by other load)."),
)


def common_options(kern: Kernel) -> tuple[Option, ...]:
    """The common options ``kern`` uses, in table order."""
    return tuple(o for o in COMMON_OPTIONS if o.name in kern.common)


def kernel(name: str) -> Kernel:
    """The kernel called ``name``; UserError naming the known ones otherwise."""
    from ..errors import UserError
    try:
        return KERNELS[name]
    except KeyError:
        raise UserError(f"unknown kernel '{name}' (known: {', '.join(KERNELS)})") from None


_UNITS = {"": 1, "B": 1, "K": 1 << 10, "KB": 1 << 10, "KIB": 1 << 10, "M": 1 << 20,
          "MB": 1 << 20, "MIB": 1 << 20, "G": 1 << 30, "GB": 1 << 30, "GIB": 1 << 30}


def parse_size(text: str) -> int:
    """'4096', '4K', '4KiB', '1M' -> bytes (binary units); UserError if it does not parse."""
    from ..errors import UserError
    t = str(text).strip()
    digits = len(t) - len(t.lstrip("0123456789"))
    unit = t[digits:].strip().upper()
    if digits == 0 or unit not in _UNITS:
        raise UserError(f"size '{text}' does not parse (examples: 0, 64, 8K, 4MiB)")
    return int(t[:digits]) * _UNITS[unit]


def parse_int_list(text: str, what: str) -> list[int]:
    """'2,4,8' -> [2, 4, 8]; UserError if it does not parse or holds a value < 1."""
    from ..errors import UserError
    try:
        values = [int(v) for v in text.split(",")]
    except ValueError:
        raise UserError(f"{what} '{text}' does not parse (example: 2,4,8)") from None
    if not values or min(values) < 1:
        raise UserError(f"{what} '{text}': every value must be at least 1")
    return values
