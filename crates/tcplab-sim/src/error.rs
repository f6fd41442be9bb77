//! The error of a scenario that cannot run: one line naming the field, the value and what is
//! allowed (several problems joined by "; "). [`crate::validate`] produces it; the Python
//! bindings turn it into a `ValueError`.

use std::fmt;

/// Why a scenario cannot run; the message names the field, the value and what is allowed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SimError(pub String);

impl fmt::Display for SimError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}
impl std::error::Error for SimError {}
