"""When the MPI time was spent: the report's "timeline" section (docs/report.md).

Pure functions over a profile's time bins (``Profile.timeline_bins``, docs/runtime.md
"Timeline"): per bin the share of the time every kind of MPI call took (averaged over
ranks), the least and most MPI time of any rank and which ranks, the time outside MPI,
the bytes; rank groups; the phases of the run (binary segmentation of those shares) and
periodic bursts. The terminal, ``--json``, the HTML page, ``compare`` and the diagnose
rules all read the same dict. The thresholds below are explained in docs/report.md
("timeline").
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..profile import Profile, Timeline

# Phases: at most this many; each lasts at least this share of the run (and 3 bins); two
# neighbours differ by at least this much in the share of time some kind of MPI call (or
# the time outside MPI, or the spread between ranks) takes.
MAX_PHASES = 8
MIN_PHASE_SHARE = 0.05
MIN_PHASE_BINS = 3
PHASE_SHIFT = 0.15
# Bursts: the MPI share's 90th percentile is at least this far above its 10th ...
BURST_RISE = 0.25
# ... at least this many times, at intervals whose coefficient of variation is at most this.
MIN_BURSTS = 4
MAX_PERIOD_CV = 0.25
# ... and lengths that grow or shrink from the first burst to the last by at most this share
# of their mean (fitted line).
MAX_DURATION_TREND = 0.5
# Full-mode rank rows of the terminal and JSON view: at most this many groups of ranks.
RANK_GROUPS = 8
# Ranks per chunk when reducing a full-mode timeline over ranks (bounded memory at 10^6 ranks).
CHUNK = 1 << 16


@dataclass(frozen=True)
class Series:
    """Per-bin arrays of a timeline, reduced over ranks (full or summary mode alike).

    Attributes:
        start: bin starts (s); width: the seconds of each bin before the run's end (the
            last bin may be partial). share: kind / "mpi" / "compute" -> time per rank in
            the bin / width (0..1, can pass 1 where threads overlap in MPI). mpi_min,
            mpi_max: the least / most MPI time of any rank / width; min_pe, max_pe: those
            ranks. bytes: bytes moved in the bin, all ranks.
    """

    start: np.ndarray
    width: np.ndarray
    share: dict
    mpi_min: np.ndarray
    mpi_max: np.ndarray
    min_pe: np.ndarray
    max_pe: np.ndarray
    bytes: np.ndarray
    kinds: list
    nranks: int
    bin_seconds: float

    @property
    def spread(self) -> np.ndarray:
        """Per bin, how much more MPI time the most waiting rank had than the least (share)."""
        return self.mpi_max - self.mpi_min


def _coverage(tl: Timeline) -> np.ndarray:
    start = tl.starts
    return np.clip(np.minimum(start + tl.bin_seconds, tl.end_seconds) - start, 0.0, None)


def _rank_reduce(tl: Timeline):
    """Full mode: per bin sum, min, max, argmin, argmax over ranks of the MPI time, in chunks."""
    nb = tl.bins
    total, lo, hi = np.zeros(nb), np.full(nb, np.inf), np.full(nb, -np.inf)
    lo_pe, hi_pe = np.zeros(nb, np.int64), np.zeros(nb, np.int64)
    kinds = [tl.rows.index(k) for k in tl.kinds]
    sums = {name: np.zeros(nb) for name in tl.rows}
    for first in range(0, tl.nranks, CHUNK):
        block = np.asarray(tl.values[first:first + CHUNK])        # [ranks, rows, bins]
        for i, name in enumerate(tl.rows):
            sums[name] += block[:, i, :].sum(axis=0)
        mpi = block[:, kinds, :].sum(axis=1) if kinds else np.zeros((len(block), nb))
        total += mpi.sum(axis=0)
        amin, amax = mpi.argmin(axis=0), mpi.argmax(axis=0)
        vmin, vmax = mpi[amin, np.arange(nb)], mpi[amax, np.arange(nb)]
        better_lo, better_hi = vmin < lo, vmax > hi       # ties: the lower rank, as MPI_MINLOC
        lo, lo_pe = np.where(better_lo, vmin, lo), np.where(better_lo, amin + first, lo_pe)
        hi, hi_pe = np.where(better_hi, vmax, hi), np.where(better_hi, amax + first, hi_pe)
    sums["mpi"] = total
    return sums, lo, hi, lo_pe, hi_pe


def series(tl: Timeline) -> Series:
    """The per-bin view of a timeline, reduced over ranks."""
    width = _coverage(tl)
    safe = np.where(width > 0, width, 1.0)
    P = max(tl.nranks, 1)
    if tl.stats is not None:
        mpi = tl.stats["mpi"] if "mpi" in tl.stats else None
        sums = {name: np.asarray(s["sum"], np.float64) for name, s in tl.stats.items()}
        if mpi is None:
            sums["mpi"] = tl.total("mpi")
            lo, hi = np.zeros(tl.bins), sums["mpi"] / P
            lo_pe = hi_pe = np.zeros(tl.bins, np.int64)
        else:
            lo, hi = np.asarray(mpi["min"], np.float64), np.asarray(mpi["max"], np.float64)
            lo_pe, hi_pe = mpi["min_rank"].astype(np.int64), mpi["max_rank"].astype(np.int64)
    else:
        sums, lo, hi, lo_pe, hi_pe = _rank_reduce(tl)
    share = {name: sums[name] / P / safe for name in tl.kinds + ["mpi"]}
    share["compute"] = sums["compute"] / P / safe if "compute" in sums else \
        np.clip(1.0 - share["mpi"], 0.0, None)
    return Series(start=tl.starts, width=width, share=share, mpi_min=lo / safe, mpi_max=hi / safe,
                  min_pe=lo_pe, max_pe=hi_pe,
                  bytes=sums.get("bytes", np.zeros(tl.bins)), kinds=list(tl.kinds),
                  nranks=tl.nranks, bin_seconds=tl.bin_seconds)


# --- bursts -------------------------------------------------------------------------------


def _runs(mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Starts and lengths of the runs of True in mask."""
    edges = np.diff(np.concatenate(([0], mask.astype(np.int8), [0])))
    starts, ends = np.flatnonzero(edges == 1), np.flatnonzero(edges == -1)
    return starts, ends - starts


