//! Chunks that break a rule get the answer RFC 9260 prescribes, are counted,
//! and leave the association's state intact.

mod harness;

use brisk_proto::wire::cause::ErrorCause;
use brisk_proto::wire::chunk::{Data, DataFlags, UnknownChunk, types};
use brisk_proto::wire::{Chunk, Packet};
use brisk_proto::{CloseReason, Config, Event, State};
use harness::{Dir, Fate, Pair, ms};

fn connected() -> Pair {
    let mut p = Pair::new(ms(10), Config::rfc9260());
    p.connect(Config::rfc9260());
    p
}

fn data(tsn: u32, stream_id: u16, payload: &[u8]) -> Chunk<'static> {
    Chunk::Data(Data {
        flags: DataFlags::UNFRAGMENTED,
        tsn,
        stream_id,
        ssn: 0,
        ppid: 0,
        payload: payload.to_vec().into(),
    })
}

/// The chunks of B's packets after index `from` in the log.
fn b_chunks_since(p: &Pair, from: usize) -> Vec<Chunk<'static>> {
    p.log[from..]
        .iter()
        .filter(|l| l.seen.dir == Dir::BtoA)
        .flat_map(|l| {
            let bytes = l.seen.bytes.clone();
            let packet = Packet::decode(&bytes).unwrap();
            packet
                .chunks
                .into_iter()
                .map(|c| match c {
                    Chunk::Error(e) => Chunk::Error(brisk_proto::wire::chunk::OperationError {
                        causes: e
                            .causes
                            .into_iter()
                            .map(|c| match c {
                                ErrorCause::UnrecognizedChunkType(v) => {
                                    ErrorCause::UnrecognizedChunkType(v.into_owned().into())
                                }
                                ErrorCause::InvalidStreamIdentifier { stream_id } => {
                                    ErrorCause::InvalidStreamIdentifier { stream_id }
                                }
                                ErrorCause::NoUserData { tsn } => ErrorCause::NoUserData { tsn },
                                _ => ErrorCause::OutOfResource,
                            })
                            .collect(),
                    }),
                    Chunk::Abort(a) => Chunk::Abort(brisk_proto::wire::chunk::Abort {
                        reflected_tag: a.reflected_tag,
                        causes: a
                            .causes
                            .into_iter()
                            .map(|c| match c {
                                ErrorCause::NoUserData { tsn } => ErrorCause::NoUserData { tsn },
                                _ => ErrorCause::OutOfResource,
                            })
                            .collect(),
                    }),
                    Chunk::Sack(s) => Chunk::Sack(s),
                    other => Chunk::Unknown(UnknownChunk::new(other.chunk_type(), 0, Vec::new())),
                })
                .collect::<Vec<_>>()
        })
        .collect()
}

#[test]
fn data_without_user_data_is_answered_with_abort_no_user_data() {
    let mut p = connected();
    let tsn = p.a_next_tsn();
    let mark = p.log.len();
    p.inject_to_b(vec![data(tsn, 0, b"")]);
    let sent = b_chunks_since(&p, mark);
    assert_eq!(
        sent,
        vec![Chunk::Abort(brisk_proto::wire::chunk::Abort {
            reflected_tag: false,
            causes: vec![ErrorCause::NoUserData { tsn }]
        })]
    );
    assert!(
        p.b_events
            .iter()
            .any(|e| matches!(e.2, Event::Closed(CloseReason::LocalAbort { .. })))
    );
}

#[test]
fn data_on_a_stream_that_does_not_exist_is_acked_and_reported() {
    let mut p = connected();
    let b = p.b_id.unwrap();
    let tsn = p.a_next_tsn();
    let mark = p.log.len();
    // B's SACK acknowledges a TSN A never sent: kept from A, which would
    // rightly abort (RFC 9260 15).
    p.rule(|s| (s.dir == Dir::BtoA).then_some(Fate::Drop));
    p.inject_to_b(vec![data(tsn, 999, b"x")]);
    p.run_for(ms(300));
    let sent = b_chunks_since(&p, mark);
    assert!(
        sent.contains(&Chunk::Error(brisk_proto::wire::chunk::OperationError {
            causes: vec![ErrorCause::InvalidStreamIdentifier { stream_id: 999 }]
        }))
    );
    let acked = sent
        .iter()
        .any(|c| matches!(c, Chunk::Sack(s) if s.cum_tsn_ack == tsn));
    assert!(acked, "the TSN is acknowledged: {sent:?}");
    assert!(p.b_recv_all().is_empty());
    assert_eq!(p.b.association(b).unwrap().state(), State::Established);
}

#[test]
fn an_unknown_chunk_is_reported_or_skipped_as_its_type_bits_say() {
    let mut p = connected();
    let tsn = p.a_next_tsn();
    // 0x7f: stop processing, report. The DATA after it is not processed.
    let mark = p.log.len();
    p.inject_to_b(vec![
        Chunk::Unknown(UnknownChunk::new(0x7f, 0, vec![1, 2, 3])),
        data(tsn, 0, b"skipped"),
    ]);
    p.run_for(ms(300));
    let sent = b_chunks_since(&p, mark);
    assert!(
        sent.contains(&Chunk::Error(brisk_proto::wire::chunk::OperationError {
            causes: vec![ErrorCause::UnrecognizedChunkType(
                vec![0x7f, 0, 0, 7, 1, 2, 3].into()
            )]
        }))
    );
    assert!(p.b_recv_all().is_empty());
    // 0xbf: skip silently and go on: the DATA after it is delivered.
    p.inject_to_b(vec![
        Chunk::Unknown(UnknownChunk::new(0xbf, 0, vec![9])),
        data(tsn, 0, b"delivered"),
    ]);
    p.run_for(ms(300));
    let got = p.b_recv_all();
    assert_eq!(got.len(), 1);
    assert_eq!(&got[0].payload[..], b"delivered");
    let errors = p
        .log
        .iter()
        .filter(|l| l.seen.dir == Dir::BtoA && l.seen.has(types::ERROR))
        .count();
    assert_eq!(errors, 1, "0xbf is not reported");
}
