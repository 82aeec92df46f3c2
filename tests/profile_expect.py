"""Exact expectations for the profiles of the test programs in tests/programs/.

A test describes, per rank, every communication call a program makes (data
movement, completion, probe, one-sided synchronization, I/O: function, region,
calls, bytes sent and received) and every point-to-point message
(sender, world-rank destination, bytes) in an :class:`Expect`; then
:func:`assert_profile` compares it with what the runtime wrote:

* FUNCS: calls, bytes_sent, bytes_recv per (rank, function, region), for
  every function the expectation names and every function of a data-moving
  kind (p2p, wait, coll, sync, rma, io) the profile holds: an unexpected call
  is a failure too. Bookkeeping calls (kinds comm, other: MPI_Comm_rank,
  MPI_Type_commit...) are not asserted.
* HIST: calls per (rank, function, region, log2 size bucket) of every
  data-moving function (:func:`moves_data`).
* PEERS: messages and bytes per (sender, world-rank destination).

Programs run once per (program, implementation, options) per session through
:class:`Runner` (the ``runner`` fixture), so several tests share one run.
"""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pytest

import mpitest
from mpiscope import format as fmt
from mpiscope import native, read
from mpiscope.report.environment import env_values

# Kinds whose calls move data or wait for it: every such call must be expected.
TRAFFIC_KINDS = {"p2p", "wait", "coll", "sync", "rma", "io"}
OUTSIDE = ""  # region name of calls outside every region
RUN_TIMEOUT = 120  # seconds; a hang fails the test instead of blocking CI


# Calls that only complete, test, probe, synchronize or set things up move no
# data of their own: they are not in the message-size histogram.
_NOT_MOVING = re.compile(
    r"^MPI_(Wait|Test|Probe|Iprobe|Mprobe|Improbe|Request_|Cancel|Barrier|Ibarrier|Win_|Comm_|"
    r"Cart_|Group_|Intercomm_|Dist_graph|Graph_|Type_|Init|Finalize|Abort|Pcontrol|Buffer_|"
    r"Pready|Parrived)"
    r"|_init(_c)?$|:sync$|_end$|^MPI_File_(open|close|sync|delete|set_|get_|preallocate|seek)")


def moves_data(func: str) -> bool:
    """Whether calls of ``func`` send or receive data (and so enter the histogram)."""
    return not _NOT_MOVING.search(func)


def ring(P: int, r: int) -> tuple[int, int]:
    """(left, right) neighbours of rank r on a ring of P ranks."""
    return (r - 1) % P, (r + 1) % P


def bucket(nbytes: int) -> int:
    return fmt.size_bucket(nbytes)


@dataclass
class Expect:
    """The traffic a program must produce, rank by rank."""

    nranks: int
    funcs: dict = field(default_factory=lambda: defaultdict(lambda: [0, 0, 0]))
    hist: Counter = field(default_factory=Counter)
    peers: dict = field(default_factory=lambda: defaultdict(lambda: [0, 0]))

    def call(self, rank: int, func: str, sent: int = 0, recv: int = 0, *, calls: int = 1,
             region: str = OUTSIDE) -> "Expect":
        """``calls`` calls of ``func`` on ``rank``, each sending ``sent`` and receiving
        ``recv`` bytes. Calls of a data-moving function are in the size histogram,
        in bucket 0 when they moved nothing (MPI_PROC_NULL)."""
        rec = self.funcs[(rank, func, region)]
        rec[0] += calls
        rec[1] += sent * calls
        rec[2] += recv * calls
        if moves_data(func):
            self.hist[(rank, func, region, bucket(sent or recv))] += calls
        return self

    def every(self, func: str, sent: int = 0, recv: int = 0, **kw) -> "Expect":
        """The same calls on every rank."""
        for r in range(self.nranks):
            self.call(r, func, sent, recv, **kw)
        return self

    def msg(self, rank: int, peer: int, nbytes: int, msgs: int = 1) -> "Expect":
        """``msgs`` point-to-point messages of ``nbytes`` from ``rank`` to world rank ``peer``."""
        rec = self.peers[(rank, peer)]
        rec[0] += msgs
        rec[1] += nbytes * msgs
        return self

    def poll(self, rank: int, func: str, polls: dict, region: str = OUTSIDE) -> "Expect":
        """The calls of a polling function (MPI_Test, MPI_Iprobe...) the program
        counted itself (``polls``: Run.polls)."""
        return self.call(rank, func, calls=polls[(rank, func)], region=region)

    def names(self) -> set[str]:
        return {f for (_, f, _) in self.funcs}


