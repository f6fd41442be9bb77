"""The report's statistics over the probes table, as polars frames (one function per
figure or table), and the published directions as predicates.

Every function takes the probes frame (measure.PROBE_COLUMNS; only the columns it uses need
to be there) and returns a frame with a ``protocol`` column, protocols in the order given
(default: order of first appearance).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import polars as pl

from tcplab.aggregate import samples_to_decide, support_verdict
from tcplab.campaign import published

__all__ = [
    "protocols_of",
    "ecdf",
    "cdf_frame",
    "loss_bin",
    "median_by_loss_bin",
    "throughput_medians",
    "timeout_free_share",
    "timeout_breakdown",
    "mpl_breakdown",
    "percentile",
    "loss_event_percentiles",
    "loss_throughput_correlation",
    "directions",
    "FIG8_CLASSES",
]

#: Fig. 8's classes from the flows table's timeout columns; "mpl" adds its two causes (Fig. 9)
FIG8_CLASSES = {
    "mpl": ("timeouts_mpl_missing_acks", "timeouts_mpl_lost_rtx"),
    "non_trigger": ("timeouts_non_trigger",),
    "lost_fast_rtx": ("timeouts_lost_fast_rtx",),
    "lost_timeout_rtx": ("timeouts_lost_timeout_rtx",),
    "other": ("timeouts_other",),
}


def protocols_of(df: pl.DataFrame, order: list[str] | None = None) -> list[str]:
    present = list(dict.fromkeys(df["protocol"].to_list()))
    if order is None:
        return present
    return [p for p in order if p in present] + [p for p in present if p not in order]


def ecdf(values: Any) -> tuple[np.ndarray, np.ndarray]:
    """Empirical CDF: sorted distinct values x and F(x) = share of values <= x."""
    v = np.sort(np.asarray(values, dtype=float))
    v = v[~np.isnan(v)]
    if v.size == 0:
        return np.array([]), np.array([])
    x, counts = np.unique(v, return_counts=True)
    return x, np.cumsum(counts) / v.size


def cdf_frame(df: pl.DataFrame, column: str, order: list[str] | None = None) -> pl.DataFrame:
    """(protocol, value, cdf): the ECDF of ``column`` per protocol (Fig. 2, Fig. 7)."""
    parts = []
    for p in protocols_of(df, order):
        x, y = ecdf(df.filter(pl.col("protocol") == p)[column].drop_nulls().to_numpy())
        parts.append(pl.DataFrame({"protocol": [p] * len(x), "value": x, "cdf": y}))
    if not parts:
        return pl.DataFrame(schema={"protocol": pl.String, "value": pl.Float64, "cdf": pl.Float64})
    return pl.concat(parts)


def loss_bin(loss: Any, width: float = 0.02) -> np.ndarray:
    """Upper edge of the report's Fig. 4 bin: x stands for loss rates in (x − width, x];
    a loss rate of exactly 0 is bin 0."""
    r = np.asarray(loss, dtype=float) / width
    k = np.ceil(np.round(r, 9))  # 0.04/0.02 is 2.0000000000000004 in floating point
    return np.round(k * width, 9)


def median_by_loss_bin(
    df: pl.DataFrame,
    width: float = 0.02,
    value: str = "normalized_throughput",
    order: list[str] | None = None,
) -> pl.DataFrame:
    """(protocol, loss_bin, connections, median): Fig. 4."""
    d = df.select("protocol", "loss_rate", value).with_columns(
        pl.Series("loss_bin", loss_bin(df["loss_rate"].to_numpy(), width))
    )
    out = (
        d.group_by("protocol", "loss_bin")
        .agg(pl.len().alias("connections"), pl.col(value).median().alias("median"))
        .sort("loss_bin")
    )
    return _in_order(out, protocols_of(df, order))


def _in_order(out: pl.DataFrame, order: list[str]) -> pl.DataFrame:
    rank = {p: i for i, p in enumerate(order)}
    return (
        out.with_columns(pl.col("protocol").replace_strict(rank, return_dtype=pl.Int64).alias("_rank"))
        .sort(["_rank", *[c for c in out.columns if c != "protocol"][:1]])
        .drop("_rank")
    )


def throughput_medians(df: pl.DataFrame, order: list[str] | None = None) -> pl.DataFrame:
    """(protocol, connections, median_mbps, median_normalized, published_mbps): Fig. 2/5."""
    out = df.group_by("protocol").agg(
        pl.len().alias("connections"),
        (pl.col("throughput_bps").median() / 1e6).alias("median_mbps"),
        pl.col("normalized_throughput").median().alias("median_normalized"),
        pl.col("completed").mean().alias("completed_share"),
    )
    out = out.with_columns(
        pl.col("protocol")
        .replace_strict(published.THROUGHPUT_MEDIAN_MBPS, default=None, return_dtype=pl.Float64)
        .alias("published_mbps")
    )
    return _in_order(out, protocols_of(df, order))


def timeout_free_share(df: pl.DataFrame, order: list[str] | None = None) -> pl.DataFrame:
    """(protocol, connections, timeout_free, published): Fig. 7's value at 0 timeouts."""
    out = df.group_by("protocol").agg(
        pl.len().alias("connections"), (pl.col("timeouts") == 0).mean().alias("timeout_free")
    )
    out = out.with_columns(
        pl.col("protocol")
        .replace_strict(published.TIMEOUT_FREE_SHARE, default=None, return_dtype=pl.Float64)
        .alias("published")
    )
    return _in_order(out, protocols_of(df, order))


