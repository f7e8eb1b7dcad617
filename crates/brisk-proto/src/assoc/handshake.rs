//! Association setup (RFC 9260 5.1): the four-way handshake with a state
//! cookie, T1-init and T1-cookie, and the duplicate and colliding setup chunks
//! of 5.2.

use std::net::SocketAddr;
use std::time::Duration;

use rand::RngCore;

use super::{AssocId, Association, Control, Ctx, State};
use crate::config::Config;
use crate::cookie::{CookieContents, CookieError, CookieSealer};
use crate::events::{CloseReason, Event};
use crate::path::Path;
use crate::rx::{Delivery, Reassembly, TsnTracker};
use crate::time::Time;
use crate::timer::TimerKind;
use crate::wire::CommonHeader;
use crate::wire::Tlv;
use crate::wire::cause::ErrorCause;
use crate::wire::chunk::{Chunk, CookieAck, CookieEcho, Init, InitAck, InitChunk};
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
}

/// Draws a verification tag: random, never zero (RFC 9260 5.3.1), and none
/// that `in_use` says another association of the endpoint already has.
pub(crate) fn new_tag(rng: &mut dyn RngCore, in_use: &dyn Fn(u32) -> bool) -> u32 {
    loop {
        let tag = rng.next_u32();
        if tag != 0 && !in_use(tag) {
            return tag;
        }
    }
}

/// Why an INIT or INIT ACK cannot start an association.
pub(crate) enum InitProblem {
    /// 3.3.2: an Initiate Tag of 0: discard silently.
    ZeroTag,
    /// 3.3.2, 3.3.3: zero streams one way: ABORT with this cause.
    Abort(ErrorCause<'static>),
}

/// Checks the fixed fields of an INIT or INIT ACK.
pub(crate) fn check_init<const ACK: bool>(init: &InitChunk<'_, ACK>) -> Result<(), InitProblem> {
    if init.initiate_tag == 0 {
        return Err(InitProblem::ZeroTag);
    }
    if init.outbound_streams == 0 || init.inbound_streams == 0 {
        return Err(InitProblem::Abort(ErrorCause::InvalidMandatoryParameter));
    }
    Ok(())
}

/// RFC 9260 3.2.1: walks the parameters of an INIT or INIT ACK and returns the
/// unknown ones the sender asked to have reported, stopping where a parameter's
/// action says to stop.
pub(crate) fn unrecognized_to_report(params: &[Param<'_>]) -> Vec<Vec<u8>> {
    let mut reports = Vec::new();
    for p in params {
        let Some(action) = p.action() else { continue };
        if action.reports() {
            let mut raw = Vec::with_capacity(4 + p.value_len());
            if p.encode(&mut raw).is_ok() {
                reports.push(raw);
            }
        }
        if !action.continues() {
            break;
        }
    }
    reports
}

/// Everything an INIT ACK is made from.
pub(crate) struct InitAckInputs<'i> {
    pub cfg: &'i Config,
    pub init: &'i Init<'i>,
    pub from: SocketAddr,
    pub local_port: u16,
    pub peer_port: u16,
    pub local_tag: u32,
    pub local_initial_tsn: u32,
    pub local_tie_tag: u32,
    pub peer_tie_tag: u32,
}

/// Builds an INIT ACK with a sealed state cookie (5.1.3), reporting unknown
/// parameters that asked to be reported (3.3.3).
pub(crate) fn build_init_ack(
    sealer: &CookieSealer,
    now: Time,
    i: &InitAckInputs<'_>,
) -> InitAck<'static> {
    // 5.1.3, 5.2.6: honour a Cookie Preservative, up to one more cookie life.
    let preserve = i
        .init
        .params
        .iter()
        .find_map(|p| match p {
            Param::CookiePreservative { increment_ms } => {
                Some(Duration::from_millis(u64::from(*increment_ms)))
            }
            _ => None,
        })
        .unwrap_or_default()
        .min(i.cfg.valid_cookie_life);
    let contents = CookieContents {
        peer_addr: i.from,
        local_port: i.local_port,
        peer_port: i.peer_port,
        created: now,
        lifetime: i.cfg.valid_cookie_life + preserve,
        local_tag: i.local_tag,
        local_initial_tsn: i.local_initial_tsn,
        local_outbound_streams: i.cfg.outbound_streams,
        local_max_inbound_streams: i.cfg.max_inbound_streams,
        local_a_rwnd: i.cfg.receive_buffer,
        peer_tag: i.init.initiate_tag,
        peer_initial_tsn: i.init.initial_tsn,
        peer_outbound_streams: i.init.outbound_streams,
        peer_inbound_streams: i.init.inbound_streams,
        peer_a_rwnd: i.init.a_rwnd,
        local_tie_tag: i.local_tie_tag,
        peer_tie_tag: i.peer_tie_tag,
        peer_pktdrop: i.init.supports(crate::wire::chunk::types::PKTDROP),
    };
    let mut params = vec![Param::StateCookie(sealer.seal(&contents).into())];
    // 3.3.3: each reported parameter is copied whole; with its padding, so
    // that it ends on a 4-byte boundary even as the last parameter (Wireshark
    // flags an unpadded copy there as malformed).
    params.extend(
        unrecognized_to_report(&i.init.params)
            .into_iter()
            .map(|mut raw| {
                raw.resize(crate::wire::padded(raw.len()), 0);
                Param::UnrecognizedParameter(raw.into())
            }),
    );
    params.extend(supported_extensions(i.cfg));
    InitAck {
        initiate_tag: i.local_tag,
        a_rwnd: i.cfg.receive_buffer,
        outbound_streams: i.cfg.outbound_streams,
        inbound_streams: i.cfg.max_inbound_streams,
        initial_tsn: i.local_initial_tsn,
        params,
    }
}

