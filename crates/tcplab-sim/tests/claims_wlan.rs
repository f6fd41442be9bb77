//! The claims of Pang et al., "Performance Evaluation of TCP Veno over 802.11b WLAN and RED"
//! (digest §2), checked on tcplab's model of their network (Fig. 3: server - 100 Mb/s -
//! Dummynet router with a thin or fat pipe - AP - 802.11b stations placed for LL or HL
//! link quality). Published and measured numbers: docs/reproductions.md ("WLAN paper").
//!
//! TCP: MSS 1460, Reno fast recovery, no SACK, window growth per ACK, delayed ACKs (the
//! settings of the Veno paper's experiments; the WLAN paper names only MSS and beta = 3).
//! Every flow runs for the whole run; throughput is the mean over `SEEDS` seeds.

use tcplab_core::cc::Growth;
use tcplab_core::{Dur, RepeatedRto, TcpConfig};
use tcplab_sim::builder::{wlan_access, ScenarioBuilder};
use tcplab_sim::results::FlowSummary;
use tcplab_sim::scenario::{ChannelPreset, PipePreset, TcpFlowSpec, Topology, TraceSpec, WlanSpec};
use tcplab_sim::Simulation;

use ChannelPreset::{HL, LL};
use PipePreset::{Fat, Thin};

fn tcp() -> TcpConfig {
    TcpConfig {
        mss: 1460,
        sack_blocks: 0,
        growth: Growth::PerAck,
        // The BSD senders of the papers (NetBSD 1.1, FreeBSD 4.x) recompute ssthresh at
        // every timer expiry (docs/tcp.md, `repeated_rto`).
        repeated_rto: RepeatedRto::Bsd,
        ..TcpConfig::default()
    }
}

/// One run: flow i from the server to station i (placed by `stations[i]`) with
/// `controllers[i]`; per-flow summaries.
fn run(
    pipe: PipePreset,
    stations: &[ChannelPreset],
    controllers: &[&str],
    secs: u64,
    seed: u64,
) -> Vec<FlowSummary> {
    run_with(pipe, stations, controllers, secs, seed, |_| {})
}

/// [`run`] with the WLAN segment's parameters changed by `tweak`.
fn run_with(
    pipe: PipePreset,
    stations: &[ChannelPreset],
    controllers: &[&str],
    secs: u64,
    seed: u64,
    tweak: impl Fn(&mut WlanSpec),
) -> Vec<FlowSummary> {
    let mut topo = wlan_access(pipe, stations);
    if let Topology::WlanAccess(w) = &mut topo {
        tweak(&mut w.wlan);
    }
    let mut b = ScenarioBuilder::new("wlan", topo)
        .seed(seed)
        .duration(Dur::from_secs(secs))
        .tcp(tcp())
        .trace(TraceSpec::off());
    for (i, c) in controllers.iter().enumerate() {
        b = b.flow(
            TcpFlowSpec::bulk("server", &format!("sta{i}"))
                .controller(c)
                .recovery("reno")
                .start(Dur::from_millis(10 * i as u64)),
        );
    }
    let r = Simulation::run(&b.build()).unwrap();
    assert!(r.conservation.ok, "{:?}", r.conservation.violations);
    r.flows
}

/// Per-flow throughput (kb/s), mean over `seeds` seeds.
fn mean_kbps(
    pipe: PipePreset,
    stations: &[ChannelPreset],
    controllers: &[&str],
    secs: u64,
    seeds: u64,
) -> Vec<f64> {
    let mut sum = vec![0.0; controllers.len()];
    for seed in 1..=seeds {
        for (s, f) in sum
            .iter_mut()
            .zip(run(pipe, stations, controllers, secs, seed))
        {
            *s += f.throughput_bps / 1e3 / seeds as f64;
        }
    }
    sum
}

fn total(v: &[f64]) -> f64 {
    v.iter().sum()
}

