//! The tester's side of a conformance test: one Brisk endpoint (the IUT), a
//! virtual clock, and the packets the tester sends and expects, built and
//! decoded with `brisk_proto::wire`. Nothing runs on its own: time moves only
//! when a test waits, so every timing assertion is exact.

#![allow(dead_code)]

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::time::Duration;

pub use crate::harness::{ms, packet};
use brisk_proto::wire::chunk::{
    Abort, CookieAck, CookieEcho, Data, DataFlags, Init, InitAck, Sack, Shutdown, ShutdownAck,
    ShutdownComplete, types,
};
use brisk_proto::wire::{Chunk, CommonHeader, ErrorCause, Packet, Param};
use brisk_proto::{
    AssocId, Association, Config, Endpoint, EndpointConfig, Event, OutgoingMessage, State, Time,
};

/// The SCTP port of both sides, as `harness::packet` writes it.
pub const PORT: u16 = 5000;
/// The tester's Initiate Tag: the tag the IUT must put on its packets.
pub const TESTER_TAG: u32 = 0x7e57_0001;
/// The tester's initial TSN.
pub const TESTER_TSN: u32 = 1000;
/// The a_rwnd the tester advertises.
pub const TESTER_RWND: u32 = 65_535;

/// A packet the IUT sent, with when and where.
#[derive(Debug, Clone)]
pub struct Out {
    pub at: Time,
    pub to: SocketAddr,
    pub bytes: Vec<u8>,
}

impl Out {
    /// The decoded packet (the IUT's packets always decode).
    pub fn packet(&self) -> Packet<'_> {
        Packet::decode(&self.bytes).expect("the IUT sent a valid packet")
    }
    pub fn tag(&self) -> u32 {
        self.packet().header.verification_tag
    }
    /// Chunk types in order.
    pub fn types(&self) -> Vec<u8> {
        self.packet().chunks.iter().map(Chunk::chunk_type).collect()
    }
    pub fn has(&self, typ: u8) -> bool {
        self.types().contains(&typ)
    }
    /// Flags of the first chunk of type `typ`.
    pub fn flags_of(&self, typ: u8) -> u8 {
        let p = self.packet();
        p.chunks
            .iter()
            .find(|c| c.chunk_type() == typ)
            .map(Chunk::flags)
            .unwrap_or_else(|| panic!("no chunk {typ} in {:?}", self.types()))
    }
    /// The T bit of the packet's ABORT or SHUTDOWN COMPLETE (RFC 9260 3.3.7, 3.3.13).
    pub fn t_bit(&self) -> bool {
        let typ = if self.has(types::ABORT) {
            types::ABORT
        } else {
            types::SHUTDOWN_COMPLETE
        };
        self.flags_of(typ) & 1 == 1
    }
    /// The TSNs of the DATA and I-DATA chunks.
    pub fn tsns(&self) -> Vec<u32> {
        self.packet()
            .chunks
            .iter()
            .filter_map(|c| match c {
                Chunk::Data(d) => Some(d.tsn),
                Chunk::IData(d) => Some(d.tsn),
                _ => None,
            })
            .collect()
    }
    /// The DATA chunks' (flags, TSN, stream, SSN, payload length).
    pub fn data(&self) -> Vec<(DataFlags, u32, u16, u16, usize)> {
        self.packet()
            .chunks
            .iter()
            .filter_map(|c| match c {
                Chunk::Data(d) => Some((d.flags, d.tsn, d.stream_id, d.ssn, d.payload.len())),
                _ => None,
            })
            .collect()
    }
    /// The packet's SACK.
    pub fn sack(&self) -> Option<Sack> {
        self.packet().chunks.into_iter().find_map(|c| match c {
            Chunk::Sack(s) => Some(s),
            _ => None,
        })
    }
    /// Cause codes of the packet's ABORT or ERROR chunks.
    pub fn cause_codes(&self) -> Vec<u16> {
        self.packet()
            .chunks
            .iter()
            .flat_map(|c| match c {
                Chunk::Abort(a) => a.causes.iter().map(ErrorCause::code).collect(),
                Chunk::Error(e) => e.causes.iter().map(ErrorCause::code).collect(),
                _ => Vec::new(),
            })
            .collect()
    }
    /// The INIT or INIT ACK's fixed fields: (initiate tag, a_rwnd, OS, MIS, initial TSN).
    pub fn init_fields(&self) -> (u32, u32, u16, u16, u32) {
        match &self.packet().chunks[0] {
            Chunk::Init(i) => (
                i.initiate_tag,
                i.a_rwnd,
                i.outbound_streams,
                i.inbound_streams,
                i.initial_tsn,
            ),
            Chunk::InitAck(i) => (
                i.initiate_tag,
                i.a_rwnd,
                i.outbound_streams,
                i.inbound_streams,
                i.initial_tsn,
            ),
            c => panic!("expected INIT or INIT ACK, got {}", c.name()),
        }
    }
    /// The INIT ACK's state cookie.
    pub fn cookie(&self) -> Vec<u8> {
        match &self.packet().chunks[0] {
            Chunk::InitAck(a) => a.state_cookie().expect("a state cookie").to_vec(),
            c => panic!("expected INIT ACK, got {}", c.name()),
        }
    }
    /// The parameters of the INIT or INIT ACK, owned.
    pub fn init_params(&self) -> Vec<Param<'static>> {
        match self.packet().chunks.into_iter().next() {
            Some(Chunk::Init(i)) => i.params.into_iter().map(Param::into_owned).collect(),
            Some(Chunk::InitAck(i)) => i.params.into_iter().map(Param::into_owned).collect(),
            _ => panic!("expected INIT or INIT ACK"),
        }
    }
}

