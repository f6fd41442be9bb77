"""The live campaign's controller (docs/campaign.md "Live mode: the
controller"): ``tcplab campaign --live CAMPAIGN.toml --out DIR``.

It runs the ETH method on real hosts: the same population of paths and the same schedule
as the virtual campaign (:func:`tcplab.campaign.schedule.schedule`: Poisson probe times per
path, the protocol drawn uniformly), with the paths laid on the ``[live]`` hosts
(:func:`tcplab.campaign.live_config.path_hosts`). Each probe, at its time divided by
``time_compression``, runs on its path's two hosts as tasks of the campaign's Dask
scheduler (:func:`tcplab.campaign.cluster.run_probe`: the sink listens, the source sends,
the sink is collected), described by a :class:`~tcplab.campaign.live_probe.ProbeSpec`
(the probe's protocol, bytes, hosts and their transfer addresses) named after the
campaign, the results database's uid, the probe and the attempt. A host takes part in at
most ``per_host_limit`` probes at once. A failed attempt (a phase that fails or times
out, a host whose worker is down or lost) is retried ``retries`` times; then the probe is
recorded ``failed`` with the last reason. Each probe is written once, with its attempts
(``runs``) and its flow, in one transaction of the results database
(:mod:`tcplab.campaign.results_db`): a controller killed and started again asks only for
the probes not recorded.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable, Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tcplab.campaign.config import CampaignConfig
from tcplab.campaign.live_config import LiveHost, LiveSettings, path_hosts
from tcplab.campaign.population import Path as NetPath
from tcplab.campaign.population import draw_paths
from tcplab.campaign.live_probe import (
    LinuxProtocol,
    ProbeOutcome,
    ProbeSpec,
    TcplabProtocol,
    TcplabTcpProtocol,
    transfer_tcp,
)
from tcplab.campaign.schedule import Probe, schedule
from tcplab.live.stacks import TCPLAB_MSS
from tcplab.campaign.results_db import (
    FlowRow,
    ProbeRecord,
    RunRow,
    add_hosts_and_paths,
    campaign_uid,
    ended_probes,
    open_db,
    record_probe,
)

__all__ = ["Attempt", "ClusterExecutor", "Executor", "LiveRun", "attempt_of", "probe_spec", "run_live", "DB_FILE"]

#: The results database's file name in the campaign's output directory.
DB_FILE = "live.sqlite"


@dataclass
class Attempt:
    """The outcome of one attempt: ``reason`` None when it succeeded."""

    runs: list[RunRow]
    reason: str | None = None
    flow: dict[str, Any] = field(default_factory=dict)


#: One attempt of a probe: (spec, attempt number, stop) -> Attempt.
Executor = Callable[[ProbeSpec, int, threading.Event], Attempt]


class ClusterExecutor:
    """Carries out an attempt on the hosts' workers through ``client`` (a client of the
    campaign's scheduler, :func:`tcplab.campaign.cluster.connect`)."""

    def __init__(self, settings: LiveSettings, client: Any):
        self.settings = settings
        self.client = client

    def __call__(self, spec: ProbeSpec, attempt: int, stop: threading.Event) -> Attempt:
        from tcplab.campaign.cluster import run_probe

        return attempt_of(spec, attempt, run_probe(self.client, spec, timeout_s=self.settings.request_timeout_s))

    def close(self) -> None:
        self.client.close()


def attempt_of(spec: ProbeSpec, attempt: int, out: ProbeOutcome) -> Attempt:
    """The attempt's rows (one per host) and flow of a probe's outcome."""
    runs = [RunRow(attempt, host, role, r.reason or r.status if r is not None else (out.reason or "not run"),
                   r.traces if r is not None else None, r.pcap if r is not None else None)
            for host, role, r in ((spec.source, "source", out.source), (spec.sink, "sink", out.sink))]
    if out.status != "ok":
        return Attempt(runs, out.reason or "failed")
    src, snk = out.source, out.sink
    assert src is not None and snk is not None
    flow = {
        "bytes_delivered": snk.bytes, "intact": snk.intact, "bytes_acked": src.bytes,
        "completed": bool(src.completed and snk.intact), "duration_s": src.duration_s,
        "throughput_bps": src.throughput_bps, "retransmits": src.retransmits, "timeouts": src.timeouts,
        "wall_s": out.wall_s,
    }
    return Attempt(runs, None, flow)


@dataclass
class LiveRun:
    """What :func:`run_live` did."""

    paths: list[NetPath]
    probes: list[Probe]
    skipped: int  # recorded by an earlier run
    ok: int = 0
    failed: int = 0
    stopped: bool = False  # interrupted before the schedule's end


class _Slots:
    """At most ``limit`` probes per host at once; a probe takes both its hosts together
    (never one while waiting for the other: no deadlock)."""

    def __init__(self, limit: int):
        self.limit = limit
        self.busy: dict[str, int] = {}
        self.cond = threading.Condition()

    def take(self, hosts: Iterable[str], stop: threading.Event) -> bool:
        hosts = list(hosts)
        with self.cond:
            while any(self.busy.get(h, 0) >= self.limit for h in hosts):
                if stop.is_set():
                    return False
                self.cond.wait(0.2)
            for h in hosts:
                self.busy[h] = self.busy.get(h, 0) + 1
        return True

    def give(self, hosts: Iterable[str]) -> None:
        with self.cond:
            for h in hosts:
                self.busy[h] -= 1
            self.cond.notify_all()


