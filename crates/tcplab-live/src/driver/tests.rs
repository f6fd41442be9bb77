//! The emulator over datagram socket pairs standing for its hosts' devices: hop by hop
//! timing, offloads, kernel answers, overflows, queue rows, captures, pinned routes, 802.11b.

use super::*;
use crate::vnet;
use std::io::{Read, Write};
use std::os::fd::{FromRawFd, OwnedFd};
use tcplab_sim::packet::DropCause;
use tcplab_sim::Scenario;

/// A 2-pair dumbbell: access 100 Mb/s, 1 ms; bottleneck 10 Mb/s, 5 ms, `buffer` packets.
fn dumbbell(buffer: u32) -> Plan {
    let dir = |rate: u64, ms: u64, b: u32| serde_json::json!({"rate": rate, "delay": ms * 1_000_000, "buffer": {"packets": b}});
    let duplex =
        |rate, ms, b| serde_json::json!({"forward": dir(rate, ms, b), "reverse": dir(rate, ms, b)});
    let s: Scenario = serde_json::from_value(serde_json::json!({
        "name": "t", "seed": 1, "duration": 1_000_000_000u64,
        "topology": {"kind": "dumbbell", "pairs": 2,
            "bottleneck": duplex(10_000_000, 5, buffer),
            "sender_access": [duplex(100_000_000, 1, 1000)],
            "receiver_access": [duplex(100_000_000, 1, 1000)]},
        "udp": [{"src": "s0", "dst": "r0", "rate": 1_000_000, "packet_size": 1000}],
    }))
    .unwrap();
    Plan::from_scenario(&s).unwrap()
}

/// The emulator over datagram socket pairs instead of TUN devices (one packet per read
/// and write, as a TUN device); the other ends are returned by host.
fn emulator(plan: Plan) -> (Emulator, Vec<File>) {
    let (mut ours, mut theirs) = (Vec::new(), Vec::new());
    for _ in &plan.hosts {
        let mut fds = [0; 2];
        // SAFETY: fds is a valid array of two ints.
        let rc = unsafe {
            libc::socketpair(
                libc::AF_UNIX,
                libc::SOCK_DGRAM | libc::SOCK_NONBLOCK,
                0,
                fds.as_mut_ptr(),
            )
        };
        assert_eq!(rc, 0);
        // SAFETY: both descriptors were just created and are owned by nobody else.
        let (a, b) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
        ours.push(File::from(a));
        theirs.push(File::from(b));
    }
    (Emulator::new(plan, ours, Clock::start()).unwrap(), theirs)
}

fn ipv4(src: Ipv4Addr, dst: Ipv4Addr, len: usize, id: u16) -> Vec<u8> {
    let mut p = vec![0u8; len];
    p[0] = 0x45;
    p[2..4].copy_from_slice(&(len as u16).to_be_bytes());
    p[4..6].copy_from_slice(&id.to_be_bytes());
    p[9] = 17;
    p[12..16].copy_from_slice(&src.octets());
    p[16..20].copy_from_slice(&dst.octets());
    p
}

