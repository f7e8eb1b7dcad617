//! Association setup (RFC 9260 5.1): the four-way handshake with a state
//! cookie, T1-init and T1-cookie, and the duplicate and colliding setup chunks
//! of 5.2. The INIT and INIT ACK themselves are built and checked in
//! [`crate::init`], which the endpoint shares.

use std::net::{IpAddr, SocketAddr};

use rand::RngCore;

use super::{AssocId, Association, Control, Ctx, State};
use crate::config::Config;
use crate::cookie::{CookieContents, CookieError};
use crate::events::{CloseReason, Event};
use crate::init::{
    self, InitAckInputs, InitProblem, build_init, build_init_ack, check_init, new_tag,
    unrecognized_to_report,
};
use crate::path::{Path, PathId};
use crate::rx::{IReassembly, MidOrdering, Reassembly, SackDecision, TsnTracker};
use crate::serial::Tsn;
use crate::time::Time;
use crate::timer::TimerKind;
use crate::wire::CommonHeader;
use crate::wire::Tlv;
use crate::wire::cause::ErrorCause;
use crate::wire::chunk::{Abort, Chunk, CookieAck, CookieEcho, Init, InitAck};
use crate::wire::param::Param;

/// Handshake state of the side that sent INIT.
#[derive(Debug, Default)]
pub(super) struct Handshake {
    /// Transmissions of the current INIT or COOKIE ECHO.
    pub attempts: u32,
    /// Our INIT, for retransmission and for answering a colliding INIT (5.2.1).
    pub init: Option<Init<'static>>,
    /// The peer's cookie, for retransmission of COOKIE ECHO.
    pub cookie: Option<Vec<u8>>,
    /// Where the INIT or COOKIE ECHO goes: an unanswered INIT goes to the
    /// next of the addresses `connect` was given (5.1), a COOKIE ECHO to
    /// where the INIT ACK came from.
    pub to: PathId,
}

impl Association {
    /// Starts an association as the side that sends INIT (5.1 A).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn connect(
        id: AssocId,
        cfg: Config,
        now: Time,
        remote: SocketAddr,
        local_port: u16,
        peer_port: u16,
        local_tag: u32,
        addresses: &[IpAddr],
        rng: &mut dyn RngCore,
    ) -> Self {
        let initial_tsn = rng.next_u32();
        let mut a = Association::new(
            id,
            cfg,
            State::CookieWait,
            remote,
            local_port,
            peer_port,
            local_tag,
            initial_tsn,
        );
        let init = build_init(&a.cfg, addresses, local_tag, initial_tsn, None);
        a.control
            .push_back(Control::with_tag(Chunk::Init(init.clone()), 0).to(PathId::FIRST));
        a.handshake.init = Some(init);
        a.handshake.attempts = 1;
        start_t1(&mut a, now);
        a
    }

    /// Creates the association a valid COOKIE ECHO establishes (5.1.5).
    pub(crate) fn from_cookie(id: AssocId, cfg: Config, now: Time, c: &CookieContents) -> Self {
        let mut a = Association::new(
            id,
            cfg,
            State::Established,
            c.peer_addr,
            c.local_port,
            c.peer_port,
            c.local_tag,
            c.local_initial_tsn,
        );
        a.adopt_cookie_peer(c);
        // 5.1.2: the INIT's listed addresses, besides the one it came from.
        a.add_peer_addresses(now, c.peer_addrs.as_slice());
        a.control
            .push_back(Control::new(Chunk::CookieAck(CookieAck)));
        a.on_established(now);
        a
    }

    /// Takes the peer's half of the handshake from a cookie.
    fn adopt_cookie_peer(&mut self, c: &CookieContents) {
        self.pktdrop = self.cfg.pktdrop && c.peer_pktdrop;
        self.pr_sctp = self.cfg.partial_reliability && c.peer_pr_sctp;
        self.reconfig.negotiated = self.cfg.stream_reconfig && c.peer_reconfig;
        self.set_interleaving(self.cfg.message_interleaving && c.peer_idata, c.peer_a_rwnd);
        self.adopt_peer(
            c.peer_tag,
            c.peer_initial_tsn,
            c.peer_outbound_streams,
            c.peer_inbound_streams,
            c.peer_a_rwnd,
        );
    }

    /// Takes the peer's half of the handshake: its tag, TSNs, streams and window.
    fn adopt_peer(
        &mut self,
        peer_tag: u32,
        peer_initial_tsn: u32,
        peer_os: u16,
        peer_mis: u16,
        peer_rwnd: u32,
    ) {
        self.peer_tag = peer_tag;
        // 5.1.1: each direction uses the smaller of what one side offers and the other accepts.
        self.outbound_streams = self.cfg.outbound_streams.min(peer_mis);
        let inbound = self.cfg.max_inbound_streams.min(peer_os);
        for id in self.send_queue.limit_streams(self.outbound_streams) {
            self.emit(Event::SendFailed { id });
        }
        self.tracker = TsnTracker::new(Tsn(peer_initial_tsn));
        // RFC 6525 5.2.1: the peer's requests are numbered from its initial TSN.
        self.reconfig.set_peer_initial_tsn(peer_initial_tsn);
        // 6.2.1 A.
        self.rtx.on_peer_window(peer_rwnd);
        self.reassembly = Reassembly::new(peer_initial_tsn, self.cfg.largest_message_received());
        self.ireassembly = IReassembly::new(peer_initial_tsn, self.cfg.largest_message_received());
        // RFC 8260: ordering by MID only where I-DATA was negotiated (it
        // was, before the peer is adopted).
        self.mid_ordering = MidOrdering::new(if self.idata { inbound } else { 0 });
        // Every inbound stream expects SSN 0 (6.5); messages already
        // acknowledged and ready stay readable (a restart, 5.2.4 A).
        self.delivery.restart(inbound);
        // Each destination starts afresh with the peer's window (7.2.1).
        let cfg = &self.cfg;
        self.paths.reset_each(|p| Path {
            remote: p.remote,
            confirmed: p.confirmed,
            ..Path::new(p.remote, cfg, peer_rwnd)
        });
    }

    fn on_established(&mut self, now: Time) {
        self.state = State::Established;
        self.handshake = Handshake::default();
        self.timers.stop(TimerKind::T1);
        super::heartbeat::start(self, now);
        self.new_transmission_opportunity();
        self.emit(Event::Connected);
    }
}

