//! RACK-TLP for SCTP (`Config::rack`, RFC 8985 adapted, with the I bit of
//! RFC 7053) through the pair harness: time-based loss detection, its
//! reordering window and timer, and the tail loss probe at SRTT + margin.

mod harness;

use std::time::Duration;

use brisk_proto::{Config, Event, OutgoingMessage, RetransmitCause, Stats, Time};
use harness::{Dir, Fate, Pair, ms};

/// Connected over `one_way` each way, B as given, past the first DATA
/// (SACKed at once, RFC 9260 5.1), and one more message acknowledged at
/// once (the I bit) for an RTT sample.
fn connected(one_way: Duration, a_cfg: Config, b_cfg: Config) -> Pair {
    let mut p = Pair::new(one_way, b_cfg);
    p.connect(a_cfg);
    p.warm_up();
    p.a_send(OutgoingMessage::new(0, vec![0; 10]).immediate_sack(true));
    p.run_for(ms(500));
    p.b_recv_all();
    p
}

fn rack(mut c: Config) -> Config {
    c.rack = true;
    c
}

fn stats(p: &mut Pair) -> Stats {
    let a = p.a_id.unwrap();
    p.a.association(a).unwrap().stats().clone()
}

fn causes(p: &Pair) -> Vec<(Time, u32, RetransmitCause)> {
    p.a_retransmissions()
}

/// The next DATA packet A sends will be the `k`-th (1-based) from now.
fn data_ordinal(p: &Pair, k: u64) -> u64 {
    p.data_packets(Dir::AtoB).len() as u64 + k
}

/// Sends `n` 200-byte messages 1 ms apart (a packet each); returns when
/// the first left.
fn burst(p: &mut Pair, n: u64) -> Time {
    let t0 = p.now;
    for i in 0..n {
        p.a_send(OutgoingMessage::new(0, vec![i as u8; 200]));
        p.run_for(ms(1));
    }
    t0
}

/// The I bit (RFC 7053) of each DATA chunk of a packet, in order.
fn data_i_bits(packet: &[u8]) -> Vec<bool> {
    let mut out = Vec::new();
    let mut at = 12;
    while at + 4 <= packet.len() {
        let len = usize::from(u16::from_be_bytes([packet[at + 2], packet[at + 3]]));
        if packet[at] == 0 {
            out.push(packet[at + 1] & 0x08 != 0);
        }
        at += len.max(4).div_ceil(4) * 4;
    }
    out
}

/// When B last had a message ready.
fn last_delivery(p: &Pair) -> Time {
    p.b_events
        .iter()
        .rev()
        .find(|(_, _, e)| *e == Event::MessageReady)
        .map(|(t, _, _)| *t)
        .unwrap()
}

#[test]
fn rack_retransmits_a_chunk_when_a_later_one_was_acked_and_min_rtt_over_4_passed() {
    // 10 ms one way: min_RTT 20 ms, reo_wnd 5 ms. Two packets, the first
    // lost: too few for three miss indications, so without RACK T3 repairs.
    for on in [true, false] {
        let cfg = Config {
            rack: on,
            ..Config::rfc9260()
        };
        let mut p = connected(ms(10), cfg, Config::rfc9260());
        p.drop_data_packet(Dir::AtoB, data_ordinal(&p, 1));
        let t0 = burst(&mut p, 2);
        p.run_for(ms(3000));
        let rtx = causes(&p);
        assert_eq!(rtx.len(), 1, "{rtx:?}");
        if on {
            // The SACK for the second (sent at t0 + 1) is back at t0 + 21; the
            // first is due at t0 + RACK.rtt 20 + reo_wnd 5: the reordering timer.
            assert_eq!(
                (rtx[0].0, rtx[0].2),
                (t0 + ms(25), RetransmitCause::FastRetransmit)
            );
            assert_eq!(stats(&mut p).rack_losses, 1);
            assert_eq!(stats(&mut p).fast_recoveries, 1);
        } else {
            assert_eq!(rtx[0].2, RetransmitCause::T3Timeout);
            assert_eq!(stats(&mut p).rack_losses, 0);
        }
        assert_eq!(p.b_recv_all().len(), 2);
    }
}

