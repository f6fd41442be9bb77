//! The event queue: events ordered by `(time, sequence number)`, so events due at the same
//! instant run in the order they were scheduled (FIFO ties). Two binary heaps share the
//! sequence counter, one for endpoint timers and one for everything else (see
//! [`EventQueue`]), until the events pending pass [`RADIX_ABOVE`]: from then on a radix
//! heap ([`Radix`]) holds them all, whose cost does not grow with their number. Every simulation owns its queue; nothing here is global, so many
//! simulations can run in one process or in parallel threads.
//!
//! Also the lazy-timer bookkeeping ([`TimerSlot`]) the driver uses for endpoint timers: one
//! outstanding event per endpoint in the common case, stale events recognised on arrival.

use tcplab_core::Time;

/// One scheduled event. `key` packs `(time, seq)` into one integer so that a single
/// comparison orders two entries.
#[derive(Clone, Copy)]
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
/// network events on average in the benchmarks), and there a sift-down that stops as soon as
/// the key is in place costs fewer instructions than std's pop, which sifts to the bottom
/// and back up (docs/performance.md). Entries are `Copy` (a key and a small event): the
/// entries on the way move by one copy each into the hole, and the sifted entry is written
/// once at the end, rather than swapped at every level.
struct MinHeap<E> {
    v: Vec<Entry<E>>,
}

impl<E: Copy> MinHeap<E> {
    fn new() -> Self {
        MinHeap { v: Vec::new() }
    }

    /// Key of the smallest entry; `u128::MAX` when empty (no key is: seq < u64::MAX).
    #[inline]
    fn peek_key(&self) -> u128 {
        self.v.first().map_or(u128::MAX, |e| e.key)
    }

    #[inline(always)]
    fn push(&mut self, e: Entry<E>) {
        let mut i = self.v.len();
        self.v.push(e);
        while i > 0 {
            let parent = (i - 1) / 2;
            if self.v[parent].key <= e.key {
                break;
            }
            self.v.swap(parent, i);
            i = parent;
        }
    }

    fn pop(&mut self) -> Option<Entry<E>> {
        // The last entry sifts down from the root, whose entry is the one returned.
        let last = self.v.pop()?;
        let v = &mut self.v[..];
        let Some(&top) = v.first() else {
            return Some(last);
        };
        let n = v.len();
        let key = last.key;
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
            v[i] = v[c];
            i = c;
        }
        v[i] = last;
        Some(top)
    }
}

/// Pending events past which the queue turns into a radix heap (for good: a run that had
/// that many keeps about as many). B1-B4 stay far below (at most a few hundred); 10,000
/// flows keep some 30,000 pending (an arrival per busy link direction, two timers per flow),
/// where a heap pop took about 15 levels of sifting.
pub const RADIX_ABOVE: usize = 4096;

/// Bucket of `key` against the floor `last` (`key >= last`): 0 when equal, else 1 + the
/// position of the highest bit in which they differ.
#[inline(always)]
fn bucket_of(last: u128, key: u128) -> usize {
    let x = key ^ last;
    let hi = (x >> 64) as u64;
    if hi != 0 {
        128 - hi.leading_zeros() as usize
    } else {
        64 - (x as u64).leading_zeros() as usize
    }
}

/// A radix heap of entries. The keys a simulation schedules never go below the last one
/// popped (an event is scheduled at or after the current time, with a larger sequence
/// number), so entries are kept in buckets by the highest bit in which their key differs
/// from a floor `last` (the smallest key found so far): adding one is an append to its
/// bucket, and the smallest is the only entry of bucket 0 once the lowest non-empty bucket
/// has been spread over the lower ones (an entry moves down at most 128 times in all, in
/// practice a few). The order is exactly that of a sorted queue (keys are unique). A key
/// below the floor (scheduled before a peeked event; the simulator never does) is still
/// placed correctly, by rebuilding the buckets.
struct Radix<E> {
    /// Bucket 0: the smallest entry, once found ([`Radix::settle`]); its key is `last`.
    first: Option<Entry<E>>,
    /// Bucket `b` (1..=128) at `b - 1`.
    buckets: [Vec<Entry<E>>; 128],
    /// Bit `b - 1` (of the pair, low word first) set when bucket `b` holds entries.
    nonempty: [u64; 2],
    /// The floor: no entry has a smaller key.
    last: u128,
}

