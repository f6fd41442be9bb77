//! Congestion controllers written in Python (`tcplab.register_controller`).
//!
//! `register_controller(name, cls, description)` records a Python class in this process's
//! table. Every `Simulation` built afterwards gets a `Registries` holding the built-ins plus a
//! factory per registered class ([`registries`]); the factory calls `cls(ctx, params)` and
//! wraps the instance in a [`PyController`], which implements `CongestionControl` by calling
//! the object's methods with read-only samples ([`AckSample`], [`CongestionEvent`],
//! [`CrossLayerReport`]) and reading back its `cwnd` and `ssthresh` attributes.
//!
//! The GIL is taken only for those calls (`Python::attach`); the simulator otherwise runs
//! with it released. A Python exception (or a bad `cwnd`/`ssthresh`) is recorded in the
//! simulation's [`RunError`] slot, the controller stops calling Python (its window stays as
//! it was), and the binding raises one RuntimeError for the run, chained to the exception.
//! Nothing panics.

use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};
use pyo3::{intern, Py, PyAny};
use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use tcplab_core::cc::{self, CcContext, CongestionControl, CongestionKind, Growth, Verdict};
use tcplab_core::registry::Registries;
use tcplab_core::{ConfigError, ParamValue, Params, Time};

/// A registered Python controller class.
struct Registered {
    name: &'static str,
    description: String,
    class: Arc<Py<PyAny>>,
}

/// This process's Python controllers (registration is per process: see docs/controllers).
static REGISTERED: Mutex<Vec<Registered>> = Mutex::new(Vec::new());

/// The first error a Python controller raised during a run, shared by the run's controllers.
#[derive(Clone, Default)]
pub(crate) struct RunError(Arc<Mutex<Option<(String, PyErr)>>>);

impl RunError {
    fn set(&self, msg: String, err: PyErr) {
        let mut slot = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if slot.is_none() {
            *slot = Some((msg, err));
        }
    }
    fn is_set(&self) -> bool {
        self.0.lock().map(|s| s.is_some()).unwrap_or(true)
    }
    /// The recorded error as a RuntimeError chained to the Python exception, if any.
    pub(crate) fn to_py(&self, py: Python<'_>) -> Option<PyErr> {
        let slot = self.0.lock().unwrap_or_else(|e| e.into_inner());
        slot.as_ref().map(|(msg, cause)| {
            let e = PyRuntimeError::new_err(msg.clone());
            e.set_cause(py, Some(cause.clone_ref(py)));
            e
        })
    }
}

/// A `&'static str` for `s`, leaked once per distinct string (names and verdict labels).
fn intern_str(s: &str) -> &'static str {
    static TABLE: Mutex<Option<HashSet<&'static str>>> = Mutex::new(None);
    let mut t = TABLE.lock().unwrap_or_else(|e| e.into_inner());
    let t = t.get_or_insert_with(HashSet::new);
    match t.get(s) {
        Some(k) => k,
        None => {
            let k: &'static str = Box::leak(s.to_string().into_boxed_str());
            t.insert(k);
            k
        }
    }
}

/// Registers `cls` under `name` for simulations built later in this process.
#[pyfunction]
#[pyo3(signature = (name, cls, description = String::new()))]
pub(crate) fn register_controller(name: &str, cls: Py<PyAny>, description: String) -> PyResult<()> {
    if name.is_empty()
        || !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_-.".contains(c))
    {
        return Err(PyValueError::new_err(format!(
            "register_controller: name = {name:?}: expected letters, digits, '_', '-' or '.'"
        )));
    }
    if cc::CONTROLLERS.contains(&name) {
        return Err(PyValueError::new_err(format!(
            "register_controller: name = {name:?}: a built-in controller has that name"
        )));
    }
    let entry = Registered {
        name: intern_str(name),
        description,
        class: Arc::new(cls),
    };
    let mut reg = REGISTERED.lock().unwrap_or_else(|e| e.into_inner());
    match reg.iter_mut().find(|r| r.name == name) {
        Some(r) => *r = entry,
        None => reg.push(entry),
    }
    Ok(())
}

