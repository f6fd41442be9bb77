//! Linux's receive window (`cfg.rcv_autotune`): the window a Linux receiver advertises
//! while its buffer autotunes, from net/ipv4/tcp_input.c (tcp_measure_rcv_mss,
//! tcp_grow_window, tcp_rcv_rtt_update, tcp_rcv_rtt_measure, tcp_rcv_rtt_measure_ts,
//! tcp_rcv_space_adjust, tcp_rcvbuf_grow, tcp_init_buffer_space), net/ipv4/tcp.c
//! (tcp_set_window_clamp), net/ipv4/tcp_output.c (tcp_select_initial_window,
//! __tcp_select_window, tcp_select_window) and include/net/tcp.h (tcp_win_from_space,
//! tcp_space_from_win, tcp_space, tcp_full_space), Linux 6.18.
//!
//! Memory: every segment held takes `cfg.rcv_truesize` bytes of the buffer (skb->truesize);
//! the window `space` bytes of buffer give is `space · ratio / 256` (tcp_win_from_space),
//! with ratio (tp->scaling_ratio) 128 until the first segment of at least `rcv_mss` bytes,
//! then `len · 256 / truesize`. The application reads as soon as a segment's ACK has gone
//! (or been put off), so the buffer holds the out-of-order segments and what the segment
//! being processed put in the receive queue (itself and the held segments it released):
//! Linux sends that ACK from the receive path, before its reader runs (the receiver,
//! `held` of [`Window::on_segment`] and [`Window::select`]).
//! - Start (tcp_select_initial_window, tcp_init_buffer_space): the buffer is
//!   `cfg.rcv_buf_initial` (tcp_rmem[1]); the window scale `ilog2(rcv_buf) - 15`, `rcv_buf`
//!   being tcp_rmem[2]; the initial window the buffer's window rounded down to whole MSS
//!   and at most 65535, rcv_ssthresh the same; DRS's space `min(rcv_ssthresh, 10 MSS)`.
//! - A new ratio clamps the window to the buffer's (tcp_set_window_clamp).
//! - Each segment of at least 128 bytes, in order or not, grows rcv_ssthresh by 2 MSS
//!   (when `win(truesize) <= len`; otherwise by the halving rule of __tcp_grow_window) up
//!   to the window clamp and the free space; a growth asks for an ACK at once
//!   (`icsk_ack.quick |= 1`, returned by [`Window::on_segment`]).
//! - The receiver's RTT: per window of data (tcp_rcv_rtt_measure, a new minimum only) and,
//!   with timestamps, `now - TSecr` in whole milliseconds (Linux's TSval clock) for a
//!   full-sized segment with a new TSecr (an EWMA of gain 1/8 upwards, a new minimum at
//!   once).
//! - Dynamic right-sizing (tcp_rcv_space_adjust, on each read): once per receiver RTT, if
//!   more was read in it than the last time, the buffer grows to hold twice that, plus
//!   twice the growth's share, plus the out-of-order span (tcp_rcvbuf_grow), up to
//!   `cfg.rcv_buf`; the window clamp follows.
//! - The advertised window (__tcp_select_window, tcp_select_window): the free space, at
//!   most rcv_ssthresh, rounded up to the window scale's unit; zero when the free space is
//!   below half the clamp and below an MSS or a sixteenth of the buffer's window; never
//!   below what the previous ACK offered.
//!
//! Not modelled: memory pressure (tcp_under_memory_pressure, pruning and collapsing the
//! queue), an application that does not read at once, the receive-queue `inq` term.

use crate::{Dur, TcpConfig, Time};

