"""eager-limit: most point-to-point messages just above the MPI library's eager limit (seed 001:
"the optimal size for messages most of the time is less than the eager limit").

Below its eager limit an MPI sends a message at once and the receiver copies it out of a
buffer; above it, the sender first asks and waits for the receiver to match (rendezvous): a
round trip more, and a sender held up by a receiver that is busy elsewhere. When most messages
sit just above the limit, raising the limit past them turns them all eager.

The limit is the library's default for the transport most of the bytes took (META
mpi_library, the on-node/off-node split), or the variable's value when the run set it
(ENV section); LIMITS below has the defaults and where they come from. "Just above": the
histogram buckets starting below ABOVE x limit whose sizes are mostly at or above the limit. Fires when at least SHARE of the point-to-point messages (calls with
a size: sends and receives, blocking or not; 0-byte ones left out) are there. What raising the
limit removes is the rendezvous handshake, not the wait for a partner that is late (issue 29:
BT's 62.5 % claim gained nothing): cost = the calls carrying those messages: a send (MPI_Send,
MPI_Isend: kind p2p) at its average call of that size (by rendezvous a blocking send waits
for its receiver to post, which eager removes), a receive at the fastest call its function
made anywhere in the run (handshake included), never more than its average; the rest of the
receives' time is waiting for late data, which the evidence gives apart. A code that sends
with MPI_Isend pays the handshake inside MPI_Wait*, which has no size: there the cost is what
its posting calls show.
The value to try: the top of the largest such message's bucket plus 1 KiB for the library's
header, rounded up to a KiB.
"""

from __future__ import annotations

from ...profile import Profile
from .. import rerun
from ..common import (MIN_COST_PCT, all_ranks, env_of, ev, finding, mpi_family, p2p_by_bucket,
                      p2p_calls_cost, p2p_time, worth)

RULE = "eager-limit"
SHARE = 0.5
ABOVE = 4
HEADER_ROOM = 1024

# (family, transport) -> (variable as an environment variable, default bytes or None (the
# library decides: only a value the run set is known), the launcher option that sets it).
# Open MPI 4.1 (pml ob1): ompi_info --param btl vader|tcp --level 9: "btl_vader_eager_limit"
# 4096 and "btl_tcp_eager_limit" 65536, both including the header (Open MPI 5 renamed vader to
# sm); with pml ucx (OMPI_MCA_pml=ucx; Open MPI picks it itself on Mellanox InfiniBand, which a
# profile cannot see) UCX_RNDV_THRESH. MPICH ch4:ucx (Debian's MPICH 4.0.2): point-to-point,
# on-node too, goes through UCX, whose UCX_RNDV_THRESH is "auto"; measured here (UCX 1.13.1,
# shared memory) MPI_Send blocks from 8 KiB on and not with UCX_RNDV_THRESH=32768, so on-node
# "auto" is taken as 8192; off-node "auto" is left to UCX. MPICH ch4:ofi: on-node, a message
# is eager when it fits one POSIX queue cell (MPIR_CVAR_CH4_SHM_POSIX_IQUEUE_CELL_SIZE, 69632
# in MPICH 4.0.2, read with MPI_T here; the cell's header comes off it), off-node
# MPIR_CVAR_CH4_OFI_EAGER_MAX_MSG_SIZE (-1: the provider's maximum). ch3:
# MPIR_CVAR_CH3_EAGER_MAX_MSG_SIZE 131072. Cray MPICH: MPICH_MAX_SHORT_MSG_SIZE 128000 (seed 001).
LIMITS = {
    ("openmpi", "on-node"): ("OMPI_MCA_btl_vader_eager_limit", 4096,
                             "--mca btl_vader_eager_limit {v}"),
    ("openmpi5", "on-node"): ("OMPI_MCA_btl_sm_eager_limit", 4096, "--mca btl_sm_eager_limit {v}"),
    ("openmpi", "off-node"): ("OMPI_MCA_btl_tcp_eager_limit", 65536,
                              "--mca btl_tcp_eager_limit {v}"),
    ("openmpi", "ucx"): ("UCX_RNDV_THRESH", None, "-x UCX_RNDV_THRESH={v}"),
    ("mpich-ucx", "on-node"): ("UCX_RNDV_THRESH", 8192, "-genv UCX_RNDV_THRESH {v}"),
    ("mpich-ucx", "off-node"): ("UCX_RNDV_THRESH", None, "-genv UCX_RNDV_THRESH {v}"),
    ("mpich", "on-node"): ("MPIR_CVAR_CH4_SHM_POSIX_IQUEUE_CELL_SIZE", 69632,
                           "-genv MPIR_CVAR_CH4_SHM_POSIX_IQUEUE_CELL_SIZE {v}"),
    ("mpich", "off-node"): ("MPIR_CVAR_CH4_OFI_EAGER_MAX_MSG_SIZE", None,
                            "-genv MPIR_CVAR_CH4_OFI_EAGER_MAX_MSG_SIZE {v}"),
    ("mpich-ch3", "on-node"): ("MPIR_CVAR_CH3_EAGER_MAX_MSG_SIZE", 131072,
                               "-genv MPIR_CVAR_CH3_EAGER_MAX_MSG_SIZE {v}"),
    ("mpich-ch3", "off-node"): ("MPIR_CVAR_CH3_EAGER_MAX_MSG_SIZE", 131072,
                                "-genv MPIR_CVAR_CH3_EAGER_MAX_MSG_SIZE {v}"),
    ("cray", "on-node"): ("MPICH_MAX_SHORT_MSG_SIZE", 128000, "export MPICH_MAX_SHORT_MSG_SIZE={v}"),
    ("cray", "off-node"): ("MPICH_MAX_SHORT_MSG_SIZE", 128000, "export MPICH_MAX_SHORT_MSG_SIZE={v}"),
}


