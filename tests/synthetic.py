"""Synthetic results in the exact shape ``_native.Simulation.finish()`` returns, so results
writing and reports can be tested without running the simulator."""

from __future__ import annotations

from typing import Any

import numpy as np

U64_MAX = np.iinfo(np.uint64).max


def fake_finish(canonical: dict[str, Any], seed: int = 0) -> dict[str, Any]:
    """A plausible result for ``canonical`` (a dumbbell): sawtooth windows, a queue that
    fills and drains, drops at the peaks, fast retransmits and one timeout per flow."""
    rng = np.random.default_rng(seed)
    flows = canonical["flows"]
    n = len(flows)
    dur = int(canonical["duration"])
    pairs = canonical["topology"]["pairs"]
    mss = 1460

    # links: access links of senders, bottleneck, access of receivers; forward and reverse
    link_names = [f"s{i}-left" for i in range(pairs)] + ["left-right"] + [f"right-r{i}" for i in range(pairs)]
    links: dict[str, list] = {k: [] for k in ("link", "direction", "from", "to")}
    for name in link_names:
        a, b = name.split("-")
        for direction, (f, t) in (("forward", (a, b)), ("reverse", (b, a))):
            links["link"].append(name)
            links["direction"].append(direction)
            links["from"].append(f)
            links["to"].append(t)
    nl = len(links["link"])
    bottleneck = links["link"].index("left-right")  # forward direction row

    # series: every 10 ms per flow
    step = 10_000_000
    times = np.arange(0, dur + 1, step, dtype=np.uint64)
    s_flow, s_time, s_cwnd, s_ss, s_srtt, s_rto, s_inf, s_del = ([] for _ in range(8))
    e_time, e_flow, e_event, e_reason, e_cwnd, e_ss, e_seq, e_label, e_value = ([] for _ in range(9))
    g_time, g_flow, g_seq, g_len, g_rtx = ([] for _ in range(5))
    d_time, d_link, d_kind, d_flow, d_packet, d_seq, d_size, d_cause = ([] for _ in range(8))
    for f in range(n):
        period = 40 + 10 * f  # samples per sawtooth
        phase = (np.arange(times.size) % period).astype(np.uint64)
        cwnd = (10 + phase) * mss
        ss = np.where(np.arange(times.size) < period, U64_MAX, 10 * mss).astype(np.uint64)
        rate = 4e6 / 8 / (f + 1)  # bytes/s
        delivered = (times.astype(np.float64) / 1e9 * rate).astype(np.uint64)
        s_flow.append(np.full(times.size, f, np.uint32))
        s_time.append(times)
        s_cwnd.append(cwnd.astype(np.uint64))
        s_ss.append(ss)
        s_srtt.append(np.full(times.size, 60_000_000, np.uint64))
        s_rto.append(np.full(times.size, 260_000_000, np.uint64))
        s_inf.append(cwnd.astype(np.uint64))
        s_del.append(delivered)
        peaks = times[phase == period - 1]
        for k, t in enumerate(peaks):
            kind = "timeout" if k == 2 else "recovery_enter"
            e_time.append(int(t))
            e_flow.append(f)
            e_event.append(kind)
            e_reason.append("")
            e_cwnd.append(10 * mss)
            e_ss.append(10 * mss)
            e_seq.append(int(t) // 1000)
            e_label.append("1/2" if kind == "recovery_enter" else "")
            e_value.append(0.5 if kind == "recovery_enter" else 1.0)
            d_time.append(int(t) - 30_000_000)
            d_link.append(bottleneck)
            d_kind.append("tcp")
            d_flow.append(f)
            d_packet.append("data")
            d_seq.append(int(t) // 1000)
            d_size.append(mss + 40)
            d_cause.append("buffer_overflow" if k % 2 else "link_error")
        # segments: one every ~3 ms, retransmissions after each drop
        seg_t = np.arange(0, dur, 3_000_000 * (f + 1), dtype=np.uint64)
        g_time.append(seg_t)
        g_flow.append(np.full(seg_t.size, f, np.uint32))
        g_seq.append(np.arange(seg_t.size, dtype=np.uint64) * mss)
        g_len.append(np.full(seg_t.size, mss, np.uint32))
        rtx = np.zeros(seg_t.size, np.uint8)
        rtx[rng.choice(seg_t.size, size=max(1, seg_t.size // 100), replace=False)] = 1
        g_rtx.append(rtx)

    q_time = times
    q_pk = (np.abs(np.sin(np.arange(times.size) / 7.0)) * 30).astype(np.uint32)
    order = np.argsort(np.array(d_time, dtype=np.uint64), kind="stable")

    def cat(parts, dtype):
        return np.concatenate(parts).astype(dtype) if parts else np.zeros(0, dtype)

    def pick(xs, dtype=None):
        arr = [xs[i] for i in order]
        return np.array(arr, dtype=dtype) if dtype is not None else arr

    eorder = np.argsort(np.array(e_time, dtype=np.uint64), kind="stable")

    def epick(xs, dtype=None):
        arr = [xs[i] for i in eorder]
        return np.array(arr, dtype=dtype) if dtype is not None else arr

    tput = np.array([4e6 / (f + 1) for f in range(n)])
    return {
        "flows": {
            "name": [fl["name"] for fl in flows],
            "src": [fl["src"] for fl in flows],
            "dst": [fl["dst"] for fl in flows],
            "controller": [fl["controller"]["name"] for fl in flows],
            "recovery": [fl["recovery"]["name"] for fl in flows],
            "start_ns": np.array([fl["start"] for fl in flows], np.uint64),
            "end_ns": np.full(n, dur, np.uint64),
            "completed": np.zeros(n, bool),
            "bytes_delivered": (tput / 8 * dur / 1e9).astype(np.uint64),
            "throughput_bps": tput,
            "goodput": np.full(n, 0.98),
            "segments_sent": np.full(n, 1000, np.uint64),
            "bytes_sent": np.full(n, 1_460_000, np.uint64),
            "retransmits": np.full(n, 12, np.uint64),
            "retransmits_fast": np.full(n, 8, np.uint64),
            "retransmits_recovery": np.full(n, 3, np.uint64),
            "retransmits_timeout": np.full(n, 1, np.uint64),
            "fast_retransmits": np.full(n, 8, np.uint64),
            "timeouts": np.full(n, 1, np.uint64),
            "loss_events": np.full(n, 9, np.uint64),
            "dup_acks": np.full(n, 40, np.uint64),
            "acks_sent": np.full(n, 500, np.uint64),
            "spurious_retransmits": np.zeros(n, np.uint64),
            "data_drops": np.full(n, 12, np.uint64),
            "ack_drops": np.zeros(n, np.uint64),
            "min_rtt_ns": np.array([60e6] + [np.nan] * (n - 1), np.float64),
            "mean_rtt_ns": np.array([75e6] + [np.nan] * (n - 1), np.float64),
            "retransmits_probe": np.zeros(n, np.uint64),
            "recovery_restarts": np.zeros(n, np.uint64),
            "probes": np.zeros(n, np.uint64),
            # Table I: 8 fast retransmits = 3 + 1 "4/5" + 1 + 2 "1/2" + 1 other; 1 timeout
            "ff45_congestion": np.full(n, 1, np.uint64),
            "ff45_random": np.full(n, 3, np.uint64),
            "ff45_none": np.zeros(n, np.uint64),
            "ff12_congestion": np.full(n, 2, np.uint64),
            "ff12_random": np.full(n, 1, np.uint64),
            "ff12_none": np.zeros(n, np.uint64),
            "ff_other_congestion": np.zeros(n, np.uint64),
            "ff_other_random": np.zeros(n, np.uint64),
            "ff_other_none": np.full(n, 1, np.uint64),
            "timeouts_by_cause_congestion": np.full(n, 1, np.uint64),
            "timeouts_by_cause_random": np.zeros(n, np.uint64),
            "timeouts_by_cause_none": np.zeros(n, np.uint64),
            "ff45_accuracy": np.full(n, 0.75),
            "congestion_misdiagnosis": np.array([1 / 3] + [np.nan] * (n - 1), np.float64),
            "ff_value_mean_congestion": np.full(n, 0.6),
            "ff_value_mean_random": np.full(n, 0.75),
            "cross_layer_reports": np.zeros(n, np.uint64),
            "timeouts_lost_timeout_rtx": np.zeros(n, np.uint64),
            "timeouts_lost_fast_rtx": np.zeros(n, np.uint64),
            "timeouts_mpl_lost_rtx": np.zeros(n, np.uint64),
            "timeouts_mpl_missing_acks": np.full(n, 1, np.uint64),
            "timeouts_non_trigger": np.zeros(n, np.uint64),
            "timeouts_other": np.zeros(n, np.uint64),
            "loss_indication_p": np.full(n, 0.01),
            # ETH metrics: 9 reductions, 7 single and 1 multiple loss event of 5 drops
            "loss_events_single": np.full(n, 7, np.uint64),
            "loss_events_multiple": np.full(n, 1, np.uint64),
            "loss_event_drops": np.full(n, 12, np.uint64),
            "loss_event_max": np.full(n, 5, np.uint64),
            "recoveries_dupacks_0": np.zeros(n, np.uint64),
            "recoveries_dupacks_1": np.zeros(n, np.uint64),
            "recoveries_dupacks_2": np.full(n, 2, np.uint64),
            "recoveries_dupacks_3": np.full(n, 6, np.uint64),
            "recoveries_dupacks_4plus": np.zeros(n, np.uint64),
            "dupacks_per_recovery": np.array([2.75] + [np.nan] * (n - 1), np.float64),
            **{f"sack_block_{k}_carried": np.full(n, 100 // k, np.uint64) for k in range(1, 7)},
            **{f"sack_block_{k}_used": np.full(n, [90, 6, 3, 1, 0, 0][k - 1], np.uint64) for k in range(1, 7)},
            "dsacks_sent": np.zeros(n, np.uint64),
        },
        "udp": {
            "name": [],
            "src": [],
            "dst": [],
            "packets_sent": np.zeros(0, np.uint64),
            "packets_received": np.zeros(0, np.uint64),
            "packets_dropped": np.zeros(0, np.uint64),
            "throughput_bps": np.zeros(0, np.float64),
        },
        "links": {
            **links,
            "rate_bps": np.full(nl, 10_000_000, np.uint64),
            "delay_ns": np.full(nl, 25_000_000, np.uint64),
            "packets_sent": np.full(nl, 1000, np.uint64),
            "bytes_sent": np.full(nl, 1_500_000, np.uint64),
            "drops_buffer_overflow": np.zeros(nl, np.uint64),
            "drops_aqm_early": np.zeros(nl, np.uint64),
            "drops_aqm_forced": np.zeros(nl, np.uint64),
            "drops_link_error": np.zeros(nl, np.uint64),
            "drops_mac": np.zeros(nl, np.uint64),
            "utilization": np.full(nl, 0.5),
        },
        "series": {
            "flow": cat(s_flow, np.uint32),
            "time_ns": cat(s_time, np.uint64),
            "cwnd": cat(s_cwnd, np.uint64),
            "ssthresh": cat(s_ss, np.uint64),
            "srtt_ns": cat(s_srtt, np.uint64),
            "rto_ns": cat(s_rto, np.uint64),
            "in_flight": cat(s_inf, np.uint64),
            "delivered": cat(s_del, np.uint64),
        },
        "queues": {
            "link": np.full(q_time.size, bottleneck, np.uint32),
            "time_ns": q_time.astype(np.uint64),
            "packets": q_pk,
            "bytes": q_pk.astype(np.uint64) * (mss + 40),
        },
        "drops": {
            "time_ns": pick(d_time, np.uint64),
            "link": pick(d_link, np.uint32),
            "flow_kind": pick(d_kind),
            "flow": pick(d_flow, np.uint32),
            "packet": pick(d_packet),
            "seq": pick(d_seq, np.uint64),
            "size": pick(d_size, np.uint32),
            "cause": pick(d_cause),
        },
        "events": {
            "time_ns": epick(e_time, np.uint64),
            "flow": epick(e_flow, np.uint32),
            "event": epick(e_event),
            "reason": epick(e_reason),
            "cwnd": epick(e_cwnd, np.uint64),
            "ssthresh": epick(e_ss, np.uint64),
            "seq": epick(e_seq, np.uint64),
            "label": epick(e_label),
            "value": epick(e_value, np.float64),
        },
        "segments": {
            "time_ns": cat(g_time, np.uint64),
            "flow": cat(g_flow, np.uint32),
            "seq": cat(g_seq, np.uint64),
            "len": cat(g_len, np.uint32),
            "retransmission": cat(g_rtx, np.uint8),
        },
        "verdicts": {
            "time_ns": epick(e_time, np.uint64),
            "flow": epick(e_flow, np.uint32),
            "trigger": ["timeout" if e_event[i] == "timeout" else "fast_retransmit" for i in eorder],
            "label": epick(e_label),
            "value": epick(e_value, np.float64),
            "seq": epick(e_seq, np.uint64),
            "cwnd": epick(e_cwnd, np.uint64),
            "ssthresh": epick(e_ss, np.uint64),
            "cause": ["buffer_overflow" if k % 2 else "link_error" for k in range(len(eorder))],
            "timeout_class": ["mpl_missing_acks" if e_event[i] == "timeout" else "" for i in eorder],
            "dupacks": np.array([0 if e_event[i] == "timeout" else 3 for i in eorder], np.uint32),
            "lost_segments": np.ones(len(eorder), np.uint32),
        },
        "delay": {
            "name": [f["name"] for f in flows],
            "flow_kind": ["tcp"] * n,
            "flow": np.arange(n, dtype=np.uint32),
            "packets_sent": np.full(n, 1000, np.uint64),
            "packets_delivered": np.full(n, 990, np.uint64),
            "packets_dropped": np.full(n, 10, np.uint64),
            "loss_pct": np.full(n, 1.0),
            "delay_min_ns": np.full(n, 30e6),
            "delay_mean_ns": np.full(n, 40e6),
            "delay_p50_ns": np.full(n, 39e6),
            "delay_p95_ns": 45e6 + 1e6 * np.arange(n),
            "delay_p99_ns": np.full(n, 55e6),
            "delay_max_ns": np.full(n, 60e6),
            "jitter_mean_ns": np.full(n, 1e6),
            "jitter_rfc3550_ns": np.full(n, 0.9e6),
        },
        "delay_histogram": {
            "flow_kind": ["tcp"] * (2 * n),
            "flow": np.repeat(np.arange(n, dtype=np.uint32), 2),
            "metric": ["delay", "delay"] * n,
            "lower_ns": np.tile(np.array([30_000_000, 40_000_000], np.uint64), n),
            "width_ns": np.full(2 * n, 262_144, np.uint64),
            "packets": np.tile(np.array([500, 490], np.uint64), n),
        },
        "delay_series": {
            # 100 ms intervals, a queueing delay that rises and falls with each flow's sawtooth.
            "flow_kind": ["tcp"] * (n * (dur // 100_000_000)),
            "flow": np.repeat(np.arange(n, dtype=np.uint32), dur // 100_000_000),
            "time_ns": np.tile(np.arange(0, dur - 100_000_000 + 1, 100_000_000, dtype=np.uint64), n),
            "packets": np.full(n * (dur // 100_000_000), 30, np.uint64),
            "delay_mean_ns": np.concatenate(
                [30e6 + 10e6 * (np.arange(dur // 100_000_000) % (4 + f)) / (4 + f) for f in range(n)]
            ),
            "delay_min_ns": np.full(n * (dur // 100_000_000), 30_000_000, np.uint64),
            "delay_p50_ns": np.full(n * (dur // 100_000_000), 38_000_000, np.uint64),
            "delay_p95_ns": np.full(n * (dur // 100_000_000), 45_000_000, np.uint64),
            "delay_max_ns": np.full(n * (dur // 100_000_000), 50_000_000, np.uint64),
        },
        "conservation": {
            "ok": True,
            "violations": [],
            "packets_sent": 2000,
            "packets_delivered": 1970,
            "packets_dropped": 24,
            "packets_in_flight": 6,
        },
        "stats": {"sim_time_ns": dur, "events": 123456, "transmissions": 6000, "peak_pending_events": 42},
    }
