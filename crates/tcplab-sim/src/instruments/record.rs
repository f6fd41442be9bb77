//! Facts as JSON lines, one fact per line, so that a fact stream can be recorded, edited or
//! produced by something else (an emulator's drop log merged with a real sender's log) and
//! replayed through the instruments ([`super::replay`]). Times are integer nanoseconds;
//! names are those of the results tables (`buffer_overflow`, `data`, `fast`, ...):
//!
//! ```text
//! {"fact":"drop","time_ns":5000,"link":0,"flow":0,"packet":"data","seq":1460,"retransmission":0,"sent_at_ns":4000,"cause":"link_error"}
//! {"fact":"transmit","flow":0,"seq":1460,"retransmission":1,"kind":"fast"}
//! {"fact":"udp_sent","flow":0,"seq":17}
//! {"fact":"delivered","time_ns":9000,"flow":0,"packet":"udp","seq":17,"sent_at_ns":2000}
//! {"fact":"ack_sent","flow":0}
//! {"fact":"data_delivered","flow":0}
//! {"fact":"queue_state","time_ns":9000,"link":0,"packets":3,"bytes":4500}
//! ```
//!
//! Every fact and field is listed in docs/instruments.md.

use super::fact::{Delivered, Dropped, EndpointCounts, Fact, FlowSample, Reads};
use crate::packet::{DropCause, PacketKind};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::io::{BufRead, Write};
use tcplab_core::cc::CongestionKind;
use tcplab_core::{LossResponse, Seq, Time, TxKind};

#[derive(Serialize, Deserialize)]
#[serde(tag = "fact", rename_all = "snake_case", deny_unknown_fields)]
enum Line {
    Drop {
        time_ns: u64,
        link: u32,
        flow: u32,
        packet: String,
        seq: u64,
        retransmission: u8,
        sent_at_ns: u64,
        cause: String,
    },
    Mark {
        flow: u32,
    },
    Transmit {
        flow: u32,
        seq: u64,
        retransmission: u8,
        kind: String,
    },
    LossResponse {
        flow: u32,
        snd_nxt: u64,
        time_ns: u64,
        /// `fast_retransmit`, `timeout` or `ecn`.
        trigger: String,
        restart: bool,
        label: String,
        value: f64,
        seq: u64,
        transmissions: u8,
        cwnd_before: u64,
        ssthresh_after: u64,
        in_recovery: bool,
        dupacks: u32,
    },
    Acked {
        flow: u32,
        una: u64,
    },
    Report {
        flow: u32,
    },
    UdpSent {
        flow: u32,
        seq: u64,
    },
    Delivered {
        time_ns: u64,
        flow: u32,
        packet: String,
        seq: u64,
        sent_at_ns: u64,
    },
    AckSent {
        flow: u32,
    },
    AckDelivered {
        flow: u32,
    },
    DataDelivered {
        flow: u32,
    },
    FlowState {
        time_ns: u64,
        flow: u32,
        state: FlowSample,
        changed_only: bool,
    },
    QueueState {
        time_ns: u64,
        link: u32,
        packets: u32,
        bytes: u64,
    },
    InFlight {
        flow: u32,
        packet: String,
        packets: u64,
    },
    Stored {
        packets: u64,
    },
    Endpoints {
        flow: u32,
        counts: EndpointCounts,
    },
    Misread {
        flow: u32,
        seq: u64,
        len: u64,
        after: u64,
    },
    Reads {
        flow: u32,
        reads: Reads,
    },
}

const TRIGGERS: [CongestionKind; 3] = [
    CongestionKind::FastRetransmit,
    CongestionKind::Timeout,
    CongestionKind::Ecn,
];
const TX_KINDS: [TxKind; 5] = [
    TxKind::New,
    TxKind::Fast,
    TxKind::Recovery,
    TxKind::Timeout,
    TxKind::Probe,
];

fn trigger_name(k: CongestionKind) -> &'static str {
    match k {
        CongestionKind::FastRetransmit => "fast_retransmit",
        CongestionKind::Timeout => "timeout",
        CongestionKind::Ecn => "ecn",
    }
}

