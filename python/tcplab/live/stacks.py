"""The kinds of live flow behind one interface, for ``tcplab run --live`` (`tcplab.live.run`).

A :class:`Stack` starts a flow's two ends in the testbed (:meth:`Stack.start`: a handle whose
``procs["sender"]`` says when the sender ended) and waits for them (:meth:`Stack.end`); the
flow it ended (:class:`Ended`) gives what the run's results need of it: its facts for the
simulator's instruments (:meth:`Ended.facts`), its ``flows`` row and logs
(:meth:`Ended.fill`), its endpoints' figures and its part of the ``live`` section. Which
stack a flow runs is its kind (`tcplab.live.real_tcp_results.flow_kind`):

- ``tcplab``: tcplab-core's sender and receiver over UDP (`tcplab.live.transport`);
- ``linux``: the kernel's TCP at both ends (`tcplab.live.linux`);
- ``tcplab-tcp``: tcplab's sender speaking real TCP to a Linux sink (`tcplab.live.real_tcp`);
- ``linux-to-tcplab``: a Linux sender to tcplab's receiver (`tcplab.live.real_tcp`).

All but the first speak TCP on the wire; the Linux senders are the ones the kernel's trace
follows. UDP constant-bit-rate flows are not flows of the ``flows`` table and keep their
own module (`tcplab.live.udp`).

A campaign probe (`tcplab.campaign.live_probe`) runs a stack's two ends apart, each on its
own host as a task of its own: the same stack gives each end's command line
(:meth:`Stack.sink_argv`, :meth:`Stack.source_argv`) and what its files say once it ended
(:meth:`Stack.sink_figures`, :meth:`Stack.source_figures`), for a :class:`Transfer`.
"""

from __future__ import annotations

import json
import signal
import subprocess
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from tcplab.live import facts as live_facts
from tcplab.live import kernel_trace
from tcplab.live.end_traces import facts_trace, series_trace, tcpinfo_trace
from tcplab.live.endpoints import checked_flow_binary, linux_recv, linux_send, tcplab_flow
from tcplab.live.errors import LiveError
from tcplab.live import real_tcp_results as real_tcp
from tcplab.live.kernel_trace import KernelTrace
from tcplab.live.netns import Testbed
from tcplab.live.raw_device import RawDevice
from tcplab.live.real_tcp import RealTcpRun, start_real_tcp_flow, start_real_tcp_receiver_flow
from tcplab.live.transport import FlowRun, log_rows, sender_columns, start_flow
from tcplab.schema import SCHEMA

__all__ = ["STACKS", "TCPLAB_MSS", "Context", "Ended", "Logs", "Stack", "Transfer", "stack_of", "transfer_scenario"]

#: The tcplab transport's largest payload on a 1500-byte MTU (IP, UDP, its 24-byte header).
TCPLAB_MSS = 1448
#: A sink started for a transfer apart outlives its time limit by this much at most.
SINK_GRACE_S = 30.0
#: How long a tcplab receiver keeps running after it was asked to end (what is in flight).
SETTLE_S = 0.3
#: Model time 0 of a tcplab sender apart lies this far after it was started.
APART_START_MARGIN_NS = 200_000_000


@dataclass
class Context:
    """What the ended flows need of the whole run to give their results."""

    tb: Testbed
    origin: int  # CLOCK_MONOTONIC ns of model time 0
    dirs: dict[tuple[str, str], int]  # the emulator's link directions, simulator-numbered
    ack_drops: Counter[int]  # tcplab transport flows' dropped ACKs, by flow
    kernel_trace: KernelTrace | None = None
    #: Linux senders' segments as the emulator saw them sent (by flow)
    wire: dict[int, list[dict[str, Any]]] = field(default_factory=dict)


@dataclass
class Logs:
    """A flow's rows of the ``events``, ``segments`` and ``series`` tables; ``traced``: its
    series and events are the kernel's trace."""

    events: list[dict[str, Any]] = field(default_factory=list)
    segments: list[dict[str, Any]] = field(default_factory=list)
    series: list[dict[str, Any]] = field(default_factory=list)
    traced: bool = False


