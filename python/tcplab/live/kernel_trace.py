"""The kernel's own trace of Linux flows in a live run (docs/live.md): the tracepoints
``tcp:tcp_probe`` (per ACK the sender takes in: cwnd, ssthresh, srtt, snd_nxt, snd_una,
windows), ``tcp:tcp_retransmit_skb`` and ``tcp:tcp_cong_state_set``, recorded through a
tracefs *instance* of the run's own (``instances/tcplab-<pid>-<n>``): its own event
switches, filters and buffer, so that concurrent runs do not see each other's events and a
run turns off exactly what it turned on (removing the instance does). The filter keeps the
flows' ports; each flow's records are then picked by its sender socket's cookie
(``SO_COOKIE``, in every ``tcp_probe`` record) and the addresses and ports that the cookie's
records carry (the other two events print no cookie).

Timestamps come from the instance's ``mono`` clock: CLOCK_MONOTONIC, the run's own time
base. An instance left behind by an owner that was killed (SIGKILL) is removed by the next
run (``remove_stale``). Where tracefs cannot be had (not root, no tracefs in the kernel) the
run says so in one line and keeps its ``TCP_INFO`` samples.

docs/live.md ("The kernel's trace") describes the rows made of the records.
"""

from __future__ import annotations

import itertools
import os
import re
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tcplab.live.netns import pid_alive

#: Where tracefs is mounted when the kernel's usual place holds nothing.
MOUNT_POINT = Path("/sys/kernel/tracing")
PREFIX = "tcplab-"
EVENTS = ("tcp_probe", "tcp_retransmit_skb", "tcp_cong_state_set")
#: Per-CPU buffer of an instance: about 200,000 records per CPU.
BUFFER_KB = 32768
#: Linux's TCP_CA_* states, as ``tcp_cong_state_set`` numbers them.
CA_STATES = ("open", "disorder", "cwr", "recovery", "loss")

_counter = itertools.count()
_LINE = re.compile(r"^\s*\S.*?\s+(\d+\.\d+):\s+(\w+):\s+(.*)$")
_FIELD = re.compile(r"(\w+)=(\S+)")


def tracefs() -> Path | None:
    """The mounted tracefs (mounting it at its usual place when nothing is there), or None
    where it cannot be had."""
    for line in Path("/proc/mounts").read_text().splitlines():
        parts = line.split()
        if len(parts) > 2 and parts[2] == "tracefs" and Path(parts[1], "instances").is_dir():
            return Path(parts[1])
    if os.geteuid() != 0 or not MOUNT_POINT.is_dir():
        return None
    r = subprocess.run(["mount", "-t", "tracefs", "nodev", str(MOUNT_POINT)], capture_output=True, text=True)
    return MOUNT_POINT if r.returncode == 0 and (MOUNT_POINT / "instances").is_dir() else None


def unavailable() -> str | None:
    """Why the kernel's trace cannot be recorded here (one line), or None."""
    if os.geteuid() != 0:
        return "the kernel's TCP trace needs root (tracefs); TCP_INFO samples only"
    root = tracefs()
    if root is None:
        return "tracefs cannot be mounted here; TCP_INFO samples only"
    missing = [e for e in EVENTS if not (root / "events" / "tcp" / e).is_dir()]
    if missing:
        return f"this kernel lacks the tracepoints {', '.join(missing)}; TCP_INFO samples only"
    return None


def remove_stale(root: Path) -> list[str]:
    """Removes the instances of runs whose process is gone; returns their names."""
    gone = []
    for d in (root / "instances").glob(f"{PREFIX}*"):
        try:
            pid = int(d.name[len(PREFIX):].split("-")[0])
        except ValueError:
            continue
        if not pid_alive(pid):
            _remove(d)
            gone.append(d.name)
    return gone


def _remove(inst: Path) -> None:
    for e in EVENTS:
        try:
            (inst / "events" / "tcp" / e / "enable").write_text("0")
        except OSError:
            pass
    try:
        inst.rmdir()
    except OSError:
        pass


@dataclass
class Record:
    time_ns: int
    event: str
    fields: dict[str, str]


