"""Scaling models: Amdahl's serial fraction, Karp-Flatt, per-function Extra-P models, extrapolation.

All functions are pure (numbers in, dicts out). What each model assumes is in
docs/scaling.md; the short version:

- Amdahl: T(P) = T1 * (f + (1 - f) / P), a fixed serial fraction f; fitted by
  least squares on every strong-scaling run (T is linear in 1/P).
- Karp-Flatt: e(P) = (1/S - 1/p) / (1 - 1/p), the serial fraction each
  measured speedup implies (p = P / P0); an e that grows with P means
  overhead that grows with P, not a fixed serial part.
- Extra-P: each function's time per rank is fitted with Extra-P's
  performance-model normal form (PMNF, c0 + c1 * P^i * log2(P)^j). Its default
  search space has no negative exponents, so strong scaling's c / P cannot be
  expressed; each function is also modelled as its total cost P x T(P), where
  c / P becomes a constant and a + b log2 P becomes a P + b P log2 P, and the
  fit whose T is closer to the measurements (relative error) is kept.
- Error bars: the chosen model's terms refitted by least squares on every
  repetition; the 95 % interval of the mean prediction from the coefficients'
  covariance (Student's t), so they widen with noise and with distance.
"""

from __future__ import annotations

import contextlib
import io
import logging
import math
import warnings

import numpy as np

# Extra-P's single-parameter modeler needs this many distinct rank counts.
EXTRAP_MIN_POINTS = 5
# Extrapolation targets, as multiples of the largest measured rank count.
EXTRAPOLATE = (10, 100)


def amdahl(nps: list[int], times: list[float]) -> dict:
    """Fit T(P) = a + b / P; serial fraction f = a / (a + b) relative to P = 1.

    Arguments:
        nps, times: one entry per run (repetitions repeat P).
    Returns:
        {"available", "why_not", "serial_fraction", "serial_fraction_err", "t1_s",
         "max_speedup"} (err: standard error, None with fewer than 3 rank counts).
    """
    P = np.asarray(nps, float)
    T = np.asarray(times, float)
    if len(np.unique(P)) < 2:
        return {"available": False, "why_not": "needs at least 2 rank counts with a done run",
                "serial_fraction": None, "serial_fraction_err": None, "t1_s": None,
                "max_speedup": None}
    X = np.stack([np.ones_like(P), 1.0 / P], axis=1)
    beta, *_ = np.linalg.lstsq(X, T, rcond=None)
    a, b = (float(v) for v in beta)
    t1 = a + b
    f = a / t1 if t1 > 0 else float("nan")
    err = None
    dof = len(T) - 2
    if dof > 0 and len(np.unique(P)) >= 3 and t1 > 0:
        resid = T - X @ beta
        cov = float(resid @ resid) / dof * np.linalg.inv(X.T @ X)
        # f = a / (a + b): gradient (b, -a) / (a + b)^2
        g = np.array([b, -a]) / t1 ** 2
        err = float(math.sqrt(max(g @ cov @ g, 0.0)))
    return {"available": True, "why_not": None, "serial_fraction": f,
            "serial_fraction_err": err, "t1_s": t1,
            "max_speedup": (1.0 / f) if 0 < f <= 1 else None}


def karp_flatt(rows: list[dict]) -> list[dict]:
    """Experimentally determined serial fraction per P > P0 (rows from aggregate.per_p)."""
    out = []
    if not rows:
        return out
    p0 = rows[0]["np"]
    for row in rows[1:]:
        p = row["np"] / p0
        s = row.get("speedup")
        e = (1.0 / s - 1.0 / p) / (1.0 - 1.0 / p) if s and p > 1 else None
        out.append({"np": row["np"], "serial_fraction": e})
    return out


# ---------------------------------------------------------------------------
# Extra-P