fn std(v: &[f64]) -> f64 {
    let m = total(v) / v.len() as f64;
    (v.iter().map(|x| (x - m).powi(2)).sum::<f64>() / v.len() as f64).sqrt()
}

const SECS: u64 = 100;
const SEEDS: u64 = 2;

/// Exp. 1 (Table I): aggregate throughput of 4 Veno flows / 4 Reno flows, all stations at
/// link quality `q`.
fn exp1_ratio(pipe: PipePreset, q: ChannelPreset) -> (f64, f64) {
    let reno = total(&mean_kbps(pipe, &[q; 4], &["reno"; 4], SECS, SEEDS));
    let veno = total(&mean_kbps(pipe, &[q; 4], &["veno"; 4], SECS, SEEDS));
    eprintln!(
        "Exp. 1 {pipe:?} {q:?}: Reno {reno:.0} kb/s, Veno {veno:.0} kb/s, Veno/Reno {:.3}",
        veno / reno
    );
    (reno, veno)
}

#[test]
fn exp1_veno_matches_reno_on_low_loss_links() {
    // Paper: thin 1408 / 1441 kb/s (+2.3%), fat 2768 / 2775 (+0.3%).
    // tcplab (100 s, 2 seeds): thin 1489 / 1506 (+1.1%), fat 3261 / 3308 (+1.4%).
    for pipe in [Thin, Fat] {
        let (reno, veno) = exp1_ratio(pipe, LL);
        assert!(
            (veno / reno - 1.0).abs() <= 0.10,
            "{pipe:?}: {veno} vs {reno}"
        );
    }
}

/// MISSES (docs/reproductions.md, "WLAN paper"): paper +28% (thin) and +16% (fat);
/// tcplab (100 s, 2 seeds) thin 1287 / 1356 kb/s (+5.4%), fat 1724 / 1728 (+0.2%). With
/// losses drawn per frame, the HL station's frames need about two attempts each, so the
/// WLAN itself becomes the bottleneck and its queue is full when the random losses hit:
/// Veno sees a congestive state and halves like Reno.
#[test]
#[ignore]
fn exp1_veno_beats_reno_on_high_loss_links() {
    for pipe in [Thin, Fat] {
        let (reno, veno) = exp1_ratio(pipe, HL);
        assert!(veno >= 1.15 * reno, "{pipe:?}: {veno} vs {reno}");
    }
}

#[test]
fn exp2_veno_does_not_reduce_coexisting_reno_flows() {
    // Cases 3 and 4 (fat pipe): 2 Reno + 2 Veno on LL (HL) links, against the same
    // placement with 4 Reno flows: the Reno flows keep at least 90% of their throughput.
    for q in [LL, HL] {
        let mixed = mean_kbps(Fat, &[q; 4], &["reno", "reno", "veno", "veno"], SECS, SEEDS);
        let base = mean_kbps(Fat, &[q; 4], &["reno"; 4], SECS, SEEDS);
        let (with_veno, alone) = (mixed[0] + mixed[1], base[0] + base[1]);
        eprintln!(
            "Exp. 2 {q:?}: Reno flows {with_veno:.0} kb/s next to Veno, {alone:.0} next to Reno ({:.3}); Veno flows {:.0}",
            with_veno / alone,
            mixed[2] + mixed[3]
        );
        assert!(with_veno >= 0.9 * alone, "{q:?}: {with_veno} vs {alone}");
    }
}

