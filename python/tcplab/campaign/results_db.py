"""The live campaign's results database (docs/campaign.md "Live mode: the
results database"): SQLite in WAL mode, one file per campaign.

Tables (the schema is :data:`SCHEMA`, created on open):

- ``campaign``: one row, the campaign's ``uid`` (random, drawn when the database is
  created): part of every probe's job id, so that daemons tell this campaign's probes from
  another's of the same names (:func:`campaign_uid`).
- ``hosts``: name, address.
- ``paths``: the campaign's paths (index in the path population), source and sink host,
  the drawn rate, RTT, buffer and loss.
- ``probes``: one row per scheduled probe that ended, keyed by its index in the campaign's
  schedule (:func:`tcplab.campaign.schedule.schedule`: the same seed gives the same probes):
  path, protocol, scheduled time, when it started and ended, ``ok`` or ``failed`` with the
  reason, and how many attempts it took.
- ``runs``: per probe and attempt, what each daemon ran (host, role ``source`` or ``sink``,
  its outcome, the Parquet file of its traces and, when asked, the sink's pcap of the
  probe's packets: paths on the daemon's host).
- ``flows``: per probe, the measured flow rows (the probe's flow and any cross traffic):
  name, bytes delivered, throughput, retransmissions, timeouts, and every other figure as
  JSON.

**Every probe is recorded exactly once**: :func:`record_probe` writes a probe, its runs and
its flows in one transaction (all or nothing, also when the process is killed in the
middle) and ignores a probe already recorded, so a controller that resumes and finishes a
probe a second time changes nothing. :func:`ended_probes` is what a resuming controller
skips.
"""

from __future__ import annotations

import json
import secrets
import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["SCHEMA", "FlowRow", "ProbeRecord", "RunRow", "campaign_uid", "ended_probes", "open_db", "record_probe"]

SCHEMA = """
CREATE TABLE IF NOT EXISTS campaign (
    uid TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS hosts (
    name TEXT PRIMARY KEY,
    address TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS paths (
    id INTEGER PRIMARY KEY,
    src TEXT NOT NULL REFERENCES hosts(name),
    dst TEXT NOT NULL REFERENCES hosts(name),
    rate_bps INTEGER NOT NULL,
    rtt_ns INTEGER NOT NULL,
    buffer_packets INTEGER NOT NULL,
    loss REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS probes (
    id INTEGER PRIMARY KEY,
    path INTEGER NOT NULL REFERENCES paths(id),
    protocol TEXT NOT NULL,
    scheduled_s REAL NOT NULL,
    started_at REAL,
    finished_at REAL,
    status TEXT NOT NULL CHECK (status IN ('ok', 'failed')),
    reason TEXT,
    attempts INTEGER NOT NULL CHECK (attempts >= 1)
);
CREATE TABLE IF NOT EXISTS runs (
    probe INTEGER NOT NULL REFERENCES probes(id),
    attempt INTEGER NOT NULL,
    host TEXT NOT NULL,
    role TEXT NOT NULL CHECK (role IN ('source', 'sink')),
    outcome TEXT NOT NULL,
    traces TEXT,
    pcap TEXT,
    PRIMARY KEY (probe, attempt, role)
);
CREATE TABLE IF NOT EXISTS flows (
    probe INTEGER NOT NULL REFERENCES probes(id),
    flow INTEGER NOT NULL,
    name TEXT NOT NULL,
    bytes_delivered INTEGER,
    throughput_bps REAL,
    retransmits INTEGER,
    timeouts INTEGER,
    metrics TEXT NOT NULL,
    PRIMARY KEY (probe, flow)
);
"""


@dataclass(frozen=True)
class RunRow:
    attempt: int
    host: str
    role: str
    outcome: str
    traces: str | None = None
    pcap: str | None = None


@dataclass(frozen=True)
class FlowRow:
    flow: int
    name: str
    bytes_delivered: int | None = None
    throughput_bps: float | None = None
    retransmits: int | None = None
    timeouts: int | None = None
    metrics: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class ProbeRecord:
    id: int
    path: int
    protocol: str
    scheduled_s: float
    status: str
    attempts: int
    started_at: float | None = None
    finished_at: float | None = None
    reason: str | None = None
    runs: tuple[RunRow, ...] = ()
    flows: tuple[FlowRow, ...] = ()


def open_db(path: str | Path) -> sqlite3.Connection:
    """The database at ``path`` (created with :data:`SCHEMA` if new), in WAL mode with
    foreign keys on. Autocommit: each :func:`record_probe` is its own transaction."""
    db = sqlite3.connect(str(path), timeout=30.0, isolation_level=None)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=NORMAL")
    db.execute("PRAGMA foreign_keys=ON")
    db.executescript(SCHEMA)
    return db


def campaign_uid(db: sqlite3.Connection) -> str:
    """The campaign's uid: drawn (8 hex digits) the first time, then the stored one, so a
    controller that resumes on the same database keeps it and a new database has another."""
    with _transaction(db) as c:
        row = c.execute("SELECT uid FROM campaign").fetchone()
        if row is None:
            row = (secrets.token_hex(4),)
            c.execute("INSERT INTO campaign (uid) VALUES (?)", row)
    return str(row[0])


def add_hosts_and_paths(db: sqlite3.Connection, hosts: Iterable[tuple[str, str]],
                        paths: Iterable[tuple[int, str, str, int, int, int, float]]) -> None:
    """The campaign's hosts (name, address) and paths (id, src, dst, rate_bps, rtt_ns,
    buffer_packets, loss); rows already there are kept (a resumed campaign adds nothing)."""
    with _transaction(db):
        db.executemany("INSERT OR IGNORE INTO hosts VALUES (?, ?)", list(hosts))
        db.executemany("INSERT OR IGNORE INTO paths VALUES (?, ?, ?, ?, ?, ?, ?)", list(paths))


def record_probe(db: sqlite3.Connection, p: ProbeRecord) -> bool:
    """Writes probe ``p`` with its runs and flows in one transaction; False (and nothing
    written) when the probe is already recorded."""
    with _transaction(db):
        cur = db.execute(
            "INSERT OR IGNORE INTO probes VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (p.id, p.path, p.protocol, p.scheduled_s, p.started_at, p.finished_at, p.status,
             p.reason, p.attempts))
        if cur.rowcount == 0:
            return False
        db.executemany("INSERT INTO runs VALUES (?, ?, ?, ?, ?, ?, ?)",
                       [(p.id, r.attempt, r.host, r.role, r.outcome, r.traces, r.pcap) for r in p.runs])
        db.executemany("INSERT INTO flows VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                       [(p.id, f.flow, f.name, f.bytes_delivered, f.throughput_bps, f.retransmits,
                         f.timeouts, json.dumps(f.metrics, sort_keys=True)) for f in p.flows])
    return True


def ended_probes(db: sqlite3.Connection) -> set[int]:
    """The probes recorded (ok or failed): what a resuming controller does not run again."""
    return {row[0] for row in db.execute("SELECT id FROM probes")}


class _transaction:
    """BEGIN IMMEDIATE ... COMMIT, ROLLBACK on an exception."""

    def __init__(self, db: sqlite3.Connection):
        self.db = db

    def __enter__(self) -> sqlite3.Connection:
        self.db.execute("BEGIN IMMEDIATE")
        return self.db

    def __exit__(self, kind: object, *rest: object) -> None:
        self.db.execute("ROLLBACK" if kind is not None else "COMMIT")
