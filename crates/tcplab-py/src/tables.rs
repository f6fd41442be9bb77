//! The results as Python objects: one dict per table mapping column names to numpy arrays
//! (numbers; the Rust `Vec`s become the arrays' buffers, no copy) or lists (strings), plus the
//! `conservation` and `stats` dicts and the captured pcap files. docs/results.md lists every
//! column.

use numpy::{Element, PyArray1};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString};
use std::collections::HashMap;
use tcplab_sim::instruments::timeouts::TimeoutClass;
use tcplab_sim::results::{
    Conservation, DropCause, DropLog, EventLog, FlowSeries, FlowSummary, LinkSummary, LossCause,
    QueueSeries, RunStats, SegmentLog, UdpSummary, VerdictLog,
};
use tcplab_sim::Results;

/// Builds the dict of one table, column by column.
struct Table<'py> {
    py: Python<'py>,
    dict: Bound<'py, PyDict>,
    /// One Python string per distinct `&'static str` (enum-like columns repeat a few values).
    interned: HashMap<&'static str, Bound<'py, PyString>>,
}

impl<'py> Table<'py> {
    fn new(py: Python<'py>) -> Self {
        Table {
            py,
            dict: PyDict::new(py),
            interned: HashMap::new(),
        }
    }

    /// A numeric column: the Vec becomes the numpy array's buffer.
    fn num<T: Element>(&mut self, name: &str, v: Vec<T>) -> PyResult<&mut Self> {
        self.dict.set_item(name, PyArray1::from_vec(self.py, v))?;
        Ok(self)
    }

    /// An optional numeric column: float64 with NaN for "none" (exact below 2^53).
    fn opt(&mut self, name: &str, v: Vec<Option<u64>>) -> PyResult<&mut Self> {
        let v: Vec<f64> = v
            .into_iter()
            .map(|x| x.map_or(f64::NAN, |x| x as f64))
            .collect();
        self.num(name, v)
    }

    /// An optional float column: float64 with NaN for "none".
    fn opt_f64(&mut self, name: &str, v: Vec<Option<f64>>) -> PyResult<&mut Self> {
        let v: Vec<f64> = v.into_iter().map(|x| x.unwrap_or(f64::NAN)).collect();
        self.num(name, v)
    }

    fn strings(&mut self, name: &str, v: Vec<String>) -> PyResult<&mut Self> {
        self.dict.set_item(name, PyList::new(self.py, v)?)?;
        Ok(self)
    }

    fn labels(&mut self, name: &str, v: Vec<&'static str>) -> PyResult<&mut Self> {
        let py = self.py;
        let items: Vec<Bound<'py, PyString>> = v
            .into_iter()
            .map(|s| {
                self.interned
                    .entry(s)
                    .or_insert_with(|| PyString::new(py, s))
                    .clone()
            })
            .collect();
        self.dict.set_item(name, PyList::new(py, items)?)?;
        Ok(self)
    }

    fn done(self) -> Bound<'py, PyDict> {
        self.dict
    }
}

macro_rules! column {
    ($rows:expr, $field:ident) => {
        $rows.iter().map(|r| r.$field).collect::<Vec<_>>()
    };
    ($rows:expr, $field:ident, clone) => {
        $rows.iter().map(|r| r.$field.clone()).collect::<Vec<_>>()
    };
}

