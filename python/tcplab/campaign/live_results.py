"""A live campaign's probes as the virtual campaign's table (docs/campaign.md "Live mode:
results"): the rows of the results database turned into probes.parquet's columns
(:data:`tcplab.campaign.measure.PROBE_COLUMNS`), so that the same analysis and report
apply.

A live probe knows what its endpoints measured (bytes, duration, throughput, segments,
retransmissions, timeouts, RTT, as the daemon's runner reports them in the flow's
``metrics``); what only the simulator knows (the ground truth of drops, loss events,
timeout causes) is null unless the runner reported it. A failed probe is a row with
``completed`` false and its figures null.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import polars as pl

from tcplab.campaign.config import CampaignConfig
from tcplab.campaign.measure import PROBE_COLUMNS, probe_fields, throughput_shares
from tcplab.campaign.population import Path as NetPath
from tcplab.campaign.schedule import Probe
from tcplab.campaign.results_db import open_db
from tcplab.campaign.virtual_campaign import probe_schema

__all__ = ["live_probes"]


def live_probes(cfg: CampaignConfig, db_path: str | Path, paths: list[NetPath], probes: list[Probe]) -> pl.DataFrame:
    """The probes recorded in the database at ``db_path``, in schedule order."""
    db = open_db(db_path)
    try:
        recorded = {
            r[0]: (r[1], r[2], r[3])
            for r in db.execute("SELECT id, status, started_at, finished_at FROM probes")
        }
        metrics = {r[0]: json.loads(r[1]) for r in db.execute("SELECT probe, metrics FROM flows WHERE flow = 0")}
    finally:
        db.close()
    by_id = {p.id: p for p in paths}
    rows = []
    for probe in probes:
        if probe.id not in recorded:
            continue
        status, started, finished = recorded[probe.id]
        wall_s = finished - started if started is not None and finished is not None else None
        rows.append(_row(cfg, probe, by_id[probe.path], metrics.get(probe.id) if status == "ok" else None, wall_s))
    schema = probe_schema()
    return pl.DataFrame(rows, schema=schema, orient="row") if rows else pl.DataFrame(schema=schema)


def _num(m: dict[str, Any], key: str) -> float | None:
    v = m.get(key)
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) else None


def _row(cfg: CampaignConfig, probe: Probe, path: NetPath, m: dict[str, Any] | None, wall_s: float | None) -> list[Any]:
    row: dict[str, Any] = dict.fromkeys(PROBE_COLUMNS)
    row.update(probe_fields(probe, path, cfg), wall_s=wall_s)
    row["completed"] = False
    if m is not None:
        for c in PROBE_COLUMNS:
            if c in m and c not in ("probe", "path", "protocol", "controller", "recovery"):
                row[c] = m[c]
        row["completed"] = bool(m.get("completed", True))
        thr = _num(m, "throughput_bps")
        if thr is not None:
            row.update(throughput_shares(thr, probe, path))
    schema = probe_schema()
    out = []
    for c in PROBE_COLUMNS:
        v = row[c]
        if v is not None and schema[c] in (pl.Int64, pl.UInt64) and isinstance(v, float):
            v = int(v) if math.isfinite(v) else None
        out.append(v)
    return out
