"""Is a candidate faster than the baseline? Two t intervals on the relative gain.

The runs alternate (round r runs the baseline and every candidate once, the order
rotating from round to round), so round r's baseline and candidate ran minutes apart
at most under the same load: the pairs. The main test is on the pairs: the log of
candidate time / baseline time per round, its mean and a Student t interval with n-1
degrees of freedom; gain = 1 - exp(mean), so a 20 % gain is a candidate taking 0.8x
the baseline's time. A drift of the machine's load over the rounds cancels in each
pair. Welch's t interval on the two sets of times (no pairing, unequal variances), as
a share of the baseline's mean, is the second opinion. A candidate is kept only when
BOTH intervals lie above 0: a gain whose interval includes 0 is never claimed.

RATIONALE: a t interval rather than a bootstrap: with 3 to 10 runs per side a
bootstrap's percentile interval is too narrow (it cannot see beyond the few values it
resamples), while t's quantile widens with few runs (4.3 at 3 pairs, 2.8 at 5).
"""

from __future__ import annotations

import math

import numpy as np

LEVEL = 0.95
# Fewest pairs a gain is judged on; fewer (a budget cut the rounds short, runs failed)
# and the candidate is not kept.
MIN_PAIRS = 2


def _t(level: float, df: float) -> float:
    # Student's t quantile; scipy.special, not scipy.stats (seconds less to import)
    from scipy.special import stdtrit

    return float(stdtrit(df, 0.5 + level / 2))


def paired_gain(base: list[float], cand: list[float], level: float = LEVEL) -> dict:
    """The gain of ``cand`` over ``base`` from per-round pairs (equal lengths).

    Returns {"n", "gain_pct", "ci_pct": [lo, hi]}; gain and interval None when there are
    fewer than MIN_PAIRS pairs.
    """
    b, c = np.asarray(base, np.float64), np.asarray(cand, np.float64)
    n = len(b)
    if n < MIN_PAIRS or len(c) != n or np.any(b <= 0) or np.any(c <= 0):
        return {"n": n, "gain_pct": None, "ci_pct": None}
    d = np.log(c / b)
    mean = float(d.mean())
    half = _t(level, n - 1) * float(d.std(ddof=1)) / math.sqrt(n)
    return {"n": n, "gain_pct": 100.0 * (1.0 - math.exp(mean)),
            "ci_pct": [100.0 * (1.0 - math.exp(mean + half)),
                       100.0 * (1.0 - math.exp(mean - half))]}


def welch_gain(base: list[float], cand: list[float], level: float = LEVEL) -> dict:
    """Welch's interval on mean(base) - mean(cand), as % of mean(base).

    Returns {"gain_pct", "ci_pct": [lo, hi]} (None with fewer than MIN_PAIRS per side).
    """
    b, c = np.asarray(base, np.float64), np.asarray(cand, np.float64)
    if len(b) < MIN_PAIRS or len(c) < MIN_PAIRS or b.mean() <= 0:
        return {"gain_pct": None, "ci_pct": None}
    vb, vc = b.var(ddof=1) / len(b), c.var(ddof=1) / len(c)
    diff, se = float(b.mean() - c.mean()), math.sqrt(vb + vc)
    if se == 0:
        half = 0.0
    else:  # Welch-Satterthwaite degrees of freedom
        df = (vb + vc) ** 2 / (vb ** 2 / (len(b) - 1) + vc ** 2 / (len(c) - 1))
        half = _t(level, df) * se
    scale = 100.0 / float(b.mean())
    return {"gain_pct": diff * scale, "ci_pct": [(diff - half) * scale, (diff + half) * scale]}


def above_zero(*intervals: dict) -> bool:
    """Every interval exists and its lower end is above 0."""
    return all(i.get("ci_pct") is not None and i["ci_pct"][0] > 0 for i in intervals)
