//! Name -> factory tables, generic over what they build (`C` the context, `T` the trait
//! object): [`Registry`], and [`BuiltIn`] for static tables of built-ins. The controller and
//! recovery tables are instances (`cc::ControllerRegistry`, `recovery::RecoveryRegistry`);
//! [`crate::registry::Registries`] holds both.

use crate::{ConfigError, Params};
use std::sync::Arc;

/// Builds one `T` from its parameters and the connection's context.
pub type Factory<C, T> = Arc<dyn Fn(&Params, &C) -> Result<Box<T>, ConfigError> + Send + Sync>;

/// A built-in entry, as the static tables of `cc` and `recovery` list them.
pub struct BuiltIn<C, T: ?Sized> {
    pub name: &'static str,
    pub description: &'static str,
    pub build: fn(&Params, &C) -> Result<Box<T>, ConfigError>,
}

/// A [`BuiltIn`] entry from a `from_params(ctx, params) -> Result<X, ConfigError>` function.
macro_rules! built_in {
    ($name:literal, $desc:literal, $from_params:expr) => {
        $crate::factory::BuiltIn {
            name: $name,
            description: $desc,
            build: |p, ctx| Ok(Box::new($from_params(ctx, p)?)),
        }
    };
}
pub(crate) use built_in;

/// The names of a static table of built-ins, in order (for the `CONTROLLERS`/`RECOVERIES`
/// constants).
pub const fn names_of<C, T: ?Sized, const N: usize>(
    table: &[BuiltIn<C, T>; N],
) -> [&'static str; N] {
    let mut out = [""; N];
    let mut i = 0;
    while i < N {
        out[i] = table[i].name;
        i += 1;
    }
    out
}

/// One registered name.
pub struct Entry<C, T: ?Sized> {
    pub name: String,
    pub description: String,
    factory: Factory<C, T>,
}

impl<C, T: ?Sized> Clone for Entry<C, T> {
    fn clone(&self) -> Self {
        Entry {
            name: self.name.clone(),
            description: self.description.clone(),
            factory: self.factory.clone(),
        }
    }
}

/// A name -> factory table for one kind of component.
pub struct Registry<C, T: ?Sized> {
    /// The scenario field that names the component ("controller", "recovery").
    field: &'static str,
    /// What the component is called in messages ("congestion controller").
    what: &'static str,
    entries: Vec<Entry<C, T>>,
}

impl<C, T: ?Sized> Clone for Registry<C, T> {
    fn clone(&self) -> Self {
        Registry {
            field: self.field,
            what: self.what,
            entries: self.entries.clone(),
        }
    }
}

impl<C, T: ?Sized> Registry<C, T> {
    /// An empty table; `field` and `what` name the component in error messages.
    pub fn empty(field: &'static str, what: &'static str) -> Self {
        Registry {
            field,
            what,
            entries: Vec::new(),
        }
    }

    /// A table holding `built_in`, in order.
    pub fn with_built_ins(
        field: &'static str,
        what: &'static str,
        built_in: &[BuiltIn<C, T>],
    ) -> Self
    where
        C: 'static,
        T: 'static,
    {
        let mut r = Self::empty(field, what);
        for b in built_in {
            let build = b.build;
            r.register(b.name, b.description, build);
        }
        r
    }

    /// Adds `name` (replacing an entry of that name, in its place).
    pub fn register(
        &mut self,
        name: &str,
        description: &str,
        factory: impl Fn(&Params, &C) -> Result<Box<T>, ConfigError> + Send + Sync + 'static,
    ) {
        let entry = Entry {
            name: name.to_string(),
            description: description.to_string(),
            factory: Arc::new(factory),
        };
        match self.entries.iter_mut().find(|e| e.name == name) {
            Some(e) => *e = entry,
            None => self.entries.push(entry),
        }
    }

    /// Registered names, in registration order.
    pub fn names(&self) -> Vec<&str> {
        self.entries.iter().map(|e| e.name.as_str()).collect()
    }

    pub fn entries(&self) -> &[Entry<C, T>] {
        &self.entries
    }

    pub fn contains(&self, name: &str) -> bool {
        self.entries.iter().any(|e| e.name == name)
    }

    /// Builds `name` with `params`; an unknown name is an error listing the known ones.
    pub fn build(&self, name: &str, params: &Params, ctx: &C) -> Result<Box<T>, ConfigError> {
        match self.entries.iter().find(|e| e.name == name) {
            Some(e) => (e.factory)(params, ctx),
            None => Err(ConfigError::new(format!(
                "{} = {name:?}: unknown {}; known: {:?}",
                self.field,
                self.what,
                self.names()
            ))),
        }
    }
}