/// Removes a registered Python controller; False when `name` was not registered.
#[pyfunction]
pub(crate) fn unregister_controller(name: &str) -> bool {
    let mut reg = REGISTERED.lock().unwrap_or_else(|e| e.into_inner());
    let before = reg.len();
    reg.retain(|r| r.name != name);
    reg.len() != before
}

/// Names of the registered Python controllers, in registration order.
pub(crate) fn registered_names() -> Vec<&'static str> {
    let reg = REGISTERED.lock().unwrap_or_else(|e| e.into_inner());
    reg.iter().map(|r| r.name).collect()
}

/// The built-ins plus this process's Python controllers, reporting errors to `errors`.
pub(crate) fn registries(errors: &RunError) -> Registries {
    let mut r = Registries::default();
    let reg = REGISTERED.lock().unwrap_or_else(|e| e.into_inner());
    for entry in reg.iter() {
        let (name, class, errors) = (entry.name, entry.class.clone(), errors.clone());
        r.controllers
            .register(name, &entry.description, move |params, ctx| {
                PyController::build(name, &class, params, ctx, errors.clone())
                    .map(|c| Box::new(c) as Box<dyn CongestionControl>)
            });
    }
    r
}

/// The context a controller is built with (`CcContext`).
#[pyclass(name = "ControllerContext", module = "tcplab._native", frozen, get_all)]
pub(crate) struct PyContext {
    mss: u32,
    initial_cwnd: u64,
    initial_ssthresh: u64,
    /// "per_ack", "byte_counting" or "linux" (`tcp.growth`).
    growth: &'static str,
    /// The byte-counting limit L in segments (RFC 3465), for "byte_counting".
    growth_limit: Option<u32>,
}

/// What the sender learned from one ACK (`tcplab_core::cc::AckSample`); times in ns.
#[pyclass(name = "AckSample", module = "tcplab._native", frozen, get_all)]
pub(crate) struct PyAckSample {
    now_ns: u64,
    mss: u32,
    acked_bytes: u64,
    sacked_bytes: u64,
    is_duplicate: bool,
    rtt_ns: Option<u64>,
    min_rtt_ns: Option<u64>,
    srtt_ns: Option<u64>,
    snd_una: u64,
    snd_nxt: u64,
    in_flight: u64,
    delivered: u64,
    in_recovery: bool,
    /// The delivery-rate sample (`tcplab_core::rate::RateSample`), None when the ACK
    /// delivered no stamped segment: bytes delivered over `rate_interval_ns` (None when
    /// shorter than the minimum RTT), the delivered count when its segment left, whether it
    /// left application-limited, its RTT.
    rate_delivered: Option<u64>,
    rate_interval_ns: Option<u64>,
    rate_prior_delivered: Option<u64>,
    rate_app_limited: Option<bool>,
    rate_rtt_ns: Option<u64>,
}

/// A congestion signal (`tcplab_core::cc::CongestionEvent`); `kind` is "fast_retransmit",
/// "timeout" or "ecn".
#[pyclass(name = "CongestionEvent", module = "tcplab._native", frozen, get_all)]
pub(crate) struct PyCongestionEvent {
    now_ns: u64,
    kind: &'static str,
    mss: u32,
    flight_size: u64,
    latest_rtt_ns: Option<u64>,
    min_rtt_ns: Option<u64>,
}

/// A cross-layer loss report (`tcplab_core::cc::CrossLayerReport`).
#[pyclass(name = "CrossLayerReport", module = "tcplab._native", frozen, get_all)]
pub(crate) struct PyCrossLayerReport {
    now_ns: u64,
    random_losses: u32,
    /// The dropped data segment's first byte, when the report is of one data segment.
    lost_seq: Option<u64>,
}

fn ns(d: Option<tcplab_core::Dur>) -> Option<u64> {
    d.map(|d| d.as_nanos())
}

/// A Python object driven as a congestion controller.
pub(crate) struct PyController {
    name: &'static str,
    obj: Py<PyAny>,
    cwnd: u64,
    ssthresh: u64,
    has_observe: bool,
    has_cross_layer: bool,
    errors: RunError,
}

