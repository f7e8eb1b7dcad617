//! Stream schedulers (RFC 8260 3) on the wire, through the pair harness:
//! what the association actually sends, per stream and per packet.

mod harness;

use std::collections::BTreeMap;

use brisk_proto::wire::{Chunk, Packet};
use brisk_proto::{Config, OutgoingMessage, SchedulingError, StreamScheduler};
use harness::{Dir, Pair, ms};

fn connected(scheduler: StreamScheduler) -> Pair {
    let cfg = Config {
        stream_scheduler: scheduler,
        ..Config::rfc9260()
    };
    let mut p = Pair::new(ms(10), Config::rfc9260());
    p.connect(cfg);
    p
}

fn a_assoc(p: &mut Pair) -> &mut brisk_proto::Association {
    let id = p.a_id.expect("connected");
    p.a.association(id).expect("association")
}

/// One DATA chunk A sent for the first time: TSN, stream, payload bytes.
#[derive(Debug, Clone, Copy)]
struct Sent {
    tsn: u32,
    stream: u16,
    len: usize,
}

/// The DATA chunks of each packet A sent, in sending order.
fn data_per_packet(p: &Pair) -> Vec<Vec<Sent>> {
    p.data_packets(Dir::AtoB)
        .iter()
        .map(|l| {
            let packet = Packet::decode(&l.seen.bytes).expect("A sends valid packets");
            packet
                .chunks
                .iter()
                .filter_map(|c| match c {
                    Chunk::Data(d) => Some(Sent {
                        tsn: d.tsn,
                        stream: d.stream_id,
                        len: d.payload.len(),
                    }),
                    _ => None,
                })
                .collect()
        })
        .collect()
}

/// Every DATA chunk A sent, once per TSN, in TSN order (first transmissions).
fn data_in_tsn_order(p: &Pair) -> Vec<Sent> {
    let by_tsn: BTreeMap<u32, Sent> = data_per_packet(p)
        .into_iter()
        .flatten()
        .map(|s| (s.tsn, s))
        .collect();
    by_tsn.into_values().collect()
}

fn send_all(p: &mut Pair, streams: &[u16], len: usize) {
    for &stream in streams {
        p.a_send(OutgoingMessage::new(stream, vec![stream as u8; len]));
    }
}

#[test]
fn wfq_with_weights_1_to_3_gives_two_saturated_streams_a_1_to_3_byte_share() {
    let mut p = connected(StreamScheduler::Wfq);
    let a = a_assoc(&mut p);
    a.set_stream_weight(0, 1).unwrap();
    a.set_stream_weight(1, 3).unwrap();
    assert_eq!((a.stream_weight(0), a.stream_weight(1)), (Some(1), Some(3)));
    // The same bytes on each stream, in messages of different sizes: stream 0
    // 300 messages of 1,200 bytes, stream 1 900 of 400 (WFQ shares bytes).
    for i in 0..900 {
        if i % 3 == 0 {
            send_all(&mut p, &[0], 1200);
        }
        send_all(&mut p, &[1], 400);
    }
    p.run_for(ms(30_000));
    let sent = data_in_tsn_order(&p);
    let total: usize = sent.iter().map(|s| s.len).sum();
    assert_eq!(total, 2 * 360_000, "everything was sent");
    // Both streams are saturated until stream 1 sends its last byte.
    let last_of_1 = sent.iter().rposition(|s| s.stream == 1).unwrap();
    let mut bytes = [0usize; 2];
    for s in &sent[..=last_of_1] {
        bytes[usize::from(s.stream)] += s.len;
    }
    let ratio = bytes[1] as f64 / bytes[0] as f64;
    println!(
        "WFQ 1:3 on the wire: stream 0 {} bytes, stream 1 {} bytes, ratio 1:{ratio:.4}, \
         stream 1's share {:.4}",
        bytes[0],
        bytes[1],
        bytes[1] as f64 / (bytes[0] + bytes[1]) as f64
    );
    assert!((ratio / 3.0 - 1.0).abs() < 0.05, "1:{ratio}, {bytes:?}");
}

