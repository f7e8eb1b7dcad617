//! Data channels (RFC 8831, RFC 8832) between two Brisk endpoints on
//! loopback, and against a peer that speaks raw SCTP to check the wire: the
//! DCEP bytes, the PPIDs, the ordering rule before the ACK, and what a hostile
//! peer can and cannot make us do.

use std::time::Duration;

use brisk::datachannel::{
    ChannelOptions, CloseReason, DataChannelConfig, DataChannels, Error as DcError, Message, Role,
};
use brisk::{
    Association, Config, Endpoint, IncomingMessage, Reliability, ResetDirection, SendOptions,
    StreamEvent,
};
use bytes::Bytes;

#[path = "common/endpoints.rs"]
mod endpoints;
use endpoints::{associate, client_endpoint, open_accepted, server_endpoint, within};

// The close tests use part of the interop tests' relay.
#[allow(dead_code)]
#[path = "../../../tests/interop/relay.rs"]
mod relay;
use relay::{Relay, Rule, Side};

fn config() -> Config {
    Config {
        rto_initial: Duration::from_millis(50),
        rto_min: Duration::from_millis(50),
        rto_max: Duration::from_millis(200),
        partial_reliability: true,
        stream_reconfig: true,
        outbound_streams: 4096,
        max_inbound_streams: 4096,
        ..Config::rfc9260()
    }
}

/// Two associated endpoints: (client's association, server's association).
async fn pair() -> (Association, Association, Endpoint, Endpoint) {
    let server = server_endpoint(config()).await;
    let client = client_endpoint().await;
    let (a, b) = associate(&client, &server, config()).await;
    (a, b, client, server)
}

/// Data channels over `pair`: (the client's, the server's, endpoints).
async fn channel_pair() -> (DataChannels, DataChannels, Endpoint, Endpoint) {
    let (a, b, ea, eb) = pair().await;
    (
        DataChannels::new(a, Role::Client),
        DataChannels::new(b, Role::Server),
        ea,
        eb,
    )
}

async fn raw_recv(assoc: &Association) -> IncomingMessage {
    within(assoc.recv()).await.unwrap()
}

fn dcep() -> SendOptions {
    SendOptions {
        ppid: 50,
        ..SendOptions::default()
    }
}

const ACK: &[u8] = &[0x02];

/// A DATA_CHANNEL_OPEN, reliable and ordered, with `label`.
fn open_bytes(label: &str) -> Vec<u8> {
    open_bytes_with(label, "")
}

/// A DATA_CHANNEL_OPEN, reliable and ordered, with `label` and `protocol`.
fn open_bytes_with(label: &str, protocol: &str) -> Vec<u8> {
    let mut b = vec![0x03, 0x00, 0x01, 0x00, 0, 0, 0, 0];
    b.extend_from_slice(&(label.len() as u16).to_be_bytes());
    b.extend_from_slice(&(protocol.len() as u16).to_be_bytes());
    b.extend_from_slice(label.as_bytes());
    b.extend_from_slice(protocol.as_bytes());
    b
}

#[tokio::test]
async fn channels_open_from_each_side_and_carry_text_binary_and_empty_messages() {
    let (client, server, _ea, _eb) = channel_pair().await;

    let opts = ChannelOptions {
        protocol: "chat-v1".into(),
        priority: 512,
        ..ChannelOptions::default()
    };
    let (c1, s1) = open_accepted(&client, &server, "from-client", opts.clone()).await;
    assert_eq!(c1.stream_id(), 0, "the DTLS client opens even ids");
    assert_eq!(s1.stream_id(), 0);
    assert_eq!(s1.label(), "from-client");
    assert_eq!(s1.protocol(), "chat-v1");
    assert_eq!(s1.options().priority, 512);
    assert!(s1.options().ordered);

    let (s2, c2) = open_accepted(&server, &client, "from-server", ChannelOptions::default()).await;
    assert_eq!(s2.stream_id(), 1, "the DTLS server opens odd ids");
    assert_eq!(c2.label(), "from-server");

    let sent = [
        Message::Text("héllo".into()),
        Message::Binary(Bytes::from_static(&[0, 1, 2, 255])),
        Message::Text(String::new()),
        Message::Binary(Bytes::new()),
    ];
    for m in &sent {
        c1.send(m.clone()).await.unwrap();
        s2.send(m.clone()).await.unwrap();
    }
    for m in &sent {
        assert_eq!(&within(s1.recv()).await.unwrap(), m);
        assert_eq!(&within(c2.recv()).await.unwrap(), m);
    }
    // And back the other way on the same channels.
    s1.send_text("reply").await.unwrap();
    c2.send_binary(&b"bin"[..]).await.unwrap();
    assert_eq!(
        within(c1.recv()).await.unwrap(),
        Message::Text("reply".into())
    );
    assert_eq!(
        within(s2.recv()).await.unwrap(),
        Message::Binary(Bytes::from_static(b"bin"))
    );
    for st in [client.stats(), server.stats()] {
        assert_eq!((st.opens_received, st.opens_refused), (1, 0), "{st:?}");
        assert_eq!(st.messages_discarded + st.data_on_unopened_stream, 0);
    }
}

