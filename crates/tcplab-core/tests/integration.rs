//! tcplab-core's integration tests as one test binary: one crate to compile and one link
//! instead of one per file (each file is a module; `cargo test -p tcplab-core --test
//! integration <file>::` runs one file's tests).

mod common;

mod ecn_sender;
mod eth_metrics;
mod loopback;
mod pacing;
mod receiver;
mod receiver_eth_sack;
mod receiver_linux_trace;
mod receiver_quickack;
mod recovery_eth;
mod rfc_conformance;
mod sender_script;
mod spurious;