/// INIT ACK in COOKIE-WAIT (5.1 C); anywhere else it is discarded (5.2.3).
pub(super) fn on_init_ack(a: &mut Association, now: Time, ack: &InitAck<'_>) {
    if a.state != State::CookieWait {
        return;
    }
    match check_init(ack) {
        Ok(()) => {}
        Err(InitProblem::ZeroTag) => {
            // 3.3.3: destroy the TCB and SHOULD send ABORT with the T bit:
            // the packet carries our own tag, which the peer knows (8.5.1 B).
            a.control.clear();
            a.control.push_back(Control::with_tag(
                Chunk::Abort(Abort {
                    reflected_tag: true,
                    causes: vec![ErrorCause::InvalidMandatoryParameter],
                }),
                a.local_tag,
            ));
            a.close(CloseReason::LocalAbort {
                reason: "INIT ACK with initiate tag 0".into(),
            });
            return;
        }
        Err(InitProblem::Abort(cause, why)) => {
            // 3.3.3, 5.1: ABORT under the INIT ACK's Initiate Tag.
            a.peer_tag = ack.initiate_tag;
            a.abort_with(cause, &format!("INIT ACK with {why}"));
            return;
        }
    }
    let Some(cookie) = ack.state_cookie().map(<[u8]>::to_vec) else {
        a.peer_tag = ack.initiate_tag;
        a.abort_with(
            ErrorCause::MissingMandatoryParameter {
                types: vec![Param::STATE_COOKIE],
            },
            "INIT ACK without a state cookie",
        );
        return;
    };
    a.pktdrop = a.cfg.pktdrop && ack.supports(crate::wire::chunk::types::PKTDROP);
    a.pr_sctp = a.cfg.partial_reliability && init::offers_pr_sctp(ack);
    // RFC 6525 3.1: both list RE-CONFIG in Supported Extensions.
    a.reconfig.negotiated =
        a.cfg.stream_reconfig && ack.supports(crate::wire::chunk::types::RECONFIG);
    a.set_interleaving(
        a.cfg.message_interleaving && init::offers_idata(ack),
        ack.a_rwnd,
    );
    a.adopt_peer(
        ack.initiate_tag,
        ack.initial_tsn,
        ack.outbound_streams,
        ack.inbound_streams,
        ack.a_rwnd,
    );
    // 5.1.2: the INIT ACK's listed addresses become destinations.
    a.add_peer_addresses(now, &init::listed_addresses(&ack.params));
    // 5.1 C: the COOKIE ECHO goes back to where the INIT ACK came from.
    a.handshake.to = a.packet_from.unwrap_or(a.handshake.to);
    a.control.push_back(
        Control::new(Chunk::CookieEcho(CookieEcho {
            cookie: cookie.clone().into(),
        }))
        .to(a.handshake.to),
    );
    // 5.1 C: unknown parameters that asked to be reported go back in an ERROR
    // bundled after the COOKIE ECHO.
    let reports = unrecognized_to_report(&ack.params);
    if !reports.is_empty() {
        a.report_error(
            now,
            ErrorCause::UnrecognizedParameters(reports.concat().into()),
        );
    }
    a.handshake.cookie = Some(cookie);
    a.handshake.attempts = 1;
    start_t1(a, now);
    a.state = State::CookieEchoed;
}

