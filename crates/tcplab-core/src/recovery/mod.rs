//! Loss-recovery strategies: when to declare segments lost, which to retransmit, and what
//! limits sending while losses are repaired. The window rules belong to [`crate::cc`]; any
//! strategy composes with any controller.
//!
//! The sender drives a strategy through [`LossRecovery`]: after updating the [`Scoreboard`]
//! with an ACK it calls `on_ack`; if the strategy answers `Enter`, the sender asks the
//! controller for its reduction and calls `enter` with the result; `Exit` hands the
//! strategy's proposed window back to the controller. During recovery sending is limited by
//! `window()` against `in_flight()`. A strategy marks segments lost in the scoreboard and may
//! force one retransmission past the window; the sender sends pending retransmissions
//! (lowest first) before new data. `Restart` answers a further congestion signal within
//! recovery (exit, reduce, enter again), `Probe` asks for one segment past the window.
//! `AckInfo::delivery` says which segments an ACK newly delivered; `on_transmit` reports
//! every segment sent. Strategies with timers of their own (RACK, TLP) use
//! `poll_timeout`/`on_timer`. Detection code shared between strategies lives in `detect` (and
//! `lost_rtx`), window-reduction code in `reduction`: strategies share those, never each
//! other.

mod detect;
pub mod fack;
mod lost_rtx;
pub mod lrd;
pub mod newreno;
pub mod prr;
pub mod rack;
mod reduction;
pub mod reno;
pub mod rh;
pub mod sack;

use crate::ack::{deref_to_facts, AckFacts};
use crate::factory::{built_in, names_of, BuiltIn, Registry};
use crate::scoreboard::{Delivery, Scoreboard, SegIdx};
use crate::{ConfigError, Params, Seq, Time};
use serde::{Deserialize, Serialize};

/// Facts about one ACK, as a recovery strategy sees it: the shared [`AckFacts`] (read
/// through `Deref`: `ack.snd_una`, `ack.is_duplicate`, ...) and what only strategies use.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AckInfo {
    pub facts: AckFacts,
    pub dupthresh: u32,
    /// Cumulative ACK point before this ACK.
    pub prev_una: Seq,
    /// Highest sequence number sent so far (exclusive).
    pub snd_max: Seq,
    /// Bytes this ACK newly delivered: cumulatively acknowledged and not SACKed before, plus
    /// newly SACKed (RFC 6937 DeliveredData).
    pub delivered_bytes: u64,
    /// Which segments this ACK newly delivered (RACK, Rate-Halving).
    pub delivery: Delivery,
    /// The ACK's first SACK block is a DSACK (RFC 2883): a segment arrived twice.
    pub dsack: bool,
}

deref_to_facts!(AckInfo);

/// What the strategy asks of the sender after an ACK or timer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RecoveryAction {
    None,
    /// Loss detected: reduce the window (controller) and call `enter`.
    Enter,
    /// Recovery over: the controller's cwnd becomes `cwnd`, or ssthresh when None.
    Exit {
        cwnd: Option<u64>,
    },
    /// Recovery over, with segments still presumed lost (Linux: the recovery point is
    /// acknowledged while `lost_out` is not zero): the episode ends as with `Exit { cwnd:
    /// None }` (an undo still possible), then, unless it was undone, a new recovery starts on
    /// the same ACK as with `Enter` (`tcp_time_to_recover`, "the loss is proven"), counted in
    /// `recoveries`.
    Renew,
    /// A further congestion signal during recovery (LRD's lost retransmission): the current
    /// episode ends as with `Exit { cwnd }` and a new one starts at once as with `Enter` (the
    /// controller reduces again, `enter` is called again). Counted in
    /// `SenderCounters::recovery_restarts`, not in `recoveries`; no fast retransmission is
    /// owed.
    Restart {
        cwnd: Option<u64>,
    },
    /// Send one segment now, past the window (a tail loss probe, RFC 8985 §7.3): new data if
    /// there is any and the receive window allows, otherwise the highest segment sent again.
    /// The retransmission timer restarts.
    Probe,
}

pub trait LossRecovery: Send {
    /// Registry name, e.g. "newreno".
    fn name(&self) -> &'static str;
    fn in_recovery(&self) -> bool;
    /// One ACK. May mark segments lost in `sb`.
    fn on_ack(&mut self, ack: &AckInfo, sb: &mut Scoreboard) -> RecoveryAction;
    /// Recovery begins; the controller has just reduced its window to `cwnd`/`ssthresh`.
    /// Marks what is lost and forces the first retransmission.
    fn enter(&mut self, now: Time, cwnd: u64, ssthresh: u64, snd_max: Seq, sb: &mut Scoreboard);
    /// The strategy reads SACK information: the sender records SACK blocks in the
    /// scoreboard only for strategies that do (a Reno sender ignores them, so its inflated
    /// window is compared with FlightSize, as RFC 5681 intends).
    fn uses_sack(&self) -> bool {
        false
    }
    /// The send window during recovery, in bytes.
    fn window(&self) -> u64;
    /// Bytes in the network as this strategy counts them (RFC 6675 pipe by default).
    fn in_flight(&self, sb: &Scoreboard) -> u64 {
        sb.pipe()
    }
    /// The retransmission timer expired (the sender has marked everything lost): abandon
    /// recovery; `snd_max` is the highest byte sent.
    fn on_timeout(&mut self, now: Time, snd_max: Seq);
    /// Segment `idx` left at `now` (for strategies that count transmissions or time them);
    /// `sb` already records it.
    fn on_transmit(&mut self, _now: Time, _idx: SegIdx, _retransmission: bool, _sb: &Scoreboard) {}
    /// Whether the ACK just handed to `on_ack`, which advanced the cumulative ACK point,
    /// restarts the retransmission timer (RFC 6298 §5.3). NewReno's Impatient variant
    /// (RFC 6582 §4) answers false for partial ACKs after the first of a recovery.
    fn restarts_timer(&self) -> bool {
        true
    }
    /// A timer of the strategy's own. `rto` is when the sender's retransmission timer is
    /// due, for strategies whose timer must not fire later (RFC 8985 §7.2: the PTO).
    fn poll_timeout(&self, _rto: Option<Time>) -> Option<Time> {
        None
    }
    fn on_timer(&mut self, _now: Time, _rto: Option<Time>, _sb: &mut Scoreboard) -> RecoveryAction {
        RecoveryAction::None
    }
}

