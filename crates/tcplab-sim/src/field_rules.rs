//! The rules of single fields, checked wherever the field appears: times within the
//! simulator's range, a link direction's rate, buffer, loss model, RED parameters and
//! schedule of changes. [`crate::validate`] walks the scenario and applies them.

use crate::error::Problem;
use crate::scenario::{Buffer, LinkDir, LossSpec, QueueSpec, RedSpec, Scenario};
use crate::topology;
use std::fmt::Display;
use tcplab_core::Dur;

/// A field path, written out only when a problem names it: `base` followed by `field`
/// (validation passes over every link direction's fields, and nearly always finds nothing).
#[derive(Clone, Copy)]
pub(crate) struct At<'a>(pub(crate) &'a dyn Display, pub(crate) &'a str);

impl Display for At<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}{}", self.0, self.1)
    }
}

/// The longest time a scenario may give (2^62 ns, about 146 years): a run's clock plus any
/// one delay, timeout or interval of the scenario then stays below `u64::MAX` ns, so time
/// arithmetic never saturates (a clock stuck at the largest time would never end the run).
pub const MAX_TIME: Dur = Dur::from_nanos(1 << 62);

/// `path = d: expected at most MAX_TIME` when `d` is longer.
pub(crate) fn time_limit(path: &dyn Display, d: Dur, errs: &mut Vec<Problem>) {
    if d > MAX_TIME {
        let (v, m) = (d.as_nanos(), MAX_TIME.as_nanos());
        let expected = format!("expected at most {m} ns (about 146 years)");
        errs.push(Problem::new(
            path.to_string(),
            Problem::TIME_LIMIT,
            v,
            m,
            &expected,
        ));
    }
}

/// The smallest packet any flow sends at full size (bytes on the wire): a TCP flow's MSS
/// plus its IP and TCP headers, a UDP source's packet size. None without flows.
pub(crate) fn smallest_packet(s: &Scenario) -> Option<u64> {
    let tcp = s.flows.iter().map(|f| {
        let mss = s.tcp_of(f).mss;
        u64::from(mss) + u64::from(crate::packet::IP_TCP_HEADER)
    });
    let udp = s.udp.iter().map(|u| u64::from(u.packet_size));
    tcp.chain(udp).min()
}

/// A byte buffer that cannot hold one full-sized packet of any flow drops every such packet.
pub(crate) fn buffer_fits(
    p: &dyn Display,
    d: &LinkDir,
    packet: Option<u64>,
    errs: &mut Vec<Problem>,
) {
    let Some(packet) = packet else { return };
    // (the schedule's change, None for the direction's own buffer)
    let given = std::iter::once((None, d.buffer)).chain(
        d.schedule
            .iter()
            .enumerate()
            .filter_map(|(i, c)| Some((Some(i), c.buffer?))),
    );
    for (change, buffer) in given {
        if let Buffer::Bytes(b) = buffer {
            if b > 0 && b < packet {
                let path = match change {
                    None => format!("{p}.buffer"),
                    Some(i) => format!("{p}.schedule[{i}].buffer"),
                };
                let expected = format!(
                    "expected at least {packet} bytes, the smallest full-sized packet of the flows (a smaller buffer drops every such packet)"
                );
                errs.push(Problem::new(
                    path,
                    Problem::BUFFER_BELOW_PACKET,
                    b,
                    packet,
                    &expected,
                ));
            }
        }
    }
}

pub(crate) fn link_dir(p: &dyn Display, d: &LinkDir, errs: &mut Vec<Problem>) {
    if d.rate == 0 {
        errs.push(format!("{p}.rate = 0: expected a positive rate in bit/s").into());
    }
    time_limit(&At(p, ".delay"), d.delay, errs);
    time_limit(&At(p, ".report_delay"), d.report_delay, errs);
    if !d.report_losses && d.report_delay != Dur::ZERO {
        errs.push(topology::wlan::report_delay_without_losses(
            &p.to_string(),
            d.report_delay,
        ));
    }
    empty_buffer(
        &At(p, ".buffer"),
        d.buffer,
        " (the buffer counts the packet being serialized)",
        errs,
    );
    loss_spec(&At(p, ".loss"), &d.loss, errs);
    if d.trace.is_some() {
        errs.extend(
            crate::delivery_trace::link_problems(&p.to_string(), d)
                .into_iter()
                .map(Problem::from),
        );
    }
    if let QueueSpec::Red(red) = &d.queue {
        red_spec(&At(p, ".queue"), red, errs);
    }
}

/// `buffer = {packets: 0}` or `{bytes: 0}` (rule [`Problem::EMPTY_BUFFER`], `limit`: the unit).
pub(crate) fn empty_buffer(p: &dyn Display, b: Buffer, why: &str, errs: &mut Vec<Problem>) {
    let (kind, unit) = match b {
        Buffer::Packets(0) => ("packets", "packet"),
        Buffer::Bytes(0) => ("bytes", "byte"),
        _ => return,
    };
    errs.push(Problem::worded(
        p.to_string(),
        Problem::EMPTY_BUFFER,
        0,
        unit,
        format!("{p} = {{{kind}: 0}}: expected at least 1 {unit}{why}"),
    ));
}

