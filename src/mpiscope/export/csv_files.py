"""CSV export: the tidy per-function rows and the peers, one file each.

    df = pandas.read_csv("app.123.csv")          # rank, region, function, calls, time, ...
    peers = pandas.read_csv("app.123.peers.csv") # rank, peer, messages, bytes
"""

from __future__ import annotations

from pathlib import Path

from ..profile import Profile
from .frames import functions_frame, peers_frame


def peers_path(path: Path) -> Path:
    """``x.csv`` -> ``x.peers.csv`` (the peers file sits next to the rows file)."""
    return path.with_name(path.name[:-4] + ".peers.csv" if path.name.endswith(".csv")
                          else path.name + ".peers.csv")


def outputs(path: Path) -> list[Path]:
    return [path, peers_path(path)]


def write(prof: Profile, path: Path) -> list[Path]:
    """Write the rows to ``path`` and the peers next to it; return both paths."""
    functions_frame(prof).to_csv(path, index=False)
    peers_frame(prof).to_csv(peers_path(path), index=False)
    return outputs(path)
