"""The live campaign's controller on Dask (docs/campaign.md): a scheduler of its own and four
workers whose probe runners stand in for transfers (the transfers themselves are
tests/test_campaign_testbed.py's); 40 probes of every protocol recorded once each; a host
never in more probes at once than its limit; a second campaign runs fresh transfers; wrong
credentials refused; the controller killed with SIGKILL after 15 probes and restarted: 40
rows, each once; a worker killed mid-probe: that attempt failed with its reason and
retried, or the probes failed with the reason when the host stays down."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

import polars as pl
import pytest

pytest.importorskip("distributed")

from tcplab.campaign.cluster import ProbeHost, connect, hosts_present, start_scheduler, write_temporary_credentials
from tcplab.campaign.config import CampaignConfig, CampaignError, load_campaign
from tcplab.campaign.controller import DB_FILE, ClusterExecutor, run_live
from tcplab.campaign.daemon import DaemonConfig, serve
from tcplab.campaign.live_campaign import LIVE_REPORT_DIR, run_live_campaign
from tcplab.campaign.live_config import path_hosts

HOSTS = ["h0", "h1", "h2", "h3"]


def _ids(name: str) -> tuple[int, int]:
    """(probe, attempt) of a probe's name ``<campaign>-<uid>-<probe>-a<attempt>``."""
    _, probe, attempt = name.rsplit("-", 2)
    return int(probe), int(attempt[1:])