/// TCP_RMEM_TO_WIN_SCALE.
const RATIO_SHIFT: u32 = 8;
/// TCP_DEFAULT_SCALING_RATIO: half of the memory is window until a segment is measured.
const DEFAULT_RATIO: u64 = 1 << (RATIO_SHIFT - 1);
/// TCP_MSS_DEFAULT: the receiver's MSS estimate before the first segment.
const MSS_DEFAULT: u64 = 536;
/// TCP_INIT_CWND: DRS's first space is at most this many MSS.
const INIT_CWND: u64 = 10;
/// TCP_MAX_WSCALE.
const MAX_WSCALE: u32 = 14;
/// SOCK_MIN_RCVBUF / 2: the smallest window clamp (tcp_set_window_clamp).
const MIN_CLAMP: u64 = 2304;

/// A Linux receiver's window state.
#[derive(Clone, Debug)]
pub(super) struct Window {
    /// The receiver's advertised MSS (tp->advmss).
    advmss: u64,
    /// tcp_rmem[2]: the largest buffer.
    rmem_max: u64,
    /// Memory a segment takes (skb->truesize).
    truesize: u64,
    /// tp->scaling_ratio.
    ratio: u64,
    /// icsk_ack.rcv_mss.
    rcv_mss: u64,
    /// icsk_ack.last_seg_size: the last short segment's payload, 0 after any other.
    last_seg_size: u64,
    /// tp->tcp_header_len: the TCP header with the timestamp option when it is on.
    header_len: u64,
    /// sk->sk_rcvbuf.
    rcvbuf: u64,
    window_clamp: u64,
    rcv_ssthresh: u64,
    /// The window last advertised, and rcv_nxt then (tp->rcv_wnd, tp->rcv_wup).
    rcv_wnd: u64,
    rcv_wup: u64,
    wscale: u32,
    /// DRS: bytes read in the last measured RTT, and where and when this one started.
    space: u64,
    space_seq: u64,
    space_time: Time,
    /// rcv_rtt_est: the RTT, 8 times over in µs (0: none yet), the per-window measurement's
    /// end and start, and the last TSecr sampled.
    rtt_us8: u64,
    rtt_seq: u64,
    rtt_time: Option<Time>,
    last_tsecr: Option<Time>,
}

/// `space · ratio / 256` (tcp_win_from_space).
fn win_from_space(ratio: u64, space: u64) -> u64 {
    (space * ratio) >> RATIO_SHIFT
}

impl Window {
    pub fn new(cfg: &TcpConfig) -> Self {
        let advmss = u64::from(cfg.mss);
        let rcvbuf = cfg.rcv_buf_initial.min(cfg.rcv_buf);
        // tcp_select_initial_window: scale for the largest buffer, offer the first one.
        let wscale = (cfg.rcv_buf.max(1).ilog2().saturating_sub(15)).min(MAX_WSCALE);
        let full = win_from_space(DEFAULT_RATIO, rcvbuf);
        let space = if full > advmss {
            full - full % advmss
        } else {
            full
        };
        let rcv_wnd = space.min(65535);
        let rcv_ssthresh = rcv_wnd;
        Window {
            advmss,
            rmem_max: cfg.rcv_buf,
            truesize: u64::from(cfg.rcv_truesize),
            ratio: DEFAULT_RATIO,
            rcv_mss: MSS_DEFAULT.min(advmss),
            last_seg_size: 0,
            header_len: if cfg.timestamps { 32 } else { 20 },
            rcvbuf,
            window_clamp: full,
            rcv_ssthresh,
            rcv_wnd,
            rcv_wup: 0,
            wscale,
            // tcp_init_buffer_space
            space: rcv_ssthresh.min(INIT_CWND * advmss),
            space_seq: 0,
            space_time: Time::ZERO,
            rtt_us8: 0,
            rtt_seq: 0,
            rtt_time: None,
            last_tsecr: None,
        }
    }

    /// The window of the SYN (never scaled).
    pub fn initial(cfg: &TcpConfig) -> u64 {
        Window::new(cfg).rcv_wnd
    }

    /// The window a buffer of `space` bytes gives now.
    fn win(&self, space: u64) -> u64 {
        win_from_space(self.ratio, space)
    }