def _extrap_models(nps: list[int], series: dict[str, list[list[float]]]) -> dict:
    """Extra-P's model of each series: name -> extrap Model (values: per P, per repetition)."""
    from extrap.entities.callpath import Callpath
    from extrap.entities.coordinate import Coordinate
    from extrap.entities.experiment import Experiment
    from extrap.entities.measurement import Measurement
    from extrap.entities.metric import Metric
    from extrap.entities.parameter import Parameter
    from extrap.fileio import io_helper
    from extrap.modelers.model_generator import ModelGenerator

    exp = Experiment()
    exp.add_parameter(Parameter("p"))
    metric = Metric("time")
    exp.add_metric(metric)
    coords = [Coordinate(float(n)) for n in nps]
    for c in coords:
        exp.add_coordinate(c)
    paths = {}
    for name, per_p in series.items():
        cp = Callpath(name)
        paths[name] = cp
        exp.add_callpath(cp)
        for c, vals in zip(coords, per_p):
            exp.add_measurement(Measurement(c, cp, metric, [float(v) for v in vals]))
    exp.call_tree = io_helper.create_call_tree(exp.callpaths)
    gen = ModelGenerator(exp)
    # Extra-P logs and warns about small data sets; its verdicts are in the models.
    with warnings.catch_warnings(), contextlib.redirect_stderr(io.StringIO()):
        warnings.simplefilter("ignore")
        level = logging.getLogger().level
        logging.getLogger().setLevel(logging.ERROR)
        try:
            gen.model_all()
        finally:
            logging.getLogger().setLevel(level)
    return {name: gen.models[(cp, metric)] for name, cp in paths.items()}


def _terms(function) -> list[dict]:
    """The compound terms of an Extra-P single-parameter function as plain exponents."""
    out = []
    for term in function.compound_terms:
        poly, log = 0.0, 0.0
        for st in term.simple_terms:
            if st.term_type == "polynomial":
                poly += float(st.exponent)
            else:
                log += float(st.exponent)
        out.append({"coefficient": float(term.coefficient), "poly_exp": poly, "log_exp": log})
    return out


def _basis(terms: list[dict], P: np.ndarray) -> np.ndarray:
    cols = [np.ones_like(P)]
    for t in terms:
        cols.append(P ** t["poly_exp"] * np.log2(P) ** t["log_exp"])
    return np.stack(cols, axis=1)


def _pretty(constant: float, terms: list[dict], cost: bool) -> str:
    biggest = max([abs(constant)] + [abs(t["coefficient"]) for t in terms])
    # Extra-P leaves round-off (1e-18) where the constant is zero; print it as 0.
    parts = [f"{constant:.4g}" if abs(constant) > 1e-12 * biggest else "0"]
    for t in terms:
        f = []
        if t["poly_exp"]:
            f.append("P" if t["poly_exp"] == 1 else f"P^{t['poly_exp']:g}")
        if t["log_exp"]:
            f.append("log2(P)" if t["log_exp"] == 1 else f"log2(P)^{t['log_exp']:g}")
        parts.append(f"{t['coefficient']:.4g} * {' * '.join(f) or '1'}")
    body = " + ".join(parts).replace("+ -", "- ")
    return f"({body}) / P" if cost else body