/// A host whose device has offloads: one read of a 3-segment TCP super-packet is offered
/// as its 3 segments, stamped alike; at the far host (offloads too) each is written
/// alone behind an empty offload header.
#[test]
fn a_super_packet_is_offered_segment_by_segment_and_written_one_by_one() {
    let (mut emu, hosts) = emulator(dumbbell(50));
    emu.hosts[0].vnet = true;
    emu.hosts[2].vnet = true;
    let (s0, r0) = (emu.plan.hosts[0].addr, emu.plan.hosts[2].addr);
    let mss = 1000usize;
    let mut p = ipv4(s0, r0, 40 + 2 * mss + 500, 7);
    p[9] = 6;
    p[20 + 4..20 + 8].copy_from_slice(&1000u32.to_be_bytes());
    p[20 + 12] = 5 << 4;
    p[20 + 13] = 0x18; // PSH ACK
    let mut raw = vec![1u8, 1]; // NEEDS_CSUM, TCPV4
    for v in [40u16, mss as u16, 20, 16] {
        raw.extend_from_slice(&v.to_ne_bytes());
    }
    raw.extend_from_slice(&p);
    (&hosts[0]).write_all(&raw).unwrap();
    let mut buf = vec![0u8; MAX_PACKET];
    emu.read_all(0, &mut buf, None).unwrap();
    let h = &emu.hosts[0];
    assert_eq!((h.sent, h.super_packets, h.segments), (3, 1, 3));
    let stamps: Vec<Time> = emu.arrivals.iter().map(|a| a.0).collect();
    assert!(stamps.iter().all(|&t| t == stamps[0]), "{stamps:?}");
    let lens: Vec<usize> = emu.arrivals.iter().map(|a| a.2.bytes.len()).collect();
    assert_eq!(lens, [1040, 1040, 540]);
    emu.process(stamps[0] + tcplab_core::Dur::from_secs(1));
    assert_eq!(emu.hosts[2].delivered, 3);
    for (i, len) in lens.into_iter().enumerate() {
        let n = (&hosts[2]).read(&mut buf).unwrap();
        assert_eq!(n, vnet::HDR + len);
        assert_eq!(buf[..vnet::HDR], vnet::EMPTY);
        let seq = u32::from_be_bytes(buf[vnet::HDR + 24..vnet::HDR + 28].try_into().unwrap());
        assert_eq!(seq as usize, 1000 + i * mss);
    }
}

#[test]
fn a_packet_crosses_every_hop_at_its_modelled_time() {
    let (mut emu, hosts) = emulator(dumbbell(50));
    let (s0, r0) = (emu.plan.hosts[0].addr, emu.plan.hosts[2].addr);
    let p = ipv4(s0, r0, 1000, 1);
    let node = emu.plan.hosts[2].node;
    emu.arrivals.push_back((
        Time::ZERO,
        0,
        Packet {
            dst: node,
            flow: None,
            ect: false,
            modelled: true,
            bytes: p.clone(),
        },
    ));
    // Each hop: transmission (80 µs at 100 Mb/s, 800 µs at 10 Mb/s) and propagation.
    let arrival = Time::from_nanos(1_080_000 + 5_800_000 + 1_080_000);
    emu.process(Time::from_nanos(arrival.as_nanos() - 1));
    assert_eq!(emu.hosts[2].delivered, 0);
    let offered: Vec<u64> = emu.dirs.iter().map(|d| d.offered).collect();
    assert_eq!(offered, [1, 0, 0, 0, 1, 0, 1, 0, 0, 0]); // the forward hops of s0 -> r0
    emu.process(arrival);
    assert_eq!(emu.hosts[2].delivered, 1);
    let mut buf = [0u8; 2000];
    let n = (&hosts[2]).read(&mut buf).unwrap();
    assert_eq!(&buf[..n], &p[..]);
}

/// r0 answers s0's packet inside the write that delivers it (a kernel host): the
/// answer leaves at the delivery's modelled time and reaches s0 one path later, whatever
/// the real clock says; a user-space host's packets wait for the next turn's read.
#[test]
fn a_kernel_hosts_answer_leaves_at_the_modelled_time_of_the_delivery() {
    for kernel in [true, false] {
        let (mut emu, hosts) = emulator(dumbbell(50));
        emu.hosts[2].kernel = kernel;
        let (s0, r0) = (emu.plan.hosts[0].addr, emu.plan.hosts[2].addr);
        (&hosts[2]).write_all(&ipv4(r0, s0, 1000, 2)).unwrap(); // the answer, waiting
        emu.arrivals.push_back((
            Time::ZERO,
            0,
            Packet {
                dst: emu.plan.hosts[2].node,
                flow: None,
                ect: false,
                modelled: true,
                bytes: ipv4(s0, r0, 1000, 1),
            },
        ));
        let path = 1_080_000 + 5_800_000 + 1_080_000;
        emu.process(Time::from_nanos(2 * path - 1));
        assert_eq!(emu.hosts[2].delivered, 1);
        assert_eq!(emu.hosts[0].delivered, 0, "kernel {kernel}");
        emu.process(Time::from_nanos(2 * path));
        let answered = u64::from(kernel);
        assert_eq!(emu.hosts[2].answers, answered);
        assert_eq!(
            (emu.hosts[2].sent, emu.hosts[0].delivered),
            (answered, answered)
        );
    }
}

