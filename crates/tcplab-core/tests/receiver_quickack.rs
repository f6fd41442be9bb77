//! Scripted exchanges with the receiver in Linux's quick-ACK mode (`quickack = true`):
//! quick-ACK credit (tcp_incr_quickack, tcp_enter_quickack_mode, tcp_dec_quickack_mode) and
//! the adaptive delayed-ACK timeout (tcp_event_data_recv, tcp_send_delayed_ack).

use tcplab_core::{DataSegment, Dur, Receiver, TcpConfig, Time};

use crate::common;

use common::seg;

const MSS: u32 = 1000;

fn config(quickack: bool) -> TcpConfig {
    TcpConfig {
        mss: MSS,
        timestamps: false,
        sack_blocks: 3,
        delayed_ack: true,
        ack_every: 2,
        quickack,
        delayed_ack_min: Dur::from_millis(40),
        delayed_ack_timeout: Dur::from_millis(200),
        rto_initial: Dur::from_secs(1),
        ..TcpConfig::default()
    }
}

fn ms(t: u64) -> Time {
    Time::from_millis(t)
}

/// Feeds `s` at `t` ms and returns the cumulative ACK sent at once, if any.
fn feed(r: &mut Receiver, t: u64, s: DataSegment) -> Option<u64> {
    r.on_segment(ms(t), &s);
    r.poll_transmit(ms(t)).map(|a| a.ack.0)
}

/// 16 full segments 1 ms apart from byte 0 at t = 0..15: the quick-ACK credit of a new
/// connection; returns the ACKs sent.
fn drain(r: &mut Receiver) -> Vec<Option<u64>> {
    (0..16u64)
        .map(|n| feed(r, n, seg(n * MSS as u64, MSS)))
        .collect()
}

#[test]
fn the_first_16_segments_are_acked_one_by_one_then_every_second() {
    let mut r = Receiver::new(&config(true));
    let acks = drain(&mut r);
    let want: Vec<_> = (1..=16).map(|n| Some(n * MSS as u64)).collect();
    assert_eq!(acks, want, "TCP_MAX_QUICKACKS immediate ACKs");
    assert_eq!(r.quickacks_left(), Some(0));
    assert_eq!(feed(&mut r, 16, seg(16_000, MSS)), None, "delayed again");
    assert_eq!(feed(&mut r, 17, seg(17_000, MSS)), Some(18_000));

    // Without quick-ACK mode the first segment already waits for a second one.
    let mut r = Receiver::new(&config(false));
    assert_eq!(feed(&mut r, 0, seg(0, MSS)), None);
    assert_eq!(feed(&mut r, 1, seg(1000, MSS)), Some(2000));
    assert_eq!(r.quickacks_left(), None);
}

#[test]
fn the_credit_is_at_most_half_the_window_in_segments() {
    // rcv_wnd / (2 MSS) = 10 000 / 2 000 = 5 quick ACKs.
    let mut c = config(true);
    c.rcv_buf = 10 * MSS as u64;
    let mut r = Receiver::new(&c);
    let acks: Vec<_> = (0..7u64)
        .map(|n| feed(&mut r, n, seg(n * MSS as u64, MSS)))
        .collect();
    let sent = acks.iter().filter(|a| a.is_some()).count();
    assert_eq!(
        &acks[..5],
        &[Some(1000), Some(2000), Some(3000), Some(4000), Some(5000)]
    );
    assert_eq!((acks[5], acks[6], sent), (None, Some(7000), 6));
}