class Ended:
    """A flow that ran: what the results need of it (defaults: nothing)."""

    stack = ""

    def __init__(self, index: int) -> None:
        self.index = index

    def facts(self, ctx: Context) -> tuple[list[dict[str, Any]], list[list[dict[str, Any]]], list[dict[str, Any]]]:
        """(drop facts, fact streams, closing facts) for the instruments' replay."""
        return [], [], []

    def prepare(self, ctx: Context) -> None:
        """Reads what needs the stopped testbed (its drop log, its stats)."""

    def data_iss(self) -> int | None:
        """The initial sequence number its data is counted from in the ``drops`` table."""
        return None

    def fill(self, ctx: Context, row: dict[str, Any]) -> Logs:
        """Completes its ``flows`` row (the instruments gave the rest) and gives its logs."""
        return Logs()

    def endpoints(self) -> dict[str, Any] | None:
        """Its endpoints' figures for the ``live`` section's checks, or None."""
        return None

    def section(self, ctx: Context) -> dict[str, Any]:
        """Its entry of the ``live`` section's ``flows``."""
        return {"stack": self.stack}


def _sender_logs(out_dir: Path, index: int) -> Logs:
    return Logs(events=log_rows(out_dir / "sender", "events", index),
                segments=log_rows(out_dir / "sender", "segments", index))


class TcplabEnded(Ended):
    stack = "tcplab"

    def __init__(self, index: int, run: FlowRun) -> None:
        super().__init__(index)
        self.run = run

    def facts(self, ctx: Context) -> tuple[list[dict[str, Any]], list[list[dict[str, Any]]], list[dict[str, Any]]]:
        r, i = self.run, self.index
        return ([], live_facts.flow_streams(i, r.out_dir, r.sender, r.receiver),
                live_facts.closing_facts(i, r.sender, r.receiver, ctx.ack_drops[i]))

    def fill(self, ctx: Context, row: dict[str, Any]) -> Logs:
        r = self.run
        row.update({**sender_columns(r.sender), "bytes_delivered": r.receiver["bytes_delivered"],
                    "throughput_bps": r.throughput_bps, "acks_sent": r.receiver["acks_sent"],
                    "spurious_retransmits": r.receiver["stream"]["duplicate_segments"]})
        return _sender_logs(r.out_dir, self.index)

    def endpoints(self) -> dict[str, Any]:
        return {"sender": self.run.sender, "receiver": self.run.receiver}

    def section(self, ctx: Context) -> dict[str, Any]:
        s, r = self.run.sender, self.run.receiver
        return {"stack": "tcplab", "framing": s["framing"],
                "acks_after_sender_stopped": max(0, live_facts.acks_unread(s, r, ctx.ack_drops[self.index])),
                "intact": r["intact"], "stream": r["stream"], "realtime": s["realtime"],
                "cpu_ns": {"sender": s["cpu_ns"], "receiver": r["cpu_ns"]}}


class TcplabTcpEnded(Ended):
    stack = "tcplab-tcp"

    def __init__(self, index: int, run: RealTcpRun) -> None:
        super().__init__(index)
        self.run = run
        self.drop_counts: dict[str, int] = {}

    def facts(self, ctx: Context) -> tuple[list[dict[str, Any]], list[list[dict[str, Any]]], list[dict[str, Any]]]:
        drops, self.drop_counts = real_tcp.sender_drops(ctx.tb, ctx.origin, self.index, self.run, ctx.dirs)
        streams, closing = real_tcp.sender_facts(self.index, self.run)
        return drops, streams, closing

    def data_iss(self) -> int:
        return int(self.run.sender["iss"])

    def fill(self, ctx: Context, row: dict[str, Any]) -> Logs:
        row.update(real_tcp.sender_row(self.run))
        return _sender_logs(self.run.out_dir, self.index)

    def endpoints(self) -> dict[str, Any]:
        s = self.run.sender
        return {"sender": {**s, "send_errors": s.get("write_errors", 0)}}

    def section(self, ctx: Context) -> dict[str, Any]:
        return real_tcp.sender_section(self.run, self.drop_counts)