/// A probability outside [0, 1] (rule [`Problem::RANGE`]).
pub(crate) fn probability(p: &dyn Display, x: f64, errs: &mut Vec<Problem>) {
    if !(0.0..=1.0).contains(&x) {
        errs.push(Problem::worded(
            p.to_string(),
            Problem::RANGE,
            number(x),
            serde_json::json!([0, 1]),
            format!("{p} = {x}: expected a probability in [0, 1]"),
        ));
    }
}

/// A float as JSON (null when not finite: JSON has no NaN or infinity).
pub(crate) fn number(x: f64) -> serde_json::Value {
    serde_json::Number::from_f64(x).map_or(serde_json::Value::Null, serde_json::Value::Number)
}

pub(crate) fn loss_spec(p: &dyn Display, loss: &LossSpec, errs: &mut Vec<Problem>) {
    match loss {
        LossSpec::None | LossSpec::Trace { .. } => {}
        LossSpec::Bernoulli { p: prob } => probability(&At(p, ".p"), *prob, errs),
        LossSpec::Ber { ber } => probability(&At(p, ".ber"), *ber, errs),
        LossSpec::GilbertElliott {
            p_gb,
            p_bg,
            loss_good,
            loss_bad,
        } => {
            probability(&At(p, ".p_gb"), *p_gb, errs);
            probability(&At(p, ".p_bg"), *p_bg, errs);
            probability(&At(p, ".loss_good"), *loss_good, errs);
            probability(&At(p, ".loss_bad"), *loss_bad, errs);
        }
        LossSpec::TimeTrace { intervals, .. } => {
            for (i, &interval) in intervals.iter().enumerate() {
                errs.extend(crate::loss::time_trace::interval_problem(
                    format!("{p}.intervals[{i}]"),
                    interval,
                ));
            }
        }
    }
}

pub(crate) fn red_spec(p: &dyn Display, r: &RedSpec, errs: &mut Vec<Problem>) {
    if !(r.min_th >= 0.0 && r.min_th.is_finite()) {
        errs.push(Problem::worded(
            format!("{p}.min_th"),
            Problem::AT_LEAST,
            number(r.min_th),
            0,
            format!("{p}.min_th = {}: expected a finite number >= 0", r.min_th),
        ));
    }
    if !(r.max_th > r.min_th && r.max_th.is_finite()) {
        errs.push(Problem::worded(
            format!("{p}.max_th"),
            Problem::MAX_TH_ABOVE_MIN_TH,
            number(r.max_th),
            number(r.min_th),
            format!(
                "{p}.max_th = {}: expected greater than min_th ({})",
                r.max_th, r.min_th
            ),
        ));
    }
    probability(&At(p, ".max_p"), r.max_p, errs);
    if !(r.w_q > 0.0 && r.w_q <= 1.0) {
        errs.push(Problem::worded(
            format!("{p}.w_q"),
            Problem::WEIGHT,
            number(r.w_q),
            serde_json::Value::Null,
            format!("{p}.w_q = {}: expected a weight in (0, 1]", r.w_q),
        ));
    }
    if r.mean_packet_size == 0 {
        errs.push(Problem::worded(
            format!("{p}.mean_packet_size"),
            Problem::AT_LEAST,
            0,
            1,
            format!("{p}.mean_packet_size = 0: expected a positive size in bytes"),
        ));
    }
}

/// A link direction's schedule: times increasing and within the run, each change valid.
pub(crate) fn schedule(p: &dyn Display, d: &LinkDir, duration: Dur, errs: &mut Vec<Problem>) {
    let mut last: Option<Dur> = None;
    for (i, c) in d.schedule.iter().enumerate() {
        let q = format!("{p}.schedule[{i}]");
        if let Some(prev) = last {
            if c.at <= prev {
                let (at, prev) = (c.at.as_nanos(), prev.as_nanos());
                errs.push(Problem::worded(
                    format!("{q}.at"),
                    Problem::AFTER_PREVIOUS_CHANGE,
                    at,
                    serde_json::json!([i - 1, prev]),
                    format!("{q}.at = {at}: expected later than schedule[{}].at ({prev} ns); changes must be sorted by time", i - 1),
                ));
            }
        }
        last = Some(c.at);
        if c.at > duration {
            errs.push(at_most_duration(format!("{q}.at"), c.at, duration));
        }
        if c.rate.is_none() && c.delay.is_none() && c.buffer.is_none() && c.loss.is_none() {
            errs.push(Problem::worded(
                q.clone(),
                Problem::CHANGES_NOTHING,
                serde_json::Value::Null,
                serde_json::Value::Null,
                format!("{q}: changes nothing; give at least one of rate, delay, buffer, loss"),
            ));
        }
        if let Some(delay) = c.delay {
            time_limit(&format!("{q}.delay"), delay, errs);
        }
        if c.rate == Some(0) {
            errs.push(format!("{q}.rate = 0: expected a positive rate in bit/s").into());
        }
        if let Some(buffer) = c.buffer {
            empty_buffer(&format!("{q}.buffer"), buffer, "", errs);
        }
        if let Some(loss) = &c.loss {
            loss_spec(&format!("{q}.loss"), loss, errs);
        }
    }
}

/// `path = at: expected at most the duration (... ns)`.
pub(crate) fn at_most_duration(path: String, at: Dur, duration: Dur) -> Problem {
    let (a, d) = (at.as_nanos(), duration.as_nanos());
    let expected = format!("expected at most the duration ({d} ns)");
    Problem::new(path, Problem::AT_MOST_DURATION, a, d, &expected)
}