impl PyController {
    fn build(
        name: &'static str,
        class: &Py<PyAny>,
        params: &Params,
        ctx: &CcContext,
        errors: RunError,
    ) -> Result<Self, ConfigError> {
        let (growth, growth_limit) = match ctx.growth {
            Growth::PerAck => ("per_ack", None),
            Growth::ByteCounting { limit } => ("byte_counting", Some(limit)),
            Growth::Linux => ("linux", None),
        };
        let pctx = PyContext {
            mss: ctx.mss,
            initial_cwnd: ctx.initial_cwnd,
            initial_ssthresh: ctx.initial_ssthresh,
            growth,
            growth_limit,
        };
        Python::attach(|py| {
            let built = (|| -> PyResult<Self> {
                let p = PyDict::new(py);
                for (k, v) in params {
                    match v {
                        ParamValue::Bool(b) => p.set_item(k, b)?,
                        ParamValue::Num(x) => p.set_item(k, x)?,
                        ParamValue::Str(s) => p.set_item(k, s)?,
                    }
                }
                let obj = class.bind(py).call1((pctx, p))?;
                let mut c = PyController {
                    name,
                    has_observe: obj.hasattr(intern!(py, "observe"))?,
                    has_cross_layer: obj.hasattr(intern!(py, "on_cross_layer"))?,
                    obj: obj.unbind(),
                    cwnd: 0,
                    ssthresh: 0,
                    errors,
                };
                c.read_window(py)?;
                Ok(c)
            })();
            built.map_err(|e| {
                ConfigError::new(format!(
                    "controller = {name:?}: the Python class failed: {e}"
                ))
            })
        })
    }

    /// Reads the object's `cwnd` and `ssthresh` attributes (non-negative integers).
    fn read_window(&mut self, py: Python<'_>) -> PyResult<()> {
        let o = self.obj.bind(py);
        let get = |attr: &Bound<'_, pyo3::types::PyString>| -> PyResult<u64> {
            let v = o.getattr(attr)?;
            v.extract::<u64>().map_err(|_| {
                PyValueError::new_err(format!(
                    "{} = {}: expected a non-negative integer number of bytes",
                    attr,
                    v.repr().map(|r| r.to_string()).unwrap_or_default()
                ))
            })
        };
        let cwnd = get(intern!(py, "cwnd"))?;
        let ssthresh = get(intern!(py, "ssthresh"))?;
        self.cwnd = cwnd.max(1);
        self.ssthresh = ssthresh;
        Ok(())
    }

    /// Calls `method` with `args` under the GIL, then reads the window back; the first error
    /// of the run is recorded and later calls are skipped. Returns the method's result.
    fn call(
        &mut self,
        method: &str,
        args: impl for<'py> FnOnce(Python<'py>) -> PyResult<Bound<'py, PyTuple>>,
    ) -> Option<Py<PyAny>> {
        if self.errors.is_set() {
            return None;
        }
        Python::attach(|py| {
            let r = (|| -> PyResult<Py<PyAny>> {
                let args = args(py)?;
                let out = self.obj.bind(py).call_method1(method, args)?.unbind();
                self.read_window(py)?;
                Ok(out)
            })();
            match r {
                Ok(out) => Some(out),
                Err(e) => {
                    let msg = format!("controller {:?} failed in {method}: {e}", self.name);
                    self.errors.set(msg, e);
                    None
                }
            }
        })
    }
}

