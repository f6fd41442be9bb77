//! The `Simulation` pyclass (`tcplab._native.Simulation`): a `tcplab_sim::Simulation` driven
//! from Python, every call with the GIL released and inside `catch_unwind`.

use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::sync::Mutex;
use tcplab_core::Time;
use tcplab_sim::{Scenario, Simulation};

use crate::panics::{internal_error, no_panic};
use crate::pycontroller::{registries, RunError};
use crate::tables::results_to_py;

// The binding runs simulations on threads other than the one that built them (the GIL is
// released while they run): the simulator must stay `Send`.
const _: fn() = || {
    fn assert_send<T: Send>() {}
    assert_send::<Simulation>();
};

const FINISHED: &str = "Simulation.finish() was already called";

/// A call that could not run: a misuse (RuntimeError as is) or a panic (internal error).
/// `max_record_mb` (None: the default) in bytes; ValueError unless a number of MB > 0.
fn record_limit(max_record_mb: Option<f64>) -> PyResult<u64> {
    match max_record_mb {
        None => Ok(tcplab_sim::estimate::DEFAULT_MAX_RECORD_MB << 20),
        Some(mb) if mb.is_finite() && mb > 0.0 => {
            Ok((mb * (1u64 << 20) as f64).min(u64::MAX as f64) as u64)
        }
        Some(mb) => Err(PyValueError::new_err(format!(
            "max_record_mb = {mb}: expected a number of MB > 0"
        ))),
    }
}

/// What `Simulation(scenario_json, max_record_mb)` would refuse (ValueError, one line),
/// without building the run (`Simulation::check`): the scenario's rules, each flow's
/// settings and components, the recording estimate. With the GIL released.
#[pyfunction]
#[pyo3(signature = (scenario_json, max_record_mb=None))]
pub(crate) fn check_scenario(
    py: Python<'_>,
    scenario_json: &str,
    max_record_mb: Option<f64>,
) -> PyResult<()> {
    let json = scenario_json.to_owned();
    let limit = record_limit(max_record_mb)?;
    let controller_error = RunError::default();
    let registries = registries(&controller_error);
    let checked = py.detach(move || {
        no_panic(move || -> Result<(), String> {
            let scenario: Scenario =
                serde_json::from_str(&json).map_err(|e| format!("scenario JSON: {e}"))?;
            Simulation::check(&scenario, &registries, limit)
                .map(drop)
                .map_err(|e| e.to_string())
        })
    });
    match checked {
        Err(panic) => Err(internal_error(&panic)),
        Ok(Err(invalid)) => Err(PyValueError::new_err(invalid)),
        Ok(Ok(())) => Ok(()),
    }
}

fn call_error(msg: String) -> PyErr {
    if msg == FINISHED {
        PyRuntimeError::new_err(msg)
    } else {
        internal_error(&msg)
    }
}

enum State {
    Running(Box<Simulation>),
    /// `finish` was called; the simulated time the run ended at.
    Finished {
        now_ns: u64,
    },
    /// A call panicked: the simulation's state cannot be trusted any more.
    Failed(String),
}

/// A simulation of one scenario, advanced with `run_until` and ended with `finish`.
///
/// `Simulation(scenario_json)` takes the canonical-unit scenario JSON (what
/// `tcplab.Scenario.canonical_json()` emits); JSON and validation errors raise ValueError.
#[pyclass(name = "Simulation", module = "tcplab._native", frozen)]
pub(crate) struct PySimulation {
    state: Mutex<State>,
    end_ns: u64,
    /// The first exception a Python controller of this run raised.
    controller_error: RunError,
    /// `finish` writes every fact the instruments took here (`record_facts`).
    facts_path: Mutex<Option<String>>,
}

impl PySimulation {
    /// Runs `f` on the live simulation with the GIL released.
    fn with_sim<T: Send>(
        &self,
        py: Python<'_>,
        f: impl FnOnce(&mut Simulation) -> T + Send,
    ) -> PyResult<T> {
        self.with_sim_or(py, f, |_| None)
    }

