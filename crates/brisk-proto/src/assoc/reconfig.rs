//! Stream reconfiguration (RFC 6525): resetting streams' sequence numbers,
//! resetting the association's SSNs and TSNs, and adding streams.
//!
//! Our side: the application's requests wait in [`Reconfig`] until the one
//! request in flight is answered (5.1.1); an Outgoing SSN Reset Request goes
//! only once every message queued on its streams before the call has taken
//! a TSN (5.1.2 A1, A3), and the streams hold later messages until the
//! answer. The RE-CONFIG timer (`TimerKind::Reconfig`) retransmits the
//! request with backoff and counts towards the association's errors, except
//! after an "In progress" answer (5.2.7).
//!
//! The peer's side: each request is checked against the Re-configuration
//! Request Sequence Number we expect (5.2.1): the next one is performed, a
//! repeat of one of the last two is answered as before, anything else is
//! "Error: Bad Sequence Number". An Outgoing SSN Reset Request whose
//! Sender's Last Assigned TSN we have not reached yet is deferred (5.2.2
//! E1): answered "In progress", performed (and answered again) once the
//! cumulative TSN reaches it, by DATA or by FORWARD TSN. Only one request is
//! deferred at a time and what it holds is charged to the receive window.

use std::collections::{BTreeMap, BTreeSet};

use super::{Association, Control, State};
use crate::events::{Event, ResetDirection};
use crate::rx::{MAX_GAP_OFFSET, Reassembled, Reassembly, TsnTracker};
use crate::serial::Tsn;
use crate::time::Time;
use crate::timer::TimerKind;
use crate::wire::chunk::{Chunk, ForwardTsn, ReConfig, ReconfigParam, ReconfigResult};

/// RE-CONFIG responses waiting to be sent at most: a peer that floods us
/// with requests (or replays) gets no more answers than this until they left.
const MAX_QUEUED_RESPONSES: usize = 4;

/// Retransmissions of a request to add streams or to reset the peer's
/// outgoing streams before it is given up as never to be answered (a peer
/// that cannot parse it, as pion/sctp v1.11.3 with Add Streams Requests,
/// drops the packet without a word). Giving up is safe for these: the
/// peer may have performed them unseen, and nothing of ours depends on it.
/// A reset of our outgoing streams, or of SSNs and TSNs, is never given up
/// (the peer may have reset its side): it is retransmitted until answered
/// or the association fails. Each retransmission counts as an error of the
/// association (RFC 6525 5.1.1).
pub const MAX_REQUEST_RETRANSMITS: u32 = 5;

/// The result reported for a request the peer never answered
/// ([`MAX_REQUEST_RETRANSMITS`]); not a code RFC 6525 defines.
pub const NO_ANSWER: ReconfigResult = ReconfigResult::Other(u32::MAX);

/// Why a reconfiguration request was not accepted. Nothing was queued.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum ReconfigError {
    /// Both ends must offer RE-CONFIG (`Config::stream_reconfig`, RFC 6525 3.1).
    #[error(
        "stream reconfiguration was not negotiated: both ends must offer RE-CONFIG \
         (Config::stream_reconfig)"
    )]
    NotNegotiated,
    /// Only an established association reconfigures its streams.
    #[error("the association is not established (it is starting, shutting down or closed)")]
    NotEstablished,
    /// The stream does not exist in that direction.
    #[error("stream {stream_id} does not exist: there are {streams} streams that way")]
    UnknownStream { stream_id: u16, streams: u16 },
    /// An empty list of streams, or zero streams to add.
    #[error("no streams given")]
    NoStreams,
    /// Adding the streams would exceed the limit (65535 outgoing, or
    /// `Config::max_inbound_streams` incoming).
    #[error("{current} streams plus {requested} more would exceed the limit of {limit}")]
    TooManyStreams {
        current: u16,
        requested: u32,
        limit: u16,
    },
    /// An SSN/TSN reset is already requested and not yet answered.
    #[error("an SSN/TSN reset is already requested")]
    AlreadyRequested,
}

/// One request of ours.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Request {
    /// 5.1.2, with the Sender's Last Assigned TSN it carries.
    ResetOutgoing { streams: Vec<u16>, last_tsn: u32 },
    /// 5.1.3.
    ResetIncoming { streams: Vec<u16> },
    /// 5.1.4.
    SsnTsn,
    /// 5.1.5.
    AddOutgoing(u16),
    /// 5.1.6.
    AddIncoming(u16),
}

/// The request in flight: one RE-CONFIG chunk.
#[derive(Debug)]
struct InFlight {
    /// Its requests, each with its Request Sequence Number: one, or a pair
    /// RFC 6525 3.1 allows (outgoing + incoming reset, or two additions).
    requests: Vec<(u32, Request)>,
    /// The Response Sequence Number an Outgoing SSN Reset Request carries.
    response_seq: u32,
    /// Expiries of the RE-CONFIG timer so far (each doubles the wait).
    backoff: u32,
    /// The peer answered "In progress": the next expiry is no error (5.2.7).
    in_progress: bool,
}

