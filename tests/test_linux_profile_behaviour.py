"""The linux profile against Linux's documented behaviour on the path where a stack
configured by hand to look like Linux goes wrong: the Veno Fig. 5 path (1.6
Mb/s, RTT 120 ms, buffer 12) with random loss 1e-3.

By hand (rto_min 200 ms, IW 10, SACK, RACK, CUBIC) RFC 6298's RTO = max(rto_min, SRTT +
4 RTTVAR) collapses onto the 200 ms floor when RTTVAR is small, so most retransmissions are
spurious timeouts. Linux keeps its RTO at least SRTT + rto_min, so they do not fire; F-RTO
and undo alone do not save the hand configuration here, because its timeouts interrupt fast
recoveries, where Linux neither probes with F-RTO nor starts a new undo episode.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

import tcplab

ROOT = Path(__file__).resolve().parents[1]
SEEDS = (1, 2, 3)


def _runs(tcp: dict, controller: dict | None, recovery: dict | None) -> list[dict]:
    doc = tomllib.loads((ROOT / "scenarios/veno-fig5.toml").read_text())
    doc["topology"]["bottleneck"]["forward"]["loss"] = 1e-3
    doc.pop("trace", None)
    doc["duration"] = "600s"
    doc["tcp"] = tcp
    flow: dict = {"name": "f", "bytes": "8MB"}
    if controller:
        flow["controller"] = controller
    if recovery:
        flow["recovery"] = recovery
    doc["flows"] = [flow]
    return [tcplab.run(doc, seed=s).flows.row(0, named=True) for s in SEEDS]


HAND = {"profile": "rfc", "mss": 1448, "initial_cwnd": 10, "rto_min": "200ms", "sack_blocks": 3}


def test_by_hand_most_retransmissions_are_spurious():
    rows = _runs(HAND, {"name": "cubic"}, {"name": "rack"})
    spurious = sum(r["spurious_retransmits"] for r in rows)
    retx = sum(r["retransmits"] for r in rows)
    assert sum(r["timeouts"] for r in rows) > 0
    assert spurious > retx / 2, (spurious, retx)


def test_the_linux_profile_costs_at_most_one_spurious_retransmission_per_timeout():
    rows = _runs({"profile": "linux"}, None, None)
    for r in rows:
        assert r["spurious_retransmits"] <= r["timeouts"], r


def test_frto_and_undo_alone_do_not_repair_timeouts_that_interrupt_a_recovery():
    # The hand configuration plus F-RTO and undo (RFC 6298's RTO kept): on this path every
    # timeout fires inside a fast recovery, where Linux runs no F-RTO (tcp_enter_loss:
    # new_recovery is false) and keeps the episode's undo state, retrans_stamp the fast
    # retransmission's: no ACK proves the timeout spurious, its go-back-N retransmissions
    # stay. Only Linux's RTO rule (the test above) keeps them away.
    rows = _runs({**HAND, "frto": True, "undo": True, "dsack": True}, {"name": "cubic"}, {"name": "rack"})
    assert sum(r["timeouts"] for r in rows) > 0
    for r in rows:
        assert r["undos_timeout"] == 0, r
        assert r["spurious_retransmits"] > r["timeouts"], r