    /// Like `with_sim`, but after `finish` answers `finished(now_ns)` when that is Some.
    fn with_sim_or<T: Send>(
        &self,
        py: Python<'_>,
        f: impl FnOnce(&mut Simulation) -> T + Send,
        finished: impl FnOnce(u64) -> Option<T> + Send,
    ) -> PyResult<T> {
        py.detach(|| {
            let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
            match &mut *state {
                State::Running(sim) => match no_panic(|| f(sim)) {
                    Ok(v) => Ok(v),
                    Err(msg) => {
                        *state = State::Failed(msg.clone());
                        Err(msg)
                    }
                },
                State::Finished { now_ns } => finished(*now_ns).ok_or_else(|| FINISHED.to_string()),
                State::Failed(msg) => Err(format!(
                    "the simulation cannot continue after an earlier internal error ({msg})"
                )),
            }
        })
        .map_err(call_error)
    }
}

#[pymethods]
impl PySimulation {
    /// `max_record_mb`: the limit on what the run records (default
    /// `tcplab_sim::estimate::DEFAULT_MAX_RECORD_MB`); a scenario expected to record more is
    /// refused (ValueError), and `run_until` raises ValueError if the run records more anyway.
    #[new]
    #[pyo3(signature = (scenario_json, max_record_mb=None))]
    fn new(py: Python<'_>, scenario_json: &str, max_record_mb: Option<f64>) -> PyResult<Self> {
        let json = scenario_json.to_owned();
        let limit = record_limit(max_record_mb)?;
        let controller_error = RunError::default();
        let registries = registries(&controller_error);
        let built = py.detach(move || {
            no_panic(move || -> Result<(Box<Simulation>, u64), String> {
                let scenario: Scenario =
                    serde_json::from_str(&json).map_err(|e| format!("scenario JSON: {e}"))?;
                let sim = Simulation::with_limit(&scenario, &registries, limit)
                    .map_err(|e| e.to_string())?;
                let end_ns = sim.end_time().as_nanos();
                Ok((Box::new(sim), end_ns))
            })
        });
        match built {
            Err(panic) => Err(internal_error(&panic)),
            Ok(Err(invalid)) => Err(PyValueError::new_err(invalid)),
            Ok(Ok((sim, end_ns))) => Ok(PySimulation {
                state: Mutex::new(State::Running(sim)),
                end_ns,
                controller_error,
                facts_path: Mutex::new(None),
            }),
        }
    }

    /// Processes every event up to and including `t_ns` (capped at the end of the run),
    /// with the GIL released.
    /// A Python controller's exception stops the run: RuntimeError, chained to it.
    fn run_until(&self, py: Python<'_>, t_ns: u64) -> PyResult<()> {
        if let Some(e) = self.controller_error.to_py(py) {
            return Err(e);
        }
        let over = self.with_sim(py, |sim| {
            sim.run_until(Time::from_nanos(t_ns));
            sim.record_error()
        })?;
        if let Some(e) = self.controller_error.to_py(py) {
            return Err(e);
        }
        match over {
            Some(msg) => Err(PyValueError::new_err(msg)),
            None => Ok(()),
        }
    }