/// The peer's Outgoing SSN Reset Request, deferred (5.2.2 E1).
#[derive(Debug)]
struct Deferred {
    request_seq: u32,
    last_tsn: Tsn,
    /// Sorted; empty means every stream.
    streams: Vec<u16>,
    /// Ordered messages on those streams beyond `last_tsn`: the new
    /// numbering, held until the reset is performed.
    held: Vec<Reassembled>,
    held_bytes: usize,
}

impl Deferred {
    fn covers(&self, stream: u16) -> bool {
        self.streams.is_empty() || self.streams.binary_search(&stream).is_ok()
    }
}

/// Stream reconfiguration state of one association.
#[derive(Debug)]
pub(crate) struct Reconfig {
    /// Both ends offered RE-CONFIG.
    pub negotiated: bool,
    /// Our next Request Sequence Number (5.1.1: starts at our initial TSN).
    next_request_seq: u32,
    in_flight: Option<InFlight>,
    /// Outgoing streams to reset in the next request (paused meanwhile).
    pending_reset: BTreeSet<u16>,
    /// Incoming streams the peer is to reset (5.1.3).
    pending_incoming: BTreeSet<u16>,
    /// Streams to add: outgoing, incoming.
    pending_add: (u16, u16),
    pending_ssn_tsn: bool,
    /// Streams whose reset we asked for, with the request's Sender's Last
    /// Assigned TSN, while chunks of their old numbering may be outstanding
    /// (see [`filter_forward_tsn`]).
    reset_tsns: BTreeMap<u16, Tsn>,
    /// The peer's Request Sequence Number we expect next (starts at its
    /// initial TSN).
    peer_next_seq: u32,
    /// Our answers to the peer's last two requests, for repeats (5.2.1).
    answered: [Option<ReconfigParam<'static>>; 2],
    deferred: Option<Deferred>,
    /// The packet being handled carried a RE-CONFIG chunk with requests.
    requests_in_packet: bool,
}

impl Reconfig {
    pub fn new(local_initial_tsn: u32) -> Self {
        Self {
            negotiated: false,
            next_request_seq: local_initial_tsn,
            in_flight: None,
            pending_reset: BTreeSet::new(),
            pending_incoming: BTreeSet::new(),
            pending_add: (0, 0),
            pending_ssn_tsn: false,
            reset_tsns: BTreeMap::new(),
            peer_next_seq: 0,
            answered: [None, None],
            deferred: None,
            requests_in_packet: false,
        }
    }

    /// The handshake gave the peer's initial TSN.
    pub fn set_peer_initial_tsn(&mut self, tsn: u32) {
        self.peer_next_seq = tsn;
    }

    /// Payload bytes of messages held by a deferred reset (charged to the
    /// receive window), and how many.
    pub fn held(&self) -> (usize, usize) {
        self.deferred
            .as_ref()
            .map_or((0, 0), |d| (d.held_bytes, d.held.len()))
    }

    /// New DATA waits: an SSN/TSN reset needs everything acknowledged first
    /// and nothing new until it is answered (5.1.4).
    pub fn holds_new_data(&self) -> bool {
        self.pending_ssn_tsn || self.in_flight_has(|r| matches!(r, Request::SsnTsn))
    }

    fn in_flight_has(&self, f: impl Fn(&Request) -> bool) -> bool {
        self.in_flight
            .as_ref()
            .is_some_and(|i| i.requests.iter().any(|(_, r)| f(r)))
    }

    /// Streams being added by requests queued or in flight: outgoing, incoming.
    fn adds_requested(&self) -> (u32, u32) {
        let mut out = u32::from(self.pending_add.0);
        let mut inc = u32::from(self.pending_add.1);
        for (_, r) in self.in_flight.iter().flat_map(|i| i.requests.iter()) {
            match r {
                Request::AddOutgoing(n) => out += u32::from(*n),
                Request::AddIncoming(n) => inc += u32::from(*n),
                _ => {}
            }
        }
        (out, inc)
    }

    fn has_pending(&self) -> bool {
        !self.pending_reset.is_empty()
            || !self.pending_incoming.is_empty()
            || self.pending_add != (0, 0)
            || self.pending_ssn_tsn
    }

    fn take_seq(&mut self) -> u32 {
        let seq = self.next_request_seq;
        self.next_request_seq = seq.wrapping_add(1);
        seq
    }

    fn remember(&mut self, answer: ReconfigParam<'static>) {
        self.answered = [self.answered[1].take(), Some(answer)];
    }

    fn repeat(&self, seq: u32) -> Option<ReconfigParam<'static>> {
        self.answered
            .iter()
            .flatten()
            .find(|a| matches!(a, ReconfigParam::Response { response_seq, .. } if *response_seq == seq))
            .cloned()
    }
}

fn response(seq: u32, result: ReconfigResult) -> ReconfigParam<'static> {
    ReconfigParam::Response {
        response_seq: seq,
        result,
        next_tsns: None,
    }
}

fn is_success(result: ReconfigResult) -> bool {
    matches!(
        result,
        ReconfigResult::SuccessPerformed | ReconfigResult::SuccessNothingToDo
    )
}

/// Sorted, without repeats.
fn normalized(streams: &[u16]) -> Vec<u16> {
    let mut s = streams.to_vec();
    s.sort_unstable();
    s.dedup();
    s
}

