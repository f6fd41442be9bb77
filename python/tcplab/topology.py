"""The graph of a canonical topology (what ``Scenario.canonical()["topology"]`` holds): node
names and kinds, the duplex links, and the host pairs flows without ``src``/``dst`` take, in
the simulator's order. The expansion lives in the simulator only
(``crates/tcplab-sim/src/topology/graph.rs``); this module asks ``tcplab._native`` for it.

Used for flows' default endpoints, checks of names in routes and ``trace.pcap``, and the
report's link tables.
"""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Any

from tcplab import _native

__all__ = ["graph", "default_pairs", "link_names", "KINDS"]

#: Topology kinds and what they are.
KINDS = {
    "dumbbell": "N sender/receiver pairs across one bottleneck",
    "explicit": "any graph of [[nodes]] and [[links]]",
    "parking_lot": "cascaded bottlenecks with long, cross and reverse flows (Adaptive Reno Fig. 5)",
    "wired_cum_wireless": "servers, a wired path, a base station and a lossy hop to mobile hosts (Venoplus Fig. 2)",
    "wlan_access": "a server, a Dummynet-style pipe and an 802.11b access point with stations (WLAN paper Fig. 3)",
}

Link = tuple[str, str, dict[str, Any], dict[str, Any]]


@lru_cache(maxsize=64)
def _expanded(topo_json: str) -> str:
    try:
        return _native.topology_graph_json(topo_json)
    except ValueError as e:
        kind = json.loads(topo_json).get("kind")
        if kind not in KINDS:
            raise ValueError(f"unknown topology kind {kind!r}") from None
        raise ValueError(str(e)) from None


def _graph_of(topo: dict[str, Any]) -> dict[str, Any]:
    """The expansion, parsed afresh (callers may change what they get)."""
    return json.loads(_expanded(json.dumps(topo, sort_keys=True)))


def default_pairs(topo: dict[str, Any]) -> list[tuple[str, str]]:
    """(sender, receiver) host pairs in the order flows without src/dst take them."""
    return [(s, r) for s, r in _graph_of(topo)["default_pairs"]]


def graph(topo: dict[str, Any]) -> tuple[dict[str, str], list[Link]]:
    """({node: "host" | "router"} in node order, [(from, to, forward, reverse)] in link order);
    the 802.11b hops are not duplex links."""
    g = _graph_of(topo)
    nodes = {n["name"]: n["kind"] for n in g["nodes"]}
    links = [(x["from"], x["to"], x["forward"], x["reverse"]) for x in g["links"]]
    return nodes, links


def link_names(topo: dict[str, Any]) -> list[str]:
    return [f"{a}-{b}" for a, b, _, _ in graph(topo)[1]]