/// COOKIE ACK completes the handshake in COOKIE-ECHOED; elsewhere it is
/// discarded (5.2.5).
pub(super) fn on_cookie_ack(a: &mut Association, now: Time) {
    if a.state == State::CookieEchoed {
        a.on_established(now);
    }
}

/// An INIT for an association that exists (5.2.1, 5.2.2, 9.2).
pub(super) fn on_init(
    a: &mut Association,
    now: Time,
    ctx: &mut Ctx<'_>,
    init: &Init<'_>,
    header: &CommonHeader,
    from: SocketAddr,
) {
    // 5.1 B, 5.2.1, 5.2.2: the answer goes to the INIT's source, which the
    // endpoint hands us only when it is a confirmed destination (5.4).
    let Some(source) = a.paths.find(from).filter(|id| a.paths.get(*id).confirmed) else {
        return;
    };
    match init::refusal(init) {
        Ok(()) => {}
        Err(None) => return,
        Err(Some(abort)) => {
            a.control
                .push_back(Control::with_tag(abort, init.initiate_tag).to(source));
            return;
        }
    }
    // 5.2.1 (COOKIE-ECHOED), 5.2.2: an INIT adding addresses is refused.
    if !matches!(
        a.state,
        State::Closed | State::CookieWait | State::ShutdownAckSent
    ) {
        let added: Vec<IpAddr> = init::listed_addresses(&init.params)
            .into_iter()
            .filter(|ip| a.is_new_peer_address(*ip))
            .collect();
        if !added.is_empty() {
            let abort = new_addresses_abort(&added);
            a.control
                .push_back(Control::with_tag(abort, init.initiate_tag).to(source));
            return;
        }
    }
    let (local_tag, local_initial_tsn, local_tie, peer_tie) = match a.state {
        State::Closed => return,
        // 9.2: the SHUTDOWN COMPLETE was probably lost; resend SHUTDOWN ACK.
        State::ShutdownAckSent => {
            super::shutdown::resend_shutdown_ack(a, now);
            return;
        }
        // 5.2.1: answer with our original parameters; tie-tags in COOKIE-ECHOED.
        State::CookieWait | State::CookieEchoed => {
            let Some(ours) = &a.handshake.init else {
                return;
            };
            let tie = if a.state == State::CookieEchoed {
                (a.local_tag, a.peer_tag)
            } else {
                (0, 0)
            };
            (ours.initiate_tag, ours.initial_tsn, tie.0, tie.1)
        }
        // 5.2.2: a new tag and TSN, with the current tags as tie-tags.
        _ => (
            new_tag(ctx.rng, ctx.tag_in_use),
            ctx.rng.next_u32(),
            a.local_tag,
            a.peer_tag,
        ),
    };
    a.local_tie_tag = local_tie;
    a.peer_tie_tag = peer_tie;
    let ack = build_init_ack(
        ctx.sealer,
        now,
        &InitAckInputs {
            cfg: &a.cfg,
            addresses: ctx.addresses,
            init,
            from,
            local_port: header.dst_port,
            peer_port: header.src_port,
            local_tag,
            local_initial_tsn,
            local_tie_tag: local_tie,
            peer_tie_tag: peer_tie,
        },
    );
    a.control
        .push_back(Control::with_tag(Chunk::InitAck(ack), init.initiate_tag).to(source));
}

