//! Python bindings (module `tcplab._native`).
//!
//! One class, [`PySimulation`] (`tcplab._native.Simulation`), drives a `tcplab_sim::Simulation`
//! from a canonical-unit scenario JSON. Every call into Rust runs with the GIL released and
//! inside `catch_unwind`: a Rust panic becomes `RuntimeError("internal error: ...")` and
//! never crosses into Python. Results come back as one Arrow record batch per table
//! (`ArrowTable`, the PyCapsule protocol: numeric columns without a copy, no per-row Python
//! objects).
//!
//! Modules: `simulation` (the pyclass), `tables` (the results), `arrow` (a table as Arrow
//! through the C data interface), `panics` (panics
//! become Python errors), `pycontroller` (controllers written in Python); this file defines
//! the module and its functions.

mod arrow;
mod memory;
mod panics;
mod pycontroller;
mod simulation;
mod tables;

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use tcplab_core::TcpConfig;
use tcplab_sim::scenario::Topology;
use tcplab_sim::topology::graph::graph;
use tcplab_sim::Scenario;

use panics::{install_panic_hook, internal_error, no_panic};
use simulation::PySimulation;

/// Runs `f` with the GIL released and panics caught: `Err(message)` becomes ValueError, a
/// panic RuntimeError("internal error: ...").
fn detached<T: Send>(py: Python<'_>, f: impl FnOnce() -> Result<T, String> + Send) -> PyResult<T> {
    match py.detach(move || no_panic(f)) {
        Err(panic) => Err(internal_error(&panic)),
        Ok(Err(msg)) => Err(PyValueError::new_err(msg)),
        Ok(Ok(v)) => Ok(v),
    }
}

/// Names of the congestion controllers the simulator can build: the built-ins, then the
/// Python controllers registered in this process.
#[pyfunction]
fn controllers() -> Vec<&'static str> {
    let mut names = tcplab_core::cc::CONTROLLERS.to_vec();
    names.extend(pycontroller::registered_names());
    names
}

/// Names of the loss-recovery strategies the simulator can build.
#[pyfunction]
fn recoveries() -> Vec<&'static str> {
    tcplab_core::recovery::RECOVERIES.to_vec()
}

/// Every component the simulator can build, with its one-line description, from the one
/// registry a run uses (built-ins, then this process's Python controllers):
/// `[(kind, name, description)]`, kind `"controller"` or `"recovery"`.
#[pyfunction]
fn components() -> Vec<(&'static str, String, String)> {
    let r = pycontroller::registries(&pycontroller::RunError::default());
    let controllers = r.controllers.entries().iter().map(|e| ("controller", e));
    let recoveries = r.recoveries.entries().iter().map(|e| ("recovery", e));
    controllers
        .map(|(k, e)| (k, e.name.clone(), e.description.clone()))
        .chain(recoveries.map(|(k, e)| (k, e.name.clone(), e.description.clone())))
        .collect()
}

/// Version of the Rust crates this module was built from.
#[pyfunction]
fn version() -> &'static str {
    env!("CARGO_PKG_VERSION")
}

/// The default per-connection TCP settings (`TcpConfig::default()`) as canonical JSON.
#[pyfunction]
fn default_tcp_config_json() -> PyResult<String> {
    no_panic(|| serde_json::to_string(&TcpConfig::default()))
        .map_err(|m| internal_error(&m))?
        .map_err(|e| internal_error(&e.to_string()))
}

/// Names of the TCP profiles (`tcplab_core::Profile`).
#[pyfunction]
fn profiles() -> Vec<&'static str> {
    tcplab_core::Profile::NAMES.to_vec()
}

/// A profile's defaults as canonical JSON: `{"tcp": TcpConfig, "controller": spec or null,
/// "recovery": spec or null, "controller_params": {controller: params the profile adds}}`
/// (null: flows must name one). Raises ValueError for an unknown profile.
#[pyfunction]
fn profile_json(name: &str) -> PyResult<String> {
    let p = tcplab_core::Profile::parse(name).map_err(|e| PyValueError::new_err(e.to_string()))?;
    let added: serde_json::Map<String, serde_json::Value> = tcplab_core::cc::CONTROLLERS
        .iter()
        .filter_map(|c| {
            let mut spec = tcplab_core::ControllerSpec::named(c);
            p.complete_controller(&mut spec);
            let params = serde_json::to_value(&spec.params).ok()?;
            (!spec.params.is_empty()).then(|| (c.to_string(), params))
        })
        .collect();
    let v = serde_json::json!({
        "tcp": p.tcp(),
        "controller": p.controller(),
        "recovery": p.recovery(),
        "controller_params": added,
    });
    Ok(v.to_string())
}

