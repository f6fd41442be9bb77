"""The ETH report's published directions as three-valued claims (the campaign's bootstrap
over connections decides them; :mod:`tcplab.reproduce.eth` quotes the report)."""

from __future__ import annotations

import polars as pl

from tcplab.campaign import analysis
from tcplab.reproduce.verdict import Test, from_support


def direction_claim(key: str):
    """A published direction, decided by the campaign's bootstrap over connections: each
    comparison holds when its support (share of resamples in which it holds) is ≥ 0.975, does
    not hold when ≤ 0.025 (the two-sided 95% interval of the difference on one side of 0)."""

    def check(frame: pl.DataFrame) -> list[Test]:
        d = {x["key"]: x for x in analysis.directions(frame)}[key]
        nums = d["numbers"] or [d.get("text", key)]
        sup = d["support"] or [None]
        return [from_support(n, s, "the published direction") for n, s in zip(nums, sup, strict=False)]

    return check


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
