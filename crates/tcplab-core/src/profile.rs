//! Profiles: named bundles of defaults a scenario picks with `[tcp] profile = "..."` (or a
//! flow with its own `tcp.profile`): the TCP settings every explicit field then overrides,
//! and the controller and recovery a flow gets when it names none (docs/tcp.md, "Linux
//! profile").
//!
//! - `rfc` (the default): `TcpConfig::default()`; flows must name their controller and
//!   recovery.
//! - `linux`: `TcpConfig::linux()`, Linux 6.x defaults; flows default to CUBIC with HyStart
//!   in Linux's arithmetic and RACK-TLP detection with PRR reduction, and a flow that names
//!   `cubic` gets `hystart = true` and `flavor = "linux"` unless it says otherwise.

use crate::cc::{ControllerSpec, Growth};
use crate::{ConfigError, Dur, ParamValue, RecoverySpec, RtoMode, TcpConfig};
use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Profile {
    #[default]
    Rfc,
    Linux,
}

impl Profile {
    /// Names `parse` accepts.
    pub const NAMES: &'static [&'static str] = &["rfc", "linux"];

    pub fn parse(name: &str) -> Result<Self, ConfigError> {
        match name {
            "rfc" => Ok(Profile::Rfc),
            "linux" => Ok(Profile::Linux),
            other => Err(ConfigError::new(format!(
                "tcp.profile = {other:?}: unknown profile; known: {:?}",
                Self::NAMES
            ))),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Profile::Rfc => "rfc",
            Profile::Linux => "linux",
        }
    }

    /// The TCP settings explicit fields start from.
    pub fn tcp(self) -> TcpConfig {
        match self {
            Profile::Rfc => TcpConfig::default(),
            Profile::Linux => TcpConfig::linux(),
        }
    }

    /// The controller of a flow that names none (None: the flow must name one).
    pub fn controller(self) -> Option<ControllerSpec> {
        match self {
            Profile::Rfc => None,
            Profile::Linux => {
                let mut c = ControllerSpec::named("cubic");
                self.complete_controller(&mut c);
                Some(c)
            }
        }
    }

    /// The recovery of a flow that names none (None: the flow must name one).
    pub fn recovery(self) -> Option<RecoverySpec> {
        match self {
            Profile::Rfc => None,
            Profile::Linux => {
                let mut r = RecoverySpec::named("rack");
                r.params
                    .insert("window".into(), ParamValue::Str("prr".into()));
                r.params
                    .insert("bound".into(), ParamValue::Str("safe_ack".into()));
                Some(r)
            }
        }
    }

    /// Fills in the profile's defaults of a controller a flow named: under `linux`, CUBIC
    /// gets `hystart = true` unless the flow gives `hystart`, and `flavor = "linux"` unless
    /// it gives `flavor`, `c` or `beta`.
    pub fn complete_controller(self, spec: &mut ControllerSpec) {
        if self == Profile::Linux && spec.name == "cubic" {
            spec.params
                .entry("hystart".into())
                .or_insert(ParamValue::Bool(true));
            // Linux's arithmetic unless the flow sets CUBIC's constants itself.
            if !spec.params.contains_key("c") && !spec.params.contains_key("beta") {
                spec.params
                    .entry("flavor".into())
                    .or_insert(ParamValue::Str("linux".into()));
            }
        }
    }
}

/// tcp_rmem (min, default, max bytes) of the `linux` profile and of the live testbed's
/// namespaces (tcplab.live.linux_settings sets it from here): the kernel's default buffer,
/// and a largest buffer of 16 MiB, enough for 100 Mb/s over a 1 s RTT.
pub const LINUX_RMEM: [u64; 3] = [4096, 131_072, 16 << 20];

