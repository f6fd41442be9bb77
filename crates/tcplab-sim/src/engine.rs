//! The event queue: events ordered by `(time, sequence number)`, so events due at the same
//! instant run in the order they were scheduled (FIFO ties). Two binary heaps share the
//! sequence counter, one for endpoint timers and one for everything else (see
//! [`EventQueue`]). Every simulation owns its queue; nothing here is global, so many
//! simulations can run in one process or in parallel threads.
//!
//! Also the lazy-timer bookkeeping ([`TimerSlot`]) the driver uses for endpoint timers: one
//! outstanding event per endpoint in the common case, stale events recognised on arrival.

use tcplab_core::Time;

/// One scheduled event. `key` packs `(time, seq)` into one integer so that a single
/// comparison orders two entries.
struct Entry<E> {
    key: u128,
    event: E,
}

impl<E> Entry<E> {
    fn time(&self) -> Time {
        Time::from_nanos((self.key >> 64) as u64)
    }
}

/// A binary min-heap of entries by key.
///
/// Written out rather than `std::collections::BinaryHeap`: the main heap is small (about six
/// network events on average in the benchmarks), and there this plain sift-down costs fewer
/// instructions than std's pop, which sifts to the bottom and back up (104 against 121 per
/// pop in B4 under callgrind; docs/performance.md).
struct MinHeap<E> {
    v: Vec<Entry<E>>,
}

impl<E> MinHeap<E> {
    fn new() -> Self {
        MinHeap { v: Vec::new() }
    }

    /// Key of the smallest entry; `u128::MAX` when empty (no key is: seq < u64::MAX).
    #[inline]
    fn peek_key(&self) -> u128 {
        self.v.first().map_or(u128::MAX, |e| e.key)
    }

    fn push(&mut self, e: Entry<E>) {
        let mut i = self.v.len();
        self.v.push(e);
        while i > 0 {
            let parent = (i - 1) / 2;
            if self.v[parent].key <= self.v[i].key {
                break;
            }
            self.v.swap(parent, i);
            i = parent;
        }
    }

    fn pop(&mut self) -> Option<Entry<E>> {
        if self.v.is_empty() {
            return None;
        }
        let top = self.v.swap_remove(0);
        let v = &mut self.v[..];
        let n = v.len();
        // The key sifting down, kept in a register.
        let Some(key) = v.first().map(|e| e.key) else {
            return Some(top);
        };
        let mut i = 0;
        loop {
            let l = 2 * i + 1;
            if l >= n {
                break;
            }
            let (mut c, mut ck) = (l, v[l].key);
            if let Some(r) = v.get(l + 1) {
                if r.key < ck {
                    (c, ck) = (l + 1, r.key);
                }
            }
            if key <= ck {
                break;
            }
            v.swap(i, c);
            i = c;
        }
        Some(top)
    }

    fn len(&self) -> usize {
        self.v.len()
    }
}

/// Pending events of one simulation.
///
/// Two heaps share one sequence counter: `push` puts an event in the main heap, `push_timer`
/// in a second one meant for endpoint timers, which are many (two per TCP flow), far in the
/// future and rarely due. Kept apart, they do not deepen the heap that every packet's
/// events go through. `pop` takes the smaller `(time, seq)` of the two tops, so the order
/// is exactly that of a single heap: by time, FIFO among equal times, whichever heap an
/// event sits in.
pub struct EventQueue<E> {
    heap: MinHeap<E>,
    timers: MinHeap<E>,
    next_seq: u64,
    peak: usize,
    popped: u64,
}

impl<E> Default for EventQueue<E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E> EventQueue<E> {
    pub fn new() -> Self {
        EventQueue {
            heap: MinHeap::new(),
            timers: MinHeap::new(),
            next_seq: 0,
            peak: 0,
            popped: 0,
        }
    }

