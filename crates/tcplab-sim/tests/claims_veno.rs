//! The claims of Fu & Liew, "TCP Veno" (IEEE JSAC 21(2), 2003; digest §1), checked against
//! tcplab. Published and measured numbers for every experiment: docs/reproductions.md.
//!
//! Setting (Fig. 3(a), §III): senders on 10 Mb/s Ethernet to a drop-tail Dummynet router,
//! the bottleneck pipe with its one-way delay (RTT 120 ms) and buffer B both ways, random
//! loss on the forward pipe. The TCPs are NetBSD 1.1's: MSS 1460, Reno fast recovery, no
//! SACK, window growth per ACK, delayed ACKs, 1 s minimum RTO. Veno is the paper flavor
//! (beta = 3) unless said otherwise. Each experiment starts from its shipped scenario
//! (`scenarios/veno-fig5.toml`, `-fig6`, `-fig7`, `-table1`; `common::settings`).
//!
//! Nothing is shortened in this file: the transfers are the paper's (32 MB for Fig. 5-7,
//! 12 MB for Table I), each point is the mean of 3 seeds (the paper: one run per point,
//! three runs for Table I).

use crate::common::settings::{dumbbell, set_controllers, set_loss, setting};

use tcplab_core::{ControllerSpec, ParamValue};
use tcplab_sim::results::{FlowSummary, LossCause};
use tcplab_sim::Simulation;

const SEEDS: u64 = 3;

fn veno(flavor: &str) -> ControllerSpec {
    let mut c = ControllerSpec::named("veno");
    c.params
        .insert("flavor".into(), ParamValue::Str(flavor.into()));
    c
}

/// Fig. 5-7 on the network of Fig. 3(a): the shipped setting `name` (`veno-fig5`, `-fig6`,
/// `-fig7`: one flow per sender, 32 MB each, started 10 ms apart) with the controllers
/// `ccs`, loss `p` on the bottleneck's data direction and seed `seed`; the flows'
/// summaries.
fn transfers(name: &str, ccs: &[ControllerSpec], p: f64, seed: u64) -> Vec<FlowSummary> {
    let mut s = setting(name);
    s.seed = seed;
    set_loss(&mut dumbbell(&mut s).bottleneck.forward, p);
    set_controllers(&mut s, ccs);
    let r = Simulation::run(&s).unwrap();
    assert!(r.conservation.ok, "{:?}", r.conservation.violations);
    assert!(
        r.flows.iter().all(|f| f.completed),
        "every transfer completes"
    );
    r.flows
}

/// Throughput in kB/s (10^3 bytes), as the paper plots it.
fn kbs(f: &FlowSummary) -> f64 {
    f.throughput_bps / 8000.0
}

fn mean(x: &[f64]) -> f64 {
    x.iter().sum::<f64>() / x.len() as f64
}

/// Fig. 5: one flow, 1.6 Mb/s, buffer 12, RTT 120 ms; mean throughput over the seeds.
fn fig5_point(cc: &ControllerSpec, p: f64) -> f64 {
    let x: Vec<f64> = (1..=SEEDS)
        .map(|seed| kbs(&transfers("veno-fig5", std::slice::from_ref(cc), p, seed)[0]))
        .collect();
    mean(&x)
}

#[test]
fn fig5_veno_gains_under_random_loss_and_matches_reno_without() {
    // Published: at 1e-2 Veno 146.5 kB/s vs Reno 81.9 kB/s (+80%); at <= 1e-3 "roughly
    // the same"; at 1e-1 both collapse. Claims checked: ratio >= 1.4 at 1e-2, within
    // +-10% at 1e-5 and 1e-4. The Linux flavor is shown, not checked.
    let reno = ControllerSpec::named("reno");
    let mut failures = vec![];
    for p in [1e-5, 1e-4, 1e-3, 1e-2, 1e-1] {
        let (r, v) = (fig5_point(&reno, p), fig5_point(&veno("paper"), p));
        let linux = fig5_point(&veno("linux"), p);
        let ratio = v / r;
        eprintln!(
            "Fig. 5 p={p:e}: Reno {r:.1} kB/s, Veno {v:.1} kB/s, Veno/Reno {ratio:.3}; \
             Veno (Linux flavor) {linux:.1} kB/s"
        );
        if p <= 1e-4 && (ratio - 1.0).abs() > 0.10 {
            failures.push(format!("p={p:e}: Veno/Reno {ratio:.3} not within +-10%"));
        }
        if p == 1e-2 && ratio < 1.4 {
            failures.push(format!("p={p:e}: Veno/Reno {ratio:.3} < 1.4"));
        }
    }
    assert!(failures.is_empty(), "{failures:?}");
}

