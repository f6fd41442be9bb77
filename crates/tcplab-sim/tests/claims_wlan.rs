//! The claims of Pang et al., "Performance Evaluation of TCP Veno over 802.11b WLAN and RED"
//! (digest §2), checked on tcplab's model of their network (Fig. 3: server - 100 Mb/s -
//! Dummynet router with a thin or fat pipe - AP - 802.11b stations placed for LL or HL
//! link quality). Published and measured numbers: docs/reproductions.md ("WLAN paper").
//!
//! TCP: MSS 1460, Reno fast recovery, no SACK, window growth per ACK, delayed ACKs (the
//! settings of the Veno paper's experiments; the WLAN paper names only MSS and beta = 3).
//! Every flow runs for the whole run; throughput is the mean over `SEEDS` seeds. Each
//! experiment is its shipped scenario (`scenarios/wlan-exp1-*.toml`, `wlan-exp2-case*`,
//! `wlan-exp3-droptail-*`; `common::settings`).

use crate::common::settings::setting;

use tcplab_core::Dur;
use tcplab_sim::results::FlowSummary;
use tcplab_sim::scenario::{ChannelPreset, Topology, WlanSpec};
use tcplab_sim::Simulation;

use ChannelPreset::HL;

/// One run of the shipped setting `name` (`scenarios/wlan-*.toml`: pipe, stations, one flow
/// per station from the server, 100 s) with seed `seed` and the WLAN segment's parameters
/// changed by `tweak`; per-flow summaries.
fn run_with(name: &str, seed: u64, tweak: impl Fn(&mut WlanSpec)) -> Vec<FlowSummary> {
    let mut s = setting(name);
    s.seed = seed;
    match &mut s.topology {
        Topology::WlanAccess(w) => tweak(&mut w.wlan),
        t => panic!("{name}: not a WLAN access network: {t:?}"),
    }
    let r = Simulation::run(&s).unwrap();
    assert!(r.conservation.ok, "{:?}", r.conservation.violations);
    r.flows
}

/// Every station placed by `q` (the HL variant of Exp. 3, which has no shipped file).
fn placed(q: ChannelPreset) -> impl Fn(&mut WlanSpec) {
    move |w| {
        for st in &mut w.stations {
            st.preset = Some(q);
        }
    }
}

/// Per-flow throughput (kb/s) of setting `name` changed by `tweak`, mean over the seeds.
fn mean_kbps_with(name: &str, tweak: impl Fn(&mut WlanSpec)) -> Vec<f64> {
    let mut sum = vec![];
    for seed in 1..=SEEDS {
        let flows = run_with(name, seed, &tweak);
        sum.resize(flows.len(), 0.0);
        for (s, f) in sum.iter_mut().zip(flows) {
            *s += f.throughput_bps / 1e3 / SEEDS as f64;
        }
    }
    sum
}

/// Per-flow throughput (kb/s) of setting `name`, mean over the seeds.
fn mean_kbps(name: &str) -> Vec<f64> {
    mean_kbps_with(name, |_| {})
}

fn total(v: &[f64]) -> f64 {
    v.iter().sum()
}

fn std(v: &[f64]) -> f64 {
    let m = total(v) / v.len() as f64;
    (v.iter().map(|x| (x - m).powi(2)).sum::<f64>() / v.len() as f64).sqrt()
}

const SEEDS: u64 = 2;

/// Exp. 1 (Table I): aggregate throughput of 4 Reno flows / 4 Veno flows, all stations at
/// link quality `q` (`ll`, `hl`) of `pipe` (`thin`, `fat`): `wlan-exp1-{pipe}-{q}-{cc}`.
fn exp1_ratio(pipe: &str, q: &str) -> (f64, f64) {
    let reno = total(&mean_kbps(&format!("wlan-exp1-{pipe}-{q}-reno")));
    let veno = total(&mean_kbps(&format!("wlan-exp1-{pipe}-{q}-veno")));
    eprintln!(
        "Exp. 1 {pipe} {q}: Reno {reno:.0} kb/s, Veno {veno:.0} kb/s, Veno/Reno {:.3}",
        veno / reno
    );
    (reno, veno)
}

