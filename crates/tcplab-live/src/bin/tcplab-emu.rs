//! tcplab-emu: the live emulator. Opens TUN device `--tun` in network namespaces `--ns-a`
//! and `--ns-b`, forwards IPv4 packets between them through the link of `--config` (forward:
//! A -> B), prints `ready ORIGIN_NS` on stdout once both devices exist, and on SIGTERM or
//! SIGINT (or when its parent dies) writes `stats.json` and `drops.jsonl` into `--out`.
//! Bad input: one line on stderr, exit status 2.
//!
//! Usage: tcplab-emu --config FILE --ns-a NAME --ns-b NAME --out DIR [--tun NAME]
//!        [--realtime]

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use tcplab_live::clock::Clock;
use tcplab_live::config::Config;
use tcplab_live::driver::{Direction, Emulator};
use tcplab_live::{process, report, tun};
use tcplab_sim::link_direction::LinkDirection;

struct Args {
    config: PathBuf,
    ns: [String; 2],
    out: PathBuf,
    tun: String,
    realtime: bool,
}

fn args() -> Result<Args, String> {
    let mut it = std::env::args().skip(1);
    let (mut config, mut a, mut b, mut out) = (None, None, None, None);
    let mut tun = "tcplab0".to_string();
    let mut realtime = false;
    while let Some(k) = it.next() {
        let mut v = || it.next().ok_or(format!("{k}: a value is missing"));
        match k.as_str() {
            "--config" => config = Some(PathBuf::from(v()?)),
            "--ns-a" => a = Some(v()?),
            "--ns-b" => b = Some(v()?),
            "--out" => out = Some(PathBuf::from(v()?)),
            "--tun" => tun = v()?,
            "--realtime" => realtime = true,
            _ => return Err(format!("unknown argument {k:?}")),
        }
    }
    Ok(Args {
        config: need(config, "--config")?,
        ns: [need(a, "--ns-a")?, need(b, "--ns-b")?],
        out: need(out, "--out")?,
        tun,
        realtime,
    })
}

fn need<T>(o: Option<T>, name: &str) -> Result<T, String> {
    o.ok_or(format!("{name} is required"))
}

fn setup(a: &Args) -> Result<Emulator, String> {
    let text =
        std::fs::read_to_string(&a.config).map_err(|e| format!("config = {:?}: {e}", a.config))?;
    let cfg = Config::parse(&text)?;
    if !a.out.is_dir() {
        return Err(format!("out = {:?}: not a directory", a.out));
    }
    let dir = |name: &'static str, spec| {
        LinkDirection::new(spec, cfg.seed, &format!("{}/{name}", cfg.link))
            .map(|l| Direction::new(name, l))
            .map_err(|e| format!("config: {name}.trace: {}", e.0))
    };
    let dirs = [dir("forward", &cfg.forward)?, dir("reverse", &cfg.reverse)?];
    let tun = [
        tun::open_in_netns(&a.ns[0], &a.tun)?,
        tun::open_in_netns(&a.ns[1], &a.tun)?,
    ];
    Ok(Emulator {
        clock: Clock::start(),
        tun,
        dirs,
        drops: Vec::new(),
    })
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
    let mut emu = match setup(&a) {
        Ok(e) => e,
        Err(e) => {
            eprintln!("tcplab-emu: {e}");
            return ExitCode::from(2);
        }
    };
    let realtime = process::realtime(a.realtime);
    println!(
        "ready {} realtime={realtime}",
        emu.clock.origin_monotonic_ns()
    );
    let _ = std::io::stdout().flush();
    let run = emu.run(&process::STOP);
    let written = report::write(&emu, realtime, &a.out);
    match (run, written) {
        (Ok(()), Ok(())) => ExitCode::SUCCESS,
        (Err(e), _) | (_, Err(e)) => {
            eprintln!("tcplab-emu: {e}");
            ExitCode::FAILURE
        }
    }
}
