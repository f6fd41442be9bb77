//! The paper settings of the claims tests: each is a shipped scenario file
//! (`scenarios/<name>.toml`), read here as its canonical scenario JSON
//! (`tests/settings/<name>.json`, written by `scripts/claims_settings.py`; the Python test
//! `tests/test_claims_settings.py` fails when the two disagree). A claims test starts from
//! the setting and changes only what its experiment varies.

use tcplab_core::ControllerSpec;
use tcplab_sim::scenario::{Dumbbell, LinkDir, LossSpec, Scenario, Topology, TraceSpec};

/// The shipped setting `name` with its traces off (the claims read only the summaries; the
/// files record series and logs for plots).
pub fn setting(name: &str) -> Scenario {
    let path = format!("{}/tests/settings/{name}.json", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{path}: {e} (scripts/claims_settings.py writes it)"));
    let mut s: Scenario = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"));
    s.trace = TraceSpec::off();
    s
}

/// The dumbbell of a dumbbell setting.
pub fn dumbbell(s: &mut Scenario) -> &mut Dumbbell {
    match &mut s.topology {
        Topology::Dumbbell(d) => d,
        t => panic!("{}: not a dumbbell: {t:?}", s.name),
    }
}

/// Random loss `p` per packet on `dir` (none at all when `p` is 0).
pub fn set_loss(dir: &mut LinkDir, p: f64) {
    dir.loss = if p > 0.0 {
        LossSpec::Bernoulli { p }
    } else {
        LossSpec::None
    };
}

/// The setting's flows, in order, with the controllers `ccs` (one per flow).
pub fn set_controllers(s: &mut Scenario, ccs: &[ControllerSpec]) {
    assert_eq!(s.flows.len(), ccs.len(), "{}: flows", s.name);
    for (f, cc) in s.flows.iter_mut().zip(ccs) {
        f.controller = cc.clone();
    }
}