/// A COOKIE ECHO for an association that exists (5.2.4). Returns whether the
/// cookie verified and established or matched the association, so that the
/// chunks bundled after it may be processed.
pub(super) fn on_cookie_echo(
    a: &mut Association,
    now: Time,
    ctx: &mut Ctx<'_>,
    echo: &CookieEcho<'_>,
    header: &CommonHeader,
    from: SocketAddr,
) -> bool {
    let c = match ctx.sealer.open(&echo.cookie, now) {
        Ok(c) => c,
        // Case E: tags match the association, so the cookie stands though old.
        Err(CookieError::Stale { contents, .. })
            if contents.local_tag == a.local_tag && contents.peer_tag == a.peer_tag =>
        {
            *contents
        }
        Err(CookieError::Stale {
            staleness,
            contents,
        }) => {
            if !contents.addressed_to(header, from) {
                return false;
            }
            let staleness_us = u32::try_from(staleness.as_micros()).unwrap_or(u32::MAX);
            a.control.push_back(Control::with_tag(
                Chunk::Error(crate::wire::chunk::OperationError {
                    causes: vec![ErrorCause::StaleCookie { staleness_us }],
                }),
                contents.peer_tag,
            ));
            return false;
        }
        Err(_) => return false,
    };
    // 5.1.5 step 3: the packet's tag must be the one the cookie gave the peer,
    // and it must come from the address the INIT ACK went to.
    if !c.addressed_to(header, from) {
        return false;
    }
    let local_match = c.local_tag == a.local_tag;
    let peer_match = c.peer_tag == a.peer_tag;
    if !local_match && !peer_match && c.local_tie_tag == a.local_tag && c.peer_tie_tag == a.peer_tag
    {
        // Action A: the peer restarted.
        if a.state == State::ShutdownAckSent {
            super::shutdown::resend_shutdown_ack(a, now);
            a.report_error(now, ErrorCause::CookieReceivedWhileShuttingDown);
            return false;
        }
        // 5.2.2: a restart keeps the peer's addresses; one that adds
        // addresses is refused, the association unchanged.
        let added: Vec<IpAddr> = std::iter::once(c.peer_addr.ip())
            .chain(c.peer_addrs.as_slice().iter().copied())
            .filter(|ip| a.is_new_peer_address(*ip))
            .collect();
        if !added.is_empty() {
            let mut abort = Control::with_tag(new_addresses_abort(&added), c.peer_tag);
            if let Some(source) = a.paths.find(from) {
                abort = abort.to(source);
            }
            a.control.push_back(abort);
            return false;
        }
        restart(a, now, &c);
        true
    } else if local_match && !peer_match {
        // Action B: INIT collision; adopt the peer's new tag.
        a.adopt_cookie_peer(&c);
        a.control
            .push_back(Control::new(Chunk::CookieAck(CookieAck)));
        if matches!(a.state, State::CookieWait | State::CookieEchoed) {
            a.on_established(now);
        }
        true
    } else if local_match && peer_match {
        // Action D: a retransmitted (or replayed) COOKIE ECHO.
        if a.state == State::CookieEchoed {
            a.on_established(now);
        }
        a.control
            .push_back(Control::new(Chunk::CookieAck(CookieAck)));
        true
    } else {
        // Action C (our own late cookie) or no rule applies: discard.
        false
    }
}

/// The ABORT refusing a restart with new addresses (5.2.2): the "Restart of
/// an Association with New Addresses" cause lists each as an address TLV
/// (3.3.10.11), in the form the peer gave it.
fn new_addresses_abort(added: &[IpAddr]) -> Chunk<'static> {
    let mut tlvs = Vec::new();
    for ip in added {
        let param = match ip {
            IpAddr::V4(v4) => Param::Ipv4Address(*v4),
            IpAddr::V6(v6) => Param::Ipv6Address(*v6),
        };
        // Encoding an address into a Vec cannot fail.
        let _ = param.encode(&mut tlvs);
    }
    Chunk::Abort(Abort {
        reflected_tag: false,
        causes: vec![ErrorCause::RestartWithNewAddresses(tlvs.into())],
    })
}