impl Association {
    /// Whether stream reconfiguration was negotiated (RFC 6525 3.1): both
    /// ends listed RE-CONFIG. Without it the requests below fail with
    /// `ReconfigError::NotNegotiated`.
    pub fn stream_reconfig(&self) -> bool {
        self.reconfig.negotiated
    }

    fn reconfig_usable(&self) -> Result<(), ReconfigError> {
        if !self.reconfig.negotiated {
            return Err(ReconfigError::NotNegotiated);
        }
        if self.state != State::Established {
            return Err(ReconfigError::NotEstablished);
        }
        Ok(())
    }

    /// Resets outgoing streams (RFC 6525 5.1.2 Outgoing SSN Reset Request).
    /// From this call on the streams take no new messages for sending:
    /// messages sent on them now wait, and go with SSNs from 0 once the peer
    /// performed the reset (`Event::StreamsReset`, direction `Outgoing`) or
    /// with their old numbering if it refused (`Event::StreamResetFailed`).
    /// Messages queued before the call are sent first: the request goes
    /// once all of them took a TSN, and the peer resets only after receiving
    /// (or skipping) everything up to it. Streams asked for while a request
    /// is in flight go in the next one.
    pub fn reset_streams(&mut self, _now: Time, streams: &[u16]) -> Result<(), ReconfigError> {
        self.reconfig_usable()?;
        if streams.is_empty() {
            return Err(ReconfigError::NoStreams);
        }
        if let Some(&stream_id) = streams.iter().find(|&&s| s >= self.outbound_streams) {
            return Err(ReconfigError::UnknownStream {
                stream_id,
                streams: self.outbound_streams,
            });
        }
        for &s in streams {
            self.reconfig.pending_reset.insert(s);
            self.send_queue.pause(s);
        }
        Ok(())
    }

    /// Asks the peer to reset its outgoing streams that are our incoming
    /// `streams` (RFC 6525 5.1.3 Incoming SSN Reset Request). When it does,
    /// `Event::StreamsReset` with direction `Incoming` follows; a refusal is
    /// `Event::StreamResetFailed`.
    pub fn request_incoming_reset(
        &mut self,
        _now: Time,
        streams: &[u16],
    ) -> Result<(), ReconfigError> {
        self.reconfig_usable()?;
        if streams.is_empty() {
            return Err(ReconfigError::NoStreams);
        }
        let inbound = self.delivery.inbound_streams();
        if let Some(&stream_id) = streams.iter().find(|&&s| s >= inbound) {
            return Err(ReconfigError::UnknownStream {
                stream_id,
                streams: inbound,
            });
        }
        self.reconfig.pending_incoming.extend(streams);
        Ok(())
    }

    /// Adds streams (RFC 6525 5.1.5 Add Outgoing Streams, 5.1.6 Add Incoming
    /// Streams Request). Outgoing streams count at most 65535; incoming ones
    /// at most `Config::max_inbound_streams`. `Event::StreamsAdded` reports
    /// the new numbers when the peer performed it (for incoming streams:
    /// when its own Add Outgoing Streams Request arrives),
    /// `Event::StreamsAddFailed` a refusal.
    pub fn add_streams(
        &mut self,
        _now: Time,
        outgoing: u16,
        incoming: u16,
    ) -> Result<(), ReconfigError> {
        self.reconfig_usable()?;
        if outgoing == 0 && incoming == 0 {
            return Err(ReconfigError::NoStreams);
        }
        let (out_asked, in_asked) = self.reconfig.adds_requested();
        let out_total = u32::from(self.outbound_streams) + out_asked + u32::from(outgoing);
        if out_total > u32::from(u16::MAX) {
            return Err(ReconfigError::TooManyStreams {
                current: self.outbound_streams,
                requested: out_asked + u32::from(outgoing),
                limit: u16::MAX,
            });
        }
        let inbound = self.delivery.inbound_streams();
        let in_total = u32::from(inbound) + in_asked + u32::from(incoming);
        if in_total > u32::from(self.cfg.max_inbound_streams) {
            return Err(ReconfigError::TooManyStreams {
                current: inbound,
                requested: in_asked + u32::from(incoming),
                limit: self.cfg.max_inbound_streams,
            });
        }
        let p = &mut self.reconfig.pending_add;
        // Within u16: checked above.
        p.0 = p.0.saturating_add(outgoing);
        p.1 = p.1.saturating_add(incoming);
        Ok(())
    }

    /// Resets every stream's SSN both ways and the TSNs (RFC 6525 5.1.4
    /// SSN/TSN Reset Request). New messages wait until the peer answered;
    /// the request goes once everything sent is acknowledged.
    /// `Event::AssociationReset` reports it performed.
    pub fn reset_ssn_tsn(&mut self, _now: Time) -> Result<(), ReconfigError> {
        self.reconfig_usable()?;
        if self.reconfig.holds_new_data() {
            return Err(ReconfigError::AlreadyRequested);
        }
        self.reconfig.pending_ssn_tsn = true;
        Ok(())
    }
}