def bursts(s: Series) -> dict | None:
    """Periodic rises of the MPI share: None, or period, duration, which bins.

    The MPI share per bin (averaged over ranks) is high where some ranks wait for others.
    Bins above the midpoint between its 10th and 90th percentiles (whatever share of the
    run the bursts take) form runs. The bursts are the group of runs of like length (the
    longest at most twice the shortest) that covers the most bins among those with at
    least MIN_BURSTS runs at regular intervals (coefficient of variation at most
    MAX_PERIOD_CV) and a length that does not trend (at most MAX_DURATION_TREND of the
    mean from the first to the last: a ramp is drift). So a start phase, a single stall
    or a loaded machine's short waits at every step neither hide nor fake them.
    """
    full = s.width >= s.bin_seconds * (1 - 1e-9)          # the last, partial bin is left out
    x = s.share["mpi"][full]
    if len(x) < 3 * MIN_BURSTS:
        return None
    low, high = float(np.percentile(x, 10)), float(np.percentile(x, 90))
    if high - low < BURST_RISE:
        return None
    above = x > (low + high) / 2
    starts, lengths = _runs(above)
    best = None
    for shortest in np.unique(lengths):
        keep = (lengths >= shortest) & (lengths <= 2 * shortest)
        got = _periodic(starts[keep], lengths[keep])
        if got is not None and (best is None or lengths[keep].sum() > best[2].sum()):
            best = (got, starts[keep], lengths[keep])
    if best is None:
        return None
    cv, starts, lengths = best
    gaps = np.diff(starts)
    bins = np.zeros(len(s.width), bool)
    idx = np.flatnonzero(full)
    for a, n in zip(starts, lengths):
        bins[idx[a:a + n]] = True
    W = s.bin_seconds
    return {"period": float(gaps.mean() * W), "period_cv": cv, "count": int(len(starts)),
            "duration": float(lengths.mean() * W), "first": float(idx[starts[0]] * W),
            "mpi_share_in": float(s.share["mpi"][bins].mean()),
            "mpi_share_out": float(x[~above].mean()), "bins": bins}


def _periodic(starts: np.ndarray, lengths: np.ndarray) -> float | None:
    """The intervals' coefficient of variation if these runs are periodic bursts, else None."""
    if len(starts) < MIN_BURSTS:
        return None
    gaps = np.diff(starts)
    cv = float(gaps.std() / gaps.mean()) if gaps.mean() > 0 else 1.0
    if cv > MAX_PERIOD_CV:
        return None
    trend = np.polyfit(np.arange(len(lengths)), lengths.astype(float), 1)[0] * (len(lengths) - 1)
    return cv if abs(trend) <= MAX_DURATION_TREND * lengths.mean() else None


# --- phases -------------------------------------------------------------------------------


