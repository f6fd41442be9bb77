//! Time-based trace loss: the packet whose serialization ends at `t` is lost when `t` lies
//! in one of the `[start, end)` intervals, and the first packet ending at or after each
//! listed time is lost (one packet per time). Deterministic, draws nothing.

use super::LossModel;
use crate::error::Problem;
use tcplab_core::{Dur, Time};

/// The rule of an interval `[start, end]` (ns): start < end. Its problem (rule
/// [`Problem::START_BEFORE_END`], value `[start, end]`) is placed at `path`; the one home of
/// this rule, for intervals given in a scenario and lines of a time-trace file alike.
pub fn interval_problem(path: String, [start, end]: [Dur; 2]) -> Option<Problem> {
    if start < end {
        return None;
    }
    let (a, b) = (start.as_nanos(), end.as_nanos());
    let message = format!("{path} = [{a}, {b}]: expected start < end (ns)");
    Some(Problem::worded(
        path,
        Problem::START_BEFORE_END,
        serde_json::json!([a, b]),
        serde_json::Value::Null,
        message,
    ))
}

/// A time trace's loss times and `[start, end]` intervals.
pub type TimesAndIntervals = (Vec<Dur>, Vec<[Dur; 2]>);

/// The loss times and intervals of a time-trace file, from its lines (1-based line number,
/// the durations its words give; comment and blank lines left out by the reader, which
/// parses units). A line is one time, or a `start end` interval with start < end (its
/// problem at path `line {n}`, [`interval_problem`]); any other number of values is a
/// problem of rule [`Problem::TIME_OR_INTERVAL`] (value: how many). The reader words the
/// problem with the line's text and the file's name.
pub fn from_lines(lines: &[(u64, Vec<Dur>)]) -> Result<TimesAndIntervals, Box<Problem>> {
    let (mut times, mut intervals) = (Vec::new(), Vec::new());
    for (n, values) in lines {
        match values[..] {
            [t] => times.push(t),
            [start, end] => match interval_problem(format!("line {n}"), [start, end]) {
                Some(problem) => return Err(Box::new(problem)),
                None => intervals.push([start, end]),
            },
            _ => {
                let count = values.len();
                return Err(Box::new(Problem::worded(
                    format!("line {n}"),
                    Problem::TIME_OR_INTERVAL,
                    count,
                    serde_json::Value::Null,
                    format!("line {n}: {count} values: expected a time or a 'start end' pair"),
                )));
            }
        }
    }
    Ok((times, intervals))
}

pub struct TimeTrace {
    /// Sorted single-loss times not yet used.
    times: Vec<Time>,
    next_time: usize,
    /// Sorted by start.
    intervals: Vec<(Time, Time)>,
    next_interval: usize,
}

impl TimeTrace {
    pub fn new(times: &[Dur], intervals: &[[Dur; 2]]) -> Self {
        let mut times: Vec<Time> = times.iter().map(|&d| Time::ZERO + d).collect();
        times.sort_unstable();
        let mut intervals: Vec<(Time, Time)> = intervals
            .iter()
            .map(|&[a, b]| (Time::ZERO + a, Time::ZERO + b))
            .collect();
        intervals.sort_unstable();
        TimeTrace {
            times,
            next_time: 0,
            intervals,
            next_interval: 0,
        }
    }
}

impl LossModel for TimeTrace {
    /// `now` never decreases between calls (serialization ends in order).
    fn lose(&mut self, now: Time, _size: u32) -> bool {
        let mut lost = false;
        // Every listed time reached by now is used up by this packet.
        while self.times.get(self.next_time).is_some_and(|&t| t <= now) {
            self.next_time += 1;
            lost = true;
        }
        while self
            .intervals
            .get(self.next_interval)
            .is_some_and(|&(_, end)| end <= now)
        {
            self.next_interval += 1;
        }
        // Intervals may overlap: any started one not yet ended covers `now`.
        lost || self.intervals[self.next_interval..]
            .iter()
            .take_while(|&&(start, _)| start <= now)
            .any(|&(_, end)| now < end)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(x: u64) -> Dur {
        Dur::from_millis(x)
    }

    #[test]
    fn a_file_line_is_a_time_or_an_interval_that_starts_before_it_ends() {
        let lines = vec![
            (1, vec![ms(5)]),
            (3, vec![ms(10), ms(20)]),
            (4, vec![ms(7)]),
        ];
        assert_eq!(
            from_lines(&lines).unwrap(),
            (vec![ms(5), ms(7)], vec![[ms(10), ms(20)]])
        );
        let bad = from_lines(&[(1, vec![ms(5)]), (2, vec![ms(20), ms(10)])]).unwrap_err();
        assert_eq!(
            (bad.path.as_str(), bad.rule),
            ("line 2", Problem::START_BEFORE_END)
        );
        assert_eq!(bad.value, Some(serde_json::json!([20_000_000, 10_000_000])));
        let equal = from_lines(&[(7, vec![ms(3), ms(3)])]).unwrap_err();
        assert_eq!(equal.rule, Problem::START_BEFORE_END);
        let three = from_lines(&[(2, vec![ms(1), ms(2), ms(3)])]).unwrap_err();
        assert_eq!(
            (three.path.as_str(), three.rule, three.value),
            (
                "line 2",
                Problem::TIME_OR_INTERVAL,
                Some(serde_json::json!(3))
            )
        );
    }

    #[test]
    fn loses_first_packet_after_each_time_and_inside_intervals() {
        let mut t = TimeTrace::new(&[ms(25), ms(5)], &[[ms(40), ms(60)]]);
        let lost: Vec<u64> = (0..10u64)
            .map(|i| i * 10 + 3) // packets ending at 3, 13, ..., 93 ms
            .filter(|&at| t.lose(Time::ZERO + ms(at), 100))
            .collect();
        // 13 (first after 5), 33 (first after 25), 43 and 53 (in [40, 60)).
        assert_eq!(lost, [13, 33, 43, 53]);
    }

    #[test]
    fn interval_bounds_are_half_open() {
        let mut t = TimeTrace::new(&[], &[[ms(10), ms(20)]]);
        let at = |x| Time::ZERO + ms(x);
        assert!(!t.lose(at(9), 1));
        assert!(t.lose(at(10), 1));
        assert!(t.lose(at(19), 1));
        assert!(!t.lose(at(20), 1));
    }
}