/// Before each packet: sends the next request if none is in flight and one
/// is ready (RFC 6525 5.1.1: one request in flight at a time).
pub(super) fn poll_request(a: &mut Association, now: Time) {
    let r = &a.reconfig;
    // Also while shutting down: the streams paused for a reset hold
    // messages that the shutdown waits for.
    if !r.negotiated
        || r.in_flight.is_some()
        || !r.has_pending()
        || !matches!(
            a.state,
            State::Established | State::ShutdownPending | State::ShutdownReceived
        )
    {
        return;
    }
    // Stream lists that fit one packet, both of them with the chunk.
    let max_streams = a.path.mtu.saturating_sub(12 + 4 + 16 + 8) / 4;
    let mut requests: Vec<Request> = Vec::new();
    if !a.reconfig.pending_ssn_tsn {
        let ready: Vec<u16> = a
            .reconfig
            .pending_reset
            .iter()
            .copied()
            .filter(|&s| a.send_queue.is_drained(s))
            .take(max_streams)
            .collect();
        if !ready.is_empty() {
            for s in &ready {
                a.reconfig.pending_reset.remove(s);
            }
            // 5.1.2 A3: the TSN last assigned.
            let last_tsn = a.rtx.outstanding().next_tsn().prev().0;
            for &s in &ready {
                a.reconfig.reset_tsns.insert(s, Tsn(last_tsn));
            }
            requests.push(Request::ResetOutgoing {
                streams: ready,
                last_tsn,
            });
        }
    }
    if !a.reconfig.pending_incoming.is_empty() {
        let streams: Vec<u16> = a
            .reconfig
            .pending_incoming
            .iter()
            .copied()
            .take(max_streams)
            .collect();
        for s in &streams {
            a.reconfig.pending_incoming.remove(s);
        }
        requests.push(Request::ResetIncoming { streams });
    }
    if requests.is_empty() && a.reconfig.pending_add != (0, 0) {
        let (out, inc) = std::mem::take(&mut a.reconfig.pending_add);
        if out > 0 {
            requests.push(Request::AddOutgoing(out));
        }
        if inc > 0 {
            requests.push(Request::AddIncoming(inc));
        }
    }
    if requests.is_empty()
        && a.reconfig.pending_ssn_tsn
        && a.rtx.outstanding().is_empty()
        && !a.send_queue.is_mid_message()
    {
        a.reconfig.pending_ssn_tsn = false;
        requests.push(Request::SsnTsn);
    }
    if requests.is_empty() {
        return;
    }
    a.counters.reconfig_requests_sent += requests.len() as u64;
    let requests = requests
        .into_iter()
        .map(|r| (a.reconfig.take_seq(), r))
        .collect();
    let flight = InFlight {
        requests,
        // 5.1.2 A4: the peer's last Request Sequence Number we received.
        response_seq: a.reconfig.peer_next_seq.wrapping_sub(1),
        backoff: 0,
        in_progress: false,
    };
    send(a, &flight);
    a.reconfig.in_flight = Some(flight);
    let rto = a.path.rto.rto();
    a.timers.start(TimerKind::Reconfig, now, rto);
}

/// Queues the RE-CONFIG chunk of a request in flight.
fn send(a: &mut Association, flight: &InFlight) {
    let params = flight
        .requests
        .iter()
        .map(|(seq, r)| match r {
            Request::ResetOutgoing { streams, last_tsn } => ReconfigParam::OutgoingSsnReset {
                request_seq: *seq,
                response_seq: flight.response_seq,
                last_tsn: *last_tsn,
                streams: streams.clone(),
            },
            Request::ResetIncoming { streams } => ReconfigParam::IncomingSsnReset {
                request_seq: *seq,
                streams: streams.clone(),
            },
            Request::SsnTsn => ReconfigParam::SsnTsnReset { request_seq: *seq },
            Request::AddOutgoing(n) => ReconfigParam::AddOutgoingStreams {
                request_seq: *seq,
                new_streams: *n,
            },
            Request::AddIncoming(n) => ReconfigParam::AddIncomingStreams {
                request_seq: *seq,
                new_streams: *n,
            },
        })
        .collect();
    let chunk = Chunk::ReConfig(ReConfig { params });
    if flight
        .requests
        .iter()
        .any(|(_, r)| matches!(r, Request::SsnTsn))
    {
        // 5.2.4 G3 has the peer take its own outstanding data as
        // acknowledged, which usrsctp does not: a SACK of everything we
        // received goes first, in the same packet, so that none is left.
        a.sack_requested = true;
        a.control.push_back(Control::new(chunk));
    } else {
        // In a packet of its own: a peer that cannot parse it drops the
        // packet (pion/sctp v1.11.3 does), and nothing else goes with it.
        a.control.push_back(Control::alone(chunk));
    }
}

