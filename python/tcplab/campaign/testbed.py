"""A local testbed for the live campaign (docs/campaign.md "Live mode: the
local testbed"): N hosts as network namespaces, an emulated path between every pair drawn
from a campaign file's path population, and a probe daemon in each host.

``with Testbed(4, "campaigns/eth-default.toml", seed=1) as tb:`` gives ``tb.hosts`` (by
name ``h0`` … ``h{N-1}``: data-plane address, namespace, results directory),
``tb.scheduler`` and ``tb.tls`` (what a controller connects with: ``tb.client()``) and
``tb.paths`` (the drawn path of each pair); leaving the block, normally, on an exception,
Ctrl-C or SIGTERM, stops the daemons and the scheduler and removes every namespace, device
and process it made.

How it is built:

- **Hosts and paths**: one emulator (``tcplab-emu``, crates/tcplab-live) for the whole mesh:
  the hosts are the nodes of an explicit topology with one link per pair (N·(N−1)/2 links;
  routing by fewest hops takes the direct link), built by :class:`tcplab.live.Testbed`
  (``Testbed.for_scenario``: namespaces ``tcplab-<pid>-<hex>-h<k>``, a TUN device each,
  addresses 10.214.0.k+1). Pair k (in the order (h0, h1), (h0, h2), …, (h1, h2), …) gets
  path k of the population drawn with the campaign's distributions and this seed
  (:func:`tcplab.campaign.population.draw_paths` with ``schedule.paths`` = the number of
  pairs): both directions at the path's rate, with half its propagation RTT as one-way
  delay and its drop-tail buffer; random loss ``loss`` on the direction from the lower to
  the higher host (the link's forward) and ``ack_loss`` on the other.
- **Cross traffic**, forward on each path for the testbed's whole life (the means at load
  factor 1; the diurnal load factor is not emulated):

  - ``cross_udp=True``: where ``udp_load`` is above zero, a UDP constant-bit-rate source
    (tcplab's, ``tcplab-flow udp-send``) sending ``udp_load`` × rate;
  - ``cross_tcp=K`` (default 0): min(K, round(``tcp_flows``)) long-lived TCP flows of
    tcplab's transport (``tcplab-flow send``, the campaign's ``cross.controller`` and
    ``cross.recovery``, ``cross.packet_bytes`` up to 1448, ``cross.rcv_buf_bytes``).

  Their endpoints' per-packet facts go to /dev/null (a testbed may run for hours).
- **Scheduler and daemons**: a Dask scheduler on this machine's loopback (TLS with mutual
  authentication: the testbed writes a new authority and certificate, ``tls/``, key
  owner-only) and ``tcplab daemon --config hK/daemon.toml --netns NS`` per host: a worker
  named after the host whose connections stay on this namespace's loopback while its
  probes run in the host's namespace. The scheduler, the daemons and what they start die
  with the testbed's process.
"""

from __future__ import annotations

import json
import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path as FsPath
from typing import Any

from tcplab.campaign.config import CampaignConfig, load_campaign
from tcplab.campaign.live_config import path_hosts
from tcplab.campaign.population import Path, draw_paths
from tcplab.live.stacks import TCPLAB_MSS
from tcplab.live.errors import LiveError

__all__ = ["MAX_HOSTS", "Testbed", "TestbedHost", "TestbedPath", "testbed_scenario"]

MAX_HOSTS = 16
#: How long the scheduler and a daemon may take to start.
DAEMON_START_S = 60.0
#: Probe phases each testbed host runs at once (its daemon's slots).
SLOTS = 4


@dataclass(frozen=True)
class TestbedHost:
    __test__ = False
    name: str
    #: its address on the emulated network (10.214.0.k+1)
    address: str
    namespace: str
    results_dir: FsPath


