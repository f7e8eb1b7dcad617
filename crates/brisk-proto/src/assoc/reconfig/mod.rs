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
//!
//! With I-DATA (RFC 8260) a reset restarts both MID sequences of a stream,
//! ordered and unordered, at 0: the receiver resets `MidOrdering` as it
//! resets `Delivery` (whole waiting messages first), and drops what is
//! left of the old numbering's unfinished messages, whose (stream, U, MID)
//! the new numbering reuses. While a reset is deferred, I-DATA fragments
//! of the new numbering are reassembled apart (`Deferred::next_numbering`)
//! and join the association's reassembly once it is performed.
//!
//! While our SSN/TSN Reset Request is in flight the peer may have performed
//! it and sent new data before its answer reaches us: ordered messages
//! completed meanwhile are held, and the answer's Sender's Next TSN tells
//! the old numbering's (delivered before the reset) from the new one's
//! (after it). An "In progress" answer releases them (the peer had not
//! performed it), and the peer's stream resets wait for the answer.
//!
//! This file holds the state, the application's calls and the dispatch of a
//! received RE-CONFIG chunk; `ours.rs` sends our requests and handles their
//! answers, `theirs.rs` answers the peer's requests.

mod ours;
mod theirs;

use std::collections::{BTreeMap, BTreeSet};

use super::{Association, Control, State};
use crate::events::{Event, ResetDirection};
use crate::message::IncomingMessage;
use crate::rx::interleaved::{IReassembled, IReassembly, MessageKey};
use crate::rx::{IFragment, MAX_GAP_OFFSET, Reassembled, Reassembly, ReassemblyError, TsnTracker};
use crate::serial::Tsn;
use crate::time::Time;
use crate::timer::TimerKind;
use crate::wire::chunk::{Chunk, ReConfig, ReconfigParam, ReconfigResult};

pub(super) use ours::{filter_forward_tsn, on_timer, poll_request};
pub(super) use theirs::{after_packet, deliver, ipartial, reassemble_idata, skip_mid, skip_ssn};

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
/// association (RFC 6525 5.1.1); a request given up has its errors
/// forgiven (the peer did not understand it, which says nothing of its
/// reachability).
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
    held: Vec<Held>,
    held_bytes: usize,
    /// I-DATA fragments on those streams beyond `last_tsn`, reassembled
    /// apart: the new numbering's MIDs restart at 0 (RFC 8260 with RFC 6525)
    /// and may repeat those of unfinished messages of the old one. They join
    /// the association's reassembly once the reset is performed.
    next_numbering: Option<IReassembly>,
}

/// A whole message held by a deferred reset, as its chunks carried it, or
/// a FORWARD TSN's skip of an ordered stream that arrived behind held
/// messages: it applies to them in turn when they are released (RFC 3758
/// 3.6 with RFC 6525), never before they are ordered.
#[derive(Debug)]
enum Held {
    /// DATA: ordered by SSN in `Delivery`.
    Data(Reassembled),
    /// I-DATA: ordered by MID in `MidOrdering`.
    IData(IReassembled),
    /// FORWARD TSN: `stream` skips through `ssn`; `tsn` is the New
    /// Cumulative TSN that carried it.
    Skip { stream: u16, ssn: u16, tsn: Tsn },
    /// I-FORWARD-TSN: ordered `stream` skips through `mid` (RFC 8260 2.3.1).
    SkipMid { stream: u16, mid: u32, tsn: Tsn },
}

impl Held {
    fn first_tsn(&self) -> Tsn {
        match self {
            Held::Data(m) => Tsn(m.first_tsn),
            Held::IData(m) => Tsn(m.first_tsn),
            Held::Skip { tsn, .. } | Held::SkipMid { tsn, .. } => *tsn,
        }
    }

    /// The message's stream, whether it is unordered, and its payload bytes.
    fn stream_unordered_len(&self) -> (u16, bool, usize) {
        match self {
            Held::Data(m) => (m.stream_id, m.unordered, m.payload.len()),
            Held::IData(m) => (m.stream_id, m.unordered, m.payload.len()),
            Held::Skip { stream, .. } | Held::SkipMid { stream, .. } => (*stream, false, 0),
        }
    }
}

