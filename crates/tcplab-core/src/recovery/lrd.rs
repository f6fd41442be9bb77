//! Lost Retransmission Detection (Mathis & Mahdavi's FACK notes; "LRD" in the ETH study):
//! Rate-Halving ([`super::rh`]) plus the detection of lost retransmissions
//! ([`super::lost_rtx`]).
//!
//! Each retransmission remembers snd.nxt when it left (`SegState::rtx_mark`, the first
//! segment sent after it). When a segment at or above that mark is SACKed while the
//! retransmitted segment is still neither SACKed nor acknowledged, the retransmission was
//! lost too: the segment is declared lost again (`Scoreboard::mark_retransmission_lost`) and
//! retransmitted as soon as the window allows (it is the lowest hole, so it goes first).
//!
//! A lost retransmission detected after the adjustment interval of the current halving is a
//! new congestion signal: the strategy answers `RecoveryAction::Restart`, so the controller
//! reduces again from the current (bounded) window and a new halving begins, with the
//! recovery point moved to snd.nxt (as PSC's rate-halving starts a new adjustment interval on
//! a new hole). Detected during the interval, the loss only lowers the halving's outcome (the
//! segment was not delivered). PSC's ns-2 code waits for three more SACKs before resending;
//! here the segment is resent at once, as the ETH report describes ("schedules the packet for
//! another retransmission").

use super::rh::RateHalving;
use super::RecoveryContext;
use crate::{ConfigError, ParamReader, Params};

/// `recovery = "lrd"`: Rate-Halving with lost retransmission detection.
pub fn from_params(ctx: &RecoveryContext, params: &Params) -> Result<RateHalving, ConfigError> {
    ParamReader::new("recovery lrd", params).finish()?;
    super::detect::require_sack(ctx, "lrd")?;
    Ok(RateHalving::new(ctx, true))
}
