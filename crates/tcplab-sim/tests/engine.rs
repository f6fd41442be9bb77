//! The event queue pops events by time, and events due at the same time in the order they
//! were scheduled, including events scheduled while others at that time are being handled.

use tcplab_core::Time;
use tcplab_sim::engine::{EventQueue, RADIX_ABOVE};
use tcplab_sim::rng::Rng;

fn t(ns: u64) -> Time {
    Time::from_nanos(ns)
}

#[test]
fn orders_by_time_then_fifo() {
    let mut q = EventQueue::new();
    for (time, label) in [(5, "a"), (3, "b"), (5, "c"), (1, "d"), (3, "e"), (5, "f")] {
        q.push(t(time), label);
    }
    let order: Vec<(u64, &str)> = std::iter::from_fn(|| q.pop())
        .map(|(time, l)| (time.as_nanos(), l))
        .collect();
    assert_eq!(
        order,
        [(1, "d"), (3, "b"), (3, "e"), (5, "a"), (5, "c"), (5, "f")]
    );
    assert!(q.is_empty());
    assert_eq!(q.peak_len(), 6);
    assert_eq!(q.processed(), 6);
}

#[test]
fn events_scheduled_for_now_run_after_those_already_due_now() {
    let mut q = EventQueue::new();
    q.push(t(10), 1);
    q.push(t(10), 2);
    let (now, first) = q.pop().unwrap();
    assert_eq!(first, 1);
    q.push(now, 3); // scheduled while handling an event at 10
    q.push(t(9_999), 4);
    let rest: Vec<i32> = std::iter::from_fn(|| q.pop()).map(|(_, e)| e).collect();
    assert_eq!(rest, [2, 3, 4]);
}

#[test]
fn pop_until_stops_at_the_limit() {
    let mut q = EventQueue::new();
    q.push(t(5), 'a');
    q.push(t(6), 'b');
    assert_eq!(q.pop_until(t(5)), Some((t(5), 'a')));
    assert_eq!(q.pop_until(t(5)), None);
    assert_eq!(q.len(), 1);
}

#[test]
fn many_random_events_come_out_sorted_by_time_and_insertion() {
    let mut rng = Rng::stream(42, "engine-test");
    let mut q = EventQueue::new();
    let mut expected = Vec::new();
    for i in 0..20_000u64 {
        let time = rng.next_u64() % 300; // many ties
        q.push(t(time), i);
        expected.push((time, i));
    }
    expected.sort();
    let got: Vec<(u64, u64)> = std::iter::from_fn(|| q.pop())
        .map(|(time, i)| (time.as_nanos(), i))
        .collect();
    assert_eq!(got, expected);
}

#[test]
fn timer_events_interleave_with_others_by_time_then_fifo() {
    // Timers live in a second heap; the order must be that of one queue.
    let mut rng = Rng::stream(7, "engine-timer-test");
    let mut q = EventQueue::new();
    let mut expected = Vec::new();
    for i in 0..20_000u64 {
        let time = rng.next_u64() % 300; // many ties across the two heaps
        if rng.next_u64().is_multiple_of(3) {
            q.push_timer(t(time), i);
        } else {
            q.push(t(time), i);
        }
        expected.push((time, i));
    }
    assert_eq!(q.len(), 20_000);
    expected.sort();
    let got: Vec<(u64, u64)> = std::iter::from_fn(|| q.pop())
        .map(|(time, i)| (time.as_nanos(), i))
        .collect();
    assert_eq!(got, expected);
    assert_eq!(q.processed(), 20_000);
    assert_eq!(q.peak_len(), 20_000);
}

#[test]
fn pop_until_sees_a_due_timer_before_a_later_event() {
    let mut q = EventQueue::new();
    q.push(t(8), 'n');
    q.push_timer(t(5), 't');
    q.push_timer(t(8), 'u'); // same time as 'n', scheduled later: runs after it
    assert_eq!(q.peek_time(), Some(t(5)));
    assert_eq!(q.pop_until(t(4)), None);
    assert_eq!(q.pop_until(t(8)), Some((t(5), 't')));
    assert_eq!(q.pop_until(t(8)), Some((t(8), 'n')));
    assert_eq!(q.pop_until(t(8)), Some((t(8), 'u')));
    assert!(q.is_empty());
}

#[test]
fn an_event_scheduled_before_a_peeked_one_still_comes_first() {
    // pop_until finds the next event (9) and stops; an event scheduled earlier than it
    // afterwards (the queue's floor moved to 9) must still come out first, in order.
    // With few events pending (heaps) and with many (radix heap).
    for far in [0, 2 * RADIX_ABOVE] {
        let mut q = EventQueue::new();
        q.push(t(9), 'c');
        q.push(t(20), 'd');
        for _ in 0..far {
            q.push_timer(t(1_000_000), 'z');
        }
        assert_eq!(q.pop_until(t(5)), None);
        q.push(t(7), 'a');
        q.push_timer(t(7), 'b');
        assert_eq!(q.peek_time(), Some(t(7)));
        let order: Vec<char> = std::iter::from_fn(|| q.pop()).map(|(_, e)| e).collect();
        assert_eq!(&order[..4], ['a', 'b', 'c', 'd']);
        assert_eq!(order.len(), 4 + far);
    }
}

#[test]
fn events_scheduled_while_running_come_out_in_order() {
    // The simulator's pattern: pop, then schedule at or after the popped time; the
    // pending events grow past RADIX_ABOVE on the way.
    let mut rng = Rng::stream(3, "engine-running-test");
    let mut q = EventQueue::new();
    let mut expected = Vec::new();
    let mut i = 0u64;
    for _ in 0..100 {
        let time = rng.next_u64() % 1_000;
        q.push(t(time), i);
        expected.push((time, i));
        i += 1;
    }
    let mut got = Vec::new();
    while let Some((now, e)) = q.pop() {
        got.push((now.as_nanos(), e));
        if i < 40_000 {
            for _ in 0..2 {
                // Mostly soon, sometimes far ahead, sometimes now.
                let ahead = match rng.next_u64() % 4 {
                    0 => 0,
                    1 => rng.next_u64() % 10,
                    2 => rng.next_u64() % 10_000,
                    _ => rng.next_u64() % 1_000_000_000,
                };
                let time = now.as_nanos() + ahead;
                q.push(t(time), i);
                expected.push((time, i));
                i += 1;
            }
        }
    }
    expected.sort();
    assert_eq!(got, expected);
}
