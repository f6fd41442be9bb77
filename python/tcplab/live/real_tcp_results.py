"""``tcplab run --live`` with real TCP (docs/real-tcp.md "In a live run"): which
hosts are attached, and what a real-TCP flow gives the results.

A flow with ``stack = "tcplab-tcp"`` is tcplab's sender (its source host attached to the
emulator) to a Linux socket sink; ``stack = "linux"`` with ``receiver = "tcplab"`` is a Linux
sender to tcplab's receiver (its destination attached). An attached host has no kernel and
one endpoint: no other flow may use it.

The tcplab sender's facts go to the instruments as a tcplab-transport sender's do, with the
emulator's drops of the connection's packets mapped onto them: a data segment's drop is
named by its IP identification and 32-bit sequence number, which the sender's ``wire.csv``
maps to the core's sequence number, transmission number and send time. The Linux sink
counts what reached it (its last ``TCP_INFO``, read once its FIN was acknowledged): data
segments in (``data_delivered`` facts) and packets out (the ACK direction's ``ack_sent``);
the sender counts the packets it read (``ack_delivered``). Every packet of the connection's
ACK direction (SYN-ACK, ACKs, FIN) counts as an ACK; the data direction counts segments
with payload (the sender's SYN, pure ACKs and FIN are left out of both ends' counts).
"""

from __future__ import annotations

import csv
from collections import defaultdict
from pathlib import Path
from typing import Any, Literal

from tcplab.live import facts as live_facts
from tcplab.live import linux_tcpinfo
from tcplab.live.linux import LinuxFlowResult, LinuxRun, connection_drops
from tcplab.live.netns import Testbed
from tcplab.live.real_tcp import RealTcpReceiverHandle, RealTcpReceiverRun, RealTcpRun
from tcplab.live.transport import PORT, sender_columns

__all__ = ["FlowKind", "attached_hosts", "attachment_refusal", "flow_kind", "receiver_result", "sender_drops",
           "sender_facts", "sender_row", "sender_section"]

_WRAP = 1 << 32


#: What a live flow is: tcplab's transport over UDP, Linux to Linux, tcplab's sender to a
#: Linux sink (``stack = "tcplab-tcp"``), or a Linux sender to tcplab's receiver
#: (``receiver = "tcplab"``). All but the first speak TCP on the wire.
FlowKind = Literal["tcplab", "linux", "tcplab-tcp", "linux-to-tcplab"]


def flow_kind(flow: dict[str, Any]) -> FlowKind:
    """The kind of a canonical flow in a live run."""
    if flow.get("stack") == "tcplab-tcp":
        return "tcplab-tcp"
    if flow.get("receiver") == "tcplab":
        return "linux-to-tcplab"
    return "linux" if flow.get("stack") == "linux" else "tcplab"


def _attached_end(flow: dict[str, Any]) -> str | None:
    """The end of a real-TCP flow that tcplab plays (its host attached), else None."""
    return {"tcplab-tcp": "src", "linux-to-tcplab": "dst"}.get(flow_kind(flow))


def attached_hosts(canonical: dict[str, Any]) -> tuple[str, ...]:
    """The hosts to attach: each real-TCP flow's tcplab end."""
    hosts = [f[end] for f in canonical["flows"] if (end := _attached_end(f))]
    return tuple(dict.fromkeys(hosts))


def attachment_refusal(canonical: dict[str, Any]) -> str | None:
    """One line when an attached host (a real-TCP flow's tcplab end: no kernel, one
    endpoint) is used by another flow, else None."""
    owner: dict[str, tuple[int, str]] = {}
    for i, f in enumerate(canonical["flows"]):
        if end := _attached_end(f):
            owner.setdefault(f[end], (i, end))
    users = [(f"flows[{i}]", i, end, f[end]) for i, f in enumerate(canonical["flows"]) for end in ("src", "dst")]
    users += [(f"udp[{j}]", None, end, u[end]) for j, u in enumerate(canonical.get("udp") or [])
              for end in ("src", "dst")]
    for where, i, end, host in users:
        if host in owner and owner[host] != (i, end):
            j, side = owner[host]
            what = 'stack = "tcplab-tcp"' if side == "src" else 'receiver = "tcplab"'
            return (f"{where}.{end} = {host!r}: that host is flows[{j}].{side}, the tcplab end of a {what} "
                    "flow (attached: no kernel, one connection); give one of the flows another host")
    return None