# ---------------------------------------------------------------------------
# What the profile says, as plain dicts keyed like Expect's


def region_name(prof, rid: int) -> str:
    return OUTSIDE if rid == 0 else prof.region_names.get(int(rid), f"?{int(rid):016x}")


def observed_funcs(prof) -> dict:
    out = defaultdict(lambda: [0, 0, 0])
    names = prof.functions
    for rec in prof.funcs:
        key = (int(rec["rank"]), names[int(rec["func"])], region_name(prof, int(rec["region"])))
        out[key][0] += int(rec["calls"])
        out[key][1] += int(rec["bytes_sent"])
        out[key][2] += int(rec["bytes_recv"])
    return out


def observed_hist(prof) -> Counter:
    out = Counter()
    names = prof.functions
    for rec in prof.hist:
        out[(int(rec["rank"]), names[int(rec["func"])], region_name(prof, int(rec["region"])),
             int(rec["bucket"]))] += int(rec["count"])
    return out


def observed_peers(prof) -> dict:
    out = defaultdict(lambda: [0, 0])
    for rec in prof.peers:
        key = (int(rec["rank"]), int(rec["peer"]))
        out[key][0] += int(rec["msgs"])
        out[key][1] += int(rec["bytes"])
    return out


def watched(prof, expect: Expect) -> set[str]:
    kinds = dict(zip(prof.functions, prof.function_kinds))
    used = {prof.functions[int(f)] for f in np.unique(prof.funcs["func"])} if len(prof.funcs) \
        else set()
    return expect.names() | {f for f in used if kinds.get(f) in TRAFFIC_KINDS}


def _diff(what: str, want: dict, got: dict, keys) -> list[str]:
    lines = []
    for key in sorted(keys, key=str):
        w, g = want.get(key), got.get(key)
        if w is None:
            w = [0] * len(g) if isinstance(g, list) else 0
        if g is None:
            g = [0] * len(w) if isinstance(w, list) else 0
        if list(np.atleast_1d(w)) != list(np.atleast_1d(g)):
            lines.append(f"{what} {key}: expected {w}, got {g}")
    return lines


def mismatches(prof, expect: Expect) -> list[str]:
    """Every difference between the profile and the expectation, one line each."""
    names = watched(prof, expect)
    want_f = {k: v for k, v in expect.funcs.items() if k[1] in names}
    got_f = {k: v for k, v in observed_funcs(prof).items() if k[1] in names}
    lines = _diff("FUNCS (rank, function, region) [calls, sent, recv]", want_f, got_f,
                  set(want_f) | set(got_f))
    want_h = {k: v for k, v in expect.hist.items() if k[1] in names}
    got_h = {k: v for k, v in observed_hist(prof).items() if k[1] in names}
    lines += _diff("HIST (rank, function, region, bucket) calls", want_h, got_h,
                   set(want_h) | set(got_h))
    want_p, got_p = dict(expect.peers), observed_peers(prof)
    lines += _diff("PEERS (rank, peer) [msgs, bytes]", want_p, got_p, set(want_p) | set(got_p))
    return lines


def assert_profile(prof, expect: Expect) -> None:
    assert prof.mode == "full", prof.mode
    assert prof.nranks == expect.nranks
    bad = mismatches(prof, expect)
    assert not bad, f"{len(bad)} differences from the expected traffic:\n" + "\n".join(bad[:40])


def setting(prof, name: str):
    """A setting in effect as META records it (``name`` without the MPISCOPE_ prefix)."""
    settings = prof.meta["settings"]
    return settings.get(f"MPISCOPE_{name}", settings.get(name, settings.get(name.lower())))