/// A raw peer checks every byte: the OPEN (RFC 8832 5.1), that messages sent
/// before the ACK go ordered and after it unordered (RFC 8832 6), and the
/// PPIDs of text, binary and empty messages (RFC 8831 6.6).
#[tokio::test]
async fn the_wire_carries_rfc_dcep_bytes_ppids_and_the_ordering_rule() {
    let (a, raw, _ea, _eb) = pair().await;
    let client = DataChannels::new(a, Role::Client);
    let opts = ChannelOptions {
        ordered: false,
        reliability: Reliability::MaxRetransmits(0),
        protocol: "p".into(),
        priority: 128,
        negotiated: None,
    };
    let ch = client.open_unacked("lbl", opts).await.unwrap();
    assert!(!ch.is_acked());
    ch.send_text("early").await.unwrap();

    let open = raw_recv(&raw).await;
    assert_eq!((open.stream_id, open.ppid), (0, 50));
    assert!(!open.unordered, "DCEP messages are sent ordered");
    assert_eq!(
        &open.payload[..],
        [
            0x03, 0x81, 0x00, 0x80, 0, 0, 0, 0, 0x00, 0x03, 0x00, 0x01, b'l', b'b', b'l', b'p'
        ]
    );
    let early = raw_recv(&raw).await;
    assert_eq!((early.ppid, &early.payload[..]), (51, &b"early"[..]));
    assert!(!early.unordered, "before the ACK, messages go ordered");

    raw.send(0, ACK, dcep()).await.unwrap();
    within(ch.wait_acked()).await.unwrap();
    let expected: [(Message, u32, &[u8]); 4] = [
        (Message::Text("t".into()), 51, b"t"),
        (Message::Binary(Bytes::from_static(b"b")), 53, b"b"),
        (Message::Text(String::new()), 56, &[0]),
        (Message::Binary(Bytes::new()), 57, &[0]),
    ];
    for (m, _, _) in &expected {
        ch.send(m.clone()).await.unwrap();
    }
    for (_, ppid, bytes) in expected {
        let m = raw_recv(&raw).await;
        assert_eq!((m.stream_id, m.ppid, &m.payload[..]), (0, ppid, bytes));
        assert!(m.unordered, "after the ACK the channel's own ordering");
    }

    // Received empty PPIDs ignore their byte; the channel delivers both kinds.
    for (ppid, payload) in [(56, &b"\x00"[..]), (57, b"\x00"), (51, "ü".as_bytes())] {
        let opts = SendOptions {
            ppid,
            ..SendOptions::default()
        };
        raw.send(0, payload, opts).await.unwrap();
    }
    assert_eq!(
        within(ch.recv()).await.unwrap(),
        Message::Text(String::new())
    );
    assert_eq!(
        within(ch.recv()).await.unwrap(),
        Message::Binary(Bytes::new())
    );
    assert_eq!(within(ch.recv()).await.unwrap(), Message::Text("ü".into()));
}

/// The raw peer opens a channel: Brisk answers with a one-byte ACK on the
/// same stream, and `accept` hands over the channel with its options.
#[tokio::test]
async fn an_open_from_the_peer_is_acked_on_its_stream() {
    let (a, raw, _ea, _eb) = pair().await;
    let client = DataChannels::new(a, Role::Client);
    let mut open = open_bytes("timed");
    open[1] = 0x82; // PARTIAL_RELIABLE_TIMED_UNORDERED
    open[4..8].copy_from_slice(&1500u32.to_be_bytes());
    raw.send(7, open, dcep()).await.unwrap();
    let ack = raw_recv(&raw).await;
    assert_eq!((ack.stream_id, ack.ppid, &ack.payload[..]), (7, 50, ACK));
    let ch = within(client.accept()).await.unwrap();
    assert_eq!((ch.stream_id(), ch.label()), (7, "timed"));
    assert!(!ch.options().ordered);
    assert_eq!(
        ch.options().reliability,
        Reliability::Lifetime(Duration::from_millis(1500))
    );
    ch.send_binary(&b"x"[..]).await.unwrap();
    let m = raw_recv(&raw).await;
    assert_eq!((m.stream_id, m.ppid, m.unordered), (7, 53, true));
}

#[tokio::test]
async fn unreliable_and_timed_channels_carry_messages_both_ways() {
    let (client, server, _ea, _eb) = channel_pair().await;
    for reliability in [
        Reliability::MaxRetransmits(0),
        Reliability::Lifetime(Duration::from_millis(300)),
    ] {
        let opts = ChannelOptions {
            ordered: false,
            reliability,
            ..ChannelOptions::default()
        };
        let (c, s) = open_accepted(&client, &server, "pr", opts.clone()).await;
        assert_eq!(s.options(), &opts);
        for i in 0..50u32 {
            c.send_binary(Bytes::from(i.to_be_bytes().to_vec()))
                .await
                .unwrap();
            s.send_text(&i.to_string()).await.unwrap();
        }
        // No loss on loopback: every message arrives, in any order.
        let mut got_s: Vec<u32> = Vec::new();
        let mut got_c: Vec<u32> = Vec::new();
        for _ in 0..50 {
            match within(s.recv()).await.unwrap() {
                Message::Binary(b) => got_s.push(u32::from_be_bytes(b[..].try_into().unwrap())),
                other => panic!("{other:?}"),
            }
            match within(c.recv()).await.unwrap() {
                Message::Text(t) => got_c.push(t.parse().unwrap()),
                other => panic!("{other:?}"),
            }
        }
        got_s.sort();
        got_c.sort();
        assert_eq!(got_s, (0..50).collect::<Vec<_>>());
        assert_eq!(got_c, (0..50).collect::<Vec<_>>());
    }
}