/// Holds a skip behind the held messages of `held`: it replaces a skip of
/// the same stream with no message of that stream after it, so that the
/// skips held stay within one per held message and one per stream.
fn hold_skip(held: &mut Vec<Held>, skip: Held) {
    let (stream, ..) = skip.stream_unordered_len();
    let last = held
        .iter_mut()
        .rev()
        .find(|h| !h.stream_unordered_len().1 && h.stream_unordered_len().0 == stream);
    match last {
        Some(h @ (Held::Skip { .. } | Held::SkipMid { .. })) => *h = skip,
        _ => held.push(skip),
    }
}

impl Deferred {
    fn covers(&self, stream: u16) -> bool {
        self.streams.is_empty() || self.streams.binary_search(&stream).is_ok()
    }

    /// Whether a chunk of `stream` with TSN `tsn` is of the new numbering
    /// the reset waits to start (5.2.2 E1).
    fn is_next_numbering(&self, stream: u16, tsn: u32) -> bool {
        self.covers(stream) && self.last_tsn.is_before(Tsn(tsn))
    }

    fn hold(&mut self, bytes: usize, msg: Held) {
        self.held_bytes += bytes;
        self.held.push(msg);
    }
}

/// Requests the application asked for that no request carries yet, and
/// the resets of ours the peer may have performed.
#[derive(Debug, Default)]
struct Pending {
    /// Outgoing streams to reset in the next request (paused meanwhile).
    reset: BTreeSet<u16>,
    /// Incoming streams the peer is to reset (5.1.3).
    incoming: BTreeSet<u16>,
    /// Streams to add: outgoing, incoming.
    add: (u16, u16),
    ssn_tsn: bool,
    /// Streams whose reset we asked for, with the request's Sender's Last
    /// Assigned TSN, while chunks of their old numbering may be outstanding
    /// (see [`filter_forward_tsn`]).
    reset_tsns: BTreeMap<u16, Tsn>,
}

/// Nothing pending, for reading without allocating.
static NO_PENDING: Pending = Pending {
    reset: BTreeSet::new(),
    incoming: BTreeSet::new(),
    add: (0, 0),
    ssn_tsn: false,
    reset_tsns: BTreeMap::new(),
};

/// Stream reconfiguration state of one association.
#[derive(Debug)]
pub(crate) struct Reconfig {
    /// Both ends offered RE-CONFIG.
    pub negotiated: bool,
    /// Our next Request Sequence Number (5.1.1: starts at our initial TSN).
    next_request_seq: u32,
    /// Boxed, as every part of this state that is not always needed: an
    /// idle association keeps none of it on the heap.
    in_flight: Option<Box<InFlight>>,
    /// Outgoing streams to reset in the next request (paused meanwhile).
    /// What the application asked for and no request carries yet, and the
    /// resets asked for (boxed: see `in_flight`).
    pending: Option<Box<Pending>>,
    /// The peer's Request Sequence Number we expect next (starts at its
    /// initial TSN).
    peer_next_seq: u32,
    /// Our answers to the peer's last two requests, for repeats (5.2.1).
    answered: Vec<ReconfigParam<'static>>,
    deferred: Option<Box<Deferred>>,
    /// Ordered messages completed while our SSN/TSN Reset Request is in
    /// flight (5.1.4): the peer may have performed it and numbers from 0
    /// already; its answer's Sender's Next TSN tells the old from the new.
    ssn_tsn_held: Vec<Held>,
    ssn_tsn_held_bytes: usize,
    /// The packet being handled carried a RE-CONFIG chunk with requests.
    requests_in_packet: bool,
}

impl Reconfig {
    pub fn new(local_initial_tsn: u32) -> Self {
        Self {
            negotiated: false,
            next_request_seq: local_initial_tsn,
            in_flight: None,
            pending: None,
            peer_next_seq: 0,
            answered: Vec::new(),
            deferred: None,
            ssn_tsn_held: Vec::new(),
            ssn_tsn_held_bytes: 0,
            requests_in_packet: false,
        }
    }