    /// tcp_space: the window the buffer has room for beside `held` segments.
    fn free_space(&self, held: u64) -> u64 {
        self.win(self.rcvbuf.saturating_sub(held * self.truesize))
    }

    /// The right edge of what the receiver accepts (rcv_wup + rcv_wnd).
    pub fn right_edge(&self, rcv_nxt: u64) -> u64 {
        (self.rcv_wup + self.rcv_wnd).max(rcv_nxt)
    }

    /// A data segment of `len` bytes arrived, in order or not; `held` segments (this one
    /// among them) now take buffer space. Whether the window grew (an ACK is due at once)
    /// and whether the segment was a small one Linux marks pushed (see `measure_mss`).
    pub fn on_segment(&mut self, len: u32, held: u64) -> (bool, bool) {
        let len = u64::from(len);
        let pushed = self.measure_mss(len);
        (len >= 128 && self.grow(len, held), pushed)
    }

    /// tcp_measure_rcv_mss: a full segment sets the ratio; a changed ratio moves the clamp.
    /// True for a segment smaller than `rcv_mss` that Linux marks pushed (ICSK_ACK_PUSHED):
    /// all but a second one in a row of the same size of at least TCP_MSS_DEFAULT bytes with
    /// the header (then it becomes `rcv_mss`). The segment is taken to carry PSH, as the last
    /// segment of a write does (the simulator has no flags).
    fn measure_mss(&mut self, len: u64) -> bool {
        let lss = std::mem::take(&mut self.last_seg_size);
        if len < self.rcv_mss {
            if len + self.header_len >= MSS_DEFAULT + 20 {
                self.last_seg_size = len;
                if len == lss {
                    self.rcv_mss = len;
                    return false;
                }
            }
            return true;
        }
        if len != self.rcv_mss {
            let old = self.ratio;
            self.ratio = ((len << RATIO_SHIFT) / self.truesize.max(1)).clamp(1, 255);
            if self.ratio != old {
                self.set_clamp(self.win(self.rcvbuf));
                self.space = self.space.min(self.window_clamp);
            }
        }
        self.rcv_mss = len.min(self.advmss);
        false
    }

    /// tcp_set_window_clamp.
    fn set_clamp(&mut self, val: u64) {
        let new = val.max(MIN_CLAMP);
        let old = std::mem::replace(&mut self.window_clamp, new);
        if new < old {
            self.rcv_ssthresh = self.rcv_ssthresh.min(new);
        } else {
            self.rcv_ssthresh = self.rcv_ssthresh.max(self.rcv_wnd.min(new));
        }
    }

    /// tcp_grow_window.
    fn grow(&mut self, len: u64, held: u64) -> bool {
        let room = self.window_clamp.min(self.free_space(held));
        if room <= self.rcv_ssthresh {
            return false;
        }
        let room = room - self.rcv_ssthresh;
        let incr = if self.win(self.truesize) <= len {
            2 * self.advmss
        } else {
            // __tcp_grow_window: halve the memory and the window until the segment fits.
            let mut truesize = self.win(self.truesize) >> 1;
            let mut window = self.win(self.rmem_max) >> 1;
            let mut incr = 0;
            while self.rcv_ssthresh <= window {
                if truesize <= len {
                    incr = 2 * self.rcv_mss;
                    break;
                }
                truesize >>= 1;
                window >>= 1;
            }
            incr
        };
        if incr == 0 {
            return false;
        }
        self.rcv_ssthresh += incr.min(room);
        true
    }

    /// tcp_rcv_rtt_measure: in-order data up to `rcv_nxt`, the window's measurement.
    pub fn on_in_order(&mut self, now: Time, rcv_nxt: u64) {
        if let Some(start) = self.rtt_time {
            if rcv_nxt < self.rtt_seq {
                return;
            }
            let us = ((now - start).as_nanos() / 1000).max(1);
            self.rtt_update(us, true);
        }
        self.rtt_seq = rcv_nxt + self.rcv_wnd;
        self.rtt_time = Some(now);
    }

