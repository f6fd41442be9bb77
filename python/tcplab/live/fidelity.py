"""The ``live`` section of a live run's summary: what ran on which stack, the emulator's
timing fidelity, the drops outside the model, the endpoints' timer lateness, and a verdict
against `BOUNDS` (stated in docs/live.md before any run was measured against them)."""

from __future__ import annotations

import os
import subprocess
from typing import Any

from tcplab.live.netns import Testbed

#: The bounds a live run must stay within to be ``ok``: the emulator writes packets at most
#: 1 ms late at the 99th percentile on every host, the endpoints' timers fire at most 1 ms
#: late at the 99th percentile, and nothing is dropped outside the model (TUN writes
#: refused, receiver socket overflows, datagrams a socket refused to send).
BOUNDS: dict[str, int] = {
    "emulator_lateness_p99_ns": 1_000_000,
    "timer_lateness_p99_ns": 1_000_000,
    "drops_outside_model": 0,
}

OK, OUTSIDE = "ok", "outside bounds"


def udp_rcvbuf_errors(tb: Testbed) -> dict[str, int]:
    """Per host: the UDP receive-buffer overflows of its namespace so far (``RcvbufErrors``
    of ``/proc/net/snmp``: datagrams the kernel dropped because a socket's buffer was
    full, a drop outside the model). Read while the testbed runs."""
    out = {}
    for host in tb.ns:
        r = subprocess.run(tb.command(host, ["cat", "/proc/net/snmp"]), capture_output=True, text=True)
        rows = [line.split() for line in r.stdout.splitlines() if line.startswith("Udp:")]
        if len(rows) >= 2 and "RcvbufErrors" in rows[0]:
            out[host] = int(rows[1][rows[0].index("RcvbufErrors")])
    return out


#: The columns of /proc/stat's `cpu` line, in order.
CPU_KINDS = ("user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal")


def cpu_ms() -> dict[str, float]:
    """The machine's CPU time so far by kind, in ms summed over its CPUs (/proc/stat's `cpu`
    line): `steal` is the time the hypervisor ran something else while a CPU of this machine
    wanted to run, the likeliest cause of the emulator's stalls. Empty where /proc/stat is
    not readable."""
    try:
        with open("/proc/stat") as f:
            fields = f.readline().split()
    except OSError:
        return {}
    tick_ms = 1000.0 / os.sysconf("SC_CLK_TCK")
    return {k: int(v) * tick_ms for k, v in zip(CPU_KINDS, fields[1:])}


def _worst(values: list[dict[str, Any]], key: str) -> int | None:
    xs = [int(v[key]) for v in values if v and v.get("count") and v.get(key) is not None]
    return max(xs) if xs else None


