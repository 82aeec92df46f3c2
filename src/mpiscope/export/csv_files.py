"""CSV export: the tidy per-function rows, the peers, the timeline and the call sites,
one file each.

    df = pandas.read_csv("app.123.csv")          # rank, region, function, calls, time, ...
    peers = pandas.read_csv("app.123.peers.csv") # rank, peer, messages, bytes
    tl = pandas.read_csv("app.123.timeline.csv") # rank, t_start, t_end, class, seconds
    sites = pandas.read_csv("app.123.callsites.csv")  # rank, function, site, location, ...
    samp = pandas.read_csv("app.123.samples.csv")   # rank, thread, function, file, in_mpi, ...

The timeline, call sites and samples files are written when the profile has them.
"""

from __future__ import annotations

from pathlib import Path

from ..profile import Profile
from .frames import callsites_frame, functions_frame, peers_frame, samples_frame, timeline_frame


def beside(path: Path, what: str) -> Path:
    """``x.csv`` -> ``x.<what>.csv`` (a file that sits next to the rows file)."""
    return path.with_name(path.name[:-4] + f".{what}.csv" if path.name.endswith(".csv")
                          else path.name + f".{what}.csv")


def peers_path(path: Path) -> Path:
    return beside(path, "peers")


def timeline_path(path: Path) -> Path:
    return beside(path, "timeline")


def callsites_path(path: Path) -> Path:
    return beside(path, "callsites")


def samples_path(path: Path) -> Path:
    return beside(path, "samples")


def outputs(path: Path) -> list[Path]:
    """Every file the export may write (checked before anything is written)."""
    return [path, peers_path(path), timeline_path(path), callsites_path(path), samples_path(path)]


def write(prof: Profile, path: Path) -> list[Path]:
    """Write the rows to ``path``, the peers and (when the profile has them) the timeline
    and the call sites next to it; return the paths written."""
    functions_frame(prof).to_csv(path, index=False)
    peers_frame(prof).to_csv(peers_path(path), index=False)
    written = [path, peers_path(path)]
    if prof.timeline_bins is not None:
        timeline_frame(prof).to_csv(timeline_path(path), index=False)
        written.append(timeline_path(path))
    if "callsites" in prof.meta:
        callsites_frame(prof).to_csv(callsites_path(path), index=False)
        written.append(callsites_path(path))
    if prof.sample_hz is not None and len(prof.samples) and not prof.is_summary:
        samples_frame(prof).to_csv(samples_path(path), index=False)
        written.append(samples_path(path))
    return written