    /// tcp_rcv_rtt_measure_ts: a segment of `len` bytes echoing `tsecr` (measured before
    /// it is queued, so the queue is empty: the application reads at once).
    pub fn on_tsecr(&mut self, now: Time, tsecr: Time, len: u32) {
        if self.last_tsecr == Some(tsecr) {
            return;
        }
        self.last_tsecr = Some(tsecr);
        if u64::from(len) < self.rcv_mss {
            return;
        }
        // Linux's TSval clock ticks in milliseconds.
        let ms = |t: Time| t.as_nanos() / Dur::from_millis(1).as_nanos();
        let delta = ms(now).saturating_sub(ms(tsecr));
        if delta > 0 {
            self.rtt_update(delta * 1000, false);
        }
    }

    /// tcp_rcv_rtt_update: a new minimum at once; with `win_dep` nothing else, otherwise an
    /// EWMA of gain 1/8.
    fn rtt_update(&mut self, sample_us: u64, win_dep: bool) {
        let m = sample_us << 3;
        let old = self.rtt_us8;
        if old == 0 || m < old {
            self.rtt_us8 = m;
        } else if !win_dep {
            self.rtt_us8 = old - (old >> 3) + sample_us;
        }
    }

    /// tcp_rcv_space_adjust: the application read everything up to `copied` at `now`;
    /// `ooo_span` is how far held data reaches beyond it.
    pub fn on_read(&mut self, now: Time, copied: u64, ooo_span: u64) {
        if self.rtt_us8 == 0 {
            return;
        }
        let time_us = (now - self.space_time).as_nanos() / 1000;
        if time_us < self.rtt_us8 >> 3 {
            return;
        }
        let read = copied - self.space_seq;
        if read > self.space {
            self.rcvbuf_grow(read, ooo_span);
        }
        self.space_seq = copied;
        self.space_time = now;
    }

    /// tcp_rcvbuf_grow.
    fn rcvbuf_grow(&mut self, new: u64, ooo_span: u64) {
        let old = std::mem::replace(&mut self.space, new);
        // DRS is one RTT late: twice the last RTT's, and twice the growth's share again
        // for a sender still doubling its rate.
        let mut rcvwin = new << 1;
        let grow = rcvwin * (new - old) / old.max(1);
        rcvwin += grow << 1;
        rcvwin += ooo_span;
        // tcp_space_from_win
        let rcvbuf = ((rcvwin << RATIO_SHIFT) / self.ratio).min(self.rmem_max);
        if rcvbuf > self.rcvbuf {
            self.rcvbuf = rcvbuf;
            self.window_clamp = self.win(rcvbuf);
        }
    }

    /// The window of an ACK acknowledging `rcv_nxt` while `held` segments take buffer space
    /// (tcp_select_window).
    pub fn select(&mut self, rcv_nxt: u64, held: u64) -> u64 {
        let unit = 1u64 << self.wscale;
        let cur = (self.rcv_wup + self.rcv_wnd).saturating_sub(rcv_nxt);
        let mut new = self.select_new(held);
        if new < cur {
            // Never shrink the offered window.
            new = cur.div_ceil(unit) * unit;
        }
        self.rcv_wnd = new;
        self.rcv_wup = rcv_nxt;
        new.min(65535 << self.wscale)
    }

    /// __tcp_select_window.
    fn select_new(&self, held: u64) -> u64 {
        let unit = 1u64 << self.wscale;
        let allowed = self.win(self.rcvbuf);
        let full = self.window_clamp.min(allowed);
        let mss = self.rcv_mss.min(full);
        let mut free = self.free_space(held);
        if free < full / 2 {
            free -= free % unit;
            if free < allowed >> 4 || free < mss {
                return 0;
            }
        }
        free.min(self.rcv_ssthresh).div_ceil(unit) * unit
    }

