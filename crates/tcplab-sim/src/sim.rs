//! The simulation driver. (Being written: see the simulator task.)

use crate::{Results, Scenario};
use std::fmt;
use tcplab_core::Time;

/// Why a scenario cannot run; the message names the field, the value and what is allowed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SimError(pub String);

impl fmt::Display for SimError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}
impl std::error::Error for SimError {}

pub struct Simulation {}

impl Simulation {
    /// Validates the scenario and builds the network, flows and random streams.
    pub fn new(_scenario: &Scenario) -> Result<Self, SimError> {
        todo!("simulator")
    }
    /// Processes every event up to and including `t` (capped at the end of the run).
    pub fn run_until(&mut self, _t: Time) {
        todo!("simulator")
    }
    /// Simulated time reached so far.
    pub fn now(&self) -> Time {
        todo!("simulator")
    }
    /// When the run ends (the scenario's duration).
    pub fn end_time(&self) -> Time {
        todo!("simulator")
    }
    /// The run is over: end time reached, or every flow finished and nothing is pending.
    pub fn is_done(&self) -> bool {
        todo!("simulator")
    }
    /// Ends the run: summaries, conservation check, columns.
    pub fn finish(self) -> Results {
        todo!("simulator")
    }
    /// Runs a scenario to the end.
    pub fn run(scenario: &Scenario) -> Result<Results, SimError> {
        let mut s = Simulation::new(scenario)?;
        let end = s.end_time();
        s.run_until(end);
        Ok(s.finish())
    }
}