class LinuxEnded(Ended):
    """A Linux sender's flow (to Linux's receiver here, to tcplab's in the subclass)."""

    stack = "linux"

    def __init__(self, index: int, handle: Any) -> None:
        super().__init__(index)
        self.handle = handle
        self.result: Any = None  # LinuxFlowResult, once prepared

    def prepare(self, ctx: Context) -> None:
        self.result = self.handle.result(ctx.tb)

    def kernel_sender(self) -> dict[str, Any]:
        """The Linux sender's own summary (its socket cookie, its first sequence number)."""
        run = self.handle.run
        return run.sender if run is not None else {}

    def data_iss(self) -> int | None:
        isn1 = self.kernel_sender().get("isn1")
        return int(isn1) - 1 if isn1 is not None else None

    def fill(self, ctx: Context, row: dict[str, Any]) -> Logs:
        res, i = self.result, self.index
        row.update({k: v for k, v in res.flow.items() if k not in ("name", "src", "dst")})
        logs = Logs(segments=ctx.wire.get(i, []))  # logged when the scenario traces segments
        snd = self.kernel_sender()
        if ctx.kernel_trace is not None and snd.get("cookie") is not None and snd.get("isn1") is not None:
            k = kernel_trace.rows(ctx.kernel_trace.flow(int(snd["cookie"])), ctx.origin, i, int(snd["isn1"]),
                                  int(res.final["snd_mss"]))
            logs.series, logs.events, logs.traced = k["series"], k["events"], True
            return logs
        shared = {c["name"] for c in SCHEMA["series"]}
        logs.series = [{**{k: v for k, v in r.items() if k in shared}, "flow": i}
                       for r in res.series.iter_rows(named=True)]
        return logs

    def section(self, ctx: Context) -> dict[str, Any]:
        res = self.result
        return {"stack": "linux", "intact": res.linux.get("intact"), "linux": res.linux, "final_tcp_info": res.final}


class LinuxToTcplabEnded(LinuxEnded):
    stack = "linux-to-tcplab"

    def __init__(self, index: int, handle: Any, run: Any) -> None:
        super().__init__(index, handle)
        self.run = run  # RealTcpReceiverRun

    def prepare(self, ctx: Context) -> None:
        self.result = real_tcp.receiver_result(self.handle, self.run, ctx.origin, ctx.tb)

    def kernel_sender(self) -> dict[str, Any]:
        return self.run.sender

    def endpoints(self) -> dict[str, Any]:
        return {"receiver": self.run.receiver}

    def section(self, ctx: Context) -> dict[str, Any]:
        return {**super().section(ctx), "receiver": "tcplab"}


class Transfer(Protocol):
    """A transfer whose ends run apart (a campaign probe: `tcplab.campaign.live_probe.ProbeJob`),
    as far as its ends need it."""

    probe: str
    source_address: str
    sink_address: str
    port: int | None
    bytes: int
    time_limit_s: float
    mss: int | None
    tcp: dict[str, Any]
    protocol: Any  # the stack's settings: controller, recovery (tcplab), congestion (linux)


def transfer_scenario(t: Transfer, duration_s: float) -> dict[str, Any]:
    """The canonical scenario the tcplab ends of `t` are built from: hosts ``source`` and
    ``sink`` (the link is the ends' business only in name: the path is real), flow 0 sending
    ``bytes`` with the transfer's controller and recovery."""
    from tcplab.scenario import as_scenario

    p = t.protocol
    d = {"rate": "1Gbps", "delay": "1ms", "buffer": 100}
    scenario: dict[str, Any] = {
        "name": f"probe-{t.probe}", "seed": 1, "duration": f"{round(duration_s * 1e9)}ns",
        "nodes": [{"name": "source", "kind": "host"}, {"name": "sink", "kind": "host"}],
        "links": [{"from": "source", "to": "sink", "forward": d, "reverse": d}],
        "flows": [{"name": "probe", "src": "source", "dst": "sink",
                   "controller": {"name": p.controller, **p.controller_params},
                   "recovery": {"name": p.recovery, **p.recovery_params}, "bytes": t.bytes}],
        "tcp": {"profile": "rfc", **t.tcp, "mss": t.mss or TCPLAB_MSS},
    }
    try:
        return as_scenario(scenario).canonical()
    except ValueError as e:
        raise LiveError(f"probe settings: {str(e).splitlines()[0]}") from None


