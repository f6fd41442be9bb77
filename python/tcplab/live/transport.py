"""tcplab's transport on a live testbed: tcplab-core's sender and receiver over UDP
(`tcplab-flow`, Rust: crates/tcplab-live), one in each namespace, through the emulator.

`start_flow(tb, canonical, index, origin_ns, out_dir)` starts flow `index` of a scenario
between its hosts on any testbed (`Testbed.for_scenario`: hosts by name), port 5400 + index
at both ends: the receiver in ``dst``'s namespace, then the sender in ``src``'s, each once
its socket is bound; several flows run at once on one testbed. `FlowHandle.finish` waits
for the sender to finish (the transfer acknowledged, or the scenario's duration passed),
lets the receiver run a little longer for what is in flight, stops it (SIGTERM: it writes
its summary) and returns both summaries. Every flow of a run shares one time axis with the
emulator: model time 0 is ``origin_ns`` (CLOCK_MONOTONIC), picked by the caller a moment
ahead. Whatever happens, both processes are killed before `finish` returns (and with the
testbed, which owns them).

`run_flow(tb, canonical, flow)` does both for one flow on a one-link testbed (an explicit
topology of two hosts joined by one link: `link_config` turns it into the emulator's config,
the same seed and link name, so the emulator draws the simulator's random streams, with the
link's ``from`` host in namespace A).
"""

from __future__ import annotations

import json
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from tcplab.live.endpoints import checked_flow_binary, tcplab_flow
from tcplab.live.netns import LiveError, Testbed
from tcplab.live.processes import last_line, wait_ready

if TYPE_CHECKING:
    import polars as pl

PORT = 5400
#: Time between starting the sender and model time 0 (both endpoints are up by then).
START_MARGIN_NS = 300_000_000
#: Extra wall time allowed past the scenario's duration before the sender is killed.
GRACE_S = 5.0


def _two_hosts(canonical: dict[str, Any]) -> dict[str, Any]:
    topo = canonical["topology"]
    if topo.get("kind") != "explicit" or len(topo["links"]) != 1:
        raise LiveError("topology: the live transport runs on an explicit topology of one link "
                        f"between two hosts (got {topo.get('kind')!r})")
    link: dict[str, Any] = topo["links"][0]
    return link


def link_config(canonical: dict[str, Any]) -> dict[str, Any]:
    """The emulator's config for the one link of `canonical` (forward: from -> to)."""
    link = _two_hosts(canonical)
    return {"seed": canonical["seed"], "link": f"{link['from']}-{link['to']}",
            "forward": link["forward"], "reverse": link["reverse"]}


def sender_columns(sender: dict[str, Any]) -> dict[str, Any]:
    """What a tcplab sender's summary (over UDP or real TCP) gives of its ``flows`` row:
    controller, recovery, span, completion, and the columns its counters give (the names
    the sender lists in ``flow_columns``: ``endpoint::sender_figures``, the simulator's
    counters and RTT samples, undos included)."""
    return {
        "controller": sender["controller"], "recovery": sender["recovery"],
        "start_ns": sender["start_ns"], "end_ns": sender["end_ns"], "completed": sender["completed"],
        **{k: sender.get(k) for k in sender["flow_columns"]},
    }


#: The columns of a tcplab sender's logs (``endpoint::SEGMENTS_HEADER``, ``EVENTS_HEADER``).
_LOGS = {"segments": {"time_ns": "u64", "seq": "u64", "len": "u32", "retransmission": "u8"},
         "events": {"time_ns": "u64", "event": "str", "reason": "str", "cwnd": "u64", "ssthresh": "u64",
                    "seq": "u64", "label": "str", "value": "f64"}}


