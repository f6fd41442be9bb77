"""tcplab.campaign.results_db: the live campaign's SQLite database (docs/campaign.md "Live
mode: the results database", and faults): WAL mode; every probe recorded exactly once with
its runs and flows, all or nothing; a writer killed with SIGKILL in the middle of a
campaign and restarted ends with every probe once."""

from __future__ import annotations

import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tcplab.campaign.results_db import FlowRow, ProbeRecord, RunRow, ended_probes, open_db, record_probe
from tcplab.campaign.results_db import add_hosts_and_paths

HOSTS = [("h0", "10.214.0.1"), ("h1", "10.214.0.2")]
PATHS = [(0, "h0", "h1", 10_000_000, 40_000_000, 50, 1e-3)]


def probe(k: int, flows: int = 3) -> ProbeRecord:
    return ProbeRecord(
        id=k, path=0, protocol="reno", scheduled_s=10.0 * k, status="ok", attempts=1,
        started_at=1.0 * k, finished_at=1.0 * k + 0.5,
        runs=(RunRow(1, "h0", "source", "ok", f"traces/{k}-src.parquet"), RunRow(1, "h1", "sink", "ok")),
        flows=tuple(FlowRow(f, f"flow{f}", 1000 * f, 1e6, f, 0, {"rtt_ms": 40.0 + f}) for f in range(flows)))


def counts(db: sqlite3.Connection) -> tuple[int, int, int]:
    return tuple(db.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0] for t in ("probes", "runs", "flows"))


def test_wal_mode_and_every_probe_once(tmp_path: Path) -> None:
    db = open_db(tmp_path / "c.sqlite")
    assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    add_hosts_and_paths(db, HOSTS, PATHS)
    add_hosts_and_paths(db, HOSTS, PATHS)  # a resumed campaign adds nothing
    assert db.execute("SELECT COUNT(*) FROM paths").fetchone()[0] == 1
    assert record_probe(db, probe(0)) is True
    assert record_probe(db, probe(0)) is False
    assert counts(db) == (1, 2, 3)
    failed = ProbeRecord(id=1, path=0, protocol="vegas", scheduled_s=5.0, status="failed", attempts=2,
                         reason="daemon h1 died during the probe (2 attempts)")
    assert record_probe(db, failed)
    assert ended_probes(db) == {0, 1}
    row = db.execute("SELECT status, reason, attempts FROM probes WHERE id = 1").fetchone()
    assert row == ("failed", "daemon h1 died during the probe (2 attempts)", 2)


def test_a_probe_is_written_all_or_nothing(tmp_path: Path) -> None:
    db = open_db(tmp_path / "c.sqlite")
    add_hosts_and_paths(db, HOSTS, PATHS)
    bad = ProbeRecord(id=3, path=0, protocol="reno", scheduled_s=0.0, status="ok", attempts=1,
                      runs=(RunRow(1, "h0", "source", "ok"), RunRow(1, "h0", "source", "ok")))
    with pytest.raises(sqlite3.IntegrityError):
        record_probe(db, bad)
    assert counts(db) == (0, 0, 0)
    assert record_probe(db, probe(3))  # the connection is usable afterwards


WRITER = """
import sys, time
from tcplab.campaign.results_db import open_db, record_probe, ended_probes, add_hosts_and_paths
sys.path.insert(0, sys.argv[2])
from test_campaign_results_db import probe, HOSTS, PATHS
db = open_db(sys.argv[1])
add_hosts_and_paths(db, HOSTS, PATHS)
done = ended_probes(db)
for k in range(40):
    if k in done:
        continue
    record_probe(db, probe(k, flows=50))
    print(k, flush=True)
    time.sleep(float(sys.argv[3]))
"""


def test_a_controller_killed_mid_campaign_resumes_without_loss_or_duplicates(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    here = str(Path(__file__).parent)
    p = subprocess.Popen([sys.executable, "-c", WRITER, str(path), here, "0.01"],
                         stdout=subprocess.PIPE, text=True)
    assert p.stdout is not None
    for _ in range(15):  # let 15 probes land, then kill it without warning
        p.stdout.readline()
    p.send_signal(signal.SIGKILL)
    p.wait()
    db = open_db(path)
    first = ended_probes(db)
    assert 15 <= len(first) < 40
    # Every probe recorded is whole: its 2 runs and 50 flows.
    assert counts(db) == (len(first), 2 * len(first), 50 * len(first))
    db.close()
    t0 = time.monotonic()
    r = subprocess.run([sys.executable, "-c", WRITER, str(path), here, "0"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert time.monotonic() - t0 < 60
    resumed = {int(x) for x in r.stdout.split()}
    assert resumed == set(range(40)) - first  # the rest, none of the recorded ones again
    db = open_db(path)
    assert ended_probes(db) == set(range(40))
    assert counts(db) == (40, 80, 2000)