def timeout_breakdown(df: pl.DataFrame, order: list[str] | None = None) -> pl.DataFrame:
    """(protocol, class, per_connection, share): Fig. 8. ``per_connection`` is the mean
    number of timeouts of the class per connection (all connections of the protocol);
    ``share`` its fraction of all the protocol's timeouts (null without any)."""
    rows = []
    for p in protocols_of(df, order):
        d = df.filter(pl.col("protocol") == p)
        n = d.height
        total = float(d["timeouts"].sum())
        for cls, cols in FIG8_CLASSES.items():
            count = float(sum(d[c].sum() for c in cols))
            rows.append(
                {
                    "protocol": p,
                    "class": cls,
                    "per_connection": count / n if n else None,
                    "share": count / total if total else None,
                }
            )
    return pl.DataFrame(
        rows,
        schema={"protocol": pl.String, "class": pl.String, "per_connection": pl.Float64, "share": pl.Float64},
    )


def mpl_breakdown(df: pl.DataFrame, order: list[str] | None = None) -> pl.DataFrame:
    """(protocol, missing_acks, lost_rtx): Fig. 9, mean per connection."""
    out = df.group_by("protocol").agg(
        pl.col("timeouts_mpl_missing_acks").cast(pl.Float64).mean().alias("missing_acks"),
        pl.col("timeouts_mpl_lost_rtx").cast(pl.Float64).mean().alias("lost_rtx"),
    )
    return _in_order(out, protocols_of(df, order))


def percentile(values: Any, q: float) -> float:
    """The q-th percentile as the smallest observed value v with at least q % of the values
    <= v (no interpolation, so counts stay counts)."""
    v = np.asarray(values, dtype=float)
    if v.size == 0:
        return float("nan")
    return float(np.percentile(v, q, method="inverted_cdf"))


def loss_event_percentiles(
    df: pl.DataFrame, qs: tuple[int, ...] = published.PERCENTILES, order: list[str] | None = None
) -> pl.DataFrame:
    """(protocol, kind, p10, p25, ...): Table 3; kind "any" or "multiple"."""
    rows = []
    for kind, col in (("any", "loss_events_any"), ("multiple", "loss_events_multiple")):
        for p in protocols_of(df, order):
            v = df.filter(pl.col("protocol") == p)[col].to_numpy()
            rows.append({"protocol": p, "kind": kind, **{f"p{q}": percentile(v, q) for q in qs}})
    return pl.DataFrame(rows)