def assert_rank_sanity(prof, threads: int = 1, sync: bool = False, overflow: int = 0) -> None:
    """Times are positive and nested (wait and sync within MPI, MPI within wall);
    every function's min <= mean <= max; the threads that called MPI."""
    r = prof.ranks
    assert np.array_equal(r["rank"], np.arange(prof.nranks))
    assert np.all(r["wall"] > 0) and np.all(r["mpi"] > 0)
    # Threads in MPI at the same time each add their time: MPI time is summed over threads.
    assert np.all(r["mpi"] <= threads * r["wall"] * 1.01 + 1e-3), (r["mpi"], r["wall"])
    assert np.all(r["wait"] <= r["mpi"] + 1e-9)
    if sync:
        assert np.all(r["sync"] > 0) and np.all(r["sync"] <= r["mpi"] + 1e-9)
    else:
        assert np.all(r["sync"] == 0)
    assert list(r["overflow"]) == [overflow] * prof.nranks
    assert bool(prof.flags & fmt.FLAG_OVERFLOW) == bool(overflow)
    assert list(r["threads"]) == [threads] * prof.nranks
    f = prof.funcs
    P = prof.nranks
    kinds = np.array(prof.function_kinds)[f["func"]] if len(f) else np.zeros(0, str)

    def per_rank(mask):
        return np.bincount(f["rank"][mask], weights=f["time"][mask], minlength=P)

    # Rank totals are the sums of their function records: all, "wait" kind, "sync" kind.
    everything = np.ones(len(f), bool)
    assert np.allclose(per_rank(everything), r["mpi"], rtol=1e-9, atol=1e-12)
    assert np.allclose(per_rank(kinds == "wait"), r["wait"], rtol=1e-9, atol=1e-12)
    assert np.allclose(per_rank(kinds == "sync"), r["sync"], rtol=1e-9, atol=1e-12)
    # A histogrammed function's buckets hold all its calls and all its time.
    h = prof.hist
    hkey = {}
    for rec in h:
        k = (int(rec["rank"]), int(rec["func"]), int(rec["region"]))
        c, t = hkey.get(k, (0, 0.0))
        hkey[k] = (c + int(rec["count"]), t + float(rec["time"]))
    for rec in f:
        k = (int(rec["rank"]), int(rec["func"]), int(rec["region"]))
        if k in hkey:
            assert hkey[k][0] == int(rec["calls"]), k
            assert np.isclose(hkey[k][1], float(rec["time"]), rtol=1e-9, atol=1e-12), k
    assert_timeline_totals(prof)
    calls = f["calls"].astype(np.float64)
    assert np.all(f["calls"] > 0)
    assert np.all(f["time_min"] >= 0) and np.all(f["time_min"] <= f["time_max"])
    assert np.all(f["time_min"] * calls <= f["time"] * (1 + 1e-9) + 1e-12)
    assert np.all(f["time"] <= f["time_max"] * calls * (1 + 1e-9) + 1e-12)


def assert_timeline_totals(prof) -> None:
    """Each rank's timeline bins of a function kind sum to its function records' time of
    that kind (calls that span bins are split, never lost, whatever the bin merging)."""
    tl = prof.timeline_bins
    assert tl is not None, "no timeline (MPISCOPE_TIMELINE_BINS defaults to 256)"
    f = prof.funcs
    kinds = np.array(prof.function_kinds)[f["func"]] if len(f) else np.zeros(0, str)
    assert set(tl.kinds) == set(kinds[f["time"] > 0]), (tl.kinds, set(kinds))
    for kind in tl.kinds:
        want = np.bincount(f["rank"][kinds == kind], weights=f["time"][kinds == kind],
                           minlength=prof.nranks)
        assert np.allclose(tl.row(kind).sum(axis=1), want, rtol=1e-9, atol=1e-12), kind
    assert tl.bins <= tl.max_bins and tl.bins * tl.bin_seconds >= tl.end_seconds * (1 - 1e-9)