#[test]
fn a_reordered_chunk_within_reo_wnd_is_not_retransmitted() {
    let mut p = connected(ms(10), rack(Config::rfc9260()), Config::rfc9260());
    // The first packet arrives 3 ms late, after the second: the SACK for
    // the second at t0 + 21 leaves it 4 ms of its 5 ms window, and its own
    // SACK is back at t0 + 23.
    let first = data_ordinal(&p, 1);
    p.rule(move |s| {
        (s.dir == Dir::AtoB && s.data_ordinal == Some(first)).then_some(Fate::Delay(ms(3)))
    });
    burst(&mut p, 2);
    p.run_for(ms(3000));
    assert!(causes(&p).is_empty(), "{:?}", causes(&p));
    assert_eq!(stats(&mut p).rack_losses, 0);
    assert_eq!(p.b_recv_all().len(), 2);
}

#[test]
fn a_duplicate_report_of_a_spurious_retransmission_widens_reo_wnd() {
    let mut p = connected(ms(10), rack(Config::rfc9260()), Config::rfc9260());
    // Reordered by 8 ms, beyond the 5 ms window: the first time RACK
    // retransmits, and B reports the copy a duplicate (our DSACK).
    // The first packet of each burst (the retransmission is the third).
    let delayed = [data_ordinal(&p, 1), data_ordinal(&p, 4)];
    p.rule(move |s| {
        (s.dir == Dir::AtoB && s.data_ordinal.is_some_and(|o| delayed.contains(&o)))
            .then_some(Fate::Delay(ms(8)))
    });
    burst(&mut p, 2);
    p.run_for(ms(1000));
    assert_eq!(causes(&p).len(), 1, "{:?}", causes(&p));
    assert_eq!(stats(&mut p).rack_losses, 1);
    // The same reordering again: reo_wnd is now 2 min_RTT/4 = 10 ms (and
    // reordering was seen): no retransmission.
    burst(&mut p, 2);
    p.run_for(ms(1000));
    assert_eq!(causes(&p).len(), 1, "{:?}", causes(&p));
    assert_eq!(p.b_recv_all().len(), 4);
}

#[test]
fn rack_finds_a_lost_retransmission_by_time_and_counts_it_once() {
    // RFC 9260 7.2.4 fast-retransmits a chunk once; its lost retransmission
    // waits for T3. RACK sees it lost when data sent after it arrives. With
    // lost_retransmission_detection on as well, no chunk is marked twice.
    for lrd in [false, true] {
        let cfg = Config {
            rack: true,
            lost_retransmission_detection: lrd,
            ..Config::rfc9260()
        };
        let mut p = connected(ms(10), cfg, Config::rfc9260());
        let first = data_ordinal(&p, 1);
        // The first packet and the first retransmission (the third DATA
        // packet) are lost.
        p.rule(move |s| {
            (s.dir == Dir::AtoB
                && (s.data_ordinal == Some(first) || s.data_ordinal == Some(first + 2)))
            .then_some(Fate::Drop)
        });
        let t0 = burst(&mut p, 2);
        // After the retransmission (t0 + 25), one more message.
        p.run_for(t0 + ms(30) - p.now);
        p.a_send(OutgoingMessage::new(0, vec![9; 200]));
        p.run_for(ms(3000));
        let rtx = causes(&p);
        assert_eq!(rtx.len(), 2, "lrd {lrd}: {rtx:?}");
        assert!(
            rtx.iter()
                .all(|r| r.2 == RetransmitCause::FastRetransmit && r.1 == rtx[0].1)
        );
        // The new message's SACK at t0 + 50 shows the copy sent at t0 + 25
        // lost: in recovery the window is zero.
        assert_eq!(rtx[1].0, t0 + ms(50), "lrd {lrd}");
        let s = stats(&mut p);
        assert_eq!(s.t3_expirations, 0);
        assert_eq!(s.rack_losses, 2, "lrd {lrd}");
        assert_eq!(s.retransmissions(RetransmitCause::FastRetransmit), 2);
        assert_eq!(s.fast_recoveries, 1, "one episode, one reduction");
        assert_eq!(p.b_recv_all().len(), 3);
    }
}

