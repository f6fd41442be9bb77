"""What a kernel TCP flow asks of its namespaces: sysctls and route attributes.

Sysctls are per network namespace and route attributes per (namespace, peer) route, while a
host may carry several flows at once (as sender of some, receiver of others). Each flow
*claims* the values it needs (`claims`): its TCP settings mapped to sysctls in both its
namespaces (`sysctls_for`), ``initcwnd`` and ``rto_min`` on the sender's route to the receiver,
``quickack`` on the receiver's route to the sender (`route_claims`). Two flows claiming
different values of one setting in one place cannot run together: `check_together` refuses them
in one line naming both flows and the setting. `HostSettings` (one per testbed) writes a value
only when it differs from what the namespace already has, reads each namespace's sysctls back
once after writing, and forgets a flow's claims when it ends.

The namespace's default congestion control is not a claim: the socket asks for its own by
name (``TCP_CONGESTION``), and the default is set by a flow that starts on a host where no other
flow runs, if the kernel allows it (`allowed_congestion_controls`).
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tcplab.live.netns import TUN, LiveError, Testbed

AVAILABLE = Path("/proc/sys/net/ipv4/tcp_available_congestion_control")
ALLOWED = Path("/proc/sys/net/ipv4/tcp_allowed_congestion_control")
CC = "net.ipv4.tcp_congestion_control"

#: Sysctls read back in each namespace and recorded, whether tcplab sets them or not.
RECORDED = (
    CC,
    "net.ipv4.tcp_available_congestion_control",
    "net.ipv4.tcp_allowed_congestion_control",
    "net.ipv4.tcp_sack",
    "net.ipv4.tcp_dsack",
    "net.ipv4.tcp_timestamps",
    "net.ipv4.tcp_window_scaling",
    "net.ipv4.tcp_ecn",
    "net.ipv4.tcp_frto",
    "net.ipv4.tcp_no_metrics_save",
    "net.ipv4.tcp_rmem",
    "net.ipv4.tcp_wmem",
    "net.ipv4.tcp_recovery",
    "net.ipv4.tcp_early_retrans",
    "net.ipv4.tcp_slow_start_after_idle",
    "net.ipv4.tcp_moderate_rcvbuf",
    "net.ipv4.tcp_autocorking",
)

def _profile_rmem() -> str:
    """tcp_rmem as the `linux` profile's receiver models it (``tcplab_core::LINUX_RMEM``: its
    ``rcv_buf_initial`` and ``rcv_buf``), so that the kernel's receive window autotunes as the
    simulated one does."""
    from tcplab.scenario.flows import profile_defaults

    tcp = profile_defaults("linux")["tcp"]
    return f"4096 {tcp['rcv_buf_initial']} {tcp['rcv_buf']}"


#: The socket buffers' sysctls (min, default, max bytes): the receive buffer as the `linux`
#: profile has it (16 MiB at most: 100 Mb/s over a 1 s RTT), so the kernel's buffers do not
#: limit a flow unless `rcv_buf` says so.
RMEM = _profile_rmem()
WMEM = "4096 16384 16777216"

#: Scenario TCP settings with a kernel counterpart (sysctl, socket option or route attribute).
MAPPED = ("timestamps", "sack_blocks", "dsack", "ecn", "frto", "rcv_buf", "mss", "initial_cwnd",
          "rto_min", "delayed_ack")

#: The scenario setting behind each claimed sysctl or route attribute (for messages).
SETTING = {
    "net.ipv4.tcp_timestamps": "tcp.timestamps", "net.ipv4.tcp_sack": "tcp.sack_blocks",
    "net.ipv4.tcp_dsack": "tcp.dsack", "net.ipv4.tcp_ecn": "tcp.ecn",
    "net.ipv4.tcp_frto": "tcp.frto", "initcwnd": "tcp.initial_cwnd",
    "rto_min": "tcp.rto_min", "quickack": "tcp.delayed_ack",
}


def available_congestion_controls() -> list[str]:
    """The congestion controls the kernel has (registered; the list is the same in every
    namespace)."""
    return AVAILABLE.read_text().split()


def check_congestion(name: str) -> None:
    """Raises LiveError (one line, listing what the kernel has) when `name` is not available."""
    have = available_congestion_controls()
    if name not in have:
        raise LiveError(f"congestion = {name!r}: the kernel has no such congestion control "
                        f"(available: {', '.join(have)})")


def allowed_congestion_controls() -> list[str]:
    """The congestion controls any process may pick (``tcp_allowed_congestion_control``, set
    in the initial namespace only). Outside the initial namespace only these can become a
    namespace's default (the kernel answers EPERM for the others); a process with
    CAP_NET_ADMIN, as the flow's ends are, may still pick any available one per socket."""
    return ALLOWED.read_text().split()


