//! Bugs found by the stateful fuzzing of `tests/fuzz_loop.rs`, each reduced
//! to its smallest reproducer. A test is ignored while its bug is open;
//! remove the `#[ignore]` when the fix lands (`fuzz_loop` fails on the same
//! bugs until then). The others are fixed and stay as regression tests.

use std::net::SocketAddr;

use brisk_proto::{AssocId, Config, Endpoint, EndpointConfig, Event, OutgoingMessage, Time};

const A: &str = "10.0.0.1:9899";
const B: &str = "10.0.0.2:9899";

fn addr(s: &str) -> SocketAddr {
    s.parse().unwrap()
}

/// Two endpoints and a lossless, zero-latency wire.
struct Pair {
    now: Time,
    a: Endpoint,
    b: Endpoint,
    /// A's association.
    id: AssocId,
    a_events: Vec<(Time, Event)>,
    b_received: usize,
}

impl Pair {
    fn new(a_cfg: Config, b_cfg: Config) -> Self {
        let a = Endpoint::new(EndpointConfig::default(), [1; 32]);
        let b = Endpoint::new(
            EndpointConfig {
                accept_config: b_cfg,
                ..EndpointConfig::default()
            },
            [2; 32],
        );
        let now = Time::from_secs(1);
        let mut p = Pair {
            now,
            a,
            b,
            id: AssocId(0),
            a_events: Vec::new(),
            b_received: 0,
        };
        p.id = p.a.connect(now, addr(B), a_cfg).unwrap();
        for _ in 0..4 {
            p.pump();
        }
        p
    }

    /// Moves every packet both ways until neither side has one to send.
    fn pump(&mut self) {
        loop {
            let mut moved = false;
            let mut buf = Vec::new();
            while self.a.poll_transmit(self.now, &mut buf).is_some() {
                self.b.handle_datagram(self.now, addr(A), &buf);
                buf.clear();
                moved = true;
            }
            while self.b.poll_transmit(self.now, &mut buf).is_some() {
                self.a.handle_datagram(self.now, addr(B), &buf);
                buf.clear();
                moved = true;
            }
            while let Some((_, e)) = self.a.poll_event() {
                self.a_events.push((self.now, e));
            }
            while self.b.poll_event().is_some() {}
            if !moved {
                return;
            }
        }
    }

    fn b_reads(&mut self) {
        let ids: Vec<AssocId> = self.b.association_ids().collect();
        for id in ids {
            while self.b.association(id).unwrap().recv().is_some() {
                self.b_received += 1;
            }
        }
    }

    /// Runs the clock to `until`, B reading everything when `read`.
    fn run(&mut self, until: Time, read: bool) {
        for _ in 0..10_000 {
            self.pump();
            if read {
                self.b_reads();
            }
            let next = [self.a.poll_timeout(), self.b.poll_timeout()]
                .into_iter()
                .flatten()
                .min();
            match next {
                Some(t) if t <= until => {
                    self.now = self.now.max(t);
                    self.a.handle_timeout(self.now);
                    self.b.handle_timeout(self.now);
                }
                _ => break,
            }
        }
    }

    fn a_closed(&self) -> Vec<&Event> {
        self.a_events
            .iter()
            .map(|(_, e)| e)
            .filter(|e| matches!(e, Event::Closed(_)))
            .collect()
    }

    fn send(&mut self, len: usize) {
        let now = self.now;
        self.a
            .association(self.id)
            .unwrap()
            .send(now, OutgoingMessage::new(0, vec![1u8; len]))
            .unwrap();
    }
}

/// `Endpoint::poll_timeout()` returns a deadline in the past after
/// `handle_timeout(now)` and draining: the association's own deadline was the
/// SACK owed at once (the I bit), `handle_timeout` re-queued it, and
/// `poll_transmit` sent the SACK, leaving the heap entry stale. A driver that
/// sleeps until `poll_timeout()` wakes at once.
#[test]
fn poll_timeout_is_after_now_once_timers_ran() {
    let mut p = Pair::new(Config::rfc9260(), Config::rfc9260());
    let now = p.now;
    p.a.association(p.id)
        .unwrap()
        .send(
            now,
            OutgoingMessage::new(0, vec![1u8; 10]).immediate_sack(true),
        )
        .unwrap();
    let mut buf = Vec::new();
    while p.a.poll_transmit(now, &mut buf).is_some() {
        p.b.handle_datagram(now, addr(A), &buf);
        buf.clear();
    }
    let later = Time::from_millis(1100);
    p.b.handle_timeout(later);
    while p.b.poll_transmit(later, &mut buf).is_some() {
        buf.clear();
    }
    while p.b.poll_event().is_some() {}
    let deadline = p.b.poll_timeout();
    assert!(
        deadline.is_none_or(|t| t > later),
        "poll_timeout() = {deadline:?} after handle_timeout({later})"
    );
}

/// `send` charges a message `1 + len / max_payload` chunk overheads, but
/// `send_held()` charges the queue `messages + queued_bytes / max_payload`:
/// the floor of a sum exceeds the sum of floors, so a `send` that passed the
/// check can leave `send_held()` above `send_buffer` (fuzz_loop seed 0x1e:
/// 32990 > 32768). Here six 300-byte messages queued before the handshake.
#[test]