def probe_spec(cfg: CampaignConfig, probe: Probe, hosts: tuple[LiveHost, LiveHost], attempt: int,
               uid: str) -> ProbeSpec:
    """What the hosts are asked for attempt ``attempt`` of ``probe`` from ``hosts[0]`` to
    ``hosts[1]``: named ``<campaign>-<uid>-<probe>-a<attempt>`` (``uid``: the results
    database's, :func:`~tcplab.campaign.results_db.campaign_uid`, so that the same campaign
    run again into another database runs new transfers)."""
    proto = cfg.protocol_table()[probe.protocol]
    protocol: TcplabProtocol | LinuxProtocol
    if proto.stack == "linux":
        protocol = LinuxProtocol(stack="linux", congestion=proto.controller)
    else:
        kind = TcplabTcpProtocol if proto.stack == "tcplab-tcp" else TcplabProtocol
        protocol = kind(controller=proto.controller, recovery=proto.recovery,
                        controller_params=dict(proto.controller_params),
                        recovery_params=dict(proto.recovery_params))
    name = f"{re.sub(r'[^A-Za-z0-9_.-]', '_', cfg.name)[:40]}-{uid}-{probe.id}-a{attempt}"
    return ProbeSpec(
        probe=name, source=hosts[0].name, sink=hosts[1].name,
        source_address=hosts[0].address, sink_address=hosts[1].address,
        protocol=protocol, bytes=cfg.transfer.bytes, time_limit_s=cfg.transfer.time_limit_s,
        mss=min(cfg.transfer.packet_bytes, TCPLAB_MSS), tcp=transfer_tcp(cfg.transfer),
        pcap=cfg.live.pcap if cfg.live is not None else False,
    )


def run_live(
    cfg: CampaignConfig,
    db_path: str | Path,
    executor: Executor,
    *,
    stop: threading.Event | None = None,
    on_probe: Callable[[ProbeRecord], None] | None = None,
    clock: Callable[[], float] = time.monotonic,
    wall: Callable[[], float] = time.time,
) -> LiveRun:
    """Runs the probes of ``cfg``'s schedule not yet in the database at ``db_path``, each
    through ``executor``, at the times of the schedule compressed by
    ``cfg.live.time_compression`` (the first probe left runs at once). ``stop`` (set, e.g.,
    on SIGINT): no further probe starts; those running finish and are recorded."""
    live = cfg.live
    if live is None:
        raise ValueError("live: the campaign file has no [live] table")
    stop = stop or threading.Event()
    paths = draw_paths(cfg)
    probes = schedule(cfg, paths)
    names = [h.name for h in live.hosts]
    ends = path_hosts(names, len(paths))  # ValueError (one line) with more paths than pairs
    db = open_db(db_path)
    try:
        add_hosts_and_paths(
            db,
            [(h.name, h.address) for h in live.hosts],
            [(p.id, *ends[p.id], round(p.rate_mbps * 1e6), round(p.rtt_ms * 1e6),
              max(1, p.buffer_bytes // cfg.transfer.packet_bytes), p.loss) for p in paths],
        )
        done = ended_probes(db)
        uid = campaign_uid(db)
    finally:
        db.close()
    todo = [p for p in probes if p.id not in done]
    out = LiveRun(paths, probes, skipped=len(probes) - len(todo))
    if not todo:
        return out
    slots = _Slots(live.per_host_limit)
    lock = threading.Lock()
    start, first_h = clock(), todo[0].time_h

    def one(probe: Probe) -> None:
        hosts = ends[probe.path]
        try:
            started = wall()
            runs: list[RunRow] = []
            attempt, tried = Attempt([], "not run"), 0
            for n in range(1, live.retries + 2):
                if n > 1 and stop.wait(min(5.0, 0.5 * 2 ** (n - 2))):
                    return  # interrupted between attempts: left for the next start
                try:
                    spec = probe_spec(cfg, probe, (live.host(hosts[0]), live.host(hosts[1])), n, uid)
                    attempt = executor(spec, n, stop)
                except Exception as e:  # an executor's bug fails the attempt, not the campaign
                    attempt = Attempt([], f"controller: {type(e).__name__}: {e}")
                tried = n
                runs += attempt.runs
                if attempt.reason is None:
                    break
            rec = ProbeRecord(
                id=probe.id, path=probe.path, protocol=probe.protocol, scheduled_s=probe.time_h * 3600.0,
                status="ok" if attempt.reason is None else "failed", attempts=tried,
                started_at=started, finished_at=wall(), reason=attempt.reason,
                runs=tuple(runs), flows=(_flow_row(attempt.flow),) if attempt.reason is None else (),
            )
            db = open_db(db_path)
            try:
                record_probe(db, rec)
            finally:
                db.close()
            with lock:
                if rec.status == "ok":
                    out.ok += 1
                else:
                    out.failed += 1
            if on_probe is not None:
                on_probe(rec)
        finally:
            slots.give(hosts)

    futures: list[Future[None]] = []
    with ThreadPoolExecutor(max_workers=len(names) * live.per_host_limit) as pool:
        for probe in todo:
            due = start + (probe.time_h - first_h) * 3600.0 / live.time_compression
            if stop.wait(max(0.0, due - clock())) or not slots.take(ends[probe.path], stop):
                out.stopped = True
                break
            futures.append(pool.submit(one, probe))
        for f in futures:
            f.result()
    return out


def _flow_row(flow: dict[str, Any]) -> FlowRow:
    def num(k: str, kind: type) -> Any:
        v = flow.get(k)
        return kind(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None

    return FlowRow(
        flow=0, name="probe", bytes_delivered=num("bytes_delivered", int),
        throughput_bps=num("throughput_bps", float), retransmits=num("retransmits", int),
        timeouts=num("timeouts", int), metrics=flow,
    )
