//! Rust panics never cross into Python: [`no_panic`] turns one into an error message (with
//! where it happened, recorded by the hook [`install_panic_hook`]), [`internal_error`] into
//! `RuntimeError("internal error: ...")`.

use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use std::any::Any;
use std::cell::RefCell;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Once;

thread_local! {
    /// Where the last panic on this thread happened (set by the hook `install_panic_hook`).
    static PANIC_LOCATION: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// Records each panic's location for the error message, then runs the previous hook (which
/// prints the panic to stderr as usual).
pub(crate) fn install_panic_hook() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let location = info.location().map(|l| l.to_string());
            PANIC_LOCATION.with(|p| *p.borrow_mut() = location);
            previous(info);
        }));
    });
}

/// The text of a panic payload, with where it happened when known.
fn panic_message(payload: &(dyn Any + Send)) -> String {
    let text = if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "panic with a non-string payload".to_string()
    };
    match PANIC_LOCATION.with(|p| p.borrow_mut().take()) {
        Some(location) => format!("{text} (at {location})"),
        None => text,
    }
}

pub(crate) fn internal_error(msg: &str) -> PyErr {
    PyRuntimeError::new_err(format!("internal error: {msg}"))
}

/// Runs `f`, turning a panic into `Err(message)`.
pub(crate) fn no_panic<T>(f: impl FnOnce() -> T) -> Result<T, String> {
    catch_unwind(AssertUnwindSafe(f)).map_err(|p| panic_message(&*p))
}
