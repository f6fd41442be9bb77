"""A live run's recorded facts in one stream, in the order the instruments take them
(docs/instruments.md, "The file format").

Each source is in its own order already: a tcplab-transport sender's ``facts.jsonl`` (loss
responses with their time; transmissions and cumulative ACKs without one), its
``series.csv`` (one ``flow_state`` a sample), its receiver's ``delivered`` facts, and the
emulator's drops of transport packets (`tcplab.live.transport.drop_facts`). They are merged
by time: a fact without a time takes the time of the timed fact before it in its own file,
and at equal times a drop comes first. So a drop precedes the loss response that answers it
(the model drops a packet before the real time its loss is detected; the emulator is never
early), and each flow's facts keep their order. The endpoints' counters close each flow's
stream: an ``ack_sent`` per ACK the receiver sent, an ``ack_delivered`` per ACK the sender
read, the ACKs that reached its host after the sender stopped as ``in_flight``
(`acks_unread`), and an ``endpoints`` fact (the conservation check compares the counters with the
transmissions, arrivals and drops stated).
"""

from __future__ import annotations

import csv
import heapq
import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

#: ssthresh in the sender's series.csv is capped at i64::MAX; the simulator's "unset" is
#: u64::MAX.
_I64_MAX = (1 << 63) - 1
_U64_MAX = (1 << 64) - 1

#: Tie-break at equal times: drops, then the endpoints' facts.
_DROP, _ENDPOINT = 0, 1


def _timed(lines: Iterable[dict[str, Any]], rank: int, source: int) -> Iterator[tuple[int, int, int, int, dict[str, Any]]]:
    """(key time, rank, source, position, fact): untimed facts take the last time seen."""
    t = 0
    for k, f in enumerate(lines):
        t = f.get("time_ns", t)
        yield t, rank, source, k, f


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def series_facts(path: Path, flow: int) -> list[dict[str, Any]]:
    """The sender's ``series.csv`` as ``flow_state`` facts (every sample a row). ``delivered``
    is the bytes acknowledged (``snd_una``): the sender does not see the receiving
    application, whose bytes delivered are at least that."""
    if not path.exists():
        return []
    out = []
    with path.open() as f:
        for r in csv.DictReader(f):
            ssthresh = int(r["ssthresh"])
            out.append({
                "fact": "flow_state", "time_ns": int(r["t_ns"]), "flow": flow,
                "state": {
                    "cwnd": int(r["cwnd"]),
                    "ssthresh": _U64_MAX if ssthresh >= _I64_MAX else ssthresh,
                    "srtt_ns": int(r["srtt_ns"] or 0), "rto_ns": int(r["rto_ns"]),
                    "in_flight": int(r["in_flight"]), "delivered": int(r["snd_una"]),
                    "bytes_sent": int(r.get("bytes_sent") or 0),
                },
                "changed_only": False,
            })
    return out


def flow_streams(flow: int, out_dir: Path, sender: dict[str, Any], receiver: dict[str, Any]) -> list[list[dict[str, Any]]]:
    """A transport flow's ordered sources: sender facts, its series, receiver facts."""
    return [read_jsonl(out_dir / "sender" / "facts.jsonl"),
            series_facts(out_dir / "sender" / "series.csv", flow),
            read_jsonl(out_dir / "receiver" / "facts.jsonl")]


def acks_unread(sender: dict[str, Any], receiver: dict[str, Any], ack_drops: int) -> int:
    """ACKs the receiver sent that the model did not drop and the sender never read: they
    reached the sender's host after it stopped (it exits once its transfer is acknowledged;
    later ACKs, for a duplicate segment or from the delayed-ACK timer, find no socket).
    Negative when the counters disagree (the conservation check then names the flow)."""
    return int(receiver["acks_sent"]) - int(sender["acks_received"]) - ack_drops


def closing_facts(flow: int, sender: dict[str, Any], receiver: dict[str, Any],
                  ack_drops: int) -> list[dict[str, Any]]:
    """The endpoints' counters of one transport flow as facts (after every timed fact); the
    ACKs that arrived after the sender stopped (`acks_unread`) are stated as in flight."""
    acks_sent, acks_read = int(receiver["acks_sent"]), int(sender["acks_received"])
    unread = acks_unread(sender, receiver, ack_drops)
    return [*({"fact": "ack_sent", "flow": flow} for _ in range(acks_sent)),
            *({"fact": "ack_delivered", "flow": flow} for _ in range(acks_read)),
            *([{"fact": "in_flight", "flow": flow, "packet": "ack", "packets": unread}] if unread > 0 else []),
            {"fact": "endpoints", "flow": flow, "counts": {
                "segments_sent": int(sender["segments_sent"]),
                "segments_received": int(receiver["segments_received"]),
                "acks_sent": acks_sent, "acks_received": acks_read}}]


def merge(drops: list[dict[str, Any]], streams: list[list[dict[str, Any]]],
          closing: list[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    """Every fact once, in the instruments' order (module docstring)."""
    sources = [_timed(sorted(drops, key=lambda d: d["time_ns"]), _DROP, 0)]
    sources += [_timed(s, _ENDPOINT, i + 1) for i, s in enumerate(streams)]
    for *_, f in heapq.merge(*sources, key=lambda x: x[:4]):
        yield f
    yield from closing


def write_facts(path: Path, facts: Iterable[dict[str, Any]]) -> int:
    """Writes `facts` as JSON lines; returns how many."""
    n = 0
    with path.open("w") as f:
        for fact in facts:
            f.write(json.dumps(fact, separators=(",", ":")) + "\n")
            n += 1
    return n