    /// What the run has recorded so far: `{"tables": [{"table", "rows", "bytes",
    /// "bucket_ns", "truncated_at_ns"}], "limit_bytes", "default_table_bytes" (None unless
    /// the default bound on the series and queues applies), "estimate": [{"table", "rows",
    /// "bytes"}]}` (the estimate made before the run). After `finish`: RuntimeError.
    fn recording<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let (rec, est) = self.with_sim(py, |sim| (sim.recording(), sim.estimate().clone()))?;
        let d = PyDict::new(py);
        let tables = pyo3::types::PyList::empty(py);
        for t in rec.tables {
            let row = PyDict::new(py);
            row.set_item("table", t.table)?;
            row.set_item("rows", t.rows)?;
            row.set_item("bytes", t.bytes)?;
            row.set_item("bucket_ns", t.bucket_ns)?;
            row.set_item("truncated_at_ns", t.truncated_at_ns)?;
            tables.append(row)?;
        }
        d.set_item("tables", tables)?;
        d.set_item("limit_bytes", rec.limit_bytes)?;
        d.set_item("default_table_bytes", rec.default_table_bytes)?;
        let estimate = pyo3::types::PyList::empty(py);
        for t in est.tables {
            let row = PyDict::new(py);
            row.set_item("table", t.table)?;
            row.set_item("rows", t.rows)?;
            row.set_item("bytes", t.bytes)?;
            estimate.append(row)?;
        }
        d.set_item("estimate", estimate)?;
        Ok(d)
    }

    /// Simulated time reached so far, in ns.
    #[getter]
    fn now_ns(&self, py: Python<'_>) -> PyResult<u64> {
        self.with_sim_or(py, |sim| sim.now().as_nanos(), Some)
    }

    /// When the run ends (the scenario's duration), in ns.
    #[getter]
    fn end_ns(&self) -> u64 {
        self.end_ns
    }

    /// The run is over (end time reached, or every flow finished and nothing is pending).
    #[getter]
    fn done(&self, py: Python<'_>) -> PyResult<bool> {
        self.with_sim_or(py, |sim| sim.is_done(), |_| Some(true))
    }

    /// Ends the run and returns its results: one `ArrowTable` per table (`flows`, `udp`,
    /// `links`, `series`, `queues`, `drops`, `events`, `segments`, `verdicts`, ...: an Arrow
    /// record batch, `polars.DataFrame(table)`), plus the `conservation` and `stats` dicts.
    fn finish<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        if let Some(e) = self.controller_error.to_py(py) {
            return Err(e);
        }
        let results = py
            .detach(|| {
                let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
                match std::mem::replace(&mut *state, State::Finished { now_ns: 0 }) {
                    State::Running(sim) => {
                        let now_ns = no_panic(|| sim.now().as_nanos());
                        match now_ns
                            .and_then(|now_ns| no_panic(move || (now_ns, (*sim).finish_recorded())))
                        {
                            Ok((now_ns, results)) => {
                                *state = State::Finished { now_ns };
                                Ok(results)
                            }
                            Err(msg) => {
                                *state = State::Failed(msg.clone());
                                Err(msg)
                            }
                        }
                    }
                    State::Finished { now_ns } => {
                        *state = State::Finished { now_ns };
                        Err(FINISHED.to_string())
                    }
                    State::Failed(msg) => {
                        let err = format!(
                            "the simulation cannot continue after an earlier internal error ({msg})"
                        );
                        *state = State::Failed(msg);
                        Err(err)
                    }
                }
            })
            .map_err(call_error)?;
        let (results, facts) = results;
        let path = self
            .facts_path
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        if let Some(path) = path {
            py.detach(|| write_facts(&path, &facts))
                .map_err(pyo3::exceptions::PyOSError::new_err)?;
        }
        results_to_py(py, results)
    }

    /// Keeps every fact the instruments take from now on (call before running); `finish`
    /// writes them to `path` as JSON lines (docs/instruments.md), for
    /// `tcplab.instruments.replay`.
    fn record_facts(&self, py: Python<'_>, path: String) -> PyResult<()> {
        self.with_sim(py, |sim| sim.record_facts())?;
        *self.facts_path.lock().unwrap_or_else(|e| e.into_inner()) = Some(path);
        Ok(())
    }

    fn __repr__(&self) -> String {
        let state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let what = match &*state {
            State::Running(_) => "running",
            State::Finished { .. } => "finished",
            State::Failed(_) => "failed",
        };
        format!("<tcplab._native.Simulation {what}, end_ns={}>", self.end_ns)
    }
}

/// Writes `facts` to `path` as JSON lines; an error names the file.
fn write_facts(path: &str, facts: &[tcplab_sim::instruments::Fact]) -> Result<(), String> {
    use std::io::Write;
    let fail = |e: std::io::Error| format!("{path}: {e}");
    let mut out = std::io::BufWriter::new(std::fs::File::create(path).map_err(fail)?);
    tcplab_sim::instruments::record::write_jsonl(facts, &mut out).map_err(fail)?;
    out.flush().map_err(fail)
}
