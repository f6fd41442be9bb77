"""Per-interval figures of a run as iperf3's ``-J`` gives them (``intervals``: one entry per
interval, a stream per TCP flow and their sum), from a results directory's ``series`` and
``segments`` tables, so that scripts written for iperf3's JSON read tcplab's.

Per flow and interval ``[start, end)`` (seconds from the run's start): ``bytes`` are the
application bytes delivered in it (the series' ``delivered`` at the last sample before each
boundary), ``bits_per_second`` those over the interval, ``retransmits`` the data segments
sent again in it (``segments``), ``snd_cwnd`` the congestion window and ``rtt`` the smoothed
RTT in µs at its end (iperf3's units). A flow's stream also names it (``flow``, its name in
``flows``). Empty when the run recorded no series.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

#: iperf3's default reporting interval.
DEFAULT_INTERVAL_NS = 1_000_000_000


def intervals(path: Path, interval_ns: int = DEFAULT_INTERVAL_NS) -> list[dict[str, Any]]:
    """The ``intervals`` array of results directory `path`."""
    import json

    import polars as pl

    from tcplab.results import read_table

    series, segments, flows = (read_table(path, t) for t in ("series", "segments", "flows"))
    if series is None or flows is None or series.height == 0:
        return []
    summary = json.loads((path / "summary.json").read_text())
    end_ns = int(summary.get("duration_s", 0) * 1e9) or int(series["time_ns"].max() or 0)
    bounds = list(range(0, end_ns + interval_ns - 1, interval_ns))[1:] or [end_ns]
    bounds = [min(b, end_ns) for b in bounds]
    names = flows["name"].to_list() if "name" in flows.columns else []
    streams: dict[int, list[dict[str, Any]]] = {}
    for flow in sorted(set(series["flow"].to_list())):
        s = series.filter(pl.col("flow") == flow).sort("time_ns")
        at = pl.DataFrame({"time_ns": [0, *bounds]}, schema={"time_ns": s.schema["time_ns"]})
        snap = at.join_asof(s, on="time_ns", strategy="backward")
        rtx = [0] * len(bounds)
        if segments is not None and segments.height:
            sent = segments.filter((pl.col("flow") == flow) & (pl.col("retransmission") > 0))["time_ns"].to_list()
            for t in sent:
                i = min(int(t // interval_ns), len(bounds) - 1)
                rtx[i] += 1
        rows = snap.to_dicts()
        out = []
        for i, b in enumerate(bounds):
            start = 0 if i == 0 else bounds[i - 1]
            got = (rows[i + 1]["delivered"] or 0) - (rows[i]["delivered"] or 0)
            secs = (b - start) / 1e9
            srtt = rows[i + 1]["srtt_ns"]
            out.append({"flow": names[flow] if flow < len(names) else str(flow), "start": start / 1e9,
                        "end": b / 1e9, "seconds": secs, "bytes": int(got),
                        "bits_per_second": 8 * got / secs if secs else 0.0, "retransmits": rtx[i],
                        "snd_cwnd": int(rows[i + 1]["cwnd"] or 0),
                        "rtt": int((srtt or 0) // 1000), "omitted": False, "sender": True})
        streams[flow] = out
    result = []
    for i in range(len(bounds)):
        per = [streams[f][i] for f in sorted(streams)]
        start, end = per[0]["start"], per[0]["end"]
        total = sum(p["bytes"] for p in per)
        secs = end - start
        result.append({"streams": per, "sum": {"start": start, "end": end, "seconds": secs, "bytes": total,
                                               "bits_per_second": 8 * total / secs if secs else 0.0,
                                               "retransmits": sum(p["retransmits"] for p in per),
                                               "omitted": False, "sender": True}})
    return result