def sysctls_for(congestion: str, tcp: dict[str, Any], allowed: list[str]) -> dict[str, str]:
    """The sysctls a flow with congestion control `congestion` and scenario TCP settings `tcp`
    (canonical names: ``timestamps``, ``sack_blocks``, ``dsack``, ``ecn``, ``frto``; absent
    fields keep the kernel's value) sets in its namespaces. The namespace's default congestion
    control becomes `congestion` where the kernel allows it (`allowed`); the flow's socket
    asks for it by name (TCP_CONGESTION) in any case."""
    s = {CC: congestion} if congestion in allowed else {}
    s |= {
        "net.ipv4.tcp_no_metrics_save": "1",
        "net.ipv4.tcp_window_scaling": "1",
        "net.ipv4.tcp_rmem": RMEM,
        "net.ipv4.tcp_wmem": WMEM,
    }
    flag = {True: "1", False: "0"}
    if tcp.get("timestamps") is not None:
        s["net.ipv4.tcp_timestamps"] = flag[bool(tcp["timestamps"])]
    if tcp.get("sack_blocks") is not None:
        s["net.ipv4.tcp_sack"] = flag[tcp["sack_blocks"] > 0]
    if tcp.get("dsack") is not None:
        s["net.ipv4.tcp_dsack"] = flag[bool(tcp["dsack"])]
    if tcp.get("ecn") is not None:
        s["net.ipv4.tcp_ecn"] = flag[bool(tcp["ecn"])]  # 1: request ECN on outgoing connections
    if tcp.get("frto") is not None:
        s["net.ipv4.tcp_frto"] = "2" if tcp["frto"] else "0"
    return s


def route_claims(tcp: dict[str, Any]) -> tuple[dict[str, str | None], dict[str, str | None]]:
    """The route attributes scenario TCP settings map to: on the sender's route to the
    receiver ``initcwnd`` (`initial_cwnd`) and ``rto_min`` (`rto_min`, whole ms); on the
    receiver's route to the sender ``quickack 1`` (`delayed_ack = false`: every segment ACKed
    at once). A setting present with the kernel's default (``None``, or delayed ACKs on)
    claims the attribute's absence; an absent setting claims nothing."""
    snd: dict[str, str | None] = {}
    rcv: dict[str, str | None] = {}
    if "initial_cwnd" in tcp:
        v = tcp["initial_cwnd"]
        snd["initcwnd"] = None if v is None else str(int(v))
    if "rto_min" in tcp:
        v = tcp["rto_min"]
        snd["rto_min"] = None if v is None else f"{max(1, round(v / 1e6))}ms"
    if "delayed_ack" in tcp:
        rcv["quickack"] = "1" if tcp["delayed_ack"] is False else None
    return snd, rcv


@dataclass(frozen=True)
class Claim:
    """One value a flow needs: `where` is ``(host,)`` for a sysctl of the host's namespace or
    ``(host, peer)`` for an attribute of the host's route to the peer; `value` None is the
    kernel's default (the attribute absent)."""

    where: tuple[str, ...]
    key: str
    value: str | None
    flow: str


def claims(name: str, src: str, dst: str, congestion: str, tcp: dict[str, Any]) -> list[Claim]:
    """Everything flow `name` (src -> dst) claims; the default congestion control is not a
    claim (see the module's docstring)."""
    out = []
    for k, v in sysctls_for(congestion, tcp, []).items():
        out += [Claim((src,), k, v, name), Claim((dst,), k, v, name)]
    snd, rcv = route_claims(tcp)
    out += [Claim((src, dst), k, v, name) for k, v in snd.items()]
    out += [Claim((dst, src), k, v, name) for k, v in rcv.items()]
    return out


def _conflict(a: Claim, b: Claim) -> LiveError:
    what = SETTING.get(a.key, a.key)
    place = (f"share host {a.where[0]!r}" if len(a.where) == 1
             else f"share the route {a.where[0]} -> {a.where[1]}")
    va, vb = (v if v is not None else "the kernel's default" for v in (a.value, b.value))
    return LiveError(f"flows {a.flow!r} and {b.flow!r} {place} but ask for {a.key} = "
                     f"{va!r} and {vb!r} "
                     f"({what}): they cannot run at once")


def check_together(all_claims: list[Claim]) -> None:
    """Raises LiveError naming the first two flows that claim different values of one setting
    in one place (the first claim's flow, when it has a conflict, and another)."""
    seen: dict[tuple[tuple[str, ...], str], Claim] = {}
    for c in all_claims:
        first = seen.setdefault((c.where, c.key), c)
        if first.value != c.value and first.flow != c.flow:
            raise _conflict(first, c)