/// Seed 000 Fig. 2's shape: bursts of four 200-byte messages 200 ms apart,
/// 15 ms one way, the 4th of the third burst lost; B a standard receiver
/// (200 ms delayed SACK, honours the I bit). Returns the 4th's latency, how
/// it was recovered, and A's stats.
fn fig2_tail(a_cfg: Config) -> (Duration, Vec<RetransmitCause>, Stats) {
    let mut p = connected(ms(15), a_cfg, Config::rfc9260());
    let mut sent_4th = Time::ZERO;
    for b in 0..5u64 {
        if b == 2 {
            p.drop_data_packet(Dir::AtoB, data_ordinal(&p, 4));
        }
        let t0 = burst(&mut p, 4);
        if b == 2 {
            sent_4th = t0 + ms(3);
            p.run_for(ms(600));
            let latency = last_delivery(&p).since(sent_4th);
            // Redundant bundling's copies aside.
            let rtx = causes(&p)
                .iter()
                .map(|r| r.2)
                .filter(|c| *c != RetransmitCause::Bundled)
                .collect();
            return (latency, rtx, stats(&mut p));
        }
        p.run_for(t0 + ms(200) - p.now);
    }
    unreachable!("{sent_4th}")
}

#[test]
fn with_rack_tlp_the_lost_tail_of_a_burst_is_recovered_in_about_two_rtt_not_at_t3() {
    let (latency, rtx, s) = fig2_tail(rack(Config::low_latency()));
    // The probe is due a PTO (SRTT 30 + 7.5 ms) after the 4th left, not
    // after the SACK of the 3rd (back 29 ms after the 4th left), and takes
    // 15 ms to B: 37.5 + 15 = 52.5 ms, under half usrsctp's 113 ms.
    assert_eq!(rtx, vec![RetransmitCause::TailLossProbe], "{rtx:?}");
    assert_eq!(latency, Duration::from_micros(52_500));
    assert_eq!(s.t3_expirations, 0);
    // RFC 8985 7.4: the probe repaired a loss: one congestion response.
    assert_eq!(s.fast_recoveries, 1);
    // Without RACK-TLP, low-latency's older probe (2 SRTT + the 200 ms
    // delayed-SACK allowance) loses to T3 at the thin RTO.Min of 200 ms.
    let (latency, rtx, s) = fig2_tail(Config {
        rack: false,
        ..Config::low_latency()
    });
    assert_eq!(rtx, vec![RetransmitCause::T3Timeout], "{rtx:?}");
    assert!(latency > ms(200), "{latency:?}");
    assert_eq!(s.t3_expirations, 1);
}

#[test]
fn rack_tlp_sets_the_i_bit_on_the_last_packet_before_idle_and_on_the_probe() {
    let mut p = connected(ms(15), rack(Config::rfc9260()), Config::rfc9260());
    p.drop_data_packet(Dir::AtoB, data_ordinal(&p, 2));
    // Two messages queued at once go in one packet; then one more.
    p.a_send(OutgoingMessage::new(0, vec![1; 200]));
    p.a_send(OutgoingMessage::new(0, vec![2; 200]));
    p.run_for(ms(1));
    p.a_send(OutgoingMessage::new(0, vec![3; 200]));
    p.run_for(ms(1000));
    let i_bits: Vec<Vec<bool>> = p.data_packets(Dir::AtoB)[1..]
        .iter()
        .map(|l| data_i_bits(&l.seen.bytes))
        .collect();
    // Packet 1: the I bit on its last chunk, after which the queue ran dry;
    // packet 2 (lost) likewise; then the probe.
    assert_eq!(
        i_bits,
        vec![vec![false, true], vec![true], vec![true]],
        "{:?}",
        causes(&p)
    );
    assert_eq!(
        causes(&p).iter().map(|r| r.2).collect::<Vec<_>>(),
        vec![RetransmitCause::TailLossProbe]
    );
}

