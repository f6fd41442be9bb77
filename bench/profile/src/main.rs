//! Runs one tcplab scenario (canonical JSON, as `tcplab validate --json FILE` prints it)
//! in pure Rust and prints the run's cost. For profiling the simulator without Python:
//!
//!     .venv/bin/tcplab validate --json bench/scenarios/B3.toml > /tmp/B3.json
//!     cargo build --release --manifest-path bench/profile/Cargo.toml
//!     bench/profile/target/release/tcplab-profile /tmp/B3.json --span 20
//!     perf record -g bench/profile/target/release/tcplab-profile /tmp/B3.json --span 20
//!     valgrind --tool=callgrind bench/profile/target/release/tcplab-profile /tmp/B3.json --span 2

use std::time::Instant;
use tcplab_core::{Dur, Time};
use tcplab_sim::{Scenario, Simulation};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 2 {
        eprintln!(
            "usage: tcplab-profile SCENARIO.json [--span SECONDS] [--repeat N] [--dump FILE]"
        );
        std::process::exit(2);
    }
    let text = std::fs::read_to_string(&args[1]).unwrap_or_else(|e| {
        eprintln!("{}: {e}", args[1]);
        std::process::exit(2)
    });
    let mut scenario: Scenario = serde_json::from_str(&text).unwrap_or_else(|e| {
        eprintln!("{}: not a canonical scenario: {e}", args[1]);
        std::process::exit(2)
    });
    let mut repeat = 1u32;
    let mut dump: Option<String> = None;
    let mut i = 2;
    while i < args.len() {
        let value = args.get(i + 1).map(String::as_str).unwrap_or("");
        match args[i].as_str() {
            "--span" => {
                let s: f64 = value.parse().expect("--span SECONDS");
                scenario.duration = Dur::from_secs_f64(s);
            }
            "--repeat" => repeat = value.parse().expect("--repeat N"),
            "--dump" => dump = Some(value.to_string()),
            other => {
                eprintln!("unknown argument {other}");
                std::process::exit(2);
            }
        }
        i += 2;
    }
    for _ in 0..repeat.max(1) {
        let mut sim = Simulation::new(&scenario).unwrap_or_else(|e| {
            eprintln!("invalid scenario: {e}");
            std::process::exit(2)
        });
        let end: Time = sim.end_time();
        let t0 = Instant::now();
        sim.run_until(end);
        let wall = t0.elapsed().as_secs_f64();
        let r = sim.finish();
        let s = &r.stats;
        println!(
            "{}: span {:.3} s  wall {:.4} s  events {} ({:.2} M/s)  transmissions {} ({:.2} M/s)  \
             peak pending events {}  conservation {}",
            scenario.name,
            s.sim_time_ns as f64 * 1e-9,
            wall,
            s.events,
            s.events as f64 / wall / 1e6,
            s.transmissions,
            s.transmissions as f64 / wall / 1e6,
            s.peak_pending_events,
            if r.conservation.ok { "ok" } else { "VIOLATED" },
        );
        if let Some(path) = &dump {
            // Every result of the run, for comparing two builds (`--dump` in bench/README.md):
            // the tables as their columns (what a user reads, whatever the row structs'
            // layout), then the rest of the results; the engine's own counters (events, peak
            // pending events) last, separately.
            let mut r = r;
            let stats = std::mem::take(&mut r.stats);
            let tables = tcplab_sim::columns::tables(&mut r);
            let text = format!("{tables:#?}\n{r:#?}\n{stats:#?}\n");
            std::fs::write(path, text).unwrap_or_else(|e| {
                eprintln!("{path}: {e}");
                std::process::exit(2)
            });
        }
    }
}
