//! tcplab-emu: the live emulator. Opens a TUN device `--tun` in the network namespace of
//! every host and forwards IPv4 packets between them through tcplab-sim's link models:
//!
//! - one link: `--config FILE --ns-a NAME --ns-b NAME` (hosts a and b, the link of the
//!   config; forward: A -> B);
//! - a scenario: `--scenario FILE --hosts FILE` (the canonical scenario JSON, and a JSON
//!   object naming each host's namespace: `{"s0": "tcplab-1-ab12cd-s0", ...}`); every link
//!   of its topology is emulated and packets are routed by destination address. A host
//!   given as `fd:N` instead of a namespace is a user-space endpoint on the inherited
//!   `SOCK_SEQPACKET` socket `N` (see `tcplab_live::device`).
//!
//! A namespace is a name under `/run/netns` (`ip netns`) or the path of a namespace file
//! (`/proc/PID/ns/net`, as an unprivileged run in a user namespace gives it).
//!
//! Prints `ready ORIGIN_NS realtime=...` on stdout once every device exists, and on SIGTERM
//! or SIGINT (or when its parent dies) writes `stats.json` and `drops.jsonl` into `--out`.
//! `--plan --scenario FILE` prints the scenario's hosts, their addresses, routers and links
//! as JSON and exits. Bad input: one line on stderr, exit status 2.
//!
//! A namespace's TUN device is opened with segmentation offload (`tcplab_live::vnet`: the
//! host's kernel hands over TCP super-packets, which the emulator segments as the kernel
//! would); `--no-offload` opens it without (one IP packet per read, segmented by the kernel).
//!
//! `--breaks` (or `TCPLAB_EMU_BREAKS=1` in the environment), with `--realtime`: the loop
//! takes short breaks (`Emulator::breaks`), so that the kernel's reserve for normal tasks
//! does not stop it for 50 ms at a time.
//!
//! Usage: tcplab-emu (--config FILE --ns-a NAME --ns-b NAME | --scenario FILE --hosts FILE)
//!        --out DIR [--tun NAME] [--realtime] [--no-offload] [--breaks]
//!        tcplab-emu --plan --scenario FILE

use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use tcplab_live::clock::Clock;
use tcplab_live::config::Config;
use tcplab_live::driver::Emulator;
use tcplab_live::plan::Plan;
use tcplab_live::{device, process, report};
use tcplab_sim::Scenario;

enum Source {
    OneLink {
        config: PathBuf,
        ns: [String; 2],
    },
    /// `hosts`: None with `--plan`.
    Scenario {
        scenario: PathBuf,
        hosts: Option<PathBuf>,
    },
}

struct Args {
    source: Source,
    plan_only: bool,
    out: Option<PathBuf>,
    tun: String,
    realtime: bool,
    offload: bool,
    breaks: bool,
}

fn args() -> Result<Args, String> {
    let mut it = std::env::args().skip(1);
    let (mut config, mut a, mut b, mut out) = (None, None, None, None);
    let (mut scenario, mut hosts) = (None, None);
    let mut tun = "tcplab0".to_string();
    let (mut realtime, mut plan_only, mut offload) = (false, false, true);
    let mut breaks = std::env::var("TCPLAB_EMU_BREAKS").is_ok_and(|v| v == "1");
    while let Some(k) = it.next() {
        let mut v = || it.next().ok_or(format!("{k}: a value is missing"));
        match k.as_str() {
            "--config" => config = Some(PathBuf::from(v()?)),
            "--ns-a" => a = Some(v()?),
            "--ns-b" => b = Some(v()?),
            "--scenario" => scenario = Some(PathBuf::from(v()?)),
            "--hosts" => hosts = Some(PathBuf::from(v()?)),
            "--out" => out = Some(PathBuf::from(v()?)),
            "--tun" => tun = v()?,
            "--realtime" => realtime = true,
            "--no-offload" => offload = false,
            "--breaks" => breaks = true,
            "--plan" => plan_only = true,
            _ => return Err(format!("unknown argument {k:?}")),
        }
    }
    let source = match (config, scenario) {
        (Some(config), None) => Source::OneLink {
            config,
            ns: [need(a, "--ns-a")?, need(b, "--ns-b")?],
        },
        (None, Some(scenario)) => Source::Scenario {
            scenario,
            hosts: if plan_only {
                None
            } else {
                Some(need(hosts, "--hosts")?)
            },
        },
        _ => return Err("one of --config and --scenario is required".into()),
    };
    if plan_only && !matches!(source, Source::Scenario { .. }) {
        return Err("--plan needs --scenario".into());
    }
    let out = if plan_only {
        out
    } else {
        Some(need(out, "--out")?)
    };
    Ok(Args {
        source,
        plan_only,
        out,
        tun,
        realtime,
        offload,
        breaks,
    })
}

