"""Per-communicator tables (`mpiscope report --by-comm`): time, calls and
bytes per communicator, named as META "communicators" says (by
MPI_Comm_set_name, or by how it was made), with its members' world ranks.

Pure functions over the profile's COMMS records (docs/report.md).
"""

from __future__ import annotations

import numpy as np

from ..profile import Profile

OTHER = 0     # the "(other communicators)" row past MPISCOPE_MAX_COMM_TABLES


def _info(meta: dict, cid: int) -> dict:
    comms = meta.get("communicators")
    info = comms.get(f"{cid:016x}") if isinstance(comms, dict) else None
    info = info if isinstance(info, dict) else {}
    name = info.get("name")
    if not isinstance(name, str):
        name = "(other communicators)" if cid == OTHER else f"communicator {cid:016x}"
    def ranks(key):
        got = info.get(key)
        return [int(r) for r in got if isinstance(r, int)] if isinstance(got, list) else None

    size, remote = info.get("size"), info.get("remote_size")
    return {"name": name, "named": bool(info.get("named")),
            "size": size if isinstance(size, int) else None,
            "inter": bool(info.get("inter")),
            "world_ranks": ranks("world_ranks"),
            "remote_size": remote if isinstance(remote, int) else None,
            "remote_world_ranks": ranks("remote_world_ranks")}


def comm_table(prof: Profile, mpi_total: float) -> list[dict]:
    """One row per communicator id, by total time (descending).

    Each row: ``id`` (16 hex digits), ``name``, ``named``, ``size``,
    ``inter``, ``world_ranks`` (the first 32 members' world ranks, -1 for a
    process of another job; null for self; an intercommunicator's group as
    its lowest member sees it), ``remote_size`` and ``remote_world_ranks``
    (an intercommunicator's other group, else null), ``ranks`` (ranks that
    called on it, both groups of an intercommunicator), ``calls``, ``bytes_sent``,
    ``bytes_recv``, ``time`` (summed over ranks), ``pct_mpi``, and
    ``functions``: [{"name", "calls", "bytes_sent", "bytes_recv", "time"}]
    by time.
    """
    c = prof.comms
    if not len(c):
        return []
    names = prof.functions
    rows = []
    ids, inverse = np.unique(c["comm"], return_inverse=True)
    for k, cid in enumerate(ids.tolist()):
        recs = c[inverse == k]
        funcs = []
        fids, finv = np.unique(recs["func"], return_inverse=True)
        for j, fid in enumerate(fids.tolist()):
            fr = recs[finv == j]
            funcs.append({"name": names[fid] if fid < len(names) else f"#{fid}",
                          "calls": int(fr["calls"].sum()), "bytes_sent": int(fr["bytes_sent"].sum()),
                          "bytes_recv": int(fr["bytes_recv"].sum()), "time": float(fr["time"].sum())})
        funcs.sort(key=lambda f: (-f["time"], f["name"]))
        time = float(recs["time"].sum())
        rows.append({"id": f"{cid:016x}", **_info(prof.meta, cid),
                     "ranks": int(len(np.unique(recs["rank"]))),
                     "calls": int(recs["calls"].sum()), "bytes_sent": int(recs["bytes_sent"].sum()),
                     "bytes_recv": int(recs["bytes_recv"].sum()), "time": time,
                     "pct_mpi": 100.0 * time / mpi_total if mpi_total > 0 else 0.0,
                     "functions": funcs})
    rows.sort(key=lambda r: (-r["time"], r["name"]))
    return rows
