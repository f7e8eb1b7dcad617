//! The squatter world (RFC 9260 5.4, 5.2.2, 11.2.4.1): B is multi-homed (its
//! second address is listed but reachable by nobody), and before A connects,
//! a third host, the squatter, sets up an association with B whose INIT lists
//! A's address (the victim's) and third-party addresses. It never answers a
//! heartbeat; later it sends INITs again, listing the same addresses or a new
//! one, and an off-path attacker sends an INIT from A's address. Checked
//! after every step:
//! - B sends under the squatter's tags to no address but the squatter's,
//!   except lone HEARTBEATs (5.4: nothing else to an unconfirmed address),
//!   at least RTO.Min apart (HB.Max.Burst, 1 by default, per RTO) and at most
//!   Path.Max.Retrans + 1 to each listed address;
//! - A sends nothing but lone HEARTBEATs to B's second address;
//! - B sends the squatter no INIT ACK but for the squatter's own INITs, and
//!   the squatter's association never restarts. A's INIT and COOKIE ECHO, from
//!   the address the squatter listed, make A's own association: the loop's
//!   liveness checks (the first handshake, full delivery) hold as ever.
//!
//! On in one case in four, chosen by two bits of A's endpoint seed (drawn in
//! every case), so that the other cases draw what they drew before.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};

use brisk_proto::wire::chunk::{Abort, CookieEcho, Init, ShutdownComplete, types};
use brisk_proto::wire::{Chunk, CommonHeader, Packet, Param};
use brisk_proto::{AssocId, Event, Time};

use super::{A, B, PORT, World};

/// The squatter's address.
pub const SQUATTER: SocketAddr = SocketAddr::new(IpAddr::V4(Ipv4Addr::new(10, 0, 0, 66)), 9899);
/// B's second address: listed in its INIT ACK, reachable by nobody.
pub const B_SECOND: IpAddr = IpAddr::V4(Ipv4Addr::new(10, 0, 1, 2));
/// The squatter's Initiate Tags: this, plus the number of INITs before.
const TAG: u32 = 0x5c0a_7700;

/// Whether a case is a squatter world, from A's endpoint seed.
pub fn enabled(a_seed: u32) -> bool {
    a_seed >> 30 == 0
}

/// B's addresses in a squatter world.
pub fn b_addresses() -> Vec<IpAddr> {
    vec![IpAddr::V4(Ipv4Addr::new(10, 0, 0, 2)), B_SECOND]
}

/// What the world knows of the squatter.
#[derive(Debug, Default)]
pub struct Squatter {
    /// Its association on B.
    id: Option<AssocId>,
    /// B's first INIT ACK to it: its tag and cookie.
    cookie: Option<(u32, Vec<u8>)>,
    inits: u32,
    init_acks: u32,
    /// Third-party addresses listed so far (10.9.0.1, ...).
    listed: u8,
    /// B's packets under the squatter's tag to other addresses.
    probes: u32,
    last_probe: Option<Time>,
}

fn is_squatter_tag(tag: u32) -> bool {
    tag & !0xff == TAG
}

fn packet(tag: u32, chunk: Chunk<'static>) -> Vec<u8> {
    Packet {
        header: CommonHeader {
            src_port: PORT,
            dst_port: PORT,
            verification_tag: tag,
            checksum: 0,
        },
        chunks: vec![chunk],
    }
    .to_bytes()
    .expect("packet")
}

