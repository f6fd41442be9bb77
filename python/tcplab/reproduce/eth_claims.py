"""The ETH report's published directions as three-valued claims (the campaign's bootstrap
over connections decides them; :mod:`tcplab.reproduce.eth` quotes the report)."""

from __future__ import annotations

import polars as pl

from tcplab.campaign import analysis
from tcplab.reproduce.verdict import ABOUT, Test, from_support


def direction_claim(key: str, published: dict[tuple[str, str], float] | None = None):
    """A published direction, decided by the campaign's bootstrap over connections: each
    comparison holds when its support (share of resamples in which it holds) is ≥ 0.975, does
    not hold when ≤ 0.025 (the two-sided 95% interval of the difference on one side of 0).

    ``published``: the report's effect sizes by (protocol, other) pair, as relative changes
    (−0.48: 48 % fewer); each comparison with one shows its measured effect beside it and says
    when the measured ratio is outside the published one ± ABOUT (the direction decides the
    verdict; the size is shown, as the report's magnitudes are not comparable)."""

    def check(frame: pl.DataFrame) -> list[Test]:
        d = {x["key"]: x for x in analysis.directions(frame)}[key]
        nums = d["numbers"] or [d.get("text", key)]
        sup = d["support"] or [None]
        pairs = d.get("pairs") or [None] * len(nums)
        values = d.get("values") or [None] * len(nums)
        out = []
        for n, s, pair, v in zip(nums, sup, pairs, values, strict=False):
            out.append(from_support(n + effect_text(pair, v, published or {}), s, "the published direction"))
        return out

    return check


def effect_text(pair: tuple[str, str] | None, values: tuple[float, float] | None,
                published: dict[tuple[str, str], float]) -> str:
    """``"; effect −76 % (published −48 %, outside ±10 %)"`` for a comparison whose pair has a
    published effect; "" otherwise."""
    if pair is None or values is None:
        return ""
    a, b = tuple(pair)
    if (a, b) in published and values[1]:
        effect, pub = values[0] / values[1] - 1, published[(a, b)]
    elif (b, a) in published and values[0]:  # stated the other way round: b against a
        effect, pub = values[1] / values[0] - 1, published[(b, a)]
    else:
        return ""
    outside = abs((1 + effect) / (1 + pub) - 1) > ABOUT
    return f"; effect {effect:+.0%} (published {pub:+.0%}{', outside ±10 %' if outside else ''})"


#: The threshold text of every direction claim.
DIRECTION = (
    "the direction only, decided by a bootstrap over the connections (1000 resamples): holds when the "
    "comparison holds in ≥ 97.5% of them, does not hold when in ≤ 2.5%."
)
#: Why the directions are weaker than the report's numbers.
DIRECTION_WEAKENED = (
    "the campaign's paths and cross traffic are drawn from the report's ranges, not its Internet, so the "
    "magnitudes are not comparable; only the directions are tested."
)
