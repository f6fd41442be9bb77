//! Congestion controllers: the window rules (how cwnd grows, what ssthresh becomes at a
//! congestion signal). Detection and repair of losses belong to [`crate::recovery`]; any
//! controller composes with any recovery strategy.
//!
//! A controller owns its window. The sender hands it read-only samples and events and asks
//! for `cwnd()`/`ssthresh()`; the controller never sees the socket. Shared machinery (slow
//! start, additive increase, per-ACK vs byte-counting growth) lives in [`window::Window`],
//! as Linux keeps it in tcp_cong.c.

pub mod areno;
pub mod bandwidth;
pub mod bbr;
pub mod bbr3;
pub mod classic;
pub mod cubic;
pub mod filter;
pub mod highspeed;
pub mod reno;
#[cfg(test)]
#[allow(dead_code)] // a toolbox: not every test uses every helper
pub(crate) mod testutil;
pub mod vegas;
pub mod veno;
pub mod venoplus;
pub mod westwood;
pub mod window;

use crate::ack::{deref_to_facts, AckFacts};
use crate::factory::{built_in, names_of, BuiltIn, Registry};
use crate::rate::RateSample;
use crate::{ConfigError, Dur, Params, Seq, Time};
pub use classic::WindowRule;
use serde::{Deserialize, Serialize};
pub use window::{Growth, Window};

/// What the sender learned from one ACK, as a controller sees it: the shared [`AckFacts`]
/// (read through `Deref`: `s.acked_bytes`, `s.srtt`, ...) and what only controllers use.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AckSample {
    pub facts: AckFacts,
    /// RTT measured by this ACK (timestamp echo, or Karn-valid segment timing).
    pub rtt: Option<Dur>,
    /// Next new byte to send.
    pub snd_nxt: Seq,
    /// Bytes in flight after this ACK, as the recovery strategy counts them.
    pub in_flight: u64,
    /// Bytes in flight before this ACK, counted the same way (Linux `rs->prior_in_flight`).
    pub prior_in_flight: u64,
    /// Earliest departure time of the sender's next segment (Linux `tp->tcp_wstamp_ns`,
    /// the pacing release); at or before `now` when one may leave at once or the sender is
    /// not paced.
    pub next_departure: Time,
    /// Bytes delivered (cumulatively acked or SACKed) since the start of the connection.
    pub delivered: u64,
    /// The ACK arrived while the recovery strategy is repairing losses.
    pub in_recovery: bool,
    /// Bytes the recovery strategy marked lost while it took this ACK (Linux `rs->losses`).
    /// Known only after the strategy has taken the ACK: 0 in `observe`; `in_flight`,
    /// `in_recovery` and this are as of after it in the `on_ack` of a controller that
    /// [owns the recovery window](CongestionControl::owns_recovery_window).
    pub newly_lost: u64,
    /// The delivery-rate sample of this ACK ([`crate::rate`]), when it delivered a segment
    /// and the controller asked for samples (`CongestionControl::uses_rate_samples`).
    pub rate: Option<RateSample>,
}

deref_to_facts!(AckSample);

/// Why the window must shrink.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CongestionKind {
    /// The recovery strategy detected a loss from ACKs (fast retransmit).
    FastRetransmit,
    /// The retransmission timer expired.
    Timeout,
    /// An ECN echo (window reduction without loss).
    Ecn,
}

/// A congestion signal handed to the controller.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CongestionEvent {
    pub now: Time,
    pub kind: CongestionKind,
    pub mss: u32,
    /// Bytes outstanding (snd.max - snd.una) when the signal arrived (RFC 5681 FlightSize).
    pub flight_size: u64,
    /// The latest RTT sample before the signal.
    pub latest_rtt: Option<Dur>,
    pub min_rtt: Option<Dur>,
}

/// A controller's record of how it answered one congestion signal: the label of the branch
/// it took (e.g. "1/2", "4/5") and a number (the reduction factor, or a congestion level).
/// The simulator pairs it with the ground-truth cause of the loss.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Verdict {
    pub label: &'static str,
    pub value: f64,
}