/// r0 sent a packet that the turn read (stamped with the clock); then a late delivery's
/// answer is read: it is stamped no earlier than that packet, so r0's packets reach the
/// model in the order r0 sent them (a late answer stamped with its delivery's modelled
/// time overtook them, and the kernel saw reordering).
#[test]
fn an_answer_never_overtakes_what_its_host_sent_before() {
    let (mut emu, hosts) = emulator(dumbbell(50));
    emu.hosts[2].kernel = true;
    let (s0, r0) = (emu.plan.hosts[0].addr, emu.plan.hosts[2].addr);
    let mut buf = vec![0; MAX_PACKET];
    (&hosts[2]).write_all(&ipv4(r0, s0, 1000, 1)).unwrap();
    std::thread::sleep(std::time::Duration::from_millis(2));
    emu.read_all(2, &mut buf, None).unwrap();
    let first = emu.arrivals.back().unwrap().0;
    assert!(first >= Time::from_millis(2));
    (&hosts[2]).write_all(&ipv4(r0, s0, 1000, 2)).unwrap(); // the answer, waiting
    emu.write(2, Time::from_millis(1), &ipv4(s0, r0, 1000, 3)); // late: due at 1 ms
    let order: Vec<(Time, u16)> = emu
        .arrivals
        .iter()
        .map(|(t, _, p)| (*t, u16::from_be_bytes([p.bytes[4], p.bytes[5]])))
        .collect();
    assert_eq!(order, [(first, 1), (first, 2)]);
    assert_eq!((emu.hosts[2].answers, emu.hosts[2].answers_behind), (1, 1));
}

/// Five 1000-byte packets from each of s0 and s1 at once (to r0 and r1), processed for
/// 100 ms.
fn burst(emu: &mut Emulator) {
    for (k, (src, dst)) in [(0usize, 2usize), (1, 3)].into_iter().enumerate() {
        let (a, b) = (emu.plan.hosts[src].addr, emu.plan.hosts[dst].addr);
        for i in 0..5u16 {
            let p = ipv4(a, b, 1000, i);
            let node = emu.plan.hosts[dst].node;
            let t = Time::from_nanos(k as u64 * 10_000 + i as u64);
            emu.arrivals.push_back((
                t,
                src,
                Packet {
                    dst: node,
                    flow: None,
                    ect: false,
                    modelled: true,
                    bytes: p,
                },
            ));
        }
    }
    emu.arrivals.make_contiguous().sort_by_key(|a| a.0);
    emu.process(Time::from_nanos(100_000_000));
}

#[test]
fn a_burst_of_both_pairs_overflows_the_bottleneck_only() {
    let mut plan = dumbbell(2);
    plan.queues = QueueSeries::Off;
    let (mut emu, _hosts) = emulator(plan);
    burst(&mut emu);
    assert!(emu.queue_rows.is_empty(), "series off: no queue rows");
    // 10 packets reach `left` 80 µs apart per access link; the bottleneck serves one
    // every 800 µs and holds 2: the first is in service, two wait, the rest overflow.
    let bottleneck = 4; // left-right forward
    assert!(emu
        .drops
        .iter()
        .all(|d| d.dir == bottleneck && d.cause == DropCause::BufferOverflow));
    let delivered = emu.hosts[2].delivered + emu.hosts[3].delivered;
    assert_eq!(delivered as usize + emu.drops.len(), 10);
    assert_eq!(emu.dirs[bottleneck as usize].offered, 10);
    assert!(emu.drops.len() >= 5, "{} drops", emu.drops.len());
}