    fn pending(&self) -> &Pending {
        self.pending.as_deref().unwrap_or(&NO_PENDING)
    }

    fn pending_mut(&mut self) -> &mut Pending {
        self.pending.get_or_insert_with(Box::default)
    }

    /// The handshake gave the peer's initial TSN.
    pub fn set_peer_initial_tsn(&mut self, tsn: u32) {
        self.peer_next_seq = tsn;
    }

    /// Payload bytes of messages held by a deferred reset (charged to the
    /// receive window), and how many.
    /// With I-DATA, the fragments of the new numbering held apart count
    /// as messages do, one each.
    /// Messages held for an SSN/TSN reset in flight count too.
    pub fn held(&self) -> (usize, usize) {
        let (bytes, count) = self.deferred.as_ref().map_or((0, 0), |d| {
            let (bytes, fragments) = d
                .next_numbering
                .as_ref()
                .map_or((0, 0), |r| (r.buffered_bytes(), r.fragment_count()));
            (d.held_bytes + bytes, d.held.len() + fragments)
        });
        (
            bytes + self.ssn_tsn_held_bytes,
            count + self.ssn_tsn_held.len(),
        )
    }

    /// Our SSN/TSN Reset Request is in flight (5.1.4).
    fn ssn_tsn_in_flight(&self) -> bool {
        self.in_flight_has(|r| matches!(r, Request::SsnTsn))
    }

    /// Our SSN/TSN Reset Request is in flight: the peer may have performed
    /// it and use the new TSNs already (5.2.4).
    pub fn awaits_ssn_tsn_answer(&self) -> bool {
        self.ssn_tsn_in_flight()
    }

    /// New DATA waits: an SSN/TSN reset needs everything acknowledged first
    /// and nothing new until it is answered (5.1.4).
    pub fn holds_new_data(&self) -> bool {
        self.pending().ssn_tsn || self.in_flight_has(|r| matches!(r, Request::SsnTsn))
    }

    fn in_flight_has(&self, f: impl Fn(&Request) -> bool) -> bool {
        self.in_flight
            .as_ref()
            .is_some_and(|i| i.requests.iter().any(|(_, r)| f(r)))
    }

    /// Streams being added by requests queued or in flight: outgoing, incoming.
    fn adds_requested(&self) -> (u32, u32) {
        let mut out = u32::from(self.pending().add.0);
        let mut inc = u32::from(self.pending().add.1);
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
        let p = self.pending();
        !p.reset.is_empty() || !p.incoming.is_empty() || p.add != (0, 0) || p.ssn_tsn
    }

    fn take_seq(&mut self) -> u32 {
        let seq = self.next_request_seq;
        self.next_request_seq = seq.wrapping_add(1);
        seq
    }

    fn remember(&mut self, answer: ReconfigParam<'static>) {
        if self.answered.len() >= 2 {
            self.answered.remove(0);
        }
        self.answered.push(answer);
    }

    fn repeat(&self, seq: u32) -> Option<ReconfigParam<'static>> {
        self.answered
            .iter()
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

    /// Whether a reconfiguration request of ours waits to go or for its
    /// answer, or a request of the peer's waits to be performed (its
    /// messages, and those an SSN/TSN reset holds, with it).
    pub fn reconfig_in_progress(&self) -> bool {
        let r = &self.reconfig;
        r.in_flight.is_some() || r.has_pending() || r.deferred.is_some()
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
            self.reconfig.pending_mut().reset.insert(s);
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
        self.reconfig.pending_mut().incoming.extend(streams);
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
        let p = &mut self.reconfig.pending_mut().add;
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
        self.reconfig.pending_mut().ssn_tsn = true;
        Ok(())
    }
}