/// MISSES (docs/reproductions.md): the paper's Exp. 2 found 2 HL + 2 LL Veno flows fairer
/// than the same with Reno (per-flow STD 66 vs 112 kb/s); tcplab (100 s, 2 seeds): Veno
/// STD 348, Reno 327 kb/s: the LL flows take about three times the HL flows' share with
/// either controller (the HL station's frames cost about twice the air time).
#[test]
#[ignore]
fn exp2_veno_is_fairer_across_mixed_links() {
    let mixed = [HL, HL, LL, LL];
    let reno = std(&mean_kbps(Fat, &mixed, &["reno"; 4], SECS, SEEDS));
    let veno = std(&mean_kbps(Fat, &mixed, &["veno"; 4], SECS, SEEDS));
    eprintln!("Exp. 2 cases 1/2: STD Reno {reno:.0} kb/s, Veno {veno:.0} kb/s");
    assert!(veno < reno, "{veno} vs {reno}");
}

/// Prints the numbers of Exp. 2 (fairness cases 1-4, fat pipe) and Exp. 3 (6 flows, thin
/// pipe, drop-tail; the RED variant needs the RED queue) for docs/reproductions.md; claims
/// nothing. tcplab (100 s, 2 seeds), per-flow kb/s and STD: case 1 [328, 354, 935, 1044]
/// STD 327 (paper 112); case 2 [346, 321, 894, 1126] STD 348 (paper 66); case 3 STD 122;
/// case 4 STD 13; Exp. 3 drop-tail LL: Reno total 1487 STD 26, Veno total 1514 STD 48.
#[test]
#[ignore]
fn exp2_exp3_numbers() {
    for (case, st, cc) in [
        (1, [HL, HL, LL, LL], ["reno"; 4]),
        (2, [HL, HL, LL, LL], ["veno"; 4]),
        (3, [LL; 4], ["reno", "reno", "veno", "veno"]),
        (4, [HL; 4], ["reno", "reno", "veno", "veno"]),
    ] {
        let v = mean_kbps(Fat, &st, &cc, SECS, SEEDS);
        eprintln!(
            "case {case}: {v:.0?} total {:.0} std {:.0}",
            total(&v),
            std(&v)
        );
    }
    for cc in ["reno", "veno"] {
        let v = mean_kbps(Thin, &[LL; 6], &[cc; 6], SECS, SEEDS);
        eprintln!(
            "exp3 droptail {cc}: {v:.0?} total {:.0} std {:.0}",
            total(&v),
            std(&v)
        );
        let v = mean_kbps(Thin, &[HL; 6], &[cc; 6], SECS, SEEDS);
        eprintln!(
            "exp3 droptail HL {cc}: {v:.0?} total {:.0} std {:.0}",
            total(&v),
            std(&v)
        );
    }
}

/// Exploration (prints only): Exp. 1 with block fading of several coherence times, and
/// with smaller AP/station queues. Numbers in docs/reproductions.md ("WLAN paper").
#[test]
#[ignore]
fn channel_and_buffer_exploration() {
    let exp1 = |label: String, tweak: &dyn Fn(&mut WlanSpec)| {
        for pipe in [Thin, Fat] {
            for q in [LL, HL] {
                let mut t = [0.0; 2];
                for (k, &c) in ["reno", "veno"].iter().enumerate() {
                    for seed in 1..=SEEDS {
                        let f = run_with(pipe, &[q; 4], &[c; 4], SECS, seed, tweak);
                        t[k] +=
                            f.iter().map(|x| x.throughput_bps / 1e3).sum::<f64>() / SEEDS as f64;
                    }
                }
                eprintln!(
                    "{label} {pipe:?} {q:?}: Reno {:.0} Veno {:.0} ({:+.1}%)",
                    t[0],
                    t[1],
                    100.0 * (t[1] / t[0] - 1.0)
                );
            }
        }
    };
    for ms in [5u64, 10, 20] {
        exp1(format!("coherence {ms} ms"), &|w| {
            w.channel.coherence = Dur::from_millis(ms)
        });
    }
    for b in [10u32, 20] {
        exp1(format!("buffer {b}"), &|w| w.mac.buffer = b);
        exp1(format!("buffer {b}, coherence 5 ms"), &|w| {
            w.mac.buffer = b;
            w.channel.coherence = Dur::from_millis(5);
        });
    }
}
