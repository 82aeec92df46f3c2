"""hang: a snapshot of a job that is stuck: who waits for whom, the cycle or the rank that
never arrived, and since when.

A partial profile (a snapshot, docs/runtime.md) says which call each thread of each rank
sits in, with its peer and communicator, for how long, and which communicators each rank
belongs to. From that the rule builds a wait-for graph, as MUST's deadlock detection does
with an AND/OR model and STAT groups ranks by where they are:

* a blocking receive or probe from rank p (MPI_Recv, MPI_Probe, MPI_Mprobe, the receive
  side of MPI_Sendrecv) waits for p; from MPI_ANY_SOURCE, for any member of its
  communicator (OR); MPI_Ssend waits for its destination;
* a blocking collective (and the communicator calls that are collective, and
  MPI_Finalize on every rank) waits for every member of its communicator that is not in
  the same call on it (AND); members in another collective on that communicator never
  match it (a collective mismatch);
* a thread outside MPI, or in a call that returns at once (MPI_Isend, MPI_Test...), runs;
  a call whose partner the snapshot cannot tell (MPI_Wait on requests, a standard-mode
  send that may complete eagerly, a call on a communicator it cannot name) may complete.

Ranks that can still move are found by a fixed point: running ranks, ranks that did not
answer and calls that may complete move; a wait is released when its AND set (all) or OR
set (any) can move. What is left cannot move whatever the others do: a **deadlock**,
shown with one cycle of its graph and since when (the last of its ranks to enter its call
closed it). A snapshot is not taken at one instant on every rank: a deadlock is reported
only if every rank in it had been in its call for longer than the snapshot's ranks
answered apart, so all were in those calls at once. Ranks that wait, all of them for at
least STALL_MIN_S, for a rank that runs outside MPI (or did not answer) are a **stall**:
the rank that never arrived, and since when. A job in which every answering rank sits in
a blocking call for HUNG_MIN_S or more, with waits the snapshot cannot follow, is **hung
as far as the snapshot can tell**. The cost of a hang is the time it has lasted so far
(the job will not end by itself); hang findings come first.
"""

from __future__ import annotations

import time as _time
from dataclasses import dataclass, field

from ... import format as fmt
from ...profile import Profile
from ...report.snapshot import rank_list_text
from ..common import ev, finding, ranks_field

RULE = "hang"
# Every rank of a deadlock has been in its call this long (and longer than the snapshot's
# spread): a message in flight is delivered within microseconds, a rendezvous within
# milliseconds.
DEADLOCK_MIN_S = 0.2
# A stall: the waiting ranks have all waited at least this long in their call. A healthy
# job's snapshot catches ranks waiting milliseconds; a second is no ordinary wait.
STALL_MIN_S = 1.0
# Hung as far as the snapshot can tell: every answering rank in a blocking call this long.
HUNG_MIN_S = 5.0

WORLD, SELF = 1, 2

# Point-to-point calls that wait for the rank they receive from (from = the peer).
RECV_WAITS = {"MPI_Recv", "MPI_Probe", "MPI_Mprobe", "MPI_Sendrecv", "MPI_Sendrecv_replace"}
# Sends that wait for their destination to receive.
SYNC_SENDS = {"MPI_Ssend"}
# Sends that may or may not wait (eager or rendezvous: the snapshot cannot tell).
MAYBE_SENDS = {"MPI_Send", "MPI_Bsend", "MPI_Rsend"}
# Waits on requests: which rank they wait for is not known.
REQUEST_WAITS = {"MPI_Wait", "MPI_Waitall", "MPI_Waitany", "MPI_Waitsome"}
# Communicator and window calls that are collective over the communicator they take.
COLLECTIVE_OTHERS = {"MPI_Comm_dup", "MPI_Comm_dup_with_info", "MPI_Comm_split",
                     "MPI_Comm_split_type", "MPI_Comm_create", "MPI_Intercomm_create",
                     "MPI_Intercomm_merge", "MPI_Cart_create", "MPI_Cart_sub",
                     "MPI_Graph_create", "MPI_Dist_graph_create",
                     "MPI_Dist_graph_create_adjacent", "MPI_Win_create", "MPI_Win_allocate",
                     "MPI_Win_allocate_shared", "MPI_Win_create_dynamic", "MPI_File_open",
                     "MPI_Finalize"}
# Calls that wait for another job, or on a group smaller than their communicator.
OUTSIDE_JOB = {"MPI_Comm_spawn", "MPI_Comm_spawn_multiple", "MPI_Comm_accept",
               "MPI_Comm_connect", "MPI_Comm_join", "MPI_Comm_create_group"}