def _packets_out(final: dict[str, int]) -> int | None:
    """The packets the Linux sink sent on the connection: its ``segs_out`` plus its SYN-ACK,
    which the request socket sent before the connection's socket (and its counters)
    existed. A retransmitted SYN-ACK is not counted either; the ACK direction's balance
    then shows it (docs/real-tcp.md)."""
    return None if "segs_out" not in final else int(final["segs_out"]) + 1


def _final(record: dict[str, Any]) -> dict[str, int]:
    info = record.get("tcp_info")
    return linux_tcpinfo.parse(bytes.fromhex(info)) if info else {}


def _wire_log(path: Path) -> dict[tuple[int, int], list[tuple[int, int, int]]]:
    """``wire.csv`` by (IP id, wire-width sequence number): (time, core seq, transmission)."""
    out: dict[tuple[int, int], list[tuple[int, int, int]]] = defaultdict(list)
    if path.exists():
        with path.open() as f:
            for r in csv.DictReader(f):
                seq = int(r["seq"])
                out[(int(r["ip_id"]), seq % _WRAP)].append((int(r["t_ns"]), seq, int(r["retransmission"])))
    return out


def sender_drops(tb: Testbed, origin: int, index: int, run: RealTcpRun,
                 dirs: dict[tuple[str, str], int]) -> tuple[list[dict[str, Any]], dict[str, int]]:
    """The emulator's drops of tcplab-tcp flow `index` as ``drop`` facts on the run's time
    axis (origin: CLOCK_MONOTONIC ns of model time 0): data segments (src -> dst with
    payload) named as the sender's transmissions; every packet dst -> src as an ACK (its
    acknowledgment number in core numbers). Also counts: ``control`` (src -> dst without
    payload: SYN, pure ACK, FIN; no fact) and ``unmatched`` (a data drop no transmission in
    ``wire.csv`` explains; stated with the drop's time as its send time)."""
    assert tb.emu_origin_ns is not None
    flow = tb.scenario["flows"][index] if tb.scenario else {}
    iss = int(run.sender["iss"])
    wire = _wire_log(run.out_dir / "sender" / "wire.csv")
    shift = tb.emu_origin_ns - origin
    facts, counts = [], {"data": 0, "ack": 0, "control": 0, "unmatched": 0}
    port = PORT + index
    for d, forward in connection_drops(tb, flow["src"], flow["dst"], port, port):
        p, t = d["packet"], max(0, d["t_ns"] + shift)
        base = {"fact": "drop", "time_ns": t, "link": dirs[(d["link"], d["direction"])], "flow": index,
                "cause": d["cause"]}
        if not forward:
            counts["ack"] += 1
            facts.append({**base, "packet": "ack", "seq": 0, "retransmission": 0, "sent_at_ns": t})
            continue
        if not p.get("tcp_payload"):
            counts["control"] += 1
            continue
        counts["data"] += 1
        seq32 = (p["tcp_seq"] - iss - 1) % _WRAP
        sent = [s for s in wire.get((p["ip_id"], seq32), []) if s[0] <= t]
        if sent:
            sent_at, seq, rtx = sent[-1]
        else:
            counts["unmatched"] += 1
            sent_at, seq, rtx = t, seq32, 0
        facts.append({**base, "packet": "data", "seq": seq, "retransmission": rtx, "sent_at_ns": sent_at})
    return facts, counts


def sender_facts(index: int, run: RealTcpRun) -> tuple[list[list[dict[str, Any]]], list[dict[str, Any]]]:
    """tcplab-tcp flow `index`'s ordered fact sources (the sender's facts and series) and its
    closing facts: the Linux sink's counts (data segments in, packets out), the packets the
    sender read, and the endpoints' counters."""
    s, final = run.sender, _final(run.receiver)
    streams = [live_facts.read_jsonl(run.out_dir / "sender" / "facts.jsonl"),
               live_facts.series_facts(run.out_dir / "sender" / "series.csv", index)]
    data_in, acks_out, acks_in = int(final.get("data_segs_in", 0)), _packets_out(final) or 0, int(s["packets_in"])
    closing = [*({"fact": "data_delivered", "flow": index} for _ in range(data_in)),
               *({"fact": "ack_sent", "flow": index} for _ in range(acks_out)),
               *({"fact": "ack_delivered", "flow": index} for _ in range(acks_in)),
               {"fact": "endpoints", "flow": index, "counts": {
                   "segments_sent": int(s.get("segments_sent", 0)), "segments_received": data_in,
                   "acks_sent": acks_out, "acks_received": acks_in}}]
    return streams, closing