/// A RE-CONFIG chunk (RFC 6525 5.2): requests are answered, responses
/// matched to our request in flight.
/// The association ends while our SSN/TSN Reset Request waits for its
/// answer (RFC 6525 5.1.4): the messages held meanwhile were received whole
/// and acknowledged, and no earlier one can come any more. They go to the
/// application in TSN order (each stream's send order),
/// whatever the numbering the answer would have given them.
pub(super) fn release_held_at_close(a: &mut Association, now: Time) {
    let mut held = std::mem::take(&mut a.reconfig.ssn_tsn_held);
    a.reconfig.ssn_tsn_held_bytes = 0;
    // Held as they arrived, which loss and reordering shuffle.
    held.sort_by(|x, y| {
        let (x, y) = (x.first_tsn(), y.first_tsn());
        if x.is_before(y) {
            std::cmp::Ordering::Less
        } else if y.is_before(x) {
            std::cmp::Ordering::Greater
        } else {
            std::cmp::Ordering::Equal
        }
    });
    let mut any = false;
    for h in held {
        let msg = match h {
            Held::Data(m) => IncomingMessage {
                stream_id: m.stream_id,
                ppid: m.ppid,
                unordered: m.unordered,
                ssn: m.ssn,
                first_tsn: m.first_tsn,
                payload: m.payload,
                completed_at: now,
                deliverable_at: now,
            },
            Held::IData(m) => IncomingMessage {
                stream_id: m.stream_id,
                ppid: m.ppid,
                unordered: m.unordered,
                // As `rx::interleaved` does: the low 16 bits of the MID.
                ssn: m.mid as u16,
                first_tsn: m.first_tsn,
                payload: m.payload,
                completed_at: now,
                deliverable_at: now,
            },
            Held::Skip { .. } | Held::SkipMid { .. } => continue,
        };
        a.delivery.push_ready(msg);
        any = true;
    }
    if any {
        a.emit(Event::MessageReady);
    }
}

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
            } => ours::on_response(a, now, *response_seq, *result, *next_tsns),
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
                answers.push(theirs::on_request(a, now, request));
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

/// RFC 6525 5.2.4 G4, G5 (and 5.1.4 for the requester): whole messages
/// waiting are delivered, partial ones dropped, every incoming stream
/// expects SSN (with I-DATA, MID) 0, and the peer's TSNs start at
/// `peer_next`.
///
/// The requester's peer performed the reset before its answer came and
/// may have sent new data since, from `peer_next` on: the TSNs received
/// from there stay received (and their unfinished messages stay), and the
/// ordered messages held meanwhile are delivered, those before `peer_next`
/// before the reset, the others after it.
fn restart_receiving(a: &mut Association, now: Time, peer_next: Tsn, requester: bool) {
    let last_old = peer_next.prev();
    let cum = a.tracker.cum_tsn();
    // The peer's next TSN follows those received: it went on with the TSNs
    // it used (5.2.4 G2), and what came from there is of the new numbering.
    let caught_up = requester && !cum.is_before(last_old) && cum.since(last_old) <= MAX_GAP_OFFSET;
    let (old, new): (Vec<Held>, Vec<Held>) = std::mem::take(&mut a.reconfig.ssn_tsn_held)
        .into_iter()
        .partition(|m| !caught_up || m.first_tsn().is_before(peer_next));
    a.reconfig.ssn_tsn_held_bytes = 0;
    theirs::release(a, old, now);
    for s in 0..a.delivery.inbound_streams() {
        a.delivery.reset_stream(s, now);
        // RFC 8260: with I-DATA the MIDs restart at 0 as the SSNs do.
        a.mid_ordering.reset_stream(s, now, &mut a.delivery);
    }
    if let Some(d) = a.reconfig.deferred.take() {
        // The deferred reset is overtaken: every stream was reset. Its
        // unfinished messages of the new numbering are dropped (G5).
        theirs::release(a, d.held, now);
        theirs::answer_performed(a, d.request_seq);
    }
    if caught_up {
        a.reassembly.forget_through(last_old.0);
        a.ireassembly.forget_every_old_numbering(last_old.0);
    } else {
        a.tracker = TsnTracker::new(peer_next);
        let largest = a.cfg.largest_message_received();
        a.reassembly = Reassembly::new(peer_next.0, largest);
        a.ireassembly = IReassembly::new(peer_next.0, largest);
    }
    theirs::release(a, new, now);
    if a.delivery.has_ready() {
        a.emit(Event::MessageReady);
    }
}