def assert_one_node(prof) -> None:
    """All ranks ran on this machine: one node record, every message on-node."""
    assert list(prof.ranks["node"]) == [0] * prof.nranks
    assert len(prof.nodes) == 1
    node = prof.nodes[0]
    assert (int(node["node"]), int(node["nranks"])) == (0, prof.nranks)
    assert node["hostname"].decode() == socket.gethostname()[:63]
    sent_msgs = np.bincount(prof.peers["rank"], weights=prof.peers["msgs"],
                            minlength=prof.nranks)
    sent_bytes = np.bincount(prof.peers["rank"], weights=prof.peers["bytes"],
                             minlength=prof.nranks)
    assert list(prof.ranks["on_node_msgs"]) == list(sent_msgs.astype(np.uint64))
    assert list(prof.ranks["on_node_bytes"]) == list(sent_bytes.astype(np.uint64))
    assert not prof.ranks["off_node_msgs"].any() and not prof.ranks["off_node_bytes"].any()


# ---------------------------------------------------------------------------
# Running the programs


@dataclass
class Run:
    """One launch of a test program."""

    impl: str
    program: str
    nranks: int
    cmd: list
    rc: int
    stdout: str
    stderr: str
    outdir: Path
    elapsed: float = 0.0

    @property
    def results(self) -> list[str]:
        """Everything the job printed on stdout, sorted (ranks print in any order):
        the program's own lines, and anything the runtime would add there."""
        return sorted(self.stdout.splitlines())

    def assert_ok(self) -> None:
        assert self.rc == 0, f"{self.cmd} exited {self.rc}\n{self.stderr[-3000:]}"
        lines = [line for line in self.results if " checksum " in line]
        assert len(lines) == self.nranks, self.stdout[-3000:]
        assert all(line.endswith(" ok") for line in lines), "\n".join(lines)

    @property
    def polls(self) -> dict:
        """(rank, function) -> calls, from the program's `polls` lines on stderr."""
        return {(int(m[1]), m[2]): int(m[3]) for m in
                re.finditer(r"^polls rank (\d+) (\S+) (\d+)$", self.stderr, re.M)}

    @property
    def profiles(self) -> list[Path]:
        return sorted(self.outdir.glob("*.mpiscope"))

    @property
    def profile(self):
        files = self.profiles
        assert len(files) == 1, f"expected one profile in {self.outdir}, found {files}\n" \
                                f"stderr:\n{self.stderr[-3000:]}"
        return read(files[0])


HUNG = -999  # Run.rc of a launch killed after its timeout


def run_killable(cmd: list, cwd, env: dict, timeout: float) -> tuple[int, str, str]:
    """Run cmd in its own session; after ``timeout`` seconds kill it, the launcher and
    every rank (mpitest.kill_tree; a plain subprocess timeout would leave them
    spinning), and return rc HUNG."""
    proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        out, err = proc.communicate(timeout=timeout)
        return proc.returncode, out, err
    except subprocess.TimeoutExpired:
        stacks = mpitest.tree_stacks(proc.pid)
        mpitest.kill_tree(proc.pid)
        out, err = proc.communicate()
        return HUNG, out, err + f"\n[killed after {timeout} s: hung]\n{stacks}\n"


def program_path(impl: str, name: str) -> str:
    return str(native.program(impl, f"tests/{name}"))


