//! Stream reconfiguration (RFC 6525) with message interleaving (RFC 8260)
//! negotiated on both ends: after a reset the stream's MIDs, ordered and
//! unordered, restart at 0, and the receiver's ordering by MID and its
//! reassembly by (stream, U, MID) follow. Pair harness, 10 ms one way.

mod harness;

use std::time::Duration;

use brisk_proto::wire::chunk::{
    DataFlags, IData, IForwardTsn, PpidOrFsn, ReConfig, ReconfigParam, ReconfigResult,
};
use brisk_proto::wire::{Chunk, Packet};
use brisk_proto::{Config, Event, OutgoingMessage, ResetDirection};
use harness::{Dir, Pair, ms};

/// RE-CONFIG and I-DATA on both ends, room for a 64 KiB message.
fn cfg() -> Config {
    Config {
        stream_reconfig: true,
        message_interleaving: true,
        receive_buffer: 1 << 20,
        ..Config::rfc9260()
    }
}

fn connected(a: Config, b: Config) -> Pair {
    let mut p = Pair::new(ms(10), b);
    p.connect(a);
    p.run_for(ms(1000) - Duration::from_micros(p.now.as_micros()));
    assert!(a_assoc(&mut p).stream_reconfig() && a_assoc(&mut p).message_interleaving());
    assert!(b_assoc(&mut p).stream_reconfig() && b_assoc(&mut p).message_interleaving());
    p
}

fn a_assoc(p: &mut Pair) -> &mut brisk_proto::Association {
    let id = p.a_id.expect("connected");
    p.a.association(id).expect("association")
}

fn b_assoc(p: &mut Pair) -> &mut brisk_proto::Association {
    let id = p.b_id.expect("accepted");
    p.b.association(id).expect("association")
}

/// Every chunk sent in `dir` with when it was sent (ms), decoded.
fn chunks(p: &Pair, dir: Dir) -> Vec<(u64, Chunk<'_>)> {
    p.log
        .iter()
        .filter(|l| l.seen.dir == dir)
        .filter_map(|l| {
            let at = l.seen.sent_at.as_micros() / 1000;
            Packet::decode(&l.seen.bytes)
                .ok()
                .map(|pk| pk.chunks.into_iter().map(move |c| (at, c)))
        })
        .flatten()
        .collect()
}

/// The first I-DATA chunk (B bit) of every message sent in `dir`, first
/// transmission only: (sent at ms, TSN, stream, U, MID, first payload byte).
fn first_fragments(p: &Pair, dir: Dir) -> Vec<(u64, u32, u16, bool, u32, u8)> {
    let mut out: Vec<(u64, u32, u16, bool, u32, u8)> = Vec::new();
    for (at, c) in chunks(p, dir) {
        if let Chunk::IData(d) = c
            && d.flags.beginning
            && !out.iter().any(|o| o.1 == d.tsn)
        {
            out.push((
                at,
                d.tsn,
                d.stream_id,
                d.flags.unordered,
                d.mid,
                d.payload[0],
            ));
        }
    }
    out
}

fn responses(p: &Pair, dir: Dir) -> Vec<(u32, ReconfigResult)> {
    let mut out: Vec<(u32, ReconfigResult)> = chunks(p, dir)
        .into_iter()
        .filter_map(|(_, c)| match c {
            Chunk::ReConfig(r) => Some(r.params),
            _ => None,
        })
        .flatten()
        .filter_map(|r| match r {
            ReconfigParam::Response {
                response_seq,
                result,
                ..
            } => Some((response_seq, result)),
            _ => None,
        })
        .collect();
    out.dedup();
    out
}

/// The reconfiguration events of one side: (ms, event).
fn events(log: &[(brisk_proto::Time, brisk_proto::AssocId, Event)]) -> Vec<(u64, Event)> {
    log.iter()
        .filter(|(_, _, e)| {
            matches!(
                e,
                Event::StreamsReset { .. }
                    | Event::StreamResetFailed { .. }
                    | Event::StreamsAdded { .. }
                    | Event::StreamsAddFailed { .. }
                    | Event::AssociationReset
                    | Event::AssociationResetFailed { .. }
                    | Event::Closed(_)
            )
        })
        .map(|(t, _, e)| (t.as_micros() / 1000, e.clone()))
        .collect()
}

/// B's messages: (stream, U, low 16 bits of the MID, first byte, length).
fn b_got(p: &mut Pair) -> Vec<(u16, bool, u16, u8, usize)> {
    p.b_recv_all()
        .iter()
        .map(|m| {
            (
                m.stream_id,
                m.unordered,
                m.ssn,
                m.payload[0],
                m.payload.len(),
            )
        })
        .collect()
}

fn msg(stream: u16, tag: u8, len: usize) -> OutgoingMessage {
    OutgoingMessage::new(stream, vec![tag; len])
}