def log_rows(sender_dir: Path, table: str, flow: int) -> list[dict[str, Any]]:
    """A tcplab sender's ``<table>.csv`` (``segments``: its transmissions; ``events``: the
    core's event log; written when the scenario traces them) as rows of that table for flow
    `flow`; none when the file is absent."""
    import polars as pl  # noqa: PLC0415 (only when there is a log: this module stays light)

    path = sender_dir / f"{table}.csv"
    if not path.exists():
        return []
    kinds = {"u8": pl.UInt8, "u32": pl.UInt32, "u64": pl.UInt64, "f64": pl.Float64, "str": pl.Utf8}
    frame = pl.read_csv(path, schema={k: kinds[v] for k, v in _LOGS[table].items()})
    return [{**{k: ("" if v is None else v) for k, v in r.items()}, "flow": flow} for r in frame.iter_rows(named=True)]


@dataclass
class FlowRun:
    sender: dict[str, Any]
    receiver: dict[str, Any]
    out_dir: Path
    clock_origin_ns: int

    @property
    def throughput_bps(self) -> float:
        """Bytes delivered to the receiving application by the end, over the flow's span
        (the simulator's ``throughput_bps`` for a flow of the run's length; a finished
        transfer uses the sender's span up to the last byte acknowledged)."""
        if self.sender["completed"]:
            return float(self.sender["throughput_bps"])
        return float(self.receiver["throughput_bps"])

    def facts(self, side: str) -> list[dict[str, Any]]:
        """The recorded facts of `side` ("sender" or "receiver"), as JSON objects."""
        text = (self.out_dir / side / "facts.jsonl").read_text()
        return [json.loads(line) for line in text.splitlines() if line]


def link_directions(tb: Testbed) -> dict[tuple[str, str], int]:
    """The simulator's index of each link direction of `tb` (the `links` table's row):
    link k of the topology's expansion (the emulator plan's order) has forward 2k and
    reverse 2k + 1, then the 802.11b hops as the simulator numbers them (the plan's
    ``wlan_hops``); a one-link testbed's link is 0."""
    if tb.plan is None:
        name = tb.config.get("link", "l0")
        return {(name, "forward"): 0, (name, "reverse"): 1}
    wired = {(link["name"], d): 2 * k + j for k, link in enumerate(tb.plan["links"])
             for j, d in enumerate(("forward", "reverse"))}
    return {**wired, **{(h["name"], h["direction"]): h["index"] for h in tb.plan.get("wlan_hops", [])}}


def drop_facts(tb: Testbed, run: FlowRun | int) -> list[dict[str, Any]]:
    """The emulator's drops of tcplab-transport packets (either framing: those the drop log
    names a `flow` for) as `drop` facts (record.rs's format) on the endpoints' time axis
    (`run`'s ``clock_origin_ns``, or that origin in CLOCK_MONOTONIC ns), each on its link
    direction in the simulator's numbering (`link_directions`). Call after the testbed
    stopped."""
    assert tb.emu_origin_ns is not None
    origin = run if isinstance(run, int) else run.clock_origin_ns
    shift = tb.emu_origin_ns - origin
    dirs = link_directions(tb)
    out = []
    for d in tb.drops:
        p = d.get("packet") or {}
        if "flow" not in p:
            continue
        out.append({"fact": "drop", "time_ns": max(0, d["t_ns"] + shift),
                    "link": dirs[(d["link"], d["direction"])] if "link" in d
                    else (0 if d["direction"] == "forward" else 1), "flow": p["flow"],
                    "packet": p["packet"], "seq": p["seq"], "retransmission": p["retransmission"],
                    "sent_at_ns": p.get("sent_ns", 0), "cause": d["cause"]})
    return out


def queue_facts(tb: Testbed, origin: int, duration_ns: int) -> list[dict[str, Any]]:
    """What the emulator's link directions held (``queues.jsonl``) as ``queue_state`` facts
    (record.rs's format) on the endpoints' time axis (model time 0 at CLOCK_MONOTONIC
    ``origin``), those within the run ``[0, duration_ns]``, in time order. The emulator
    numbers directions as the simulator does. Call after the testbed stopped."""
    assert tb.emu_origin_ns is not None
    shift = tb.emu_origin_ns - origin
    out = []
    for q in tb.queues:
        t = q["t_ns"] + shift
        if 0 <= t <= duration_ns:
            out.append({"fact": "queue_state", "time_ns": t, "link": q["dir"],
                        "packets": q["packets"], "bytes": q["bytes"]})
    return out


