//! Teardown (RFC 9260 9.1, 9.2): graceful shutdown from either side and from
//! both at once, and ABORT with its causes.

mod harness;

use brisk_proto::wire::chunk::types;
use brisk_proto::{CloseReason, Config, Event, OutgoingMessage, SendError, State};
use harness::{Dir, Fate, Pair, ms};

fn connected() -> Pair {
    let mut p = Pair::new(ms(10), Config::rfc9260());
    p.connect(Config::rfc9260());
    p
}

fn closed(events: &[(brisk_proto::Time, brisk_proto::AssocId, Event)]) -> Option<CloseReason> {
    events.iter().find_map(|(_, _, e)| match e {
        Event::Closed(r) => Some(r.clone()),
        _ => None,
    })
}

fn chunk_sequence(p: &Pair) -> Vec<(Dir, u8)> {
    p.log
        .iter()
        .flat_map(|l| {
            l.seen
                .chunk_types
                .iter()
                .filter(|t| {
                    matches!(
                        **t,
                        types::SHUTDOWN | types::SHUTDOWN_ACK | types::SHUTDOWN_COMPLETE
                    )
                })
                .map(move |t| (l.seen.dir, *t))
        })
        .collect()
}

#[test]
fn graceful_shutdown_delivers_queued_data_first_then_closes_both_sides() {
    let mut p = connected();
    let (a, b) = (p.a_id.unwrap(), p.b_id.unwrap());
    for i in 0..5u8 {
        p.a_send(OutgoingMessage::new(0, vec![i; 500]));
    }
    let now = p.now;
    p.a.association(a).unwrap().shutdown(now);
    assert_eq!(p.a.association(a).unwrap().state(), State::ShutdownPending);
    let refused =
        p.a.association(a)
            .unwrap()
            .send(now, OutgoingMessage::new(0, vec![1]));
    assert_eq!(refused, Err(SendError::ShuttingDown));
    p.run_for(ms(2000));
    // Messages that arrived before the close stay readable after it.
    assert_eq!(p.b.association(b).map(|x| x.state()), Some(State::Closed));
    assert_eq!(p.b_recv_all().len(), 5);
    assert_eq!(
        chunk_sequence(&p),
        vec![
            (Dir::AtoB, types::SHUTDOWN),
            (Dir::BtoA, types::SHUTDOWN_ACK),
            (Dir::AtoB, types::SHUTDOWN_COMPLETE)
        ]
    );
    assert_eq!(closed(&p.a_events), Some(CloseReason::Shutdown));
    assert_eq!(closed(&p.b_events), Some(CloseReason::Shutdown));
    assert!(
        p.b_events
            .iter()
            .any(|(_, id, e)| *id == b && *e == Event::PeerShutdown)
    );
    // Once read, the closed association is forgotten.
    assert!(p.b.poll_transmit(p.now, &mut Vec::new()).is_none());
    assert_eq!((p.a.association_count(), p.b.association_count()), (0, 0));
}

#[test]
fn the_accepting_side_can_shut_down_too() {
    let mut p = connected();
    let b = p.b_id.unwrap();
    let now = p.now;
    p.b.association(b).unwrap().shutdown(now);
    p.run_for(ms(1000));
    assert_eq!(
        chunk_sequence(&p),
        vec![
            (Dir::BtoA, types::SHUTDOWN),
            (Dir::AtoB, types::SHUTDOWN_ACK),
            (Dir::BtoA, types::SHUTDOWN_COMPLETE)
        ]
    );
    assert_eq!(closed(&p.a_events), Some(CloseReason::Shutdown));
}

#[test]
fn simultaneous_shutdown_completes_through_shutdown_ack_on_both_sides() {
    let mut p = connected();
    let (a, b) = (p.a_id.unwrap(), p.b_id.unwrap());
    let now = p.now;
    p.a.association(a).unwrap().shutdown(now);
    p.b.association(b).unwrap().shutdown(now);
    p.run_for(ms(1000));
    let seq = chunk_sequence(&p);
    assert_eq!(
        seq.iter().filter(|c| c.1 == types::SHUTDOWN).count(),
        2,
        "{seq:?}"
    );
    assert_eq!(
        seq.iter().filter(|c| c.1 == types::SHUTDOWN_ACK).count(),
        2,
        "{seq:?}"
    );
    assert_eq!(closed(&p.a_events), Some(CloseReason::Shutdown));
    assert_eq!(closed(&p.b_events), Some(CloseReason::Shutdown));
}

#[test]
fn a_lost_shutdown_is_retransmitted_by_t2() {
    let mut p = connected();
    let a = p.a_id.unwrap();
    let mut dropped = false;
    p.rule(move |s| {
        let first = s.dir == Dir::AtoB && s.has(types::SHUTDOWN) && !dropped;
        dropped |= first;
        first.then_some(Fate::Drop)
    });
    let now = p.now;
    p.a.association(a).unwrap().shutdown(now);
    p.run_for(ms(5000));
    let shutdowns: Vec<_> = p
        .log
        .iter()
        .filter(|l| l.seen.has(types::SHUTDOWN))
        .map(|l| l.seen.sent_at)
        .collect();
    assert_eq!(shutdowns.len(), 2);
    assert_eq!(shutdowns[1], shutdowns[0] + ms(1000), "T2 = RTO = 1 s");
    assert_eq!(closed(&p.a_events), Some(CloseReason::Shutdown));
}