#[tokio::test]
async fn a_partially_reliable_channel_needs_partial_reliability_negotiated() {
    let server = server_endpoint(Config::rfc9260()).await;
    let client = client_endpoint().await;
    let a = client
        .connect(server.local_addr(), Config::rfc9260())
        .await
        .unwrap();
    let channels = DataChannels::new(a, Role::Client);
    let opts = ChannelOptions {
        reliability: Reliability::MaxRetransmits(0),
        ..ChannelOptions::default()
    };
    let err = channels.open("x", opts).await.unwrap_err();
    assert!(
        matches!(err, DcError::PartialReliabilityNotNegotiated),
        "{err}"
    );
    // Nor can a channel be closed without stream reconfiguration.
    let ch = channels
        .open_unacked("y", ChannelOptions::default())
        .await
        .unwrap();
    assert!(matches!(
        ch.close().await,
        Err(DcError::StreamResetNotNegotiated)
    ));
}

#[tokio::test]
async fn negotiated_channels_open_without_dcep() {
    let (client, server, _ea, _eb) = channel_pair().await;
    let opts = ChannelOptions {
        negotiated: Some(100),
        ..ChannelOptions::default()
    };
    let c = within(client.open("n", opts.clone())).await.unwrap();
    let s = within(server.open("n", opts)).await.unwrap();
    assert!(c.is_acked() && s.is_acked());
    c.send_text("over").await.unwrap();
    s.send_text("out").await.unwrap();
    assert_eq!(
        within(s.recv()).await.unwrap(),
        Message::Text("over".into())
    );
    assert_eq!(within(c.recv()).await.unwrap(), Message::Text("out".into()));
    assert_eq!(server.stats().opens_received, 0);
    assert_eq!(client.stats().opens_received, 0);
    // The id is taken on this end now.
    let again = ChannelOptions {
        negotiated: Some(100),
        ..ChannelOptions::default()
    };
    assert!(matches!(
        client.open("dup", again).await,
        Err(DcError::StreamInUse(100))
    ));
}