def loss_throughput_correlation(df: pl.DataFrame, order: list[str] | None = None) -> pl.DataFrame:
    """(protocol, correlation): Pearson correlation of log(normalized throughput) with the
    data loss rate (report §8.2.1, after Paxson)."""
    rows = []
    for p in protocols_of(df, order):
        d = df.filter((pl.col("protocol") == p) & (pl.col("normalized_throughput") > 0))
        x = d["loss_rate"].to_numpy().astype(float)
        y = np.log(d["normalized_throughput"].to_numpy().astype(float))
        c = float(np.corrcoef(x, y)[0, 1]) if len(x) > 2 and x.std() > 0 and y.std() > 0 else None
        rows.append(
            {"protocol": p, "correlation": c, "published": published.LOSS_THROUGHPUT_CORRELATION.get(p)}
        )
    return pl.DataFrame(
        rows, schema={"protocol": pl.String, "correlation": pl.Float64, "published": pl.Float64}
    )


# --------------------------------------------------------------------------------------------
# Directions


def _values(df: pl.DataFrame, protocol: str, expr: pl.Expr) -> np.ndarray:
    return df.filter(pl.col("protocol") == protocol).select(expr.cast(pl.Float64)).to_series().to_numpy()


def _bootstrap_share(a: np.ndarray, b: np.ndarray, stat, rng: np.random.Generator, n: int = 1000) -> float:
    """Share of bootstrap resamples in which stat(a) < stat(b) (ties count half)."""
    if a.size == 0 or b.size == 0:
        return float("nan")
    ia = rng.integers(0, a.size, (n, a.size))
    ib = rng.integers(0, b.size, (n, b.size))
    sa = stat(a[ia], axis=1)
    sb = stat(b[ib], axis=1)
    return float(np.mean((sa < sb) + 0.5 * (sa == sb)))


def _compare(
    df: pl.DataFrame,
    lower: str,
    higher: str,
    expr: pl.Expr,
    stat,
    what: str,
    rng: np.random.Generator,
) -> dict[str, Any]:
    """stat(lower) < stat(higher), with the numbers and the bootstrap support."""
    a, b = _values(df, lower, expr), _values(df, higher, expr)
    if a.size == 0 or b.size == 0:
        return {"holds": None, "text": f"{what}: {lower} or {higher} not probed", "support": None, "missing": True}
    sa, sb = float(stat(a)), float(stat(b))
    support = _bootstrap_share(a, b, stat, rng)
    holds = support_verdict(support)
    return {
        "holds": holds,
        "text": f"{what}: {lower} {sa:.3g} vs {higher} {sb:.3g}",
        "pair": (lower, higher),
        "values": (sa, sb),
        "support": support,
        "decide_n": None if holds is not None or math.isnan(support) else samples_to_decide(min(a.size, b.size), support),
    }


def _mean(x: np.ndarray, axis: int | None = None) -> Any:
    return np.mean(x, axis=axis)


def _median(x: np.ndarray, axis: int | None = None) -> Any:
    return np.median(x, axis=axis)


