//! tcplab-sim: a packet-level discrete-event simulator for tcplab-core endpoints.

pub mod results;
pub mod scenario;
pub mod sim;

pub use results::Results;
pub use scenario::Scenario;
pub use sim::{SimError, Simulation};
