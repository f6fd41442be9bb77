"""The live campaign's controller (docs/campaign.md): four daemons on loopback whose probe
runners stand in for transfers (the transfers themselves are tests/test_campaign_testbed.py's);
40 probes of every protocol recorded once each; a host never in more probes at once than its
limit; a wrong key refused; the controller killed with SIGKILL after 15 probes and
restarted: 40 rows, none run twice; a daemon killed mid-probe: that probe retried, or
failed with its reason when the daemon stays down."""

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

from tcplab.campaign.config import CampaignConfig, CampaignError, load_campaign
from tcplab.campaign.controller import DB_FILE, DaemonExecutor, run_live
from tcplab.campaign.daemon import Daemon, DaemonConfig
from tcplab.campaign.live_campaign import LIVE_REPORT_DIR, run_live_campaign
from tcplab.campaign.live_config import path_hosts

KEY = b"0123456789abcdef" * 4
HOSTS = ["h0", "h1", "h2", "h3"]


def _ids(name: str) -> tuple[int, int]:
    """(probe, attempt) of a probe's name ``<campaign>-<probe>-a<attempt>``."""
    _, probe, attempt = name.rsplit("-", 2)
    return int(probe), int(attempt[1:])


class FakeHosts:
    """Four daemons whose runner plays a transfer: the sink answers a port, the source
    sleeps ``transfer_s`` and answers the bytes, the sink's collect answers them again."""

    def __init__(self, tmp: Path, transfer_s: float = 0.02):
        self.key_file = tmp / "key"
        self.key_file.write_bytes(KEY)
        self.key_file.chmod(0o600)
        self.transfer_s = transfer_s
        self.lock = threading.Lock()
        self.runs: Counter[tuple[int, int, str]] = Counter()  # (probe, attempt, role) -> runs
        self.busy: Counter[str] = Counter()
        self.most_busy: Counter[str] = Counter()
        self.daemons: dict[str, Daemon] = {}
        self.ports: dict[str, int] = {}
        self.on_source: Any = None  # (host, job) -> None, called as a source transfer starts
        for h in HOSTS:
            self.start(h)

    def start(self, name: str) -> None:
        cfg = DaemonConfig(name=name, listen="127.0.0.1", port=self.ports.get(name, 1), key_file=self.key_file,
                           peers=[x for x in HOSTS if x != name], plaintext=True, probe_timeout_s=20)
        if name not in self.ports:
            cfg.port = 0
        d = Daemon(cfg, lambda job, stop, name=name: self.runner(name, job, stop)).start()
        self.daemons[name] = d
        self.ports[name] = d.address[1]

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
            if self.on_source is not None:
                self.on_source(host, job)
            stop.wait(self.transfer_s)
            return {**base, "bytes": job["bytes"], "completed": True, "duration_s": self.transfer_s,
                    "throughput_bps": job["bytes"] * 8 / self.transfer_s, "retransmits": 0, "timeouts": 0,
                    "traces": f"{host}/{probe}.parquet"}
        finally:
            with self.lock:
                for h in (job["source"], job["sink"]):
                    self.busy[h] -= 1

    def stop(self) -> None:
        for d in self.daemons.values():
            try:
                d.stop()
            except OSError:
                pass

    def campaign(self, tmp: Path, *, limit: int = 1, compression: float = 3.6e6, retries: int = 1,
                 key_file: Path | None = None) -> Path:
        hosts = "\n".join(
            f'[[live.hosts]]\nname = "{h}"\naddress = "127.0.0.1"\nport = {self.ports[h]}\n' for h in HOSTS
        )
        f = tmp / "live.toml"
        f.write_text(f"""
name = "livetest"
seed = 3
[schedule]
paths = 6
span_h = 200.0
mean_interval_h = 20.0
max_probes = 40
[live]
key_file = "{key_file or self.key_file.name}"
time_compression = {compression}
per_host_limit = {limit}
retries = {retries}
request_timeout_s = 30
{hosts}
""")
        return f


@pytest.fixture
def hosts(tmp_path: Path):
    h = FakeHosts(tmp_path)
    yield h
    h.stop()


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
    # daemons run every probe anew instead of answering from the first campaign's runs
    _, second = run_live_campaign(cfg, tmp_path / "out2", report=False)
    assert (second.ok, second.skipped) == (40, 0)
    assert set(hosts.runs.values()) == {2} and len(hosts.runs) == 40 * 3


def test_two_probes_at_once_per_host_when_the_limit_is_two(tmp_path: Path) -> None:
    h = FakeHosts(tmp_path, transfer_s=0.2)
    try:
        cfg = load_campaign(h.campaign(tmp_path, limit=2))
        run = run_live(cfg, tmp_path / "db.sqlite", DaemonExecutor(cfg.live, KEY))
        assert run.ok == 40
        assert max(h.most_busy.values()) == 2
    finally:
        h.stop()


def test_a_wrong_key_is_refused_and_every_probe_fails_with_the_reason(hosts: FakeHosts, tmp_path: Path) -> None:
    cfg = load_campaign(hosts.campaign(tmp_path, retries=0))
    run = run_live(cfg, tmp_path / "db.sqlite", DaemonExecutor(cfg.live, b"y" * 64))
    assert (run.ok, run.failed) == (0, 40)
    rows = _probes(tmp_path / "db.sqlite")
    assert all(r[1] == "failed" and "bad signature" in r[3] for r in rows)
    assert not hosts.runs  # nothing ran


_DAEMON = """
import sys, threading, time
from pathlib import Path
from tcplab.campaign.daemon import Daemon, DaemonConfig
name, port, key, peers, marks = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4].split(","), Path(sys.argv[5])

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

cfg = DaemonConfig(name=name, listen="127.0.0.1", port=port, key_file=key, peers=peers, plaintext=True)
Daemon(cfg, runner).start()
print("ready", flush=True)
threading.Event().wait()
"""