#[test]
fn abort_carries_the_reason_and_fails_unacknowledged_messages() {
    let mut p = connected();
    let a = p.a_id.unwrap();
    // B's SACKs are lost, so A's message stays unacknowledged.
    p.rule(|s| (s.dir == Dir::BtoA).then_some(Fate::Drop));
    let id = p.a_send(OutgoingMessage::new(0, vec![1; 10]));
    p.run_for(ms(50));
    let now = p.now;
    p.a.association(a).unwrap().abort(now, "operator said so");
    p.run_for(ms(100));
    assert_eq!(
        closed(&p.a_events),
        Some(CloseReason::LocalAbort {
            reason: "operator said so".into()
        })
    );
    assert!(
        p.a_events
            .iter()
            .any(|(_, _, e)| *e == Event::SendFailed { id })
    );
    assert_eq!(
        closed(&p.b_events),
        Some(CloseReason::PeerAbort {
            causes: "user-initiated abort: operator said so".into()
        })
    );
    // The message B received before the ABORT is still readable, once.
    assert_eq!(p.b.association_count(), 1);
    assert_eq!(p.b_recv_all().len(), 1);
    assert!(p.b.poll_transmit(p.now, &mut Vec::new()).is_none());
    assert_eq!((p.a.association_count(), p.b.association_count()), (0, 0));
}

#[test]
fn data_sent_in_shutdown_pending_asks_for_an_immediate_sack() {
    // The SHUTDOWN waits for the SACK of the last DATA chunk, which B would
    // delay by SACK.Delay (200 ms) unless the I bit asks otherwise (RFC 9260
    // 3.3.1; usrsctp and Linux set it on DATA sent in SHUTDOWN-PENDING).
    let mut p = connected();
    let a = p.a_id.unwrap();
    p.a_send(OutgoingMessage::new(0, vec![7; 100]));
    let t0 = p.now;
    p.a.association(a).unwrap().shutdown(t0);
    p.run_for(ms(1000));
    let data = p.data_packets(Dir::AtoB);
    assert_eq!(data.len(), 1);
    assert_eq!(
        data[0].seen.bytes[12 + 1] & 0x08,
        0x08,
        "the I bit on the wire"
    );
    let shutdown_at = p
        .log
        .iter()
        .find(|l| l.seen.dir == Dir::AtoB && l.seen.has(types::SHUTDOWN))
        .map(|l| l.seen.sent_at)
        .expect("SHUTDOWN sent");
    // 10 ms each way: the SACK is back 20 ms after the DATA left.
    assert_eq!(
        shutdown_at,
        t0 + ms(20),
        "no delayed SACK before the SHUTDOWN"
    );
    assert!(closed(&p.a_events).is_some());
}

#[test]
fn a_shutdown_with_a_delayed_sack_pending_carries_the_sack_first() {
    let mut p = connected();
    // Past the first DATA (SACKed at once, RFC 9260 5.1): B delays its SACKs.
    p.warm_up();
    let b = p.b_id.unwrap();
    p.a_send(OutgoingMessage::new(0, vec![3; 100]));
    // The DATA reaches B (10 ms); its SACK waits for SACK.Delay.
    p.run_for(ms(10));
    assert_eq!(p.b_recv_all().len(), 1);
    let mark = p.log.len();
    let now = p.now;
    p.b.association(b).unwrap().shutdown(now);
    p.run_for(ms(1000));
    // 9.2: the SHUTDOWN's peer may wait for its last DATA to be SACKed: the
    // SACK goes first, in the same packet.
    let first = p.log[mark..]
        .iter()
        .find(|l| l.seen.dir == Dir::BtoA)
        .expect("B sent");
    assert_eq!(first.seen.chunk_types, vec![types::SACK, types::SHUTDOWN]);
    assert_eq!(closed(&p.b_events), Some(CloseReason::Shutdown));
}

#[test]
fn a_shutdown_acknowledging_a_tsn_never_sent_is_aborted_naming_the_shutdown() {
    let mut p = connected();
    // B's initial TSN, from its INIT ACK: B has sent no DATA yet.
    let b_initial = p
        .log
        .iter()
        .find_map(|l| {
            match &brisk_proto::wire::Packet::decode(&l.seen.bytes)
                .ok()?
                .chunks[0]
            {
                brisk_proto::wire::Chunk::InitAck(ack) => Some(ack.initial_tsn),
                _ => None,
            }
        })
        .unwrap();
    p.inject_to_b(vec![brisk_proto::wire::Chunk::Shutdown(
        brisk_proto::wire::chunk::Shutdown {
            cum_tsn_ack: b_initial.wrapping_add(10),
        },
    )]);
    p.run_for(ms(100));
    // RFC 9260 9.2 (a SHUTDOWN's cumulative ack is a SACK's), 15: the
    // reason names the chunk that did it.
    let Some(CloseReason::LocalAbort { reason }) = closed(&p.b_events) else {
        panic!("B aborted: {:?}", closed(&p.b_events));
    };
    assert!(reason.contains("SHUTDOWN"), "{reason}");
    let Some(CloseReason::PeerAbort { causes }) = closed(&p.a_events) else {
        panic!("A saw the ABORT: {:?}", closed(&p.a_events));
    };
    assert!(causes.contains("SHUTDOWN"), "{causes}");
    assert!(!causes.contains("SACK"), "{causes}");
}