/// Fig. 6 (`veno-fig6`: four flows on 4 Mb/s, buffer 28, RTT 120 ms): per-flow throughputs
/// (kB/s) averaged over the seeds, for the given mix.
fn fig6(ccs: &[ControllerSpec], p: f64) -> Vec<f64> {
    mean_kbs("veno-fig6", ccs, p)
}

/// Per-flow throughputs (kB/s) of setting `name` with controllers `ccs` and loss `p`,
/// averaged over the seeds.
fn mean_kbs(name: &str, ccs: &[ControllerSpec], p: f64) -> Vec<f64> {
    let mut sum = vec![0.0; ccs.len()];
    for seed in 1..=SEEDS {
        for (s, f) in sum.iter_mut().zip(transfers(name, ccs, p, seed)) {
            *s += kbs(&f) / SEEDS as f64;
        }
    }
    sum
}

fn mix(renos: usize, venos: usize) -> Vec<ControllerSpec> {
    let mut v = vec![ControllerSpec::named("reno"); renos];
    v.extend(vec![veno("paper"); venos]);
    v
}

#[test]
fn fig6_reno_keeps_its_throughput_next_to_veno_under_random_loss() {
    // Published (Fig. 6(c)/(d), loss 1e-2): the two Reno flows' sequence-number curves
    // with two Veno peers are "close to" those with four Reno flows. Claim checked: their
    // mean throughput is >= 90% of the four-Reno mean.
    let all_reno = fig6(&mix(4, 0), 1e-2);
    let mixed = fig6(&mix(2, 2), 1e-2);
    let share = mean(&mixed[..2]) / mean(&all_reno);
    eprintln!(
        "Fig. 6 loss 1e-2: 4 Reno {all_reno:.1?} kB/s; 2 Reno + 2 Veno {mixed:.1?} kB/s; \
         Reno with Veno / Reno alone {share:.3}"
    );
    assert!(share >= 0.9, "{share:.3}");
}

#[test]
#[ignore = "2 Reno + 2 Veno without random loss: one Reno flow 16.0% above the mean \
            (118.4/147.7/121.0/122.0 kB/s); deterministic phase effect of finite transfers; \
            see docs/reproductions.md"]
fn fig6_all_flows_within_15_percent_without_random_loss() {
    // Published (Fig. 6(a)/(b)): without random loss "throughputs in all connections are
    // roughly the same". Claim checked: every flow within +-15% of its run's mean, for
    // four Reno and for two Reno + two Veno. Without random loss the seed changes nothing.
    for (renos, venos) in [(4, 0), (2, 2)] {
        let x = fig6(&mix(renos, venos), 0.0);
        let m = mean(&x);
        eprintln!("Fig. 6 no loss, {renos} Reno + {venos} Veno: {x:.1?} kB/s");
        for (i, t) in x.iter().enumerate() {
            assert!(
                (t / m - 1.0).abs() <= 0.15,
                "{renos}+{venos}: flow {i} at {t:.1} kB/s, mean {m:.1}"
            );
        }
    }
}

