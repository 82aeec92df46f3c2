"""late-sender: ranks wait in receives for slow neighbours (seed 000 CM1, seed 004).

The wait is concentrated on the communication partners of the slow ranks
(compute-imbalance's slow ranks): they block in MPI_Recv / MPI_Wait* for data
the slow ranks send late. Cost = mean wait time of those partners minus the
slow ranks' own wait (the slow ranks show how long a receive takes when the
data is on time), at most the slow ranks' extra compute over their partners
(the lateness they can cause). Full mode only: needs per-rank wait time and
peers. Silent where compute-imbalance is (``imbalanced``): a sender made late by another
process on its CPU is cpu-starved's.
"""

from __future__ import annotations

import numpy as np

from ...profile import Profile
from ..common import MIN_COST_PCT, ev, finding, negative_useful, ranks_field, worth
from ..sites import site_evidence
from .compute_imbalance import imbalanced, slow_ranks

RULE = "late-sender"
# The partners' mean wait must reach this share of the other ranks' mean wait (when there are
# others): the wait sits on them, not elsewhere. Not above 1: in a small grid the partners'
# partners wait as long, one step later.
CONCENTRATION = 0.9


def rule(prof: Profile, rep: dict) -> list[dict]:
    if prof.is_summary or negative_useful(prof, rep) or len(prof.peers) == 0:
        return []
    if not imbalanced(prof, rep):
        return []
    useful = prof.rank_metric("compute")
    slow = slow_ranks(useful)
    p = prof.peers
    touch = np.isin(p["rank"], slow) | np.isin(p["peer"], slow)
    partners = np.setdiff1d(np.union1d(p["rank"][touch], p["peer"][touch]), slow)
    if len(partners) == 0:
        return []
    wait = prof.rank_metric("wait")
    others = np.setdiff1d(np.arange(prof.nranks), np.union1d(partners, slow))
    w_part, w_slow = float(wait[partners].mean()), float(wait[slow].mean())
    if len(others) and w_part < CONCENTRATION * float(wait[others].mean()):
        return []
    # The senders cannot make their partners wait longer than the extra time they compute.
    cost = min(w_part - w_slow, float(useful[slow].mean() - useful[partners].mean()))
    if not worth(cost, rep, MIN_COST_PCT):
        return []
    evidence = [ev(f"wait time of the slow ranks' partners (mean of {len(partners)})", w_part, "s"),
                ev(f"wait time of the slow ranks (mean of {len(slow)})", w_slow, "s"),
                ev("slow ranks", ", ".join(map(str, slow[:8].tolist()))
                   + (" ..." if len(slow) > 8 else ""), "")]
    if len(others):
        evidence.append(ev(f"wait time of the other ranks (mean of {len(others)})",
                           float(wait[others].mean()), "s"))
    evidence += site_evidence(rep, *(r["name"] for r in rep["functions"] if r["kind"] == "wait"), what="wait")
    return [finding(RULE, "Waiting on late senders: the partners of the slow ranks block in "
                    "receives", cost, rep, ranks_field(partners), evidence,
                    "The data arrives late because its senders compute longer: balance their "
                    "work (see compute-imbalance); pre-post the receives (MPI_Irecv before "
                    "the computation) and overlap, so the partners compute while the data "
                    "travels.",
                    method="partners' mean wait - the slow ranks' mean wait, at most the slow "
                           "ranks' extra compute")]
