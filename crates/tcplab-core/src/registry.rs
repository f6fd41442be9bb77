//! Open registries: the name -> factory tables the sender builds its congestion controller
//! and loss-recovery strategy from (quinn's `ControllerFactory`, made a table).
//!
//! [`Registries::default`] holds the built-ins (`cc::BUILT_IN`, `recovery::BUILT_IN`); an
//! embedding program adds its own with [`Registry::register`] and hands the result to
//! `Sender::build_with` or the simulator (`Simulation::with_registries`), without editing
//! tcplab. A registered name replaces a built-in of the same name.
//!
//! ```
//! use tcplab_core::cc::{reno::Reno, CongestionControl};
//! use tcplab_core::registry::Registries;
//!
//! let mut r = Registries::default();
//! r.controllers.register("my-reno", "Reno under another name", |params, ctx| {
//!     Ok(Box::new(Reno::from_params(ctx, params)?) as Box<dyn CongestionControl>)
//! });
//! assert!(r.controllers.names().contains(&"my-reno"));
//! ```

pub use crate::cc::ControllerRegistry;
pub use crate::factory::{BuiltIn, Entry, Factory, Registry};
pub use crate::recovery::RecoveryRegistry;

/// The two tables a sender is built from.
#[derive(Clone)]
pub struct Registries {
    pub controllers: ControllerRegistry,
    pub recoveries: RecoveryRegistry,
}

impl Default for Registries {
    /// The built-in controllers and recovery strategies.
    fn default() -> Self {
        Registries {
            controllers: crate::cc::built_ins(),
            recoveries: crate::recovery::built_ins(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::{
        reno::Reno, CcContext, CongestionControl, ControllerSpec, Growth, CONTROLLERS,
    };
    use crate::recovery::RECOVERIES;
    use crate::{ConfigError, Params};

    fn ctx() -> CcContext {
        CcContext {
            mss: 1000,
            initial_cwnd: 2000,
            initial_ssthresh: u64::MAX,
            growth: Growth::default(),
            seed: 0,
        }
    }

    #[test]
    fn the_default_tables_list_the_built_ins_in_order() {
        let r = Registries::default();
        assert_eq!(r.controllers.names(), CONTROLLERS.to_vec());
        assert_eq!(r.recoveries.names(), RECOVERIES.to_vec());
    }

    #[test]
    fn a_registered_factory_builds_and_replaces_in_place() {
        let mut r = Registries::default();
        r.controllers.register("mine", "test", |p, c| {
            Ok(Box::new(Reno::from_params(c, p)?) as Box<dyn CongestionControl>)
        });
        let spec = ControllerSpec::named("mine");
        let built = r
            .controllers
            .build(&spec.name, &spec.params, &ctx())
            .unwrap();
        assert_eq!(built.cwnd(), 2000);
        assert_eq!(r.controllers.names().last(), Some(&"mine"));
        r.controllers
            .register("reno", "replaced", |_, _| Err(ConfigError::new("no")));
        assert_eq!(r.controllers.names()[0], "reno");
        assert!(r.controllers.build("reno", &Params::new(), &ctx()).is_err());
        let e = r
            .controllers
            .build("nosuch", &Params::new(), &ctx())
            .err()
            .unwrap();
        assert!(
            e.message.starts_with(
                "controller = \"nosuch\": unknown congestion controller; known: [\"reno\""
            ),
            "{e}"
        );
        assert!(e.message.contains("\"mine\""), "{e}");
    }
}