def sender_row(run: RealTcpRun) -> dict[str, Any]:
    """What a tcplab-tcp flow's ends give of its ``flows`` row. ``spurious_retransmits``:
    the data segments the Linux sink got beyond one per segment sent new (its ``TCP_INFO``
    count), i.e. retransmissions that arrived as duplicates."""
    s, r, final = run.sender, run.receiver, _final(run.receiver)
    delivered = int(r.get("bytes", 0))
    span = max(1, int(s["end_ns"]) - int(s["start_ns"]))
    new = int(s.get("segments_sent", 0)) - int(s.get("retransmits", 0))
    return {
        **sender_columns(s),
        "bytes_delivered": delivered,
        "throughput_bps": float(s["throughput_bps"]) if s["completed"] else delivered * 8e9 / span,
        "acks_sent": _packets_out(final),
        "spurious_retransmits": max(0, int(final["data_segs_in"]) - new) if "data_segs_in" in final else None,
    }


def sender_section(run: RealTcpRun, counts: dict[str, int]) -> dict[str, Any]:
    """The live section's entry of a tcplab-tcp flow: the connection (negotiated options,
    state, outcome), the Linux sink (bytes, intact, closed, its last TCP_INFO) and the
    packet balance of each direction."""
    s, r, final = run.sender, run.receiver, _final(run.receiver)
    intact = r.get("first_bad_offset") is None and r.get("error") is None
    data_in = final.get("data_segs_in")
    sent = int(s.get("segments_sent", 0))
    return {
        "stack": "tcplab-tcp", "receiver": "linux", "intact": intact,
        "connection": {k: s.get(k) for k in ("negotiated", "state", "outcome", "iss", "established_ns", "mss",
                                             "packets_in", "packets_out", "packets_refused", "first_refusal",
                                             "write_errors")},
        "linux_receiver": {"bytes": r.get("bytes"), "first_bad_offset": r.get("first_bad_offset"),
                           "error": r.get("error"), "closed": r.get("closed"), "tcp_info": final},
        "drops": counts,
        # Data segments: sent = received by Linux + dropped by the model (nothing else is in
        # flight once Linux's FIN is acknowledged); ACK direction: sent by Linux = read by the
        # sender + dropped.
        "unaccounted": {
            "data": None if data_in is None else sent - int(data_in) - counts["data"],
            "ack": None if (out := _packets_out(final)) is None else out - int(s["packets_in"]) - counts["ack"],
        },
        "realtime": s.get("realtime"), "cpu_ns": {"sender": s.get("cpu_ns")},
    }


def receiver_result(h: RealTcpReceiverHandle, run: RealTcpReceiverRun, origin: int, tb: Testbed) -> LinuxFlowResult:
    """A Linux-to-tcplab flow's result, as a Linux flow's (`tcplab.live.linux`: the row and
    series from the Linux sender's ``TCP_INFO`` samples, its drops by port), with tcplab's
    receiver in place of the Linux sink: its bytes, intact check and ACK count, and its
    summary in ``linux["tcplab_receiver"]``."""
    r = run.receiver
    sink = {"bytes": r["bytes_delivered"], "first_bad_offset": r.get("first_bad_offset"),
            "error": None if r.get("intact") else "tcplab's receiver: the stream is not intact"}
    lr = LinuxRun(flow=h.flow, sysctls={h.flow.src: run.sysctls}, routes={h.flow.src: run.route},
                  socket_options={}, sender=run.sender, receiver=sink, origin_ns=origin)
    res = lr.result(tb)
    res.flow["acks_sent"] = r.get("acks_sent")
    res.linux["tcplab_receiver"] = r
    return res