impl World<'_> {
    /// A squatter world: the squatter's handshake, before A's.
    pub(super) fn squat_first(&mut self) {
        if !self.plan.squat || self.squatter.is_some() {
            return;
        }
        self.squatter = Some(Squatter {
            listed: self.d.range(1, 7) as u8,
            ..Squatter::default()
        });
        self.squatter_init(false);
        self.flush();
        let Some((tag, cookie)) = self.squatter.as_ref().and_then(|s| s.cookie.clone()) else {
            return;
        };
        let echo = Chunk::CookieEcho(CookieEcho {
            cookie: cookie.into(),
        });
        self.eps[B].handle_datagram(self.now, SQUATTER, &packet(tag, echo));
        self.flush();
    }

    /// The squatter's INIT listing A's address and its third-party
    /// addresses, one more when `more`.
    fn squatter_init(&mut self, more: bool) {
        let Some(s) = self.squatter.as_mut() else {
            return;
        };
        if more {
            s.listed = s.listed.saturating_add(1).min(200);
        }
        let tag = TAG + s.inits.min(255);
        s.inits += 1;
        let IpAddr::V4(victim) = self.addrs[A].ip() else {
            return;
        };
        let params = std::iter::once(victim)
            .chain((1..=s.listed).map(|i| Ipv4Addr::new(10, 9, 0, i)))
            .map(Param::Ipv4Address)
            .collect();
        let init = Chunk::Init(Init {
            initiate_tag: tag,
            a_rwnd: 65536,
            outbound_streams: 4,
            inbound_streams: 4,
            initial_tsn: 1,
            params,
        });
        self.log(|| format!("the squatter sends INIT {tag:#x}"));
        self.eps[B].handle_datagram(self.now, SQUATTER, &packet(0, init));
    }

    /// A step of the squatter world: the squatter sends INIT again, listing
    /// the same addresses (RFC 9260 5.2.2: INIT ACK) or one more (ABORT),
    /// or an off-path attacker sends an INIT from A's address.
    pub(super) fn squat_step(&mut self) {
        match self.d.below(3) {
            0 => self.squatter_init(false),
            1 => self.squatter_init(true),
            _ => {
                self.disturbed = true;
                let init = Chunk::Init(Init {
                    initiate_tag: self.d.u32() | 1,
                    a_rwnd: 65536,
                    outbound_streams: 4,
                    inbound_streams: 4,
                    initial_tsn: 1,
                    params: Vec::new(),
                });
                self.log(|| "an off-path INIT from A's address".into());
                let from = self.addrs[A];
                self.eps[B].handle_datagram(self.now, from, &packet(0, init));
            }
        }
    }

    /// Takes the squatter's events; `true` if the event was its.
    pub(super) fn squat_event(&mut self, side: usize, id: AssocId, e: &Event) -> bool {
        if side != B {
            return false;
        }
        let Some(s) = self.squatter.as_mut() else {
            return false;
        };
        if s.id.is_none()
            && matches!(e, Event::Connected)
            && self.eps[B]
                .association_ref(id)
                .is_some_and(|a| a.remote() == SQUATTER)
        {
            s.id = Some(id);
        }
        if s.id != Some(id) {
            return false;
        }
        if matches!(e, Event::Restarted) {
            self.fail("the squatter's association restarted".into());
        }
        true
    }

    /// `side` crashed and a fresh endpoint took its place: if it was B, the
    /// squatter's association went with it (the new endpoint numbers its
    /// associations afresh, so the old id names nothing of the squatter's).
    pub(super) fn squat_side_restarted(&mut self, side: usize) {
        if let Some(s) = self.squatter.as_mut().filter(|_| side == B) {
            s.id = None;
            s.cookie = None;
        }
    }

    /// Watches a packet `side` sends to `to`; `true` if the world took it
    /// (the squatter's traffic, not the A-B wire's).
    pub(super) fn squat_watch(&mut self, side: usize, to: SocketAddr, bytes: &[u8]) -> bool {
        if self.squatter.is_none() {
            return false;
        }
        let Ok(p) = Packet::decode(bytes) else {
            return false;
        };
        let chunks: Vec<u8> = p.chunks.iter().map(Chunk::chunk_type).collect();
        let lone_heartbeat = chunks == [types::HEARTBEAT];
        if side == A {
            if to.ip() != B_SECOND {
                return false;
            }
            if !lone_heartbeat {
                self.fail(format!("A sent {chunks:?} to B's unconfirmed {to}"));
            }
            // Lost, and unseen by the injector: its nonce stays secret, as
            // from an off-path attacker (5.4).
            return true;
        }
        let tag = p.header.verification_tag;
        if to == SQUATTER {
            if let Some(Chunk::InitAck(ack)) = p.chunks.first() {
                self.squatter_init_ack(tag, ack.initiate_tag, ack.state_cookie());
            }
            return true;
        }
        // An out-of-the-blue packet carrying a squatter's tag is answered
        // with the T bit, reflecting it (8.4): the endpoint's, not the
        // squatter's association's.
        let reflected = matches!(
            p.chunks.first(),
            Some(Chunk::Abort(Abort {
                reflected_tag: true,
                ..
            })) | Some(Chunk::ShutdownComplete(ShutdownComplete {
                reflected_tag: true
            }))
        );
        if !is_squatter_tag(tag) || reflected {
            return false;
        }
        if !lone_heartbeat {
            self.fail(format!(
                "B sent {chunks:?} under the squatter's tag to {to}"
            ));
        }
        self.squatter_probe(to);
        if to == self.addrs[A] {
            // The victim gets it, as it would.
            let at = self.now + self.plan.latency;
            self.put_on_wire(at, A, bytes.to_vec());
        }
        true
    }

    fn squatter_init_ack(&mut self, tag: u32, initiate_tag: u32, cookie: Option<&[u8]>) {
        let Some(s) = self.squatter.as_mut() else {
            return;
        };
        s.init_acks += 1;
        let (acks, inits) = (s.init_acks, s.inits);
        if s.cookie.is_none() {
            s.cookie = cookie.map(|c| (initiate_tag, c.to_vec()));
        }
        // RFC 9260 5.1 B, 5.2.2: an INIT ACK goes to its INIT's source.
        if !is_squatter_tag(tag) || acks > inits {
            self.fail(format!(
                "B sent the squatter an INIT ACK under tag {tag:#x}: {acks} INIT ACKs \
                 for its {inits} INITs"
            ));
        }
    }

    /// A HEARTBEAT to an address the squatter listed: paced (RFC 9260 5.4
    /// HB.Max.Burst) and bounded.
    fn squatter_probe(&mut self, to: SocketAddr) {
        let now = self.now;
        let cfg = &self.cfgs[B];
        let (rto_min, burst) = (cfg.rto_min, cfg.hb_max_burst);
        let bound = 7 * (cfg.path_max_retrans + 1);
        let Some(s) = self.squatter.as_mut() else {
            return;
        };
        let last = s.last_probe.replace(now);
        s.probes += 1;
        let probes = s.probes;
        if burst == 1
            && let Some(last) = last
            && now.since(last) < rto_min
        {
            self.fail(format!(
                "B probed {to} {:?} after the last probe to an unconfirmed address, \
                 under RTO.Min {rto_min:?}",
                now.since(last)
            ));
        }
        if probes > bound {
            self.fail(format!(
                "{probes} probes to addresses the squatter listed, over {bound}"
            ));
        }
    }
}