/// A controller a flow named (`{"name", "params"}` JSON) with what profile `profile` adds to
/// it (`Profile::complete_controller`, the one home of that rule), as JSON. Raises ValueError
/// for an unknown profile or a JSON that is not a controller.
#[pyfunction]
fn complete_controller_json(profile: &str, spec: &str) -> PyResult<String> {
    let p =
        tcplab_core::Profile::parse(profile).map_err(|e| PyValueError::new_err(e.to_string()))?;
    let mut spec: tcplab_core::ControllerSpec = serde_json::from_str(spec)
        .map_err(|e| PyValueError::new_err(format!("controller: {e}")))?;
    p.complete_controller(&mut spec);
    serde_json::to_string(&spec).map_err(|e| PyValueError::new_err(format!("controller: {e}")))
}

/// The first rule a TCP configuration (canonical JSON) breaks, by `TcpConfig::validate` (the
/// one home of these rules), as JSON: `{"field", "rule", "value", "limit", "message"}`
/// (`tcplab_core::ConfigError`), or None when it is acceptable. Raises ValueError when the
/// JSON is not a TCP configuration.
#[pyfunction]
fn tcp_config_problem_json(py: Python<'_>, json: &str) -> PyResult<Option<String>> {
    let json = json.to_owned();
    detached(py, move || -> Result<Option<String>, String> {
        let c: TcpConfig = serde_json::from_str(&json).map_err(|e| format!("tcp: {e}"))?;
        match c.validate() {
            Ok(()) => Ok(None),
            Err(e) => serde_json::to_string(&e)
                .map(Some)
                .map_err(|e| format!("tcp: {e}")),
        }
    })
}

/// Parses a canonical scenario JSON into the simulator's `Scenario` and serializes it back:
/// the simulator's reading of the scenario, every default filled in. Raises ValueError when
/// the JSON does not have the schema (it does not run the simulator's validation).
#[pyfunction]
fn scenario_json_roundtrip(py: Python<'_>, json: &str) -> PyResult<String> {
    let json = json.to_owned();
    detached(py, move || scenario_json(&json, serde_json::to_string))
}

/// Parses `json` as a `Scenario` and returns the JSON `f` makes of it.
fn scenario_json(
    json: &str,
    f: impl FnOnce(&Scenario) -> serde_json::Result<String>,
) -> Result<String, String> {
    let scenario: Scenario =
        serde_json::from_str(json).map_err(|e| format!("scenario JSON: {e}"))?;
    f(&scenario).map_err(|e| format!("scenario JSON: {e}"))
}

/// The graph a canonical topology (the scenario's `topology` JSON) expands to, as JSON:
/// `{"nodes": [{name, kind}], "links": [{from, to, forward, reverse, spec_path}],
/// "default_pairs": [[src, dst]], "problems": [...]}` (`tcplab_sim::topology::graph`).
/// Raises ValueError when the JSON is not a topology.
#[pyfunction]
fn topology_graph_json(py: Python<'_>, json: &str) -> PyResult<String> {
    let json = json.to_owned();
    detached(py, move || -> Result<String, String> {
        let t: Topology = serde_json::from_str(&json).map_err(|e| format!("topology: {e}"))?;
        serde_json::to_string(&graph(&t)).map_err(|e| format!("topology: {e}"))
    })
}

/// The live emulator's plan of a canonical scenario (`tcplab_live::plan::Plan::to_json`):
/// the address prefix, the devices' MTU, hosts and their addresses, routers, links, 802.11b
/// hops and flows, and `flow_problems` (`tcplab_live::plan::flow_problems`: what a live run
/// of its flows could not send, one line each). Raises ValueError with one line when the
/// emulator refuses the scenario.
#[pyfunction]
fn emulator_plan_json(py: Python<'_>, json: &str) -> PyResult<String> {
    let json = json.to_owned();
    detached(py, move || -> Result<String, String> {
        let s: Scenario = serde_json::from_str(&json).map_err(|e| format!("scenario: {e}"))?;
        let mut plan = tcplab_live::plan::Plan::from_scenario(&s)?.to_json();
        plan["flow_problems"] = tcplab_live::plan::flow_problems(&s).into();
        serde_json::to_string(&plan).map_err(|e| format!("scenario: {e}"))
    })
}

