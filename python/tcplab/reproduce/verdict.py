"""Three-valued verdicts of the papers' claims, decided from confidence intervals over seeds.

A claim compares a measured quantity with a bound taken from the paper's words. The quantity
is an :class:`Estimate`: a point value with a 95% interval, from a Student-t interval on
per-seed values (:func:`t_interval`) or a percentile bootstrap over seeds for ratios and
shares (:func:`bootstrap`, :func:`ratio_of_means`, :func:`pooled_ratio`). A :class:`Test`
then says:

- **holds** when the whole interval satisfies the bound,
- **does not hold** when the whole interval violates it,
- **inconclusive** when the interval straddles the bound (or cannot be computed: one seed,
  missing data).

A claim made of several tests (e.g. "at every loss rate") holds when all hold, does not hold
when any does not hold, and is inconclusive otherwise (:func:`combine`).

The words "about", "roughly the same", "close to", "almost" are operationalized once, as
:data:`ABOUT` (see its comment), so every experiment reads them the same way.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from tcplab.aggregate import support_verdict, t_quantile

HOLDS = "holds"
FAILS = "does not hold"
INCONCLUSIVE = "inconclusive"
VERDICTS = (HOLDS, FAILS, INCONCLUSIVE)

CONFIDENCE = 0.95
BOOTSTRAP_RESAMPLES = 4000

#: "about", "roughly the same", "close to", "almost the same": within ±10% (relative). Chosen
#: from the papers' own numbers, never from tcplab's: the largest differences the authors call
#: the same are 2.3% (Pang et al. Table I, LL thin pipe: Veno 1441 vs Reno 1408 kb/s, "close
#: to") and 2.0% (Shimonishi et al. §IV-B: AReno 227.4 vs 232.1 Mb/s, "almost the same"); the
#: smallest they call a difference are 16% (Pang et al. Table I, fat HL: "higher throughputs")
#: and 21% (Fu & Liew §III-D: "21% improvement"). ±10% is about half the smallest stated
#: difference and well above the largest stated sameness. "Higher" / "lower" (a comparison
#: the authors state as a difference) is then read as outside this band: > 1.10 or < 0.90.
#: A published number X ("80% higher", "7 times", "around 40%") is reproduced when the
#: measured value lies within X ± 10%; "almost fully" is ≥ 1 - 10%.
ABOUT = 0.10


@dataclass(frozen=True)
class Estimate:
    """A measured quantity: point value, ``confidence`` interval [low, high], the number of
    samples (seeds; for several groups the smallest), and the method ("t", "bootstrap")."""

    value: float
    low: float
    high: float
    n: int
    method: str

    @property
    def finite(self) -> bool:
        return all(math.isfinite(x) for x in (self.value, self.low, self.high))

    def text(self, digits: int = 3) -> str:
        if not math.isfinite(self.value):
            return "n/a"
        v = f"{self.value:.{digits}g}"
        if self.method == "bootstrap support":
            return f"support {self.value:.3f}"
        if self.method == "count":
            return v
        if self.method == DETERMINISTIC:
            return f"{v} (one deterministic run: every seed gave this value)"
        if not (math.isfinite(self.low) and math.isfinite(self.high)):
            return f"{v} [CI n/a, n={self.n}]"
        return f"{v} [{self.low:.{digits}g}, {self.high:.{digits}g}]"


#: The method of an estimate whose samples were all identical: one deterministic run, n = 1,
#: judged by its value (an interval of identical seeds would be a false 95 % interval).
DETERMINISTIC = "deterministic"


def _nan(n: int, method: str) -> Estimate:
    return Estimate(math.nan, -math.inf, math.inf, n, method)


def t_interval(samples: Iterable[float], confidence: float = CONFIDENCE) -> Estimate:
    """Mean of the per-seed ``samples`` with its Student-t interval (n - 1 degrees of
    freedom). One sample: an unbounded interval (inconclusive against any bound). Identical
    samples (a deterministic run repeated): n = 1, method :data:`DETERMINISTIC`, the value as
    its own interval, so the verdict is the value's and says so."""
    x = np.asarray([float(s) for s in samples], dtype=float)
    x = x[np.isfinite(x)]
    n = len(x)
    if n == 0:
        return _nan(0, "t")
    m = float(x.mean())
    if n < 2:
        return Estimate(m, -math.inf, math.inf, n, "t")
    if float(x.min()) == float(x.max()):
        return Estimate(m, m, m, 1, DETERMINISTIC)
    half = t_quantile(confidence, n - 1) * float(x.std(ddof=1)) / math.sqrt(n)
    return Estimate(m, m - half, m + half, n, "t")


