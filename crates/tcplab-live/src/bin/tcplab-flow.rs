//! tcplab-flow: one endpoint of tcplab's transport (tcplab-core over UDP), started inside a
//! namespace (`ip netns exec NS tcplab-flow ...`). `send` runs flow `flow` of the config's
//! scenario until its transfer is acknowledged or the scenario's duration passed; `recv`
//! runs its receiver until SIGTERM/SIGINT or the flow's end plus `linger_ns`. Both print
//! `ready` on stdout once their socket is bound and write `facts.jsonl`, `summary.json`
//! (and the sender `series.csv`) into `--out`. `udp-send` and `udp-recv` are the source and
//! sink of UDP constant-bit-rate flow `flow` (`scenario.udp`; config: [`CbrConfig`]), alike
//! in how they start, stop and what they write. Bad input: one line on stderr, exit status 2.
//!
//! `tcp-send --fd N` is flow `flow`'s sender speaking real TCP (tcplab-core's connection
//! layer) on the inherited `SOCK_SEQPACKET` socket `N` that attaches its host to the
//! emulator (docs/real-tcp.md); it writes what `send` writes. `tcp-recv --fd N` is flow
//! `flow`'s receiver speaking real TCP on the socket attaching the flow's destination: it
//! listens (`local` is its address and port, `peer` the sender's address), checks every
//! byte against the Linux endpoints' stream, closes after the peer's FIN and writes
//! `summary.json` once the connection closed or the scenario's duration passed.
//!
//! Usage: tcplab-flow send|recv|udp-send|udp-recv --config FILE --out DIR
//!        tcplab-flow tcp-send|tcp-recv --config FILE --out DIR --fd N

use std::path::PathBuf;
use std::process::ExitCode;
use tcplab_live::cbr_config::CbrConfig;
use tcplab_live::flow_config::FlowConfig;
use tcplab_live::{
    cbr_receiver, cbr_sender, device, flow_receiver, flow_sender, process, tcp_receiver, tcp_sender,
};

const ROLES: [&str; 6] = [
    "send", "recv", "udp-send", "udp-recv", "tcp-send", "tcp-recv",
];

enum Config {
    Tcplab(FlowConfig),
    Udp(CbrConfig),
}

struct Args {
    role: String,
    config: PathBuf,
    out: PathBuf,
    fd: Option<String>,
}

fn args() -> Result<Args, String> {
    let mut it = std::env::args().skip(1);
    let role = it
        .next()
        .ok_or(format!("one of {} is required", ROLES.join(", ")))?;
    if !ROLES.contains(&role.as_str()) {
        return Err(format!("role = {role:?}: one of {}", ROLES.join(", ")));
    }
    let (mut config, mut out, mut fd) = (None, None, None);
    while let Some(k) = it.next() {
        let v = it.next().ok_or(format!("{k}: a value is missing"))?;
        match k.as_str() {
            "--config" => config = Some(PathBuf::from(v)),
            "--out" => out = Some(PathBuf::from(v)),
            "--fd" => fd = Some(v),
            _ => return Err(format!("unknown argument {k:?}")),
        }
    }
    if role.starts_with("tcp-") != fd.is_some() {
        return Err("--fd: given with tcp-send and tcp-recv, and only then".into());
    }
    Ok(Args {
        role,
        config: config.ok_or("--config is required")?,
        out: out.ok_or("--out is required")?,
        fd,
    })
}

fn main() -> ExitCode {
    process::install();
    let parsed = args().and_then(|a| {
        let Args {
            role,
            config,
            out,
            fd,
        } = a;
        let text =
            std::fs::read_to_string(&config).map_err(|e| format!("config = {config:?}: {e}"))?;
        let cfg = if role.starts_with("udp-") {
            Config::Udp(CbrConfig::parse(&text)?)
        } else {
            Config::Tcplab(FlowConfig::parse(&text)?)
        };
        if !out.is_dir() {
            return Err(format!("out = {out:?}: not a directory"));
        }
        let dev = match fd {
            Some(n) => Some(device::open(&format!("fd:{n}"), "").map_err(|e| format!("--fd {e}"))?),
            None => None,
        };
        Ok((role, cfg, out, dev))
    });
    let (role, cfg, out, dev) = match parsed {
        Ok(x) => x,
        Err(e) => {
            eprintln!("tcplab-flow: {e}");
            return ExitCode::from(2);
        }
    };
    let stop = &process::STOP;
    let run = match (&cfg, role.as_str()) {
        (Config::Tcplab(c), "send") => flow_sender::run(c, &out, stop),
        (Config::Tcplab(c), "tcp-send") => {
            tcp_sender::run(c, dev.expect("--fd checked"), &out, stop)
        }
        (Config::Tcplab(c), "tcp-recv") => {
            tcp_receiver::run(c, dev.expect("--fd checked"), &out, stop)
        }
        (Config::Tcplab(c), _) => flow_receiver::run(c, &out, stop),
        (Config::Udp(c), "udp-send") => cbr_sender::run(c, &out, stop),
        (Config::Udp(c), _) => cbr_receiver::run(c, &out, stop),
    };
    match run {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("tcplab-flow {role}: {e}");
            ExitCode::FAILURE
        }
    }
}