/// The RE-CONFIG timer expired (RFC 6525 5.1.1): the request goes again,
/// after twice the wait, and counts as an error of the association, unless
/// the peer had answered "In progress" (5.2.7).
pub(super) fn on_timer(a: &mut Association, now: Time) {
    let Some(mut flight) = a.reconfig.in_flight.take() else {
        return;
    };
    if flight.in_progress {
        flight.in_progress = false;
    } else {
        if !a.count_error() {
            return;
        }
        if flight.backoff >= MAX_REQUEST_RETRANSMITS {
            // Never answered: what may be given up is reported as failed.
            let (kept, given_up): (Vec<_>, Vec<_>) = std::mem::take(&mut flight.requests)
                .into_iter()
                .partition(|(_, r)| matches!(r, Request::ResetOutgoing { .. } | Request::SsnTsn));
            flight.requests = kept;
            for (_, request) in given_up {
                finish(a, now, request, NO_ANSWER, None);
            }
            if flight.requests.is_empty() {
                return;
            }
        }
        flight.backoff = flight.backoff.saturating_add(1);
    }
    a.counters.reconfig_retransmissions += 1;
    send(a, &flight);
    let wait = a
        .path
        .rto
        .rto()
        .saturating_mul(1u32 << flight.backoff.min(16))
        .min(a.cfg.rto_max);
    a.reconfig.in_flight = Some(flight);
    a.timers.start(TimerKind::Reconfig, now, wait);
}

/// A RE-CONFIG chunk (RFC 6525 5.2): requests are answered, responses
/// matched to our request in flight.
pub(super) fn on_reconfig(a: &mut Association, now: Time, chunk: &ReConfig<'_>) {
    if !matches!(
        a.state,
        State::Established | State::ShutdownPending | State::ShutdownSent | State::ShutdownReceived
    ) {
        a.counters.malformed_chunks += 1;
        return;
    }
    // RFC 6525 5.1.1: a peer has one request in flight at a time, so one
    // RE-CONFIG chunk of requests per packet at most; more are a flood
    // (each could reset every stream) and are not processed.
    let has_requests = chunk.params.iter().any(|p| {
        !matches!(
            p,
            ReconfigParam::Response { .. } | ReconfigParam::Unknown { .. }
        )
    });
    if has_requests && std::mem::replace(&mut a.reconfig.requests_in_packet, true) {
        a.counters.malformed_chunks += 1;
        return;
    }
    let mut answers = Vec::new();
    for param in &chunk.params {
        match param {
            ReconfigParam::Response {
                response_seq,
                result,
                next_tsns,
            } => on_response(a, now, *response_seq, *result, *next_tsns),
            ReconfigParam::Unknown { typ, .. } => {
                // RFC 6525 4 (RFC 9260 3.2.1): the upper bits 00 and 01 stop
                // the processing of the chunk.
                a.counters.malformed_chunks += 1;
                if typ & 0x8000 == 0 {
                    break;
                }
            }
            request => {
                a.counters.reconfig_requests_received += 1;
                answers.push(on_request(a, now, request));
            }
        }
    }
    if answers.is_empty() {
        return;
    }
    queue_answers(a, answers);
}

/// Queues a RE-CONFIG chunk of one or two responses, unless enough are
/// waiting already (the peer retransmits what goes unanswered).
fn queue_answers(a: &mut Association, answers: Vec<ReconfigParam<'static>>) {
    let queued = a
        .control
        .iter()
        .filter(|c| {
            matches!(&c.chunk, Chunk::ReConfig(r)
                if matches!(r.params.first(), Some(ReconfigParam::Response { .. })))
        })
        .count();
    if queued >= MAX_QUEUED_RESPONSES {
        a.counters.errors_suppressed += 1;
        return;
    }
    a.control
        .push_back(Control::new(Chunk::ReConfig(ReConfig { params: answers })));
}

fn request_seq(p: &ReconfigParam<'_>) -> u32 {
    match p {
        ReconfigParam::OutgoingSsnReset { request_seq, .. }
        | ReconfigParam::IncomingSsnReset { request_seq, .. }
        | ReconfigParam::SsnTsnReset { request_seq }
        | ReconfigParam::AddOutgoingStreams { request_seq, .. }
        | ReconfigParam::AddIncomingStreams { request_seq, .. } => *request_seq,
        ReconfigParam::Response { response_seq, .. } => *response_seq,
        ReconfigParam::Unknown { .. } => 0,
    }
}