def _base(name: str) -> str:
    """MPI_Send_c -> MPI_Send (large-count forms wait like their base)."""
    return name[:-2] if name.endswith("_c") else name


@dataclass
class Wait:
    """What one thread of a rank waits for."""

    rank: int
    thread: int
    func: str                 # the call, "" outside MPI
    comm: int
    seconds: float
    how: str                  # "runs", "and", "or", "maybe"
    on: set = field(default_factory=set)   # ranks it waits for
    text: str = ""


def _members(prof: Profile, comm: int) -> tuple[set, bool]:
    """(member ranks, whether that list is complete) of a communicator id."""
    if comm == WORLD:
        return set(range(prof.nranks)), True
    rows = prof.members[prof.members["comm"] == comm]
    ranks = set(int(r) for r in rows["rank"])
    size = int(rows["size"].max()) if len(rows) else 0
    missing = (prof.meta.get("snapshot") or {}).get("missing_count", 0)
    return ranks, bool(ranks) and (not missing or len(ranks) >= size)


def _comm_name(prof: Profile, comm: int) -> str:
    if comm == WORLD:
        return "world"
    if comm == SELF:
        return "self"
    info = (prof.meta.get("communicators") or {}).get(f"{comm:016x}")
    name = info.get("name") if isinstance(info, dict) else None
    return name if isinstance(name, str) else f"communicator {comm:016x}"


def waits(prof: Profile) -> list[Wait]:
    """One Wait per INFLIGHT record (thread) of an answering rank."""
    names, kinds = prof.functions, prof.function_kinds
    out = []
    blocking_in: dict[tuple, set] = {}     # (func, comm) -> ranks in that collective
    recs = prof.inflight
    for rec in recs:
        f = int(rec["func"])
        if f != fmt.NOT_IN_MPI and f < len(names):
            blocking_in.setdefault((names[f], int(rec["comm"])), set()).add(int(rec["rank"]))
    for rec in recs:
        r, f, comm = int(rec["rank"]), int(rec["func"]), int(rec["comm"])
        secs, thread = float(rec["seconds"]), int(rec["thread"])
        if f == fmt.NOT_IN_MPI or f >= len(names):
            out.append(Wait(r, thread, "", 0, secs, "runs", text="outside MPI"))
            continue
        name = names[f]
        base, kind = _base(name), kinds[f] if f < len(kinds) else "other"
        frm, to = int(rec["from"]), int(rec["to"])
        w = Wait(r, thread, name, comm, secs, "maybe", text=name)
        on_comm = f" on {_comm_name(prof, comm)}" if comm else ""
        collective = (kind in ("coll", "sync") and not base.startswith("MPI_I")
                      and not base.endswith("_init")) or base in COLLECTIVE_OTHERS
        if base in RECV_WAITS and frm >= 0:
            w.how, w.on, w.text = "and", {frm}, f"{name} from rank {frm}{on_comm}"
        elif base in RECV_WAITS and frm == fmt.PEER_ANY and comm:
            members, complete = _members(prof, comm)
            if complete:
                w.how, w.on = "or", members - {r}
            w.text = f"{name} from any source{on_comm}"
        elif base in SYNC_SENDS and to >= 0:
            w.how, w.on, w.text = "and", {to}, f"{name} to rank {to}{on_comm}"
        elif collective and comm == SELF:
            w.how = "runs"           # a collective on the rank alone waits for nobody
        elif collective and comm:
            members, complete = _members(prof, comm)
            if complete:
                w.how, w.on = "and", members - blocking_in.get((name, comm), set())
            w.text = f"{name}{on_comm}"
        elif base in MAYBE_SENDS and to >= 0:
            w.text = f"{name} to rank {to}{on_comm}"
        elif base in REQUEST_WAITS or base in OUTSIDE_JOB or collective:
            w.text = f"{name}{on_comm}"
        else:
            w.how = "runs"           # returns at once (nonblocking, a test, a local call)
        out.append(w)
    return out


def movable(ws: list[Wait], answered: set, nranks: int) -> set:
    """Ranks that can still move: the fixed point described in the module docstring."""
    moves = set(range(nranks)) - answered          # no answer: nothing is known of them
    by_rank: dict[int, list[Wait]] = {}
    for w in ws:
        by_rank.setdefault(w.rank, []).append(w)
    for r, rows in by_rank.items():
        if any(w.how in ("runs", "maybe") for w in rows):
            moves.add(r)
    changed = True
    while changed:
        changed = False
        for r, rows in by_rank.items():
            if r in moves:
                continue
            if any((w.how == "and" and w.on <= moves) or (w.how == "or" and w.on & moves)
                   for w in rows):
                moves.add(r)
                changed = True
    return moves