impl<E: Copy> Radix<E> {
    fn new() -> Self {
        Radix {
            first: None,
            buckets: std::array::from_fn(|_| Vec::new()),
            nonempty: [0; 2],
            last: 0,
        }
    }

    #[inline]
    fn push(&mut self, e: Entry<E>) {
        if e.key < self.last {
            self.rebuild(e);
        } else {
            self.place(e);
        }
    }

    /// Puts `e` (key at or above `last`) in its bucket.
    #[inline(always)]
    fn place(&mut self, e: Entry<E>) {
        let b = bucket_of(self.last, e.key);
        if b == 0 {
            self.first = Some(e);
        } else {
            // 1 <= b <= 128: the mask only spares the bounds checks.
            let i = (b - 1) & 127;
            self.buckets[i].push(e);
            self.nonempty[i >> 6] |= 1 << (i & 63);
        }
    }

    /// Index in `buckets` of the lowest non-empty bucket past bucket 0.
    #[inline(always)]
    fn lowest(&self) -> Option<usize> {
        match self.nonempty {
            [0, 0] => None,
            [0, hi] => Some(64 + hi.trailing_zeros() as usize),
            [lo, _] => Some(lo.trailing_zeros() as usize),
        }
    }

    /// Makes `first` the smallest entry, if there are any: spreads the lowest non-empty
    /// bucket over the lower ones, against its smallest key as the new floor.
    #[inline]
    fn settle(&mut self) {
        if self.first.is_some() {
            return;
        }
        let Some(b) = self.lowest() else {
            return;
        };
        self.nonempty[b >> 6] &= !(1 << (b & 63));
        if self.buckets[b].len() == 1 {
            // Alone in its bucket: the smallest, with nothing to spread.
            let e = self.buckets[b].pop().expect("one entry");
            self.last = e.key;
            self.first = Some(e);
            return;
        }
        self.last = self.buckets[b]
            .iter()
            .map(|e| e.key)
            .min()
            .expect("a non-empty bucket");
        // Every entry goes to a lower bucket (it shares the bits above `b` with the new
        // floor, and bit `b` too), so this bucket is not pushed to while it is read.
        for j in 0..self.buckets[b].len() {
            let e = self.buckets[b][j];
            self.place(e);
        }
        self.buckets[b].clear(); // keeps its allocation
    }

    /// `e` is below the floor: every entry is placed again against `e`'s key.
    #[cold]
    #[inline(never)]
    fn rebuild(&mut self, e: Entry<E>) {
        let mut all: Vec<Entry<E>> = self.first.take().into_iter().collect();
        for b in self.buckets.iter_mut() {
            all.append(b);
        }
        self.nonempty = [0; 2];
        self.last = e.key;
        all.push(e);
        for e in all {
            self.place(e);
        }
    }

    /// Key of the smallest entry; `u128::MAX` when empty.
    fn peek_key(&self) -> u128 {
        if let Some(e) = &self.first {
            return e.key;
        }
        let Some(b) = self.lowest() else {
            return u128::MAX;
        };
        self.buckets[b]
            .iter()
            .map(|e| e.key)
            .min()
            .unwrap_or(u128::MAX)
    }

    /// Removes the smallest entry if its key is at most `limit`.
    #[inline]
    fn pop_until(&mut self, limit: u128) -> Option<Entry<E>> {
        self.settle();
        if self.first.as_ref()?.key > limit {
            return None;
        }
        self.first.take()
    }
}