/// A report from a lossy hop over an explicit cross-layer channel (Venoplus): how many of this
/// connection's frames the hop's MAC dropped, since its previous report, because the received
/// signal strength fell below the receive threshold (random losses, not buffer overflow), and,
/// for a report of one data segment, which (the simulator reports each drop on its own).
///
/// What the channel assumes: the hop knows which connection a frame belongs to; reports reach
/// the sender immediately and are never lost (the paper's single-chip cross-layer design, or
/// the simulator's ground truth); a report counts only losses the hop attributes to the
/// channel. The network side decides when to report (e.g. at every drop); the sender passes
/// each report to its controller unchanged (`Sender::on_cross_layer`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CrossLayerReport {
    pub now: Time,
    /// Frames of this connection dropped for low signal strength since the last report.
    pub random_losses: u32,
    /// When the report is of one dropped data segment: its first byte (the MAC saw the
    /// frame it dropped). None for a count, or for a lost ACK.
    pub lost: Option<Seq>,
}

/// Window rules of one congestion-control algorithm.
pub trait CongestionControl: Send {
    /// Registry name, e.g. "reno".
    fn name(&self) -> &'static str;
    /// Congestion window in bytes.
    fn cwnd(&self) -> u64;
    /// Slow-start threshold in bytes (u64::MAX before the first loss unless configured).
    fn ssthresh(&self) -> u64;
    /// Every ACK, before anything else: RTT and rate samples. Must not grow the window.
    fn observe(&mut self, _s: &AckSample) {}
    /// An ACK that advanced the cumulative ACK point outside recovery: grow the window. A
    /// controller that [owns the recovery window](Self::owns_recovery_window) gets every
    /// ACK here instead, in recovery too, after the recovery strategy has taken it.
    fn on_ack(&mut self, s: &AckSample);
    /// A congestion signal: set ssthresh (and cwnd, for timeouts and ECN) and say why.
    fn on_congestion(&mut self, ev: &CongestionEvent) -> Verdict;
    /// The retransmission timer expired again before the cumulative ACK moved, so the segment
    /// it retransmits was already retransmitted by the timer (RFC 5681 §3.1): ssthresh and
    /// the controller's estimates are held, cwnd falls to the loss window of one segment.
    /// (With `tcp.repeated_rto = "bsd"` the sender calls `on_congestion` instead, as 4.4BSD
    /// recomputed ssthresh from the collapsed window at every expiry.)
    fn on_repeated_timeout(&mut self, now: Time);
    /// Loss recovery ended; `cwnd` is what the recovery strategy proposes (usually ssthresh).
    fn on_recovery_exit(&mut self, now: Time, cwnd: u64);
    /// The last reduction was unnecessary (see `crate::spurious`): go back to at least the
    /// window before it. Linux's `tcp_undo_cwnd_reduction` with `tcp_reno_undo_cwnd`, which
    /// Reno, CUBIC, Veno and Westwood all use: cwnd = max(cwnd, prior_cwnd), ssthresh =
    /// max(ssthresh, prior_ssthresh).
    fn on_undo(&mut self, now: Time, prior_cwnd: u64, prior_ssthresh: u64);
    /// The controller sets the window during loss recovery too (Linux's `cong_control`
    /// hook, which BBR uses and which bypasses PRR's tcp_cwnd_reduction): the sender sends
    /// within `cwnd()` in recovery as outside it (the recovery strategy still finds the
    /// losses and chooses what to retransmit) and calls `on_ack` for every ACK. False by
    /// default: in recovery the strategy's own window (PRR, NewReno's inflation, ...) rules.
    fn owns_recovery_window(&self) -> bool {
        false
    }
    /// The controller reads `AckSample::rate`: the sender then runs the delivery-rate
    /// estimator ([`crate::rate`]; it costs a mark per segment sent). False by default, and
    /// `rate` is None.
    fn uses_rate_samples(&self) -> bool {
        false
    }
    /// Pacing rate in bytes per second: the sender spaces its transmissions at this rate
    /// (`sender::pacing`). None, the default: not paced, sent as fast as the windows open.
    /// Whether the controller paces is decided once, by its answer when the sender is built:
    /// a controller that paces returns Some from the start.
    fn pacing_rate(&self) -> Option<u64> {
        None
    }
    /// Segments a paced sender sends back to back at one departure (Linux's TSO/GSO
    /// autosizing, tcp_tso_autosize with the controller's min_tso_segs: socket buffers of
    /// several segments, each leaving the host at once; `sender::pacing`). 1, the default:
    /// every segment is paced on its own. Read only when the sender is paced.
    fn send_quantum(&self) -> u64 {
        1
    }
    /// A cross-layer report from a lossy hop. Only controllers that use such information
    /// (Venoplus) override this; for the others it is a no-op.
    fn on_cross_layer(&mut self, _report: &CrossLayerReport) {}
    /// The connection's handshake gave the first RTT sample, `rtt`, before any data was sent
    /// (at `now`, when the connection was established): a controller whose model starts from
    /// it takes it here (Linux's `bbr_init` takes `tcp_min_rtt` as its first RTprop and paces
    /// the initial window over the SRTT). A no-op by default: Reno's and CUBIC's rules read
    /// only the samples of data (CUBIC's `delay_min` starts at 0 in `bictcp_init`).
    fn on_handshake_rtt(&mut self, _now: Time, _rtt: Dur) {}
}