/// RFC 5061 4.2.7: the extensions we offer; PKTDROP only when configured.
fn supported_extensions(cfg: &Config) -> Option<Param<'static>> {
    cfg.pktdrop
        .then(|| Param::SupportedExtensions(vec![crate::wire::chunk::types::PKTDROP]))
}

/// Our INIT (5.1 A): no address parameters (pion drops INITs carrying them), and
/// Supported Extensions only when an extension is enabled.
fn build_init(
    cfg: &Config,
    local_tag: u32,
    initial_tsn: u32,
    preserve_ms: Option<u32>,
) -> Init<'static> {
    let mut params: Vec<Param<'static>> = supported_extensions(cfg).into_iter().collect();
    if let Some(increment_ms) = preserve_ms {
        params.push(Param::CookiePreservative { increment_ms });
    }
    Init {
        initiate_tag: local_tag,
        a_rwnd: cfg.receive_buffer,
        outbound_streams: cfg.outbound_streams,
        inbound_streams: cfg.max_inbound_streams,
        initial_tsn,
        params,
    }
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
        let init = build_init(&a.cfg, local_tag, initial_tsn, None);
        a.control
            .push_back(Control::with_tag(Chunk::Init(init.clone()), 0));
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
        a.control
            .push_back(Control::new(Chunk::CookieAck(CookieAck)));
        a.on_established(now);
        a
    }

    /// Takes the peer's half of the handshake from a cookie.
    fn adopt_cookie_peer(&mut self, c: &CookieContents) {
        self.pktdrop = self.cfg.pktdrop && c.peer_pktdrop;
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
        self.tracker = TsnTracker::new(peer_initial_tsn);
        // 6.2.1 A.
        self.rtx.on_peer_window(peer_rwnd);
        self.reassembly = Reassembly::new(peer_initial_tsn, self.cfg.largest_message_received());
        self.delivery = Delivery::new(inbound);
        self.path = Path::new(self.path.remote, &self.cfg, peer_rwnd);
    }

    fn on_established(&mut self, now: Time) {
        self.state = State::Established;
        self.handshake = Handshake::default();
        self.timers.stop(TimerKind::T1);
        let rto = self.path.rto.rto();
        self.heartbeats.start(now, &self.cfg, rto, &mut self.timers);
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
            // 3.3.3: destroy the association.
            a.close(CloseReason::LocalAbort {
                reason: "INIT ACK with initiate tag 0".into(),
            });
            return;
        }
        Err(InitProblem::Abort(cause)) => {
            a.peer_tag = ack.initiate_tag;
            a.abort_with(cause, "INIT ACK with zero streams");
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
    a.adopt_peer(
        ack.initiate_tag,
        ack.initial_tsn,
        ack.outbound_streams,
        ack.inbound_streams,
        ack.a_rwnd,
    );
    a.control
        .push_back(Control::new(Chunk::CookieEcho(CookieEcho {
            cookie: cookie.clone().into(),
        })));
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
    match check_init(init) {
        Ok(()) => {}
        Err(InitProblem::ZeroTag) => return,
        Err(InitProblem::Abort(cause)) => {
            a.control.push_back(Control::with_tag(
                Chunk::Abort(crate::wire::chunk::Abort {
                    reflected_tag: false,
                    causes: vec![cause],
                }),
                init.initiate_tag,
            ));
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
            new_tag(ctx.rng, &|t| ctx.lookup.tag_in_use(t)),
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
        .push_back(Control::with_tag(Chunk::InitAck(ack), init.initiate_tag));
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
            contents
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
    a.local_tag = c.local_tag;
    a.rtx.restart(c.local_initial_tsn, &mut a.timers);
    a.control.clear();
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
    let preserve_ms = u32::try_from(a.path.rto.rto().as_millis())
        .unwrap_or(u32::MAX)
        .saturating_add(1000);
    let init = build_init(&a.cfg, old.initiate_tag, old.initial_tsn, Some(preserve_ms));
    a.control
        .push_back(Control::with_tag(Chunk::Init(init.clone()), 0));
    a.handshake.init = Some(init);
    a.handshake.cookie = None;
    a.handshake.attempts += 1;
    start_t1(a, now);
    a.peer_tag = 0;
    a.state = State::CookieWait;
}

/// Starts T1-init or T1-cookie (5.1 A, C) with the path's RTO.
fn start_t1(a: &mut Association, now: Time) {
    let rto = a.path.rto.rto();
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
    let chunk = match a.state {
        State::CookieWait => a
            .handshake
            .init
            .clone()
            .map(|i| Control::with_tag(Chunk::Init(i), 0)),
        State::CookieEchoed => a
            .handshake
            .cookie
            .clone()
            .map(|c| Control::new(Chunk::CookieEcho(CookieEcho { cookie: c.into() }))),
        _ => None,
    };
    let Some(chunk) = chunk else { return };
    a.control.push_back(chunk);
    a.handshake.attempts += 1;
    a.path.rto.back_off();
    start_t1(a, now);
}
