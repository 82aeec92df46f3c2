"""unbound-ranks: ranks free to run on every CPU of a node they share with other ranks.

The runtime flags a rank unbound when its mask holds every CPU the node's ranks use, the
node runs more than one rank and has more than one CPU (``--bind-to none``, or a launcher
without binding). The kernel may then move ranks between CPUs, put two on one CPU while
another idles, and away from their memory: a risk a profile cannot price without a trace.
When the node runs more threads than CPUs (load > 1 thread per CPU on the unbound ranks'
CPUs) the cost is the overlap rule's: the largest compute time of an unbound rank x (1 -
1/load). Otherwise the finding costs 0 (like threads-summed) and says what to check: it is
listed after the findings that cost time.
"""

from __future__ import annotations

import numpy as np

from ...profile import Profile
from ..common import BIND_ANYWHERE, bind_command, env_of, ev, finding, ranks_field, stat

RULE = "unbound-ranks"


def rule(prof: Profile, rep: dict) -> list[dict]:
    env = env_of(rep)
    if not env or not env["unbound_ranks"]:
        return []
    if prof.is_summary:
        load = float(env["load"]["max"])
        comp = float(stat(rep, "compute")["max"])
        ranks = ranks_field([env["unbound"]["max_pe"]])
        evidence = [ev("unbound ranks", env["unbound_ranks"], "")]
    else:
        e = prof.env
        unb = np.flatnonzero(e["flags"] & 1)
        load = float(e["load"][unb].max())
        comp = float(np.maximum(prof.rank_metric("compute")[unb], 0.0).max())
        ranks = ranks_field(unb)
        r = int(unb[0])
        node = int(prof.ranks["node"][r])
        evidence = [ev("unbound ranks", len(unb), ""),
                    ev(f"rank {r} may run on CPUs", prof.environment["cpus"].get(
                        int(e["cpus"][r]), "?"), ""),
                    ev(f"ranks on its node ({node})", int((prof.ranks["node"] == node).sum()), "")]
    evidence.append(ev("threads per CPU on their CPUs (max)", load, "x"))
    cost = comp * (1.0 - 1.0 / load) if load > 1.0 else 0.0
    why = ("more threads than CPUs float over the node" if load > 1.0 else
           "the kernel may move them between CPUs and away from their memory (not priced: "
           "a profile has no trace of migrations)")
    return [finding(RULE, f"Unbound ranks on a shared node: {env['unbound_ranks']:,} rank(s) "
                    f"may run on any CPU of their node; {why}", cost, rep, ranks, evidence,
                    "Bind each rank to its own cores so the kernel cannot stack or move them: "
                    + BIND_ANYWHERE + ".", bind_command(prof))]
