//! Per-connection TCP settings shared by sender and receiver. Defaults follow the RFCs
//! (RFC 5681, 6298, 7323, 2018); docs/tcp.md tells how to select each paper's settings.

use crate::cc::Growth;
use crate::error::ConfigValue;
use crate::{ConfigError, Dur, RtoMode};
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// Settings an endpoint keeps: a [`TcpConfig`] given by reference is copied once, an
/// `Arc<TcpConfig>` is shared. The simulator hands every flow with the same settings (a flow
/// group, the scenario's defaults) one shared copy, so that 10,000 endpoints do not each
/// hold, and each read from memory, their own 120 bytes of equal settings.
pub trait SharedConfig {
    /// The settings as the endpoint keeps them.
    fn shared(self) -> Arc<TcpConfig>;
}

impl SharedConfig for &TcpConfig {
    fn shared(self) -> Arc<TcpConfig> {
        Arc::new(self.clone())
    }
}

impl SharedConfig for &Arc<TcpConfig> {
    fn shared(self) -> Arc<TcpConfig> {
        Arc::clone(self)
    }
}

impl SharedConfig for Arc<TcpConfig> {
    fn shared(self) -> Arc<TcpConfig> {
        self
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TcpConfig {
    /// Payload bytes per full segment.
    pub mss: u32,
    /// Initial window in segments (RFC 5681 allows 2-4; Linux uses 10).
    pub initial_cwnd: u32,
    /// Initial slow-start threshold in bytes; None = unbounded.
    pub initial_ssthresh: Option<u64>,
    /// Window growth per ACK (BSD), per acknowledged byte (RFC 3465) or per acknowledged
    /// segment (Linux).
    pub growth: Growth,
    /// RFC 6298 lower bound on the RTO.
    pub rto_min: Dur,
    /// RTO before the first RTT sample.
    pub rto_initial: Dur,
    /// Upper bound on the backed-off RTO.
    pub rto_max: Dur,
    /// Clock granularity G of RFC 6298 (RTO >= SRTT + max(G, 4 RTTVAR)).
    pub clock_granularity: Dur,
    /// RFC 7323 timestamps: RTT samples from every ACK that advances the window.
    pub timestamps: bool,
    /// Duplicate ACKs that trigger fast retransmit.
    pub dupthresh: u32,
    /// Receiver delays ACKs (acknowledges every `ack_every` full-sized segments or after
    /// `delayed_ack_timeout`).
    pub delayed_ack: bool,
    pub ack_every: u32,
    pub delayed_ack_timeout: Dur,
    /// SACK blocks per ACK, 0 to 6; 0 turns SACK off.
    pub sack_blocks: u8,
    /// Receive buffer in bytes: the window the receiver advertises, or with `rcv_autotune`
    /// the largest its buffer grows to (Linux tcp_rmem[2]).
    pub rcv_buf: u64,
    /// Linux's receive window (docs/tcp.md, "Receive window"): the buffer starts at
    /// `rcv_buf_initial` and autotunes up to `rcv_buf`, the window grows per segment
    /// (tcp_grow_window) and per RTT (dynamic right-sizing). Off by default: the window is
    /// `rcv_buf` throughout.
    pub rcv_autotune: bool,
    /// With `rcv_autotune`: the buffer at the start (Linux tcp_rmem[1]).
    pub rcv_buf_initial: u64,
    /// With `rcv_autotune`: the buffer memory a received segment takes (Linux's
    /// skb->truesize; it sets the share of the buffer that is window, `mss * 256 /
    /// rcv_truesize` in 256ths). The default is what Linux 6.18 reports for a 1448-byte
    /// segment over veth (tcp:tcp_rcvbuf_grow's scaling_ratio 160).
    pub rcv_truesize: u32,
    /// ECN-capable transport.
    pub ecn: bool,
    /// The receiver reports duplicate segments in a DSACK block (RFC 2883); needs SACK.
    /// Off by default: the ETH framework and the foundation's results had no DSACK.
    pub dsack: bool,
    /// What a repeated retransmission timeout (the timer fires again before the cumulative
    /// ACK moved) does to ssthresh: held (RFC 5681 §3.1, Linux) or recomputed from the
    /// collapsed window (4.4BSD and the NetBSD stacks of the Veno paper's experiments).
    pub repeated_rto: RepeatedRto,
    /// F-RTO (RFC 5682, SACK-enhanced as in Linux): detect spurious timeouts by sending new
    /// data after the first ACK of a timeout's recovery (see `spurious`).
    pub frto: bool,
    /// Undo reductions found unnecessary: every retransmission reported as a duplicate
    /// (DSACK), an echoed timestamp older than the first retransmission, or F-RTO.
    pub undo: bool,
    /// What a SACK block reports: RFC 2018 byte ranges (default) or, as the ETH framework
    /// did (Bolliger et al. 1999, Appendix A.2), one out-of-order packet each.
    pub sack_style: SackStyle,
    /// How the RTO follows the RTT samples: RFC 6298 (default) or Linux (docs/tcp.md).
    pub rto_mode: RtoMode,
    /// Linux's quick-ACK mode and adaptive delayed-ACK timeout (tcp_incr_quickack,
    /// tcp_event_data_recv; docs/tcp.md). Needs `delayed_ack`. Off by default.
    pub quickack: bool,
    /// With `quickack`: the floor of the adaptive delayed-ACK timeout (Linux TCP_ATO_MIN);
    /// `delayed_ack_timeout` is its ceiling.
    pub delayed_ack_min: Dur,
}

/// ssthresh at a repeated retransmission timeout.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RepeatedRto {
    /// RFC 5681 §3.1: "if the segment has already been retransmitted via the retransmission
    /// timer at least once, then ssthresh is held constant". Linux's tcp_enter_loss recomputes
    /// ssthresh only when the cumulative ACK moved since the last timeout.
    #[default]
    Rfc5681,
    /// 4.4BSD tcp_timer.c (TCPT_REXMT): ssthresh = max(min(wnd, cwnd)/2, 2 MSS) at every
    /// expiry, so a second expiry takes ssthresh to 2 MSS.
    Bsd,
}

/// How the receiver fills the SACK blocks of an ACK (docs/tcp.md, "Receiver rules").
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SackStyle {
    /// RFC 2018: each block a contiguous range of held data, the one with the most recently
    /// received segment first, the others by recency.
    #[default]
    Ranges,
    /// The ETH framework: each block one out-of-order packet as it arrived (only its bytes
    /// not reported by an earlier packet), the most recently received first, up to
    /// `sack_blocks`.
    EthPackets,
}

impl Default for TcpConfig {
    fn default() -> Self {
        TcpConfig {
            mss: 1460,
            initial_cwnd: 2,
            initial_ssthresh: None,
            growth: Growth::default(),
            rto_min: Dur::from_secs(1),
            rto_initial: Dur::from_secs(1),
            rto_max: Dur::from_secs(60),
            clock_granularity: Dur::from_millis(1),
            timestamps: true,
            dupthresh: 3,
            delayed_ack: true,
            ack_every: 2,
            delayed_ack_timeout: Dur::from_millis(200),
            sack_blocks: 3,
            rcv_buf: 64 << 20,
            rcv_autotune: false,
            rcv_buf_initial: 131_072,
            rcv_truesize: 2304,
            ecn: false,
            dsack: false,
            repeated_rto: RepeatedRto::default(),
            frto: false,
            undo: false,
            sack_style: SackStyle::Ranges,
            rto_mode: RtoMode::Rfc6298,
            quickack: false,
            delayed_ack_min: Dur::from_millis(40),
        }
    }
}

impl TcpConfig {
    /// Checks ranges and the fields' relations; the error names the field, the value, the
    /// rule it breaks and what is allowed (the one home of these rules: the simulator's
    /// problems and the Python schema's messages are built from the error).
    pub fn validate(&self) -> Result<(), ConfigError> {
        use ConfigValue::{Int, Range};
        fn bad(
            field: &str,
            rule: &'static str,
            v: impl Into<ConfigValue>,
            limit: ConfigValue,
            allowed: &str,
        ) -> ConfigError {
            ConfigError::rule(format!("tcp.{field}"), rule, v, Some(limit), allowed)
        }
        let mss = u64::from(self.mss);
        if !(64..=65_000).contains(&self.mss) {
            let limit = Range([64, 65_000]);
            return Err(bad(
                "mss",
                ConfigError::RANGE,
                self.mss,
                limit,
                "expected 64..=65000 bytes",
            ));
        }
        if self.initial_cwnd == 0 || self.initial_cwnd > 10_000 {
            return Err(bad(
                "initial_cwnd",
                ConfigError::RANGE,
                self.initial_cwnd,
                Range([1, 10_000]),
                "expected 1..=10000 segments",
            ));
        }
        if let Some(s) = self.initial_ssthresh {
            if s < 2 * mss {
                let rule = ConfigError::SSTHRESH_BELOW_2MSS;
                return Err(bad(
                    "initial_ssthresh",
                    rule,
                    s,
                    Int(2 * mss),
                    "expected at least 2 MSS bytes",
                ));
            }
        }
        if let Growth::ByteCounting { limit } = self.growth {
            if limit == 0 {
                let rule = ConfigError::AT_LEAST;
                return Err(bad(
                    "growth.limit",
                    rule,
                    limit,
                    Int(1),
                    "expected at least 1 segment",
                ));
            }
        }
        let rto_allowed = "expected > 0 and <= rto_max";
        if self.rto_min.as_nanos() == 0 {
            return Err(bad(
                "rto_min",
                ConfigError::AT_LEAST,
                self.rto_min,
                Int(1),
                rto_allowed,
            ));
        }
        if self.rto_min > self.rto_max {
            let rule = ConfigError::RTO_MIN_ABOVE_MAX;
            return Err(bad(
                "rto_min",
                rule,
                self.rto_min,
                self.rto_max.into(),
                rto_allowed,
            ));
        }
        for (field, v, allowed) in [
            ("rto_initial", self.rto_initial.as_nanos(), "expected > 0"),
            ("dupthresh", self.dupthresh.into(), "expected at least 1"),
            ("ack_every", self.ack_every.into(), "expected at least 1"),
        ] {
            if v == 0 {
                return Err(bad(field, ConfigError::AT_LEAST, v, Int(1), allowed));
            }
        }
        if self.sack_blocks as usize > crate::MAX_SACK_BLOCKS {
            return Err(bad(
                "sack_blocks",
                ConfigError::RANGE,
                self.sack_blocks,
                Range([0, crate::MAX_SACK_BLOCKS as u64]),
                "expected 0..=6",
            ));
        }
        if self.dsack && !self.sack() {
            return Err(ConfigError::rule(
                "tcp.dsack",
                ConfigError::DSACK_NEEDS_SACK,
                self.dsack,
                None,
                "needs SACK (sack_blocks >= 1): DSACK blocks travel in the SACK option",
            ));
        }
        if self.rcv_buf < mss {
            let rule = ConfigError::RCV_BUF_BELOW_MSS;
            return Err(bad(
                "rcv_buf",
                rule,
                self.rcv_buf,
                Int(mss),
                "expected at least one MSS",
            ));
        }
        if self.rcv_autotune {
            if !(mss..=self.rcv_buf).contains(&self.rcv_buf_initial) {
                return Err(bad(
                    "rcv_buf_initial",
                    ConfigError::RANGE,
                    self.rcv_buf_initial,
                    Range([mss, self.rcv_buf]),
                    "expected one MSS up to rcv_buf with rcv_autotune",
                ));
            }
            let t = u64::from(self.rcv_truesize);
            if !(mss + 1..=256 * mss).contains(&t) {
                return Err(bad(
                    "rcv_truesize",
                    ConfigError::RANGE,
                    t,
                    Range([mss + 1, 256 * mss]),
                    "expected more than one MSS, at most 256 MSS, with rcv_autotune",
                ));
            }
        }
        if self.quickack {
            let allowed = "expected > 0 and <= delayed_ack_timeout with quickack";
            let v = self.delayed_ack_min;
            if v.as_nanos() == 0 {
                return Err(bad(
                    "delayed_ack_min",
                    ConfigError::AT_LEAST,
                    v,
                    Int(1),
                    allowed,
                ));
            }
            if v > self.delayed_ack_timeout {
                let rule = ConfigError::ATO_MIN_ABOVE_TIMEOUT;
                let limit = self.delayed_ack_timeout.into();
                return Err(bad("delayed_ack_min", rule, v, limit, allowed));
            }
        }
        Ok(())
    }