def settle_s(canonical: dict[str, Any]) -> float:
    """How long a receiver keeps running after its sender stopped, so that what is still in
    flight arrives: two passes over every link's propagation delay in both directions (a
    bound on any route's round trip), plus 50 ms."""
    delays: list[int] = []

    def walk(v: Any) -> None:
        if isinstance(v, dict):
            if isinstance(v.get("delay"), int) and "rate" in v:
                delays.append(v["delay"])
            for x in v.values():
                walk(x)
        elif isinstance(v, list):
            for x in v:
                walk(x)

    walk(canonical["topology"])
    return 2 * sum(delays) / 1e9 + 0.05


def start_ends(tb: Testbed, out_dir: Path, src: str, dst: str, modes: tuple[str, str],
               config: Callable[[str, str], dict[str, Any]],
               procs: dict[str, subprocess.Popen[str]]) -> None:
    """Starts a flow's two ends with `tcplab-flow`: the receiver in `dst`'s namespace, then
    the sender in `src`'s (`modes`: the sender's and the receiver's, e.g. ``("send",
    "recv")``), each with ``config(me, peer)`` written to `out_dir`/ROLE/config.json and its
    output in that directory, each waited for until its socket is bound. `procs` (by role)
    gets each process as it starts; when one fails, every one started is killed and the
    error (one line) raised."""
    checked_flow_binary(LiveError)
    try:
        for role, mode, me, peer in (("receiver", modes[1], dst, src), ("sender", modes[0], src, dst)):
            argv = tcplab_flow(mode, config(me, peer), out_dir / role)
            procs[role] = tb.popen(me, argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                   text=True)
            wait_ready(procs[role], f"tcplab-flow {mode}", LiveError)
    except BaseException:
        kill_ends(procs)
        raise


def finish_ends(procs: dict[str, subprocess.Popen[str]], timeout_s: float, settle: float,
                what: str, program: str) -> None:
    """Waits at most `timeout_s` for the sender of `procs` to end, lets the receiver run
    `settle` seconds longer (what is in flight arrives), then stops it (SIGTERM: it writes
    its summary). Raises LiveError (one line, naming `what`) when an end failed or did not
    end; both are killed in any case."""
    try:
        try:
            _, err = procs["sender"].communicate(timeout=max(0.0, timeout_s))
        except subprocess.TimeoutExpired:
            raise LiveError(f"{program} sender of {what} still running "
                            f"{timeout_s:.1f} s after it was waited for") from None
        if procs["sender"].returncode != 0:
            raise LiveError(last_line(err, f"{program} sender: exit status "
                                            f"{procs['sender'].returncode}"))
        time.sleep(settle)
        procs["receiver"].send_signal(signal.SIGTERM)
        _, err = procs["receiver"].communicate(timeout=10)
        if procs["receiver"].returncode != 0:
            raise LiveError(last_line(err, f"{program} receiver: exit status "
                                            f"{procs['receiver'].returncode}"))
    finally:
        kill_ends(procs)


def kill_ends(procs: dict[str, subprocess.Popen[str]]) -> None:
    """Kills every process of `procs` still running and reaps them all."""
    for p in procs.values():
        if p.poll() is None:
            p.kill()
        p.communicate()