def bootstrap(
    stat: Callable[..., float],
    *groups: Sequence,
    confidence: float = CONFIDENCE,
    resamples: int = BOOTSTRAP_RESAMPLES,
    seed: int = 1,
) -> Estimate:
    """``stat(*groups)`` with a percentile-bootstrap interval: each group (rows = seeds, each
    row a number or a vector) is resampled with replacement independently of the others.
    A group with fewer than 2 rows gives an unbounded interval. Resamples where ``stat`` is
    not finite (e.g. a zero denominator) are dropped; if more than half are, the interval is
    unbounded."""
    arrs = [np.asarray(g, dtype=float) for g in groups]
    n = min((len(a) for a in arrs), default=0)
    if n == 0:
        return _nan(0, "bootstrap")
    with np.errstate(divide="ignore", invalid="ignore"):
        value = float(stat(*arrs))
    if n < 2:
        return Estimate(value, -math.inf, math.inf, n, "bootstrap")
    if all(bool(np.all(a == a[0])) for a in arrs):  # every seed alike in every group
        return Estimate(value, value, value, 1, DETERMINISTIC)
    rng = np.random.default_rng(seed)
    idx = [rng.integers(0, len(a), size=(resamples, len(a))) for a in arrs]
    out = np.empty(resamples)
    with np.errstate(divide="ignore", invalid="ignore"):
        for i in range(resamples):
            out[i] = stat(*(a[j[i]] for a, j in zip(arrs, idx, strict=True)))
    ok = out[np.isfinite(out)]
    if len(ok) < resamples / 2:
        return Estimate(value, -math.inf, math.inf, n, "bootstrap")
    a = (1 - confidence) / 2
    return Estimate(value, float(np.quantile(ok, a)), float(np.quantile(ok, 1 - a)), n, "bootstrap")


def ratio_of_means(a: Sequence[float], b: Sequence[float], **kw) -> Estimate:
    """mean(a) / mean(b), a and b per-seed values of independent runs."""
    return bootstrap(lambda x, y: x.mean() / y.mean(), a, b, **kw)


def pooled_ratio(num: Sequence[float], den: Sequence[float], **kw) -> Estimate:
    """sum(num) / sum(den) over seeds (e.g. pooled counts), resampling the seeds as pairs."""
    rows = np.column_stack([np.asarray(num, dtype=float), np.asarray(den, dtype=float)])
    return bootstrap(lambda r: r[:, 0].sum() / r[:, 1].sum(), rows, **kw)


@dataclass(frozen=True)
class Test:
    """One comparison of an estimate with a bound: ``label`` names the quantity, ``bound``
    the condition in words (e.g. "≥ 1.61"), ``verdict`` one of :data:`VERDICTS`."""

    label: str
    estimate: Estimate
    bound: str
    verdict: str
    #: the numeric bounds the interval is compared with (for :meth:`samples_to_decide`)
    limits: tuple[float, ...] = ()

    def text(self) -> str:
        return f"{self.label} = {self.estimate.text()} (needs {self.bound})"

    def samples_to_decide(self) -> int | None:
        """For an inconclusive test: how many samples (seeds, or what ``estimate.n`` counts)
        would make the interval clear the nearest bound if the point value and the spread per
        sample stayed as measured (half-width ∝ 1/√n). None when that cannot be said (a
        decided test, no interval, no numeric bound, a point value exactly on the bound)."""
        if not self._projectable():
            return None
        e = self.estimate
        gap = min(abs(e.value - b) for b in self.limits)
        return math.ceil(e.n * ((e.high - e.low) / 2 / gap) ** 2) if gap > 0 else None

    def _projectable(self) -> bool:
        e = self.estimate
        return self.verdict == INCONCLUSIVE and bool(self.limits) and e.n >= 2 and e.finite and e.high > e.low

    def outcome(self) -> str:
        """``text()`` with the verdict, and for an inconclusive test the projection of
        :meth:`samples_to_decide`."""
        out = f"{self.text()}: {self.verdict}"
        if not self._projectable():
            return out
        need, n = self.samples_to_decide(), self.estimate.n
        if need is None or need > DECIDABLE_FACTOR * n:
            return out + f" (the estimate lies too close to the bound: more than {DECIDABLE_FACTOR}x the samples, now {n}, would be needed to decide it)"
        return out + f" (decidable with about {need} samples at this spread, now {n})"


#: :meth:`Test.outcome` calls a claim undecidable by more samples beyond this factor
DECIDABLE_FACTOR = 10


def _decide(est: Estimate, inside: bool, outside: bool) -> str:
    if not math.isfinite(est.value):
        return INCONCLUSIVE
    if inside:
        return HOLDS
    if outside:
        return FAILS
    return INCONCLUSIVE


