//! The `flows` table: one row per TCP flow (docs/results.md explains each column).

use super::{column, row_fields, Table, TableBuilder};
use crate::instruments::timeouts::TimeoutClass;
use crate::results::{FlowSummary, LossCause};

pub(super) fn flows(rows: Vec<FlowSummary>) -> Table {
    let mut t = TableBuilder::new("flows");
    row_fields!(t, rows;
        name (clone), "", "flow name";
        src (clone), "", "sending host";
        dst (clone), "", "receiving host";
        controller (clone), "", "congestion controller";
        recovery (clone), "", "loss-recovery strategy";
        start_ns, "ns", "application start";
        end_ns, "ns", "last byte acknowledged (transfers of N bytes), else the end of the run";
        completed, "", "a transfer of `bytes` finished";
        bytes_delivered, "bytes", "application bytes delivered in order";
        throughput_bps, "bit/s", "bytes_delivered * 8 / (end - start)";
        goodput, "ratio", "bytes_delivered / bytes_sent";
        @sender segments_sent, "segments", "data segments sent, retransmissions included";
        @sender bytes_sent, "bytes", "data bytes sent, retransmissions included";
        @sender retransmits, "segments", "all retransmissions";
        @sender retransmits_fast, "segments", "the retransmission on entering fast recovery";
        @sender retransmits_recovery, "segments", "further retransmissions during recovery";
        @sender retransmits_timeout, "segments", "retransmissions after a timeout";
        @sender retransmits_probe, "segments", "tail-loss probes that resent the highest segment";
        @sender fast_retransmits, "count", "recovery entries triggered by ACKs";
        @sender recovery_restarts, "count", "new reductions within one recovery";
        @sender probes, "segments", "tail-loss probes sent";
        @sender timeouts, "count", "retransmission-timer expiries";
        @sender loss_events, "count", "window reductions of any kind";
        @sender dup_acks, "ACKs", "duplicate ACKs the sender received";
        acks_sent, "ACKs", "ACKs the receiver sent";
        spurious_retransmits, "segments", "segments that arrived when all their bytes were there";
        data_drops, "packets", "this flow's data packets dropped anywhere";
        ack_drops, "packets", "this flow's ACKs dropped anywhere";
        @sender min_rtt_ns, "ns", "smallest RTT sample; null without a sample";
        @sender mean_rtt_ns, "ns", "mean RTT sample; null without a sample";
    );
    // Loss classification (Veno's Table I): each array flattened by actual cause.
    let arrays: [(&str, &'static str, Vec<[u64; 3]>); 4] = [
        (
            "ff45",
            "fast retransmits answered with \"4/5\", by the loss's cause",
            column!(rows, ff45),
        ),
        (
            "ff12",
            "fast retransmits answered with \"1/2\", by the loss's cause",
            column!(rows, ff12),
        ),
        (
            "ff_other",
            "fast retransmits with another verdict, by the loss's cause",
            column!(rows, ff_other),
        ),
        (
            "timeouts_by_cause",
            "timeouts by the loss's actual cause",
            column!(rows, timeouts_by_cause),
        ),
    ];
    for (field, about, by_cause) in arrays {
        for cause in LossCause::ALL {
            let v: Vec<u64> = by_cause.iter().map(|a| a[cause as usize]).collect();
            t.col(format!("{field}_{}", cause.as_str()), "count", about, v);
        }
    }
    row_fields!(t, rows;
        ff45_accuracy, "ratio", "share of 4/5 decisions that hit a random loss";
        congestion_misdiagnosis, "ratio", "share of congestion losses answered with 4/5 among 4/5 and 1/2";
        ff_value_mean_congestion, "1", "mean verdict value of fast retransmits caused by congestion";
        ff_value_mean_random, "1", "mean verdict value of fast retransmits caused by random loss";
        cross_layer_reports, "reports", "random drops reported to the sender (cross-layer channel)";
    );
    // Timeout taxonomy (docs/timeouts.md): one column per class.
    for class in TimeoutClass::ALL {
        let v: Vec<u64> = rows
            .iter()
            .map(|r| r.timeouts_by_class[class as usize])
            .collect();
        let about = "timeouts by class in the ETH report's taxonomy";
        t.col(format!("timeouts_{}", class.as_str()), "count", about, v);
    }
    row_fields!(t, rows;
        loss_indication_p, "ratio", "(timeouts + recovery entries) / segments sent";
    );
    eth_columns(&mut t, &rows);
    row_fields!(t, rows;
        ecn_marks, "packets", "data segments marked Congestion Experienced";
        @sender ecn_reductions, "count", "window reductions in answer to ECN echoes";
        @sender timeouts_repeated, "count", "timeouts that fired again before the cumulative ACK moved";
        @sender undos_timeout, "count", "timeouts found spurious and undone";
        @sender undos_recovery, "count", "fast-recovery reductions found unnecessary and undone";
    );
    t.done()
}

/// The ETH report's loss events, dup ACKs per recovery and SACK-block use
/// (docs/eth-metrics.md).
fn eth_columns(t: &mut TableBuilder, rows: &[FlowSummary]) {
    row_fields!(t, rows;
        loss_events_single, "events", "reductions after exactly one dropped transmission";
        loss_events_multiple, "events", "reductions after more than one dropped transmission";
        loss_event_drops, "packets", "dropped data transmissions counted in loss events";
        loss_event_max, "packets", "most dropped transmissions in one loss event";
    );
    for (k, bin) in ["0", "1", "2", "3", "4plus"].into_iter().enumerate() {
        let v: Vec<u64> = rows.iter().map(|r| r.recoveries_by_dupacks[k]).collect();
        let about = "recovery entries by the dup ACKs in a row that began them";
        t.col(format!("recoveries_dupacks_{bin}"), "recoveries", about, v);
    }
    row_fields!(t, rows;
        dupacks_per_recovery, "dup ACKs", "mean dup ACKs per recovery entry; null without recoveries";
    );
    for n in 0..6 {
        let carried: Vec<u64> = rows.iter().map(|r| r.sack_block_carried[n]).collect();
        let used: Vec<u64> = rows.iter().map(|r| r.sack_block_used[n]).collect();
        let (c, u) = (
            "ACKs with at least n SACK blocks",
            "ACKs whose n-th SACK block covered new data",
        );
        t.col(format!("sack_block_{}_carried", n + 1), "ACKs", c, carried)
            .col(format!("sack_block_{}_used", n + 1), "ACKs", u, used);
    }
    row_fields!(t, rows;
        dsacks_sent, "ACKs", "ACKs with a DSACK block the receiver sent";
    );
}
