//! The results as Python objects: one dict per table mapping column names to numpy arrays
//! (numbers; the Rust `Vec`s become the arrays' buffers, no copy) or lists (strings), plus the
//! `conservation` and `stats` dicts and the captured pcap files. The tables and their columns
//! are `tcplab_sim::columns` (the one column schema); this module only converts values.

use numpy::{Element, PyArray1};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString};
use std::collections::HashMap;
use tcplab_sim::columns::{tables, Table, Values};
use tcplab_sim::results::{Conservation, RunStats};
use tcplab_sim::Results;

/// Builds the dict of one table, column by column.
struct Dict<'py> {
    py: Python<'py>,
    dict: Bound<'py, PyDict>,
    /// One Python string per distinct `&'static str` (enum-like columns repeat a few values).
    interned: HashMap<&'static str, Bound<'py, PyString>>,
}

impl<'py> Dict<'py> {
    fn new(py: Python<'py>) -> Self {
        Dict {
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

/// One table's dict, column by column, in the schema's order.
fn table_dict(py: Python<'_>, table: Table) -> PyResult<Bound<'_, PyDict>> {
    let mut t = Dict::new(py);
    for c in table.columns {
        let name = c.name.as_str();
        match c.values {
            Values::Str(v) => t.strings(name, v)?,
            Values::Label(v) => t.labels(name, v)?,
            Values::Bool(v) => t.num(name, v)?,
            Values::U8(v) => t.num(name, v)?,
            Values::U32(v) => t.num(name, v)?,
            Values::U64(v) => t.num(name, v)?,
            Values::F64(v) => t.num(name, v)?,
            Values::OptU64(v) => t.opt(name, v)?,
            Values::OptF64(v) => t.opt_f64(name, v)?,
        };
    }
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

pub(crate) fn results_to_py(py: Python<'_>, mut r: Results) -> PyResult<Bound<'_, PyDict>> {
    let d = PyDict::new(py);
    for table in tables(&mut r) {
        d.set_item(table.name, table_dict(py, table)?)?;
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