#[test]
fn queue_rows_on_change_show_a_full_buffer_at_every_overflow() {
    let mut plan = dumbbell(2);
    plan.queues = QueueSeries::Change;
    let (mut emu, _hosts) = emulator(plan);
    burst(&mut emu);
    let bottleneck = 4u32;
    let rows: Vec<&QueueRow> = emu
        .queue_rows
        .iter()
        .filter(|q| q.dir == bottleneck)
        .collect();
    // A row per packet offered (taken or refused) and per packet delivered at the far end.
    let d = &emu.dirs[bottleneck as usize];
    assert_eq!(rows.len() as u64, d.offered + d.delivered);
    assert!(
        rows.windows(2).all(|w| w[0].at <= w[1].at),
        "in model time order"
    );
    let full = rows.iter().map(|q| q.packets).max().unwrap();
    // Never more than the buffer's 2 packets and the one in service.
    assert!(full <= 3, "{full}");
    assert!(rows.iter().all(|q| q.bytes == q.packets as u64 * 1000));
    for d in &emu.drops {
        // The row stated for the dropped packet's offer is the buffer as it refused it.
        let at_drop = rows.iter().rev().find(|q| q.at <= d.at).unwrap();
        assert_eq!(
            at_drop.packets, full,
            "a drop at {:?} with the buffer not full",
            d.at
        );
    }
    // Every hop of the packets' paths states rows; the reverse directions none.
    for (i, dir) in emu.dirs.iter().enumerate() {
        let n = emu.queue_rows.iter().filter(|q| q.dir == i as u32).count() as u64;
        assert!(
            n >= dir.offered,
            "direction {i}: {n} rows, {} offered",
            dir.offered
        );
    }
    assert_eq!(emu.queue_rows_cut, 0);
}

#[test]
fn a_captured_direction_records_every_packet_it_delivers_as_it_is() {
    let mut plan = dumbbell(2);
    plan.pcap = vec![crate::plan::PcapFilePlan {
        name: "left-right.forward".into(),
        link: "left-right".into(),
        dirs: vec![4],
        directions: vec!["forward"],
    }];
    plan.pcap_snaplen = 100;
    let (mut emu, _hosts) = emulator(plan);
    burst(&mut emu);
    let c = &emu.captures[0];
    assert_eq!(c.packets, emu.dirs[4].delivered);
    assert!(c.packets > 0 && c.cut == 0);
    // Global header, then per packet a 16-byte record header and its first 100 bytes.
    let b = &c.bytes;
    assert_eq!(&b[..24], &tcplab_sim::pcap::global_header(100));
    assert_eq!(b.len() as u64, 24 + c.packets * (16 + 100));
    let mut last = 0u64;
    for k in 0..c.packets as usize {
        let r = &b[24 + k * 116..24 + (k + 1) * 116];
        let word = |i: usize| u32::from_le_bytes(r[i..i + 4].try_into().unwrap());
        let t = word(0) as u64 * 1_000_000_000 + word(4) as u64;
        assert!(t >= last, "records in time order");
        last = t;
        assert_eq!((word(8), word(12)), (100, 1000), "kept and original length");
        assert_eq!(r[16], 0x45, "the packet's own IPv4 header");
    }
}

#[test]
fn queue_rows_on_interval_come_every_tick_for_every_direction() {
    let mut plan = dumbbell(2);
    plan.queues = QueueSeries::Interval(1_000_000);
    let (mut emu, _hosts) = emulator(plan);
    burst(&mut emu);
    // Ticks 0, 1, ..., 100 ms (the horizon), 10 directions each.
    assert_eq!(emu.queue_rows.len(), 101 * 10);
    assert!(emu
        .queue_rows
        .iter()
        .enumerate()
        .all(|(k, q)| q.at.as_nanos() == (k as u64 / 10) * 1_000_000 && q.dir == k as u32 % 10));
    // The bottleneck holds the burst for a while (never more than its 2 packets besides
    // the one in service), and nothing at the start or once it has drained.
    let at = |ms: u64| emu.queue_rows[(ms * 10 + 4) as usize];
    let most = (0..=100).map(|ms| at(ms).packets).max().unwrap();
    assert!((1..=3).contains(&most), "{most}");
    assert_eq!((at(0).packets, at(100).packets), (0, 0));
}