#[test]
fn a_reset_with_an_interleaved_message_missing_a_chunk_is_deferred_then_the_next_has_mid_0() {
    let mut p = connected(cfg(), cfg());
    // Stream 1: a 20 kB message (MID 0) and a small one (MID 1); stream 2
    // interleaves with it. The packet with the large message's last
    // fragment is lost (once), so B misses a TSN before the request's.
    let mut lost = false;
    p.rule(move |seen| {
        let Ok(packet) = Packet::decode(&seen.bytes) else {
            return None;
        };
        let last_of_big = packet.chunks.iter().any(|c| {
            matches!(c, Chunk::IData(d) if d.stream_id == 1 && d.mid == 0 && d.flags.ending
                && d.payload.len() > 100)
        });
        (seen.dir == Dir::AtoB && last_of_big && !std::mem::replace(&mut lost, true))
            .then_some(harness::Fate::Drop)
    });
    p.a_send(msg(1, 1, 20_000));
    p.a_send(msg(2, 2, 3_000));
    p.a_send(msg(1, 3, 100));
    p.a_send(msg(2, 4, 3_000));
    let now = p.now;
    a_assoc(&mut p).reset_streams(now, &[1]).unwrap();
    // Sent after the call: waits for the reset, then goes with MID 0.
    p.a_send(msg(1, 5, 100));
    p.a_send(OutgoingMessage::new(1, vec![6; 100]).unordered(true));
    p.run_for(ms(5000));

    // The fragments of stream 1 and 2 interleave on the wire.
    let idata: Vec<u16> = chunks(&p, Dir::AtoB)
        .into_iter()
        .filter_map(|(_, c)| match c {
            Chunk::IData(d) => Some(d.stream_id),
            _ => None,
        })
        .collect();
    let first_2 = idata.iter().position(|&s| s == 2).unwrap();
    assert!(idata[first_2..].contains(&1), "no interleaving: {idata:?}");

    // A's request names stream 1 and the last TSN it assigned before.
    let request = chunks(&p, Dir::AtoB)
        .into_iter()
        .find_map(|(at, c)| match c {
            Chunk::ReConfig(ReConfig { params }) => match &params[0] {
                ReconfigParam::OutgoingSsnReset {
                    request_seq,
                    last_tsn,
                    streams,
                    ..
                } => Some((at, *request_seq, *last_tsn, streams.clone())),
                _ => None,
            },
            _ => None,
        })
        .expect("a reset request");
    let (asked_at, seq, last_tsn, streams) = request;
    assert_eq!(streams, vec![1]);
    // B: "In progress" (a fragment before the request's TSN is missing),
    // then "Success - Performed" once its retransmission arrived.
    assert_eq!(
        responses(&p, Dir::BtoA),
        vec![
            (seq, ReconfigResult::InProgress),
            (seq, ReconfigResult::SuccessPerformed)
        ]
    );
    let reset_at = match &events(&p.a_events)[..] {
        [
            (
                t,
                Event::StreamsReset {
                    direction: ResetDirection::Outgoing,
                    streams,
                },
            ),
        ] if streams == &[1] => *t,
        other => panic!("A's events: {other:?}"),
    };
    assert!(matches!(
        &events(&p.b_events)[..],
        [(_, Event::StreamsReset { direction: ResetDirection::Incoming, streams })]
            if streams == &[1]
    ));
    // On the wire: MIDs 0 and 1 on stream 1 before the request, at or
    // below its TSN; after the reset, the next message has MID 0 and so has
    // the next unordered one (RFC 8260: both counters restart).
    let firsts = first_fragments(&p, Dir::AtoB);
    let on_1: Vec<(u32, bool, u32, u8)> = firsts
        .iter()
        .filter(|f| f.2 == 1)
        .map(|f| (f.1, f.3, f.4, f.5))
        .collect();
    assert_eq!(
        on_1.iter().map(|f| (f.1, f.2, f.3)).collect::<Vec<_>>(),
        vec![(false, 0, 1), (false, 1, 3), (false, 0, 5), (true, 0, 6)]
    );
    assert!(on_1[1].0 <= last_tsn && last_tsn < on_1[2].0);
    for f in firsts.iter().filter(|f| f.5 >= 5) {
        assert!(
            f.0 >= reset_at && reset_at > asked_at,
            "{f:?} before the reset"
        );
    }
    // Every message exactly once; stream 1 in order across the reset.
    let mut got = b_got(&mut p);
    let unordered = got.iter().position(|m| m.1).expect("the unordered one");
    assert_eq!(got.remove(unordered), (1, true, 0, 6, 100));
    let on_stream = |s: u16| -> Vec<(u16, u8, usize)> {
        got.iter()
            .filter(|m| m.0 == s)
            .map(|m| (m.2, m.3, m.4))
            .collect()
    };
    assert_eq!(on_stream(1), vec![(0, 1, 20_000), (1, 3, 100), (0, 5, 100)]);
    assert_eq!(on_stream(2), vec![(0, 2, 3_000), (1, 4, 3_000)]);
    assert_eq!(got.len(), 5);
    assert_eq!(b_assoc(&mut p).receive_held(), 0);
    assert!(a_assoc(&mut p).all_acked());
}

/// An I-DATA chunk of stream 5 as the peer would send it.
fn idata(tsn: u32, mid: u32, fsn: u32, b_e: (bool, bool), tag: u8) -> Chunk<'static> {
    idata_on(5, tsn, mid, fsn, b_e, tag)
}

/// An ordered I-DATA chunk of 500 bytes `tag` as the peer would send it.
fn idata_on(
    stream_id: u16,
    tsn: u32,
    mid: u32,
    fsn: u32,
    (b, e): (bool, bool),
    tag: u8,
) -> Chunk<'static> {
    Chunk::IData(IData {
        flags: DataFlags {
            immediate: false,
            unordered: false,
            beginning: b,
            ending: e,
        },
        tsn,
        stream_id,
        mid,
        ppid_or_fsn: if b {
            PpidOrFsn::Ppid(0)
        } else {
            PpidOrFsn::Fsn(fsn)
        },
        payload: vec![tag; 500].into(),
    })
}

