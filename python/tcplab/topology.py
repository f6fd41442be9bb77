"""The graph of a canonical topology (what ``Scenario.canonical()["topology"]`` holds): node
names and kinds, and the duplex links, in the simulator's order. It mirrors the expansion
in ``crates/tcplab-sim/src/topology.rs`` (and ``topology/``): keep the two in step.

Used for flows' default endpoints, checks of names in routes and ``trace.pcap``, and the
report's link tables.
"""

from __future__ import annotations

from typing import Any

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


def _pick(items: list[Any], i: int) -> Any:
    return items[0] if len(items) == 1 else items[i]


def _cross_counts(topo: dict[str, Any]) -> list[int]:
    c = topo["cross_pairs"]
    return [c[0] if len(c) == 1 else (c[h] if h < len(c) else 0) for h in range(topo["hops"])]


def default_pairs(topo: dict[str, Any]) -> list[tuple[str, str]]:
    """(sender, receiver) host pairs in the order flows without src/dst take them."""
    kind = topo["kind"]
    if kind == "dumbbell":
        return [(f"s{i}", f"r{i}") for i in range(topo["pairs"])]
    if kind == "wired_cum_wireless":
        return [(f"server{i}", f"mobile{i}") for i in range(topo["pairs"])]
    if kind == "wlan_access":
        return [("server", st["node"]) for st in topo["wlan"]["stations"]]
    if kind == "parking_lot":
        out = [(f"ls{i}", f"lr{i}") for i in range(topo["long_pairs"])]
        for h, n in enumerate(_cross_counts(topo)):
            out += [(f"cs{h}_{i}", f"cr{h}_{i}") for i in range(n)]
        out += [(f"vs{i}", f"vr{i}") for i in range(topo["reverse_pairs"])]
        return out
    return []


def graph(topo: dict[str, Any]) -> tuple[dict[str, str], list[Link]]:
    """({node: "host" | "router"} in node order, [(from, to, forward, reverse)] in link order)."""
    kind = topo["kind"]
    nodes: dict[str, str] = {}
    links: list[Link] = []
    if kind == "explicit":
        nodes = {n["name"]: n["kind"] for n in topo["nodes"]}
        links = [(x["from"], x["to"], x["forward"], x["reverse"]) for x in topo["links"]]
    elif kind == "dumbbell":
        n = topo["pairs"]
        nodes = {f"s{i}": "host" for i in range(n)} | {"left": "router", "right": "router"}
        nodes |= {f"r{i}": "host" for i in range(n)}
        for i in range(n):
            a = _pick(topo["sender_access"], i)
            links.append((f"s{i}", "left", a["forward"], a["reverse"]))
        b = topo["bottleneck"]
        links.append(("left", "right", b["forward"], b["reverse"]))
        for i in range(n):
            a = _pick(topo["receiver_access"], i)
            links.append(("right", f"r{i}", a["forward"], a["reverse"]))
    elif kind == "wired_cum_wireless":
        n = topo["pairs"]
        nodes = {f"server{i}": "host" for i in range(n)} | {"router": "router", "bs": "router"}
        nodes |= {f"mobile{i}": "host" for i in range(n)}
        for i in range(n):
            a = _pick(topo["wired"], i)
            links.append((f"server{i}", "router", a["forward"], a["reverse"]))
        b = topo["bottleneck"]
        links.append(("router", "bs", b["forward"], b["reverse"]))
        for i in range(n):
            a = _pick(topo["wireless"], i)
            links.append(("bs", f"mobile{i}", a["forward"], a["reverse"]))
    elif kind == "wlan_access":
        # Wired links only: the 802.11b hops (AP to each station) are not duplex links.
        nodes = {"server": "host", "router": "router", "ap": "router"}
        nodes |= {st["node"]: "host" for st in topo["wlan"]["stations"]}
        links.append(("server", "router", topo["access"]["forward"], topo["access"]["reverse"]))
        links.append(("router", "ap", topo["pipe"]["forward"], topo["pipe"]["reverse"]))
    elif kind == "parking_lot":
        hops = topo["hops"]
        nodes = {f"r{h}": "router" for h in range(hops + 1)}
        for h in range(hops):
            b = dict(_pick(topo["bottleneck"], h))
            fwd, rev = b["forward"], b["reverse"]
            if topo.get("queue") is not None:
                fwd, rev = {**fwd, "queue": topo["queue"]}, {**rev, "queue": topo["queue"]}
            links.append((f"r{h}", f"r{h + 1}", fwd, rev))
        acc = topo["access"]
        for s, r in default_pairs(topo):
            if s.startswith("ls"):
                at_s, at_r = 0, hops
            elif s.startswith("vs"):
                at_s, at_r = hops, 0
            else:
                h = int(s[2:].split("_")[0])
                at_s, at_r = h, h + 1
            nodes[s] = "host"
            links.append((s, f"r{at_s}", acc["forward"], acc["reverse"]))
            nodes[r] = "host"
            links.append((f"r{at_r}", r, acc["forward"], acc["reverse"]))
    else:
        raise ValueError(f"unknown topology kind {kind!r}")
    return nodes, links


def link_names(topo: dict[str, Any]) -> list[str]:
    return [f"{a}-{b}" for a, b, _, _ in graph(topo)[1]]
