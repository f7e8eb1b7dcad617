//! The three-way handshake (RFC 9293 3.5), option negotiation, SYN
//! retransmission and closing, through the pair harness with 10 ms one way.

mod harness;

use std::time::Duration;

use brisk_tcp::wire::flags;
use brisk_tcp::{CloseReason, ConnectError, State, TcpConfig, TcpEndpoint, TcpEvent, Time};
use harness::{Dir, Fate, Pair, ms};

#[test]
fn syn_synack_ack_connect_the_client_at_one_rtt_and_the_server_at_one_and_a_half() {
    let mut p = Pair::new(ms(10), TcpConfig::rfc(), TcpConfig::rfc());
    p.connect();
    let segs: Vec<_> = p
        .log
        .iter()
        .map(|l| (l.seen.dir, l.seen.sent_at, l.seen.header.flags))
        .collect();
    assert_eq!(
        segs,
        vec![
            (Dir::AtoB, Time::ZERO, flags::SYN),
            (Dir::BtoA, Time::from_millis(10), flags::SYN | flags::ACK),
            (Dir::AtoB, Time::from_millis(20), flags::ACK),
        ]
    );
    let syn = &p.log[0].seen.header;
    assert_eq!(syn.options.mss, Some(1460));
    assert_eq!(syn.options.window_scale, Some(0));
    assert!(syn.options.sack_permitted);
    assert_eq!(syn.window, 65535);
    let synack = &p.log[1].seen.header;
    assert_eq!(synack.ack, syn.seq.wrapping_add(1));
    assert_eq!(p.log[2].seen.header.ack, synack.seq.wrapping_add(1));
    let connected =
        |ev: &[(Time, _, TcpEvent)]| Pair::event_time(ev, |e| *e == TcpEvent::Connected);
    assert_eq!(connected(&p.a_events), Some(Time::from_millis(20)));
    assert_eq!(connected(&p.b_events), Some(Time::from_millis(30)));
    for c in [p.a_conn().clone(), p.b_conn().clone()] {
        assert_eq!(c.state(), State::Established);
        assert_eq!(c.send_mss(), 1460);
        assert!(c.sack_enabled());
        assert_eq!(c.window_scale(), Some((0, 0)));
        // The handshake gave one RTT sample of 20 ms: RTO = max(1 s, 20 + 40 ms).
        assert_eq!(c.stats().srtt, Some(ms(20)));
        assert_eq!(c.stats().rto, Duration::from_secs(1));
    }
}

#[test]
fn mss_is_the_smaller_of_both_and_window_scale_fits_the_receive_window() {
    let a = TcpConfig {
        mss: 1000,
        sack: false,
        ..TcpConfig::linux()
    };
    let mut p = Pair::new(ms(10), a, TcpConfig::linux());
    p.connect();
    assert_eq!(p.log[0].seen.header.options.window_scale, Some(7));
    assert!(!p.log[0].seen.header.options.sack_permitted);
    // B answers without SACK-Permitted: A did not offer it.
    assert!(!p.log[1].seen.header.options.sack_permitted);
    let (a, b) = (p.a_conn().clone(), p.b_conn().clone());
    assert_eq!((a.send_mss(), a.peer_mss()), (1000, 1460));
    assert_eq!((b.send_mss(), b.peer_mss()), (1000, 1000));
    assert!(!a.sack_enabled() && !b.sack_enabled());
    assert_eq!(a.window_scale(), Some((7, 7)));
    // 6 MiB >> 7 = 49152 in the ACK's window field.
    assert_eq!(p.log[2].seen.header.window, 49152);
}

#[test]
fn a_lost_syn_is_resent_at_rto_initial_and_the_rto_then_falls_back_to_3_s() {
    let mut p = Pair::new(ms(10), TcpConfig::rfc(), TcpConfig::rfc());
    p.rule(|s| (s.dir == Dir::AtoB && s.has(flags::SYN) && s.ordinal == 1).then_some(Fate::Drop));
    p.connect();
    let syns: Vec<Time> = p
        .segments(Dir::AtoB)
        .iter()
        .filter(|s| s.has(flags::SYN))
        .map(|s| s.sent_at)
        .collect();
    assert_eq!(syns, vec![Time::ZERO, Time::from_secs(1)]);
    let connected = Pair::event_time(&p.a_events, |e| *e == TcpEvent::Connected);
    assert_eq!(connected, Some(Time::from_millis(1020)));
    // Karn: no sample from a retransmitted SYN; RFC 6298 5.7: RTO 3 s.
    let a = p.a_stats();
    assert_eq!(
        (a.srtt, a.rto, a.rto_expirations),
        (None, Duration::from_secs(3), 1)
    );
    // B's SYN-ACK went once: B has its sample.
    assert_eq!(p.b_stats().srtt, Some(ms(20)));
}

#[test]
fn a_lost_synack_is_resent_when_the_syn_comes_again() {
    let mut p = Pair::new(ms(10), TcpConfig::rfc(), TcpConfig::rfc());
    p.rule(|s| (s.dir == Dir::BtoA && s.has(flags::SYN) && s.ordinal == 1).then_some(Fate::Drop));
    p.connect();
    let synacks: Vec<Time> = p
        .segments(Dir::BtoA)
        .iter()
        .filter(|s| s.has(flags::SYN))
        .map(|s| s.sent_at)
        .collect();
    // A's SYN again at 1 s reaches B at 1.010 s, when B's own timer (SYN-ACK
    // at 10 ms + 1 s) also fires: one SYN-ACK goes.
    assert_eq!(
        synacks,
        vec![Time::from_millis(10), Time::from_millis(1010)]
    );
    assert_eq!(
        Pair::event_time(&p.a_events, |e| *e == TcpEvent::Connected),
        Some(Time::from_millis(1020))
    );
}