/// The results' tables and columns as JSON, in order (`tcplab_sim::columns::schema`):
/// `[{"name": table, "columns": [{name, dtype, nullable, unit, description}]}]`.
#[pyfunction]
fn results_schema_json() -> PyResult<String> {
    no_panic(|| serde_json::to_string(&tcplab_sim::columns::schema()))
        .map_err(|m| internal_error(&m))?
        .map_err(|e| internal_error(&e.to_string()))
}

/// The scenario format's enumerations and a link direction's defaults as JSON
/// (`tcplab_sim::scenario::vocabulary`): `{topology: [kinds], queue: [...], ..., defaults}`.
#[pyfunction]
fn scenario_vocabulary_json() -> PyResult<String> {
    no_panic(|| serde_json::to_string(&tcplab_sim::scenario::vocabulary::vocabulary()))
        .map_err(|m| internal_error(&m))?
        .map_err(|e| internal_error(&e.to_string()))
}

/// The WLAN fields' vocabulary as JSON (`tcplab_sim::topology::wlan::vocabulary`): rates,
/// channel and pipe presets, MAC and channel defaults.
#[pyfunction]
fn wlan_vocabulary_json() -> PyResult<String> {
    no_panic(|| serde_json::to_string(&tcplab_sim::topology::wlan::vocabulary()))
        .map_err(|m| internal_error(&m))?
        .map_err(|e| internal_error(&e.to_string()))
}

/// The simulator's checks of a canonical scenario (`tcplab_sim::validate::check`), as JSON:
/// `[{"path", "rule", "value", "limit", "message"}]`, empty when it can run. Raises
/// ValueError when the JSON does not have the schema.
#[pyfunction]
fn scenario_problems_json(py: Python<'_>, json: &str) -> PyResult<String> {
    let json = json.to_owned();
    // Python controllers registered in this process count as known names.
    let registries = pycontroller::registries(&pycontroller::RunError::default());
    detached(py, move || {
        scenario_json(&json, |s| {
            serde_json::to_string(&tcplab_sim::validate::check(s, &registries))
        })
    })
}

/// Reads a delivery trace in Mahimahi's format (`tcplab_sim::delivery_trace`), bounded:
/// its opportunities in ms and its mean rate in bit/s. Raises ValueError with one line
/// ("line 3: ...", without the file's name) for a file that cannot be read or is malformed.
#[pyfunction]
fn read_delivery_trace(py: Python<'_>, path: &str) -> PyResult<(Vec<u64>, u64)> {
    let path = std::path::PathBuf::from(path);
    detached(py, move || {
        let t = tcplab_sim::delivery_trace::DeliveryTrace::read(&path).map_err(|e| e.0)?;
        let rate = t.mean_rate();
        Ok((t.ms().to_vec(), rate))
    })
}

/// The access links of a preset when the scenario gives none, for a bottleneck whose
/// fastest direction carries `bottleneck_rate` bit/s (`Dumbbell::default_access`), as the
/// canonical JSON of a duplex link.
#[pyfunction]
fn default_access_json(bottleneck_rate: u64) -> PyResult<String> {
    no_panic(|| {
        serde_json::to_string(&tcplab_sim::scenario::Dumbbell::default_access(
            bottleneck_rate,
        ))
    })
    .map_err(|m| internal_error(&m))?
    .map_err(|e| internal_error(&e.to_string()))
}

/// The loss times and intervals of a time-trace file from its lines
/// (`tcplab_sim::loss::time_trace::from_lines`): JSON `[[line, [ns, ...]], ...]` in,
/// JSON `{"times": [...], "intervals": [[start, end], ...], "problem": null}` out, or with
/// `problem` the first line that breaks a rule (`{path: "line N", rule, value, limit,
/// message}`) for the reader to word. Raises ValueError when the JSON does not have that shape.
#[pyfunction]
fn time_trace_lines_json(py: Python<'_>, json: &str) -> PyResult<String> {
    let json = json.to_owned();
    detached(py, move || {
        let lines: Vec<(u64, Vec<tcplab_core::Dur>)> =
            serde_json::from_str(&json).map_err(|e| format!("time-trace lines: {e}"))?;
        let out = match tcplab_sim::loss::time_trace::from_lines(&lines) {
            Ok((times, intervals)) => {
                serde_json::json!({"times": times, "intervals": intervals, "problem": null})
            }
            Err(problem) => serde_json::json!({"times": [], "intervals": [], "problem": problem}),
        };
        Ok(out.to_string())
    })
}