/// One IUT and the tester around it.
pub struct Tester {
    pub now: Time,
    pub iut: Endpoint,
    /// The tester's address (the IUT's peer).
    pub me: SocketAddr,
    /// The tag the tester puts on its packets: the IUT's Initiate Tag.
    pub iut_tag: u32,
    /// The IUT's initial TSN.
    pub iut_tsn: u32,
    /// The tester's next TSN.
    pub tsn: u32,
    /// The tester's next SSN on stream 0.
    pub ssn: u16,
    pub id: Option<AssocId>,
    pub events: Vec<(Time, AssocId, Event)>,
    pending: VecDeque<Out>,
}

impl Tester {
    fn with_endpoint(accept: bool, cfg: Config) -> Self {
        let iut = Endpoint::new(
            EndpointConfig {
                port: PORT,
                accept,
                accept_config: cfg,
                ..EndpointConfig::default()
            },
            [3; 32],
        );
        Tester {
            now: Time::ZERO,
            iut,
            me: "192.0.2.1:9899".parse().expect("address"),
            iut_tag: 0,
            iut_tsn: 0,
            tsn: TESTER_TSN,
            ssn: 0,
            id: None,
            events: Vec::new(),
            pending: VecDeque::new(),
        }
    }

    /// An IUT that accepts associations (the server role), `Config::rfc9260()`.
    pub fn server() -> Self {
        Self::server_with(Config::rfc9260())
    }
    pub fn server_with(cfg: Config) -> Self {
        Self::with_endpoint(true, cfg)
    }
    /// An IUT whose application will call `connect` (the client role).
    pub fn client() -> Self {
        Self::with_endpoint(false, Config::rfc9260())
    }

    /// The IUT's application connects to the tester.
    pub fn connect(&mut self, cfg: Config) -> AssocId {
        let id = self.iut.connect(self.now, self.me, cfg).expect("connect");
        self.id = Some(id);
        id
    }