/// The value of `all` whose name is `s`.
fn named<T: Copy>(
    all: &[T],
    name: fn(T) -> &'static str,
    what: &str,
    s: &str,
) -> Result<T, String> {
    all.iter().copied().find(|&x| name(x) == s).ok_or_else(|| {
        let names: Vec<_> = all.iter().map(|&x| name(x)).collect();
        format!("{what} {s:?} is not one of {}", names.join(", "))
    })
}

impl Line {
    fn of(f: &Fact) -> Line {
        match *f {
            Fact::Drop(d) => Line::Drop {
                time_ns: d.time.as_nanos(),
                link: d.link,
                flow: d.flow,
                packet: d.kind.as_str().into(),
                seq: d.seq,
                retransmission: d.retransmission,
                sent_at_ns: d.sent_at.as_nanos(),
                cause: d.cause.as_str().into(),
            },
            Fact::Mark { flow } => Line::Mark { flow },
            Fact::Transmit {
                flow,
                seq,
                retransmission,
                kind,
            } => Line::Transmit {
                flow,
                seq,
                retransmission,
                kind: kind.as_str().into(),
            },
            Fact::LossResponse {
                flow,
                response: r,
                snd_nxt,
            } => Line::LossResponse {
                flow,
                snd_nxt,
                time_ns: r.time.as_nanos(),
                trigger: trigger_name(r.kind).into(),
                restart: r.restart,
                label: r.label.into(),
                value: r.value,
                seq: r.seq.0,
                transmissions: r.transmissions,
                cwnd_before: r.cwnd_before,
                ssthresh_after: r.ssthresh_after,
                in_recovery: r.in_recovery,
                dupacks: r.dupacks,
            },
            Fact::Acked { flow, una } => Line::Acked { flow, una },
            Fact::Report { flow } => Line::Report { flow },
            Fact::UdpSent { flow, seq } => Line::UdpSent { flow, seq },
            Fact::Delivered(d) => Line::Delivered {
                time_ns: d.time.as_nanos(),
                flow: d.flow,
                packet: d.kind.as_str().into(),
                seq: d.seq,
                sent_at_ns: d.sent_at.as_nanos(),
            },
            Fact::AckSent { flow } => Line::AckSent { flow },
            Fact::AckDelivered { flow } => Line::AckDelivered { flow },
            Fact::DataDelivered { flow } => Line::DataDelivered { flow },
            Fact::FlowState {
                time,
                flow,
                state,
                changed_only,
            } => Line::FlowState {
                time_ns: time.as_nanos(),
                flow,
                state,
                changed_only,
            },
            Fact::QueueState {
                time,
                link,
                packets,
                bytes,
            } => Line::QueueState {
                time_ns: time.as_nanos(),
                link,
                packets,
                bytes,
            },
            Fact::InFlight {
                flow,
                kind,
                packets,
            } => Line::InFlight {
                flow,
                packet: kind.as_str().into(),
                packets,
            },
            Fact::Stored { packets } => Line::Stored { packets },
            Fact::Endpoints { flow, counts } => Line::Endpoints { flow, counts },
            Fact::Misread {
                flow,
                seq,
                len,
                after,
            } => Line::Misread {
                flow,
                seq,
                len,
                after,
            },
            Fact::Reads { flow, reads } => Line::Reads { flow, reads },
        }
    }