def _size(text: str | None) -> int | None:
    """A byte count as the libraries accept it: 8192, 8k, 64K, 1m (None: not a size, e.g. auto)."""
    if not text:
        return None
    t = text.strip().lower().rstrip("b")
    scale = {"k": 1024, "m": 1 << 20, "g": 1 << 30}.get(t[-1:], 1)
    try:
        return int(float(t[:-1] if scale > 1 else t) * scale)
    except ValueError:
        return None


def library_key(prof: Profile, rep: dict, variables: dict) -> tuple[str, str] | None:
    """(family, transport) of LIMITS for this run, or None when the profile cannot say."""
    lib = str(prof.meta.get("mpi_library") or "")
    family = mpi_family(prof)
    p2p = rep["p2p"]
    transport = "on-node" if p2p["on_node_bytes"] >= p2p["off_node_bytes"] else "off-node"
    if family == "openmpi":
        if variables.get("OMPI_MCA_pml") == "ucx":
            return ("openmpi", "ucx")
        if transport == "on-node" and "v5." in lib.split("Open MPI", 1)[-1][:6]:
            return ("openmpi5", transport)
        return ("openmpi", transport)
    if family == "mpich":
        if "CRAY MPICH" in lib.upper():
            return ("cray", transport)
        device = lib.split("MPICH Device:", 1)[-1].split()[0] if "MPICH Device:" in lib else ""
        if device.startswith("ch3"):
            return ("mpich-ch3", transport)
        return ("mpich-ucx" if device == "ch4:ucx" else "mpich", transport)
    return None


def near_limit(rep: dict, limit: int) -> tuple[set[int], int, int, int]:
    """(buckets just above the limit, messages in them, all messages with a size, the top of
    the largest such message's bucket)."""
    buckets: set[int] = set()
    total = near = top = 0
    for h, n in p2p_by_bucket(rep):
        total += n
        # log2 buckets: one that holds the limit counts when most of its sizes are above it
        if n and h["hi"] + 1 - max(h["lo"], limit) >= limit - min(h["lo"], limit) \
                and h["hi"] >= limit and h["lo"] < ABOVE * limit:
            near += n
            top = max(top, h["hi"] + 1)
            buckets.add(h["bucket"])
    return buckets, near, total, top


def protocol_cost(prof: Profile, rep: dict, buckets: set[int]) -> tuple[float, float]:
    """(what the rendezvous of these messages costs per rank at most, their calls' time per
    rank): a blocking or posting send (kind p2p: MPI_Send, MPI_Isend) at its average of that
    size, since by rendezvous MPI_Send waits for its receiver to post (eager, it returns
    after a copy: tests/programs/late_receiver.c, tune's planted case, gains 45-60 %); a
    receive at its function's fastest call (the handshake included), never more than its
    average: a receive waits for data that is late whatever the protocol (BT's MPI_Waitall)."""
    return p2p_calls_cost(prof, rep, buckets, posts_at_average=True)


def rule(prof: Profile, rep: dict) -> list[dict]:
    env = env_of(rep)
    variables = env["variables"]["all_ranks"] if env else {}
    key = library_key(prof, rep, variables)
    if key is None:
        return []
    var, default, option = LIMITS[key]
    limit = _size(variables.get(var)) or default
    if not limit:
        return []
    buckets, near, total, top = near_limit(rep, limit)
    if total == 0 or near < SHARE * total:
        return []
    cost, spent = protocol_cost(prof, rep, buckets)
    if not worth(cost, rep, MIN_COST_PCT):
        return []
    value = -(-(top + HEADER_ROOM) // 1024) * 1024
    name = var if not var.startswith("OMPI_MCA_") else var[len("OMPI_MCA_"):]
    set_by = "set by this run" if variables.get(var) else (
        "UCX's auto on shared memory, measured" if var == "UCX_RNDV_THRESH" else
        "the library's default")
    evidence = [ev(f"eager limit ({name}, {set_by})", limit, "B"),
                ev(f"point-to-point messages of {limit} B up to {ABOVE * limit - 1} B "
                   "(sends and receives)", near, ""),
                ev("their share of all point-to-point messages", 100.0 * near / total, "%"),
                ev("largest of them below", top, "B"),
                ev("their calls' time per rank (avg)", spent, "s"),
                ev("of it, the sends and the receives at their fastest (the protocol's share "
                   "at most)", cost, "s"),
                ev("point-to-point time per rank (avg)", p2p_time(rep), "s")]
    how = option.format(v=value)
    ch = rerun.change("launch", env={var: str(value)}) if key[0] != "cray" else None
    return [finding(RULE, f"Messages just above the eager limit: {100 * near / total:.0f}% of "
                    f"point-to-point messages are {limit}-{top - 1} B, sent by rendezvous",
                    cost, rep, all_ranks(prof), evidence,
                    f"Raise the eager limit past these messages: {var}={value} ({how}), then "
                    "compare the two profiles (mpiscope compare); or send smaller messages. "
                    "Eager buffers cost memory per peer, so raise it only as far as needed.",
                    rerun.command(prof, rep, ch) if ch else None, bound="upper", change=ch,
                    method="their sends' time (a blocking send waits for its receiver by "
                           "rendezvous) + their receives x each one's fastest call (the handshake "
                           "included); the receives' waiting for late data is not removed by a "
                           "higher limit")]