def _features(s: Series, period_bins: int) -> np.ndarray:
    """[bins, features]: each kind's share, the time outside MPI and the spread between
    ranks, smoothed over one burst period (bursts are not phases)."""
    cols = [s.share[k] for k in s.kinds] + [s.share["compute"], s.spread]
    X = np.stack(cols, axis=1) if cols else np.zeros((len(s.width), 1))
    if period_bins > 1:
        X = _smooth(X, period_bins)
    return X


def _smooth(X: np.ndarray, period_bins: int) -> np.ndarray:
    """Each column averaged over a window of period_bins bins; near the ends over the bins
    the window holds (repeating an end bin would spread one odd bin, say a rank that
    reached its first call late, over half a period and cut a phase there)."""
    kernel = np.ones(period_bins)
    count = np.convolve(np.ones(len(X)), kernel, mode="same")
    return np.stack([np.convolve(X[:, f], kernel, mode="same") / count
                     for f in range(X.shape[1])], axis=1)


def _best_split(X: np.ndarray, lo: int, hi: int, min_len: int):
    """(reduction of the squared deviation, cut, largest feature shift) of the best split of
    rows [lo, hi), or None if no split leaves min_len rows on each side."""
    n = hi - lo
    if n < 2 * min_len:
        return None
    seg = X[lo:hi]
    c1 = np.cumsum(seg, axis=0)
    total = c1[-1]
    k = np.arange(1, n)
    left_mean = c1[:-1] / k[:, None]
    right_mean = (total - c1[:-1]) / (n - k)[:, None]
    gain = (k * (n - k) / n)[:, None] * (left_mean - right_mean) ** 2
    gain = gain.sum(axis=1)
    valid = (k >= min_len) & (n - k >= min_len)
    gain = np.where(valid, gain, -1.0)
    best = int(np.argmax(gain))
    if gain[best] <= 0:
        return None
    shift = float(np.abs(left_mean[best] - right_mean[best]).max())
    return float(gain[best]), lo + best + 1, shift


def segment(X: np.ndarray, min_len: int, max_phases: int = MAX_PHASES,
            min_shift: float = PHASE_SHIFT) -> list[tuple[int, int]]:
    """Binary segmentation of the rows of X: split the segment whose best split removes the
    most squared deviation, while that split moves some feature's mean by min_shift."""
    segs = [(0, len(X))]
    while len(segs) < max_phases:
        cands = []
        for i, (lo, hi) in enumerate(segs):
            b = _best_split(X, lo, hi, min_len)
            if b and b[2] >= min_shift:
                cands.append((b[0], i, b[1]))
        if not cands:
            break
        _, i, cut = max(cands)
        lo, hi = segs[i]
        segs[i:i + 1] = [(lo, cut), (cut, hi)]
    return segs


def _mode(values: np.ndarray) -> int | None:
    if not len(values):
        return None
    u, c = np.unique(values, return_counts=True)
    return int(u[np.argmax(c)])


def _refine(X: np.ndarray, segs: list[tuple[int, int]], radius: int,
            min_len: int) -> list[tuple[int, int]]:
    """Each cut moved, within ``radius`` bins, to where it best splits the raw features of
    its two neighbouring segments (smoothing over a burst period blurs a phase's edge)."""
    cuts = [hi for _, hi in segs[:-1]]
    for i, cut in enumerate(cuts):
        lo = cuts[i - 1] if i else 0
        hi = cuts[i + 1] if i + 1 < len(cuts) else len(X)
        best, where = -1.0, cut
        for c in range(max(lo + min_len, cut - radius), min(hi - min_len, cut + radius) + 1):
            a, b = X[lo:c], X[c:hi]
            gain = float(((a.mean(axis=0) - b.mean(axis=0)) ** 2).sum() * len(a) * len(b))
            if gain > best:
                best, where = gain, c
        cuts[i] = where
    edges = [0, *cuts, len(X)]
    return list(zip(edges[:-1], edges[1:]))