def _wait_for(what: str, cond: Any, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not cond():
        assert time.monotonic() < deadline, f"{what}: not within {timeout:g} s"
        time.sleep(0.02)


class FakeHosts:
    """A scheduler process and four workers in this process whose runner plays a transfer:
    the sink answers a port, the source sleeps ``transfer_s`` and answers the bytes, the
    sink's collect answers them again."""

    def __init__(self, tmp: Path, transfer_s: float = 0.02, tls: tuple[Path, Path, Path] | None = None):
        self.tmp = tmp
        self.tls = tls
        self.proc, self.address = start_scheduler(tmp / "scheduler", tls)
        self.transfer_s = transfer_s
        self.lock = threading.Lock()
        self.runs: Counter[tuple[int, int, str]] = Counter()  # (probe, attempt, phase) -> runs
        self.busy: Counter[str] = Counter()
        self.most_busy: Counter[str] = Counter()
        self.stops: dict[str, threading.Event] = {}
        self.threads: dict[str, threading.Thread] = {}
        for h in HOSTS:
            self.start(h)
        client = connect(self.address, tls or (None, None, None))
        try:
            _wait_for("four workers", lambda: len(hosts_present(client)) == 4)
        finally:
            client.close()

    def config(self, name: str) -> DaemonConfig:
        ca, cert, key = self.tls or (None, None, None)
        return DaemonConfig(name=name, scheduler=self.address, listen="127.0.0.1", tls_ca=ca, tls_cert=cert,
                            tls_key=key, results_dir=self.tmp / name)

    def start(self, name: str) -> None:
        stop = threading.Event()
        plugin = lambda: ProbeHost(name, lambda job, stop: self.runner(name, job, stop), probe_timeout_s=20)  # noqa: E731
        t = threading.Thread(target=serve, args=(self.config(name), plugin, stop), daemon=True)
        t.start()
        self.stops[name], self.threads[name] = stop, t

    def stop_host(self, name: str) -> None:
        self.stops[name].set()
        self.threads[name].join(30)

    def runner(self, host: str, job: dict[str, Any], stop: threading.Event) -> dict[str, Any]:
        # the probe runner's three phases (tcplab.campaign.live_probe), played
        probe, attempt = _ids(job["probe"])
        role = "source" if job["phase"] == "send" else "sink"
        with self.lock:
            self.runs[(probe, attempt, job["phase"])] += 1
        base = {"probe": job["probe"], "phase": job["phase"], "role": role, "host": host}
        if job["phase"] == "listen":
            return {**base, "port": 5001}
        if job["phase"] == "collect":
            return {**base, "bytes": job["bytes"], "intact": True}
        with self.lock:
            for h in (job["source"], job["sink"]):
                self.busy[h] += 1
                self.most_busy[h] = max(self.most_busy[h], self.busy[h])
        try:
            stop.wait(self.transfer_s)
            return {**base, "bytes": job["bytes"], "completed": True, "duration_s": self.transfer_s,
                    "throughput_bps": job["bytes"] * 8 / self.transfer_s, "retransmits": 0, "timeouts": 0,
                    "traces": f"{host}/{probe}.parquet"}
        finally:
            with self.lock:
                for h in (job["source"], job["sink"]):
                    self.busy[h] -= 1

    def close(self) -> None:
        for name in list(self.stops):
            self.stops[name].set()
        for t in self.threads.values():
            t.join(30)
        self.proc.terminate()
        self.proc.wait(10)

    def campaign(self, tmp: Path, *, limit: int = 1, compression: float = 3.6e6, retries: int = 1,
                 tls: tuple[Path, Path, Path] | None = None, name: str = "live.toml") -> Path:
        hosts = "\n".join(f'[[live.hosts]]\nname = "{h}"\naddress = "10.0.0.{i + 1}"\n' for i, h in enumerate(HOSTS))
        tls = tls or self.tls
        creds = "" if tls is None else "".join(f'{k} = "{v}"\n' for k, v in zip(("tls_ca", "tls_cert", "tls_key"), tls))
        f = tmp / name
        f.write_text(f"""
name = "livetest"
seed = 3
[schedule]
paths = 6
span_h = 200.0
mean_interval_h = 20.0
max_probes = 40
[live]
scheduler = "{self.address}"
{creds}time_compression = {compression}
per_host_limit = {limit}
retries = {retries}
request_timeout_s = 30
connect_timeout_s = 5
{hosts}
""")
        return f


@pytest.fixture
def hosts(tmp_path: Path):
    h = FakeHosts(tmp_path)
    yield h
    h.close()


def _probes(db: Path) -> list[tuple[int, str, int, str | None]]:
    if not db.exists():
        return []
    with sqlite3.connect(db) as c:
        try:
            return list(c.execute("SELECT id, status, attempts, reason FROM probes ORDER BY id"))
        except sqlite3.OperationalError:  # the controller is creating the database
            return []


def test_paths_lie_on_the_pairs_of_hosts_in_order() -> None:
    assert path_hosts(["a", "b", "c"], 3) == [("a", "b"), ("a", "c"), ("b", "c")]
    assert path_hosts(["a", "b", "c"], 2) == [("a", "b"), ("a", "c")]
    with pytest.raises(ValueError, match=r"schedule.paths = 4: 3 hosts have 3 pairs, one path each"):
        path_hosts(["a", "b", "c"], 4)


def test_forty_probes_of_every_protocol_are_recorded_once_within_the_host_limit(hosts: FakeHosts, tmp_path: Path) -> None:
    cfg = load_campaign(hosts.campaign(tmp_path, limit=1))
    result, run = run_live_campaign(cfg, tmp_path / "out")
    assert (run.ok, run.failed, run.skipped, run.stopped) == (40, 0, 0, False)
    rows = _probes(tmp_path / "out" / DB_FILE)
    assert [r[0] for r in rows] == list(range(40)) and {r[1] for r in rows} == {"ok"}
    assert set(result.probes["protocol"]) == set(cfg.schedule.protocols)  # every protocol of the file
    assert max(hosts.runs.values()) == 1 and len(hosts.runs) == 40 * 3  # each phase ran once
    assert max(hosts.most_busy.values()) == 1  # per_host_limit = 1
    # the table is the virtual campaign's, with what the endpoints measured
    df = pl.read_parquet(tmp_path / "out" / LIVE_REPORT_DIR / "probes.parquet")
    assert df.height == 40 and df["completed"].all()
    assert (df["bytes_delivered"] == cfg.transfer.bytes).all()
    assert df["loss_events_any"].is_null().all()  # the ground truth only the simulator has
    assert (tmp_path / "out" / LIVE_REPORT_DIR / "report.html").is_file()
    # a second start runs nothing and writes the same table; with --compare, the same
    # probes simulated beside it
    _, again = run_live_campaign(cfg, tmp_path / "out", report=False, compare=True, jobs=1)
    assert (again.ok, again.skipped) == (0, 40)
    cmp = json.loads((tmp_path / "out" / "comparison.json").read_text())["protocols"]
    assert {r["protocol"] for r in cmp} == set(cfg.schedule.protocols)
    virtual = pl.read_parquet(tmp_path / "out" / "virtual" / "probes.parquet")
    assert virtual["probe"].to_list() == df["probe"].to_list()  # the same probes
    for r in cmp:  # the fake transfers' rate against the simulated paths'
        assert r["live_probes"] == r["sim_probes"] > 0 and r["median_ratio"] == pytest.approx(
            r["live_median_mbps"] / r["sim_median_mbps"])
    # the same campaign into another --out (another results database, another uid): the
    # hosts run every probe anew, never answered from the first campaign's runs
    _, second = run_live_campaign(cfg, tmp_path / "out2", report=False)
    assert (second.ok, second.skipped) == (40, 0)
    assert set(hosts.runs.values()) == {2} and len(hosts.runs) == 40 * 3


def test_two_probes_at_once_per_host_when_the_limit_is_two(tmp_path: Path) -> None:
    h = FakeHosts(tmp_path, transfer_s=0.2)
    try:
        cfg = load_campaign(h.campaign(tmp_path, limit=2))
        assert cfg.live is not None
        client = connect(cfg.live.scheduler, cfg.live.tls)
        try:
            run = run_live(cfg, tmp_path / "db.sqlite", ClusterExecutor(cfg.live, client))
        finally:
            client.close()
        assert run.ok == 40
        assert max(h.most_busy.values()) == 2
    finally:
        h.close()


def test_the_campaign_scheduler_leaves_dasks_usual_http_port_alone(tmp_path: Path) -> None:
    """No dashboard, and its HTTP server (health, metrics) on a free port: not 8787, which a
    user's own Dask dashboard or a second testbed may want."""
    proc, _ = start_scheduler(tmp_path / "s", None)
    try:
        services = json.loads((tmp_path / "s" / "scheduler.json").read_text())["services"]
        assert all(port != 8787 for port in services.values()), services
        assert "already in use" not in (tmp_path / "s" / "scheduler.log").read_text()
    finally:
        proc.terminate()
        proc.wait(30)


def test_wrong_credentials_are_refused_by_the_scheduler(tmp_path: Path) -> None:
    pytest.importorskip("cryptography")
    good = write_temporary_credentials(tmp_path / "good")
    bad = write_temporary_credentials(tmp_path / "bad")
    h = FakeHosts(tmp_path, tls=good)
    try:
        # the controller with another authority's certificate: one line, nothing recorded
        f = h.campaign(tmp_path, tls=bad, name="bad.toml")
        out = tmp_path / "out"
        r = subprocess.run([sys.executable, "-m", "tcplab", "campaign", "--live", str(f), "--out", str(out), "-q"],
                           capture_output=True, text=True, timeout=120)
        assert r.returncode == 2 and r.stderr.count("\n") == 1, r.stderr
        assert "cannot connect" in r.stderr and h.address in r.stderr, r.stderr
        assert not _probes(out / DB_FILE) and not h.runs
        # a worker with it never joins; the good controller runs the campaign
        stop = threading.Event()
        cfg = DaemonConfig(name="h9", scheduler=h.address, listen="127.0.0.1", tls_ca=bad[0], tls_cert=bad[1],
                           tls_key=bad[2], results_dir=tmp_path / "h9")
        t = threading.Thread(target=serve, args=(cfg, lambda: ProbeHost("h9", None), stop, lambda a: stop.set()),
                             daemon=True)
        t.start()
        time.sleep(2)
        joined = stop.is_set()
        stop.set()
        t.join(30)
        assert not joined
        good_cfg = load_campaign(h.campaign(tmp_path, name="good.toml"))
        _, run = run_live_campaign(good_cfg, tmp_path / "good-out", report=False)
        assert run.ok == 40
    finally:
        h.close()


_DAEMON = """
import sys, threading, time
from pathlib import Path
from tcplab.campaign.cluster import ProbeHost
from tcplab.campaign.daemon import DaemonConfig, serve
name, scheduler, marks = sys.argv[1], sys.argv[2], Path(sys.argv[3])

def runner(job, stop):
    _, probe, attempt = job["probe"].rsplit("-", 2)
    (marks / f"{probe}-{attempt}-{job['phase']}-{time.monotonic_ns()}").touch()
    base = {"probe": job["probe"], "phase": job["phase"], "host": name,
            "role": "source" if job["phase"] == "send" else "sink"}
    if job["phase"] == "listen":
        return {**base, "port": 5001}
    if job["phase"] == "collect":
        return {**base, "bytes": job["bytes"], "intact": True}
    stop.wait(0.3)
    return {**base, "bytes": job["bytes"], "completed": True}

cfg = DaemonConfig(name=name, scheduler=scheduler, listen="127.0.0.1", results_dir=marks)
serve(cfg, lambda: ProbeHost(name, runner), threading.Event(), lambda a: print("ready", flush=True))
"""


def test_a_worker_killed_mid_probe_loses_that_attempt_only(hosts: FakeHosts, tmp_path: Path) -> None:
    # h2 is a worker process of its own, killed with SIGKILL while it sends its first probe,
    # and started again half a second later
    hosts.stop_host("h2")
    marks = tmp_path / "marks"
    marks.mkdir()
    args = [sys.executable, "-c", _DAEMON, "h2", hosts.address, str(marks)]

    def start() -> subprocess.Popen[str]:
        p = subprocess.Popen(args, stdout=subprocess.PIPE, text=True)
        assert p.stdout is not None and p.stdout.readline() == "ready\n"
        return p

    daemon = start()
    cfg = load_campaign(hosts.campaign(tmp_path, retries=4))
    assert cfg.live is not None
    client = connect(cfg.live.scheduler, cfg.live.tls)
    result: dict[str, Any] = {}
    t = threading.Thread(target=lambda: result.update(run=run_live(cfg, tmp_path / "db.sqlite",
                                                                   ClusterExecutor(cfg.live, client))))
    t.start()
    try:
        _wait_for("h2 sends", lambda: [m for m in marks.iterdir() if "-send-" in m.name] or not t.is_alive())
        daemon.send_signal(signal.SIGKILL)
        daemon.wait(10)
        killed = int(next(m for m in marks.iterdir() if "-send-" in m.name).name.split("-")[0])
        time.sleep(0.5)
        daemon = start()
        t.join(180)
    finally:
        daemon.kill()
        daemon.wait(10)
        client.close()
    assert not t.is_alive() and result["run"].ok == 40
    rows = {r[0]: r for r in _probes(tmp_path / "db.sqlite")}
    assert len(rows) == 40 and {r[1] for r in rows.values()} == {"ok"}
    assert rows[killed][2] >= 2, rows[killed]  # the killed attempt was retried
    with sqlite3.connect(tmp_path / "db.sqlite") as c:
        lost = c.execute("SELECT host, outcome FROM runs WHERE probe = ? AND attempt = 1", (killed,)).fetchall()
    assert any(h == "h2" and "h2" in o and o != "ok" for h, o in lost), lost  # with its reason
    # only probes of h2 lost attempts: the killed one, and those asked while it restarted
    ends = dict(enumerate(path_hosts(HOSTS, 6)))
    from tcplab.campaign.population import draw_paths
    from tcplab.campaign.schedule import schedule

    path_of = {p.id: p.path for p in schedule(cfg, draw_paths(cfg))}
    assert all("h2" in ends[path_of[pid]] for pid, r in rows.items() if r[2] > 1)


def test_a_host_that_stays_down_fails_its_probes_with_the_reason(hosts: FakeHosts, tmp_path: Path) -> None:
    cfg = load_campaign(hosts.campaign(tmp_path, retries=1))
    hosts.stop_host("h3")
    _, run = run_live_campaign(cfg, tmp_path / "out", report=False)
    ends = path_hosts(HOSTS, 6)
    rows = _probes(tmp_path / "out" / DB_FILE)
    assert len(rows) == 40 and run.ok + run.failed == 40 and run.failed > 0
    from tcplab.campaign.population import draw_paths
    from tcplab.campaign.schedule import schedule

    for probe, (pid, status, attempts, reason) in zip(schedule(cfg, draw_paths(cfg)), rows):
        if "h3" in ends[probe.path]:
            assert status == "failed" and attempts == 2 and "h3" in reason and "not connected" in reason, (pid, reason)
        else:
            assert status == "ok"


def test_the_controller_killed_after_15_probes_resumes_and_records_each_probe_once(hosts: FakeHosts,
                                                                                  tmp_path: Path) -> None:
    hosts.transfer_s = 0.1
    f = hosts.campaign(tmp_path)
    out = tmp_path / "out"
    cmd = [sys.executable, "-m", "tcplab", "campaign", "--live", str(f), "--out", str(out), "-q", "--no-report"]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        _wait_for("15 probes", lambda: len(_probes(out / DB_FILE)) >= 15 or proc.poll() is not None, 120)
        assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(30)
    before = {r[0] for r in _probes(out / DB_FILE)}
    assert 15 <= len(before) < 40
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    rows = _probes(out / DB_FILE)
    assert [x[0] for x in rows] == list(range(40)) and {x[1] for x in rows} == {"ok"}
    # a probe recorded before the kill never ran again; one running at the kill (at most
    # two: two disjoint pairs of hosts) ran again unless its run was still going on
    sends = Counter(probe for (probe, _, phase), n in hosts.runs.items() for _ in range(n) if phase == "send")
    assert all(sends[p] == 1 for p in before)
    again = [p for p, n in sends.items() if n > 1]
    assert len(again) <= 2 and not set(again) & before, again


def test_live_needs_its_table_and_a_reachable_scheduler(tmp_path: Path) -> None:
    plain = tmp_path / "plain.toml"
    plain.write_text('name = "x"\n')
    r = subprocess.run([sys.executable, "-m", "tcplab", "campaign", "--live", str(plain), "--out", str(tmp_path / "o")],
                       capture_output=True, text=True)
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "no [live] table" in r.stderr
    hosts = [{"name": "a", "address": "10.0.0.1"}, {"name": "b", "address": "10.0.0.2"}]
    with pytest.raises(CampaignError, match=r"live\.per_host_limit: 0 must be >= 1"):
        CampaignConfig.from_dict({"live": {"hosts": hosts, "scheduler": "tcp://127.0.0.1:1", "per_host_limit": 0}})
    with pytest.raises(CampaignError, match=r"live\.scheduler: 'tcp://192\.0\.2\.1:8786' plaintext \(tcp://\) only "
                                            r"on a loopback address"):
        CampaignConfig.from_dict({"live": {"hosts": hosts, "scheduler": "tcp://192.0.2.1:8786"}})
    with pytest.raises(CampaignError, match=r"live\.tls_ca: required with a tls:// scheduler"):
        CampaignConfig.from_dict({"live": {"hosts": hosts, "scheduler": "tls://192.0.2.1:8786"}})
    # nobody listens: one line naming the scheduler, exit 2
    f = tmp_path / "nobody.toml"
    f.write_text('name = "x"\n[live]\nscheduler = "tcp://127.0.0.1:9"\nconnect_timeout_s = 2\n'
                 + "".join(f'[[live.hosts]]\nname = "{h["name"]}"\naddress = "{h["address"]}"\n' for h in hosts))
    r = subprocess.run([sys.executable, "-m", "tcplab", "campaign", "--live", str(f), "--out", str(tmp_path / "o2")],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "tcp://127.0.0.1:9" in r.stderr, r.stderr