fn inject_reset(p: &mut Pair, request_seq: u32, last_tsn: u32) {
    p.inject_to_b(vec![Chunk::ReConfig(ReConfig {
        params: vec![ReconfigParam::OutgoingSsnReset {
            request_seq,
            response_seq: 0,
            last_tsn,
            streams: vec![5],
        }],
    })]);
}

/// A's first Request Sequence Number: its initial TSN (RFC 6525 5.1.1).
fn a_first_seq(p: &Pair) -> u32 {
    p.a_next_tsn()
}

/// B's answers to what a test injects as A's are logged, not delivered:
/// A never sent those TSNs.
fn b_muted(c: Config) -> Pair {
    let mut p = connected(c.clone(), c);
    p.rule(|seen| (seen.dir == Dir::BtoA).then_some(harness::Fate::Drop));
    p
}

#[test]
fn a_deferred_reset_holds_new_numbering_idata_apart_from_the_old_unfinished_message() {
    // A peer that sends the new numbering right after its request (as 5.2.2
    // E1 lets it): the new MID 0 meets the old MID 0, still unfinished. B
    // reassembles the two apart, holds the new ones within its window and
    // releases them once the reset is performed.
    let mut p = b_muted(cfg());
    let seq = a_first_seq(&p);
    let t = p.a_next_tsn();
    // Old numbering: MID 0 in two fragments, the second (TSN t + 1) late.
    p.inject_to_b(vec![idata(t, 0, 0, (true, false), 1)]);
    inject_reset(&mut p, seq, t + 1);
    assert_eq!(
        responses(&p, Dir::BtoA),
        vec![(seq, ReconfigResult::InProgress)]
    );
    // New numbering: MID 0 in two fragments (FSN 0 and 1, as the old one),
    // then MID 1 whole.
    p.inject_to_b(vec![idata(t + 2, 0, 0, (true, false), 10)]);
    p.inject_to_b(vec![idata(t + 4, 1, 0, (true, true), 11)]);
    p.inject_to_b(vec![idata(t + 3, 0, 1, (false, true), 12)]);
    assert!(b_got(&mut p).is_empty(), "nothing before the reset");
    let held = b_assoc(&mut p).receive_held();
    assert!(held >= 4 * 500, "held {held}: charged to the window");
    assert!(events(&p.b_events).is_empty(), "{:?}", p.b_events);
    // The old message's last fragment: delivered, then the reset, then the
    // new numbering from MID 0.
    p.inject_to_b(vec![idata(t + 1, 0, 1, (false, true), 2)]);
    p.run_for(ms(20));
    assert_eq!(
        b_got(&mut p),
        vec![
            (5, false, 0, 1, 1000),
            (5, false, 0, 10, 1000),
            (5, false, 1, 11, 500)
        ]
    );
    assert_eq!(
        responses(&p, Dir::BtoA),
        vec![
            (seq, ReconfigResult::InProgress),
            (seq, ReconfigResult::SuccessPerformed)
        ]
    );
    assert!(
        matches!(
            &events(&p.b_events)[..],
            [(_, Event::StreamsReset { direction: ResetDirection::Incoming, streams })]
                if streams == &[5]
        ),
        "{:?}",
        p.b_events
    );
    assert_eq!(b_assoc(&mut p).receive_held(), 0);
    // The stream now expects MID 2.
    p.inject_to_b(vec![idata(t + 5, 2, 0, (true, true), 13)]);
    assert_eq!(b_got(&mut p), vec![(5, false, 2, 13, 500)]);
}

#[test]
fn a_new_numbering_message_left_unfinished_joins_reassembly_when_the_reset_is_performed() {
    let mut p = b_muted(cfg());
    let seq = a_first_seq(&p);
    let t = p.a_next_tsn();
    inject_reset(&mut p, seq, t);
    // New MID 0's first fragment arrives before the reset can be performed
    // (TSN t is missing); its second after.
    p.inject_to_b(vec![idata(t + 1, 0, 0, (true, false), 10)]);
    p.inject_to_b(vec![idata(t, 7, 0, (true, true), 1)]);
    p.run_for(ms(20));
    // The old message (MID 7, its predecessors abandoned unseen) goes first.
    assert_eq!(b_got(&mut p), vec![(5, false, 7, 1, 500)]);
    assert_eq!(
        responses(&p, Dir::BtoA).last(),
        Some(&(seq, ReconfigResult::SuccessPerformed))
    );
    p.inject_to_b(vec![idata(t + 2, 0, 1, (false, true), 11)]);
    eprintln!(
        "{:?} held {}",
        b_assoc(&mut p).stats(),
        b_assoc(&mut p).receive_held()
    );
    assert_eq!(b_got(&mut p), vec![(5, false, 0, 10, 1000)]);
    assert_eq!(b_assoc(&mut p).receive_held(), 0);
}