#[test]
fn round_robin_by_default_gives_two_saturated_streams_equal_bytes_of_equal_messages() {
    let mut p = connected(StreamScheduler::RoundRobin);
    assert_eq!(
        Config::rfc9260().stream_scheduler,
        StreamScheduler::RoundRobin
    );
    // Weights do not matter to round robin.
    a_assoc(&mut p).set_stream_weight(1, 3).unwrap();
    for _ in 0..300 {
        send_all(&mut p, &[0, 1], 1000);
    }
    p.run_for(ms(30_000));
    let sent = data_in_tsn_order(&p);
    let streams: Vec<u16> = sent.iter().map(|s| s.stream).collect();
    assert_eq!(streams.len(), 600);
    assert!(streams.chunks(2).all(|pair| pair == [0, 1]));
}

#[test]
fn fcfs_sends_across_streams_in_the_order_the_application_sent() {
    let mut p = connected(StreamScheduler::Fcfs);
    let order = [0u16, 0, 1, 2, 0, 1, 1, 2, 0, 0];
    send_all(&mut p, &order, 100);
    p.run_for(ms(1_000));
    let streams: Vec<u16> = data_in_tsn_order(&p).iter().map(|s| s.stream).collect();
    assert_eq!(streams, order);
    assert_eq!(p.b_recv_all().len(), order.len());
}

#[test]
fn rr_packet_keeps_each_packet_to_one_stream_and_turns_between_packets() {
    let mut p = connected(StreamScheduler::RoundRobinPacket);
    // 30 messages of 400 bytes per stream: three fit a packet.
    for _ in 0..30 {
        send_all(&mut p, &[0, 1, 2], 400);
    }
    p.run_for(ms(5_000));
    let packets = data_per_packet(&p);
    for pk in &packets {
        assert!(pk.iter().all(|s| s.stream == pk[0].stream), "{pk:?}");
    }
    // Streams take turns per packet; a packet cut short by cwnd ends its
    // stream's turn too.
    let streams: Vec<u16> = packets.iter().map(|pk| pk[0].stream).collect();
    let turns: Vec<u16> = (0..streams.len()).map(|i| (i % 3) as u16).collect();
    assert_eq!(streams, turns);
    // Within a packet, messages of its stream continue: most packets carry three.
    let full = packets.iter().filter(|pk| pk.len() == 3).count();
    assert!(full >= packets.len() - 2, "{full} of {}", packets.len());
    assert_eq!(p.b_recv_all().len(), 90);
}

#[test]
fn priority_sends_every_message_of_the_lower_value_first_and_equal_values_take_turns() {
    let mut p = connected(StreamScheduler::Priority);
    let a = a_assoc(&mut p);
    a.set_stream_priority(0, 9).unwrap();
    a.set_stream_priority(1, 1).unwrap();
    a.set_stream_priority(2, 1).unwrap();
    assert_eq!(a.stream_priority(1), Some(1));
    send_all(&mut p, &[0, 0, 1, 1, 1, 2, 2, 0], 100);
    p.run_for(ms(1_000));
    let streams: Vec<u16> = data_in_tsn_order(&p).iter().map(|s| s.stream).collect();
    assert_eq!(streams, [1, 2, 1, 2, 1, 0, 0, 0]);
}

#[test]
fn stream_parameters_of_a_stream_that_does_not_exist_are_refused() {
    let mut p = connected(StreamScheduler::Wfq);
    let a = a_assoc(&mut p);
    let streams = a.outbound_streams();
    let unknown = SchedulingError::InvalidStream {
        stream_id: streams,
        outbound_streams: streams,
    };
    assert_eq!(a.set_stream_priority(streams, 1), Err(unknown));
    assert_eq!(a.set_stream_weight(streams, 2), Err(unknown));
    assert_eq!(a.set_stream_weight(0, 0), Err(SchedulingError::ZeroWeight));
    assert_eq!(a.stream_weight(streams), None);
}

#[test]
fn the_scheduler_can_change_while_messages_wait() {
    let mut p = connected(StreamScheduler::RoundRobin);
    let order = [0u16, 0, 0, 1, 1, 2];
    send_all(&mut p, &order, 100);
    let a = a_assoc(&mut p);
    a.set_stream_scheduler(StreamScheduler::Fcfs);
    assert_eq!(a.stream_scheduler(), StreamScheduler::Fcfs);
    assert_eq!(a.config().stream_scheduler, StreamScheduler::Fcfs);
    p.run_for(ms(1_000));
    let streams: Vec<u16> = data_in_tsn_order(&p).iter().map(|s| s.stream).collect();
    assert_eq!(streams, order);
}