/// Action A of 5.2.4: the old association is gone; a new one takes its place
/// under the same id. Unacknowledged messages fail.
fn restart(a: &mut Association, now: Time, c: &CookieContents) {
    let failed: Vec<_> = a
        .rtx
        .drain()
        .into_iter()
        .filter(|chunk| chunk.frag.flags.ending)
        .map(|chunk| chunk.frag.msg)
        .chain(a.send_queue.drain().into_iter().map(|(id, _)| id))
        .collect();
    for id in failed {
        a.emit(Event::SendFailed { id });
    }
    // 5.2.4 A, 6.5: the new association numbers every stream from 0 (SSNs,
    // and MIDs with I-DATA), as the restarted peer expects.
    a.send_queue.reset_all_ssns();
    a.local_tag = c.local_tag;
    a.rtx.restart(Tsn(c.local_initial_tsn), &mut a.timers);
    a.control.clear();
    // RFC 6525 5.1.1: requests are numbered from the new initial TSN; the
    // old association's requests are gone with it.
    a.reconfig = super::reconfig::Reconfig::new(c.local_initial_tsn);
    a.timers.stop(TimerKind::Reconfig);
    // 5.1: the new association's first DATA chunk is acknowledged at once.
    a.sack_decision = SackDecision::new(a.cfg.sack_freq, a.cfg.sack_delay);
    a.timers.stop(TimerKind::DelayedSack);
    a.adopt_cookie_peer(c);
    a.local_tie_tag = 0;
    a.peer_tie_tag = 0;
    a.errors = 0;
    a.control
        .push_back(Control::new(Chunk::CookieAck(CookieAck)));
    a.emit(Event::Restarted);
    a.on_established(now);
}

/// 5.2.6: a Stale Cookie error in COOKIE-ECHOED: try again with a fresh INIT
/// asking for a longer cookie life.
pub(super) fn on_stale_cookie(a: &mut Association, now: Time) {
    if a.state != State::CookieEchoed {
        return;
    }
    let Some(old) = a.handshake.init.clone() else {
        return;
    };
    let attempts = a.handshake.attempts;
    if attempts > a.cfg.max_init_retransmits {
        a.close(CloseReason::HandshakeTimeout { attempts });
        return;
    }
    let preserve_ms = u32::try_from(a.paths.data().rto.rto().as_millis())
        .unwrap_or(u32::MAX)
        .saturating_add(1000);
    let ours = init::listed_addresses(&old.params);
    let init = build_init(
        &a.cfg,
        &ours,
        old.initiate_tag,
        old.initial_tsn,
        Some(preserve_ms),
    );
    a.control
        .push_back(Control::with_tag(Chunk::Init(init.clone()), 0).to(a.handshake.to));
    a.handshake.init = Some(init);
    a.handshake.cookie = None;
    a.handshake.attempts += 1;
    start_t1(a, now);
    a.peer_tag = 0;
    a.state = State::CookieWait;
}

/// Starts T1-init or T1-cookie (5.1 A, C) with the path's RTO.
fn start_t1(a: &mut Association, now: Time) {
    let rto = a.paths.get(a.handshake.to).rto.rto();
    a.timers.start(TimerKind::T1, now, rto);
}