#[test]
fn fig7_reno_flows_unaffected_by_the_number_of_veno_peers() {
    // Published (Fig. 7): five flows, k of them Veno, k = 0..5; the per-flow averages of
    // Reno and of Veno are "nearly horizontal" in k, lossless and at 1e-2. Claim checked:
    // the mean Reno throughput at every k stays >= 90% of its value at k = 0.
    let mut failures = vec![];
    for p in [0.0, 1e-2] {
        let mut reno_at_0 = 0.0;
        for k in 0..=5 {
            let x = fig7(k, p);
            let (reno, veno) = (&x[..5 - k], &x[5 - k..]);
            let r = if reno.is_empty() {
                f64::NAN
            } else {
                mean(reno)
            };
            let v = if veno.is_empty() {
                f64::NAN
            } else {
                mean(veno)
            };
            eprintln!("Fig. 7 loss {p:e}, k = {k}: Reno {r:.1} kB/s, Veno {v:.1} kB/s per flow");
            if k == 0 {
                reno_at_0 = r;
            } else if k < 5 && r < 0.9 * reno_at_0 {
                failures.push(format!(
                    "loss {p:e}, k = {k}: Reno {r:.1} < 90% of {reno_at_0:.1}"
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{failures:?}");
}

/// Fig. 7 (`veno-fig7`: five flows, 4 Mb/s, buffer 28 as Fig. 6): 5 - k Reno then k Veno
/// flows.
fn fig7(k: usize, p: f64) -> Vec<f64> {
    mean_kbs("veno-fig7", &mix(5 - k, k), p)
}

/// Table I: Fig. 3(b), `veno-table1` — one flow of `cc` from Src2 through the 1.6 Mb/s
/// router (buffer 12 both ways) to a wireless client whose hop loses 2% of the data packets
/// (the paper does not give the rate: see the file), RTT about 60 ms, 12 MB; the file's
/// UDP CBR source Src1 -> Dst1 across the same router at `udp_bps` (none at 0).
fn table1(cc: &ControllerSpec, udp_bps: u64, seed: u64) -> FlowSummary {
    let mut s = setting("veno-table1");
    s.seed = seed;
    set_controllers(&mut s, std::slice::from_ref(cc));
    if udp_bps > 0 {
        s.udp[0].rate = udp_bps;
    } else {
        s.udp.clear();
    }
    let r = Simulation::run(&s).unwrap();
    assert!(r.conservation.ok, "{:?}", r.conservation.violations);
    r.flows.into_iter().next().unwrap()
}

/// Table I for one UDP rate, summed over the three runs: (ff45, ff12) by cause.
fn table1_counts(cc: &ControllerSpec, udp_bps: u64) -> ([u64; 3], [u64; 3]) {
    let (mut ff45, mut ff12) = ([0; 3], [0; 3]);
    for seed in 1..=SEEDS {
        let f = table1(cc, udp_bps, seed);
        eprintln!(
            "  seed {seed}: {:.1} kB/s, #FF4/5 {:?}, #FF1/2 {:?} (congestion, random, none), \
             timeouts {:?}",
            kbs(&f),
            f.ff45,
            f.ff12,
            f.timeouts_by_cause
        );
        for k in 0..3 {
            ff45[k] += f.ff45[k];
            ff12[k] += f.ff12[k];
        }
    }
    (ff45, ff12)
}

/// Share of 4/5 decisions that hit random losses (spurious triggers count as misses), and
/// share of congestion losses answered with 4/5.
fn table1_figures(ff45: [u64; 3], ff12: [u64; 3]) -> (f64, f64) {
    let (c, r) = (LossCause::Congestion as usize, LossCause::Random as usize);
    let accuracy = ff45[r] as f64 / ff45.iter().sum::<u64>() as f64;
    let misdiagnosis = ff45[c] as f64 / (ff45[c] + ff12[c]) as f64;
    (accuracy, misdiagnosis)
}

fn check_table1(flavor: &str, udp_rates: &[u64]) {
    let mut failures = vec![];
    for &udp in udp_rates {
        eprintln!("Table I, Veno {flavor}, UDP {udp} b/s:");
        let (ff45, ff12) = table1_counts(&veno(flavor), udp);
        let (acc, mis) = table1_figures(ff45, ff12);
        eprintln!(
            "  3 runs: #FF4/5 {ff45:?}, #FF1/2 {ff12:?}: 4/5 accuracy {acc:.3}, \
             congestion losses misdiagnosed {mis:.3}"
        );
        if acc < 0.9 {
            failures.push(format!("UDP {udp} b/s: 4/5 accuracy {acc:.3} < 0.9"));
        }
    }
    assert!(failures.is_empty(), "{flavor}: {failures:?}");
}

#[test]
fn table1_four_fifths_decisions_hit_random_losses() {
    // Published (three runs each): 4/5 decisions on truly random losses 105/105, 64/64,
    // 46/46 without background, 83/84, 78/79, 67/68 with 500 kb/s UDP; congestion losses
    // misdiagnosed as random at most 2 of 12 (the paper's arithmetic). Claim checked:
    // >= 90% of the 4/5 decisions of the three runs hit random losses.
    check_table1("paper", &[0, 500_000]);
}

#[test]
#[ignore = "Veno paper flavor with 1 Mb/s UDP: 4/5 accuracy 0.808 (307 of 380 over 3 runs; \
            the paper: 90/92, 83/85, 53/54); the Linux flavor gets 0.976; see \
            docs/reproductions.md"]
fn table1_four_fifths_decisions_hit_random_losses_with_1mbps_udp() {
    // Published: 90/92, 83/85, 53/54 with 1 Mb/s UDP background.
    check_table1("paper", &[1_000_000]);
}

#[test]
fn table1_linux_flavor_keeps_its_accuracy_under_heavy_background() {
    // Not a claim of the paper: the flavor difference (docs/controllers/veno.md) in Table I's
    // setting. The Linux flavor never forgets BaseRTT and judges by the latest RTT sample.
    check_table1("linux", &[0, 500_000, 1_000_000]);
}