@dataclass
class KernelTrace:
    """The trace of one run: `ports` are the Linux flows' receiver ports (their senders'
    destination). Use as a context manager: on exit (also on an exception or Ctrl-C) the
    instance, its switches and buffer are gone; `records` keeps what was read."""

    ports: list[int]
    root: Path | None = None
    inst: Path | None = None
    records: list[Record] = field(default_factory=list)
    lost: int = 0

    def __enter__(self) -> KernelTrace:
        root = tracefs()
        if root is None:
            raise OSError("tracefs is not available")
        remove_stale(root)
        self.root = root
        self.inst = root / "instances" / f"{PREFIX}{os.getpid()}-{next(_counter)}"
        self.inst.mkdir()
        try:
            (self.inst / "trace_clock").write_text("mono")
            (self.inst / "buffer_size_kb").write_text(str(BUFFER_KB))
            ports = " || ".join(f"dport == {p} || sport == {p}" for p in sorted(set(self.ports))) or "0"
            for e in EVENTS:
                d = self.inst / "events" / "tcp" / e
                (d / "filter").write_text(ports)
                (d / "enable").write_text("1")
        except BaseException:
            _remove(self.inst)
            raise
        return self

    def stop(self) -> None:
        """Turns the events off and reads the buffer (once)."""
        if self.inst is None or not self.inst.exists():
            return
        for e in EVENTS:
            (self.inst / "events" / "tcp" / e / "enable").write_text("0")
        for stats in (self.inst / "per_cpu").glob("cpu*/stats"):
            m = re.search(r"^overrun: (\d+)", stats.read_text(), re.M)
            self.lost += int(m.group(1)) if m else 0
        with (self.inst / "trace").open() as f:
            for line in f:
                if line.startswith("#"):
                    continue
                m = _LINE.match(line)
                if m is None:
                    continue
                secs, event, rest = m.groups()
                whole, frac = secs.split(".")
                t = int(whole) * 1_000_000_000 + int(frac.ljust(9, "0")[:9])
                self.records.append(Record(t, event, dict(_FIELD.findall(rest))))

    def __exit__(self, *exc: Any) -> None:
        try:
            self.stop()
        finally:
            if self.inst is not None:
                _remove(self.inst)

    def flow(self, cookie: int) -> list[Record]:
        """The records of the sender socket with cookie `cookie`: its probes, and the
        retransmissions and state changes of the socket at the address its probes name."""
        mine = [r for r in self.records if r.event == "tcp_probe" and int(r.fields.get("sock_cookie", "-1"), 16) == cookie]
        ends = {_probe_ends(r) for r in mine}
        return sorted(mine + [r for r in self.records if r.event != "tcp_probe" and _ends(r) in ends],
                      key=lambda r: r.time_ns)


def _probe_ends(r: Record) -> tuple[str, str, str, str]:
    """A tcp_probe record's (source address, port, destination address, port)."""
    src, _, sport = r.fields.get("src", "").rpartition(":")
    dst, _, dport = r.fields.get("dest", "").rpartition(":")
    return src, sport, dst, dport


def _ends(r: Record) -> tuple[str, str, str, str]:
    """The same four of a tcp_retransmit_skb or tcp_cong_state_set record."""
    f = r.fields
    return f.get("saddr", ""), f.get("sport", ""), f.get("daddr", ""), f.get("dport", "")


def rows(records: list[Record], origin_ns: int, flow: int, isn1: int, mss: int) -> dict[str, list[dict[str, Any]]]:
    """One Linux flow's records as rows of the simulator's tables, times on the run's axis
    (origin: CLOCK_MONOTONIC ns of model time 0), sequence numbers from the first data byte
    (`isn1`):
    ``series`` (per ACK: cwnd and ssthresh in bytes, srtt, in flight, bytes
    acknowledged and sent), ``events`` (each congestion-state change: ``recovery_enter``,
    ``timeout`` for Loss, ``ecn_response`` for CWR, ``recovery_exit`` back to Open or
    Disorder; cwnd and ssthresh as the last probe had them, ``seq`` snd_una). The trace does
    not say which bytes a retransmission carried: a Linux sender's ``segments`` are the
    wire's (:mod:`tcplab.live.tcp_sends`)."""
    wrap = 1 << 32
    series: list[dict[str, Any]] = []
    events: list[dict[str, Any]] = []
    una = 0
    cwnd = ssthresh = 0
    state = 0
    for r in records:
        t = max(0, r.time_ns - origin_ns)
        f = r.fields
        if r.event == "tcp_probe":
            una = (int(f["snd_una"], 16) - isn1) % wrap
            new_nxt = (int(f["snd_nxt"], 16) - isn1) % wrap
            cwnd, ss = int(f["snd_cwnd"]) * mss, int(f["ssthresh"])
            ssthresh = (1 << 64) - 1 if ss >= 0x7FFFFFFF else ss * mss
            series.append({"time_ns": t, "flow": flow, "cwnd": cwnd, "ssthresh": ssthresh,
                           "srtt_ns": int(f["srtt"]) * 1000, "in_flight": max(0, new_nxt - una),
                           "delivered": una, "bytes_sent": new_nxt})
        elif r.event == "tcp_cong_state_set":
            new = int(f["cong_state"])
            name = {3: "recovery_enter", 4: "timeout", 2: "ecn_response"}.get(new)
            if name is None and state in (2, 3, 4) and new in (0, 1):
                name = "recovery_exit"
            if name is not None:
                events.append({"time_ns": t, "flow": flow, "event": name, "reason": "", "cwnd": cwnd,
                               "ssthresh": ssthresh, "seq": una, "label": CA_STATES[new] if new < 5 else str(new),
                               "value": 0.0})
            state = new
    return {"series": series, "events": events}