/// Pending events of one simulation.
///
/// Two heaps share one sequence counter: `push` puts an event in the main heap, `push_timer`
/// in a second one meant for endpoint timers, which are many (two per TCP flow), far in the
/// future and rarely due. Kept apart, they do not deepen the heap that every packet's
/// events go through. `pop` takes the smaller `(time, seq)` of the two tops, so the order
/// is exactly that of a single heap: by time, FIFO among equal times, whichever heap an
/// event sits in. Once more than [`RADIX_ABOVE`] events have been pending, a radix heap
/// holds them: the heaps then only collect what is pushed between two pops (same order).
pub struct EventQueue<E> {
    heap: MinHeap<E>,
    timers: MinHeap<E>,
    radix: Option<Box<Radix<E>>>,
    next_seq: u64,
    /// Events waiting, in all three.
    len: usize,
    peak: usize,
    popped: u64,
}

impl<E: Copy> Default for EventQueue<E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E: Copy> EventQueue<E> {
    pub fn new() -> Self {
        EventQueue {
            heap: MinHeap::new(),
            timers: MinHeap::new(),
            radix: None,
            next_seq: 0,
            len: 0,
            peak: 0,
            popped: 0,
        }
    }

    #[inline(always)]
    fn entry(&mut self, time: Time, event: E) -> Entry<E> {
        let seq = self.next_seq;
        self.next_seq += 1;
        let key = (time.as_nanos() as u128) << 64 | seq as u128;
        Entry { key, event }
    }

    /// Schedules `event` at `time`; among events at one time, earlier calls run first.
    #[inline(always)]
    pub fn push(&mut self, time: Time, event: E) {
        let e = self.entry(time, event);
        self.heap.push(e);
        self.len += 1;
        self.peak = self.peak.max(self.len);
    }

    /// Like [`push`](Self::push) (same order), for events that are usually far ahead and
    /// rarely due, such as endpoint timers: kept in their own heap.
    #[inline]
    pub fn push_timer(&mut self, time: Time, event: E) {
        let e = self.entry(time, event);
        self.timers.push(e);
        self.len += 1;
        self.peak = self.peak.max(self.len);
    }

    /// Time of the next event, if any.
    pub fn peek_time(&self) -> Option<Time> {
        let key = self.heap.peek_key().min(self.timers.peek_key());
        let key = key.min(self.radix.as_ref().map_or(u128::MAX, |r| r.peek_key()));
        (key != u128::MAX).then(|| Time::from_nanos((key >> 64) as u64))
    }

    /// Removes and returns the next event.
    pub fn pop(&mut self) -> Option<(Time, E)> {
        self.pop_until(Time::MAX)
    }

    /// Removes and returns the next event if it is due at or before `limit`.
    #[inline]
    pub fn pop_until(&mut self, limit: Time) -> Option<(Time, E)> {
        if self.peak > RADIX_ABOVE {
            return self.pop_radix(limit);
        }
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
        self.len -= 1;
        self.popped += 1;
        Some((e.time(), e.event))
    }

    /// `pop_until` once more than [`RADIX_ABOVE`] events have been pending: the heaps only
    /// collect the events pushed since the last pop, which join the radix heap here.
    #[cold]
    #[inline(never)]
    fn pop_radix(&mut self, limit: Time) -> Option<(Time, E)> {
        let r = self.radix.get_or_insert_with(|| Box::new(Radix::new()));
        // Plain loops: a draining iterator per heap and pop cost more than the pushes.
        for heap in [&mut self.heap, &mut self.timers] {
            if !heap.v.is_empty() {
                for &e in &heap.v {
                    r.push(e);
                }
                heap.v.clear();
            }
        }
        // The largest key of time `limit`.
        let e = r.pop_until((limit.as_nanos() as u128) << 64 | u64::MAX as u128)?;
        self.len -= 1;
        self.popped += 1;
        Some((e.time(), e.event))
    }

    /// Events waiting.
    #[inline]
    pub fn len(&self) -> usize {
        self.len
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