class Stack:
    """How one kind of flow runs: its two ends together in a testbed (:meth:`start`,
    :meth:`end`), or apart on two hosts (a :class:`Transfer`: the ``sink_*`` and ``source_*``
    verbs; ``apart``: the kind can). ``linux_end``: one of its ends is a Linux socket (it
    takes 0.1-0.3 s to start); ``linux_sender``: its sender is the kernel's (the kernel's
    trace follows it). This base class is tcplab's transport over UDP."""

    name = "tcplab"
    linux_end = False
    linux_sender = False
    apart = True

    def start(self, tb: Testbed, canonical: dict[str, Any], index: int, origin: int, out: Path,
              realtime: bool) -> Any:
        return start_flow(tb, canonical, index, origin, out, realtime=realtime)

    def end(self, index: int, handle: Any, timeout_s: float) -> Ended:
        return TcplabEnded(index, handle.finish(timeout_s))

    # -- the sink apart: tcplab's receiver over UDP, which writes its summary at SIGTERM --

    def sink_argv(self, t: Transfer, port: int, out: Path) -> list[str]:
        cfg = {"scenario": transfer_scenario(t, t.time_limit_s + SINK_GRACE_S), "flow": 0,
               "local": f"{t.sink_address}:{port}", "peer": f"{t.source_address}:{port}",
               "clock_origin_ns": time.monotonic_ns(), "linger_ns": 0}
        checked_flow_binary(LiveError)
        return tcplab_flow("recv", cfg, out)

    def end_sink(self, proc: subprocess.Popen[str]) -> None:
        """Asks a sink still running to end, once what is in flight arrived."""
        time.sleep(SETTLE_S)
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)

    def sink_figures(self, out: Path) -> dict[str, Any] | None:
        """The sink's figures (bytes, intact, duration_s, throughput_bps, traces, summary, or
        status and reason) from its files; None: it wrote none."""
        f = out / "summary.json"
        if not f.exists():
            return None
        s = json.loads(f.read_text())
        first, last = s.get("first_arrival_ns"), s.get("last_arrival_ns")
        dur = (last - first) / 1e9 if first is not None and last is not None else None
        return {"bytes": s["bytes_delivered"], "intact": s["intact"], "duration_s": dur,
                "throughput_bps": s["bytes_delivered"] * 8 / dur if dur else None,
                "traces": facts_trace(out), "summary": s}

    # -- the source apart: tcplab's sender over UDP --

    def _sender_config(self, t: Transfer) -> dict[str, Any]:
        checked_flow_binary(LiveError)
        return {"scenario": transfer_scenario(t, t.time_limit_s), "flow": 0,
                "local": f"{t.source_address}:{t.port}", "peer": f"{t.sink_address}:{t.port}",
                "clock_origin_ns": time.monotonic_ns() + APART_START_MARGIN_NS}

    def source_argv(self, t: Transfer, out: Path) -> tuple[list[str], RawDevice | None, tuple[int, ...]]:
        """The source's command line, the device it sends on (held until it ended, then
        left) and the descriptors it inherits."""
        return tcplab_flow("send", self._sender_config(t), out), None, ()

    def source_figures(self, t: Transfer, out: Path) -> dict[str, Any]:
        """The source's figures (bytes acknowledged, completed, duration_s, throughput_bps,
        retransmits, timeouts, traces, summary) from its files."""
        s = json.loads((out / "summary.json").read_text())
        return {"bytes": s["bytes_acked"], "completed": s["completed"], "duration_s": (s["end_ns"] - s["start_ns"]) / 1e9,
                "throughput_bps": s["throughput_bps"], "retransmits": s["retransmits"],
                "timeouts": s["timeouts"], "traces": series_trace(out), "summary": s}


class _LinuxSink:
    """The sink apart is a Linux socket (``linux_endpoint.py recv``): it ends when its peer
    closes."""

    def sink_argv(self, t: Transfer, port: int, out: Path) -> list[str]:
        return linux_recv(port, out / "receiver.json", idle=t.time_limit_s + SINK_GRACE_S, mss=t.mss or 0,
                          window_clamp=int(t.tcp.get("rcv_buf", 0)))

    def end_sink(self, proc: subprocess.Popen[str]) -> None:
        pass

    def sink_figures(self, out: Path) -> dict[str, Any] | None:
        f = out / "receiver.json"
        if not f.exists():
            return None
        s = json.loads(f.read_text())
        if "error" in s and s.get("bytes") is None:
            return {"status": "failed", "reason": f"receiver: {s['error']}"}
        first, last = s.get("t_first_ns"), s.get("t_last_ns")
        dur = (last - first) / 1e9 if first is not None and last is not None else None
        s.pop("tcp_info", None)
        return {"bytes": s["bytes"], "intact": s["first_bad_offset"] is None and s["error"] is None,
                "duration_s": dur, "throughput_bps": s["bytes"] * 8 / dur if dur else None, "summary": s}