impl CongestionControl for PyController {
    fn name(&self) -> &'static str {
        self.name
    }
    /// Python controllers get the delivery-rate samples (`AckSample.rate_*`) when they
    /// define `observe`, the one call that reads every ACK.
    fn uses_rate_samples(&self) -> bool {
        self.has_observe
    }
    fn cwnd(&self) -> u64 {
        self.cwnd
    }
    fn ssthresh(&self) -> u64 {
        self.ssthresh
    }
    fn observe(&mut self, s: &cc::AckSample) {
        if self.has_observe {
            let s = ack_sample(s);
            self.call("observe", |py| one_arg(py, s));
        }
    }
    fn on_ack(&mut self, s: &cc::AckSample) {
        let s = ack_sample(s);
        self.call("on_ack", |py| one_arg(py, s));
    }
    fn on_congestion(&mut self, ev: &cc::CongestionEvent) -> Verdict {
        let e = PyCongestionEvent {
            now_ns: ev.now.as_nanos(),
            kind: match ev.kind {
                CongestionKind::FastRetransmit => "fast_retransmit",
                CongestionKind::Timeout => "timeout",
                CongestionKind::Ecn => "ecn",
            },
            mss: ev.mss,
            flight_size: ev.flight_size,
            latest_rtt_ns: ns(ev.latest_rtt),
            min_rtt_ns: ns(ev.min_rtt),
        };
        let out = self.call("on_congestion", |py| one_arg(py, e));
        let mut verdict = Verdict {
            label: self.name,
            value: f64::NAN,
        };
        if let Some(out) = out {
            Python::attach(|py| {
                match out.extract::<Option<(String, f64)>>(py) {
                Ok(Some((label, value))) => {
                    verdict = Verdict {
                        label: intern_str(&label),
                        value,
                    }
                }
                Ok(None) => {}
                Err(_) => self.errors.set(
                    format!(
                        "controller {:?}: on_congestion returned {}: expected None or a (label, value) tuple",
                        self.name,
                        out.bind(py).repr().map(|r| r.to_string()).unwrap_or_default()
                    ),
                    PyValueError::new_err("bad on_congestion result"),
                ),
            }
            });
        }
        verdict
    }
    fn on_repeated_timeout(&mut self, now: Time) {
        self.call("on_repeated_timeout", |py| {
            (now.as_nanos(),).into_pyobject(py)
        });
    }
    fn on_recovery_exit(&mut self, now: Time, cwnd: u64) {
        self.call("on_recovery_exit", |py| {
            (now.as_nanos(), cwnd).into_pyobject(py)
        });
    }
    fn on_undo(&mut self, now: Time, prior_cwnd: u64, prior_ssthresh: u64) {
        self.call("on_undo", |py| {
            (now.as_nanos(), prior_cwnd, prior_ssthresh).into_pyobject(py)
        });
    }
    fn on_cross_layer(&mut self, report: &cc::CrossLayerReport) {
        if self.has_cross_layer {
            let r = PyCrossLayerReport {
                now_ns: report.now.as_nanos(),
                random_losses: report.random_losses,
                lost_seq: report.lost.map(|s| s.0),
            };
            self.call("on_cross_layer", |py| one_arg(py, r));
        }
    }
}

/// `(obj,)`: the argument tuple of a call with one sample object.
fn one_arg<T: pyo3::PyClass + Into<pyo3::PyClassInitializer<T>>>(
    py: Python<'_>,
    v: T,
) -> PyResult<Bound<'_, PyTuple>> {
    (Py::new(py, v)?,).into_pyobject(py)
}

fn ack_sample(s: &cc::AckSample) -> PyAckSample {
    PyAckSample {
        now_ns: s.now.as_nanos(),
        mss: s.mss,
        acked_bytes: s.acked_bytes,
        sacked_bytes: s.sacked_bytes,
        is_duplicate: s.is_duplicate,
        rtt_ns: ns(s.rtt),
        min_rtt_ns: ns(s.min_rtt),
        srtt_ns: ns(s.srtt),
        snd_una: s.snd_una.0,
        snd_nxt: s.snd_nxt.0,
        in_flight: s.in_flight,
        delivered: s.delivered,
        in_recovery: s.in_recovery,
        rate_delivered: s.rate.map(|r| r.delivered),
        rate_interval_ns: s.rate.and_then(|r| ns(r.interval)),
        rate_prior_delivered: s.rate.map(|r| r.prior_delivered),
        rate_app_limited: s.rate.map(|r| r.is_app_limited),
        rate_rtt_ns: s.rate.and_then(|r| ns(r.rtt)),
    }
}

/// Adds the bridge's functions and sample classes to the module.
pub(crate) fn add_to(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyContext>()?;
    m.add_class::<PyAckSample>()?;
    m.add_class::<PyCongestionEvent>()?;
    m.add_class::<PyCrossLayerReport>()?;
    m.add_function(wrap_pyfunction!(register_controller, m)?)?;
    m.add_function(wrap_pyfunction!(unregister_controller, m)?)?;
    Ok(())
}
