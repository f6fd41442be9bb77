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
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tcplab.live import facts as live_facts
from tcplab.live import kernel_trace
from tcplab.live import real_tcp_results as real_tcp
from tcplab.live.kernel_trace import KernelTrace
from tcplab.live.netns import Testbed
from tcplab.live.real_tcp import RealTcpRun, start_real_tcp_flow, start_real_tcp_receiver_flow
from tcplab.live.transport import FlowRun, log_rows, sender_columns, start_flow
from tcplab.schema import SCHEMA

__all__ = ["STACKS", "Context", "Ended", "Logs", "Stack", "stack_of"]


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


class Stack:
    """How one kind of flow starts and ends. ``linux_end``: one of its ends is a Linux
    socket (it takes 0.1-0.3 s to start); ``linux_sender``: its sender is the kernel's (the
    kernel's trace follows it)."""

    name = "tcplab"
    linux_end = False
    linux_sender = False

    def start(self, tb: Testbed, canonical: dict[str, Any], index: int, origin: int, out: Path,
              realtime: bool) -> Any:
        return start_flow(tb, canonical, index, origin, out, realtime=realtime)

    def end(self, index: int, handle: Any, timeout_s: float) -> Ended:
        return TcplabEnded(index, handle.finish(timeout_s))


class LinuxStack(Stack):
    name = "linux"
    linux_end = linux_sender = True

    def start(self, tb: Testbed, canonical: dict[str, Any], index: int, origin: int, out: Path,
              realtime: bool) -> Any:
        from tcplab.live.linux import start_linux_flow

        return start_linux_flow(tb, canonical, index, origin, out)

    def end(self, index: int, handle: Any, timeout_s: float) -> Ended:
        handle.finish(timeout_s)
        return LinuxEnded(index, handle)


class TcplabTcpStack(Stack):
    name = "tcplab-tcp"
    linux_end = True

    def start(self, tb: Testbed, canonical: dict[str, Any], index: int, origin: int, out: Path,
              realtime: bool) -> Any:
        return start_real_tcp_flow(tb, canonical, index, origin, out, realtime=realtime)

    def end(self, index: int, handle: Any, timeout_s: float) -> Ended:
        return TcplabTcpEnded(index, handle.finish(timeout_s))


class LinuxToTcplabStack(Stack):
    name = "linux-to-tcplab"
    linux_end = linux_sender = True

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