def _run(argv: list[str], what: str) -> str:
    r = subprocess.run(argv, capture_output=True, text=True)
    if r.returncode != 0:
        why = (r.stderr.strip().splitlines() or [f"exit status {r.returncode}"])[-1]
        raise LiveError(f"{what}: {why}")
    return r.stdout


def _sysctl(tb: Testbed, host: str, args: list[str]) -> str:
    return _run(tb.command(host, ["sysctl", *args]), f"sysctl in namespace {tb.ns[host]}")


def _ip(tb: Testbed, host: str, args: list[str]) -> str:
    return _run(tb.command(host, ["ip", *args]), f"route in namespace {tb.ns[host]}")


@dataclass
class HostSettings:
    """The Linux settings of one testbed's namespaces: the claims of the flows running, the
    values written, and the sysctls read back per host."""

    active: list[Claim] = field(default_factory=list)
    written: dict[tuple[str, ...], dict[str, str]] = field(default_factory=dict)
    sysctls: dict[str, dict[str, str]] = field(default_factory=dict)

    @classmethod
    def of(cls, tb: Testbed) -> HostSettings:
        """The testbed's (made on first use, kept with the testbed)."""
        state = tb.stack_state.get("linux")
        if state is None:
            state = tb.stack_state["linux"] = cls()
        assert isinstance(state, HostSettings)
        return state

    def apply(self, tb: Testbed, mine: list[Claim], default_cc: str | None) -> None:
        """Checks `mine` (one flow's claims) against the running flows' and makes the flow's
        namespaces and routes so; `default_cc` becomes the default congestion control of a
        host where no other flow runs."""
        check_together([*self.active, *mine])
        busy = {c.where[0] for c in self.active if len(c.where) == 1}
        self.active += mine
        hosts = list(dict.fromkeys(c.where[0] for c in mine if len(c.where) == 1))
        for host in hosts:
            done = self.written.setdefault((host,), {})
            want = {c.key: c.value for c in mine if c.where == (host,)}
            if default_cc is not None and host not in busy:
                want[CC] = default_cc
            new = {k: v for k, v in want.items() if v is not None and done.get(k) != v}
            if new:
                _sysctl(tb, host, ["-qw", *(f"{k}={v}" for k, v in new.items())])
                done |= new
            if new or host not in self.sysctls:
                self.sysctls[host] = self._read_sysctls(tb, host)
        for where in dict.fromkeys(c.where for c in mine if len(c.where) == 2):
            host, peer = where
            want_r = {c.key: c.value for c in self.active if c.where == where and c.value}
            had = self.written.get(where)
            if (had or {}) != want_r and (had is not None or want_r):
                self._set_route(tb, host, peer, want_r)
                self.written[where] = want_r

    def release(self, flow: str) -> None:
        """Forgets `flow`'s claims (it ended); what it wrote stays until another flow needs
        something else."""
        self.active = [c for c in self.active if c.flow != flow]

    def _read_sysctls(self, tb: Testbed, host: str) -> dict[str, str]:
        ns = tb.ns[host]
        names = list(dict.fromkeys([*RECORDED, *self.written.get((host,), {})]))
        values: dict[str, str] = {}
        for line in _sysctl(tb, host, names).splitlines():
            k, _, v = line.partition(" = ")
            values[k.strip()] = " ".join(v.split())
        for k, v in self.written.get((host,), {}).items():
            if values.get(k) != " ".join(v.split()):
                raise LiveError(f"sysctl {k} = {v!r} in {ns}: reads back {values.get(k)!r}")
        return values

    @staticmethod
    def _set_route(tb: Testbed, host: str, peer: str, attrs: dict[str, str]) -> None:
        flat = [x for k, v in attrs.items() for x in (k, v)]
        proto = ["proto", "kernel"] if tb.plan is None else []  # one link: the device's own peer route
        _ip(tb, host, ["route", "replace", tb.addr[peer], "dev", TUN, *proto, "scope", "link",
                       "src", tb.addr[host], *flat])

    @staticmethod
    def route(tb: Testbed, host: str, peer: str) -> str:
        """`host`'s route to `peer` as ``ip route`` shows it (its own, else the prefix's)."""
        out = _ip(tb, host, ["route", "show", tb.addr[peer]])
        if not out.strip():  # no route of its own: the prefix's
            out = _ip(tb, host, ["route", "get", tb.addr[peer]])
        return " ".join(out.split())