/// T1-init or T1-cookie expired (5.1 A, C): retransmit with back-off, or give up
/// after Max.Init.Retransmits.
pub(super) fn on_t1(a: &mut Association, now: Time) {
    let attempts = a.handshake.attempts;
    if attempts > a.cfg.max_init_retransmits {
        a.close(CloseReason::HandshakeTimeout { attempts });
        return;
    }
    // The timed-out attempt backs off the RTO of the address it went to.
    let timed_out = a.handshake.to;
    a.paths.get_mut(timed_out).rto.back_off();
    let chunk = match a.state {
        State::CookieWait => {
            // 5.1: an unanswered INIT goes to the next address given; never
            // to one the peer listed (after a Stale Cookie error, 5.2.6),
            // which is unconfirmed (5.4).
            let n = a.paths.len().max(1);
            a.handshake.to = (1..=n)
                .map(|k| PathId::from_index((timed_out.index() + k) % n))
                .find(|id| a.paths.get(*id).confirmed)
                .unwrap_or(timed_out);
            a.handshake
                .init
                .clone()
                .map(|i| Control::with_tag(Chunk::Init(i), 0).to(a.handshake.to))
        }
        State::CookieEchoed => a.handshake.cookie.clone().map(|c| {
            Control::new(Chunk::CookieEcho(CookieEcho { cookie: c.into() })).to(a.handshake.to)
        }),
        _ => None,
    };
    let Some(chunk) = chunk else { return };
    a.control.push_back(chunk);
    a.handshake.attempts += 1;
    start_t1(a, now);
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use rand::SeedableRng;

    use super::*;
    use crate::cookie::{CookieSealer, PeerAddresses};

    fn contents(peer_addrs: &[IpAddr]) -> CookieContents {
        CookieContents {
            peer_addr: "192.0.2.7:9899".parse().unwrap(),
            local_port: 5000,
            peer_port: 5000,
            created: Time::ZERO,
            lifetime: Duration::from_secs(60),
            local_tag: 0x1111,
            local_initial_tsn: 7,
            local_outbound_streams: 10,
            local_max_inbound_streams: 10,
            local_a_rwnd: 65536,
            peer_tag: 0x2222,
            peer_initial_tsn: 99,
            peer_outbound_streams: 10,
            peer_inbound_streams: 10,
            peer_a_rwnd: 65536,
            local_tie_tag: 0,
            peer_tie_tag: 0,
            peer_pktdrop: false,
            peer_pr_sctp: false,
            peer_reconfig: false,
            peer_idata: false,
            peer_addrs: PeerAddresses::from_slice(peer_addrs),
        }
    }

    /// Hands `a` a COOKIE ECHO of `c` from the address it was issued to.
    fn echo(a: &mut Association, sealer: &CookieSealer, c: &CookieContents) -> bool {
        let echo = CookieEcho {
            cookie: sealer.seal(c).into(),
        };
        let header = CommonHeader {
            src_port: c.peer_port,
            dst_port: c.local_port,
            verification_tag: c.local_tag,
            checksum: 0,
        };
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
        let mut ctx = Ctx {
            sealer,
            rng: &mut rng,
            tag_in_use: &|_| false,
            addresses: &[],
        };
        on_cookie_echo(a, Time::ZERO, &mut ctx, &echo, &header, c.peer_addr)
    }

    #[test]
    fn a_restart_cookie_listing_a_new_address_is_refused_and_changes_nothing() {
        let known: IpAddr = "192.0.2.8".parse().unwrap();
        let new: IpAddr = "192.0.2.9".parse().unwrap();
        let mut a = Association::from_cookie(
            AssocId(1),
            Config::rfc9260(),
            Time::ZERO,
            &contents(&[known]),
        );
        a.control.clear();
        while a.poll_event().is_some() {}
        let sealer = CookieSealer::new([3; 32]);
        // The peer restarted (5.2.4 A: new tags, our tags as tie-tags), and
        // its INIT listed an address the association does not have.
        let restart = CookieContents {
            local_tag: 0x3333,
            peer_tag: 0x4444,
            local_tie_tag: 0x1111,
            peer_tie_tag: 0x2222,
            ..contents(&[known, new])
        };
        assert!(!echo(&mut a, &sealer, &restart));
        // RFC 9260 5.2.2: ABORT with "Restart of an Association with New
        // Addresses" listing it, under the peer's new tag; nothing else changes.
        assert_eq!((a.local_tag, a.peer_tag), (0x1111, 0x2222));
        assert!(a.poll_event().is_none());
        let sent: Vec<(Option<u32>, &Chunk<'_>)> =
            a.control.iter().map(|c| (c.vtag, &c.chunk)).collect();
        assert_eq!(
            sent,
            vec![(
                Some(0x4444),
                &Chunk::Abort(Abort {
                    reflected_tag: false,
                    causes: vec![ErrorCause::RestartWithNewAddresses(
                        vec![0, 5, 0, 8, 192, 0, 2, 9].into()
                    )],
                })
            )]
        );
        // Without the new address, the same restart goes through.
        a.control.clear();
        let same = CookieContents {
            peer_addrs: PeerAddresses::from_slice(&[known]),
            ..restart
        };
        assert!(echo(&mut a, &sealer, &same));
        assert_eq!((a.local_tag, a.peer_tag), (0x3333, 0x4444));
        assert!(std::iter::from_fn(|| a.poll_event()).any(|e| matches!(e, Event::Restarted)));
    }
}