def live_section(stats: dict[str, Any], stacks: dict[str, list[str]],
                 endpoints: dict[str, dict[str, Any]], rcvbuf_errors: dict[str, int],
                 realtime: bool, emu_offset_ns: int = 0) -> dict[str, Any]:
    """The section: `stats` the emulator's stats.json, `stacks` flow names by stack,
    `endpoints` per tcplab flow name its sender's and receiver's summaries (``sender``,
    ``receiver``), `rcvbuf_errors` per host; `emu_offset_ns` is the run's time of the
    emulator's time 0 (its stalls are given in the run's time)."""
    hosts = stats.get("hosts", {})
    lateness = [h.get("lateness_ns") or {} for h in hosts.values()]
    outside = {"tun_write_errors": 0, "not_ipv4": 0, "no_route": 0}
    for h in hosts.values():
        for k in outside:
            outside[k] += int((h.get("outside_model") or {}).get(k, 0))
    timers = [s.get("timer_lateness_ns") or {} for e in endpoints.values() for s in e.values()]
    send_errors = sum(int(s.get("send_errors", 0)) for e in endpoints.values() for s in e.values())
    counted = {"tun_write_errors": outside["tun_write_errors"],
               "receiver_socket_overflows": sum(rcvbuf_errors.values()),
               "endpoint_send_errors": send_errors}
    measured = {
        "emulator_lateness_p99_ns": _worst(lateness, "p99"),
        "timer_lateness_p99_ns": _worst(timers, "p99"),
        "drops_outside_model": sum(counted.values()),
    }
    reasons = [f"{k} = {v} > {BOUNDS[k]}" for k, v in measured.items()
               if v is not None and v > BOUNDS[k]]
    return {
        "stacks": stacks,
        "realtime": {"asked": realtime, "emulator": stats.get("realtime")},
        "emulator_lateness_ns": {"p50": _worst(lateness, "p50"), "p99": _worst(lateness, "p99"),
                                 "max": _worst(lateness, "max"),
                                 "packets": sum(int(v.get("count", 0)) for v in lateness)},
        "timer_lateness_ns": {"p50": _worst(timers, "p50"), "p99": _worst(timers, "p99"),
                              "max": _worst(timers, "max")},
        "drops_outside_model": {**counted, "not_ipv4": outside["not_ipv4"],
                                "no_route": outside["no_route"],
                                "receiver_socket_overflows_by_host": rcvbuf_errors},
        "emulator_stalls": stalls(stats, emu_offset_ns),
        # Packets the kernel hosts sent in answer to a delivery, stamped with its modelled
        # time (docs/live.md#stalls), those answering a delivery at least 1 ms late, and
        # those stamped later to stay behind what their host sent before them.
        "kernel_answers": {"packets": sum(int(h.get("answers", 0)) for h in hosts.values()),
                           "late": sum(int(h.get("answers_late", 0)) for h in hosts.values()),
                           "behind": sum(int(h.get("answers_behind", 0)) for h in hosts.values())},
        "bounds": dict(BOUNDS),
        "measured": measured,
        "verdict": OUTSIDE if reasons else OK,
        "outside": reasons,
    }


def stalls(stats: dict[str, Any], emu_offset_ns: int) -> dict[str, Any] | None:
    """The emulator's stalls (``tcplab_live::stalls``: each stretch of deliveries at least
    ``threshold_ns`` late, from the first late packet's modelled time to the last late
    write) in the run's time, as columns; None from an emulator that does not log them."""
    s = stats.get("stalls")
    if not s:
        return None
    return {"threshold_ns": s["threshold_ns"], "count": s["count"], "total_ns": s["total_ns"], "cut": s["cut"],
            "from_ns": [t + emu_offset_ns for t in s["from_ns"]], "until_ns": [t + emu_offset_ns for t in s["until_ns"]],
            "worst_ns": s["worst_ns"], "packets": s["packets"]}


def stall_windows(st: dict[str, Any], drain_ns: int = 0) -> list[tuple[int, int]]:
    """The stalls of `st` (`stalls`' columns) as sorted, disjoint windows, each extended by
    `drain_ns` past its last late write."""
    merged: list[tuple[int, int]] = []
    for a, b in sorted(zip(st["from_ns"], (u + drain_ns for u in st["until_ns"]))):
        if merged and a <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], b))
        else:
            merged.append((a, b))
    return merged


def stalled_ns(live: dict[str, Any], start_ns: int, end_ns: int) -> int:
    """How much of [`start_ns`, `end_ns`) (run time) the emulator spent stalled (the
    ``live`` section's ``emulator_stalls``; 0 where it logs none): time in which the
    emulated network did not run on time, and everything the hosts did waited for it. A
    flow's throughput over its span less this time is what the modelled network gave it
    (docs/fidelity.md, "tcplab-tcp against its own simulation")."""
    st = live.get("emulator_stalls")
    if not st:
        return 0
    return sum(max(0, min(b, end_ns) - max(a, start_ns)) for a, b in stall_windows(st))


def verdict_line(live: dict[str, Any]) -> str:
    """The live section's verdict in one line (CLI, report)."""
    if live.get("verdict") == OK:
        return f"live fidelity: ok (bounds: {', '.join(f'{k} <= {v}' for k, v in live['bounds'].items())})"
    return "live fidelity: OUTSIDE BOUNDS: " + "; ".join(live.get("outside", []))