/// One request of the peer, checked against the sequence number we expect
/// (5.2.1); returns the answer.
fn on_request(a: &mut Association, now: Time, p: &ReconfigParam<'_>) -> ReconfigParam<'static> {
    let seq = request_seq(p);
    if !a.reconfig.negotiated {
        // Not offered by us (or by the peer): refused, without state.
        return response(seq, ReconfigResult::Denied);
    }
    if seq != a.reconfig.peer_next_seq {
        // 5.2.1: a retransmission of a request we answered gets the same
        // answer; any other number is a bad one.
        return a
            .reconfig
            .repeat(seq)
            .unwrap_or_else(|| response(seq, ReconfigResult::ErrorBadSequenceNumber));
    }
    let (answer, consumed) = perform(a, now, p);
    if consumed {
        a.reconfig.peer_next_seq = seq.wrapping_add(1);
        a.reconfig.remember(answer.clone());
    }
    answer
}

/// Performs (or defers, or refuses) the request `p`, which carries the
/// sequence number we expected. Returns the answer and whether the request
/// was taken (otherwise its retransmission is performed anew).
fn perform(
    a: &mut Association,
    now: Time,
    p: &ReconfigParam<'_>,
) -> (ReconfigParam<'static>, bool) {
    let seq = request_seq(p);
    let result = match p {
        ReconfigParam::OutgoingSsnReset {
            response_seq,
            last_tsn,
            streams,
            ..
        } => on_outgoing_reset(a, now, seq, *response_seq, Tsn(*last_tsn), streams),
        ReconfigParam::IncomingSsnReset { streams, .. } => on_incoming_reset(a, streams),
        ReconfigParam::SsnTsnReset { .. } => return on_ssn_tsn_reset(a, now, seq),
        ReconfigParam::AddOutgoingStreams { new_streams, .. } => on_add_outgoing(a, *new_streams),
        ReconfigParam::AddIncomingStreams { new_streams, .. } => on_add_incoming(a, *new_streams),
        ReconfigParam::Response { .. } | ReconfigParam::Unknown { .. } => ReconfigResult::Denied,
    };
    (response(seq, result), true)
}

/// 5.2.2: the peer reset its outgoing streams, our incoming ones.
fn on_outgoing_reset(
    a: &mut Association,
    now: Time,
    seq: u32,
    response_seq: u32,
    last_tsn: Tsn,
    streams: &[u16],
) -> ReconfigResult {
    // 5.2.2: the answer to our Incoming SSN Reset Request, if it was one.
    complete_incoming_request(a, response_seq);
    let streams = normalized(streams);
    let inbound = a.delivery.inbound_streams();
    if streams.last().is_some_and(|&s| s >= inbound) {
        return ReconfigResult::Denied;
    }
    if a.reconfig.deferred.is_some() {
        return ReconfigResult::ErrorRequestAlreadyInProgress;
    }
    let cum = a.tracker.cum_tsn();
    if !cum.is_before(last_tsn) {
        // E3: everything before the reset has arrived (or was skipped).
        reset_incoming(a, now, &streams);
        return ReconfigResult::SuccessPerformed;
    }
    // A sender cannot have assigned TSNs further ahead than a gap block
    // reaches: a Last Assigned TSN beyond lies.
    if last_tsn.since(cum) > MAX_GAP_OFFSET {
        a.counters.malformed_chunks += 1;
        return ReconfigResult::Denied;
    }
    // E1: deferred until the cumulative TSN reaches it.
    a.reconfig.deferred = Some(Deferred {
        request_seq: seq,
        last_tsn,
        streams,
        held: Vec::new(),
        held_bytes: 0,
    });
    ReconfigResult::InProgress
}

/// The peer's Outgoing SSN Reset Request answered our Incoming SSN Reset
/// Request `response_seq` (5.2.2, 5.1.3): that request is done.
fn complete_incoming_request(a: &mut Association, response_seq: u32) {
    let Some(flight) = a.reconfig.in_flight.as_mut() else {
        return;
    };
    flight
        .requests
        .retain(|(seq, r)| !(*seq == response_seq && matches!(r, Request::ResetIncoming { .. })));
    if flight.requests.is_empty() {
        a.reconfig.in_flight = None;
        a.timers.stop(TimerKind::Reconfig);
    }
}

/// 5.2.2 E3: the next expected SSN of `streams` (all if empty) is 0.
fn reset_incoming(a: &mut Association, now: Time, streams: &[u16]) {
    let list: Vec<u16> = if streams.is_empty() {
        (0..a.delivery.inbound_streams()).collect()
    } else {
        streams.to_vec()
    };
    for &s in &list {
        a.delivery.reset_stream(s, now);
    }
    a.counters.streams_reset += list.len() as u64;
    if a.delivery.has_ready() {
        a.emit(Event::MessageReady);
    }
    a.emit(Event::StreamsReset {
        direction: ResetDirection::Incoming,
        streams: list,
    });
}

/// 5.2.3: the peer asks us to reset our outgoing `streams` (all if
/// empty): those we have used go in our next Outgoing SSN Reset Request.
/// A stream never used still numbers from 0: nothing to reset, and no
/// state is made for it (a request naming every stream costs nothing).
fn on_incoming_reset(a: &mut Association, streams: &[u16]) -> ReconfigResult {
    let outbound = a.outbound_streams;
    if streams.iter().any(|&s| s >= outbound) {
        return ReconfigResult::Denied;
    }
    let used: Vec<u16> = if streams.is_empty() {
        a.send_queue.used_streams().collect()
    } else {
        let used: BTreeSet<u16> = a.send_queue.used_streams().collect();
        normalized(streams)
            .into_iter()
            .filter(|s| used.contains(s))
            .collect()
    };
    if used.is_empty() {
        return ReconfigResult::SuccessNothingToDo;
    }
    for s in used {
        a.reconfig.pending_reset.insert(s);
        a.send_queue.pause(s);
    }
    ReconfigResult::SuccessPerformed
}

/// 5.2.4: the peer asks to reset every SSN and the TSNs. Performed only
/// when everything we sent is acknowledged (otherwise "In progress", and
/// the peer's retransmission is taken anew).
fn on_ssn_tsn_reset(a: &mut Association, now: Time, seq: u32) -> (ReconfigParam<'static>, bool) {
    if a.reconfig.deferred.is_some() || a.reconfig.in_flight.is_some() {
        return (
            response(seq, ReconfigResult::ErrorRequestAlreadyInProgress),
            true,
        );
    }
    if !a.rtx.outstanding().is_empty() || a.send_queue.is_mid_message() {
        return (response(seq, ReconfigResult::InProgress), false);
    }
    // G4: as a FORWARD TSN to the highest TSN received; G1: the peer's
    // next TSN is the first we did not acknowledge plus 2^31.
    let receiver_next = a.tracker.cum_tsn().next().plus(1 << 31);
    restart_receiving(a, now, receiver_next);
    // G2, G3: our next TSN stays (nothing is outstanding).
    let sender_next = a.rtx.outstanding().next_tsn();
    a.send_queue.reset_all_ssns();
    a.emit(Event::AssociationReset);
    (
        ReconfigParam::Response {
            response_seq: seq,
            result: ReconfigResult::SuccessPerformed,
            next_tsns: Some((sender_next.0, receiver_next.0)),
        },
        true,
    )
}

/// RFC 6525 5.2.4 G4, G5 (and 5.1.4 for the requester): whole messages
/// waiting are delivered, partial ones dropped, every incoming stream
/// expects SSN 0, and the peer's TSNs start at `peer_next`.
fn restart_receiving(a: &mut Association, now: Time, peer_next: Tsn) {
    for s in 0..a.delivery.inbound_streams() {
        a.delivery.reset_stream(s, now);
    }
    if let Some(d) = a.reconfig.deferred.take() {
        // The deferred reset is overtaken: every stream was reset.
        for m in d.held {
            a.delivery.push(m, now);
        }
        answer_performed(a, d.request_seq);
    }
    a.tracker = TsnTracker::new(peer_next);
    a.reassembly = Reassembly::new(peer_next.0, a.cfg.largest_message_received());
    if a.delivery.has_ready() {
        a.emit(Event::MessageReady);
    }
}

/// 5.2.5: the peer adds outgoing streams, our incoming ones, up to
/// `Config::max_inbound_streams`.
fn on_add_outgoing(a: &mut Association, added: u16) -> ReconfigResult {
    let total = u32::from(a.delivery.inbound_streams()) + u32::from(added);
    if added == 0 || total > u32::from(a.cfg.max_inbound_streams) {
        return ReconfigResult::Denied;
    }
    let incoming = a.delivery.add_streams(added);
    a.emit(Event::StreamsAdded {
        outgoing: a.outbound_streams,
        incoming,
    });
    ReconfigResult::SuccessPerformed
}

/// 5.2.6: the peer asks us to add outgoing streams: our Add Outgoing
/// Streams Request follows (up to 65535 streams).
fn on_add_incoming(a: &mut Association, added: u16) -> ReconfigResult {
    let (asked, _) = a.reconfig.adds_requested();
    let total = u32::from(a.outbound_streams) + asked + u32::from(added);
    if added == 0 || total > u32::from(u16::MAX) {
        return ReconfigResult::Denied;
    }
    let p = &mut a.reconfig.pending_add;
    p.0 = p.0.saturating_add(added);
    ReconfigResult::SuccessPerformed
}

/// A Re-configuration Response (5.2.7), matched to our request in flight by
/// its sequence number; any other is ignored.
fn on_response(
    a: &mut Association,
    now: Time,
    response_seq: u32,
    result: ReconfigResult,
    next_tsns: Option<(u32, u32)>,
) {
    let found = a
        .reconfig
        .in_flight
        .as_ref()
        .and_then(|f| f.requests.iter().position(|(seq, _)| *seq == response_seq));
    let (Some(i), Some(flight)) = (found, a.reconfig.in_flight.as_mut()) else {
        a.counters.malformed_chunks += 1;
        return;
    };
    // An answer proves the peer reachable (RFC 9260 8.3).
    a.errors = 0;
    if result == ReconfigResult::InProgress {
        // 5.2.7: ask again after a while, without counting an error.
        flight.in_progress = true;
        let rto = a.path.rto.rto();
        a.timers.start(TimerKind::Reconfig, now, rto);
        return;
    }
    let (_, request) = flight.requests.remove(i);
    if flight.requests.is_empty() {
        a.reconfig.in_flight = None;
        a.timers.stop(TimerKind::Reconfig);
    }
    finish(a, now, request, result, next_tsns);
}

/// Our request ended with `result`: performs our side of it and reports.
fn finish(
    a: &mut Association,
    now: Time,
    request: Request,
    result: ReconfigResult,
    next_tsns: Option<(u32, u32)>,
) {
    let ok = is_success(result);
    match request {
        Request::ResetOutgoing { streams, .. } => {
            for &s in &streams {
                a.send_queue.resume(s, ok);
                // Asked again after messages were held: another reset is
                // owed, once they went.
                if a.send_queue.is_paused(s) {
                    a.reconfig.pending_reset.insert(s);
                } else {
                    a.reconfig.pending_reset.remove(&s);
                }
            }
            if ok {
                a.counters.streams_reset += streams.len() as u64;
                a.emit(Event::StreamsReset {
                    direction: ResetDirection::Outgoing,
                    streams,
                });
            } else {
                // The old numbering goes on: FORWARD TSN names it again.
                for s in &streams {
                    a.reconfig.reset_tsns.remove(s);
                }
                a.emit(Event::StreamResetFailed { streams, result });
            }
        }
        Request::ResetIncoming { streams } => {
            if result == ReconfigResult::SuccessNothingToDo {
                // The peer never used them: they number from 0 already, and
                // no Outgoing SSN Reset Request of its own follows.
                a.emit(Event::StreamsReset {
                    direction: ResetDirection::Incoming,
                    streams,
                });
            } else if !ok {
                a.emit(Event::StreamResetFailed { streams, result });
            }
        }
        Request::SsnTsn => match next_tsns {
            Some((sender_next, receiver_next)) if ok => {
                // 5.1.4: the peer's next TSN, and ours.
                restart_receiving(a, now, Tsn(sender_next));
                let rwnd = a.rtx.peer_rwnd();
                a.rtx.restart(Tsn(receiver_next), &mut a.timers);
                a.rtx.on_peer_window(rwnd);
                a.send_queue.reset_all_ssns();
                a.emit(Event::AssociationReset);
            }
            _ => a.emit(Event::AssociationResetFailed { result }),
        },
        Request::AddOutgoing(n) => {
            if ok {
                a.outbound_streams = a.outbound_streams.saturating_add(n);
                a.send_queue.limit_streams(a.outbound_streams);
                a.emit(Event::StreamsAdded {
                    outgoing: a.outbound_streams,
                    incoming: a.delivery.inbound_streams(),
                });
            } else {
                a.emit(Event::StreamsAddFailed {
                    outgoing: n,
                    incoming: 0,
                    result,
                });
            }
        }
        Request::AddIncoming(n) => {
            if !ok {
                a.emit(Event::StreamsAddFailed {
                    outgoing: 0,
                    incoming: n,
                    result,
                });
            }
        }
    }
}

/// A whole message for delivery: held if a deferred reset covers its
/// stream and it belongs to the new numbering (5.2.2 E1).
pub(super) fn deliver(a: &mut Association, msg: Reassembled, now: Time) {
    if let Some(d) = a.reconfig.deferred.as_mut()
        && !msg.unordered
        && d.covers(msg.stream_id)
        && d.last_tsn.is_before(Tsn(msg.first_tsn))
    {
        d.held_bytes += msg.payload.len();
        d.held.push(msg);
        return;
    }
    a.delivery.push(msg, now);
}

/// After a packet moved the cumulative TSN: performs a deferred reset once
/// every TSN up to its Sender's Last Assigned TSN arrived or was skipped
/// (5.2.2 E1 to E4), and answers the request again, now performed.
pub(super) fn after_packet(a: &mut Association, now: Time) {
    a.reconfig.requests_in_packet = false;
    let Some(d) = &a.reconfig.deferred else {
        return;
    };
    if a.tracker.cum_tsn().is_before(d.last_tsn) {
        return;
    }
    let Some(d) = a.reconfig.deferred.take() else {
        return;
    };
    reset_incoming(a, now, &d.streams);
    for m in d.held {
        a.delivery.push(m, now);
    }
    if a.delivery.has_ready() {
        a.emit(Event::MessageReady);
    }
    answer_performed(a, d.request_seq);
}

/// The deferred request `seq` is performed: it is answered so, now and to
/// any repeat.
fn answer_performed(a: &mut Association, seq: u32) {
    let answer = response(seq, ReconfigResult::SuccessPerformed);
    for slot in a.reconfig.answered.iter_mut().flatten() {
        if request_seq(slot) == seq {
            *slot = answer.clone();
        }
    }
    queue_answers(a, vec![answer]);
}

/// RFC 3758 3.5 F with RFC 6525: a FORWARD TSN's entry for a stream we asked
/// to reset, when the last chunk it skips on that stream belongs to the old
/// numbering (its TSN at or before the request's Sender's Last Assigned
/// TSN), is left out: the peer may have reset the stream already, and that
/// SSN would then skip messages of the new numbering. The reset, performed
/// once the peer's cumulative TSN reaches the request's, delivers what
/// waited behind the abandoned message.
pub(super) fn filter_forward_tsn(a: &mut Association, forward: &mut ForwardTsn) {
    if a.reconfig.reset_tsns.is_empty() {
        return;
    }
    // Once everything up to a request's TSN is acknowledged, no chunk of
    // the old numbering is left.
    let cum = a.rtx.outstanding().cum_ack_point();
    a.reconfig.reset_tsns.retain(|_, last| cum.is_before(*last));
    let point = Tsn(forward.new_cum_tsn);
    let outstanding = a.rtx.outstanding();
    let reset_tsns = &a.reconfig.reset_tsns;
    forward.streams.retain(|entry| {
        let Some(&last) = reset_tsns.get(&entry.stream_id) else {
            return true;
        };
        let skipped = outstanding
            .chunks()
            .filter(|c| {
                c.frag.stream_id.0 == entry.stream_id
                    && !c.frag.flags.unordered
                    && c.tsn.is_at_or_before(point)
            })
            .map(|c| c.tsn)
            .last();
        skipped.is_none_or(|tsn| last.is_before(tsn))
    });
}
