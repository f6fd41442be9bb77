"""Aggregation over sweep results: mean, standard deviation, 95% confidence interval over
seeds (Student's t), Jain's fairness index, normalized throughput, per-variant groupings.
Every helper takes and returns polars frames.

    flows = sweep_result.flows()                   # one row per flow and point
    per_run = per_run_mean(flows, "throughput_bps", by=["controller", "loss"])
    summary = mean_ci(per_run, "throughput_bps", by=["controller", "loss"])
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import polars as pl

__all__ = [
    "support_verdict",
    "samples_to_decide",
    "t_quantile",
    "mean_ci",
    "jain",
    "jain_index",
    "normalized",
    "per_run_mean",
    "per_variant",
]


def _t_two_sided(t: float, df: int) -> float:
    """P(|T| <= t) for Student's t with ``df`` (a whole number >= 1) degrees of freedom, in
    closed form (Abramowitz & Stegun 26.7.3 and 26.7.4)."""
    theta = math.atan(t / math.sqrt(df))
    c2 = math.cos(theta) ** 2
    s = math.sin(theta)
    if df % 2 == 1:
        term, total = math.cos(theta), 0.0
        if df > 1:
            total = term
            for k in range(3, df - 1, 2):  # (2*4...(k-1)) / (1*3...k) cos^k
                term *= c2 * (k - 1) / k
                total += term
        return 2 / math.pi * (theta + s * total)
    term, total = 1.0, 1.0
    for k in range(2, df - 1, 2):  # (1*3...(k-1)) / (2*4...k) cos^k
        term *= c2 * (k - 1) / k
        total += term
    return s * total


def t_quantile(confidence: float, df: int) -> float:
    """The two-sided critical value t such that P(|T| <= t) = ``confidence`` for ``df``
    degrees of freedom (e.g. 12.706 for 95% and df = 1, 2.776 for df = 4)."""
    if not 0 < confidence < 1:
        raise ValueError(f"confidence: {confidence!r} must be within (0, 1)")
    if isinstance(df, bool) or not isinstance(df, int) or df < 1:
        raise ValueError(f"df: {df!r} must be a whole number >= 1")
    lo, hi = 0.0, 1.0
    while _t_two_sided(hi, df) < confidence:
        hi *= 2
    for _ in range(200):
        mid = (lo + hi) / 2
        if _t_two_sided(mid, df) < confidence:
            lo = mid
        else:
            hi = mid
        if hi - lo < 1e-12 * max(1.0, hi):
            break
    return (lo + hi) / 2


def support_verdict(support: float | None, confidence: float = 0.95) -> bool | None:
    """A direction decided by a bootstrap's ``support`` (the share of resamples in which it
    holds): True when the two-sided ``confidence`` interval of the difference lies on the
    claimed side (support >= 1 - (1 - confidence)/2), False when it lies wholly on the other
    side (support <= (1 - confidence)/2), None (inconclusive) in between or without support."""
    if support is None or not math.isfinite(support):
        return None
    a = (1 - confidence) / 2
    return True if support >= 1 - a else False if support <= a else None


def samples_to_decide(n: int, support: float, confidence: float = 0.95) -> int | None:
    """About how many samples (``n`` now) would decide an inconclusive bootstrap direction,
    if the effect stays what it is: the support is about Phi(d / se) and se shrinks with
    sqrt(n), so n' = n (z / Phi^-1(support))^2 with z the two-sided ``confidence`` quantile.
    None when the support is 0.5 (no effect seen: no number of samples would decide)."""
    from statistics import NormalDist

    s = min(max(support, 1e-9), 1 - 1e-9)
    z_now = abs(NormalDist().inv_cdf(s))
    if z_now < 1e-6:
        return None
    z = NormalDist().inv_cdf(1 - (1 - confidence) / 2)
    return max(n, math.ceil(n * (z / z_now) ** 2))


def mean_ci(df: pl.DataFrame, value: str, by: Sequence[str] = (), confidence: float = 0.95) -> pl.DataFrame:
    """Per group of ``by``: ``n``, ``mean``, ``std`` (sample, ddof 1), ``ci`` (half-width of the
    ``confidence`` interval of the mean, Student's t with n - 1 degrees of freedom; null for
    n < 2), ``ci_low``, ``ci_high``. Rows are the samples (e.g. one per seed)."""
    by = list(by)
    agg = [
        pl.col(value).count().alias("n"),
        pl.col(value).mean().alias("mean"),
        pl.col(value).std(ddof=1).alias("std"),
    ]
    g = df.group_by(by, maintain_order=True).agg(agg) if by else df.select(agg)
    crit = {n: t_quantile(confidence, n - 1) for n in set(g["n"].to_list()) if n >= 2}
    half = [
        crit[n] * s / math.sqrt(n) if n >= 2 and s is not None else None
        for n, s in zip(g["n"].to_list(), g["std"].to_list(), strict=True)
    ]
    g = g.with_columns(pl.Series("ci", half, dtype=pl.Float64))
    g = g.with_columns(
        (pl.col("mean") - pl.col("ci")).alias("ci_low"), (pl.col("mean") + pl.col("ci")).alias("ci_high")
    )
    return g.sort(by) if by else g


def jain(values: Sequence[float]) -> float:
    """Jain's fairness index (sum x)^2 / (n sum x^2): 1 when all equal, 1/n when one takes all."""
    xs = [float(x) for x in values]
    sq = sum(x * x for x in xs)
    if not xs or sq == 0:
        return float("nan")
    return sum(xs) ** 2 / (len(xs) * sq)


