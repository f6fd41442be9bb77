//! tcplab-sim: a packet-level discrete-event simulator for tcplab-core endpoints.

pub mod results;
pub mod scenario;

pub use results::Results;
pub use scenario::Scenario;