class FlowHandle:
    """A started tcplab-transport flow: its receiver and sender run (both started by
    `start_flow`); `finish` waits for them and returns their summaries as a `FlowRun`."""

    def __init__(self, tb: Testbed, canonical: dict[str, Any], index: int, origin_ns: int,
                 out_dir: Path, framing: str | None = None, sample_ns: int | None = None,
                 realtime: bool = False, hosts: dict[str, str] | None = None) -> None:
        spec = canonical["flows"][index]
        host = {spec[e]: (hosts or {}).get(spec[e], spec[e]) for e in ("src", "dst")}
        for end in ("src", "dst"):
            if host[spec[end]] not in tb.addr:
                raise LiveError(f"flows[{index}].{end} = {spec[end]!r}: not a host of the testbed")
        self.canonical, self.index, self.origin_ns = canonical, index, origin_ns
        self.out_dir = Path(out_dir)
        self.settle_s = settle_s(canonical)
        self.procs: dict[str, subprocess.Popen[str]] = {}
        port = PORT + index
        framing = framing or spec.get("framing", "tcplab")

        def config(me: str, peer: str) -> dict[str, Any]:
            cfg = {"scenario": canonical, "flow": index, "framing": framing,
                   "local": f"{tb.addr[me]}:{port}", "peer": f"{tb.addr[peer]}:{port}",
                   "clock_origin_ns": origin_ns, "realtime": realtime}
            if sample_ns is not None:
                cfg["sample_ns"] = sample_ns
            return cfg

        start_ends(tb, self.out_dir, host[spec["src"]], host[spec["dst"]], ("send", "recv"),
                   config, self.procs)

    def finish(self, timeout_s: float) -> FlowRun:
        """Waits at most `timeout_s` for the sender to end (its transfer acknowledged or the
        scenario's duration passed), lets the receiver run `settle_s` longer, stops it
        (SIGTERM: it writes its summary) and returns both summaries. Raises LiveError (one
        line) when an end failed or did not end; both are killed in any case."""
        finish_ends(self.procs, timeout_s, self.settle_s, f"flows[{self.index}]", "tcplab-flow")
        summaries = {r: json.loads((self.out_dir / r / "summary.json").read_text())
                     for r in self.procs}
        return FlowRun(sender=summaries["sender"], receiver=summaries["receiver"],
                       out_dir=self.out_dir, clock_origin_ns=self.origin_ns)


def start_flow(tb: Testbed, canonical: dict[str, Any], index: int, origin_ns: int,
               out_dir: Path, *, framing: str | None = None, sample_ns: int | None = None,
               realtime: bool = False, hosts: dict[str, str] | None = None) -> FlowHandle:
    """Starts flow `index` of `canonical` on `tb` between its hosts (receiver in ``dst``'s
    namespace, sender in ``src``'s, both on port 5400 + index), with model time 0 at
    `origin_ns` (CLOCK_MONOTONIC; it should lie a few hundred ms ahead so both are up by
    then) and returns once both sockets are bound. `framing` defaults to the flow's
    (``framing`` in the scenario, else "tcplab"); endpoints write into `out_dir`/sender
    and `out_dir`/receiver. `hosts` maps scenario host names to the testbed's (a one-link
    testbed's "a" and "b"); by default they are the same."""
    return FlowHandle(tb, canonical, index, origin_ns, out_dir, framing, sample_ns, realtime,
                      hosts)


def run_flow(tb: Testbed, canonical: dict[str, Any], flow: int = 0, framing: str = "tcplab",
             out_dir: Path | None = None, sample_ns: int | None = None,
             realtime: bool = False) -> FlowRun:
    """Runs flow `flow` of `canonical` live on `tb` (whose link should be
    `link_config(canonical)`); returns both endpoints' summaries. `framing` is "tcplab" or
    "eth"; `realtime` asks SCHED_FIFO for both endpoints. After the sender exits, the
    receiver runs two more round trips of propagation (plus 50 ms), so that what is still in
    flight arrives, then stops."""
    link = _two_hosts(canonical)
    spec = canonical["flows"][flow]
    side = {link["from"]: "a", link["to"]: "b"}
    if spec["src"] not in side or spec["dst"] not in side:
        raise LiveError(f"flows[{flow}]: src/dst must be the link's hosts")
    origin = time.monotonic_ns() + START_MARGIN_NS
    h = start_flow(tb, canonical, flow, origin, Path(out_dir or tb.out_dir / f"flow{flow}"),
                   framing=framing, sample_ns=sample_ns, realtime=realtime,
                   hosts=side if tb.plan is None else None)
    wall = max(0.0, (origin - time.monotonic_ns()) / 1e9) + canonical["duration"] / 1e9
    return h.finish(wall + GRACE_S)