/// What every strategy is built from, besides its own parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RecoveryContext {
    pub mss: u32,
    pub dupthresh: u32,
    /// The receiver sends SACK blocks.
    pub sack: bool,
}

/// A strategy by name with its parameters, as scenario files give it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RecoverySpec {
    pub name: String,
    #[serde(default)]
    pub params: Params,
}

impl RecoverySpec {
    pub fn named(name: &str) -> Self {
        RecoverySpec {
            name: name.to_string(),
            params: Params::new(),
        }
    }
}

/// The name -> factory table of recovery strategies.
pub type RecoveryRegistry = Registry<RecoveryContext, dyn LossRecovery>;

/// The built-in strategies: name, description and constructor, written once.
pub const BUILT_IN: [BuiltIn<RecoveryContext, dyn LossRecovery>; 8] = [
    built_in!(
        "reno",
        "RFC 5681 fast retransmit and fast recovery",
        reno::RenoRecovery::from_params
    ),
    built_in!("newreno", "RFC 6582 NewReno", newreno::NewReno::from_params),
    built_in!(
        "sack",
        "RFC 6675 SACK-based recovery",
        sack::SackRecovery::from_params
    ),
    built_in!(
        "fack",
        "Forward Acknowledgment (Mathis & Mahdavi 1996)",
        fack::Fack::from_params
    ),
    built_in!("rh", "Rate-Halving", rh::RateHalving::from_params),
    built_in!(
        "lrd",
        "Rate-Halving with lost-retransmission detection",
        lrd::from_params
    ),
    built_in!(
        "prr",
        "Proportional Rate Reduction (RFC 6937)",
        prr::Prr::from_params
    ),
    built_in!("rack", "RACK-TLP (RFC 8985)", rack::Rack::from_params),
];

/// Names of the built-in strategies, in order.
pub const RECOVERIES: &[&str] = &names_of(&BUILT_IN);

/// A registry holding the built-in strategies (extend it with `Registry::register`).
pub fn built_ins() -> RecoveryRegistry {
    RecoveryRegistry::with_built_ins("recovery", "loss-recovery strategy", &BUILT_IN)
}

/// Builds a built-in strategy by name (`Registries` for registered ones).
pub fn build(
    spec: &RecoverySpec,
    ctx: &RecoveryContext,
) -> Result<Box<dyn LossRecovery>, ConfigError> {
    built_ins().build(&spec.name, &spec.params, ctx)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ParamValue;

    fn ctx(sack: bool) -> RecoveryContext {
        RecoveryContext {
            mss: 1000,
            dupthresh: 3,
            sack,
        }
    }

    #[test]
    fn every_listed_strategy_builds_and_names_itself() {
        for &name in RECOVERIES {
            let r = build(&RecoverySpec::named(name), &ctx(true)).unwrap();
            assert_eq!(r.name(), name);
            assert!(!r.in_recovery());
        }
    }

    #[test]
    fn sack_based_strategies_refuse_to_run_without_sack() {
        for name in ["sack", "fack", "rh", "lrd", "prr", "rack"] {
            let e = build(&RecoverySpec::named(name), &ctx(false))
                .err()
                .unwrap();
            assert!(e.message.contains("sack_blocks"), "{name}: {e}");
        }
        assert!(build(&RecoverySpec::named("newreno"), &ctx(false)).is_ok());
    }

    #[test]
    fn parameters_are_checked() {
        let with = |name: &str, k: &str, v: ParamValue| {
            let mut s = RecoverySpec::named(name);
            s.params.insert(k.into(), v);
            build(&s, &ctx(true)).map(|_| ())
        };
        assert!(with("fack", "rampdown", ParamValue::Bool(true)).is_ok());
        assert!(with("fack", "lost", ParamValue::Str("dupthresh".into())).is_ok());
        assert!(with("fack", "ramp_down", ParamValue::Bool(true)).is_err());
        assert!(with("prr", "bound", ParamValue::Str("crb".into())).is_ok());
        assert!(with("prr", "bound", ParamValue::Str("prr".into())).is_err());
        assert!(with("rack", "window", ParamValue::Str("prr".into())).is_ok());
        assert!(with("rack", "tlp", ParamValue::Bool(false)).is_ok());
        assert!(
            with("rh", "lrd", ParamValue::Bool(true)).is_err(),
            "lrd is its own name"
        );
    }
}
