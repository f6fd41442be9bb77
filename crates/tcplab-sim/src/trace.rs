//! Recording of what a run's [`TraceSpec`] asks for: flow and queue series, drops, the
//! senders' event logs and every data segment sent. With everything off a recorder costs a
//! few branches per event and no memory.

use crate::packet::DropCause;
use crate::packet::Packet;
use crate::queue::Occupancy;
use crate::results::{DropLog, EventLog, FlowSeries, QueueSeries, SegmentLog};
use crate::scenario::{SeriesMode, TraceSpec};
use tcplab_core::{DataSegment, LogRecord, Sender, SenderSnapshot, Time};

/// The sampled state of one flow: one row of the series table without flow and time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FlowSample {
    pub cwnd: u64,
    pub ssthresh: u64,
    /// 0 until the first RTT sample.
    pub srtt_ns: u64,
    pub rto_ns: u64,
    pub in_flight: u64,
    /// Application bytes delivered so far.
    pub delivered: u64,
    /// Payload bytes the sender has put on the wire so far, retransmissions included.
    pub bytes_sent: u64,
}

impl FlowSample {
    pub fn new(s: &SenderSnapshot, delivered: u64, bytes_sent: u64) -> Self {
        FlowSample {
            cwnd: s.cwnd,
            ssthresh: s.ssthresh,
            srtt_ns: s.srtt.map_or(0, |d| d.as_nanos()),
            rto_ns: s.rto.as_nanos(),
            in_flight: s.in_flight,
            delivered,
            bytes_sent,
        }
    }

    /// The sample of a sender now.
    pub fn of(sender: &Sender, delivered: u64) -> Self {
        FlowSample::new(&sender.snapshot(), delivered, sender.counters().bytes_sent)
    }
}

pub struct Recorder {
    pub series_mode: SeriesMode,
    pub events_on: bool,
    pub segments_on: bool,
    pub drops_on: bool,
    pub series: FlowSeries,
    pub queues: QueueSeries,
    pub drops: DropLog,
    pub events: EventLog,
    pub segments: SegmentLog,
    /// Last row recorded per flow (change mode).
    last: Vec<Option<FlowSample>>,
}

impl Recorder {
    pub fn new(spec: &TraceSpec, flows: usize) -> Self {
        Recorder {
            series_mode: spec.series,
            events_on: spec.events,
            segments_on: spec.segments,
            drops_on: spec.drops,
            series: FlowSeries::default(),
            queues: QueueSeries::default(),
            drops: DropLog::default(),
            events: EventLog::default(),
            segments: SegmentLog::default(),
            last: vec![None; flows],
        }
    }

    /// Change mode records flows and queues after every change.
    #[inline]
    pub fn on_change(&self) -> bool {
        self.series_mode == SeriesMode::Change
    }

    /// Change mode: a row when the flow's sample differs from the last one recorded.
    pub fn flow_changed(&mut self, now: Time, flow: u32, s: FlowSample) {
        let last = &mut self.last[flow as usize];
        if *last != Some(s) {
            *last = Some(s);
            self.flow_row(now, flow, s);
        }
    }

    /// A row whatever changed (interval mode).
    pub fn flow_row(&mut self, now: Time, flow: u32, s: FlowSample) {
        let t = &mut self.series;
        t.flow.push(flow);
        t.time_ns.push(now.as_nanos());
        t.cwnd.push(s.cwnd);
        t.ssthresh.push(s.ssthresh);
        t.srtt_ns.push(s.srtt_ns);
        t.rto_ns.push(s.rto_ns);
        t.in_flight.push(s.in_flight);
        t.delivered.push(s.delivered);
        t.bytes_sent.push(s.bytes_sent);
    }

    /// A queue row (every change in change mode, every interval in interval mode).
    pub fn queue_row(&mut self, now: Time, link: u32, held: Occupancy) {
        let q = &mut self.queues;
        q.link.push(link);
        q.time_ns.push(now.as_nanos());
        q.packets.push(held.packets);
        q.bytes.push(held.bytes);
    }

    pub fn drop(&mut self, now: Time, link: u32, p: &Packet, cause: DropCause) {
        self.drop_rssi(now, link, p, cause, None);
    }

    /// A drop with the received power of the last attempt (WLAN MAC drops; None elsewhere).
    pub fn drop_rssi(
        &mut self,
        now: Time,
        link: u32,
        p: &Packet,
        cause: DropCause,
        rssi: Option<f64>,
    ) {
        if !self.drops_on {
            return;
        }
        let kind = p.kind();
        let d = &mut self.drops;
        d.time_ns.push(now.as_nanos());
        d.link.push(link);
        d.flow_kind.push(kind.flow_kind());
        d.flow.push(p.flow);
        d.packet.push(kind.as_str());
        d.seq.push(p.seq());
        d.size.push(p.size);
        d.cause.push(cause.as_str());
        d.rssi_dbm.push(rssi);
    }

    pub fn segment(&mut self, now: Time, flow: u32, seg: &DataSegment) {
        if !self.segments_on {
            return;
        }
        let s = &mut self.segments;
        s.time_ns.push(now.as_nanos());
        s.flow.push(flow);
        s.seq.push(seg.seq.0);
        s.len.push(seg.len);
        s.retransmission.push(seg.retransmission);
    }

    pub fn sender_log(&mut self, flow: u32, records: &[LogRecord]) {
        let e = &mut self.events;
        for r in records {
            e.time_ns.push(r.time.as_nanos());
            e.flow.push(flow);
            e.event.push(r.event.name());
            e.reason.push(r.event.reason());
            e.cwnd.push(r.cwnd);
            e.ssthresh.push(r.ssthresh);
            e.seq.push(r.seq.0);
            e.label.push(r.label);
            e.value.push(r.value);
        }
    }
}