    /// Sends the IUT a packet with `tag` from the tester's address.
    pub fn send_tagged(&mut self, tag: u32, chunks: Vec<Chunk<'static>>) {
        let bytes = packet(tag, chunks);
        self.send_bytes(&bytes);
    }
    /// Sends the IUT a packet with the IUT's tag.
    pub fn send(&mut self, chunks: Vec<Chunk<'static>>) {
        self.send_tagged(self.iut_tag, chunks);
    }
    /// Sends the IUT raw bytes from the tester's address.
    pub fn send_bytes(&mut self, bytes: &[u8]) {
        let (now, from) = (self.now, self.me);
        self.iut.handle_datagram(now, from, bytes);
        self.collect();
    }

    fn collect(&mut self) {
        loop {
            let mut buf = Vec::new();
            let Some(t) = self.iut.poll_transmit(self.now, &mut buf) else {
                break;
            };
            self.pending.push_back(Out {
                at: self.now,
                to: t.destination,
                bytes: buf,
            });
        }
        while let Some((id, e)) = self.iut.poll_event() {
            if e == Event::Connected && self.id.is_none() {
                self.id = Some(id);
            }
            self.events.push((self.now, id, e));
        }
    }

    /// The next packet the IUT sends now, without moving the clock.
    pub fn poll(&mut self) -> Option<Out> {
        self.collect();
        self.pending.pop_front()
    }

    /// The next packet, whose first chunk must be `typ`, sent now.
    pub fn expect(&mut self, typ: u8) -> Out {
        let out = self
            .poll()
            .unwrap_or_else(|| panic!("expected {} now, got nothing", types::name(typ)));
        assert_first(&out, typ);
        out
    }

    /// Asserts the IUT sends nothing now.
    pub fn silent(&mut self) {
        if let Some(out) = self.poll() {
            panic!("expected nothing, the IUT sent {:?}", names(&out.types()));
        }
    }

    /// Moves the clock until the IUT sends a packet, at most `limit` from now.
    pub fn next_packet(&mut self, limit: Duration) -> Option<Out> {
        let end = self.now + limit;
        loop {
            if let Some(out) = self.poll() {
                return Some(out);
            }
            match self.iut.poll_timeout() {
                Some(t) if t <= end => {
                    self.now = self.now.max(t);
                    let now = self.now;
                    self.iut.handle_timeout(now);
                }
                _ => {
                    self.now = end;
                    return None;
                }
            }
        }
    }

    /// The next packet within `limit`, whose first chunk must be `typ`.
    pub fn wait_for(&mut self, typ: u8, limit: Duration) -> Out {
        let out = self.next_packet(limit).unwrap_or_else(|| {
            panic!(
                "expected {} within {limit:?}, got nothing",
                types::name(typ)
            )
        });
        assert_first(&out, typ);
        out
    }

    /// Asserts the IUT sends nothing for `d`, timers running.
    pub fn silent_for(&mut self, d: Duration) {
        if let Some(out) = self.next_packet(d) {
            panic!(
                "expected nothing, the IUT sent {:?} at {}",
                names(&out.types()),
                out.at
            );
        }
    }

    /// Moves the clock by `d`, running timers; the packets sent meanwhile are kept.
    pub fn advance(&mut self, d: Duration) -> Vec<Out> {
        let end = self.now + d;
        let mut outs = Vec::new();
        while let Some(out) = self.next_packet(end - self.now) {
            outs.push(out);
        }
        outs
    }

    /// The tester starts an association (the IUT is the server) with `init`,
    /// and completes it; returns the INIT ACK.
    pub fn establish_with(&mut self, init: Init<'static>) -> Out {
        self.tsn = init.initial_tsn;
        self.send_tagged(0, vec![Chunk::Init(init)]);
        let ack = self.expect(types::INIT_ACK);
        assert_eq!(ack.tag(), TESTER_TAG);
        let (tag, _, _, _, tsn) = ack.init_fields();
        self.iut_tag = tag;
        self.iut_tsn = tsn;
        self.send(vec![cookie_echo(ack.cookie())]);
        let cack = self.expect(types::COOKIE_ACK);
        assert_eq!(cack.tag(), TESTER_TAG);
        assert_eq!(self.state(), State::Established);
        ack
    }

