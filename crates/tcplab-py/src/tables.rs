//! The results as Python objects: one [`ArrowTable`] per table (an Arrow record batch:
//! `polars.DataFrame(table)` reads it, its numbers without a copy), plus the `conservation`
//! and `stats` dicts and the captured pcap files. The tables and their columns are
//! `tcplab_sim::columns` (the one column schema); this module only hands them over.

use crate::arrow::ArrowTable;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use tcplab_sim::columns::tables;
use tcplab_sim::results::{Conservation, RunStats};
use tcplab_sim::Results;

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

pub(crate) fn results_to_py(py: Python<'_>, mut r: Results) -> PyResult<Bound<'_, PyDict>> {
    let d = PyDict::new(py);
    for table in tables(&mut r) {
        d.set_item(table.name, Bound::new(py, ArrowTable::new(table))?)?;
    }
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