/// A hostile peer: thousands of OPENs, DCEP garbage, data on streams with no
/// channel, OPENs with our parity or on a used stream, stray ACKs. Each is
/// refused or discarded as RFC 8832 6 says, counted, and bounded by the
/// configuration; the association and the channels that were opened properly
/// carry on.
#[tokio::test]
async fn a_hostile_peer_is_refused_counted_and_bounded() {
    let (a, raw, _ea, _eb) = pair().await;
    let cfg = DataChannelConfig {
        max_channels: 40,
        max_pending_accepts: 8,
        receive_queue_messages: 16,
        receive_queue_bytes: 4096,
        ..DataChannelConfig::default()
    };
    let victim = DataChannels::with_config(a, Role::Client, cfg);
    // 2000 OPENs on the peer's (odd) ids: the first 8 wait for accept, the
    // rest are refused without an ACK.
    for i in 0..2000u16 {
        raw.send(2 * i + 1, open_bytes("flood"), dcep())
            .await
            .unwrap();
    }
    let mut acks = Vec::new();
    for _ in 0..8 {
        let m = raw_recv(&raw).await;
        assert_eq!((m.ppid, &m.payload[..]), (50, ACK));
        acks.push(m.stream_id);
    }
    assert_eq!(acks, [1, 3, 5, 7, 9, 11, 13, 15]);
    // OPEN with our parity, garbage DCEP on unused and used streams, data
    // and an ACK on streams with no channel.
    raw.send(4, open_bytes("wrong parity"), dcep())
        .await
        .unwrap();
    raw.send(4001, &[0x03, 0x00, 0xff][..], dcep())
        .await
        .unwrap();
    raw.send(4003, &[0x77][..], dcep()).await.unwrap();
    raw.send(1, &[0x03][..], dcep()).await.unwrap();
    raw.send(4005, &[0x02][..], dcep()).await.unwrap();
    // RFC 8832 6: an OPEN on a used stream closes the channel there.
    raw.send(5, open_bytes("again"), dcep()).await.unwrap();
    let text = SendOptions {
        ppid: 51,
        ..SendOptions::default()
    };
    for s in [2u16, 4007, 4009] {
        raw.send(s, &b"nobody"[..], text).await.unwrap();
    }
    // A deprecated PPID and invalid UTF-8 on an open channel.
    raw.send(3, &b"partial"[..], SendOptions { ppid: 54, ..text })
        .await
        .unwrap();
    raw.send(3, &[0xff, 0xfe][..], text).await.unwrap();
    // Then a marker, so we know all of the above was handled.
    raw.send(3, &b"marker"[..], text).await.unwrap();
    // Everything is handled before anything is accepted (accepting makes room).
    within(async {
        while victim.stats().opens_received < 2004 {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await;
    let chans: Vec<_> = {
        let mut v = Vec::new();
        for _ in 0..8 {
            v.push(within(victim.accept()).await.unwrap());
        }
        v
    };
    let c3 = chans.iter().find(|c| c.stream_id() == 3).unwrap();
    assert_eq!(
        within(c3.recv()).await.unwrap(),
        Message::Text("marker".into())
    );
    let st = victim.stats();
    assert_eq!(st.opens_received, 2000 + 1 + 2 + 1, "{st:?}");
    assert_eq!(st.opens_refused, 1992 + 1 + 2 + 1, "{st:?}");
    assert_eq!(st.dcep_malformed, 3, "{st:?}");
    assert_eq!(st.unexpected_acks, 1, "{st:?}");
    assert_eq!(st.data_on_unopened_stream, 3, "{st:?}");
    assert_eq!(st.messages_discarded, 2, "{st:?}");
    let c5 = chans.iter().find(|c| c.stream_id() == 5).unwrap();
    assert!(
        matches!(
            within(c5.recv()).await,
            Err(DcError::Closed(CloseReason::ProtocolViolation(_)))
        ),
        "the channel on stream 5 is closed"
    );
    // No ACK ever went out for a refused OPEN: nothing more is waiting.
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(raw.try_recv().is_none(), "an ACK for a refused OPEN");

    // Flood a channel the application does not read: its queue stops at 16
    // messages; nothing is lost, the rest waits in the association.
    let c1 = chans.iter().find(|c| c.stream_id() == 1).unwrap();
    let n = 200u32;
    let feeder = {
        let raw = raw.clone();
        tokio::spawn(async move {
            for i in 0..n {
                raw.send(
                    1,
                    Bytes::from(i.to_be_bytes().to_vec()),
                    SendOptions { ppid: 53, ..text },
                )
                .await
                .unwrap();
            }
        })
    };
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(
        c1.queued(),
        (16, 64),
        "the queue is bounded by the configuration"
    );
    for i in 0..n {
        let m = within(c1.recv()).await.unwrap();
        assert_eq!(m, Message::Binary(Bytes::from(i.to_be_bytes().to_vec())));
    }
    feeder.await.unwrap();
    // The victim still opens channels of its own (even ids).
    let mine = victim
        .open_unacked("mine", ChannelOptions::default())
        .await
        .unwrap();
    assert_eq!(mine.stream_id(), 0);
    let open = raw_recv(&raw).await;
    assert_eq!((open.stream_id, open.payload[0]), (0, 0x03));
}

/// RFC 8831 6.7: the closing side resets its outgoing stream, the other
/// resets its own in turn; messages sent before the close all arrive, then
/// `recv` says closed; the stream id is free again afterwards.
#[tokio::test]
async fn closing_from_either_side_resets_both_streams_and_frees_the_id() {
    let (client, server, _ea, _eb) = channel_pair().await;
    for closer_is_client in [true, false] {
        let (opener, acceptor) = if closer_is_client {
            (&client, &server)
        } else {
            (&server, &client)
        };
        let (mine, theirs) = open_accepted(opener, acceptor, "c", ChannelOptions::default()).await;
        let id = mine.stream_id();
        for i in 0..100u32 {
            mine.send_text(&i.to_string()).await.unwrap();
        }
        theirs.send_text("from the other side").await.unwrap();
        within(mine.close()).await.unwrap();
        assert!(matches!(
            mine.send_text("late").await,
            Err(DcError::Closed(CloseReason::Local))
        ));
        for i in 0..100u32 {
            assert_eq!(
                within(theirs.recv()).await.unwrap(),
                Message::Text(i.to_string())
            );
        }
        assert!(matches!(
            within(theirs.recv()).await,
            Err(DcError::Closed(CloseReason::PeerClosed))
        ));
        assert!(matches!(
            theirs.send_text("after").await,
            Err(DcError::Closed(CloseReason::PeerClosed))
        ));
        // What the peer sent before its reset still reaches the closer.
        assert_eq!(
            within(mine.recv()).await.unwrap(),
            Message::Text("from the other side".into())
        );
        assert!(matches!(
            within(mine.recv()).await,
            Err(DcError::Closed(CloseReason::Local))
        ));
        // The id is free again, on both ends.
        let (again, accepted) =
            open_accepted(opener, acceptor, "again", ChannelOptions::default()).await;
        assert_eq!((again.stream_id(), accepted.label()), (id, "again"));
        again.send_binary(&b"new"[..]).await.unwrap();
        assert_eq!(
            within(accepted.recv()).await.unwrap(),
            Message::Binary(Bytes::from_static(b"new"))
        );
        // The old handles still say closed, not the new channel's messages.
        assert!(theirs.try_recv().is_some_and(|r| r.is_err()));
    }
}

/// A peer that refuses our OPEN resets the stream instead of ACKing (RFC
/// 8832 6): `open` fails saying so. An OPEN we refuse gets a reset too.
#[tokio::test]
async fn refusals_are_stream_resets_both_ways() {
    let (a, raw, _ea, _eb) = pair().await;
    let client = DataChannels::new(a, Role::Client);
    let opening = tokio::spawn({
        let client = client.clone();
        async move { client.open("no", ChannelOptions::default()).await }
    });
    let open = raw_recv(&raw).await;
    assert_eq!((open.stream_id, open.ppid), (0, 50));
    raw.reset_streams(&[0]).unwrap();
    let refused = within(opening).await.unwrap();
    assert!(
        matches!(refused, Err(DcError::Closed(CloseReason::Refused))),
        "{refused:?}"
    );
    // We answered by resetting ours: the raw peer sees both resets.
    let mut seen = Vec::new();
    while seen.len() < 2 {
        match within(raw.stream_event()).await.unwrap() {
            StreamEvent::Reset { direction, streams } => seen.push((direction, streams)),
            other => panic!("{other:?}"),
        }
    }
    seen.sort_by_key(|(d, _)| *d == ResetDirection::Incoming);
    assert_eq!(
        seen,
        [
            (ResetDirection::Outgoing, vec![0]),
            (ResetDirection::Incoming, vec![0])
        ]
    );

    // An OPEN with our parity: no ACK, the stream is reset.
    raw.send(2, open_bytes("wrong parity"), dcep())
        .await
        .unwrap();
    match within(raw.stream_event()).await.unwrap() {
        StreamEvent::Reset { direction, streams } => {
            assert_eq!((direction, streams), (ResetDirection::Incoming, vec![2]))
        }
        other => panic!("{other:?}"),
    }
    assert!(raw.try_recv().is_none(), "no ACK");
    assert_eq!(client.stats().opens_refused, 1);
}

/// The next stream event of `assoc` that is a reset.
async fn next_reset(assoc: &Association) -> (ResetDirection, Vec<u16>) {
    loop {
        if let StreamEvent::Reset { direction, streams } =
            within(assoc.stream_event()).await.unwrap()
        {
            return (direction, streams);
        }
    }
}

/// A peer opens channels with the longest labels and protocols RFC 8832
/// allows, in a loop, while the application accepts them all: an OPEN over
/// a bound is refused (no ACK, its stream is reset, RFC 8831 6.7) and
/// counted, and the labels and protocols held stay within the
/// association's metadata budget.
#[tokio::test]
async fn an_open_flood_with_maximum_labels_stays_within_the_metadata_budget() {
    let (a, raw, _ea, _eb) = pair().await;
    let cfg = DataChannelConfig {
        max_channels: 4096,
        max_pending_accepts: 4096,
        ..DataChannelConfig::default()
    };
    let budget = cfg.metadata_budget_bytes;
    let victim = DataChannels::with_config(a, Role::Client, cfg);
    // A 65535-byte label: refused by a reset of its stream, never ACKed.
    raw.send(1, open_bytes(&"l".repeat(65_535)), dcep())
        .await
        .unwrap();
    assert_eq!(next_reset(&raw).await, (ResetDirection::Incoming, vec![1]));
    assert!(raw.try_recv().is_none(), "an ACK for an oversized OPEN");
    // Then 2,000 OPENs with a label and a protocol of 1,024 bytes each
    // (the default bounds) and a few at RFC 8832's maximum.
    let n = 2000u16;
    for i in 1..=n {
        let (label, protocol) = if i % 100 == 0 {
            ("m".repeat(65_535), "p".repeat(65_535))
        } else {
            ("l".repeat(1024), "p".repeat(1024))
        };
        raw.send(2 * i + 1, open_bytes_with(&label, &protocol), dcep())
            .await
            .unwrap();
    }
    within(async {
        while victim.stats().opens_received < u64::from(n) + 1 {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await;
    let fit = budget / 2048;
    let mut held = Vec::new();
    for _ in 0..fit {
        held.push(within(victim.accept()).await.unwrap());
    }
    assert!(held.iter().all(|c| c.label().len() == 1024));
    let st = victim.stats();
    assert!(st.metadata_bytes <= budget, "{st:?}");
    assert_eq!(st.metadata_bytes, fit * 2048, "{st:?}");
    let refused = u64::from(n) + 1 - fit as u64;
    assert_eq!(st.opens_refused, refused, "{st:?}");
    assert_eq!(st.opens_refused_metadata, refused, "{st:?}");
    // Closing channels frees their share of the budget for new ones.
    let first = held.remove(0);
    let freed_id = first.stream_id();
    drop(first);
    raw.reset_streams(&[freed_id]).unwrap();
    within(async {
        while victim.stats().metadata_bytes > budget - 2048 {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await;
    raw.send(
        4093,
        open_bytes_with(&"l".repeat(1024), &"p".repeat(1024)),
        dcep(),
    )
    .await
    .unwrap();
    let again = within(victim.accept()).await.unwrap();
    assert_eq!(again.stream_id(), 4093);
    assert_eq!(victim.stats().metadata_bytes, fit * 2048);
}

/// Data channels of ours (the client's) over an association with `raw`, a
/// peer without a data channel layer, that never resets its streams of its
/// own accord. `close_timeout` bounds our closes.
fn closing_config(close_timeout: Duration) -> DataChannelConfig {
    DataChannelConfig {
        close_timeout,
        ..DataChannelConfig::default()
    }
}

/// Our channel on stream 0, acknowledged by the raw peer.
async fn raw_acked_channel(
    ours: &DataChannels,
    raw: &Association,
) -> brisk::datachannel::DataChannel {
    let ch = ours
        .open_unacked("c", ChannelOptions::default())
        .await
        .unwrap();
    let open = raw_recv(raw).await;
    assert_eq!((open.stream_id, open.ppid), (0, 50));
    raw.send(0, ACK, dcep()).await.unwrap();
    within(ch.wait_acked()).await.unwrap();
    ch
}

/// RFC 8831 6.7: the peer should reset its outgoing stream when ours is
/// reset; one that does not (as a peer whose own request was answered "in
/// progress" and never asked again) is asked to, with an Incoming SSN Reset
/// Request (RFC 6525 5.1.3), half way through the close's bound; `close`
/// then completes and the stream id is free again.
#[tokio::test]
async fn a_close_the_peer_does_not_answer_asks_for_its_incoming_reset() {
    let (a, raw, _ea, _eb) = pair().await;
    let ours = DataChannels::with_config(a, Role::Client, closing_config(Duration::from_secs(1)));
    let ch = raw_acked_channel(&ours, &raw).await;
    within(ch.close()).await.unwrap();
    // The raw peer saw our reset, and then reset its own only when asked.
    assert_eq!(next_reset(&raw).await, (ResetDirection::Incoming, vec![0]));
    assert_eq!(next_reset(&raw).await, (ResetDirection::Outgoing, vec![0]));
    let st = ours.stats();
    assert_eq!((st.incoming_resets_requested, st.closes_timed_out), (1, 0));
    let again = ours
        .open_unacked("again", ChannelOptions::default())
        .await
        .unwrap();
    assert_eq!(
        again.stream_id(),
        0,
        "both directions reset: the id is free"
    );
}

/// A peer that answers no stream reconfiguration at all: `close` gives up
/// after its bound with `CloseTimedOut`, counted; the channel is closed,
/// and its stream id is not given to a new channel while it is not clean.
#[tokio::test]
async fn a_close_the_peer_never_completes_gives_up_after_its_bound() {
    // The relay drops every RE-CONFIG chunk the peer (side B) sends.
    let rule = Rule::transmissions(Side::B, &[], 0).and_chunks(130, u32::MAX);
    let server = server_endpoint(config()).await;
    let client = client_endpoint().await;
    let relay = Relay::start(client.local_addr(), server.local_addr(), rule);
    // Our RE-CONFIG goes unanswered, retransmitted: the association's error
    // count must not end it first.
    let cfg = Config {
        assoc_max_retrans: 1000,
        path_max_retrans: 1000,
        ..config()
    };
    let a = client.connect(relay.addr(), cfg).await.unwrap();
    let raw = server.accept().await.unwrap();
    let bound = Duration::from_millis(400);
    let ours = DataChannels::with_config(a, Role::Client, closing_config(bound));
    let ch = raw_acked_channel(&ours, &raw).await;
    let closed = within(ch.close()).await;
    assert!(
        matches!(closed, Err(DcError::CloseTimedOut { stream: 0, after }) if after == bound),
        "{closed:?}"
    );
    let st = ours.stats();
    assert_eq!((st.incoming_resets_requested, st.closes_timed_out), (1, 1));
    assert!(matches!(
        ch.send_text("late").await,
        Err(DcError::Closed(CloseReason::Local))
    ));
    assert!(matches!(
        ch.try_recv(),
        Some(Err(DcError::Closed(CloseReason::Local)))
    ));
    let next = ours
        .open_unacked("next", ChannelOptions::default())
        .await
        .unwrap();
    assert_eq!(next.stream_id(), 2, "stream 0 is not clean");
    assert!(relay.chunk_drops() > 0);
}

/// Dropping a channel closes it as `close` does: a peer that does not reset
/// its side is asked to half way through the bound (RFC 6525 5.1.3), and
/// the id is free again once both directions are reset.
#[tokio::test]
async fn a_dropped_channel_the_peer_does_not_close_asks_for_its_incoming_reset() {
    let (a, raw, _ea, _eb) = pair().await;
    let bound = Duration::from_millis(400);
    let ours = DataChannels::with_config(a, Role::Client, closing_config(bound));
    let ch = raw_acked_channel(&ours, &raw).await;
    drop(ch);
    assert_eq!(next_reset(&raw).await, (ResetDirection::Incoming, vec![0]));
    assert_eq!(next_reset(&raw).await, (ResetDirection::Outgoing, vec![0]));
    within(async {
        while ours.stats().metadata_bytes > 0 {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await;
    assert_eq!(ours.stats().incoming_resets_requested, 1);
    let again = ours
        .open_unacked("again", ChannelOptions::default())
        .await
        .unwrap();
    assert_eq!(
        again.stream_id(),
        0,
        "both directions reset: the id is free"
    );
}

// The OPEN flood world: a raw peer and our data channels under random
// steps, with a model of what the channel table must hold.

/// Bounds of the world's channel table, small so that random steps reach them.
fn world_config() -> DataChannelConfig {
    DataChannelConfig {
        max_channels: 24,
        max_pending_accepts: 64,
        max_label_bytes: 300,
        max_protocol_bytes: 100,
        metadata_budget_bytes: 2000,
        close_timeout: Duration::from_secs(1),
        ..DataChannelConfig::default()
    }
}

/// An open channel of the world: our handle and what it is charged.
struct Live {
    ch: brisk::datachannel::DataChannel,
    bytes: usize,
}

/// What our channel table must hold, step after step.
struct World {
    rng: rand::rngs::StdRng,
    ours: DataChannels,
    raw: Association,
    cfg: DataChannelConfig,
    /// Open channels by stream id.
    live: std::collections::BTreeMap<u16, Live>,
    /// Messages sent each way, each with a unique text.
    sent: u64,
    opens_received: u64,
}

/// Whether `ev` is a reset of `streams` in `direction`.
fn is_reset(ev: &StreamEvent, dir: ResetDirection, stream: u16) -> bool {
    matches!(ev, StreamEvent::Reset { direction, streams } if *direction == dir && streams.contains(&stream))
}

impl World {
    fn charged(&self) -> usize {
        self.live.values().map(|l| l.bytes).sum()
    }

    fn in_table(&self) -> usize {
        self.live.len()
    }

    fn used(&self, s: u16) -> bool {
        self.live.contains_key(&s)
    }

    /// A label or protocol of a random size: mostly short, sometimes near
    /// the bound, rarely RFC 8832's maximum.
    fn text(&mut self, bound: usize, min: usize) -> String {
        use rand::Rng;
        let len = match self.rng.random_range(0..50) {
            0 => 65_535,
            1..=8 => self.rng.random_range(bound - 20..bound + 20),
            _ => self.rng.random_range(min..40),
        };
        "x".repeat(len)
    }

    /// Waits for the raw peer's reset of `stream` in `dir`, skipping others.
    async fn raw_reset(&self, dir: ResetDirection, stream: u16) {
        while !is_reset(&within(self.raw.stream_event()).await.unwrap(), dir, stream) {}
    }

    /// The invariants, once what the last step set going has settled:
    /// the metadata held is what the model says and within the budget.
    async fn check(&self) {
        let want = self.charged();
        within(async {
            while self.ours.stats().metadata_bytes != want {
                tokio::time::sleep(Duration::from_millis(1)).await;
            }
        })
        .await;
        let st = self.ours.stats();
        assert!(
            st.metadata_bytes <= self.cfg.metadata_budget_bytes,
            "{st:?}"
        );
        assert_eq!(st.opens_received, self.opens_received, "{st:?}");
    }

    /// The peer opens a channel: with a random label and protocol, on one
    /// of its free ids or (refused) one of ours.
    async fn peer_open(&mut self) {
        use rand::Rng;
        let wrong_parity = self.rng.random_bool(0.1);
        let s = if wrong_parity {
            // Above the ids we allocate, so the refusal's reset cannot
            // meet a channel of ours.
            2 * self.rng.random_range(50..100)
        } else {
            2 * self.rng.random_range(0..32) + 1
        };
        if self.used(s) {
            return;
        }
        let (label, protocol) = (self.text(300, 1), self.text(100, 0));
        let bytes = label.len() + protocol.len();
        let fits = label.len() <= self.cfg.max_label_bytes
            && protocol.len() <= self.cfg.max_protocol_bytes
            && self.charged() + bytes <= self.cfg.metadata_budget_bytes;
        let ack = !wrong_parity && fits && self.in_table() < self.cfg.max_channels;
        self.raw
            .send(s, open_bytes_with(&label, &protocol), dcep())
            .await
            .unwrap();
        self.opens_received += 1;
        if !ack {
            // RFC 8832 6: refused by a reset of the stream, no ACK.
            return self.raw_reset(ResetDirection::Incoming, s).await;
        }
        let m = raw_recv(&self.raw).await;
        assert_eq!((m.stream_id, m.ppid, &m.payload[..]), (s, 50, ACK));
        let ch = within(self.ours.accept()).await.unwrap();
        assert_eq!((ch.stream_id(), ch.label()), (s, &label[..]));
        self.live.insert(s, Live { ch, bytes });
    }

    /// We open a channel; the peer ACKs it, or refuses it by a reset.
    async fn our_open(&mut self) {
        use rand::Rng;
        let (label, protocol) = (self.text(300, 1), self.text(100, 0));
        let bytes = label.len() + protocol.len();
        let options = ChannelOptions {
            protocol,
            ..ChannelOptions::default()
        };
        let opened = self.ours.open_unacked(&label, options).await;
        let Ok(ch) = opened else {
            let fits = label.len() <= self.cfg.max_label_bytes
                && bytes - label.len() <= self.cfg.max_protocol_bytes
                && self.charged() + bytes <= self.cfg.metadata_budget_bytes;
            assert!(
                !fits || self.in_table() >= self.cfg.max_channels,
                "{opened:?}"
            );
            return;
        };
        // RFC 8832 6: the lowest free id of our parity; never one in use.
        let s = ch.stream_id();
        let lowest = (0..).step_by(2).find(|&i| !self.used(i));
        assert_eq!(Some(s), lowest);
        let m = raw_recv(&self.raw).await;
        assert_eq!((m.stream_id, m.ppid, m.payload[0]), (s, 50, 0x03));
        if self.rng.random_bool(0.8) {
            self.raw.send(s, ACK, dcep()).await.unwrap();
            within(ch.wait_acked()).await.unwrap();
            self.live.insert(s, Live { ch, bytes });
            return;
        }
        self.raw.reset_streams(&[s]).unwrap();
        assert!(matches!(
            within(ch.wait_acked()).await,
            Err(DcError::Closed(CloseReason::Refused))
        ));
        // We reset ours in turn (RFC 8831 6.7).
        self.raw_reset(ResetDirection::Outgoing, s).await;
        self.raw_reset(ResetDirection::Incoming, s).await;
    }

    fn pick_live(&mut self) -> Option<u16> {
        use rand::seq::IteratorRandom;
        self.live.keys().copied().choose(&mut self.rng)
    }

    /// A message each way on an open channel: each delivered once, in order.
    async fn data(&mut self) {
        let Some(s) = self.pick_live() else { return };
        self.sent += 1;
        let text = format!("m{}", self.sent);
        let opts = SendOptions {
            ppid: 51,
            ..SendOptions::default()
        };
        self.raw
            .send(s, text.clone().into_bytes(), opts)
            .await
            .unwrap();
        let ch = &self.live[&s].ch;
        assert_eq!(
            within(ch.recv()).await.unwrap(),
            Message::Text(text.clone())
        );
        ch.send_text(&text).await.unwrap();
        let m = raw_recv(&self.raw).await;
        assert_eq!(
            (m.stream_id, m.ppid, &m.payload[..]),
            (s, 51, text.as_bytes())
        );
    }

    /// The peer closes a channel (RFC 8831 6.7): we reset ours in turn.
    async fn peer_close(&mut self) {
        let Some(s) = self.pick_live() else { return };
        let Live { ch, .. } = self.live.remove(&s).unwrap();
        self.raw.reset_streams(&[s]).unwrap();
        assert!(matches!(
            within(ch.recv()).await,
            Err(DcError::Closed(CloseReason::PeerClosed))
        ));
        self.raw_reset(ResetDirection::Outgoing, s).await;
        self.raw_reset(ResetDirection::Incoming, s).await;
    }

    /// We close a channel; the peer answers with its reset, or stays
    /// silent and is asked for it (RFC 6525 5.1.3).
    async fn our_close(&mut self) {
        use rand::Rng;
        let Some(s) = self.pick_live() else { return };
        let Live { ch, .. } = self.live.remove(&s).unwrap();
        let asked = self.ours.stats().incoming_resets_requested;
        if self.rng.random_bool(0.9) {
            let closing = tokio::spawn(async move { ch.close().await });
            self.raw_reset(ResetDirection::Incoming, s).await;
            self.raw.reset_streams(&[s]).unwrap();
            within(closing).await.unwrap().unwrap();
            self.raw_reset(ResetDirection::Outgoing, s).await;
            assert_eq!(self.ours.stats().incoming_resets_requested, asked);
        } else {
            within(ch.close()).await.unwrap();
            assert_eq!(self.ours.stats().incoming_resets_requested, asked + 1);
            self.raw_reset(ResetDirection::Incoming, s).await;
            self.raw_reset(ResetDirection::Outgoing, s).await;
        }
    }

    /// We drop a channel's handle; the peer answers with its reset, or
    /// stays silent and is asked for it (RFC 6525 5.1.3).
    async fn our_drop(&mut self) {
        use rand::Rng;
        let Some(s) = self.pick_live() else { return };
        let Live { ch, .. } = self.live.remove(&s).unwrap();
        let asked = self.ours.stats().incoming_resets_requested;
        drop(ch);
        self.raw_reset(ResetDirection::Incoming, s).await;
        if self.rng.random_bool(0.9) {
            self.raw.reset_streams(&[s]).unwrap();
            self.raw_reset(ResetDirection::Outgoing, s).await;
            return;
        }
        self.raw_reset(ResetDirection::Outgoing, s).await;
        assert_eq!(self.ours.stats().incoming_resets_requested, asked + 1);
    }
}

/// Random OPENs (labels and protocols of random sizes, some over the
/// bounds, some with our parity), random closes from either side, and a
/// peer that ACKs, refuses, answers our resets or stays silent. After every
/// step: the metadata held is what the open channels are charged and within
/// the budget, no stream id carries two channels (a new channel takes the
/// lowest id no live channel holds), and every message on an open channel
/// is delivered once.
#[tokio::test]
async fn an_open_flood_world_keeps_the_channel_table_invariants() {
    // Independent worlds, run side by side: their waits overlap.
    tokio::join!(run_world(0), run_world(1), run_world(2));
}

/// One world of 200 random steps from `seed`.
async fn run_world(seed: u64) {
    use rand::{Rng, SeedableRng};
    let (a, raw, _ea, _eb) = pair().await;
    let cfg = world_config();
    let mut w = World {
        rng: rand::rngs::StdRng::seed_from_u64(seed),
        ours: DataChannels::with_config(a, Role::Client, cfg.clone()),
        raw,
        cfg,
        live: Default::default(),
        sent: 0,
        opens_received: 0,
    };
    for _ in 0..200 {
        match w.rng.random_range(0..20) {
            0..=6 => w.peer_open().await,
            7..=9 => w.our_open().await,
            10..=13 => w.data().await,
            14..=15 => w.peer_close().await,
            16..=17 => w.our_close().await,
            _ => w.our_drop().await,
        }
        w.check().await;
    }
    for l in w.live.values() {
        assert!(l.ch.try_recv().is_none(), "a message delivered twice");
    }
    assert!(w.raw.try_recv().is_none(), "a message delivered twice");
    let st = w.ours.stats();
    assert!(st.opens_refused_metadata > 0, "seed {seed}: {st:?}");
}