def find_cycle(ws: list[Wait], stuck: set) -> list[int]:
    """One cycle of the wait-for graph among the stuck ranks (as a list of ranks, the first
    repeated at the end), or [] if none (every stuck rank waits on a stuck rank, so there
    is one unless the data is inconsistent)."""
    succ: dict[int, list[int]] = {}
    for w in ws:
        if w.rank in stuck and w.how in ("and", "or"):
            succ.setdefault(w.rank, []).extend(sorted(w.on & stuck))
    start = min(stuck)
    path, seen = [start], {start: 0}
    while True:
        nxt = next(iter(succ.get(path[-1], [])), None)
        if nxt is None:
            return []
        if nxt in seen:
            return path[seen[nxt]:] + [nxt]
        seen[nxt] = len(path)
        path.append(nxt)


def _groups(ws: list[Wait], ranks: set) -> list[tuple[str, list[int], float]]:
    """(what, ranks, longest seconds) of the given ranks' first threads, most ranks first."""
    g: dict[str, tuple[list, float]] = {}
    for w in ws:
        if w.rank in ranks and w.thread == min(x.thread for x in ws if x.rank == w.rank):
            rs, secs = g.get(w.text, ([], 0.0))
            g[w.text] = (rs + [w.rank], max(secs, w.seconds))
    return sorted(((t, sorted(rs), s) for t, (rs, s) in g.items()), key=lambda x: (-len(x[1]), x[0]))


def _ranks_text(ranks) -> str:
    ranks = sorted(ranks)
    return f"rank {ranks[0]}" if len(ranks) == 1 else f"ranks {rank_list_text(ranks)}"


def _when(snap_time: float | None, ago: float) -> str:
    if snap_time is None:
        return f"{ago:.3g} s before the snapshot"
    stamp = _time.strftime("%Y-%m-%d %H:%M:%S UTC", _time.gmtime(snap_time - ago))
    return f"{stamp} ({ago:.3g} s before the snapshot)"


def _group_evidence(ws: list[Wait], ranks: set) -> list[dict]:
    return [ev(f"{len(rs)} rank{'s' if len(rs) > 1 else ''} in {what}: {rank_list_text(rs)}"
               if what != "outside MPI" else
               f"{len(rs)} rank{'s' if len(rs) > 1 else ''} outside MPI: {rank_list_text(rs)}",
               secs, "s")
            for what, rs, secs in _groups(ws, ranks)]


def rule(prof: Profile, rep: dict) -> list[dict]:
    if not prof.is_partial or not len(prof.inflight):
        return []
    snap = prof.meta.get("snapshot") or {}
    t_snap = snap.get("time") if isinstance(snap.get("time"), (int, float)) else None
    t_first = snap.get("time_first") if isinstance(snap.get("time_first"), (int, float)) else t_snap
    spread = float(t_snap - t_first) if t_snap is not None and t_first is not None else 0.0
    ws = waits(prof)
    answered = {w.rank for w in ws}
    moves = movable(ws, answered, prof.nranks)
    stuck = answered - moves
    out = []
    if stuck:
        secs = {r: min(w.seconds for w in ws if w.rank == r) for r in stuck}
        since = min(secs.values())
        if since >= max(DEADLOCK_MIN_S, spread):
            out.append(_deadlock(prof, rep, ws, stuck, since, t_snap))
    out += _stalls(prof, rep, ws, answered, moves, t_snap)
    if not out:
        out += _hung(prof, rep, ws, answered, t_snap)
    return out