    /// The tester starts an association with a plain INIT.
    pub fn establish(&mut self) -> Out {
        self.establish_with(init(TESTER_TAG))
    }

    /// The IUT (client) connects with `cfg`; the tester answers with `ack`
    /// and the cookie `[0xc0; 32]`, and completes the handshake. Returns the INIT.
    pub fn establish_as_client_with(&mut self, cfg: Config, ack: InitAck<'static>) -> Out {
        self.connect(cfg);
        let init = self.expect(types::INIT);
        self.learn_init(&init);
        self.tsn = ack.initial_tsn;
        self.send(vec![Chunk::InitAck(ack)]);
        let echo = self.expect(types::COOKIE_ECHO);
        assert_eq!(echo.tag(), TESTER_TAG);
        self.send(vec![Chunk::CookieAck(CookieAck)]);
        assert_eq!(self.state(), State::Established);
        init
    }

    /// The IUT (client) connects with `Config::rfc9260()`, the tester answers.
    pub fn establish_as_client(&mut self) -> Out {
        self.establish_as_client_with(Config::rfc9260(), init_ack(TESTER_TAG))
    }

    /// Records the IUT's tag and TSN from its INIT.
    pub fn learn_init(&mut self, init: &Out) {
        let (tag, _, _, _, tsn) = init.init_fields();
        self.iut_tag = tag;
        self.iut_tsn = tsn;
    }

    /// The IUT connects with RFC 9260's defaults; the tester answers its
    /// INIT with an INIT ACK that `edit` changes.
    pub fn answer_init(&mut self, edit: impl FnOnce(&mut InitAck<'static>)) {
        self.connect(Config::rfc9260());
        let init = self.expect(types::INIT);
        self.learn_init(&init);
        let mut ack = init_ack(TESTER_TAG);
        edit(&mut ack);
        self.send(vec![Chunk::InitAck(ack)]);
    }

    /// The IUT's association.
    pub fn assoc(&mut self) -> &mut Association {
        let id = self.id.expect("an association");
        self.iut.association(id).expect("the association exists")
    }

    /// The association's state, `Closed` once it is gone.
    pub fn state(&mut self) -> State {
        let Some(id) = self.id else {
            return State::Closed;
        };
        self.iut
            .association(id)
            .map_or(State::Closed, |a| a.state())
    }

    /// The IUT's application sends `len` bytes on `stream`.
    pub fn app_send(&mut self, stream: u16, len: usize) {
        let now = self.now;
        self.assoc()
            .send(now, OutgoingMessage::new(stream, vec![0xab; len]))
            .expect("send");
        self.collect();
    }

    /// The IUT's application shuts the association down.
    pub fn app_shutdown(&mut self) {
        let now = self.now;
        self.assoc().shutdown(now);
        self.collect();
    }

    /// Every message the IUT's application can read now: (stream, length).
    pub fn app_recv(&mut self) -> Vec<(u16, usize)> {
        let mut out = Vec::new();
        while let Some(m) = self.assoc().recv() {
            out.push((m.stream_id, m.payload.len()));
        }
        out
    }

    /// A DATA chunk with the tester's next TSN on stream 0, next SSN.
    pub fn next_data(&mut self, len: usize) -> Chunk<'static> {
        let c = data(self.tsn, 0, self.ssn, len);
        self.tsn = self.tsn.wrapping_add(1);
        self.ssn = self.ssn.wrapping_add(1);
        c
    }

    /// Whether the IUT reported `e`.
    pub fn saw(&self, pred: impl Fn(&Event) -> bool) -> bool {
        self.events.iter().any(|(_, _, e)| pred(e))
    }
}

/// Scenarios built from the steps above: closing, the application's side.
impl Tester {
    /// Why the association closed, if it did.
    pub fn closed(&self) -> Option<brisk_proto::CloseReason> {
        self.events.iter().find_map(|(_, _, e)| match e {
            Event::Closed(r) => Some(r.clone()),
            _ => None,
        })
    }