#[test]
fn a_reset_drops_the_old_numbering_message_whose_rest_was_abandoned() {
    // The old MID 0 lost its second fragment, abandoned by an I-FORWARD-TSN
    // that (as Brisk's sender does for a stream being reset) names nothing:
    // the reset, performed as the cumulative TSN passes the request's,
    // drops what was held of it, and the new MID 0 is not mistaken for it.
    let pr = Config {
        partial_reliability: true,
        ..cfg()
    };
    let mut p = b_muted(pr);
    let seq = a_first_seq(&p);
    let t = p.a_next_tsn();
    p.inject_to_b(vec![idata(t, 0, 0, (true, false), 1)]);
    inject_reset(&mut p, seq, t + 1);
    assert!(b_assoc(&mut p).receive_held() >= 500);
    p.inject_to_b(vec![Chunk::IForwardTsn(IForwardTsn {
        new_cum_tsn: t + 1,
        streams: vec![],
    })]);
    p.run_for(ms(20));
    assert_eq!(
        responses(&p, Dir::BtoA).last(),
        Some(&(seq, ReconfigResult::SuccessPerformed))
    );
    assert_eq!(b_assoc(&mut p).receive_held(), 0, "the old fragment stays");
    p.inject_to_b(vec![idata(t + 2, 0, 0, (true, false), 10)]);
    p.inject_to_b(vec![idata(t + 3, 0, 1, (false, true), 11)]);
    assert_eq!(b_got(&mut p), vec![(5, false, 0, 10, 1000)]);
    assert!(
        !events(&p.b_events)
            .iter()
            .any(|e| matches!(e.1, Event::Closed(_)))
    );
}

#[test]
fn an_incoming_reset_request_makes_the_peer_restart_its_mids() {
    let mut p = connected(cfg(), cfg());
    for tag in 1..=2 {
        p.a_send(msg(3, tag, 100));
    }
    p.a_send(OutgoingMessage::new(3, vec![3; 100]).unordered(true));
    p.run_for(ms(100));
    // B asks A to reset A's outgoing stream 3 (5.1.3); A's Outgoing SSN
    // Reset Request answers it.
    let now = p.now;
    b_assoc(&mut p).request_incoming_reset(now, &[3]).unwrap();
    p.run_for(ms(100));
    assert!(chunks(&p, Dir::AtoB).iter().any(|(_, c)| matches!(c,
        Chunk::ReConfig(r) if matches!(&r.params[0],
            ReconfigParam::OutgoingSsnReset { streams, .. } if streams == &[3]))));
    assert!(matches!(
        &events(&p.a_events)[..],
        [(_, Event::StreamsReset { direction: ResetDirection::Outgoing, streams })]
            if streams == &[3]
    ));
    assert!(matches!(
        &events(&p.b_events)[..],
        [(_, Event::StreamsReset { direction: ResetDirection::Incoming, streams })]
            if streams == &[3]
    ));
    p.a_send(msg(3, 4, 100));
    p.a_send(OutgoingMessage::new(3, vec![5; 100]).unordered(true));
    p.run_for(ms(100));
    let mids: Vec<(bool, u32, u8)> = first_fragments(&p, Dir::AtoB)
        .iter()
        .map(|f| (f.3, f.4, f.5))
        .collect();
    assert_eq!(
        mids,
        vec![
            (false, 0, 1),
            (false, 1, 2),
            (true, 0, 3),
            (false, 0, 4),
            (true, 0, 5)
        ]
    );
    assert_eq!(
        b_got(&mut p),
        vec![
            (3, false, 0, 1, 100),
            (3, false, 1, 2, 100),
            (3, true, 0, 3, 100),
            (3, false, 0, 4, 100),
            (3, true, 0, 5, 100)
        ]
    );
}

#[test]
fn idata_on_added_streams_is_ordered_by_mid() {
    let c = Config {
        max_inbound_streams: 32,
        ..cfg()
    };
    let mut p = connected(c.clone(), c);
    let now = p.now;
    a_assoc(&mut p).add_streams(now, 2, 0).unwrap();
    p.run_for(ms(100));
    assert_eq!(
        events(&p.b_events)
            .into_iter()
            .map(|e| e.1)
            .collect::<Vec<_>>(),
        vec![Event::StreamsAdded {
            outgoing: 16,
            incoming: 18
        }]
    );
    // Two messages on the new stream 17; the first one's packet is lost,
    // so MID 1 arrives first and waits for MID 0.
    p.drop_data_packet(Dir::AtoB, 1);
    p.a_send(msg(17, 1, 100));
    p.run_for(ms(1));
    p.a_send(msg(17, 2, 100));
    p.run_for(ms(40));
    assert!(b_got(&mut p).is_empty(), "MID 1 waits for MID 0");
    p.run_for(ms(3000));
    let mids: Vec<(u16, u32, u8)> = first_fragments(&p, Dir::AtoB)
        .iter()
        .map(|f| (f.2, f.4, f.5))
        .collect();
    assert_eq!(mids, vec![(17, 0, 1), (17, 1, 2)]);
    assert_eq!(
        b_got(&mut p),
        vec![(17, false, 0, 1, 100), (17, false, 1, 2, 100)]
    );
    // No "Invalid Stream Identifier" (RFC 9260 6.5) for the new stream.
    assert!(
        !chunks(&p, Dir::BtoA)
            .iter()
            .any(|(_, c)| matches!(c, Chunk::Error(_)))
    );
}