def phases(s: Series, burst: dict | None) -> list[dict]:
    """The run's phases: where the shares of the kinds, the time outside MPI or the spread
    between ranks change for a while (at least MIN_PHASE_SHARE of the run)."""
    nb = len(s.width)
    period_bins = int(round(burst["period"] / s.bin_seconds)) if burst else 1
    min_len = max(MIN_PHASE_BINS, int(np.ceil(MIN_PHASE_SHARE * nb)))
    segs = segment(_features(s, period_bins), min_len)
    if period_bins > 1:
        segs = _refine(_features(s, 1), segs, period_bins // 2 + 1, min_len)
    total = float(s.width.sum())
    out = []
    for k, (lo, hi) in enumerate(segs):
        w = s.width[lo:hi]
        dur = float(w.sum())
        weight = w / dur if dur > 0 else np.full(hi - lo, 1.0 / (hi - lo))
        shares = {kind: float((s.share[kind][lo:hi] * weight).sum()) for kind in s.kinds}
        mpi = float((s.share["mpi"][lo:hi] * weight).sum())
        out.append({
            "index": k, "start": float(s.start[lo]), "end": float(s.start[lo] + dur),
            "seconds": dur, "share_of_run": dur / total if total > 0 else 0.0,
            "bins": [int(lo), int(hi)], "mpi_share": mpi,
            "compute_share": float((s.share["compute"][lo:hi] * weight).sum()),
            "kind_shares": shares,
            "top_kind": max(shares, key=shares.get) if shares and mpi > 0 else None,
            "spread": float((s.spread[lo:hi] * weight).sum()),
            "least_mpi_rank": _mode(s.min_pe[lo:hi]), "most_mpi_rank": _mode(s.max_pe[lo:hi]),
            "bytes": float(s.bytes[lo:hi].sum()),
        })
    # How sharply the MPI share changes where one phase ends and the next begins (a real
    # phase change is a step; a slow ramp cut into pieces is not): the mean over up to
    # min_len bins after the boundary minus the mean over as many before.
    mpi = s.share["mpi"]
    for p, q in zip(out[:-1], out[1:]):
        cut = q["bins"][0]
        m = min(min_len, cut - p["bins"][0], q["bins"][1] - cut)
        p["step_after"] = q["step_before"] = float(mpi[cut:cut + m].mean() - mpi[cut - m:cut].mean())
    if out:
        out[0]["step_before"], out[-1]["step_after"] = None, None
    main = max(range(len(out)), key=lambda i: out[i]["seconds"]) if out else None
    for i, p in enumerate(out):
        p["label"] = "main" if i == main else "start" if i == 0 else \
            "end" if i == len(out) - 1 else "middle"
    return out


# --- rank groups (full mode) -----------------------------------------------------------------


def rank_groups(tl: Timeline, groups: int = RANK_GROUPS) -> list[dict]:
    """Full mode: the MPI share per bin of up to ``groups`` groups of consecutive ranks
    (every rank when there are that few), averaged within the group."""
    if tl.values is None:
        return []
    P = tl.nranks
    edges = np.linspace(0, P, min(groups, P) + 1).round().astype(int)
    width = np.where(_coverage(tl) > 0, _coverage(tl), 1.0)
    kinds = [tl.rows.index(k) for k in tl.kinds]
    out = []
    for a, b in zip(edges[:-1], edges[1:]):
        mpi = np.zeros(tl.bins)
        for first in range(a, b, CHUNK):
            block = np.asarray(tl.values[first:min(b, first + CHUNK)])
            mpi += block[:, kinds, :].sum(axis=(0, 1)) if kinds else 0.0
        out.append({"ranks": [int(a), int(b - 1)], "mpi_share": (mpi / (b - a) / width).tolist()})
    return out


# --- the report section -----------------------------------------------------------------------


def timeline_analysis(prof: Profile) -> tuple[Series, dict | None, list[dict]] | None:
    """(series, bursts, phases) of a profile, or None without a timeline."""
    tl = prof.timeline_bins
    if tl is None:
        return None
    s = series(tl)
    b = bursts(s)
    return s, b, phases(s, b)


def timeline_section(prof: Profile) -> dict:
    """The report's "timeline": per-bin shares, rank groups, phases, bursts (docs/report.md)."""
    got = timeline_analysis(prof)
    if got is None:
        return {"available": False,
                "why": "no timeline in this profile (MPISCOPE_TIMELINE_BINS=0, or an older runtime)"}
    tl = prof.timeline_bins
    s, b, ph = got
    burst = None
    if b is not None:
        burst = {k: v for k, v in b.items() if k != "bins"}
        burst["bins"] = np.flatnonzero(b["bins"]).tolist()
    return {
        "available": True, "mode": prof.mode, "bins": tl.bins, "bin_seconds": tl.bin_seconds,
        "max_bins": tl.max_bins, "end_seconds": tl.end_seconds,
        "clock_offset_max": tl.clock_offset_max, "kinds": s.kinds,
        "start": s.start.tolist(), "width": s.width.tolist(),
        "share": {k: v.tolist() for k, v in s.share.items()},
        "mpi_min": s.mpi_min.tolist(), "mpi_max": s.mpi_max.tolist(),
        "min_pe": s.min_pe.tolist(), "max_pe": s.max_pe.tolist(), "bytes": s.bytes.tolist(),
        "totals": {name: float(tl.total(name).sum()) for name in s.kinds + ["mpi", "compute"]},
        "rank_groups": rank_groups(tl), "phases": ph, "bursts": burst,
    }