#[test]
fn an_unanswered_syn_backs_off_and_gives_up() {
    let cfg = TcpConfig {
        max_syn_retransmissions: 2,
        ..TcpConfig::rfc()
    };
    let mut p = Pair::new(ms(10), cfg, TcpConfig::rfc());
    p.rule(|s| (s.dir == Dir::AtoB).then_some(Fate::Drop));
    let id = p.a.connect(p.now, p.b_addr).unwrap();
    p.a_id = Some(id);
    p.run_for(Duration::from_secs(20));
    let syns: Vec<Time> = p.segments(Dir::AtoB).iter().map(|s| s.sent_at).collect();
    assert_eq!(
        syns,
        vec![Time::ZERO, Time::from_secs(1), Time::from_secs(3)]
    );
    assert_eq!(
        p.a_events.last().map(|(t, _, e)| (*t, e.clone())),
        Some((Time::from_secs(7), TcpEvent::Closed(CloseReason::Timeout)))
    );
    assert!(
        p.a.connection_ref(id).is_some(),
        "readable until the next input"
    );
    let now = p.now;
    p.a.handle_timeout(now);
    assert!(
        p.a.connection_ref(id).is_none(),
        "reaped after its Closed event"
    );
}

#[test]
fn data_written_before_the_handshake_completes_goes_with_the_third_segment() {
    let mut p = Pair::new(ms(10), TcpConfig::rfc(), TcpConfig::rfc());
    let id = p.a.connect(p.now, p.b_addr).unwrap();
    p.a_id = Some(id);
    assert_eq!(p.a.connection(id).unwrap().write(Time::ZERO, b"hello"), 5);
    p.run_for(ms(100));
    let data = p.data_segments(Dir::AtoB);
    assert_eq!(data.len(), 1);
    assert_eq!(
        data[0].sent_at,
        Time::from_millis(20),
        "after the SYN-ACK, not before"
    );
    assert_eq!(p.b_received, b"hello");
    assert_eq!(
        Pair::event_time(&p.b_events, |e| *e == TcpEvent::Readable),
        Some(Time::from_millis(30))
    );
}

#[test]
fn a_syn_to_a_closed_port_is_refused_with_a_reset() {
    let mut p = Pair::new(ms(10), TcpConfig::rfc(), TcpConfig::rfc());
    p.b = TcpEndpoint::new(p.b_addr, TcpConfig::rfc(), false, 2);
    let id = p.a.connect(p.now, p.b_addr).unwrap();
    p.a_id = Some(id);
    p.run_for(ms(100));
    let rst = &p.segments(Dir::BtoA)[0].header;
    assert_eq!(rst.flags, flags::RST | flags::ACK);
    assert_eq!(rst.ack, p.log[0].seen.header.seq.wrapping_add(1));
    assert_eq!(p.b.stats().resets_sent, 1);
    assert_eq!(
        p.a_events.last().map(|(t, _, e)| (*t, e.clone())),
        Some((
            Time::from_millis(20),
            TcpEvent::Closed(CloseReason::Refused)
        ))
    );
}

#[test]
fn close_exchanges_fins_and_time_wait_ends_the_active_closer() {
    let mut p = Pair::connected(ms(10), TcpConfig::rfc());
    p.run_to(Time::from_secs(1));
    let now = p.now;
    p.a_conn().write(now, b"bye");
    p.a_conn().close(now);
    p.flush();
    assert_eq!(p.a_conn().state(), State::FinWait1);
    let fin = p.data_segments(Dir::AtoB)[0].header.flags;
    assert_eq!(fin & flags::FIN, flags::FIN, "FIN rides on the last data");
    p.run_for(ms(300));
    assert_eq!(p.b_received, b"bye");
    assert_eq!(p.b_conn().state(), State::CloseWait);
    assert_eq!(p.a_conn().state(), State::FinWait2);
    assert!(
        p.b_events
            .iter()
            .any(|(_, _, e)| *e == TcpEvent::PeerClosed)
    );
    let now = p.now;
    p.b_conn().close(now);
    p.flush();
    assert_eq!(p.b_conn().state(), State::LastAck);
    p.run_for(ms(100));
    assert_eq!(p.a_conn().state(), State::TimeWait);
    let b_closed = Pair::event_time(&p.b_events, |e| *e == TcpEvent::Closed(CloseReason::Normal));
    assert_eq!(b_closed, Some(Time::from_millis(1320)));
    p.run_for(Duration::from_secs(300));
    let a_closed = Pair::event_time(&p.a_events, |e| *e == TcpEvent::Closed(CloseReason::Normal));
    // A's FIN-ACK reached A at 1.310 s: TIME-WAIT 240 s.
    assert_eq!(a_closed, Some(Time::from_millis(241_310)));
}

#[test]
fn ipv6_addresses_are_refused() {
    let mut ep = TcpEndpoint::new("10.0.0.1:1".parse().unwrap(), TcpConfig::rfc(), false, 1);
    assert!(matches!(
        ep.connect(Time::ZERO, "[::1]:80".parse().unwrap()),
        Err(ConnectError::NotIpv4 { .. })
    ));
    ep.handle_segment(Time::ZERO, "[::1]:80".parse().unwrap(), &[0; 20]);
    assert_eq!(ep.stats().not_ipv4, 1);
}