class Runner:
    """Launches test programs, each distinct launch once per session."""

    def __init__(self, base: Path):
        self.base = base
        self.cache: dict = {}

    def run(self, impl: str, program: str, *args: str, how: str = "mpiscope",
            mode: str | None = None, sync: bool = False, env: dict | None = None,
            launcher_args: tuple = (), outdir: str | None = None, timeout: float = RUN_TIMEOUT,
            fresh: bool = False, prefix: tuple = ()) -> Run:
        """Launch ``program`` on mpitest.NRANKS[impl] ranks.

        how: "plain" (no runtime), "mpiscope" (``mpiscope run --dir``), "preload"
            (``LD_PRELOAD=libmpiscope.so`` in the launcher's environment, run in
            the output directory, nothing else).
        outdir: MPISCOPE_DIR for "mpiscope" (default: a fresh directory).
        prefix: words in front of the whole command (tinyfs's ``nsenter``).
        """
        key = (impl, program, args, how, mode, sync, tuple(sorted((env or {}).items())),
               launcher_args, outdir, tuple(prefix))
        if key in self.cache and not fresh:
            return self.cache[key]
        n = mpitest.NRANKS[impl]
        rundir = Path(os.path.join(self.base, f"{program}-{impl}-{how}-{len(self.cache)}"))
        rundir.mkdir(parents=True, exist_ok=True)
        launch = [*mpitest.launcher(impl, n), *launcher_args, program_path(impl, program), *args]
        run_env = dict(env or {})
        if how == "plain":
            cmd = launch
        elif how == "preload":
            run_env["LD_PRELOAD"] = str(native.runtime_library(impl))
            cmd = launch
        elif how == "mpiscope":
            opts = ["--dir", outdir or str(rundir), "--mpi", impl]
            if mode:
                opts += ["--mode", mode]
            if sync:
                opts.append("--sync")
            cmd = mpitest.mpiscope_cmd("run", *opts, "--", *launch)
        else:
            raise ValueError(how)
        cmd = [*prefix, *cmd]
        start = time.monotonic()
        rc, out, err = run_killable(cmd, rundir, mpitest.mpi_env(run_env), timeout)
        run = Run(impl, program, n, cmd, rc, out, err,
                  Path(outdir) if outdir and how == "mpiscope" else rundir,
                  time.monotonic() - start)
        self.cache[key] = run
        return run


@pytest.fixture(scope="session")
def runner(tmp_path_factory) -> Runner:
    return Runner(tmp_path_factory.mktemp("runs"))


def run_both(runner: Runner, impl: str, program: str, *args: str) -> tuple[Run, Run]:
    """The program with the runtime (mpiscope run) and without; both must succeed
    with identical result lines."""
    profiled = runner.run(impl, program, *args)
    plain = runner.run(impl, program, *args, how="plain")
    plain.assert_ok()
    profiled.assert_ok()
    return profiled, plain


def check_program(runner: Runner, impl: str, program: str, expect_fn, *args: str,
                  threads: int = 1):
    """Run ``program`` with and without the runtime and assert everything exactly:
    identical result lines, the traffic ``expect_fn(nranks, polls)`` describes,
    sane per-rank figures, one node. Returns the profile."""
    profiled, plain = run_both(runner, impl, program, *args)
    assert profiled.results == plain.results, "the runtime changed the program's output"
    prof = profiled.profile
    assert os.path.realpath(prof.meta["program"]) == os.path.realpath(program_path(impl, program))
    assert prof.meta["argv"][1:] == list(args)
    assert_profile(prof, expect_fn(prof.nranks, profiled.polls))
    assert_rank_sanity(prof, threads=threads)
    assert_one_node(prof)
    return prof


# Expected traffic of tests/programs/p2p_blocking.c, coll_blocking.c and regions.c,
# and readers of a profile's summary and per-communicator rows: shared by the runtime's
# counting, lifecycle and reliability tests.

def p2p_blocking(P: int, polls: dict) -> Expect:
    e = Expect(P)
    for r in range(P):
        left, right = ring(P, r)
        e.call(r, "MPI_Send", 40).call(r, "MPI_Ssend", 400).call(r, "MPI_Bsend", 1000)
        e.call(r, "MPI_Rsend", 12)
        for n in (40, 400, 1000):
            e.call(r, "MPI_Recv", recv=n)
        e.call(r, "MPI_Irecv", recv=12).call(r, "MPI_Wait").call(r, "MPI_Barrier")
        e.call(r, "MPI_Sendrecv", 8000, 8000).call(r, "MPI_Sendrecv_replace", 40, 40)
        for n in (40, 400, 1000, 12, 8000):
            e.msg(r, right, n)
        e.msg(r, left, 40)
    return e


def tri(P: int) -> int:
    return P * (P + 1) // 2


