//! tcplab-flow: one endpoint of tcplab's transport (tcplab-core over UDP), started inside a
//! namespace (`ip netns exec NS tcplab-flow ...`). `send` runs flow `flow` of the config's
//! scenario until its transfer is acknowledged or the scenario's duration passed; `recv`
//! runs its receiver until SIGTERM/SIGINT or the flow's end plus `linger_ns`. Both print
//! `ready` on stdout once their socket is bound and write `facts.jsonl`, `summary.json`
//! (and the sender `series.csv`) into `--out`. Bad input: one line on stderr, exit status 2.
//!
//! Usage: tcplab-flow send|recv --config FILE --out DIR

use std::path::PathBuf;
use std::process::ExitCode;
use tcplab_live::flow_config::FlowConfig;
use tcplab_live::{flow_receiver, flow_sender, process};

fn args() -> Result<(String, PathBuf, PathBuf), String> {
    let mut it = std::env::args().skip(1);
    let role = it.next().ok_or("send or recv is required")?;
    if role != "send" && role != "recv" {
        return Err(format!("role = {role:?}: send or recv"));
    }
    let (mut config, mut out) = (None, None);
    while let Some(k) = it.next() {
        let v = it.next().ok_or(format!("{k}: a value is missing"))?;
        match k.as_str() {
            "--config" => config = Some(PathBuf::from(v)),
            "--out" => out = Some(PathBuf::from(v)),
            _ => return Err(format!("unknown argument {k:?}")),
        }
    }
    Ok((
        role,
        config.ok_or("--config is required")?,
        out.ok_or("--out is required")?,
    ))
}

fn main() -> ExitCode {
    process::install();
    let parsed = args().and_then(|(role, config, out)| {
        let text =
            std::fs::read_to_string(&config).map_err(|e| format!("config = {config:?}: {e}"))?;
        let cfg = FlowConfig::parse(&text)?;
        if !out.is_dir() {
            return Err(format!("out = {out:?}: not a directory"));
        }
        Ok((role, cfg, out))
    });
    let (role, cfg, out) = match parsed {
        Ok(x) => x,
        Err(e) => {
            eprintln!("tcplab-flow: {e}");
            return ExitCode::from(2);
        }
    };
    let run = if role == "send" {
        flow_sender::run(&cfg, &out, &process::STOP)
    } else {
        flow_receiver::run(&cfg, &out, &process::STOP)
    };
    match run {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("tcplab-flow {role}: {e}");
            ExitCode::FAILURE
        }
    }
}
