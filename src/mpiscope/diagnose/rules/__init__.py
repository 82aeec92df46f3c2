"""The diagnose rules, one module each: ``rule(Profile, report dict) -> list[finding]``.

Each module names its thresholds at its top and docs/diagnose.md gives the reasoning
behind each number. A new rule is a module here and one entry in RULES.
"""

from __future__ import annotations

from . import (barriers, bursts, compute_imbalance, cpu_overlap, cpu_starved, drift,
               eager_limit, finalize_wait, hang, init_time, io_serial, jitter, late_arrival,
               late_sender, latency, omp_threads, oversubscribed, phase_edges, placement,
               root_hotspot, small_collectives, thread_imbalance, threads, unbound)

# Every rule, in no particular order (findings are ranked by cost).
RULES = [threads.rule, compute_imbalance.rule, late_arrival.rule, late_sender.rule,
         root_hotspot.rule, small_collectives.rule, barriers.rule, placement.rule,
         latency.rule, io_serial.rule, cpu_overlap.rule, omp_threads.rule, unbound.rule,
         eager_limit.rule, init_time.rule, finalize_wait.rule, oversubscribed.rule,
         cpu_starved.rule, bursts.rule, drift.rule, phase_edges.rule, jitter.rule, hang.rule,
         thread_imbalance.rule]

__all__ = ["RULES", "barriers", "bursts", "compute_imbalance", "cpu_overlap", "cpu_starved",
           "drift", "eager_limit", "finalize_wait", "hang", "init_time", "io_serial", "jitter",
           "late_arrival", "late_sender", "latency", "omp_threads", "oversubscribed",
           "phase_edges", "placement", "root_hotspot", "small_collectives", "thread_imbalance",
           "threads", "unbound"]