#[test]
fn the_delayed_ack_timeout_adapts_to_the_inter_arrival_time() {
    let mut r = Receiver::new(&config(true));
    drain(&mut r); // the credit ran out: ato = TCP_ATO_MIN = 40 ms
                   // 30 ms after the last segment (between ato_min/2 and ato): ato = 40/2 + 30 = 50 ms.
    assert_eq!(feed(&mut r, 45, seg(16_000, 500)), None);
    assert_eq!(r.poll_timeout(), Some(ms(95)));
    // 10 ms later (<= 20 ms): ato = 50/2 + 20 = 45 ms; the earlier deadline stays.
    assert_eq!(feed(&mut r, 55, seg(16_500, 400)), None);
    assert_eq!(r.poll_timeout(), Some(ms(95)));
    r.on_timeout(ms(95));
    assert_eq!(r.poll_transmit(ms(95)).map(|a| a.ack.0), Some(16_900));
    // 45 ms gap (= ato): no change. Deadline 100 + 45.
    assert_eq!(feed(&mut r, 100, seg(16_900, 100)), None);
    assert_eq!(r.poll_timeout(), Some(ms(145)));
    // 35 ms gap: ato = 22.5 + 35 = 57.5 ms; the deadline (145) is within ato/4 of now (135):
    // the ACK goes at once (tcp_send_delayed_ack).
    assert_eq!(feed(&mut r, 135, seg(17_000, 100)), Some(17_100));
    assert_eq!(r.poll_timeout(), None);

    // The same lone segment without quick-ACK mode waits delayed_ack_timeout.
    let mut r = Receiver::new(&config(false));
    assert_eq!(feed(&mut r, 45, seg(0, 500)), None);
    assert_eq!(r.poll_timeout(), Some(ms(245)));
}

#[test]
fn the_timeout_never_exceeds_delayed_ack_timeout() {
    let mut c = config(true);
    c.delayed_ack_timeout = Dur::from_millis(30);
    c.delayed_ack_min = Dur::from_millis(30);
    let mut r = Receiver::new(&c);
    drain(&mut r);
    // 20 ms gap < ato 30: ato = 15 + 20 = 35 ms, capped at 30 ms.
    assert_eq!(feed(&mut r, 35, seg(16_000, 500)), None);
    assert_eq!(r.poll_timeout(), Some(ms(65)));
}

#[test]
fn a_retransmission_below_rcv_nxt_restores_the_credit() {
    let mut r = Receiver::new(&config(true));
    drain(&mut r);
    assert_eq!(
        feed(&mut r, 20, seg(3000, MSS)),
        Some(16_000),
        "duplicate: ACK at once"
    );
    assert_eq!(r.quickacks_left(), Some(15));
    for n in 16..31u64 {
        assert_eq!(
            feed(&mut r, n + 5, seg(n * MSS as u64, MSS)),
            Some((n + 1) * 1000)
        );
    }
    assert_eq!(feed(&mut r, 40, seg(31_000, MSS)), None);
    // A segment beyond the window does the same.
    let mut c = config(true);
    c.rcv_buf = 40 * MSS as u64;
    let mut r = Receiver::new(&c);
    drain(&mut r);
    assert_eq!(feed(&mut r, 20, seg(100_000, MSS)), Some(16_000));
    assert_eq!(r.quickacks_left(), Some(15));
    // A segment inside a held block is no retransmission below rcv_nxt: no new credit.
    let mut r = Receiver::new(&config(true));
    drain(&mut r);
    assert_eq!(
        feed(&mut r, 20, seg(20_000, MSS)),
        Some(16_000),
        "out of order"
    );
    assert_eq!(
        feed(&mut r, 21, seg(20_000, MSS)),
        Some(16_000),
        "duplicate above"
    );
    assert_eq!(r.quickacks_left(), Some(0));
}

#[test]
fn an_idle_gap_longer_than_the_rto_restores_the_credit() {
    let mut r = Receiver::new(&config(true));
    drain(&mut r);
    assert_eq!(feed(&mut r, 900, seg(16_000, MSS)), None, "900 ms < RTO");
    assert_eq!(feed(&mut r, 901, seg(17_000, MSS)), Some(18_000));
    assert_eq!(
        feed(&mut r, 1902, seg(18_000, MSS)),
        Some(19_000),
        "1001 ms > RTO"
    );
    assert_eq!(r.quickacks_left(), Some(15));
}

#[test]
fn validation_names_delayed_ack_min() {
    let mut c = config(true);
    c.delayed_ack_min = Dur::from_millis(300);
    let e = c.validate().unwrap_err().to_string();
    assert!(e.contains("tcp.delayed_ack_min"), "{e}");
    c.delayed_ack_min = Dur::ZERO;
    assert!(c.validate().is_err());
    // Without quickack the field is not used and not checked (old scenarios stay valid).
    c.quickack = false;
    assert!(c.validate().is_ok());
}