def directions(df: pl.DataFrame, seed: int = 1) -> list[dict[str, Any]]:
    """The report's published directions as predicates on this campaign's probes.

    Each entry: key, claim (published.DIRECTIONS), verdict (``holds`` when every comparison
    holds, ``does not hold`` when one does not, ``inconclusive`` when one is undecided,
    ``not probed`` when a protocol it needs was not probed), holds (True, False, or None for
    the last two), numbers (one line per comparison), support (per comparison: the share of
    1000 bootstrap resamples of the connections in which it holds; a comparison holds at
    >= 0.975, does not at <= 0.025: the two-sided 95 % interval of the difference on one
    side of 0, :func:`tcplab.aggregate.support_verdict`) and decide_n (about how many
    connections per protocol would decide the undecided comparisons if the effect stayed,
    :func:`tcplab.aggregate.samples_to_decide`; None when nothing is undecided or no effect
    is seen).
    """
    rng = np.random.default_rng([seed, 99])
    timeouts = pl.col("timeouts")
    tput = pl.col("throughput_bps") / 1e6
    lost_fast = pl.col("timeouts_lost_fast_rtx")
    lost_mpl = pl.col("timeouts_mpl_lost_rtx")
    present = set(df["protocol"].unique().to_list()) if df.height else set()
    sack = [p for p in ("fack", "rh", "lrd") if p in present]
    checks: dict[str, list[dict[str, Any]]] = {
        "sack_fewer_timeouts": [
            _compare(df, p, "reno", timeouts, _mean, "mean timeouts/connection", rng) for p in sack
        ]
        or [_compare(df, "fack", "reno", timeouts, _mean, "mean timeouts/connection", rng)],
        "sack_higher_throughput": [
            _compare(df, "reno", p, tput, _median, "median throughput Mbit/s", rng) for p in sack
        ]
        or [_compare(df, "reno", "fack", tput, _median, "median throughput Mbit/s", rng)],
        # §10.6: the fewest lost-fast-retransmission timeouts of all protocols; §10.4.2: fewer
        # lost-MPL-retransmission timeouts than RH (the report states the two per class)
        "lrd_fewest_lost_rtx_timeouts": (
            [
                _compare(df, "lrd", p, lost_fast, _mean, "mean lost-fast-rtx timeouts/connection", rng)
                for p in sorted(present - {"lrd"})
            ]
            + [_compare(df, "lrd", "rh", lost_mpl, _mean, "mean lost-MPL-rtx timeouts/connection", rng)]
        )
        if "lrd" in present and len(present) > 1
        else [{"holds": None, "text": "lrd or another protocol not probed", "support": None, "missing": True}],
        "vegas_fewer_multiple_loss": [
            _compare(
                df,
                "vegas-ca",
                "reno",
                pl.col("loss_events_multiple"),
                _mean,
                "mean multiple-loss events/connection",
                rng,
            )
        ],
        "vegas_more_non_trigger": [
            _compare(
                df,
                "reno",
                "vegas-ca",
                pl.col("timeouts_non_trigger"),
                _mean,
                "mean non-trigger timeouts/connection",
                rng,
            )
        ],
        "vegas_lower_throughput": [
            _compare(df, "vegas-ca", "reno", tput, _median, "median throughput Mbit/s", rng)
        ],
    }
    out = []
    for key, parts in checks.items():
        verdicts = [p["holds"] for p in parts]
        if any(p.get("missing") for p in parts):
            verdict = "not probed"
        elif any(v is False for v in verdicts):
            verdict = "does not hold"
        elif any(v is None for v in verdicts):
            verdict = "inconclusive"
        else:
            verdict = "holds"
        need = [p["decide_n"] for p in parts if p.get("decide_n") is not None]
        out.append(
            {
                "key": key,
                "claim": published.DIRECTIONS[key],
                "verdict": verdict,
                "holds": {"holds": True, "does not hold": False}.get(verdict),
                "decide_n": max(need) if need else None,
                "numbers": [p["text"] for p in parts],
                "pairs": [p.get("pair") for p in parts],
                "values": [p.get("values") for p in parts],
                "support": [
                    None if p["support"] is None or math.isnan(p["support"]) else p["support"] for p in parts
                ],
            }
        )
    return out


def live_vs_virtual(live: pl.DataFrame, virtual: pl.DataFrame, order: list[str] | None = None) -> pl.DataFrame:
    """Per protocol, the same scheduled probes run live and simulated: probes
    and completed share of each, median throughput of each (Mb/s, completed probes) and
    their ratio live / simulated, and the median of the per-probe ratios (probes that
    completed in both)."""

    def side(df: pl.DataFrame, tag: str) -> pl.DataFrame:
        return df.group_by("protocol").agg(
            pl.len().alias(f"{tag}_probes"),
            pl.col("completed").mean().alias(f"{tag}_completed_share"),
            (pl.col("throughput_bps").filter(pl.col("completed")).median() / 1e6).alias(f"{tag}_median_mbps"),
        )

    pairs = live.select("probe", "protocol", pl.col("throughput_bps").alias("live"), pl.col("completed").alias("ok")) \
        .join(virtual.select("probe", pl.col("throughput_bps").alias("sim"), pl.col("completed").alias("sim_ok")),
              on="probe") \
        .filter(pl.col("ok") & pl.col("sim_ok") & (pl.col("sim") > 0))
    per_probe = pairs.group_by("protocol").agg((pl.col("live") / pl.col("sim")).median().alias("median_probe_ratio"))
    out = side(live, "live").join(side(virtual, "sim"), on="protocol", how="full", coalesce=True) \
        .join(per_probe, on="protocol", how="left")
    out = out.with_columns((pl.col("live_median_mbps") / pl.col("sim_median_mbps")).alias("median_ratio"))
    return _in_order(out, protocols_of(live, order))