    /// The window last advertised (tp->rcv_wnd).
    pub fn advertised(&self) -> u64 {
        self.rcv_wnd.min(65535 << self.wscale)
    }

    /// The window clamp, rcv_ssthresh, the buffer and the receiver's RTT (µs), for tests.
    #[cfg(test)]
    pub fn state(&self) -> (u64, u64, u64, u64) {
        (
            self.window_clamp,
            self.rcv_ssthresh,
            self.rcvbuf,
            self.rtt_us8 >> 3,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{DataSegment, Receiver, Seq};

    fn data(seq: u64, ts_ecr: Option<Time>) -> DataSegment {
        DataSegment {
            seq: Seq(seq),
            len: 1448,
            ts_val: Some(Time::ZERO),
            ts_ecr,
            retransmission: 0,
            ect: false,
            ce: false,
            cwr: false,
        }
    }

    /// The windows Linux 6.18's receiver advertised (tcp:tcp_probe's snd_wnd at the sender,
    /// on the real-TCP fidelity path of docs/fidelity.md: bottleneck 10 Mb/s, 60 packets,
    /// loss 1e-2; seed 3): the SYN's 65,160 bytes (45 MSS), then per segment 2 MSS more,
    /// rounded up to the window scale's 512 bytes, up to the clamp of the 131,072-byte buffer
    /// at ratio 160 less the segment being queued (80,480, advertised as 80,896).
    #[test]
    fn linux_window_grows_per_segment_as_the_kernel_did() {
        let cfg = TcpConfig::linux();
        assert_eq!(Receiver::syn_window(&cfg), 65_160);
        let mut r = Receiver::new(&cfg);
        let mut windows = Vec::new();
        for i in 0..8u64 {
            let now = Time::from_micros(1200 * i);
            r.on_segment(now, &data(i * 1448, None));
            let a = r
                .poll_transmit(now)
                .expect("every segment is acknowledged at once");
            windows.push(a.window);
        }
        assert_eq!(
            windows,
            [68_096, 71_168, 74_240, 76_800, 79_872, 80_896, 80_896, 80_896]
        );
        let (clamp, ssthresh, buf, _) = r.win.as_ref().unwrap().state();
        assert_eq!((clamp, ssthresh, buf), (81_920, 80_480, 131_072));
    }

    /// tcp_measure_rcv_mss and tcp_cleanup_rbuf: once the window has stopped growing, a full
    /// segment waits for the delayed ACK, but a small one at the end of a transfer (pushed)
    /// is acknowledged as soon as it is read; two equal segments of at least 536 bytes with
    /// the header in a row are a new rcv_mss instead.
    #[test]
    fn a_small_last_segment_is_acknowledged_at_once() {
        let cfg = TcpConfig::linux();
        let mut r = Receiver::new(&cfg);
        let at = |i: u64| Time::from_micros(100 * i);
        // Full segments until one waits for the delayed ACK (quick ACKs and window growth
        // are over), then one more: the second of two is acknowledged at once.
        let mut i = 0u64;
        loop {
            r.on_segment(at(i), &data(i * 1448, None));
            let acked = r.poll_transmit(at(i)).is_some();
            i += 1;
            if !acked {
                break;
            }
            assert!(i < 1_000, "the receiver never delays an ACK");
        }
        r.on_segment(at(i), &data(i * 1448, None));
        assert!(r.poll_transmit(at(i)).is_some(), "the second full segment");
        i += 1;
        r.on_segment(at(i), &data(i * 1448, None));
        assert!(
            r.poll_transmit(at(i)).is_none(),
            "one full segment: the delayed ACK"
        );
        r.on_segment(at(i + 1), &data((i + 1) * 1448, None));
        assert!(r.poll_transmit(at(i + 1)).is_some());
        i += 2;
        let tail = DataSegment {
            len: 176,
            ..data(i * 1448, None)
        };
        r.on_segment(at(i), &tail);
        let a = r
            .poll_transmit(at(i))
            .expect("the small segment's ACK at once");
        assert_eq!(a.ack, Seq(i * 1448 + 176));
        // Two 600-byte segments in a row: the second sets rcv_mss (not pushed).
        let mut w = Window::new(&cfg);
        assert!(!w.measure_mss(1448));
        assert!(w.measure_mss(600), "the first small one");
        assert!(!w.measure_mss(600), "the same size again: the peer's MSS");
        assert_eq!(w.rcv_mss, 600);
        assert!(w.measure_mss(100), "too small to be an MSS");
    }

    /// Dynamic right-sizing as the kernel's tcp:tcp_rcvbuf_grow trace shows it (same run):
    /// after an RTT in which 30,408 bytes were read against 15,928 the RTT before, the
    /// buffer became 274,224 bytes and the clamp 171,390; after 57,920 against 30,408,
    /// 520,726; after 86,880 against
    /// 57,920, 556,032.
    #[test]
    fn drs_grows_the_buffer_as_the_kernel_did() {
        let mut w = Window::new(&TcpConfig::linux());
        w.measure_mss(1448);
        assert_eq!(w.ratio, 160);
        w.space = 15_928;
        w.rcvbuf_grow(30_408, 0);
        assert_eq!((w.rcvbuf, w.window_clamp), (274_224, 171_390));
        w.rcvbuf_grow(57_920, 0);
        assert_eq!(w.rcvbuf, 520_726);
        w.rcvbuf_grow(86_880, 0);
        assert_eq!((w.rcvbuf, w.window_clamp), (556_032, 347_520));
        // The largest buffer bounds it.
        w.rcvbuf_grow(20_000_000, 0);
        assert_eq!(w.rcvbuf, 16 << 20);
    }

    /// DRS runs once per receiver RTT, measured from the echo of the receiver's own TSval
    /// in whole milliseconds: no RTT, no growth; a read an RTT after the last measurement
    /// with more than the last RTT's bytes grows the buffer.
    #[test]
    fn drs_waits_for_the_receivers_rtt() {
        let cfg = TcpConfig::linux();
        let mut w = Window::new(&cfg);
        w.measure_mss(1448);
        let ms = Time::from_millis;
        w.on_read(ms(50), 20 * 1448, 0);
        assert_eq!(w.state().2, 131_072, "no RTT yet: no growth");
        // An echo of an ACK sent at 3.9 ms arriving at 49.2 ms: 49 - 3 = 46 ms.
        w.on_tsecr(
            ms(49) + Dur::from_micros(200),
            ms(3) + Dur::from_micros(900),
            1448,
        );
        assert_eq!(w.state().3, 46_000);
        // The same echo again is not a sample; a larger one moves the EWMA by 1/8.
        w.on_tsecr(ms(60), ms(3) + Dur::from_micros(900), 1448);
        assert_eq!(w.state().3, 46_000);
        w.on_tsecr(ms(70), ms(6), 1448);
        assert_eq!(w.state().3, 46_000 - 46_000 / 8 + 64_000 / 8);
        let rtt = Dur::from_micros(w.state().3);
        w.on_read(Time::ZERO + rtt - Dur::from_micros(1), 200 * 1448, 0);
        assert_eq!(w.state().2, 131_072, "less than an RTT since the start");
        w.on_read(Time::ZERO + rtt, 200 * 1448, 0);
        assert!(w.state().2 > 131_072);
    }

    /// The window never shrinks below what the last ACK offered, and a full buffer of
    /// out-of-order data closes it to what was offered.
    #[test]
    fn window_never_shrinks() {
        let mut w = Window::new(&TcpConfig::linux());
        w.measure_mss(1448);
        let first = w.select(0, 1);
        assert_eq!(first, 65_536);
        // 60 held segments: little free space, but the offer stands (its right edge).
        assert_eq!(
            w.select(1448, 60),
            65_536 - 1448 + 512 - (65_536 - 1448) % 512
        );
    }
}
