//! tcplab-core: sans-IO TCP for congestion-control experiments.
//!
//! A [`Sender`] and a [`Receiver`] are state machines with no clock, socket or global state:
//! time ([`Time`], integer nanoseconds) is passed in, segments are passed in and polled out.
//! The sender composes a congestion controller ([`cc`]) with a loss-recovery strategy
//! ([`recovery`]); any controller works with any strategy.

pub mod ack;
pub mod cc;
pub mod config;
pub mod conn;
pub mod error;
pub mod factory;
pub mod log;
pub mod params;
pub mod profile;
pub mod rate;
pub mod receiver;
pub mod recovery;
pub mod registry;
pub mod rtt;
pub mod scoreboard;
pub mod segment;
pub mod sender;
pub mod seq;
pub mod spurious;
pub mod time;
pub mod wire;

pub use cc::{CongestionControl, ControllerSpec};
pub use config::{RepeatedRto, SharedConfig, TcpConfig};
pub use error::{ConfigError, ConfigValue};
pub use log::{
    Event, LogRecord, LossResponse, ReceiverCounters, SenderCounters, TxKind, WindowReason,
};
pub use params::{ParamReader, ParamValue, Params};
pub use profile::Profile;
pub use receiver::Receiver;
pub use recovery::{LossRecovery, RecoverySpec};
pub use rtt::{RtoMode, RttEstimator};
pub use scoreboard::Scoreboard;
pub use segment::{AckSegment, DataSegment, SackBlock, SackList, MAX_SACK_BLOCKS};
pub use sender::{Sender, SenderSnapshot};
pub use seq::Seq;
pub use time::{Dur, Time};