fn need<T>(o: Option<T>, name: &str) -> Result<T, String> {
    o.ok_or(format!("{name} is required"))
}

fn read(path: &Path, what: &str) -> Result<String, String> {
    std::fs::read_to_string(path).map_err(|e| format!("{what} = {path:?}: {e}"))
}

/// The plan and each host's namespace.
fn plan(src: &Source) -> Result<(Plan, Vec<String>), String> {
    match src {
        Source::OneLink { config, ns } => {
            let cfg = Config::parse(&read(config, "config")?)?;
            Ok((Plan::one_link(&cfg), ns.to_vec()))
        }
        Source::Scenario { scenario, hosts } => {
            let s: Scenario = serde_json::from_str(&read(scenario, "scenario")?)
                .map_err(|e| format!("scenario: {e}"))?;
            let plan = Plan::from_scenario(&s)?;
            let Some(hosts) = hosts else {
                return Ok((plan, Vec::new()));
            };
            let mut map: HashMap<String, String> =
                serde_json::from_str(&read(hosts, "hosts")?).map_err(|e| format!("hosts: {e}"))?;
            let ns = plan
                .hosts
                .iter()
                .map(|h| {
                    map.remove(&h.name)
                        .ok_or(format!("hosts: host {:?} has no namespace", h.name))
                })
                .collect::<Result<Vec<_>, _>>()?;
            if let Some(k) = map.keys().min() {
                return Err(format!("hosts: {k:?} is no host of the scenario"));
            }
            Ok((plan, ns))
        }
    }
}

fn setup(a: &Args, plan: Plan, ns: &[String]) -> Result<Emulator, String> {
    let out = a.out.as_ref().expect("checked by args");
    if !out.is_dir() {
        return Err(format!("out = {out:?}: not a directory"));
    }
    let tuns = ns
        .iter()
        .map(|n| device::open_with(n, &a.tun, a.offload))
        .collect::<Result<Vec<_>, _>>()?;
    let mut emu = Emulator::new(plan, tuns, Clock::start()).map_err(|e| format!("config: {e}"))?;
    for (k, spec) in ns.iter().enumerate() {
        emu.hosts[k].kernel = device::is_kernel(spec) && emu.plan.hosts[k].kernel_tcp;
        emu.hosts[k].vnet = a.offload && device::offloads(spec);
    }
    Ok(emu)
}

fn main() -> ExitCode {
    process::install();
    let a = match args() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("tcplab-emu: {e}");
            return ExitCode::from(2);
        }
    };
    let built = plan(&a.source).and_then(|(p, ns)| {
        if a.plan_only {
            println!("{}", p.to_json());
            return Ok(None);
        }
        setup(&a, p, &ns).map(Some)
    });
    let mut emu = match built {
        Ok(Some(e)) => e,
        Ok(None) => return ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("tcplab-emu: {e}");
            return ExitCode::from(2);
        }
    };
    let realtime = process::realtime(a.realtime);
    emu.breaks = a.breaks && realtime == "SCHED_FIFO";
    println!(
        "ready {} realtime={realtime}",
        emu.clock.origin_monotonic_ns()
    );
    let _ = std::io::stdout().flush();
    let run = emu.run(&process::STOP);
    let written = report::write(&emu, realtime, a.out.as_ref().expect("checked by args"));
    match (run, written) {
        (Ok(()), Ok(())) => ExitCode::SUCCESS,
        (Err(e), _) | (_, Err(e)) => {
            eprintln!("tcplab-emu: {e}");
            ExitCode::FAILURE
        }
    }
}
