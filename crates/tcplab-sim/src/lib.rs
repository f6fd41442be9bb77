//! tcplab-sim: a packet-level discrete-event simulator for tcplab-core endpoints.
//!
//! One concept per module: [`engine`] (event queue, lazy timers), [`rng`] (seeded streams),
//! [`packet`] (packets, header model, pool), [`queue`] (disciplines), [`loss`] (random loss
//! models), [`link`] (one link direction), [`link_direction`] (a link direction driven
//! outside the engine, for the live emulator), [`delivery_trace`]
//! (trace-driven link capacity, Mahimahi's format), [`pcap`] (pcap export), [`node`] (nodes, routing), [`topology`] (preset
//! expansion), [`network`] (packets hop by hop), [`flow_route`] (routes pinned per flow), [`flow`] (TCP transfers), [`handshake`] (a real-TCP flow's first RTT sample), [`app`] (UDP CBR),
//! [`trace`] (recording of logs, the byte budget), [`estimate`] (what a run will record, and its limit), [`census`] (the end-of-run census stated as facts), [`summary`] (summary
//! rows), [`instruments`] (measurement from facts: drop log, loss classification, timeout
//! taxonomy, loss events, delay, conservation, series), [`columns`] (the results as typed columns: the column schema),
//! [`scenario`] (the scenario types: serde only, a leaf), [`error`] (SimError), [`validate`]
//! (scenario checks), [`builder`] (Rust shorthands), [`sim`] (driver), [`wlan`] (802.11b
//! segment), [`wlan_segment`] (a WLAN segment driven outside the engine, for the live
//! emulator).

pub mod app;
pub mod builder;
pub mod census;
pub mod columns;
pub mod delivery_trace;
pub mod engine;
pub mod error;
pub mod estimate;
pub mod field_rules;
pub mod fifo;
pub mod flow;
pub mod flow_route;
pub mod framing_rules;
pub mod handshake;
pub mod instruments;
pub mod labels;
pub mod link;
pub mod link_direction;
pub mod loss;
pub mod network;
pub mod node;
pub mod packet;
pub mod pcap;
pub mod queue;
pub mod results;
pub mod rng;
pub mod scenario;
pub mod sim;
pub mod summary;
pub mod topology;
pub mod trace;
pub mod validate;
pub mod wlan;
pub mod wlan_segment;

pub use error::SimError;
pub use results::Results;
pub use scenario::Scenario;
pub use sim::Simulation;