def test_a_daemon_killed_mid_probe_loses_that_attempt_only(hosts: FakeHosts, tmp_path: Path) -> None:
    # h2 is a daemon process of its own, killed with SIGKILL while it sends its first probe,
    # and started again on its port half a second later
    hosts.daemons["h2"].stop()
    marks = tmp_path / "marks"
    marks.mkdir()
    args = [sys.executable, "-c", _DAEMON, "h2", str(hosts.ports["h2"]), str(hosts.key_file), "h0,h1,h3", str(marks)]

    def start() -> subprocess.Popen[str]:
        p = subprocess.Popen(args, stdout=subprocess.PIPE, text=True)
        assert p.stdout is not None and p.stdout.readline() == "ready\n"
        return p

    daemon = start()
    cfg = load_campaign(hosts.campaign(tmp_path, retries=2))
    result: dict[str, Any] = {}
    t = threading.Thread(target=lambda: result.update(run=run_live(cfg, tmp_path / "db.sqlite",
                                                                   DaemonExecutor(cfg.live, KEY))))
    t.start()
    try:
        deadline = time.monotonic() + 60
        while not [m for m in marks.iterdir() if "-send-" in m.name]:
            assert time.monotonic() < deadline and t.is_alive()
            time.sleep(0.01)
        daemon.send_signal(signal.SIGKILL)
        daemon.wait(10)
        killed = int(next(m for m in marks.iterdir() if "-send-" in m.name).name.split("-")[0])
        time.sleep(0.5)
        daemon = start()
        t.join(120)
    finally:
        daemon.kill()
        daemon.wait(10)
    assert not t.is_alive() and result["run"].ok == 40
    rows = {r[0]: r for r in _probes(tmp_path / "db.sqlite")}
    assert len(rows) == 40 and {r[1] for r in rows.values()} == {"ok"}
    assert rows[killed][2] >= 2, rows[killed]  # the killed attempt was retried
    with sqlite3.connect(tmp_path / "db.sqlite") as c:
        lost = c.execute("SELECT host, outcome FROM runs WHERE probe = ? AND attempt = 1", (killed,)).fetchall()
    assert any(h == "h2" and "h2" in o and o != "ok" for h, o in lost), lost  # with its reason
    # only that probe lost an attempt
    assert [r[0] for r in rows.values() if r[2] > 1] == [killed]


def test_a_daemon_that_stays_down_fails_its_probes_with_the_reason(hosts: FakeHosts, tmp_path: Path) -> None:
    cfg = load_campaign(hosts.campaign(tmp_path, retries=1))
    hosts.daemons["h3"].stop()
    run = run_live(cfg, tmp_path / "db.sqlite", DaemonExecutor(cfg.live, KEY))
    ends = path_hosts(HOSTS, 6)
    rows = _probes(tmp_path / "db.sqlite")
    assert len(rows) == 40 and run.ok + run.failed == 40 and run.failed > 0
    from tcplab.campaign.schedule import schedule
    from tcplab.campaign.population import draw_paths

    for probe, (pid, status, attempts, reason) in zip(schedule(cfg, draw_paths(cfg)), rows):
        if "h3" in ends[probe.path]:
            assert status == "failed" and attempts == 2 and "h3" in reason, (pid, reason)
        else:
            assert status == "ok"


def test_the_controller_killed_after_15_probes_resumes_without_running_any_twice(hosts: FakeHosts, tmp_path: Path) -> None:
    hosts.transfer_s = 0.1
    f = hosts.campaign(tmp_path)
    out = tmp_path / "out"
    cmd = [sys.executable, "-m", "tcplab", "campaign", "--live", str(f), "--out", str(out), "-q", "--no-report"]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    try:
        while len(_probes(out / DB_FILE)) < 15:
            assert proc.poll() is None, proc.stderr.read()
            assert time.monotonic() < deadline
            time.sleep(0.02)
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(30)
    assert 15 <= len(_probes(out / DB_FILE)) < 40
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    rows = _probes(out / DB_FILE)
    assert [x[0] for x in rows] == list(range(40)) and {x[1] for x in rows} == {"ok"}
    # the probe that was running when the controller died was asked again and answered
    # from its first run: no job ran twice
    assert max(hosts.runs.values()) == 1 and len({k[0] for k in hosts.runs}) == 40


def test_live_needs_its_table_and_a_private_key(hosts: FakeHosts, tmp_path: Path) -> None:
    plain = tmp_path / "plain.toml"
    plain.write_text('name = "x"\n')
    r = subprocess.run([sys.executable, "-m", "tcplab", "campaign", "--live", str(plain), "--out", str(tmp_path / "o")],
                       capture_output=True, text=True)
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "no [live] table" in r.stderr
    loose = tmp_path / "loose.key"
    loose.write_bytes(KEY)
    loose.chmod(0o644)
    f = hosts.campaign(tmp_path, key_file=loose)
    r = subprocess.run([sys.executable, "-m", "tcplab", "campaign", "--live", str(f), "--out", str(tmp_path / "o")],
                       capture_output=True, text=True)
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "loose.key" in r.stderr, r.stderr
    with pytest.raises(CampaignError, match=r"live\.per_host_limit: 0 must be >= 1"):
        CampaignConfig.from_dict({"live": {"hosts": [{"name": "a", "address": "127.0.0.1", "port": 1},
                                                     {"name": "b", "address": "127.0.0.1", "port": 2}],
                                           "key_file": "k", "per_host_limit": 0}})