    fn entry(&mut self, time: Time, event: E) -> Entry<E> {
        let seq = self.next_seq;
        self.next_seq += 1;
        let key = (time.as_nanos() as u128) << 64 | seq as u128;
        Entry { key, event }
    }

    /// Schedules `event` at `time`; among events at one time, earlier calls run first.
    #[inline]
    pub fn push(&mut self, time: Time, event: E) {
        let e = self.entry(time, event);
        self.heap.push(e);
        self.peak = self.peak.max(self.len());
    }

    /// Like [`push`](Self::push) (same order), for events that are usually far ahead and
    /// rarely due, such as endpoint timers: kept in their own heap.
    pub fn push_timer(&mut self, time: Time, event: E) {
        let e = self.entry(time, event);
        self.timers.push(e);
        self.peak = self.peak.max(self.len());
    }

    /// Time of the next event, if any.
    pub fn peek_time(&self) -> Option<Time> {
        let key = self.heap.peek_key().min(self.timers.peek_key());
        (key != u128::MAX).then(|| Time::from_nanos((key >> 64) as u64))
    }

    /// Removes and returns the next event.
    pub fn pop(&mut self) -> Option<(Time, E)> {
        self.pop_until(Time::MAX)
    }

    /// Removes and returns the next event if it is due at or before `limit`.
    #[inline]
    pub fn pop_until(&mut self, limit: Time) -> Option<(Time, E)> {
        let h = self.heap.peek_key();
        let t = self.timers.peek_key();
        let key = h.min(t);
        if key == u128::MAX || (key >> 64) as u64 > limit.as_nanos() {
            return None;
        }
        let e = if t < h {
            self.timers.pop()
        } else {
            self.heap.pop()
        }?;
        self.popped += 1;
        Some((e.time(), e.event))
    }

    /// Events waiting.
    pub fn len(&self) -> usize {
        self.heap.len() + self.timers.len()
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Most events waiting at once so far.
    pub fn peak_len(&self) -> usize {
        self.peak
    }
    /// Events popped so far.
    pub fn processed(&self) -> u64 {
        self.popped
    }
}

/// Lazy timer of one endpoint: remembers the earliest time for which a timer event is
/// outstanding in the queue.
///
/// - When the endpoint's deadline is earlier than that (or nothing is outstanding), a new event
///   is pushed; the later one stays in the queue and is recognised as stale when it fires.
/// - When the deadline moved later, nothing is pushed: the outstanding event fires early and
///   the driver re-arms for the new deadline.
///
/// So moving a deadline later (an RTO restarted on every ACK) costs no queue operation.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TimerSlot {
    armed: Option<Time>,
}

impl TimerSlot {
    /// Returns the time at which an event must be pushed for `deadline`, if one is needed.
    pub fn arm(&mut self, deadline: Option<Time>) -> Option<Time> {
        let d = deadline?;
        if self.armed.is_none_or(|a| d < a) {
            self.armed = Some(d);
            Some(d)
        } else {
            None
        }
    }

    /// A timer event scheduled for `at` fired. True when it is the live one (the caller then
    /// checks the endpoint's deadline and re-arms); false for a stale event, to be ignored.
    pub fn fire(&mut self, at: Time) -> bool {
        if self.armed == Some(at) {
            self.armed = None;
            true
        } else {
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timer_slot_pushes_only_when_deadline_moves_earlier() {
        let mut s = TimerSlot::default();
        assert_eq!(s.arm(None), None);
        assert_eq!(
            s.arm(Some(Time::from_nanos(10))),
            Some(Time::from_nanos(10))
        );
        assert_eq!(s.arm(Some(Time::from_nanos(20))), None);
        assert_eq!(s.arm(Some(Time::from_nanos(5))), Some(Time::from_nanos(5)));
        assert!(!s.fire(Time::from_nanos(10)), "superseded event is stale");
        assert!(s.fire(Time::from_nanos(5)));
        assert!(
            !s.fire(Time::from_nanos(5)),
            "a duplicate at the same time is stale"
        );
    }
}
