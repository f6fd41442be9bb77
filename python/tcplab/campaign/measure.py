"""One probe -> one row: what the campaign records of each transfer (the probe flow of a
run), with the path's and the probe's parameters beside it.

Loss events (report §11: a single lost packet, or several lost packets in one congestion
window) are the flows table's ``loss_events_single`` / ``loss_events_multiple`` columns
(the simulator's ground truth, docs/results.md).
"""

from __future__ import annotations

import math
from typing import Any


from tcplab.campaign.population import PROBE_FLOW, Path
from tcplab.campaign.schedule import Probe

__all__ = ["probe_row", "probe_fields", "throughput_shares", "TIMEOUT_CLASSES", "PROBE_COLUMNS"]

#: the flows table's timeout classes (docs/timeouts.md), in the report's Fig. 8 order
TIMEOUT_CLASSES = (
    "mpl_missing_acks",
    "mpl_lost_rtx",
    "non_trigger",
    "lost_fast_rtx",
    "lost_timeout_rtx",
    "other",
)

_FLOW_COLUMNS = (
    "completed",
    "bytes_delivered",
    "throughput_bps",
    "goodput",
    "segments_sent",
    "retransmits",
    "spurious_retransmits",
    "fast_retransmits",
    "recovery_restarts",
    "timeouts",
    "loss_events",
    "data_drops",
    "ack_drops",
    "loss_indication_p",
)

#: every column of probes.parquet (docs/campaign.md documents them), in order
PROBE_COLUMNS = (
    # the probe
    "probe",
    "path",
    "time_h",
    "protocol",
    "controller",
    "recovery",
    "load",
    "cross_tcp_flows",
    "cross_udp_bps",
    "sim_seed",
    # the path
    "rtt_ms",
    "rate_mbps",
    "buffer_bytes",
    "path_loss",
    "path_ack_loss",
    # the transfer
    *_FLOW_COLUMNS,
    "duration_s",
    "mean_rtt_ms",
    "loss_rate",
    "normalized_throughput",
    "fair_share_bps",
    "normalized_fair",
    "mathis_bps",
    *(f"timeouts_{c}" for c in TIMEOUT_CLASSES),
    "loss_events_single",
    "loss_events_multiple",
    "loss_events_any",
    "wall_s",
    "cpu_s",
)


def probe_fields(probe: Probe, path: Path, cfg: Any) -> dict[str, Any]:
    """The columns of a probe's row that the schedule and the path give (the probe, its
    protocol's controller and recovery, the path's figures): a simulated probe's and a live
    one's alike."""
    proto = cfg.protocol_table()[probe.protocol]
    row: dict[str, Any] = probe.row()
    row.update(
        controller=proto.controller,
        recovery=proto.recovery,
        rtt_ms=path.rtt_ms,
        rate_mbps=path.rate_mbps,
        buffer_bytes=path.buffer_bytes,
        path_loss=path.loss,
        path_ack_loss=path.ack_loss,
    )
    return row


def throughput_shares(throughput_bps: float, probe: Probe, path: Path) -> dict[str, Any]:
    """A probe's throughput normalized to its path's bottleneck rate (the report's Fig. 4/5),
    its fair share of what the UDP cross traffic leaves, and the throughput over that share."""
    rate_bps = path.rate_mbps * 1e6
    fair = max(rate_bps - probe.udp_bps, 0.0) / (1 + probe.tcp_flows)
    return {
        "normalized_throughput": throughput_bps / rate_bps,
        "fair_share_bps": fair,
        "normalized_fair": throughput_bps / fair if fair > 0 else None,
    }


def probe_row(result: Any, probe: Probe, path: Path, cfg: Any, wall_s: float, cpu_s: float) -> dict[str, Any]:
    """The row of probes.parquet for ``result`` (a tcplab RunResult of the probe's scenario)."""
    f = result.flows.row(PROBE_FLOW, named=True)
    row = probe_fields(probe, path, cfg)
    for c in _FLOW_COLUMNS:
        row[c] = f[c]
    row["duration_s"] = (f["end_ns"] - f["start_ns"]) / 1e9
    rtt_s = f["mean_rtt_ns"] / 1e9 if f["mean_rtt_ns"] is not None else path.rtt_ms / 1e3
    row["mean_rtt_ms"] = rtt_s * 1e3
    sent = f["segments_sent"]
    # data loss rate: the probe's data packets dropped anywhere / data packets sent
    row["loss_rate"] = f["data_drops"] / sent if sent else 0.0
    row.update(throughput_shares(f["throughput_bps"], probe, path))
    # Mathis et al.: B = MSS/RTT · sqrt(3/2) / sqrt(p), p the loss-indication probability
    p = f["loss_indication_p"]
    mss_bits = cfg.transfer.packet_bytes * 8
    row["mathis_bps"] = mss_bits / rtt_s * math.sqrt(1.5) / math.sqrt(p) if p and p > 0 else None
    for c in TIMEOUT_CLASSES:
        row[f"timeouts_{c}"] = f.get(f"timeouts_{c}", 0)
    single, multiple = f["loss_events_single"], f["loss_events_multiple"]
    row["loss_events_single"] = int(single)
    row["loss_events_multiple"] = int(multiple)
    row["loss_events_any"] = int(single) + int(multiple)
    row["wall_s"] = wall_s
    row["cpu_s"] = cpu_s
    return {c: row[c] for c in PROBE_COLUMNS}
