//! Time-based trace loss: the packet whose serialization ends at `t` is lost when `t` lies
//! in one of the `[start, end)` intervals, and the first packet ending at or after each
//! listed time is lost (one packet per time). Deterministic, draws nothing.

use super::LossModel;
use tcplab_core::{Dur, Time};

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
