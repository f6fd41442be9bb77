//! BBR v1 in the simulator: one flow on a dumbbell with a one-BDP buffer, and BBR sharing a
//! bottleneck with CUBIC.
//!
//! Theory (Cardwell et al. 2016): in ProbeBW BBR paces at its bandwidth estimate and keeps
//! about one BDP in flight; the 5/4 phase (one RTprop in eight) adds up to 1/4 BDP to the
//! queue, and the 3/4 phase drains it until the data in flight is down to one BDP plus the
//! quantization budget (tcp_bbr.c `bbr_inflight`: 3 send quanta, rounded up to even, here
//! 6-8 segments), which can therefore stand in the queue. So the bottleneck stays busy while
//! the queue stays at most the quantization budget (8 segments) plus the 5/4 phase's 1/4 BDP:
//! the test bounds the median queue by exactly that sum, and asks that it be below what a
//! loss-based controller (CUBIC alone on the same path) keeps. (History: a first bound of
//! 1/4 of the buffer, written before running, ignored the quantization budget and failed,
//! 10.9 ms against 9.9 ms; it was replaced by the theory's sum above, not by a number read
//! off the run. The measured numbers are printed.)

mod common;

use tcplab_core::Dur;
use tcplab_sim::builder::ScenarioBuilder;
use tcplab_sim::scenario::{SeriesMode, TcpFlowSpec, TraceSpec};
use tcplab_sim::{Results, Simulation};

const RATE: u64 = 10_000_000;
/// 18 ms on the bottleneck + 2 x 1 ms access each way: RTT 40 ms.
const RTT_S: f64 = 0.040;
const WIRE: u64 = 1500;

fn bdp_packets() -> u32 {
    (RATE as f64 * RTT_S / 8.0 / WIRE as f64).round() as u32
}

fn run(flows: &[&str], seconds: u64) -> Results {
    let mut b = ScenarioBuilder::new(
        "bbr",
        common::simple_dumbbell(flows.len() as u32, RATE, 18, bdp_packets()),
    )
    .seed(3)
    .duration(Dur::from_secs(seconds));
    for (i, c) in flows.iter().enumerate() {
        b = b.flow(
            TcpFlowSpec::bulk(&format!("s{i}"), &format!("r{i}"))
                .controller(c)
                .recovery("sack")
                .start(Dur::from_millis(10 * i as u64)),
        );
    }
    let trace = TraceSpec {
        series: SeriesMode::Interval,
        interval: Dur::from_millis(10),
        events: false,
        segments: false,
        drops: false,
        ..TraceSpec::off()
    };
    let r = Simulation::run(&b.trace(trace).build()).unwrap();
    assert!(r.conservation.ok, "{:?}", r.conservation.violations);
    r
}

fn bottleneck(r: &Results) -> (usize, &tcplab_sim::results::LinkSummary) {
    r.links
        .iter()
        .enumerate()
        .find(|(_, l)| l.link == "left-right" && l.direction == "forward")
        .unwrap()
}

/// Median queueing delay at the bottleneck from `from_s` on, seconds.
fn median_queue_delay(r: &Results, from_s: u64) -> f64 {
    let (idx, _) = bottleneck(r);
    let q = &r.queues;
    let mut d: Vec<f64> = (0..q.time_ns.len())
        .filter(|&i| q.link[i] as usize == idx && q.time_ns[i] >= from_s * 1_000_000_000)
        .map(|i| q.bytes[i] as f64 * 8.0 / RATE as f64)
        .collect();
    assert!(!d.is_empty());
    d.sort_by(f64::total_cmp);
    d[d.len() / 2]
}

#[test]
fn one_bbr_flow_fills_the_pipe_with_a_small_standing_queue() {
    let r = run(&["bbr"], 30);
    let (_, l) = bottleneck(&r);
    let buffer_delay = bdp_packets() as f64 * WIRE as f64 * 8.0 / RATE as f64;
    let median = median_queue_delay(&r, 2);
    let f = &r.flows[0];
    eprintln!(
        "bbr alone: utilization {:.4}, throughput {:.0} b/s, median queueing delay {:.2} ms \
         (buffer {:.1} ms), drops {:?}, retransmits {}, min/mean RTT {:?}/{:?} ns",
        l.utilization,
        f.throughput_bps,
        median * 1e3,
        buffer_delay * 1e3,
        l.drops,
        f.retransmits,
        f.min_rtt_ns,
        f.mean_rtt_ns
    );
    assert!(l.utilization >= 0.9, "utilization {}", l.utilization);
    // the quantization budget (at most 8 segments) + 1/4 BDP, as a delay at the link rate
    let bound = (8.0 + bdp_packets() as f64 / 4.0) * WIRE as f64 * 8.0 / RATE as f64;
    assert!(
        median <= bound,
        "median queueing delay {median} s vs the theory's {bound} s (buffer {buffer_delay} s)"
    );
    let cubic = median_queue_delay(&run(&["cubic"], 30), 2);
    assert!(
        median < cubic,
        "bbr's median queueing delay {median} s is not below cubic's {cubic} s"
    );
}

#[test]
fn bbr_and_cubic_share_a_one_bdp_buffer() {
    let r = run(&["bbr", "cubic"], 60);
    let (_, l) = bottleneck(&r);
    let x: Vec<f64> = r.flows.iter().map(|f| f.throughput_bps).collect();
    eprintln!(
        "bbr vs cubic (1 BDP buffer, 60 s): throughput bbr {:.0} b/s, cubic {:.0} b/s, \
         Jain {:.3}, utilization {:.4}, median queueing delay {:.2} ms, retransmits {:?}",
        x[0],
        x[1],
        common::jain(&x),
        l.utilization,
        median_queue_delay(&r, 2) * 1e3,
        r.flows.iter().map(|f| f.retransmits).collect::<Vec<_>>()
    );
    // No published number for this exact setting: only what any sharing must satisfy.
    assert!(l.utilization >= 0.9, "utilization {}", l.utilization);
    assert!(x.iter().all(|&t| t > 0.05 * RATE as f64), "{x:?}");
}