#[test]
fn an_ssn_tsn_reset_restarts_every_mid_and_the_tsns() {
    let mut p = connected(cfg(), cfg());
    for tag in 1..=2 {
        p.a_send(msg(0, tag, 100));
    }
    p.a_send(msg(1, 3, 100));
    p.run_for(ms(500));
    let now = p.now;
    a_assoc(&mut p).reset_ssn_tsn(now).unwrap();
    p.a_send(msg(0, 4, 100));
    p.a_send(msg(1, 5, 100));
    p.run_for(ms(500));
    let receiver_next = chunks(&p, Dir::BtoA)
        .into_iter()
        .find_map(|(_, c)| match c {
            Chunk::ReConfig(r) => match r.params[0] {
                ReconfigParam::Response {
                    result: ReconfigResult::SuccessPerformed,
                    next_tsns: Some((_, receiver_next)),
                    ..
                } => Some(receiver_next),
                _ => None,
            },
            _ => None,
        })
        .expect("performed");
    assert!(matches!(
        &events(&p.a_events)[..],
        [(_, Event::AssociationReset)]
    ));
    assert!(matches!(
        &events(&p.b_events)[..],
        [(_, Event::AssociationReset)]
    ));
    let firsts: Vec<(u32, u16, u32, u8)> = first_fragments(&p, Dir::AtoB)
        .iter()
        .map(|f| (f.1, f.2, f.4, f.5))
        .collect();
    // Before the reset (in the order the scheduler took them), then after.
    let mut before: Vec<(u16, u32, u8)> = firsts[..3].iter().map(|f| (f.1, f.2, f.3)).collect();
    before.sort_unstable();
    assert_eq!(before, vec![(0, 0, 1), (0, 1, 2), (1, 0, 3)]);
    assert_eq!(
        firsts[3..]
            .iter()
            .map(|f| (f.1, f.2, f.3))
            .collect::<Vec<_>>(),
        vec![(0, 0, 4), (1, 0, 5)]
    );
    assert_eq!(firsts[3].0, receiver_next, "the new TSNs start there");
    let mut got = b_got(&mut p);
    assert_eq!(
        got.split_off(3),
        vec![(0, false, 0, 4, 100), (1, false, 0, 5, 100)]
    );
    got.sort_unstable();
    assert_eq!(
        got,
        vec![
            (0, false, 0, 1, 100),
            (0, false, 1, 2, 100),
            (1, false, 0, 3, 100)
        ]
    );
    p.run_for(ms(300));
    assert!(a_assoc(&mut p).all_acked());
    // A duplicate of one of B's SACKs from before the reset arrives late:
    // its Cumulative TSN Ack is of A's old TSNs, stale rather than a lie.
    let old_sack = p
        .log
        .iter()
        .find(|l| l.seen.dir == Dir::BtoA && l.seen.has_sack())
        .map(|l| l.seen.bytes.clone())
        .expect("a SACK before the reset");
    let (now, b_addr) = (p.now, p.b_addr);
    p.a.handle_datagram(now, b_addr, &old_sack);
    p.run_for(ms(100));
    assert!(
        !p.a_events
            .iter()
            .any(|(_, _, e)| matches!(e, Event::Closed(_))),
        "{:?}",
        p.a_events
    );
    assert!(a_assoc(&mut p).all_acked());
}

#[test]
fn an_ssn_tsn_reset_delivers_waiting_messages_and_drops_unfinished_ones() {
    // RFC 6525 5.2.4 G4, G5 with I-DATA: B holds MID 2 of stream 6 (MIDs 0
    // and 1 never came) and the first fragment of MID 0 on stream 5 when
    // the peer's SSN/TSN Reset Request arrives.
    let mut p = b_muted(cfg());
    let seq = a_first_seq(&p);
    let t = p.a_next_tsn();
    p.inject_to_b(vec![idata_on(5, t, 0, 0, (true, false), 1)]);
    p.inject_to_b(vec![idata_on(6, t + 1, 2, 0, (true, true), 2)]);
    assert!(b_got(&mut p).is_empty());
    p.inject_to_b(vec![Chunk::ReConfig(ReConfig {
        params: vec![ReconfigParam::SsnTsnReset { request_seq: seq }],
    })]);
    let next_tsns = chunks(&p, Dir::BtoA)
        .into_iter()
        .find_map(|(_, c)| match c {
            Chunk::ReConfig(r) => match r.params[0] {
                ReconfigParam::Response {
                    result: ReconfigResult::SuccessPerformed,
                    next_tsns,
                    ..
                } => next_tsns,
                _ => None,
            },
            _ => None,
        })
        .expect("performed");
    // G1: the peer's next TSN is B's cumulative TSN + 1 + 2^31.
    let peer_next = (t + 2).wrapping_add(1 << 31);
    assert_eq!(next_tsns.1, peer_next);
    assert_eq!(b_got(&mut p), vec![(6, false, 2, 2, 500)]);
    assert_eq!(
        b_assoc(&mut p).receive_held(),
        0,
        "the unfinished MID 0 stays"
    );
    assert!(matches!(
        &events(&p.b_events)[..],
        [(_, Event::AssociationReset)]
    ));
    // The new TSNs, every stream from MID 0; stream 5's MID 0 is a new
    // message, not the rest of the dropped one.
    p.inject_to_b(vec![idata_on(5, peer_next, 0, 1, (false, true), 9)]);
    p.inject_to_b(vec![idata_on(6, peer_next + 1, 0, 0, (true, true), 3)]);
    p.inject_to_b(vec![idata_on(5, peer_next + 2, 0, 0, (true, false), 4)]);
    assert_eq!(
        b_got(&mut p),
        vec![(6, false, 0, 3, 500), (5, false, 0, 4, 1000)]
    );
}