    /// The tester closes gracefully (RFC 9260 9.2): SHUTDOWN, the IUT's
    /// SHUTDOWN ACK, SHUTDOWN COMPLETE; the association is gone.
    pub fn tester_shuts_down(&mut self) {
        let cum = self.iut_tsn.wrapping_sub(1);
        self.send(vec![shutdown(cum)]);
        let ack = self.expect(types::SHUTDOWN_ACK);
        assert_eq!(ack.tag(), TESTER_TAG);
        self.send(vec![shutdown_complete(false)]);
        assert_eq!(self.state(), State::Closed);
    }

    /// The IUT's application closes gracefully: SHUTDOWN acknowledging every
    /// tester TSN, SHUTDOWN ACK, the IUT's SHUTDOWN COMPLETE (T bit clear).
    pub fn iut_shuts_down(&mut self) {
        self.app_shutdown();
        let s = self
            .poll()
            .unwrap_or_else(|| panic!("expected SHUTDOWN now, got nothing"));
        // A SACK still due goes first, in the same packet (RFC 9260 9.2).
        let kinds = s.types();
        assert!(
            kinds.last() == Some(&types::SHUTDOWN)
                && kinds[..kinds.len() - 1].iter().all(|&k| k == types::SACK),
            "expected SHUTDOWN (after a SACK at most), the IUT sent {:?}",
            names(&kinds)
        );
        assert_eq!(s.tag(), TESTER_TAG);
        match s.packet().chunks.last() {
            Some(Chunk::Shutdown(sh)) => assert_eq!(sh.cum_tsn_ack, self.tsn.wrapping_sub(1)),
            _ => unreachable!(),
        }
        self.send(vec![shutdown_ack()]);
        let c = self.expect(types::SHUTDOWN_COMPLETE);
        assert_eq!(c.tag(), TESTER_TAG);
        assert!(!c.t_bit());
        assert_eq!(self.state(), State::Closed);
    }

    /// The IUT's application tries to send `len` bytes on `stream`.
    pub fn try_send(&mut self, stream: u16, len: usize) -> Result<(), brisk_proto::SendError> {
        let now = self.now;
        let r = self
            .assoc()
            .send(now, OutgoingMessage::new(stream, vec![0xab; len]))
            .map(|_| ());
        self.collect();
        r
    }

    /// The IUT (client) is established with RTO 100 ms to 800 ms.
    pub fn fast_client() -> Self {
        let mut t = Tester::client();
        t.establish_as_client_with(fast_rto(), init_ack(TESTER_TAG));
        t
    }

    /// The IUT sends one message of `len` bytes; returns its DATA packet.
    pub fn iut_sends(&mut self, len: usize) -> Out {
        self.app_send(0, len);
        let d = self.expect(types::DATA);
        assert_eq!(d.tag(), TESTER_TAG);
        d
    }

    /// Acknowledges every IUT TSN up to `last` (inclusive).
    pub fn ack_up_to(&mut self, last: u32) {
        self.send(vec![sack(last, TESTER_RWND)]);
    }

    /// After the association is gone, a packet with its old tag is out of the
    /// blue: a HEARTBEAT gets ABORT with the T bit (RFC 9260 8.4 rule 8).
    pub fn assert_gone(&mut self) {
        assert_eq!(self.state(), State::Closed);
        self.send(vec![heartbeat()]);
        let abort = self.expect(types::ABORT);
        assert!(abort.t_bit());
        assert_eq!(abort.tag(), self.iut_tag);
    }

    /// The cumulative TSN of the last SACK the IUT sends within `d`.
    pub fn last_sack_within(&mut self, d: Duration) -> Option<u32> {
        self.advance(d)
            .iter()
            .rev()
            .find_map(|o| o.sack())
            .map(|s| s.cum_tsn_ack)
    }

    /// The IUT's application sends `msg`.
    pub fn app_send_msg(&mut self, msg: OutgoingMessage) {
        let now = self.now;
        self.assoc().send(now, msg).expect("send");
        self.collect();
    }
}