/// Panics inside Rust, to test that panics reach Python as RuntimeError (tests only).
#[pyfunction]
fn _panic_for_tests(py: Python<'_>, message: &str) -> PyResult<()> {
    let message = message.to_owned();
    py.detach(move || no_panic(move || -> () { panic!("{message}") }))
        .map_err(|m| internal_error(&m))
}

/// Runs the instruments on the facts of the JSON-lines files `paths` (read one after the
/// other) of `tcp_flows` TCP and `udp_flows` UDP flows, named `flow{i}` and `udp{i}`: the
/// results dict of `Simulation.finish()` with what the instruments measure (the `flows` and
/// `udp` rows' instrument columns, `verdicts`, `delay`, `delay_histogram`, `series`,
/// `queues`, `conservation`, and `delay_series` in intervals of `delay_interval_ns` when
/// given); the other tables empty. A file or line that cannot be read: ValueError naming it.
#[pyfunction]
#[pyo3(signature = (paths, tcp_flows, udp_flows, delay_interval_ns=None))]
fn replay_facts<'py>(
    py: Python<'py>,
    paths: Vec<String>,
    tcp_flows: usize,
    udp_flows: usize,
    delay_interval_ns: Option<u64>,
) -> PyResult<Bound<'py, pyo3::types::PyDict>> {
    let results = detached(py, move || {
        let facts = tcplab_sim::instruments::record::read_files(&paths)?;
        tcplab_sim::instruments::check_flows(&facts, tcp_flows, udp_flows)?;
        let tcp: Vec<String> = (0..tcp_flows).map(|i| format!("flow{i}")).collect();
        let udp: Vec<String> = (0..udp_flows).map(|i| format!("udp{i}")).collect();
        let interval = delay_interval_ns
            .filter(|&ns| ns > 0)
            .map(tcplab_core::Dur::from_nanos);
        let m = tcplab_sim::instruments::replay_with(tcp_flows, udp_flows, interval, facts);
        Ok(m.into_results(&tcp, &udp))
    })?;
    tables::results_to_py(py, results)
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    install_panic_hook();
    m.add_class::<PySimulation>()?;
    m.add_class::<arrow::ArrowTable>()?;
    m.add(
        "DEFAULT_MAX_RECORD_MB",
        tcplab_sim::estimate::DEFAULT_MAX_RECORD_MB,
    )?;
    m.add_function(wrap_pyfunction!(controllers, m)?)?;
    m.add_function(wrap_pyfunction!(simulation::check_scenario, m)?)?;
    m.add_function(wrap_pyfunction!(recoveries, m)?)?;
    m.add_function(wrap_pyfunction!(components, m)?)?;
    m.add_function(wrap_pyfunction!(version, m)?)?;
    m.add_function(wrap_pyfunction!(memory::release_freed_memory, m)?)?;
    m.add_function(wrap_pyfunction!(default_tcp_config_json, m)?)?;
    m.add_function(wrap_pyfunction!(tcp_config_problem_json, m)?)?;
    m.add_function(wrap_pyfunction!(profiles, m)?)?;
    m.add_function(wrap_pyfunction!(profile_json, m)?)?;
    m.add_function(wrap_pyfunction!(complete_controller_json, m)?)?;
    m.add_function(wrap_pyfunction!(scenario_json_roundtrip, m)?)?;
    m.add_function(wrap_pyfunction!(topology_graph_json, m)?)?;
    m.add_function(wrap_pyfunction!(emulator_plan_json, m)?)?;
    m.add_function(wrap_pyfunction!(results_schema_json, m)?)?;
    m.add_function(wrap_pyfunction!(scenario_problems_json, m)?)?;
    m.add_function(wrap_pyfunction!(wlan_vocabulary_json, m)?)?;
    m.add_function(wrap_pyfunction!(scenario_vocabulary_json, m)?)?;
    m.add_function(wrap_pyfunction!(read_delivery_trace, m)?)?;
    m.add_function(wrap_pyfunction!(default_access_json, m)?)?;
    m.add_function(wrap_pyfunction!(time_trace_lines_json, m)?)?;
    m.add_function(wrap_pyfunction!(_panic_for_tests, m)?)?;
    m.add_function(wrap_pyfunction!(replay_facts, m)?)?;
    pycontroller::add_to(m)?;
    Ok(())
}