def coll_blocking(P: int, polls: dict) -> Expect:
    e = Expect(P)
    for r in range(P):
        e.call(r, "MPI_Barrier")
        e.call(r, "MPI_Bcast", 40 if r == 0 else 0, 0 if r == 0 else 40)
        e.call(r, "MPI_Reduce", 32, 32 if r == P - 1 else 0)
        e.call(r, "MPI_Allreduce", 24, 24)
        e.call(r, "MPI_Gather", 8, 8 * P if r == 0 else 0)
        e.call(r, "MPI_Gatherv", 4 * (r + 1), 4 * tri(P) if r == 1 % P else 0)
        e.call(r, "MPI_Scatter", 20 * P if r == 0 else 0, 20)
        e.call(r, "MPI_Scatterv", 4 * tri(P) if r == 0 else 0, 4 * (r + 1))
        e.call(r, "MPI_Allgather", 24, 24 * P)
        e.call(r, "MPI_Allgatherv", 4 * (r + 1), 4 * tri(P))
        e.call(r, "MPI_Alltoall", 4 * P, 4 * P)
        e.call(r, "MPI_Alltoallv", 4 * tri(P), 4 * (r + 1) * P)
        e.call(r, "MPI_Reduce_scatter_block", 8 * P, 8)
        e.call(r, "MPI_Reduce_scatter", 4 * tri(P), 4 * (r + 1))
        e.call(r, "MPI_Scan", 4, 4).call(r, "MPI_Exscan", 4, 4)
    return e


def regions(P: int, polls: dict) -> Expect:
    e = Expect(P)
    for r in range(P):
        e.call(r, "MPI_Barrier")
        e.call(r, "MPI_Allreduce", 4, 4, calls=2, region="outer")
        e.call(r, "MPI_Sendrecv", 8, 8, calls=3, region="inner")
        e.msg(r, (r + 1) % P, 8, msgs=3)
        e.call(r, "MPI_Bcast", 12 if r == 0 else 0, 0 if r == 0 else 12, calls=3, region="solo")
        if r % 2 == 0 and r + 1 < P:
            e.call(r, "MPI_Send", 16, region="evens").msg(r, r + 1, 16)
        if r % 2 == 1:
            e.call(r, "MPI_Recv", recv=16)
    return e


def summary_records(prof) -> dict:
    names = prof.functions
    out = {}
    for s in prof.summary:
        rank_level = int(s["func"]) == fmt.SUMMARY_RANK_LEVEL
        metric = (fmt.SUMMARY_RANK_METRICS if rank_level else fmt.FUNC_METRICS)[int(s["metric"])]
        key = (None if rank_level else names[int(s["func"])], region_name(prof, int(s["region"])),
               metric)
        assert key not in out, f"SUMMARY record {key} twice"
        out[key] = (float(s["min"]), float(s["max"]), float(s["sum"]), int(s["min_rank"]),
                    int(s["max_rank"]), int(s["nonzero"]))
    return out


# Metrics whose values do not depend on timing: equal in any two runs of a program.
EXACT_RANK_METRICS = {"on_node_msgs", "on_node_bytes", "off_node_msgs", "off_node_bytes",
                      "ncpus", "threads", "overlap", "unbound", "oversub", "load"}
EXACT_FUNC_METRICS = {"calls", "bytes_sent", "bytes_recv"}


def reduce_full(prof) -> dict:
    """What summary mode must hold, computed from a full-mode profile with numpy:
    (function name or None, region name, metric) -> (min, max, sum, minPE, maxPE, nonzero);
    a rank without a record counts 0; ties go to the lowest rank."""
    P = prof.nranks
    out = {}

    def entry(values):
        values = np.asarray(values, dtype=np.float64)
        return (values.min(), values.max(), values.sum(), int(values.argmin()),
                int(values.argmax()), int(np.count_nonzero(values)))

    r = prof.ranks
    for metric in fmt.RANK_METRICS:
        values = r["wall"] - r["mpi"] if metric == "compute" else r[metric]
        out[(None, "", metric)] = entry(values)
    for metric, values in env_values(prof).items():  # the ENV record's values
        out[(None, "", metric)] = entry(values)
    names = prof.functions
    for rec_key in {(int(f["func"]), int(f["region"])) for f in prof.funcs}:
        sel = prof.funcs[(prof.funcs["func"] == rec_key[0]) & (prof.funcs["region"] == rec_key[1])]
        for metric in fmt.FUNC_METRICS:
            values = np.zeros(P)
            np.add.at(values, sel["rank"].astype(np.int64), sel[metric].astype(np.float64))
            out[(names[rec_key[0]], region_name(prof, rec_key[1]), metric)] = entry(values)
    return out