#[test]
fn an_abandoned_unordered_message_of_the_old_numbering_is_left_to_the_reset() {
    // RFC 8260 2.3.1 with RFC 6525: the unordered MIDs restart at 0 too,
    // so an I-FORWARD-TSN entry (stream, U, MID) for a message of the old
    // numbering could name a new message once the peer reset the stream.
    // A leaves it out; B drops the rest of the old message as it performs
    // the reset.
    let pr = Config {
        partial_reliability: true,
        ..cfg()
    };
    let mut p = connected(pr.clone(), pr);
    // An unordered 2000-byte message on stream 1 that may not be resent;
    // its second fragment is lost.
    p.rule(|seen| {
        let Ok(packet) = Packet::decode(&seen.bytes) else {
            return None;
        };
        let second = packet
            .chunks
            .iter()
            .any(|c| matches!(c, Chunk::IData(d) if d.flags.unordered && !d.flags.beginning));
        (seen.dir == Dir::AtoB && second).then_some(harness::Fate::Drop)
    });
    let lost = p.a_send(
        OutgoingMessage::new(1, vec![1; 2000])
            .unordered(true)
            .with_max_retransmits(0),
    );
    p.a_send(msg(1, 2, 100));
    let now = p.now;
    a_assoc(&mut p).reset_streams(now, &[1]).unwrap();
    p.a_send(msg(1, 3, 100));
    p.run_for(ms(3000));
    assert!(
        p.a_events
            .iter()
            .any(|(_, _, e)| matches!(e, Event::MessageAbandoned { id } if *id == lost))
    );
    let forwards: Vec<IForwardTsn> = chunks(&p, Dir::AtoB)
        .into_iter()
        .filter_map(|(_, c)| match c {
            Chunk::IForwardTsn(f) => Some(f),
            _ => None,
        })
        .collect();
    assert!(!forwards.is_empty());
    assert!(
        forwards.iter().all(|f| f.streams.is_empty()),
        "{forwards:?}"
    );
    assert!(matches!(
        &events(&p.a_events)[..],
        [(_, Event::StreamsReset { direction: ResetDirection::Outgoing, streams })]
            if streams == &[1]
    ));
    assert_eq!(
        b_got(&mut p),
        vec![(1, false, 0, 2, 100), (1, false, 0, 3, 100)]
    );
    let mids: Vec<(bool, u32, u8)> = first_fragments(&p, Dir::AtoB)
        .iter()
        .map(|f| (f.3, f.4, f.5))
        .collect();
    assert_eq!(mids, vec![(true, 0, 1), (false, 0, 2), (false, 0, 3)]);
    assert_eq!(b_assoc(&mut p).receive_held(), 0, "the old fragment stays");
}

#[test]
fn the_peers_sack_in_the_new_tsns_ahead_of_its_answer_is_no_lie() {
    // B performs A's SSN/TSN reset and sends, in one packet, a SACK already
    // in A's new numbering (5.2.4 G1: the first TSN B did not acknowledge
    // plus 2^31, minus 1), then its answer.
    let mut p = connected(cfg(), cfg());
    p.a_send(msg(0, 1, 100));
    p.run_for(ms(500));
    // B's answers are lost: A's request stays in flight.
    p.rule(|seen| (seen.dir == Dir::BtoA && seen.has(130)).then_some(harness::Fate::Drop));
    let now = p.now;
    a_assoc(&mut p).reset_ssn_tsn(now).unwrap();
    p.run_for(ms(15));
    let request_seq = chunks(&p, Dir::AtoB)
        .into_iter()
        .find_map(|(_, c)| match c {
            Chunk::ReConfig(r) => match r.params[0] {
                ReconfigParam::SsnTsnReset { request_seq } => Some(request_seq),
                _ => None,
            },
            _ => None,
        })
        .expect("the request");
    let a_next = p.a_next_tsn();
    let (_, b_to_a) = p.tags();
    let sack = Chunk::Sack(brisk_proto::wire::chunk::Sack {
        cum_tsn_ack: a_next.wrapping_add(1 << 31).wrapping_sub(1),
        a_rwnd: 1 << 20,
        gap_blocks: vec![],
        dup_tsns: vec![],
    });
    let answer = Chunk::ReConfig(ReConfig {
        params: vec![ReconfigParam::Response {
            response_seq: request_seq,
            result: ReconfigResult::SuccessPerformed,
            next_tsns: Some((
                first_fragments(&p, Dir::BtoA).first().map_or(0, |f| f.1),
                a_next.wrapping_add(1 << 31),
            )),
        }],
    });
    let bytes = harness::packet(b_to_a, vec![sack, answer]);
    let (now, b_addr) = (p.now, p.b_addr);
    p.a.handle_datagram(now, b_addr, &bytes);
    p.run_for(ms(1));
    assert!(
        events(&p.a_events)
            .iter()
            .all(|e| !matches!(e.1, Event::Closed(_))),
        "{:?}",
        p.a_events
    );
    assert!(matches!(
        &events(&p.a_events)[..],
        [(_, Event::AssociationReset)]
    ));
}