/// What every controller is built from, besides its own parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CcContext {
    pub mss: u32,
    pub initial_cwnd: u64,
    pub initial_ssthresh: u64,
    pub growth: Growth,
    /// Seed of the controller's own random stream (BBR's ProbeBW start phase); the
    /// simulator derives one per flow from the scenario seed.
    pub seed: u64,
}

/// A controller by name with its parameters, as scenario files give it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ControllerSpec {
    pub name: String,
    #[serde(default)]
    pub params: Params,
}

impl ControllerSpec {
    pub fn named(name: &str) -> Self {
        ControllerSpec {
            name: name.to_string(),
            params: Params::new(),
        }
    }
}

/// The name -> factory table of controllers.
pub type ControllerRegistry = Registry<CcContext, dyn CongestionControl>;

/// The built-in controllers: name, description and constructor, written once.
pub const BUILT_IN: [BuiltIn<CcContext, dyn CongestionControl>; 10] = [
    built_in!("reno", "RFC 5681 Reno", reno::Reno::from_params),
    built_in!("veno", "TCP Veno (Fu & Liew 2003)", veno::Veno::from_params),
    built_in!(
        "vegas",
        "TCP Vegas (Brakmo & Peterson 1995)",
        vegas::Vegas::from_params
    ),
    built_in!(
        "westwood",
        "TCP Westwood+ (bandwidth estimation)",
        westwood::Westwood::from_params
    ),
    built_in!(
        "areno",
        "TCP AReno (adaptive Reno)",
        areno::AReno::from_params
    ),
    built_in!(
        "highspeed",
        "HighSpeed TCP (RFC 3649)",
        highspeed::HighSpeed::from_params
    ),
    built_in!("cubic", "CUBIC (RFC 9438)", cubic::Cubic::from_params),
    built_in!(
        "venoplus",
        "Veno with cross-layer loss reports",
        venoplus::Venoplus::from_params
    ),
    built_in!(
        "bbr",
        "BBR v1 (Cardwell et al. 2016)",
        bbr::Bbr::from_params
    ),
    built_in!(
        "bbr3",
        "BBR v3 (draft-ietf-ccwg-bbr-04): loss/ECN bounds",
        bbr3::Bbr3::from_params
    ),
];

/// Names of the built-in controllers, in order.
pub const CONTROLLERS: &[&str] = &names_of(&BUILT_IN);

/// A registry holding the built-in controllers (extend it with `Registry::register`).
pub fn built_ins() -> ControllerRegistry {
    ControllerRegistry::with_built_ins("controller", "congestion controller", &BUILT_IN)
}

/// Builds a built-in controller by name (`Registries` for registered ones).
pub fn build(
    spec: &ControllerSpec,
    ctx: &CcContext,
) -> Result<Box<dyn CongestionControl>, ConfigError> {
    built_ins().build(&spec.name, &spec.params, ctx)
}

#[cfg(test)]
mod registry_tests {
    use super::*;

    #[test]
    fn every_listed_controller_builds_and_reports_its_name() {
        let ctx = CcContext {
            mss: 1000,
            initial_cwnd: 2000,
            initial_ssthresh: u64::MAX,
            growth: Growth::default(),
            seed: 0,
        };
        for name in CONTROLLERS {
            let c = build(&ControllerSpec::named(name), &ctx).unwrap();
            assert_eq!(c.name(), *name);
        }
        let e = build(&ControllerSpec::named("nosuch"), &ctx).err().unwrap();
        assert!(
            e.message.contains("venoplus") && e.message.contains("cubic"),
            "{e}"
        );
    }
}