def assert_summary_agrees(full, summ) -> None:
    """A summary-mode profile holds exactly full mode's reduction over ranks (reduce_full)
    for every count; for a time (another run) the shape: min <= avg <= max, valid PEs.
    HIST is summed over ranks."""
    assert (summ.mode, summ.nranks) == ("summary", full.nranks)
    assert len(summ.ranks) == len(summ.funcs) == len(summ.peers) == 0
    want, got = reduce_full(full), summary_records(summ)
    assert set(got) == set(want)
    P = full.nranks
    for key, (mn, mx, total, min_pe, max_pe, nonzero) in got.items():
        if key[2] in EXACT_RANK_METRICS or key[2] in EXACT_FUNC_METRICS:
            assert (mn, mx, total, min_pe, max_pe, nonzero) == want[key], key
        else:  # a time: another run, so only its shape can be compared
            # (compute = wall - mpi is negative where threads overlapped in MPI)
            avg, eps = total / P, 1e-12 * max(abs(mn), abs(mx)) + 1e-15
            assert mn - eps <= avg <= mx + eps, key
            assert mn >= 0 or key[2] == "compute", key
            assert 0 <= min_pe < P and 0 <= max_pe < P, key
            # whether every rank had some: the same in both runs for most times, not for
            # these (a rank may never wait, or find no CPU of its node idle, in one run)
            assert (nonzero == P) == (want[key][5] == P) or key[2] in (
                "sync", "wait", "finalize", "cpu_time", "run_delay", "node_idle"), key
    # HIST: one record per (function, region, bucket), summed over ranks.
    assert np.all(summ.hist["rank"] == fmt.ALL_RANKS)
    names_f, names_s = full.functions, summ.functions
    hist_full, hist_summ = {}, {}
    for h in full.hist:
        k = (names_f[int(h["func"])], region_name(full, int(h["region"])), int(h["bucket"]))
        hist_full[k] = hist_full.get(k, 0) + int(h["count"])
    for h in summ.hist:
        k = (names_s[int(h["func"])], region_name(summ, int(h["region"])), int(h["bucket"]))
        assert k not in hist_summ
        hist_summ[k] = int(h["count"])
    assert hist_summ == hist_full


def by_comm(path: str) -> dict[str, dict]:
    rep = json.loads(mpitest.run(mpitest.mpiscope_cmd("report", "--json", path)).stdout)
    return {r["name"]: r for r in rep["communicators"]}


def fn(row: dict, name: str) -> dict:
    return next((f for f in row["functions"] if f["name"] == name),
                {"calls": 0, "bytes_sent": 0, "bytes_recv": 0})


# Calls per rank of every MPI function the Fortran programs (tests/programs/fortran_*.f90)
# call; fortran_twin.c has them in order.
FORTRAN_CALLS = {
    "MPI_Init": 1, "MPI_Comm_rank": 2, "MPI_Comm_size": 2, "MPI_Send": 1, "MPI_Recv": 1,
    "MPI_Get_count": 1, "MPI_Irecv": 6, "MPI_Isend": 6, "MPI_Waitall": 2,
    "MPI_Allreduce": 3, "MPI_Bcast": 1, "MPI_Sendrecv": 3, "MPI_Waitany": 4,
    "MPI_Comm_split": 1, "MPI_Comm_free": 1, "MPI_Get_address": 4,
    "MPI_Type_create_struct": 2, "MPI_Type_commit": 2, "MPI_Type_free": 2,
    "MPI_Barrier": 1, "MPI_Gather": 1, "MPI_Pcontrol": 6, "MPI_Finalize": 1,
}


def calls_by_rank(prof) -> dict[str, np.ndarray]:
    """Function name -> calls per rank, summed over regions."""
    out = {}
    for fid, name in enumerate(prof.functions):
        rows = prof.funcs[prof.funcs["func"] == fid]
        out[name] = np.bincount(rows["rank"], weights=rows["calls"],
                                minlength=prof.nranks).astype(np.int64)
    return out
