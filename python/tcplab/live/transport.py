"""tcplab's transport on a live testbed: tcplab-core's sender and receiver over UDP
(`tcplab-flow`, Rust: crates/tcplab-live), one in each namespace, through the emulator.

`run_flow(tb, canonical, flow)` starts the receiver, waits until its socket is bound, starts
the sender, waits for it to finish (the transfer acknowledged, or the scenario's duration
passed), stops the receiver (SIGTERM: it writes its summary) and returns both summaries.
Both endpoints and the emulator share one time axis: model time 0 is ``clock_origin_ns``
(CLOCK_MONOTONIC), chosen a moment after both endpoints are started. Whatever happens, both
processes are killed before `run_flow` returns (and with the testbed, which owns them).

The scenario is canonical (``Scenario.canonical()``) with an explicit topology of two hosts
joined by one link: `link_config` turns it into the emulator's config (the same seed and
link name, so the emulator draws the simulator's random streams), with the link's ``from``
host in namespace A.
"""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tcplab.live.netns import LiveError, Testbed, emulator_binary

PORT = 5400
#: Time between starting the sender and model time 0 (both endpoints are up by then).
START_MARGIN_NS = 300_000_000
#: Extra wall time allowed past the scenario's duration before the sender is killed.
GRACE_S = 5.0


def flow_binary() -> Path:
    """`tcplab-flow`: $TCPLAB_FLOW, else next to the emulator binary."""
    if env := os.environ.get("TCPLAB_FLOW"):
        return Path(env)
    return emulator_binary().with_name("tcplab-flow")


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


def drop_facts(tb: Testbed, run: FlowRun) -> list[dict[str, Any]]:
    """The emulator's drops of transport packets as `drop` facts (record.rs's format) on the
    endpoints' time axis: link direction 0 forward, 1 reverse."""
    assert tb.emu_origin_ns is not None
    shift = tb.emu_origin_ns - run.clock_origin_ns
    out = []
    for d in tb.drops:
        p = d.get("packet") or {}
        if "flow" not in p:
            continue
        out.append({"fact": "drop", "time_ns": d["t_ns"] + shift,
                    "link": 0 if d["direction"] == "forward" else 1, "flow": p["flow"],
                    "packet": p["packet"], "seq": p["seq"], "retransmission": p["retransmission"],
                    "sent_at_ns": p.get("sent_ns", 0), "cause": d["cause"]})
    return out


def _wait_ready(p: subprocess.Popen[str], what: str, timeout: float = 10.0) -> None:
    assert p.stdout is not None
    ready, _, _ = select.select([p.stdout], [], [], timeout)
    line = p.stdout.readline() if ready else ""
    if line.strip() != "ready":
        p.kill()
        err = p.communicate()[1] or ""
        last = err.strip().splitlines()[-1] if err.strip() else f"{what} did not start"
        raise LiveError(last)


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
    tx, rx = side[spec["src"]], side[spec["dst"]]
    binary = flow_binary()
    if not binary.exists():
        raise LiveError(f"tcplab-flow = {str(binary)!r}: not found "
                        "(cargo build --release -p tcplab-live, or set TCPLAB_FLOW)")
    out = Path(out_dir or tb.out_dir / f"flow{flow}")
    origin = time.monotonic_ns() + START_MARGIN_NS
    port = PORT + flow
    procs: dict[str, subprocess.Popen[str]] = {}
    try:
        for role, me, peer in (("receiver", rx, tx), ("sender", tx, rx)):
            d = out / role
            d.mkdir(parents=True, exist_ok=True)
            cfg = {"scenario": canonical, "flow": flow, "framing": framing,
                   "local": f"{tb.addr[me]}:{port}", "peer": f"{tb.addr[peer]}:{port}",
                   "clock_origin_ns": origin, "realtime": realtime}
            if sample_ns is not None:
                cfg["sample_ns"] = sample_ns
            (d / "config.json").write_text(json.dumps(cfg))
            argv = [str(binary), "send" if role == "sender" else "recv",
                    "--config", str(d / "config.json"), "--out", str(d)]
            procs[role] = tb.popen(me, argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                   text=True)
            _wait_ready(procs[role], f"tcplab-flow {role}")
        wall = max(0.0, (origin - time.monotonic_ns()) / 1e9) + canonical["duration"] / 1e9
        try:
            _, err = procs["sender"].communicate(timeout=wall + GRACE_S)
        except subprocess.TimeoutExpired:
            raise LiveError(f"tcplab-flow sender still running {GRACE_S} s after the scenario's "
                            "end") from None
        if procs["sender"].returncode != 0:
            raise LiveError((err or "").strip().splitlines()[-1] if (err or "").strip()
                            else f"tcplab-flow sender: exit status {procs['sender'].returncode}")
        time.sleep(2 * (link["forward"]["delay"] + link["reverse"]["delay"]) / 1e9 + 0.05)
        procs["receiver"].send_signal(signal.SIGTERM)
        _, err = procs["receiver"].communicate(timeout=10)
        if procs["receiver"].returncode != 0:
            raise LiveError((err or "").strip().splitlines()[-1] if (err or "").strip()
                            else f"tcplab-flow receiver: exit status {procs['receiver'].returncode}")
    finally:
        for p in procs.values():
            if p.poll() is None:
                p.kill()
                p.communicate()
    summaries = {r: json.loads((out / r / "summary.json").read_text()) for r in procs}
    return FlowRun(sender=summaries["sender"], receiver=summaries["receiver"], out_dir=out,
                   clock_origin_ns=origin)