fn send_held_stays_within_send_buffer() {
    let cfg = Config {
        send_buffer: 4096,
        max_message_size: 4096,
        mtu: 576,
        ..Config::rfc9260()
    };
    let mut a = Endpoint::new(EndpointConfig::default(), [1; 32]);
    let now = Time::from_secs(1);
    let id = a.connect(now, addr(B), cfg).unwrap();
    let assoc = a.association(id).unwrap();
    let mut accepted = 0;
    while assoc
        .send(now, OutgoingMessage::new(0, vec![1u8; 300]))
        .is_ok()
    {
        accepted += 1;
        let held = assoc.send_held();
        assert!(
            held <= 4096,
            "after {accepted} messages: send_held() = {held} > send_buffer 4096"
        );
    }
}

/// `Config::validate` accepts `mtu: 128`, but the COOKIE ECHO (a 116-byte
/// cookie) never fits such a packet: it is dropped as too large at every T1
/// expiry and the handshake always times out, even on a perfect path.
#[test]
fn an_association_comes_up_with_the_smallest_valid_mtu() {
    let cfg = Config {
        mtu: 128,
        ..Config::rfc9260()
    };
    assert!(cfg.validate().is_ok());
    let mut p = Pair::new(cfg, Config::rfc9260());
    p.run(Time::from_secs(600), true);
    assert!(
        p.a_events.iter().any(|(_, e)| *e == Event::Connected),
        "A: {:?}",
        p.a_events
    );
}

/// A receiver with the smallest valid `receive_buffer` (1500) must still admit
/// a full-size DATA chunk (1424 + `rx::window::CHUNK_OVERHEAD` > 1500) into an
/// empty buffer; it once never did, and the sender closed with
/// `PeerUnreachable` though every retransmission was answered by a SACK.
#[test]

fn a_full_size_message_reaches_the_smallest_valid_receive_buffer() {
    let b_cfg = Config {
        receive_buffer: 1500,
        max_message_size: 50_000,
        ..Config::rfc9260()
    };
    assert!(b_cfg.validate().is_ok());
    let mut p = Pair::new(Config::rfc9260(), b_cfg);
    p.send(1424);
    p.run(Time::from_secs(600), true);
    assert_eq!(p.b_received, 1, "A closed: {:?}", p.a_closed());
}

/// The same, for a message between `receive_buffer` and `max_message_size`
/// (`validate` accepts `max_message_size > receive_buffer`): it can never be
/// reassembled, and the sender ends with `PeerUnreachable` on a lossless path.
#[test]

fn a_message_the_receiver_accepts_is_delivered() {
    let b_cfg = Config {
        receive_buffer: 16384,
        max_message_size: 20000,
        ..Config::rfc9260()
    };
    assert!(b_cfg.validate().is_ok());
    let mut p = Pair::new(Config::rfc9260(), b_cfg);
    p.send(16000);
    p.run(Time::from_secs(600), true);
    assert_eq!(p.b_received, 1, "A closed: {:?}", p.a_closed());
}

/// A receiver whose application stops reading keeps answering the sender's
/// window probes with SACKs, yet each probe's T3 expiry counts as an error and
/// the sender closes with `PeerUnreachable` (RFC 9260 6.1 A: window probes
/// answered by SACKs SHOULD NOT increment the error counter).
#[test]

fn a_receiver_that_stops_reading_is_not_declared_unreachable() {
    let b_cfg = Config {
        receive_buffer: 16384,
        ..Config::rfc9260()
    };
    let mut p = Pair::new(Config::rfc9260(), b_cfg);
    for _ in 0..200 {
        let now = p.now;
        let _ =
            p.a.association(p.id)
                .unwrap()
                .send(now, OutgoingMessage::new(0, vec![1u8; 100]));
    }
    p.run(Time::from_secs(1000), false);
    assert!(p.a_closed().is_empty(), "A: {:?}", p.a_closed());
}

/// The tail loss probe's PTO is `2 * SRTT` with no floor: after an RTT sample
/// of 0 (a SACK at the instant of sending, as on a fast link with a coarse
/// clock), new data arms the probe at `now`, so `poll_timeout()` is not after
/// `now` once `handle_timeout(now)` ran and transmits were drained, and the
/// probe retransmits at once (fuzz corpus `real-3-33.bin`).
#[test]

fn the_tail_loss_probe_is_never_due_at_once() {
    let mut p = Pair::new(Config::low_latency(), Config::rfc9260());
    for _ in 0..3 {
        p.send(1000);
    }
    p.pump(); // sent and acknowledged at the same instant: SRTT 0
    for _ in 0..3 {
        p.send(1000);
    }
    let now = p.now;
    p.a.handle_timeout(now);
    let mut buf = Vec::new();
    while p.a.poll_transmit(now, &mut buf).is_some() {
        buf.clear(); // new data goes out and arms the probe
    }
    while p.a.poll_event().is_some() {}
    let deadline = p.a.poll_timeout();
    assert!(
        deadline.is_none_or(|t| t > now),
        "poll_timeout() = {deadline:?} at now = {now}"
    );
}