fn flows_table(py: Python<'_>, rows: Vec<FlowSummary>) -> PyResult<Bound<'_, PyDict>> {
    let mut t = Table::new(py);
    t.strings("name", column!(rows, name, clone))?
        .strings("src", column!(rows, src, clone))?
        .strings("dst", column!(rows, dst, clone))?
        .strings("controller", column!(rows, controller, clone))?
        .strings("recovery", column!(rows, recovery, clone))?
        .num("start_ns", column!(rows, start_ns))?
        .num("end_ns", column!(rows, end_ns))?
        .num("completed", column!(rows, completed))?
        .num("bytes_delivered", column!(rows, bytes_delivered))?
        .num("throughput_bps", column!(rows, throughput_bps))?
        .num("goodput", column!(rows, goodput))?
        .num("segments_sent", column!(rows, segments_sent))?
        .num("bytes_sent", column!(rows, bytes_sent))?
        .num("retransmits", column!(rows, retransmits))?
        .num("retransmits_fast", column!(rows, retransmits_fast))?
        .num("retransmits_recovery", column!(rows, retransmits_recovery))?
        .num("retransmits_timeout", column!(rows, retransmits_timeout))?
        .num("retransmits_probe", column!(rows, retransmits_probe))?
        .num("fast_retransmits", column!(rows, fast_retransmits))?
        .num("recovery_restarts", column!(rows, recovery_restarts))?
        .num("probes", column!(rows, probes))?
        .num("timeouts", column!(rows, timeouts))?
        .num("loss_events", column!(rows, loss_events))?
        .num("dup_acks", column!(rows, dup_acks))?
        .num("acks_sent", column!(rows, acks_sent))?
        .num("spurious_retransmits", column!(rows, spurious_retransmits))?
        .num("data_drops", column!(rows, data_drops))?
        .num("ack_drops", column!(rows, ack_drops))?
        .opt("min_rtt_ns", column!(rows, min_rtt_ns))?
        .opt("mean_rtt_ns", column!(rows, mean_rtt_ns))?;
    // Loss classification (Veno's Table I): each array flattened by actual cause.
    let arrays: [(&str, Vec<[u64; 3]>); 4] = [
        ("ff45", column!(rows, ff45)),
        ("ff12", column!(rows, ff12)),
        ("ff_other", column!(rows, ff_other)),
        ("timeouts_by_cause", column!(rows, timeouts_by_cause)),
    ];
    for (field, by_cause) in arrays {
        for cause in LossCause::ALL {
            let v: Vec<u64> = by_cause.iter().map(|a| a[cause as usize]).collect();
            t.num(&format!("{field}_{}", cause.as_str()), v)?;
        }
    }
    t.opt_f64("ff45_accuracy", column!(rows, ff45_accuracy))?
        .opt_f64(
            "congestion_misdiagnosis",
            column!(rows, congestion_misdiagnosis),
        )?
        .opt_f64(
            "ff_value_mean_congestion",
            column!(rows, ff_value_mean_congestion),
        )?
        .opt_f64("ff_value_mean_random", column!(rows, ff_value_mean_random))?
        .num("cross_layer_reports", column!(rows, cross_layer_reports))?;
    // Timeout taxonomy (docs/timeouts.md): one column per class.
    for class in TimeoutClass::ALL {
        let v: Vec<u64> = rows
            .iter()
            .map(|r| r.timeouts_by_class[class as usize])
            .collect();
        t.num(&format!("timeouts_{}", class.as_str()), v)?;
    }
    t.num("loss_indication_p", column!(rows, loss_indication_p))?;
    eth_columns(&mut t, &rows)?;
    t.num("ecn_marks", column!(rows, ecn_marks))?
        .num("ecn_reductions", column!(rows, ecn_reductions))?
        .num("timeouts_repeated", column!(rows, timeouts_repeated))?
        .num("undos_timeout", column!(rows, undos_timeout))?
        .num("undos_recovery", column!(rows, undos_recovery))?;
    Ok(t.done())
}

/// The ETH report's loss events, dup ACKs per recovery and SACK-block use
/// (docs/eth-metrics.md).
fn eth_columns(t: &mut Table<'_>, rows: &[FlowSummary]) -> PyResult<()> {
    t.num("loss_events_single", column!(rows, loss_events_single))?
        .num("loss_events_multiple", column!(rows, loss_events_multiple))?
        .num("loss_event_drops", column!(rows, loss_event_drops))?
        .num("loss_event_max", column!(rows, loss_event_max))?;
    for (k, bin) in ["0", "1", "2", "3", "4plus"].into_iter().enumerate() {
        let v: Vec<u64> = rows.iter().map(|r| r.recoveries_by_dupacks[k]).collect();
        t.num(&format!("recoveries_dupacks_{bin}"), v)?;
    }
    t.opt_f64("dupacks_per_recovery", column!(rows, dupacks_per_recovery))?;
    for n in 0..6 {
        let carried: Vec<u64> = rows.iter().map(|r| r.sack_block_carried[n]).collect();
        let used: Vec<u64> = rows.iter().map(|r| r.sack_block_used[n]).collect();
        t.num(&format!("sack_block_{}_carried", n + 1), carried)?
            .num(&format!("sack_block_{}_used", n + 1), used)?;
    }
    t.num("dsacks_sent", column!(rows, dsacks_sent))?;
    Ok(())
}

fn udp_table(py: Python<'_>, rows: Vec<UdpSummary>) -> PyResult<Bound<'_, PyDict>> {
    let mut t = Table::new(py);
    t.strings("name", column!(rows, name, clone))?
        .strings("src", column!(rows, src, clone))?
        .strings("dst", column!(rows, dst, clone))?
        .num("packets_sent", column!(rows, packets_sent))?
        .num("packets_received", column!(rows, packets_received))?
        .num("packets_dropped", column!(rows, packets_dropped))?
        .num("throughput_bps", column!(rows, throughput_bps))?;
    Ok(t.done())
}

fn links_table(py: Python<'_>, rows: Vec<LinkSummary>) -> PyResult<Bound<'_, PyDict>> {
    let mut t = Table::new(py);
    t.strings("link", column!(rows, link, clone))?
        .labels("direction", column!(rows, direction))?
        .strings("from", column!(rows, from, clone))?
        .strings("to", column!(rows, to, clone))?
        .num("rate_bps", column!(rows, rate_bps))?
        .num("delay_ns", column!(rows, delay_ns))?
        .num("packets_sent", column!(rows, packets_sent))?
        .num("bytes_sent", column!(rows, bytes_sent))?;
    for cause in DropCause::ALL {
        let v: Vec<u64> = rows.iter().map(|r| r.drops[cause as usize]).collect();
        t.num(&format!("drops_{}", cause.as_str()), v)?;
    }
    t.num("utilization", column!(rows, utilization))?;
    t.num("ecn_marks", column!(rows, ecn_marks))?;
    Ok(t.done())
}

fn series_table(py: Python<'_>, s: FlowSeries) -> PyResult<Bound<'_, PyDict>> {
    let mut t = Table::new(py);
    t.num("flow", s.flow)?
        .num("time_ns", s.time_ns)?
        .num("cwnd", s.cwnd)?
        .num("ssthresh", s.ssthresh)?
        .num("srtt_ns", s.srtt_ns)?
        .num("rto_ns", s.rto_ns)?
        .num("in_flight", s.in_flight)?
        .num("delivered", s.delivered)?
        .num("bytes_sent", s.bytes_sent)?;
    Ok(t.done())
}

fn queues_table(py: Python<'_>, q: QueueSeries) -> PyResult<Bound<'_, PyDict>> {
    let mut t = Table::new(py);
    t.num("link", q.link)?
        .num("time_ns", q.time_ns)?
        .num("packets", q.packets)?
        .num("bytes", q.bytes)?;
    Ok(t.done())
}

fn drops_table(py: Python<'_>, d: DropLog) -> PyResult<Bound<'_, PyDict>> {
    let mut t = Table::new(py);
    t.num("time_ns", d.time_ns)?
        .num("link", d.link)?
        .labels("flow_kind", d.flow_kind)?
        .num("flow", d.flow)?
        .labels("packet", d.packet)?
        .num("seq", d.seq)?
        .num("size", d.size)?
        .labels("cause", d.cause)?
        .num(
            "rssi_dbm",
            d.rssi_dbm
                .into_iter()
                .map(|r| r.unwrap_or(f64::NAN))
                .collect::<Vec<f64>>(),
        )?;
    Ok(t.done())
}

fn events_table(py: Python<'_>, e: EventLog) -> PyResult<Bound<'_, PyDict>> {
    let mut t = Table::new(py);
    t.num("time_ns", e.time_ns)?
        .num("flow", e.flow)?
        .labels("event", e.event)?
        .labels("reason", e.reason)?
        .num("cwnd", e.cwnd)?
        .num("ssthresh", e.ssthresh)?
        .num("seq", e.seq)?
        .labels("label", e.label)?
        .num("value", e.value)?;
    Ok(t.done())
}

fn verdicts_table(py: Python<'_>, v: VerdictLog) -> PyResult<Bound<'_, PyDict>> {
    let mut t = Table::new(py);
    t.num("time_ns", v.time_ns)?
        .num("flow", v.flow)?
        .labels("trigger", v.trigger)?
        .labels("label", v.label)?
        .num("value", v.value)?
        .num("seq", v.seq)?
        .num("cwnd", v.cwnd)?
        .num("ssthresh", v.ssthresh)?
        .labels("cause", v.cause)?
        .labels("timeout_class", v.timeout_class)?
        .num("dupacks", v.dupacks)?
        .num("lost_segments", v.lost_segments)?;
    Ok(t.done())
}

fn segments_table(py: Python<'_>, s: SegmentLog) -> PyResult<Bound<'_, PyDict>> {
    let mut t = Table::new(py);
    t.num("time_ns", s.time_ns)?
        .num("flow", s.flow)?
        .num("seq", s.seq)?
        .num("len", s.len)?
        .num("retransmission", s.retransmission)?;
    Ok(t.done())
}

fn conservation_dict(py: Python<'_>, c: Conservation) -> PyResult<Bound<'_, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("ok", c.ok)?;
    d.set_item("violations", PyList::new(py, c.violations)?)?;
    d.set_item("packets_sent", c.packets_sent)?;
    d.set_item("packets_delivered", c.packets_delivered)?;
    d.set_item("packets_dropped", c.packets_dropped)?;
    d.set_item("packets_in_flight", c.packets_in_flight)?;
    Ok(d)
}

fn stats_dict(py: Python<'_>, s: RunStats) -> PyResult<Bound<'_, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("sim_time_ns", s.sim_time_ns)?;
    d.set_item("events", s.events)?;
    d.set_item("transmissions", s.transmissions)?;
    d.set_item("peak_pending_events", s.peak_pending_events)?;
    Ok(d)
}

pub(crate) fn results_to_py(py: Python<'_>, r: Results) -> PyResult<Bound<'_, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("flows", flows_table(py, r.flows)?)?;
    d.set_item("udp", udp_table(py, r.udp)?)?;
    d.set_item("links", links_table(py, r.links)?)?;
    d.set_item("series", series_table(py, r.series)?)?;
    d.set_item("queues", queues_table(py, r.queues)?)?;
    d.set_item("drops", drops_table(py, r.drops)?)?;
    d.set_item("events", events_table(py, r.events)?)?;
    d.set_item("segments", segments_table(py, r.segments)?)?;
    d.set_item("verdicts", verdicts_table(py, r.verdicts)?)?;
    d.set_item("conservation", conservation_dict(py, r.conservation)?)?;
    d.set_item("stats", stats_dict(py, r.stats)?)?;
    d.set_item("pcap", pcap_list(py, r.pcap.files)?)?;
    let addresses = PyDict::new(py);
    for (name, addr) in r.pcap.addresses {
        addresses.set_item(name, addr)?;
    }
    d.set_item("pcap_addresses", addresses)?;
    Ok(d)
}

/// Captured pcap files: `[{name, link, directions, data (bytes), counts {...}}]`.
fn pcap_list(
    py: Python<'_>,
    files: Vec<tcplab_sim::pcap::PcapFile>,
) -> PyResult<Bound<'_, PyList>> {
    let out = PyList::empty(py);
    for f in files {
        let d = PyDict::new(py);
        d.set_item("name", f.name)?;
        d.set_item("link", f.link)?;
        d.set_item("directions", PyList::new(py, f.directions)?)?;
        d.set_item("data", pyo3::types::PyBytes::new(py, &f.bytes))?;
        let c = PyDict::new(py);
        let k = &f.counts;
        for (name, v) in [
            ("packets", k.packets),
            ("tcp_data", k.tcp_data),
            ("tcp_retransmissions", k.tcp_retransmissions),
            ("tcp_acks", k.tcp_acks),
            ("acks_with_sack", k.acks_with_sack),
            ("sack_blocks", k.sack_blocks),
            ("sack_bytes", k.sack_bytes),
            ("sack_blocks_cut", k.sack_blocks_cut),
            ("udp", k.udp),
        ] {
            c.set_item(name, v)?;
        }
        d.set_item("counts", c)?;
        out.append(d)?;
    }
    Ok(out)
}
