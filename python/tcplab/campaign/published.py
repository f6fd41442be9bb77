"""The ETH report's published values (Bolliger, Hengartner, Gross, ETH TR 313, 1999;
/work/shared/papers/end-to-end-cc-effectiveness-bolliger.txt), as printed next to the
campaign's own. Each value names where it is stated. The figures themselves are not in the
text; where only the text states a figure's content, that statement is what is kept.

Protocol names are the campaign's: reno, vegas-ca (the report's "Vegas"), fack, rh, lrd.
"""

from __future__ import annotations

__all__ = [
    "CONNECTIONS",
    "THROUGHPUT_MEDIAN_MBPS",
    "FACK_NORMALIZED_MEDIAN",
    "FIG4_STATEMENTS",
    "LOSS_THROUGHPUT_CORRELATION",
    "TIMEOUT_FREE_SHARE",
    "RENO_TIMEOUT_BREAKDOWN",
    "TIMEOUT_CHANGE_VS_RENO",
    "MPL_BREAKDOWN",
    "LOSS_EVENT_PERCENTILES",
    "PERCENTILES",
    "DIRECTIONS",
]

#: Table 2: connections per protocol (all regions), 24,943 in all.
CONNECTIONS = {"reno": 4148, "fack": 5415, "rh": 5569, "lrd": 5711, "vegas-ca": 4100}

#: §8.1 (Fig. 2a): median application throughput, Mbit/s.
THROUGHPUT_MEDIAN_MBPS = {"reno": 0.80, "vegas-ca": 0.62, "fack": 1.13, "rh": 1.16, "lrd": 1.22}

#: §8.2.3 (Fig. 5): in 50 % of the cases FACK uses at most 24 % of the bottleneck bandwidth.
FACK_NORMALIZED_MEDIAN = 0.24

#: §8.2.2 (Fig. 4, median normalized bandwidth per loss-rate bin of 0.02; only Reno, Vegas
#: and FACK are drawn, RH and LRD are "very similar to FACK").
FIG4_STATEMENTS = (
    "no loss: Reno and FACK achieve identical throughput; Reno higher than Vegas",
    "loss rate < 0.1: SACK-enhanced protocols achieve 49–89 % higher throughput than Reno",
    "loss rate > 0.1: equally bad for Reno and FACK",
    "0.02 ≤ loss rate ≤ 0.04: Vegas slightly lower than Reno; elsewhere no marked difference",
)

#: §8.2.1: correlation of log(normalized throughput) with the data loss rate.
LOSS_THROUGHPUT_CORRELATION = {"reno": -0.73, "fack": -0.62, "rh": -0.69, "lrd": -0.57}

#: §10.1 (Fig. 7): share of connections without any timeout.
TIMEOUT_FREE_SHARE = {"reno": 0.328, "vegas-ca": 0.341, "fack": 0.659, "rh": 0.610, "lrd": 0.773}

#: §10.3 (Fig. 8): Reno's timeouts by cause, share of all its timeouts.
RENO_TIMEOUT_BREAKDOWN = {"mpl": 0.36, "non_trigger": 0.41, "lost_fast_rtx": 0.11, "lost_timeout_rtx": 0.12}

#: §10.4–10.8 (Fig. 8): change of the mean number of timeouts per connection against Reno
#: (negative: fewer). Keys: (protocol, class); class "all" is every timeout.
TIMEOUT_CHANGE_VS_RENO = {
    ("fack", "all"): -0.48,
    ("rh", "all"): -0.50,
    ("lrd", "all"): -0.61,
    ("vegas-ca", "mpl"): -0.15,
    ("vegas-ca", "non_trigger"): +0.347,
    ("fack", "mpl"): -0.83,
    ("rh", "mpl"): -0.685,
    ("lrd", "mpl"): -0.77,
    ("fack", "non_trigger"): -0.375,
    ("fack", "lost_timeout_rtx"): -0.30,
    ("rh", "lost_timeout_rtx"): -0.36,
    ("lrd", "lost_timeout_rtx"): -0.44,
}

#: §10.4.1–10.4.2 (Fig. 9): multiple-packet-loss timeouts by cause. Mean missing-ACK timeouts
#: per connection; lost-MPL-retransmission timeouts relative to another protocol.
MPL_BREAKDOWN = {
    "missing_acks_per_connection": {"fack": 0.01, "rh": 0.19, "lrd": 0.19},
    "lost_rtx_rh_vs_fack": +0.28,
    "lost_rtx_lrd_vs_rh": -0.345,
}

PERCENTILES = (10, 25, 50, 75, 90)

#: Table 3: loss events per connection at the 10/25/50/75/90th percentiles.
LOSS_EVENT_PERCENTILES = {
    "any": {
        "reno": (0, 1, 4, 19, 40),
        "vegas-ca": (0, 1, 3, 18, 40),
        "fack": (0, 1, 5, 18, 40),
        "rh": (0, 1, 4, 18, 42),
        "lrd": (0, 1, 3, 15, 36),
    },
    "multiple": {
        "reno": (0, 0, 2, 6, 16),
        "vegas-ca": (0, 0, 1, 5, 14),
        "fack": (0, 0, 2, 6, 17),
        "rh": (0, 0, 2, 7, 20),
        "lrd": (0, 0, 2, 6, 16),
    },
}

#: The published directions the campaign checks (analysis.directions), with where stated.
DIRECTIONS = {
    "sack_fewer_timeouts": "§10.1, §10.8.1: FACK, RH and LRD have fewer timeouts per connection than Reno (−48, −50, −61 %)",
    "sack_higher_throughput": "§8.1: FACK, RH and LRD have higher median throughput than Reno (1.13, 1.16, 1.22 vs 0.80 Mbit/s)",
    "lrd_fewest_lost_rtx_timeouts": "§10.6: LRD has the fewest timeouts on lost fast retransmissions of all five protocols; §10.4.2: 34.5 % fewer on lost MPL retransmissions than RH",
    "vegas_fewer_multiple_loss": "§11.1, Table 3: Vegas has fewer multiple-loss events than Reno",
    "vegas_more_non_trigger": "§10.5: Vegas has 34.7 % more non-trigger timeouts than Reno",
    "vegas_lower_throughput": "§8.1: Vegas has lower median throughput than Reno (0.62 vs 0.80 Mbit/s)",
}