def at_least(label: str, est: Estimate, bound: float) -> Test:
    """Holds when the interval lies wholly at or above ``bound``, does not hold when wholly
    below."""
    return Test(label, est, f"≥ {bound:.3g}", _decide(est, est.low >= bound, est.high < bound), (bound,))


def at_most(label: str, est: Estimate, bound: float) -> Test:
    return Test(label, est, f"≤ {bound:.3g}", _decide(est, est.high <= bound, est.low > bound), (bound,))


def above(label: str, est: Estimate, bound: float) -> Test:
    """Strictly above: holds when the interval lies wholly above ``bound``."""
    return Test(label, est, f"> {bound:.3g}", _decide(est, est.low > bound, est.high <= bound), (bound,))


def below(label: str, est: Estimate, bound: float) -> Test:
    return Test(label, est, f"< {bound:.3g}", _decide(est, est.high < bound, est.low >= bound), (bound,))


def within(label: str, est: Estimate, lo: float, hi: float) -> Test:
    """Holds when the interval lies wholly within [lo, hi], does not hold when it lies wholly
    outside (entirely below lo or entirely above hi)."""
    return Test(
        label,
        est,
        f"within [{lo:.3g}, {hi:.3g}]",
        _decide(est, lo <= est.low and est.high <= hi, est.high < lo or est.low > hi),
        (lo, hi),
    )


def about(label: str, est: Estimate, target: float, tol: float = ABOUT) -> Test:
    """"About ``target``": within target · (1 ± tol)."""
    return within(label, est, target * (1 - tol), target * (1 + tol))


def combine(verdicts: Iterable[str]) -> str:
    """All of several tests: holds if all hold, does not hold if any does not hold,
    inconclusive otherwise (and for no test at all)."""
    vs = list(verdicts)
    if not vs:
        return INCONCLUSIVE
    if any(v == FAILS for v in vs):
        return FAILS
    if all(v == HOLDS for v in vs):
        return HOLDS
    return INCONCLUSIVE


def from_support(label: str, support: float | None, bound: str, confidence: float = CONFIDENCE) -> Test:
    """A direction checked by a bootstrap elsewhere (the ETH campaign's ``support``: the share
    of resamples in which it holds): holds when the two-sided ``confidence`` interval of the
    difference lies on the claimed side (support ≥ 1 - (1 - confidence)/2), does not hold
    when it lies wholly on the other side (support ≤ (1 - confidence)/2)."""
    a = (1 - confidence) / 2
    if support is None or not math.isfinite(support):
        return Test(label, Estimate(math.nan, -math.inf, math.inf, 0, "bootstrap support"), bound, INCONCLUSIVE)
    est = Estimate(support, math.nan, math.nan, 0, "bootstrap support")
    v = {True: HOLDS, False: FAILS, None: INCONCLUSIVE}[support_verdict(support, confidence)]
    return Test(label, est, f"{bound}; support ≥ {1 - a:g}", v)


@dataclass(frozen=True)
class ClaimResult:
    """A claim checked on the measured data: the three-valued ``verdict``, the headline
    ``estimate`` (point value and 95% interval), ``numbers`` (every test with its interval and
    bound), and the claim's words and operationalization."""

    text: str
    verdict: str
    numbers: str
    published: str = ""
    quote: str = ""
    section: str = ""
    threshold: str = ""
    weakened: str = ""
    estimate: Estimate | None = None
    #: what ``estimate`` measures, when the claim has several tests
    estimate_label: str = ""
    #: for an inconclusive headline: the samples that would decide it at the measured spread
    samples_to_decide: int | None = None

    @property
    def holds(self) -> bool:
        return self.verdict == HOLDS

    def measured(self) -> str:
        if self.estimate is None:
            return "—"
        return f"{self.estimate_label}: {self.estimate.text()}" if self.estimate_label else self.estimate.text()

    def summary(self) -> dict[str, Any]:
        """The machine-readable form (summary.json)."""
        e = self.estimate
        num = lambda x: x if x is not None and math.isfinite(x) else None  # noqa: E731
        return {
            "claim": self.text,
            "quote": self.quote,
            "section": self.section,
            "published": self.published,
            "threshold": self.threshold,
            "weakened": self.weakened or None,
            "verdict": self.verdict,
            "measured": None if e is None else num(e.value),
            "ci_low": None if e is None else num(e.low),
            "ci_high": None if e is None else num(e.high),
            "measured_quantity": self.estimate_label or None,
            "n": None if e is None else e.n,
            "method": None if e is None else e.method,
            "samples_to_decide": self.samples_to_decide,
            "numbers": self.numbers,
        }