#[test]
fn messages_of_the_new_numbering_ahead_of_the_ssn_tsn_answer_wait_for_it() {
    // B asks for an SSN/TSN reset; A performs it, but its answer is lost
    // for a while, and A's next message (MID 0 of the new numbering)
    // reaches B first. B holds it until the answer says where the new
    // numbering begins, then delivers it.
    let mut p = connected(cfg(), cfg());
    for tag in 1..=2 {
        p.a_send(msg(0, tag, 100));
    }
    p.run_for(ms(500));
    assert_eq!(
        b_got(&mut p),
        vec![(0, false, 0, 1, 100), (0, false, 1, 2, 100)]
    );
    let lose_answers = std::rc::Rc::new(std::cell::Cell::new(true));
    let lose = lose_answers.clone();
    p.rule(move |seen| {
        (lose.get() && seen.dir == Dir::AtoB && seen.has(130)).then_some(harness::Fate::Drop)
    });
    let now = p.now;
    b_assoc(&mut p).reset_ssn_tsn(now).unwrap();
    p.run_for(ms(300));
    assert!(matches!(
        &events(&p.a_events)[..],
        [(_, Event::AssociationReset)]
    ));
    assert!(events(&p.b_events).is_empty());
    p.a_send(msg(0, 3, 100));
    p.run_for(ms(50));
    assert!(b_got(&mut p).is_empty(), "held until the answer");
    assert!(b_assoc(&mut p).receive_held() >= 100);
    let mid = first_fragments(&p, Dir::AtoB).last().map(|f| (f.4, f.5));
    assert_eq!(mid, Some((0, 3)));
    lose_answers.set(false);
    p.run_for(ms(3000));
    assert!(matches!(
        &events(&p.b_events)[..],
        [(_, Event::AssociationReset)]
    ));
    assert_eq!(b_got(&mut p), vec![(0, false, 0, 3, 100)]);
    assert_eq!(b_assoc(&mut p).receive_held(), 0);
    assert!(a_assoc(&mut p).all_acked());
}

/// The kinds of reconfiguration A takes part in, for the matrix below.
#[derive(Debug, Clone, Copy)]
enum ResetKind {
    /// A resets its outgoing stream 0 (RFC 6525 5.1.2).
    Outgoing,
    /// B asks A to reset A's outgoing stream 0 (5.1.3).
    IncomingRequest,
    /// A resets every SSN and the TSNs (5.1.4).
    SsnTsn,
    /// A adds two outgoing streams (5.1.5).
    AddStreams,
}

fn start_reset(p: &mut Pair, kind: ResetKind) {
    let now = p.now;
    match kind {
        ResetKind::Outgoing => a_assoc(p).reset_streams(now, &[0]).unwrap(),
        ResetKind::IncomingRequest => b_assoc(p).request_incoming_reset(now, &[0]).unwrap(),
        ResetKind::SsnTsn => a_assoc(p).reset_ssn_tsn(now).unwrap(),
        ResetKind::AddStreams => a_assoc(p).add_streams(now, 2, 0).unwrap(),
    }
}

#[test]
fn after_every_kind_of_reset_every_scheduler_sends_and_delivers_new_messages() {
    // RFC 8260 3 with RFC 6525: a message in progress when the reset is
    // asked for finishes (out of its scheduler's turn while an SSN/TSN reset
    // waits, 5.1.4), with another queued behind it on the same stream; the
    // scheduler must then name only streams with messages, so that the
    // messages sent after the reset go and arrive.
    use brisk_proto::StreamScheduler as S;
    let kinds = [
        ResetKind::Outgoing,
        ResetKind::IncomingRequest,
        ResetKind::SsnTsn,
        ResetKind::AddStreams,
    ];
    for scheduler in [
        S::Fcfs,
        S::RoundRobin,
        S::RoundRobinPacket,
        S::Priority,
        S::Wfq,
    ] {
        for kind in kinds {
            let c = Config {
                stream_scheduler: scheduler,
                ..cfg()
            };
            let mut p = connected(c.clone(), c);
            // 20 kB: more than the initial window, so still in progress.
            p.a_send(msg(0, 1, 20_000));
            p.a_send(msg(0, 2, 100));
            p.a_send(msg(1, 3, 100));
            p.run_for(ms(1));
            start_reset(&mut p, kind);
            p.run_for(ms(3000));
            let mut tags: Vec<u8> = b_got(&mut p).iter().map(|m| m.3).collect();
            tags.sort_unstable();
            assert_eq!(tags, [1, 2, 3], "{scheduler:?} with {kind:?}: before");
            // Stream 0 gets nothing more: no message of its can mend a
            // turn that the scheduler kept for it.
            for tag in 4..=9 {
                p.a_send(msg(u16::from(tag % 2 + 1), tag, 100));
            }
            p.run_for(ms(3000));
            let mut tags: Vec<u8> = b_got(&mut p).iter().map(|m| m.3).collect();
            tags.sort_unstable();
            assert_eq!(
                tags,
                (4..=9).collect::<Vec<u8>>(),
                "{scheduler:?} with {kind:?}: every message after the reset arrives"
            );
            assert!(a_assoc(&mut p).all_acked(), "{scheduler:?} with {kind:?}");
        }
    }
}