class LinuxStack(_LinuxSink, Stack):
    name = "linux"
    linux_end = linux_sender = True

    def start(self, tb: Testbed, canonical: dict[str, Any], index: int, origin: int, out: Path,
              realtime: bool) -> Any:
        from tcplab.live.linux import start_linux_flow

        return start_linux_flow(tb, canonical, index, origin, out)

    def end(self, index: int, handle: Any, timeout_s: float) -> Ended:
        handle.finish(timeout_s)
        return LinuxEnded(index, handle)

    def source_argv(self, t: Transfer, out: Path) -> tuple[list[str], RawDevice | None, tuple[int, ...]]:
        assert t.port is not None
        return linux_send(t.sink_address, t.port, t.protocol.congestion, out / "sender.json",
                          bytes=t.bytes, duration_ns=round(t.time_limit_s * 1e9), linger_ns=5_000_000_000,
                          mss=t.mss or 0), None, ()

    def source_figures(self, t: Transfer, out: Path) -> dict[str, Any]:
        s = json.loads((out / "sender.json").read_text())
        trace, final = tcpinfo_trace(out, s)
        end = s["t_end_ns"] if s["t_end_ns"] is not None else s["sample_ns"][-1]
        dur = (end - s["t_connect_ns"]) / 1e9
        # every byte written was acknowledged, or what was (bytes_acked counts the SYN)
        acked = s["bytes_written"] if s["t_end_ns"] is not None else max(0, final.get("bytes_acked", 1) - 1)
        summary = {k: v for k, v in s.items() if k not in ("tcp_info", "sample_ns")}
        summary["final_tcp_info"] = final
        return {"bytes": acked, "completed": s["t_end_ns"] is not None and s["bytes_written"] == t.bytes,
                "duration_s": dur, "throughput_bps": acked * 8 / dur if dur > 0 else None,
                "retransmits": final.get("total_retrans"), "timeouts": final.get("total_rto"),
                "traces": trace, "summary": summary}


class TcplabTcpStack(_LinuxSink, Stack):
    name = "tcplab-tcp"
    linux_end = True

    def start(self, tb: Testbed, canonical: dict[str, Any], index: int, origin: int, out: Path,
              realtime: bool) -> Any:
        return start_real_tcp_flow(tb, canonical, index, origin, out, realtime=realtime)

    def end(self, index: int, handle: Any, timeout_s: float) -> Ended:
        return TcplabTcpEnded(index, handle.finish(timeout_s))

    def source_argv(self, t: Transfer, out: Path) -> tuple[list[str], RawDevice | None, tuple[int, ...]]:
        """tcplab's sender speaking real TCP on the source's device (:mod:`tcplab.live.raw_device`)."""
        assert t.port is not None
        cfg = self._sender_config(t)
        device = RawDevice(t.sink_address, t.port)
        try:
            fd = device.__enter__()
        except LiveError as e:
            raise LiveError(f"tcplab-tcp: {e}") from None
        return tcplab_flow("tcp-send", cfg, out, fd=fd), device, (fd,)


class LinuxToTcplabStack(Stack):
    name = "linux-to-tcplab"
    linux_end = linux_sender = True
    apart = False

    def start(self, tb: Testbed, canonical: dict[str, Any], index: int, origin: int, out: Path,
              realtime: bool) -> Any:
        return start_real_tcp_receiver_flow(tb, canonical, index, origin, out, realtime=realtime)

    def end(self, index: int, handle: Any, timeout_s: float) -> Ended:
        return LinuxToTcplabEnded(index, handle, handle.finish(timeout_s))


#: The stacks by kind, in the order the ``live`` section lists their flows.
STACKS: dict[str, Stack] = {s.name: s for s in (Stack(), LinuxStack(), TcplabTcpStack(), LinuxToTcplabStack())}


def stack_of(flow: dict[str, Any]) -> Stack:
    """The stack a canonical flow runs on."""
    return STACKS[real_tcp.flow_kind(flow)]