    pub fn sack(&self) -> bool {
        self.sack_blocks > 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dsack_needs_sack() {
        let mut c = TcpConfig {
            dsack: true,
            sack_blocks: 0,
            ..TcpConfig::default()
        };
        let e = c.validate().unwrap_err();
        assert!(e.message.starts_with("tcp.dsack = true: needs SACK"), "{e}");
        assert_eq!(
            (e.field.as_str(), e.rule),
            ("tcp.dsack", ConfigError::DSACK_NEEDS_SACK)
        );
        c.sack_blocks = 3;
        c.validate().unwrap();
    }

    /// Each rule of `validate`: the field, the rule, the value and the bound it names.
    #[test]
    fn each_rule_is_structured() {
        use ConfigValue::{Int, Range};
        let ms = |m: u64| Int(m * 1_000_000);
        let base = TcpConfig::default();
        let cases: Vec<(TcpConfig, &str, &str, ConfigValue, Option<ConfigValue>)> = vec![
            (
                TcpConfig {
                    mss: 10,
                    ..base.clone()
                },
                "tcp.mss",
                ConfigError::RANGE,
                Int(10),
                Some(Range([64, 65_000])),
            ),
            (
                TcpConfig {
                    initial_cwnd: 0,
                    ..base.clone()
                },
                "tcp.initial_cwnd",
                ConfigError::RANGE,
                Int(0),
                Some(Range([1, 10_000])),
            ),
            (
                TcpConfig {
                    initial_ssthresh: Some(2000),
                    ..base.clone()
                },
                "tcp.initial_ssthresh",
                ConfigError::SSTHRESH_BELOW_2MSS,
                Int(2000),
                Some(Int(2920)),
            ),
            (
                TcpConfig {
                    growth: Growth::ByteCounting { limit: 0 },
                    ..base.clone()
                },
                "tcp.growth.limit",
                ConfigError::AT_LEAST,
                Int(0),
                Some(Int(1)),
            ),
            (
                TcpConfig {
                    rto_min: Dur::ZERO,
                    ..base.clone()
                },
                "tcp.rto_min",
                ConfigError::AT_LEAST,
                Int(0),
                Some(Int(1)),
            ),
            (
                TcpConfig {
                    rto_max: Dur::from_millis(500),
                    ..base.clone()
                },
                "tcp.rto_min",
                ConfigError::RTO_MIN_ABOVE_MAX,
                ms(1000),
                Some(ms(500)),
            ),
            (
                TcpConfig {
                    rto_initial: Dur::ZERO,
                    ..base.clone()
                },
                "tcp.rto_initial",
                ConfigError::AT_LEAST,
                Int(0),
                Some(Int(1)),
            ),
            (
                TcpConfig {
                    dupthresh: 0,
                    ..base.clone()
                },
                "tcp.dupthresh",
                ConfigError::AT_LEAST,
                Int(0),
                Some(Int(1)),
            ),
            (
                TcpConfig {
                    ack_every: 0,
                    ..base.clone()
                },
                "tcp.ack_every",
                ConfigError::AT_LEAST,
                Int(0),
                Some(Int(1)),
            ),
            (
                TcpConfig {
                    sack_blocks: 7,
                    ..base.clone()
                },
                "tcp.sack_blocks",
                ConfigError::RANGE,
                Int(7),
                Some(Range([0, 6])),
            ),
            (
                TcpConfig {
                    dsack: true,
                    sack_blocks: 0,
                    ..base.clone()
                },
                "tcp.dsack",
                ConfigError::DSACK_NEEDS_SACK,
                ConfigValue::Bool(true),
                None,
            ),
            (
                TcpConfig {
                    rcv_buf: 1000,
                    ..base.clone()
                },
                "tcp.rcv_buf",
                ConfigError::RCV_BUF_BELOW_MSS,
                Int(1000),
                Some(Int(1460)),
            ),
            (
                TcpConfig {
                    quickack: true,
                    delayed_ack_min: Dur::ZERO,
                    ..base.clone()
                },
                "tcp.delayed_ack_min",
                ConfigError::AT_LEAST,
                Int(0),
                Some(Int(1)),
            ),
            (
                TcpConfig {
                    quickack: true,
                    delayed_ack_min: Dur::from_millis(300),
                    ..base.clone()
                },
                "tcp.delayed_ack_min",
                ConfigError::ATO_MIN_ABOVE_TIMEOUT,
                ms(300),
                Some(ms(200)),
            ),
        ];
        for (config, field, rule, value, limit) in cases {
            let e = config.validate().unwrap_err();
            assert_eq!((e.field.as_str(), e.rule), (field, rule), "{e}");
            assert_eq!((e.value, e.limit), (Some(value.clone()), limit), "{field}");
            assert!(
                e.message
                    .starts_with(&format!("{field} = {value}: expected"))
                    || rule == ConfigError::DSACK_NEEDS_SACK,
                "{}",
                e.message
            );
        }
        // quickack off: delayed_ack_min is not checked.
        TcpConfig {
            delayed_ack_min: Dur::from_secs(1),
            ..base
        }
        .validate()
        .unwrap();
    }
}