def _deadlock(prof, rep, ws, stuck, since, t_snap) -> dict:
    cycle = find_cycle(ws, stuck)
    desc = {w.rank: w.text for w in ws if w.rank in stuck}
    chain = " -> ".join(f"rank {r} ({desc[r]})" if i < len(cycle) - 1 else f"rank {r}"
                        for i, r in enumerate(cycle))
    mismatch = sorted({(w.func, w.comm) for w in ws if w.rank in stuck and w.how == "and"
                       and w.comm and w.func and w.on})
    comms: dict[int, set] = {}
    for func, comm in mismatch:
        comms.setdefault(comm, set()).add(func)
    mixed = [c for c, fs in comms.items() if len(fs) > 1]
    evidence = _group_evidence(ws, stuck)
    if chain:
        evidence.append(ev("wait-for cycle", chain))
    for c in mixed:
        evidence.append(ev(f"collective mismatch on {_comm_name(prof, c)}",
                           ", ".join(sorted(comms[c])) + " at once"))
    evidence.append(ev("deadlocked since", _when(t_snap, since)))
    title = (f"Deadlock: {_ranks_text(stuck)} wait for each other and none can move "
             f"(hung for {since:.3g} s when the snapshot was taken)")
    fix = ("Every rank of the cycle waits for the next: look at the calls above in that "
           "order (a receive posted before the matching send, a collective one rank never "
           "enters or enters in another order, a barrier inside a branch). MUST detects "
           "such deadlocks when they happen; STAT and gdb show each rank's stack.")
    if mixed:
        fix = ("Ranks sit in different collectives on the same communicator: every rank "
               "must call the same collectives in the same order. " + fix)
    f = finding(RULE, title, since, rep, ranks_field(sorted(stuck)), evidence, fix,
                f"mpiscope report {prof.path or 'SPOOL'}")
    f["kind"] = "deadlock"
    return f


def _stalls(prof, rep, ws, answered, moves, t_snap) -> list[dict]:
    """Ranks whose waits (AND), directly or through other waiting ranks, are held up by
    ranks that run outside MPI, sit in a call that may complete, or did not answer."""
    blocked = answered - {w.rank for w in ws if w.how in ("runs", "maybe")}
    edges: dict[int, set] = {}
    for w in ws:
        if w.rank in blocked and w.how == "and":
            edges.setdefault(w.rank, set()).update(w.on)
    late: dict[int, set] = {}
    for r in blocked:
        if r not in moves or min(w.seconds for w in ws if w.rank == r) < STALL_MIN_S:
            continue
        todo, seen = [r], {r}
        while todo:
            for t in edges.get(todo.pop(), ()):
                if t in seen:
                    continue
                seen.add(t)
                if t in blocked:
                    todo.append(t)
                else:
                    late.setdefault(t, set()).add(r)
    if not late:
        return []
    out_of = {w.rank: w.seconds for w in ws if w.how == "runs" and w.func == ""}
    targets = sorted(late)
    waiting = set().union(*late.values())
    wait_s = min(w.seconds for w in ws if w.rank in waiting)
    evidence = _group_evidence(ws, waiting)
    gone = [t for t in targets if t not in answered]
    for t in targets:
        if t in out_of:
            evidence.append(ev(f"rank {t} outside MPI (since its last MPI call returned)",
                               out_of[t], "s"))
        elif t in gone:
            evidence.append(ev(f"rank {t}", "did not answer the snapshot (gone or stopped)"))
        else:
            what = next(w.text for w in ws if w.rank == t)
            evidence.append(ev(f"rank {t} in {what}", "a call whose partner cannot be told"))
    evidence.append(ev("waiting since", _when(t_snap, wait_s)))
    who = _ranks_text(targets)
    title = (f"Stall: {_ranks_text(waiting)} have waited {wait_s:.3g} s or more for {who}, "
             f"which never arrived")
    if gone:
        fix = (f"{who} did not answer the snapshot: it died, is stopped, or its node is "
               "gone; its launcher's output and the system log say which.")
    else:
        fix = (f"{who} runs its own code (outside MPI) or waits in a call while the others "
               "wait for it: an endless loop, a wait on something outside MPI (I/O, a lock), "
               "or a branch that skips the call the others are in. Attach a debugger to it "
               "(gdb -p PID) or take another snapshot to see whether it moves.")
    f = finding(RULE, title, wait_s, rep, ranks_field(targets), evidence, fix,
                f"mpiscope report {prof.path or 'SPOOL'}")
    f["kind"] = "stall"
    return [f]


def _hung(prof, rep, ws, answered, t_snap) -> list[dict]:
    if not answered or any(w.how == "runs" for w in ws):
        return []
    least = min(w.seconds for w in ws)
    if least < HUNG_MIN_S:
        return []
    evidence = _group_evidence(ws, answered)
    evidence.append(ev("every answering rank in a blocking call since", _when(t_snap, least)))
    f = finding(RULE, f"Hung: every answering rank has sat in a blocking MPI call for "
                f"{least:.3g} s or more (what each waits for cannot be told from the snapshot)",
                least, rep, ranks_field(sorted(answered)), evidence,
                "The ranks wait on requests or sends whose partners the snapshot cannot "
                "name: match the calls above with the program's sends and receives, or run "
                "it under MUST to find the deadlock.",
                f"mpiscope report {prof.path or 'SPOOL'}")
    f["kind"] = "hung"
    return [f]


__all__ = ["rule", "waits", "movable", "find_cycle"]