    /// The fact; `labels` interns the verdict labels (the instruments keep them as
    /// `&'static str`, as the sender gives them: each distinct label is leaked once).
    fn fact(self, labels: &mut HashMap<String, &'static str>) -> Result<Fact, String> {
        Ok(match self {
            Line::Drop {
                time_ns,
                link,
                flow,
                packet,
                seq,
                retransmission,
                sent_at_ns,
                cause,
            } => Fact::Drop(Dropped {
                time: Time::from_nanos(time_ns),
                link,
                flow,
                kind: named(&PacketKind::ALL, PacketKind::as_str, "packet", &packet)?,
                seq,
                retransmission,
                sent_at: Time::from_nanos(sent_at_ns),
                cause: named(&DropCause::ALL, DropCause::as_str, "cause", &cause)?,
            }),
            Line::Mark { flow } => Fact::Mark { flow },
            Line::Transmit {
                flow,
                seq,
                retransmission,
                kind,
            } => Fact::Transmit {
                flow,
                seq,
                retransmission,
                kind: named(&TX_KINDS, TxKind::as_str, "kind", &kind)?,
            },
            Line::LossResponse {
                flow,
                snd_nxt,
                time_ns,
                trigger,
                restart,
                label,
                value,
                seq,
                transmissions,
                cwnd_before,
                ssthresh_after,
                in_recovery,
                dupacks,
            } => {
                let label = *labels
                    .entry(label)
                    .or_insert_with_key(|l| Box::leak(l.clone().into_boxed_str()));
                Fact::LossResponse {
                    flow,
                    snd_nxt,
                    response: LossResponse {
                        time: Time::from_nanos(time_ns),
                        kind: named(&TRIGGERS, trigger_name, "trigger", &trigger)?,
                        restart,
                        label,
                        value,
                        seq: Seq(seq),
                        transmissions,
                        cwnd_before,
                        ssthresh_after,
                        in_recovery,
                        dupacks,
                    },
                }
            }
            Line::Acked { flow, una } => Fact::Acked { flow, una },
            Line::Report { flow } => Fact::Report { flow },
            Line::UdpSent { flow, seq } => Fact::UdpSent { flow, seq },
            Line::Delivered {
                time_ns,
                flow,
                packet,
                seq,
                sent_at_ns,
            } => Fact::Delivered(Delivered {
                time: Time::from_nanos(time_ns),
                flow,
                kind: named(&PacketKind::ALL, PacketKind::as_str, "packet", &packet)?,
                seq,
                sent_at: Time::from_nanos(sent_at_ns),
            }),
            Line::AckSent { flow } => Fact::AckSent { flow },
            Line::AckDelivered { flow } => Fact::AckDelivered { flow },
            Line::DataDelivered { flow } => Fact::DataDelivered { flow },
            Line::FlowState {
                time_ns,
                flow,
                state,
                changed_only,
            } => Fact::FlowState {
                time: Time::from_nanos(time_ns),
                flow,
                state,
                changed_only,
            },
            Line::QueueState {
                time_ns,
                link,
                packets,
                bytes,
            } => Fact::QueueState {
                time: Time::from_nanos(time_ns),
                link,
                packets,
                bytes,
            },
            Line::InFlight {
                flow,
                packet,
                packets,
            } => Fact::InFlight {
                flow,
                kind: named(&PacketKind::ALL, PacketKind::as_str, "packet", &packet)?,
                packets,
            },
            Line::Stored { packets } => Fact::Stored { packets },
            Line::Endpoints { flow, counts } => Fact::Endpoints { flow, counts },
            Line::Misread {
                flow,
                seq,
                len,
                after,
            } => Fact::Misread {
                flow,
                seq,
                len,
                after,
            },
            Line::Reads { flow, reads } => Fact::Reads { flow, reads },
        })
    }
}

/// Writes `facts` as JSON lines.
pub fn write_jsonl(facts: &[Fact], out: &mut impl Write) -> std::io::Result<()> {
    for f in facts {
        serde_json::to_writer(&mut *out, &Line::of(f))?;
        out.write_all(b"\n")?;
    }
    Ok(())
}

/// Reads the facts of the JSON-lines files `paths`, one file after the other (the
/// instruments take them in that order); an error names the file and the line.
pub fn read_files<P: AsRef<std::path::Path>>(paths: &[P]) -> Result<Vec<Fact>, String> {
    let mut facts = Vec::new();
    for path in paths {
        let path = path.as_ref();
        let file = std::fs::File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let read = read_jsonl(std::io::BufReader::new(file))
            .map_err(|e| format!("{}: {e}", path.display()))?;
        facts.extend(read);
    }
    Ok(facts)
}

/// Reads facts written as JSON lines (blank lines are skipped); an error names the line.
pub fn read_jsonl(input: impl BufRead) -> Result<Vec<Fact>, String> {
    let mut labels = HashMap::new();
    let mut facts = Vec::new();
    for (n, line) in input.lines().enumerate() {
        let line = line.map_err(|e| format!("line {}: {e}", n + 1))?;
        if line.trim().is_empty() {
            continue;
        }
        let fact = serde_json::from_str::<Line>(&line)
            .map_err(|e| e.to_string())
            .and_then(|l| l.fact(&mut labels))
            .map_err(|e| format!("line {}: {e}", n + 1))?;
        facts.push(fact);
    }
    Ok(facts)
}
