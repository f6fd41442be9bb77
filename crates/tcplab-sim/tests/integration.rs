//! tcplab-sim's integration tests as one test binary: one crate to compile and one link
//! instead of one per file (each file is a module; `cargo test -p tcplab-sim --test
//! integration <file>::` runs one file's tests).

mod common;

mod bbr;
mod claims_areno;
mod claims_red;
mod claims_veno;
mod claims_venoplus;
mod claims_wlan;
mod classification;
mod conn_tshark;
mod conservation;
mod conservation_series;
mod delay;
mod delay_series;
mod delivery_trace;
mod determinism;
mod engine;
mod eth_metrics;
mod eth_sack_style;
mod fairness;
mod instruments;
mod link;
mod pcap;
mod record_bounds;
mod red;
mod registry;
mod schedule;
mod sqrt_law;
mod timeout_taxonomy;
mod topologies;
mod trace;
mod udp;
mod validation;
mod wlan;
