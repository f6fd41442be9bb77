"""The Parquet trace of an endpoint whose ends ran apart (a campaign probe's,
:meth:`tcplab.live.stacks.Stack.source_figures`), written as ``trace.parquet`` into the
endpoint's output directory from what the endpoint itself wrote:

- tcplab sender (``tcplab-flow send``): its series (``series.csv``);
- tcplab receiver (``tcplab-flow recv``): its ``delivered`` facts (``facts.jsonl``);
- Linux sender (``linux_endpoint.py send``): its ``TCP_INFO`` samples.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import polars as pl

from tcplab.live import linux_tcpinfo

__all__ = ["facts_trace", "series_trace", "tcpinfo_trace"]


def series_trace(out: Path) -> str | None:
    """The tcplab sender's series (``series.csv``, its ``t_ns`` named ``time_ns`` as in the
    simulator's series) as ``trace.parquet``."""
    src = out / "series.csv"
    if not src.exists() or src.stat().st_size == 0:
        return None
    dst = out / "trace.parquet"
    pl.read_csv(src).rename({"t_ns": "time_ns"}, strict=False).write_parquet(dst)
    return str(dst)


def facts_trace(out: Path) -> str | None:
    """The tcplab receiver's ``delivered`` facts (one per data segment that arrived) as
    ``trace.parquet``: time_ns, seq, sent_at_ns."""
    src = out / "facts.jsonl"
    if not src.exists():
        return None
    rows = []
    for line in src.read_text().splitlines():
        if line:
            f = json.loads(line)
            rows.append({"time_ns": f.get("time_ns"), "seq": f.get("seq"), "sent_at_ns": f.get("sent_at_ns")})
    dst = out / "trace.parquet"
    pl.DataFrame(rows, schema={"time_ns": pl.Int64, "seq": pl.Int64, "sent_at_ns": pl.Int64}).write_parquet(dst)
    return str(dst)


def tcpinfo_trace(out: Path, sender: dict[str, Any]) -> tuple[str, dict[str, int]]:
    """The Linux sender's TCP_INFO samples as ``trace.parquet`` (time since the connect,
    the simulator's series names where they mean the same, bytes and ns) and the last one."""
    t0 = sender["t_connect_ns"]
    rows = []
    final: dict[str, int] = {}
    for t, raw in zip(sender["sample_ns"], sender["tcp_info"], strict=True):
        i = linux_tcpinfo.parse(bytes.fromhex(raw))
        final = i
        mss = i["snd_mss"]
        rows.append({"time_ns": t - t0, "cwnd": i["snd_cwnd"] * mss,
                     "ssthresh": None if i["snd_ssthresh"] >= 0x7FFFFFFF else i["snd_ssthresh"] * mss,
                     "srtt_ns": i["rtt"] * 1000, "rto_ns": i["rto"] * 1000,
                     "delivered": i.get("bytes_acked"), "bytes_sent": i.get("bytes_sent"),
                     "total_retrans": i["total_retrans"], "lost": i["lost"],
                     "ca_state": i["ca_state"]})
    dst = out / "trace.parquet"
    pl.DataFrame(rows, schema={"time_ns": pl.Int64, "cwnd": pl.Int64, "ssthresh": pl.Int64, "srtt_ns": pl.Int64,
                               "rto_ns": pl.Int64, "delivered": pl.Int64, "bytes_sent": pl.Int64,
                               "total_retrans": pl.Int64, "lost": pl.Int64, "ca_state": pl.Int64}).write_parquet(dst)
    return str(dst), final
