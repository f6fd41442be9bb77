//! Pacing in the sans-IO sender: a controller that sets a pacing rate gets its segments
//! (after the first ten) released no closer than size / rate when the sender is woken on
//! time (a late one shortens its gap by up to half: `sender::pacing`), and the sender asks
//! to be woken at the release time;
//! a controller that sets none sends as the windows open, in bursts.

use std::collections::VecDeque;
use tcplab_core::cc::reno::Reno;
use tcplab_core::cc::{AckSample, CongestionControl, CongestionEvent, Verdict};
use tcplab_core::registry::Registries;
use tcplab_core::{AckSegment, ControllerSpec, Dur, Params, RecoverySpec, Sender, TcpConfig, Time};

/// Reno's windows with a fixed pacing rate.
struct PacedReno(Reno, u64);

impl CongestionControl for PacedReno {
    fn name(&self) -> &'static str {
        "paced-reno"
    }
    fn cwnd(&self) -> u64 {
        self.0.cwnd()
    }
    fn ssthresh(&self) -> u64 {
        self.0.ssthresh()
    }
    fn on_ack(&mut self, s: &AckSample) {
        self.0.on_ack(s)
    }
    fn on_congestion(&mut self, ev: &CongestionEvent) -> Verdict {
        self.0.on_congestion(ev)
    }
    fn on_repeated_timeout(&mut self, now: Time) {
        self.0.on_repeated_timeout(now)
    }
    fn on_recovery_exit(&mut self, now: Time, cwnd: u64) {
        self.0.on_recovery_exit(now, cwnd)
    }
    fn on_undo(&mut self, now: Time, c: u64, s: u64) {
        self.0.on_undo(now, c, s)
    }
    fn pacing_rate(&self) -> Option<u64> {
        Some(self.1)
    }
}

const RATE: u64 = 1_000_000; // bytes/s

fn sender(controller: &str) -> Sender {
    let mut r = Registries::default();
    r.controllers.register("paced-reno", "test", |p, ctx| {
        Ok(Box::new(PacedReno(Reno::from_params(ctx, p)?, RATE)) as Box<dyn CongestionControl>)
    });
    let cfg = TcpConfig {
        initial_cwnd: 20, // more than the unpaced first segments
        ..TcpConfig::default()
    };
    let rec = RecoverySpec {
        name: "newreno".into(),
        params: Params::new(),
    };
    Sender::build_with(&r, &cfg, &ControllerSpec::named(controller), &rec, None).unwrap()
}

/// Runs `sender` for `segments` transmissions against a loss-free path that ACKs every
/// segment 10 ms after it left; returns the departure times and sizes.
fn run(mut s: Sender, segments: usize) -> Vec<(Time, u64)> {
    let rtt = Dur::from_millis(10);
    let mut acks: VecDeque<(Time, AckSegment)> = VecDeque::new();
    let mut sent = Vec::new();
    let mut now = Time::ZERO;
    while sent.len() < segments {
        while acks.front().is_some_and(|(t, _)| *t <= now) {
            let (_, a) = acks.pop_front().unwrap();
            s.on_segment(now, &a);
        }
        if s.poll_timeout().is_some_and(|t| t <= now) {
            s.on_timeout(now);
        }
        while let Some(d) = s.poll_transmit(now) {
            sent.push((now, d.len as u64));
            acks.push_back((
                now + rtt,
                AckSegment {
                    ack: d.seq + d.len as u64,
                    sack: Default::default(),
                    ts_ecr: d.ts_val,
                    ts_val: None,
                    window: 64 << 20,
                    ece: false,
                },
            ));
        }
        let next_ack = acks.front().map(|(t, _)| *t);
        now = match (next_ack, s.poll_timeout()) {
            (Some(a), Some(b)) => a.min(b),
            (a, b) => a.or(b).expect("something to wait for"),
        };
    }
    sent
}

/// Data segments a connection sends before Linux paces (tcp_update_skb_after_send).
const UNPACED: usize = 10;

#[test]
fn a_paced_sender_woken_on_time_never_releases_two_segments_closer_than_size_over_rate() {
    let sent = run(sender("paced-reno"), 500);
    // The initial window leaves at once: the first ten segments are not paced.
    assert!(sent[..UNPACED].iter().all(|&(t, _)| t == Time::ZERO));
    let mut at_gap = 0;
    for w in sent[UNPACED - 1..].windows(2) {
        let ((t0, len), (t1, _)) = (w[0], w[1]);
        let gap = t1.saturating_since(t0).as_nanos() as u128;
        let min = (len as u128 * 1_000_000_000).div_ceil(RATE as u128);
        assert!(gap >= min, "{t0:?} -> {t1:?}: {gap} ns < {min} ns");
        at_gap += (gap == min) as u32;
    }
    // The windows (Reno grows without bound on a loss-free path) soon allow more than the
    // rate: then pacing alone spaces the segments, exactly size / rate apart.
    assert!(at_gap > 400, "{at_gap} of 490 gaps at size/rate");
}

#[test]
fn an_unpaced_sender_sends_what_the_window_allows_at_once() {
    let sent = run(sender("reno"), 50);
    assert!(
        sent[..10].iter().all(|&(t, _)| t == Time::ZERO),
        "the initial window"
    );
}

#[test]
fn a_held_sender_asks_to_be_woken_at_the_release_time() {
    let mut s = sender("paced-reno");
    for _ in 0..UNPACED - 1 {
        s.poll_transmit(Time::ZERO).expect("not paced yet");
    }
    let tenth = s.poll_transmit(Time::ZERO).unwrap();
    assert!(s.poll_transmit(Time::ZERO).is_none(), "held by pacing");
    let release = Time::ZERO + Dur::from_nanos(tenth.len as u64 * 1_000_000_000 / RATE);
    assert_eq!(s.poll_timeout(), Some(release));
    // Waking early changes nothing; at the release time the next segment leaves.
    s.on_timeout(release - Dur::from_nanos(1));
    assert!(s.poll_transmit(release - Dur::from_nanos(1)).is_none());
    s.on_timeout(release);
    assert!(s.poll_transmit(release).is_some());
    assert_eq!(s.counters().timeouts, 0);
}