@dataclass(frozen=True)
class TestbedPath:
    __test__ = False
    #: the link's ends: forward (``loss``) carries a -> b, reverse (``ack_loss``) b -> a
    a: str
    b: str
    path: Path
    #: UDP cross traffic a -> b (bit/s; 0: none)
    udp_bps: float
    #: long-lived TCP cross flows a -> b
    tcp_cross: int = 0

    def row(self) -> dict[str, Any]:
        return {"a": self.a, "b": self.b, "udp_bps": self.udp_bps, "tcp_cross": self.tcp_cross,
                **self.path.row()}


def _ns(seconds: float) -> str:
    return f"{round(seconds * 1e9)}ns"


def _direction(p: Path, rate: int, loss: float) -> dict[str, Any]:
    """One direction of path `p`'s link: its rate, half its RTT, its buffer, `loss`."""
    d: dict[str, Any] = {"rate": rate, "delay": _ns(p.rtt_ms / 2e3), "buffer": {"bytes": p.buffer_bytes}}
    if loss > 0:
        d["loss"] = loss
    return d


def _population(population: CampaignConfig | str | FsPath) -> CampaignConfig:
    return population if isinstance(population, CampaignConfig) else load_campaign(population)


def testbed_scenario(n: int, population: CampaignConfig | str | FsPath, seed: int = 1,
                     cross_udp: bool = True, duration_s: float = 86_400.0,
                     cross_tcp: int = 0) -> tuple[dict[str, Any], list[TestbedPath]]:
    """The emulator's scenario of an `n`-host testbed (module docstring) and its paths."""
    if not 2 <= n <= MAX_HOSTS:
        raise LiveError(f"hosts = {n}: a testbed has 2 to {MAX_HOSTS} hosts")
    cfg = _population(population)
    hosts = [f"h{k}" for k in range(n)]
    pairs = path_hosts(hosts, n * (n - 1) // 2)  # the controller lays paths on hosts the same way
    data = cfg.model_dump()
    data["seed"] = seed
    data["schedule"]["paths"] = len(pairs)
    drawn = draw_paths(CampaignConfig.from_dict(data))
    if cross_tcp < 0:
        raise LiveError(f"cross_tcp = {cross_tcp}: a number of flows per path, >= 0")
    links: list[dict[str, Any]] = []
    udp: list[dict[str, Any]] = []
    tcp: list[dict[str, Any]] = []
    tcp_settings = {"profile": "rfc", "mss": min(cfg.cross.packet_bytes, TCPLAB_MSS), "rcv_buf": cfg.cross.rcv_buf_bytes}
    paths = []
    for (a, b), p in zip(pairs, drawn, strict=True):
        rate = max(1, round(p.rate_mbps * 1e6))
        links.append({"from": a, "to": b, "forward": _direction(p, rate, p.loss),
                      "reverse": _direction(p, rate, p.ack_loss)})
        udp_bps = float(round(p.udp_load * rate)) if cross_udp and p.udp_load > 0 else 0.0
        if udp_bps:
            udp.append({"name": f"cross-{a}-{b}", "src": a, "dst": b, "rate": int(udp_bps),
                        "packet_size": cfg.cross.udp_packet_bytes, "start": 0})
        n_tcp = min(cross_tcp, round(p.tcp_flows))
        tcp += [{"name": f"cross-{a}-{b}-{m}", "src": a, "dst": b, "controller": cfg.cross.controller,
                 "recovery": cfg.cross.recovery, "tcp": tcp_settings} for m in range(n_tcp)]
        paths.append(TestbedPath(a, b, p, udp_bps, n_tcp))
    scenario = {
        "name": f"testbed-{cfg.name}", "seed": seed, "duration": _ns(duration_s),
        "nodes": [{"name": h, "kind": "host"} for h in hosts], "links": links, "udp": udp,
        # A scenario needs a flow: without cross traffic, one that nothing runs (its MSS one
        # the live devices carry, as the plan checks every flow's).
        "flows": tcp or ([] if udp else [{"name": "unused", "src": hosts[0], "dst": hosts[1],
                                          "controller": "reno", "recovery": "newreno", "bytes": 1,
                                          "tcp": {"profile": "rfc", "mss": TCPLAB_MSS}}]),
        "trace": {"series": "off", "events": False, "segments": False, "drops": True},
    }
    from tcplab.scenario import ScenarioError, as_scenario

    try:
        as_scenario(scenario)
    except ScenarioError as e:
        raise LiveError(f"the testbed's scenario of this population: {e}") from None
    return scenario, paths


class Testbed:
    """An `n`-host testbed on `population` (a CampaignConfig or a campaign file) with paths
    drawn from `seed` (module docstring). Outputs go to `out_dir` (default: a temporary
    directory, removed afterwards). `probe_timeout_s`: the daemons'."""

    __test__ = False

    def __init__(self, n: int, population: CampaignConfig | str | FsPath, seed: int = 1, *,
                 out_dir: str | FsPath | None = None, cross_udp: bool = True,
                 probe_timeout_s: float = 300.0, duration_s: float = 86_400.0, cross_tcp: int = 0) -> None:
        self.scenario, self.paths = testbed_scenario(n, population, seed, cross_udp, duration_s, cross_tcp)
        self.n, self.seed = n, seed
        self.probe_timeout_s = probe_timeout_s
        self._own_dir = out_dir is None
        # Absolute: the daemons run in their hosts' directories, and read the TLS files from there.
        self.out_dir = FsPath(out_dir).resolve() if out_dir is not None else None
        self.hosts: dict[str, TestbedHost] = {}
        self.scheduler = ""
        self.tls: tuple[FsPath, FsPath, FsPath] | None = None
        self.scheduler_proc: subprocess.Popen[str] | None = None
        self.daemons: dict[str, subprocess.Popen[str]] = {}
        self.net: Any = None  # the tcplab.live.Testbed
        self.cross_flows: list[Any] = []

    def path(self, a: str, b: str) -> TestbedPath:
        """The path between hosts `a` and `b` (either order)."""
        for p in self.paths:
            if {p.a, p.b} == {a, b}:
                return p
        raise KeyError(f"no path between {a!r} and {b!r}")

    def __enter__(self) -> Testbed:
        from tcplab.live.netns import Testbed as NetTestbed
        from tcplab.live.netns import live_support

        if os.geteuid() != 0:
            raise LiveError("tcplab testbed needs root (ip netns, setns)")
        if reason := live_support(userns=False):
            raise LiveError(reason)
        if self.out_dir is None:
            self.out_dir = FsPath(tempfile.mkdtemp(prefix="tcplab-testbed-"))
        elif self.out_dir.exists() and any(self.out_dir.iterdir()):
            raise LiveError(f"out_dir = {str(self.out_dir)!r}: not empty (a testbed writes new credentials and results)")
        self.out_dir.mkdir(parents=True, exist_ok=True)
        self.net = NetTestbed.for_scenario(self.scenario, self.out_dir / "emulator", userns=False)
        self.net.__enter__()
        try:
            self._start()
        except BaseException:
            self._teardown()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self._teardown()

    def _start(self) -> None:
        from tcplab.campaign.cluster import write_temporary_credentials

        assert self.out_dir is not None
        net = self.net
        self._start_cross()
        self.tls = write_temporary_credentials(self.out_dir / "tls")
        self._start_scheduler()
        names = list(net.ns)
        for name in names:
            self._start_daemon(name)
        for name in names:
            self._wait_daemon(name, self.daemons[name])
            self.hosts[name] = TestbedHost(name, net.addr[name], net.ns[name], self.out_dir / name / "results")

    def client(self) -> Any:
        """A client of the testbed's scheduler (the controller's side); close it after use."""
        from tcplab.campaign.cluster import connect

        return connect(self.scheduler, self.tls or (None, None, None))

    def _start_cross(self) -> None:
        """Starts the scenario's cross traffic (its UDP flows, then its TCP flows but the
        placeholder), each end's facts going to /dev/null."""
        from tcplab.live.transport import start_flow
        from tcplab.live.udp import start_udp_flow

        assert self.out_dir is not None
        net = self.net
        origin = time.monotonic_ns() + 300_000_000
        for kind, flows in (("udp", net.scenario.get("udp") or []), ("tcp", net.scenario["flows"])):
            for i, f in enumerate(flows):
                if not str(f.get("name", "")).startswith("cross-"):
                    continue
                out = self.out_dir / "cross" / f"{kind}{i}"
                for role in ("sender", "receiver"):
                    (out / role).mkdir(parents=True, exist_ok=True)
                    (out / role / "facts.jsonl").symlink_to(os.devnull)
                if kind == "udp":
                    self.cross_flows.append(start_udp_flow(net, net.scenario, i, origin, out))
                else:
                    self.cross_flows.append(start_flow(net, net.scenario, i, origin, out, sample_ns=10**10))

    def _start_scheduler(self) -> None:
        from tcplab.campaign.cluster import start_scheduler

        assert self.out_dir is not None
        self.scheduler_proc, self.scheduler = start_scheduler(self.out_dir / "scheduler", self.tls,
                                                              timeout_s=DAEMON_START_S)

    def _start_daemon(self, name: str) -> None:
        assert self.out_dir is not None and self.tls is not None
        from tcplab.live.processes import owned_env

        d = self.out_dir / name
        d.mkdir(exist_ok=True)
        ca, cert, key = self.tls
        lines = [f"name = {json.dumps(name)}", f"scheduler = {json.dumps(self.scheduler)}", 'listen = "127.0.0.1"',
                 f"tls_ca = {json.dumps(str(ca))}", f"tls_cert = {json.dumps(str(cert))}",
                 f"tls_key = {json.dumps(str(key))}", f"slots = {SLOTS}", f"probe_timeout_s = {self.probe_timeout_s}",
                 f"results_dir = {json.dumps(str(d / 'results'))}"]
        (d / "daemon.toml").write_text("\n".join(lines) + "\n")
        log = open(d / "daemon.log", "w")  # noqa: SIM115 (the daemon writes it)
        try:
            self.daemons[name] = subprocess.Popen(
                [sys.executable, "-m", "tcplab", "daemon", "--config", str(d / "daemon.toml"),
                 "--netns", self.net.ns[name], "--verbose"],
                stdout=subprocess.PIPE, stderr=log, text=True, env=owned_env())
        finally:
            log.close()

    def _wait_daemon(self, name: str, proc: subprocess.Popen[str]) -> None:
        assert proc.stdout is not None and self.out_dir is not None
        ready, _, _ = select.select([proc.stdout], [], [], DAEMON_START_S)
        line = proc.stdout.readline() if ready else ""
        if "joined" not in line:
            proc.kill()
            proc.wait()
            err = (self.out_dir / name / "daemon.log").read_text().strip().splitlines()
            raise LiveError(f"daemon of {name}: " + (err[-1] if err else "did not start"))

    def _teardown(self) -> None:
        for proc in self.daemons.values():
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
        for proc in self.daemons.values():
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
            if proc.stdout is not None:
                proc.stdout.close()
        self.daemons = {}
        if self.scheduler_proc is not None:
            self.scheduler_proc.terminate()
            try:
                self.scheduler_proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.scheduler_proc.kill()
                self.scheduler_proc.wait()
            self.scheduler_proc = None
        if self.net is not None:
            self.net.__exit__(None, None, None)  # kills the cross traffic, the emulator, the namespaces
            self.net = None
        if self._own_dir and self.out_dir is not None:
            shutil.rmtree(self.out_dir, ignore_errors=True)

    def describe(self) -> dict[str, Any]:
        """What a controller needs (``testbed.json``): the scheduler and the TLS files, the
        hosts with their data-plane addresses, the paths."""
        ca, cert, key = self.tls or (None, None, None)
        return {
            "scheduler": self.scheduler,
            "tls": {"ca": str(ca), "cert": str(cert), "key": str(key)},
            "hosts": [{"name": h.name, "address": h.address, "namespace": h.namespace,
                       "results_dir": str(h.results_dir)} for h in self.hosts.values()],
            "seed": self.seed,
            "paths": [p.row() for p in self.paths],
        }