/// Bursts of three 200-byte messages 500 ms apart, 10 ms one way, to B as
/// given (200 ms delayed SACK): the first two draw an immediate SACK (every
/// second packet), the third is alone. Returns the probes sent per burst.
fn probes_per_burst(b_cfg: Config) -> Vec<usize> {
    let mut p = connected(ms(10), rack(Config::rfc9260()), b_cfg);
    let mut per_burst = Vec::new();
    for _ in 0..6 {
        let before = causes(&p).len();
        let t0 = burst(&mut p, 3);
        p.run_for(t0 + ms(500) - p.now);
        let rtx = causes(&p);
        assert!(
            rtx.iter().all(|r| r.2 == RetransmitCause::TailLossProbe),
            "{rtx:?}"
        );
        per_burst.push(rtx.len() - before);
    }
    assert_eq!(p.b_recv_all().len(), 18);
    per_burst
}

#[test]
fn a_peer_that_ignores_the_i_bit_gets_the_delayed_sack_allowance_and_one_that_honours_it_does_not()
{
    // Honoured: the third packet's SACK is back a round trip later, before
    // the PTO (SRTT + 5 ms): no probe.
    assert_eq!(probes_per_burst(Config::rfc9260()), vec![0; 6]);
    // Ignored (a receiver older than RFC 7053): the SACK of a lone packet
    // waits 200 ms. The warm-up message's came late, and the first burst's
    // probe is needless (B reports it a duplicate): two late answers in a
    // row, and from then on the PTO allows for the delayed SACK.
    let ignoring = Config {
        honor_i_bit: false,
        ..Config::rfc9260()
    };
    assert_eq!(probes_per_burst(ignoring), vec![1, 0, 0, 0, 0, 0]);
}

#[test]
fn a_probe_reveals_an_earlier_loss_that_rack_repairs_without_t3() {
    let mut p = connected(ms(10), rack(Config::rfc9260()), Config::rfc9260());
    // The last two of three packets lost: only the first is SACKed.
    let (second, third) = (data_ordinal(&p, 2), data_ordinal(&p, 3));
    p.rule(move |s| {
        (s.dir == Dir::AtoB && (s.data_ordinal == Some(second) || s.data_ordinal == Some(third)))
            .then_some(Fate::Drop)
    });
    burst(&mut p, 3);
    p.run_for(ms(3000));
    let rtx: Vec<RetransmitCause> = causes(&p).iter().map(|r| r.2).collect();
    assert_eq!(
        rtx,
        vec![
            RetransmitCause::TailLossProbe,
            RetransmitCause::FastRetransmit
        ]
    );
    let (probe, repair) = (causes(&p)[0], causes(&p)[1]);
    assert_eq!(repair.1 + 1, probe.1, "the probe was the highest chunk");
    let s = stats(&mut p);
    assert_eq!(
        (s.t3_expirations, s.rack_losses, s.fast_recoveries),
        (0, 1, 1)
    );
    assert_eq!(p.b_recv_all().len(), 3);
}

#[test]
fn one_probe_then_t3_and_the_probe_itself_leaves_cwnd_alone() {
    let mut p = connected(ms(10), rack(Config::rfc9260()), Config::rfc9260());
    let cwnd = stats(&mut p).cwnd;
    // Everything lost from here: the probe goes once (RFC 8985 7.3), its
    // loss leaves recovery to T3, which comes after it.
    p.rule(|s| (s.dir == Dir::AtoB && s.has_data()).then_some(Fate::Drop));
    burst(&mut p, 2);
    p.run_for(ms(500));
    let rtx: Vec<RetransmitCause> = causes(&p).iter().map(|r| r.2).collect();
    assert_eq!(rtx, vec![RetransmitCause::TailLossProbe]);
    assert_eq!(stats(&mut p).cwnd, cwnd, "no reduction for the probe");
    p.run_for(ms(1000));
    let rtx: Vec<RetransmitCause> = causes(&p).iter().map(|r| r.2).collect();
    assert_eq!(rtx[0], RetransmitCause::TailLossProbe);
    assert!(
        rtx[1..].iter().all(|c| *c == RetransmitCause::T3Timeout),
        "{rtx:?}"
    );
    assert_eq!(stats(&mut p).t3_expirations, 1);
}