#[test]
fn exp1_veno_matches_reno_on_low_loss_links() {
    // Paper: thin 1408 / 1441 kb/s (+2.3%), fat 2768 / 2775 (+0.3%).
    // tcplab (100 s, 2 seeds): thin 1489 / 1506 (+1.1%), fat 3261 / 3308 (+1.4%).
    for pipe in ["thin", "fat"] {
        let (reno, veno) = exp1_ratio(pipe, "ll");
        assert!(
            (veno / reno - 1.0).abs() <= 0.10,
            "{pipe}: {veno} vs {reno}"
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
    for pipe in ["thin", "fat"] {
        let (reno, veno) = exp1_ratio(pipe, "hl");
        assert!(veno >= 1.15 * reno, "{pipe}: {veno} vs {reno}");
    }
}

#[test]
fn exp2_veno_does_not_reduce_coexisting_reno_flows() {
    // Cases 3 and 4 (fat pipe): 2 Reno + 2 Veno on LL (HL) links, against the same
    // placement with 4 Reno flows (Exp. 1): the Reno flows keep at least 90% of their
    // throughput.
    for (case, q) in [(3, "ll"), (4, "hl")] {
        let mixed = mean_kbps(&format!("wlan-exp2-case{case}"));
        let base = mean_kbps(&format!("wlan-exp1-fat-{q}-reno"));
        let (with_veno, alone) = (mixed[0] + mixed[1], base[0] + base[1]);
        eprintln!(
            "Exp. 2 {q}: Reno flows {with_veno:.0} kb/s next to Veno, {alone:.0} next to Reno ({:.3}); Veno flows {:.0}",
            with_veno / alone,
            mixed[2] + mixed[3]
        );
        assert!(with_veno >= 0.9 * alone, "{q}: {with_veno} vs {alone}");
    }
}

/// MISSES (docs/reproductions.md): the paper's Exp. 2 found 2 HL + 2 LL Veno flows fairer
/// than the same with Reno (per-flow STD 66 vs 112 kb/s); tcplab (100 s, 2 seeds): Veno
/// STD 348, Reno 327 kb/s: the LL flows take about three times the HL flows' share with
/// either controller (the HL station's frames cost about twice the air time).
#[test]
#[ignore]
fn exp2_veno_is_fairer_across_mixed_links() {
    // Cases 1 and 2: 2 HL + 2 LL stations, fat pipe, 4 Reno / 4 Veno flows.
    let reno = std(&mean_kbps("wlan-exp2-case1"));
    let veno = std(&mean_kbps("wlan-exp2-case2"));
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
    for case in 1..=4 {
        let v = mean_kbps(&format!("wlan-exp2-case{case}"));
        eprintln!(
            "case {case}: {v:.0?} total {:.0} std {:.0}",
            total(&v),
            std(&v)
        );
    }
    for cc in ["reno", "veno"] {
        let name = format!("wlan-exp3-droptail-{cc}");
        let v = mean_kbps(&name);
        eprintln!(
            "exp3 droptail {cc}: {v:.0?} total {:.0} std {:.0}",
            total(&v),
            std(&v)
        );
        let v = mean_kbps_with(&name, placed(HL));
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
        for pipe in ["thin", "fat"] {
            for q in ["ll", "hl"] {
                let mut t = [0.0; 2];
                for (k, &c) in ["reno", "veno"].iter().enumerate() {
                    for seed in 1..=SEEDS {
                        let f = run_with(&format!("wlan-exp1-{pipe}-{q}-{c}"), seed, tweak);
                        t[k] +=
                            f.iter().map(|x| x.throughput_bps / 1e3).sum::<f64>() / SEEDS as f64;
                    }
                }
                eprintln!(
                    "{label} {pipe} {q}: Reno {:.0} Veno {:.0} ({:+.1}%)",
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
