"""The one in-memory model of a profile that every analysis reads.

Readers only build a :class:`Profile`; report, diagnose, place and plots only
read it. All per-record data are numpy structured arrays whose dtypes are in
:mod:`mpiscope.format` (one record per rank, per (rank, function, region), ...).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from . import format as fmt


@dataclass(frozen=True)
class Profile:
    """A whole job's profile.

    Attributes:
        path: file it came from ("" when built in memory).
        meta: the META JSON object (program, argv, mpi_library, functions, ...).
        nranks: size of MPI_COMM_WORLD.
        mode: "full" or "summary".
        flags: header flag bits (format.FLAG_*).
        start_time: MPI_Init on rank 0, seconds since the Unix epoch.
        ranks: fmt.RANK records, index r is rank r (empty in summary mode).
        funcs: fmt.FUNC records (empty in summary mode).
        hist: fmt.HIST records.
        peers: fmt.PEER records (empty in summary mode).
        regions: fmt.REGION records.
        nodes: fmt.NODE records.
        summary: fmt.SUMMARY records (empty in full mode).
        comms: fmt.COMM records: calls, bytes and time per (rank, communicator,
            function); META "communicators" names each communicator id.
        env: fmt.ENV records, index r is rank r: its CPU affinity (ids into META
            "environment"), OpenMP threads, mask overlap and MPI_Init/MPI_Finalize
            times (full mode; empty in summary mode and in older profiles).
        mpit: MPI_T performance variables (MPISCOPE_MPIT=1): fmt.MPIT records,
            one per (rank, variable), in full mode; fmt.SUMMARY records
            (func = variable, metric = fmt.MPIT_METRICS index) in summary
            mode. ``mpit_variables`` describes each variable.
        callsites: call sites (MPISCOPE_CALLSITES, on by default): fmt.CALLSITE
            records, one per (rank, function, site) with bucket fmt.SITE_TOTAL and one
            per size bucket used, in full mode; fmt.SUMMARY records (func = function,
            region = site, metric = fmt.SITE_METRICS index or fmt.SITE_BUCKET_*)
            in summary mode. ``callsite_defs`` gives each site its frames.
        modules: fmt.MODULE records: the objects (and Python source files) the
            sites' frames are in, each once; frames name them by ``key``.
        inflight: fmt.INFLIGHT records: the call each thread of each rank sat
            in at a snapshot (partial profiles only; META "snapshot" says
            when and which ranks answered).
        timeline: the TIMELINE section as stored: float64 values (full mode) or
            fmt.SUMMARY records (summary mode); ``timeline_bins`` interprets it.
        members: fmt.MEMBER records: the communicators (world and self left
            out) each answering rank was a member of at the snapshot (partial
            profiles only).
        samples: fmt.SAMPLE records (MPISCOPE_SAMPLE, full mode): samples per
            (rank, thread, address) outside MPI, per wrapped MPI function inside it,
            and each thread's "other" row; ``sample_hz`` is the rate (docs/sampling.md).
            Summary mode: fmt.SAMPLE_SUMMARY records, per function over all ranks.
    """

    path: str
    meta: dict
    nranks: int
    mode: str
    flags: int
    start_time: float
    ranks: np.ndarray = field(default_factory=lambda: np.zeros(0, fmt.RANK))
    funcs: np.ndarray = field(default_factory=lambda: np.zeros(0, fmt.FUNC))
    hist: np.ndarray = field(default_factory=lambda: np.zeros(0, fmt.HIST))
    peers: np.ndarray = field(default_factory=lambda: np.zeros(0, fmt.PEER))
    regions: np.ndarray = field(default_factory=lambda: np.zeros(0, fmt.REGION))
    nodes: np.ndarray = field(default_factory=lambda: np.zeros(0, fmt.NODE))
    summary: np.ndarray = field(default_factory=lambda: np.zeros(0, fmt.SUMMARY))
    inflight: np.ndarray = field(default_factory=lambda: np.zeros(0, fmt.INFLIGHT))
    comms: np.ndarray = field(default_factory=lambda: np.zeros(0, fmt.COMM))
    env: np.ndarray = field(default_factory=lambda: np.zeros(0, fmt.ENV))
    mpit: np.ndarray = field(default_factory=lambda: np.zeros(0, fmt.MPIT))
    timeline: np.ndarray = field(default_factory=lambda: np.zeros(0, fmt.TIMELINE))
    modules: np.ndarray = field(default_factory=lambda: np.zeros(0, fmt.MODULE))
    callsites: np.ndarray = field(default_factory=lambda: np.zeros(0, fmt.CALLSITE))
    members: np.ndarray = field(default_factory=lambda: np.zeros(0, fmt.MEMBER))
    samples: np.ndarray = field(default_factory=lambda: np.zeros(0, fmt.SAMPLE))

    @property
    def functions(self) -> list[str]:
        return list(self.meta.get("functions", []))

    @property
    def function_kinds(self) -> list[str]:
        return list(self.meta.get("function_kinds", []))

    @property
    def mpit_variables(self) -> list[dict]:
        """META "mpit" "variables": one dict per recorded MPI_T variable (name,
        what, class, kind, over, elements, bound, type, desc); [] if none."""
        mpit = self.meta.get("mpit")
        vs = mpit.get("variables") if isinstance(mpit, dict) else None
        return [v if isinstance(v, dict) else {} for v in vs] if isinstance(vs, list) else []

    @property
    def timeline_bins(self) -> Timeline | None:
        """The timeline (MPISCOPE_TIMELINE_BINS) as a :class:`Timeline`, None when the profile
        has none. The reader has checked that META "timeline" matches the section."""
        info = self.meta.get("timeline")
        if not isinstance(info, dict) or not len(self.timeline):
            return None
        rows = [str(r) for r in info["rows"]]
        nb = int(info["bins"])
        common = dict(bins=nb, bin_seconds=float(info["bin_seconds"]), rows=rows,
                      end_seconds=float(info.get("end_seconds", nb * float(info["bin_seconds"]))),
                      clock_offset_max=float(info.get("clock_offset_max", 0.0)),
                      max_bins=int(info.get("max_bins", nb)), nranks=self.nranks)
        if self.is_summary:
            recs = self.timeline[np.lexsort((self.timeline["metric"], self.timeline["func"]))]
            stats = {}
            for i, name in enumerate(rows):
                mine = recs[recs["func"] == i]
                stats[name] = {k: np.asarray(mine[k]) for k in
                               ("min", "max", "sum", "min_rank", "max_rank", "nonzero")}
            return Timeline(values=None, stats=stats, **common)
        return Timeline(values=self.timeline.reshape(self.nranks, len(rows), nb), stats=None,
                        **common)

    @property
    def sample_hz(self) -> float | None:
        """META "samples" "hz": samples per second of a thread's CPU time; None if the run
        was not sampled (or the rate is unusable)."""
        info = self.meta.get("samples")
        hz = info.get("hz") if isinstance(info, dict) else None
        return float(hz) if isinstance(hz, (int, float)) and not isinstance(hz, bool) and hz > 0 \
            else None

    @property
    def callsite_defs(self) -> dict[int, tuple[int, list[tuple[int, int]]]]:
        """META "callsites" "sites": site id -> (function index, [(module key, offset), ...]),
        innermost frame first; malformed entries are left out (their records then show
        an unknown site)."""
        cs = self.meta.get("callsites")
        sites = cs.get("sites") if isinstance(cs, dict) else None
        out = {}
        for key, d in (sites.items() if isinstance(sites, dict) else ()):
            try:
                frames = [(int(m, 16), int(o)) for m, o in d["frames"]]
                out[int(key, 16)] = (int(d["function"]), frames)
            except (TypeError, ValueError, KeyError, AttributeError):
                continue  # the file is input: a malformed site names nothing
        return out

    @property
    def callsite_depth(self) -> int | None:
        """MPISCOPE_CALLSITE_DEPTH of the run; None if it recorded no call sites."""
        cs = self.meta.get("callsites")
        depth = cs.get("depth") if isinstance(cs, dict) else None
        return depth if isinstance(depth, int) else None

    @property
    def region_names(self) -> dict[int, str]:
        """Region id -> name; id 0 is the part of the run outside every region."""
        names = {0: "(outside regions)"}
        regions = self.meta.get("regions")
        for key, name in (regions.items() if isinstance(regions, dict) else ()):
            try:
                names[int(key, 16)] = str(name)
            except (TypeError, ValueError):
                continue  # a malformed key names no region; its records show the hex id
        return names

    @property
    def environment(self) -> dict:
        """META "environment": {"cpus": {id: CPU list}, "variables": {id: {name: value}}},
        ids as ints; empty dicts when the profile has none (or they are malformed)."""
        env = self.meta.get("environment")
        out: dict = {"cpus": {}, "variables": {}}
        for key in out:
            table = env.get(key) if isinstance(env, dict) else None
            for k, v in (table.items() if isinstance(table, dict) else ()):
                try:
                    ident = int(k, 16)
                except (TypeError, ValueError):
                    continue  # the file is input: a malformed id names nothing
                if key == "cpus" and isinstance(v, str):
                    out[key][ident] = v
                elif key == "variables" and isinstance(v, dict):
                    out[key][ident] = {str(n): str(x) for n, x in v.items()}
        return out

    @property
    def is_partial(self) -> bool:
        """Written before MPI_Finalize (a snapshot of a running, hung or killed job)."""
        return bool(self.flags & fmt.FLAG_PARTIAL)

    @property
    def is_summary(self) -> bool:
        return self.mode == "summary"

    def region_id(self, name: str) -> int:
        """Id of a region name as the runtime computes it (KeyError if no rank entered it)."""
        for rid, rname in self.region_names.items():
            if rname == name:
                return rid
        raise KeyError(name)

    def rank_metric(self, name: str) -> np.ndarray:
        """Per-rank float64 array of a RANKS time field, or "compute" (= wall - mpi).

        Full mode only (summary-mode profiles have no per-rank rows).
        """
        if name == "compute":
            return self.ranks["wall"] - self.ranks["mpi"]
        return np.asarray(self.ranks[name], dtype=np.float64)

    def node_of_rank(self, ppn: int | None = None) -> np.ndarray:
        """Node id of every rank: the RANKS ``node`` field, or ``rank // ppn`` when modelling."""
        if ppn:
            return np.arange(self.nranks, dtype=np.int64) // ppn
        return self.ranks["node"].astype(np.int64)

    def to_pandas(self, view: str = "functions"):
        """A pandas DataFrame of one view: "functions" (tidy rows rank, region, function,
        calls, time, bytes_sent, bytes_recv), "ranks", "peers", "hist", "regions",
        "summary", "mpit", "env" or "callsites" (see mpiscope.export.frames and
        docs/python.md)."""
        from .export.frames import frame
        return frame(self, view)

    def func_id(self, name: str) -> int:
        """Index of a function name in this profile's function table (KeyError if absent)."""
        try:
            return self.functions.index(name)
        except ValueError:
            raise KeyError(name) from None