impl TcpConfig {
    /// Linux 6.x defaults (docs/tcp.md, "Linux profile", gives each one's source):
    /// MSS 1448 with timestamps (a 1500-byte MTU: 1460 less the 12-byte timestamp option),
    /// initial window 10 (TCP_INIT_CWND), RTO 200 ms min (TCP_RTO_MIN), 1 s initial
    /// (TCP_TIMEOUT_INIT), 120 s max (TCP_RTO_MAX) with Linux's RTO rule, 3 SACK blocks (what
    /// fits beside timestamps, tcp_established_options), DSACK, delayed ACKs with quick-ACK
    /// mode and ato between 40 ms (TCP_ATO_MIN) and 200 ms (TCP_DELACK_MAX), growth per
    /// acknowledged segment, no ECN, F-RTO and undo on, Linux's receive window (autotuning
    /// from 128 KiB up to 16 MiB, [`LINUX_RMEM`]).
    pub fn linux() -> Self {
        TcpConfig {
            mss: 1448,
            initial_cwnd: 10,
            initial_ssthresh: None,
            growth: Growth::Linux,
            rto_min: Dur::from_millis(200),
            rto_initial: Dur::from_secs(1),
            rto_max: Dur::from_secs(120),
            timestamps: true,
            dupthresh: 3,
            delayed_ack: true,
            ack_every: 2,
            delayed_ack_timeout: Dur::from_millis(200),
            sack_blocks: 3,
            ecn: false,
            dsack: true,
            rto_mode: RtoMode::Linux,
            quickack: true,
            delayed_ack_min: Dur::from_millis(40),
            frto: true,
            undo: true,
            rcv_buf: LINUX_RMEM[2],
            rcv_autotune: true,
            rcv_buf_initial: LINUX_RMEM[1],
            ..TcpConfig::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn linux_defaults() {
        let c = TcpConfig::linux();
        c.validate().unwrap();
        assert_eq!(
            (c.mss, c.initial_cwnd, c.initial_ssthresh),
            (1448, 10, None)
        );
        assert_eq!(c.growth, Growth::Linux);
        assert_eq!(
            (c.rto_min, c.rto_initial, c.rto_max, c.rto_mode),
            (
                Dur::from_millis(200),
                Dur::from_secs(1),
                Dur::from_secs(120),
                RtoMode::Linux
            )
        );
        assert!(c.timestamps && c.dsack && c.delayed_ack && c.quickack && c.frto && c.undo);
        assert!(!c.ecn);
        assert_eq!((c.sack_blocks, c.dupthresh, c.ack_every), (3, 3, 2));
        assert_eq!(
            (c.delayed_ack_min, c.delayed_ack_timeout),
            (Dur::from_millis(40), Dur::from_millis(200))
        );
        assert_eq!(crate::RttEstimator::for_config(&c).mode(), RtoMode::Linux);
        let rfc = crate::RttEstimator::for_config(&TcpConfig::default());
        assert_eq!(rfc.mode(), RtoMode::Rfc6298);
        assert!(c.rcv_autotune);
        assert_eq!((c.rcv_buf_initial, c.rcv_buf), (131_072, 16 << 20));
        // What Linux does not fix stays as the RFC profile has it.
        let d = TcpConfig::default();
        assert_eq!(c.clock_granularity, d.clock_granularity);
        assert!(!d.rcv_autotune);
        // The RFC profile is the default, unchanged.
        assert_eq!(Profile::default().tcp(), d);
        assert!(!d.quickack && !d.frto && !d.undo && d.rto_mode == RtoMode::Rfc6298);
    }

    #[test]
    fn flow_defaults_and_names() {
        assert_eq!(Profile::Rfc.controller(), None);
        assert_eq!(Profile::Rfc.recovery(), None);
        let c = Profile::Linux.controller().unwrap();
        assert_eq!(c.name, "cubic");
        assert_eq!(c.params.get("hystart"), Some(&ParamValue::Bool(true)));
        let r = Profile::Linux.recovery().unwrap();
        assert_eq!(r.name, "rack");
        assert_eq!(r.params.get("window"), Some(&ParamValue::Str("prr".into())));
        assert_eq!(
            r.params.get("bound"),
            Some(&ParamValue::Str("safe_ack".into()))
        );
        // An explicit hystart wins; other controllers are left alone.
        let mut c = ControllerSpec::named("cubic");
        c.params.insert("hystart".into(), ParamValue::Bool(false));
        Profile::Linux.complete_controller(&mut c);
        assert_eq!(c.params.get("hystart"), Some(&ParamValue::Bool(false)));
        let mut r = ControllerSpec::named("reno");
        Profile::Linux.complete_controller(&mut r);
        assert!(r.params.is_empty());
        let mut c = ControllerSpec::named("cubic");
        Profile::Rfc.complete_controller(&mut c);
        assert!(c.params.is_empty());
        for n in Profile::NAMES {
            assert_eq!(Profile::parse(n).unwrap().name(), *n);
        }
        let e = Profile::parse("bsd").unwrap_err().to_string();
        assert!(e.contains("tcp.profile") && e.contains("\"bsd\""), "{e}");
    }

    #[test]
    fn linux_flow_defaults_build() {
        let cfg = TcpConfig::linux();
        let s = crate::Sender::build(
            &cfg,
            &Profile::Linux.controller().unwrap(),
            &Profile::Linux.recovery().unwrap(),
            None,
        );
        assert!(s.is_ok());
    }
}