def jain_index(df: pl.DataFrame, value: str, by: Sequence[str]) -> pl.DataFrame:
    """Jain's index of ``value`` within each group of ``by`` (e.g. the flows of one run:
    ``by=["point"]``), as column ``jain`` with ``n`` the group size."""
    by = list(by)
    return (
        df.group_by(by, maintain_order=True)
        .agg(
            pl.col(value).count().alias("n"),
            (pl.col(value).sum() ** 2 / (pl.col(value).count() * (pl.col(value) ** 2).sum())).alias("jain"),
        )
        .sort(by)
    )


def per_run_mean(df: pl.DataFrame, value: str, by: Sequence[str], run: str = "seed") -> pl.DataFrame:
    """The mean of ``value`` per group of ``by`` within each run (``run`` column, default the
    seed): e.g. the per-flow average of each controller in each run, the sample of
    :func:`mean_ci`."""
    keys = list(dict.fromkeys([*by, run]))
    return df.group_by(keys, maintain_order=True).agg(pl.col(value).mean()).sort(keys)


def per_variant(
    df: pl.DataFrame, value: str, variant: str, by: Sequence[str] = (), run: str = "seed"
) -> pl.DataFrame:
    """Mean, std and 95% CI of ``value`` per ``variant`` (e.g. ``controller``) and group of
    ``by``: first the mean over the variant's flows in each run, then the statistics over
    runs."""
    keys = [variant, *by]
    return mean_ci(per_run_mean(df, value, keys, run), value, keys)


def normalized(
    df: pl.DataFrame, value: str, variant: str, baseline: str, by: Sequence[str] = ()
) -> pl.DataFrame:
    """``value`` of every variant divided by the baseline variant's at the same ``by``
    (e.g. TH_venoplus / TH_veno per loss rate and number of flows): the input holds one row
    per variant and group (e.g. the output of :func:`mean_ci` with ``value="mean"``).
    Adds column ``normalized``; rows whose group has no baseline get null."""
    by = list(by)
    base = df.filter(pl.col(variant) == baseline).select([*by, pl.col(value).alias("_baseline")])
    joined = df.join(base, on=by, how="left") if by else df.join(base, how="cross")
    return joined.with_columns((pl.col(value) / pl.col("_baseline")).alias("normalized")).drop("_baseline")