@dataclass(frozen=True)
class Timeline:
    """A profile's time bins: bin j covers [j, j + 1) x bin_seconds from the job clock's
    zero (MPI_Init's barrier); the ranks' clocks agree to within clock_offset_max seconds.

    Attributes:
        rows: what each row holds: function kinds (seconds in MPI calls of that kind),
            "mpi" (summary mode: their sum), "compute" (seconds outside MPI), "bytes".
        values: full mode: float64 [nranks, rows, bins] (a view of the file).
        stats: summary mode: row -> {"min", "max", "sum", "min_rank", "max_rank",
            "nonzero"}, each an array over bins (reduced over ranks in the job).
        end_seconds: the last rank's end (MPI_Finalize entry) on the job clock.
        max_bins: MPISCOPE_TIMELINE_BINS in effect (the bin width doubled to fit the run).
    """

    bins: int
    bin_seconds: float
    rows: list
    end_seconds: float
    clock_offset_max: float
    max_bins: int
    nranks: int
    values: np.ndarray | None
    stats: dict | None

    @property
    def kinds(self) -> list[str]:
        """The rows that are MPI time of one function kind."""
        return [r for r in self.rows if r not in fmt.TIMELINE_DERIVED]

    @property
    def starts(self) -> np.ndarray:
        """Start of each bin, seconds on the job clock."""
        return np.arange(self.bins, dtype=np.float64) * self.bin_seconds

    def row(self, name: str) -> np.ndarray:
        """Full mode: [nranks, bins] of one row ("mpi": the sum of the kinds)."""
        if name == "mpi" and "mpi" not in self.rows:
            idx = [self.rows.index(k) for k in self.kinds]
            return self.values[:, idx, :].sum(axis=1) if idx else \
                np.zeros((self.nranks, self.bins))
        return self.values[:, self.rows.index(name), :]

    def total(self, name: str) -> np.ndarray:
        """Per bin, the row summed over ranks (either mode)."""
        if self.stats is not None:
            if name == "mpi" and "mpi" not in self.stats:
                return sum((self.stats[k]["sum"] for k in self.kinds), np.zeros(self.bins))
            return np.asarray(self.stats[name]["sum"], np.float64)
        return self.row(name).sum(axis=0)