#[test]
fn a_packet_of_a_pinned_flow_takes_its_route_and_others_the_tables() {
    let (mut emu, hosts) = emulator(Plan::from_scenario(&crate::plan::tests::detour()).unwrap());
    let addr = |n: &str| emu.plan.hosts.iter().find(|h| h.name == n).unwrap().addr;
    let (a, b) = (addr("a"), addr("b"));
    let udp = |src, dst, sport: u16, dport: u16, id| {
        let mut p = ipv4(src, dst, 500, id);
        p[20..22].copy_from_slice(&sport.to_be_bytes());
        p[22..24].copy_from_slice(&dport.to_be_bytes());
        p
    };
    // Host a (0): UDP flow 0's datagram (pinned), UDP flow 1's (not), TCP flow 0's data
    // (pinned, tcplab's transport is UDP on the flow's port); host b (1): flow 0's ACK.
    for (k, p) in [
        (0, udp(a, b, 40000, 5402, 1)),
        (0, udp(a, b, 40000, 5403, 2)),
        (0, udp(a, b, 5400, 5400, 3)),
        (1, udp(b, a, 5400, 5400, 4)),
    ] {
        (&hosts[k]).write_all(&p).unwrap();
    }
    let mut buf = vec![0u8; MAX_PACKET];
    for k in 0..2 {
        emu.read_all(k, &mut buf, None).unwrap();
    }
    let t = emu.arrivals.back().unwrap().0;
    emu.process(t + tcplab_core::Dur::from_secs(1));
    let offered = |label: &str| {
        let i = emu
            .plan
            .dirs
            .iter()
            .position(|d| d.label() == label)
            .unwrap();
        emu.dirs[i].offered
    };
    // Two data packets through the detour, one direct; the ACK back through the detour.
    assert_eq!(offered("a-r1/forward"), 3);
    assert_eq!(offered("r1-r3/forward"), 2);
    assert_eq!(offered("r3-r2/forward"), 2);
    assert_eq!(offered("r1-r2/forward"), 1);
    assert_eq!(offered("r2-b/forward"), 3);
    assert_eq!(offered("r3-r2/reverse"), 1);
    assert_eq!(offered("r1-r3/reverse"), 1);
    assert_eq!(offered("r1-r2/reverse"), 0);
    assert_eq!((emu.hosts[1].delivered, emu.hosts[0].delivered), (3, 1));
}

#[test]
fn a_wlan_hop_delivers_through_the_simulators_mac_and_logs_its_drops() {
    use tcplab_sim::scenario::{ChannelPreset, PipePreset};
    let topo = tcplab_sim::builder::wlan_access(PipePreset::Fat, &[ChannelPreset::HL]);
    let s = tcplab_sim::builder::ScenarioBuilder::new("w", topo).build();
    let (mut emu, _hosts) = emulator(Plan::from_scenario(&s).unwrap());
    let host = |n: &str| emu.plan.hosts.iter().position(|h| h.name == n).unwrap();
    let (sv, sta) = (host("server"), host("sta0"));
    let (a, b) = (emu.plan.hosts[sv].addr, emu.plan.hosts[sta].addr);
    let dst = emu.plan.hosts[sta].node;
    // 400 packets of 1500 bytes at 10 Mb/s into a ~5 Mb/s medium: the AP's MAC queue
    // overflows; frames to the HL station exhaust their retries now and then.
    for i in 0..400u16 {
        let p = ipv4(a, b, 1500, i);
        let t = Time::from_nanos(i as u64 * 1_200_000);
        let pkt = Packet {
            dst,
            flow: None,
            ect: false,
            modelled: true,
            bytes: p,
        };
        emu.arrivals.push_back((t, sv, pkt));
    }
    emu.process(Time::from_nanos(10_000_000_000));
    let down = emu.plan.dirs.len() as u32; // wlan0:ap-sta0 forward
    let seg = &emu.segments[0];
    assert_eq!(seg.first, down);
    let mac = |c| {
        emu.drops
            .iter()
            .filter(|d| d.cause == c && d.dir == down)
            .count()
    };
    let overflow = mac(DropCause::BufferOverflow);
    assert!(overflow > 0, "no overflow at the AP");
    assert!(
        emu.drops.iter().all(|d| d.dir == down),
        "drops off the WLAN hop"
    );
    // Nobody reads the far socket: writes beyond its buffer fail (outside the model).
    let written = emu.hosts[sta].delivered + emu.hosts[sta].write_errors;
    assert_eq!(
        written as usize + emu.drops.len(),
        400,
        "every packet delivered or logged"
    );
    assert_eq!(seg.delivered[0], written);
    let st = seg.wlan.hop_stats(0);
    assert_eq!(
        st.drops[DropCause::Mac as usize] as usize,
        mac(DropCause::Mac)
    );
    assert_eq!(
        st.drops[DropCause::BufferOverflow as usize] as usize,
        overflow
    );
}