#[test]
fn a_forward_tsn_behind_messages_held_for_an_ssn_tsn_reset_drops_none_of_them() {
    // RFC 6525 5.1.4 with RFC 3758 3.6 (RFC 8260 2.3.1 with I-DATA): B's
    // SSN/TSN Reset Request waits "In progress" while A has data
    // outstanding, and B holds A's ordered messages meanwhile. A abandons
    // a later message and its FORWARD TSN skips the stream past the held
    // ones: they were acknowledged, and are delivered all the same.
    for idata in [false, true] {
        let c = Config {
            partial_reliability: true,
            message_interleaving: idata,
            ..cfg()
        };
        let mut p = Pair::new(ms(10), c.clone());
        p.connect(c);
        p.run_for(ms(1000) - Duration::from_micros(p.now.as_micros()));
        // The first transmission of the first message and of the last is lost.
        p.drop_data_packet(Dir::AtoB, 1);
        p.drop_data_packet(Dir::AtoB, 4);
        p.a_send(msg(0, 1, 100));
        let now = p.now;
        b_assoc(&mut p).reset_ssn_tsn(now).unwrap();
        for tag in 2..=3 {
            p.run_for(ms(1));
            p.a_send(msg(0, tag, 100));
        }
        p.run_for(ms(1));
        let lost = p.a_send(OutgoingMessage::new(0, vec![4; 100]).with_max_retransmits(0));
        p.run_for(ms(10_000));
        assert_eq!(p.a_abandoned(), vec![lost], "idata {idata}");
        assert!(
            p.log
                .iter()
                .any(|l| l.seen.dir == Dir::AtoB && (l.seen.has(192) || l.seen.has(194))),
            "idata {idata}: a FORWARD TSN went"
        );
        assert!(
            responses(&p, Dir::AtoB)
                .iter()
                .any(|r| r.1 == ReconfigResult::InProgress),
            "idata {idata}: {:?}",
            responses(&p, Dir::AtoB)
        );
        let tags: Vec<u8> = b_got(&mut p).iter().map(|m| m.3).collect();
        assert_eq!(tags, [1, 2, 3], "idata {idata}");
        assert_eq!(b_assoc(&mut p).receive_held(), 0, "idata {idata}");
    }
}

#[test]
fn after_an_ssn_tsn_reset_a_forward_tsn_still_names_a_stream_reset_before() {
    // RFC 3758 3.5 F with RFC 6525 5.1.4: a stream reset earlier leaves no
    // trace once the SSN/TSN reset moved the TSNs half the number space
    // on: the FORWARD TSN that abandons a message on that stream names the
    // stream, and the message behind it is delivered.
    for idata in [false, true] {
        let c = Config {
            partial_reliability: true,
            message_interleaving: idata,
            ..cfg()
        };
        let mut p = Pair::new(ms(10), c.clone());
        p.connect(c);
        p.run_for(ms(1000) - Duration::from_micros(p.now.as_micros()));
        p.a_send(msg(0, 1, 100));
        p.run_for(ms(100));
        let now = p.now;
        a_assoc(&mut p).reset_streams(now, &[0]).unwrap();
        p.run_for(ms(500));
        // TSNs beyond the reset request's.
        p.a_send(msg(1, 2, 100));
        p.run_for(ms(500));
        let now = p.now;
        a_assoc(&mut p).reset_ssn_tsn(now).unwrap();
        p.run_for(ms(500));
        assert_eq!(
            events(&p.a_events).len(),
            2,
            "idata {idata}: {:?}",
            events(&p.a_events)
        );
        let n = p.data_packets(Dir::AtoB).len() as u64;
        p.drop_data_packet(Dir::AtoB, n + 1);
        let lost = p.a_send(OutgoingMessage::new(0, vec![3; 100]).with_max_retransmits(0));
        p.run_for(ms(1));
        p.a_send(msg(0, 4, 100));
        p.run_for(ms(5000));
        assert_eq!(p.a_abandoned(), vec![lost], "idata {idata}");
        let tags: Vec<u8> = b_got(&mut p).iter().map(|m| m.3).collect();
        assert_eq!(tags, [1, 2, 4], "idata {idata}");
    }
}

#[test]
fn an_iforward_tsn_past_a_missing_fragment_drops_its_unfinished_message() {
    // RFC 3758 3.6 with RFC 8260 2.3.1: a TSN the cumulative TSN passed
    // without receiving it never comes. An unfinished message missing a
    // fragment before one held at or before that point can never finish,
    // whether or not the I-FORWARD-TSN names it (Brisk's sender leaves out
    // entries of a stream being reset): it is dropped, and the room it took
    // is free for the chunks that let a deferred reset be performed.
    let pr = Config {
        partial_reliability: true,
        ..cfg()
    };
    let mut p = b_muted(pr);
    let seq = a_first_seq(&p);
    let t = p.a_next_tsn();
    // MID 0's first fragment (TSN t) is lost; its second and third arrive.
    p.inject_to_b(vec![idata(t + 1, 0, 1, (false, false), 1)]);
    p.inject_to_b(vec![idata(t + 2, 0, 2, (false, false), 1)]);
    // The reset waits for TSN t + 3.
    inject_reset(&mut p, seq, t + 3);
    assert!(b_assoc(&mut p).receive_held() >= 1000);
    p.inject_to_b(vec![Chunk::IForwardTsn(IForwardTsn {
        new_cum_tsn: t + 2,
        streams: vec![],
    })]);
    assert_eq!(
        b_assoc(&mut p).receive_held(),
        0,
        "the stranded message stays"
    );
    p.inject_to_b(vec![idata(t + 3, 1, 0, (true, true), 2)]);
    p.run_for(ms(20));
    assert_eq!(
        responses(&p, Dir::BtoA).last(),
        Some(&(seq, ReconfigResult::SuccessPerformed))
    );
    assert!(
        !events(&p.b_events)
            .iter()
            .any(|e| matches!(e.1, Event::Closed(_)))
    );
}