/// Panics unless `out`'s first chunk is `typ`.
pub fn assert_first(out: &Out, typ: u8) {
    let got = out.types();
    assert_eq!(
        got.first().copied(),
        Some(typ),
        "expected {}, the IUT sent {:?}",
        types::name(typ),
        names(&got)
    );
}

pub fn names(types_: &[u8]) -> Vec<&'static str> {
    types_.iter().map(|t| types::name(*t)).collect()
}

/// A plain INIT: 10 streams each way, the tester's TSN and a_rwnd.
pub fn init(tag: u32) -> Init<'static> {
    Init {
        initiate_tag: tag,
        a_rwnd: TESTER_RWND,
        outbound_streams: 10,
        inbound_streams: 10,
        initial_tsn: TESTER_TSN,
        params: vec![],
    }
}

/// A plain INIT ACK with the cookie `[0xc0; 32]`.
pub fn init_ack(tag: u32) -> InitAck<'static> {
    InitAck {
        initiate_tag: tag,
        a_rwnd: TESTER_RWND,
        outbound_streams: 10,
        inbound_streams: 10,
        initial_tsn: TESTER_TSN,
        params: vec![Param::StateCookie(vec![0xc0; 32].into())],
    }
}

pub fn cookie_echo(cookie: Vec<u8>) -> Chunk<'static> {
    Chunk::CookieEcho(CookieEcho {
        cookie: cookie.into(),
    })
}

/// An unfragmented DATA chunk of `len` bytes.
pub fn data(tsn: u32, stream_id: u16, ssn: u16, len: usize) -> Chunk<'static> {
    data_with(DataFlags::UNFRAGMENTED, tsn, stream_id, ssn, len)
}

pub fn data_with(
    flags: DataFlags,
    tsn: u32,
    stream_id: u16,
    ssn: u16,
    len: usize,
) -> Chunk<'static> {
    Chunk::Data(Data {
        flags,
        tsn,
        stream_id,
        ssn,
        ppid: 0,
        payload: vec![0x5a; len].into(),
    })
}

/// A SACK with no gaps.
pub fn sack(cum_tsn_ack: u32, a_rwnd: u32) -> Chunk<'static> {
    Chunk::Sack(Sack {
        cum_tsn_ack,
        a_rwnd,
        gap_blocks: vec![],
        dup_tsns: vec![],
    })
}

pub fn abort(t: bool) -> Chunk<'static> {
    Chunk::Abort(Abort {
        reflected_tag: t,
        causes: vec![],
    })
}

pub fn shutdown(cum_tsn_ack: u32) -> Chunk<'static> {
    Chunk::Shutdown(Shutdown { cum_tsn_ack })
}

pub fn shutdown_ack() -> Chunk<'static> {
    Chunk::ShutdownAck(ShutdownAck)
}

pub fn shutdown_complete(t: bool) -> Chunk<'static> {
    Chunk::ShutdownComplete(ShutdownComplete { reflected_tag: t })
}

pub fn secs(v: u64) -> Duration {
    Duration::from_secs(v)
}

/// RTO.Initial and RTO.Min 100 ms, RTO.Max 800 ms, as nplab's scripts set them.
pub fn fast_rto() -> Config {
    Config {
        rto_initial: ms(100),
        rto_min: ms(100),
        rto_max: ms(800),
        ..Config::rfc9260()
    }
}

pub fn heartbeat() -> Chunk<'static> {
    Chunk::Heartbeat(brisk_proto::wire::chunk::Heartbeat::new(vec![0x11; 5]))
}

/// A packet with the chunk area `chunks` taken as raw bytes, and a correct checksum.
pub fn raw_packet(tag: u32, chunks: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    CommonHeader {
        src_port: PORT,
        dst_port: PORT,
        verification_tag: tag,
        checksum: 0,
    }
    .encode(&mut out);
    out.extend_from_slice(chunks);
    brisk_proto::wire::seal(&mut out).expect("seals");
    out
}