class FunctionModel:
    """T(P) of one function: an Extra-P model of T or of P x T, with its own error bars."""

    def __init__(self, name: str, nps: list[int], values: list[list[float]], model, cost: bool):
        self.name = name
        self.cost = cost
        fn = model.hypothesis.function
        self.constant = float(fn.constant_coefficient)
        self.terms = _terms(fn)
        # Refit the chosen terms on every repetition for the coefficients' covariance.
        P = np.concatenate([[n] * len(v) for n, v in zip(nps, values)]).astype(float)
        y = np.concatenate([np.asarray(v, float) for v in values])
        if cost:
            y = y * P
        X = _basis(self.terms, P)
        self._cov = None
        self._dof = len(y) - X.shape[1]
        if self._dof > 0:
            beta, *_ = np.linalg.lstsq(X, y, rcond=None)
            resid = y - X @ beta
            s2 = float(resid @ resid) / self._dof
            self._cov = s2 * np.linalg.pinv(X.T @ X)
        # SMAPE of T itself (Extra-P's own is of what it modelled, P x T for a cost model),
        # so the two fits of a function compare on the same scale.
        measured = np.array([np.mean(v) for v in values], float)
        pred = self.predict(np.asarray(nps, float))
        denom = (np.abs(pred) + np.abs(measured)) / 2
        ratio = np.divide(np.abs(pred - measured), denom, out=np.zeros_like(denom),
                          where=denom > 0)
        self.smape = float(100 * ratio.mean()) if len(nps) else 0.0

    def predict(self, P: np.ndarray) -> np.ndarray:
        P = np.asarray(P, float)
        coef = np.array([self.constant] + [t["coefficient"] for t in self.terms])
        y = _basis(self.terms, P) @ coef
        return y / P if self.cost else y

    def interval(self, P: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """95 % interval of the mean prediction (equal to the prediction if the fit is exact
        or there are no spare degrees of freedom)."""
        from scipy.special import stdtrit  # the t quantile (scipy.stats takes seconds to import)

        P = np.asarray(P, float)
        y = self.predict(P)
        if self._cov is None:
            return y, y
        X = _basis(self.terms, P)
        se = np.sqrt(np.maximum(np.einsum("ij,jk,ik->i", X, self._cov, X), 0.0))
        if self.cost:
            se = se / P
        half = stdtrit(self._dof, 0.975) * se
        return y - half, y + half

    def curve(self, pmin: int, pmax: int, n: int = 40) -> dict:
        """The model and its interval from pmin to the last extrapolation target (for plots)."""
        P = np.geomspace(pmin, pmax * EXTRAPOLATE[-1], n)
        lo, hi = self.interval(P)
        return {"np": P.tolist(), "time_s": self.predict(P).tolist(), "lo_s": lo.tolist(),
                "hi_s": hi.tolist()}

    def as_dict(self) -> dict:
        return {"name": self.name, "modelled": "P x T" if self.cost else "T",
                "formula": _pretty(self.constant, self.terms, self.cost),
                "constant": self.constant, "terms": self.terms,
                "smape_pct": self.smape}


def function_models(times: dict[str, dict]) -> dict:
    """Extra-P models of each function's time per rank (times from aggregate.function_times).

    Returns:
        {"available", "why_not", "models": {name: FunctionModel}}
    """
    if not times:
        return {"available": False, "why_not": "no done runs", "models": {}}
    nps = next(iter(times.values()))["np"]
    if len(nps) < EXTRAP_MIN_POINTS:
        return {"available": False,
                "why_not": f"Extra-P needs at least {EXTRAP_MIN_POINTS} rank counts with a "
                           f"done run, the study has {len(nps)}", "models": {}}
    plain = _extrap_models(nps, {n: t["values"] for n, t in times.items()})
    cost = _extrap_models(nps, {n: [[v * p for v in vals] for p, vals in zip(nps, t["values"])]
                                for n, t in times.items()})
    models = {}
    for name, t in times.items():
        a = FunctionModel(name, nps, t["values"], plain[name], cost=False)
        b = FunctionModel(name, nps, t["values"], cost[name], cost=True)
        # Keep T's own model unless P x T is clearly closer (ties favour the simpler reading).
        models[name] = b if b.smape < 0.5 * a.smape else a
    return {"available": True, "why_not": None, "models": models}


def extrapolate(models: dict[str, FunctionModel], kind: str, p0: int, t0_avg: float,
                pmax: int) -> list[dict]:
    """Predicted time per function, the dominant one, and the efficiency at 10x and 100x pmax.

    The wall time per rank is predicted as the sum of the function models
    (computation included, each clamped at 0 s); its interval as the sum of
    their intervals, a conservative bound. Efficiency is relative to the smallest run's average
    wall time ``t0_avg`` at ``p0`` ranks, as in the measured table.
    """
    out = []
    for mult in EXTRAPOLATE:
        P = np.array([float(pmax * mult)])
        per = {}
        for name, m in models.items():
            # A time is never negative, though a fitted a - b log P may become so.
            lo, hi = (np.maximum(v, 0.0) for v in m.interval(P))
            per[name] = {"time_s": float(max(m.predict(P)[0], 0.0)), "lo_s": float(lo[0]),
                         "hi_s": float(hi[0])}
        total = sum(v["time_s"] for v in per.values())
        lo = sum(v["lo_s"] for v in per.values())
        hi = sum(v["hi_s"] for v in per.values())

        def eff(t):
            if t <= 0:
                return None
            return t0_avg * p0 / (P[0] * t) if kind == "strong" else t0_avg / t

        dominant = max(per, key=lambda n: per[n]["time_s"]) if per else None
        out.append({"np": int(P[0]), "multiple": mult, "time_s": total, "time_lo_s": lo,
                    "time_hi_s": hi, "dominant": dominant,
                    "dominant_share": per[dominant]["time_s"] / total if dominant and total > 0
                    else None,
                    "efficiency": eff(total), "efficiency_lo": eff(hi), "efficiency_hi": eff(lo),
                    "functions": per})
    return out
