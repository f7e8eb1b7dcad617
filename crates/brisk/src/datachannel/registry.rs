//! The channel table of one association: which stream carries which channel,
//! each channel's DCEP state and bounded receive queue, the channels waiting
//! for `accept`, and the decisions RFC 8832 6 asks for when a DCEP message
//! arrives. Pure state: the demux task and the handles act on its verdicts.

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;

use tokio::sync::Notify;

use super::dcep::Open;
use super::message::Message;
use super::options::ChannelOptions;
use super::{CloseReason, DataChannelConfig, DataChannelStats, Error, Role};

/// What a channel is: its label and options. Shared with its handle, so
/// the label and protocol are held once.
#[derive(Debug)]
pub(crate) struct Meta {
    pub label: String,
    pub options: ChannelOptions,
}

impl Meta {
    /// The bytes charged to the metadata budget.
    pub fn bytes(&self) -> usize {
        self.label.len() + self.options.protocol.len()
    }
}

/// One channel's state.
#[derive(Debug)]
pub(crate) struct Channel {
    /// Tells this channel from a later one on the same stream id.
    pub generation: u64,
    pub meta: Arc<Meta>,
    /// We sent the DATA_CHANNEL_OPEN (or agreed it out of band).
    pub opener: bool,
    /// RFC 8832 6: the DATA_CHANNEL_ACK arrived (always true for channels
    /// the peer opened, and for negotiated ones).
    pub acked: bool,
    /// Messages received, not yet read: bounded by the configuration.
    pub queue: VecDeque<Message>,
    pub queued_bytes: usize,
    /// Set once no more messages will arrive; the queue still drains.
    pub closed: Option<CloseReason>,
    /// The application dropped its handle: what arrives is discarded.
    pub detached: bool,
    /// Where closing by stream reset stands (RFC 8831 6.7).
    pub reset: ResetState,
    /// Woken on every change: a message queued or read, the ACK, the close.
    pub notify: Arc<Notify>,
}

impl Channel {
    fn new(generation: u64, meta: Meta, opener: bool, acked: bool) -> Self {
        Self {
            generation,
            meta: Arc::new(meta),
            opener,
            acked,
            queue: VecDeque::new(),
            queued_bytes: 0,
            closed: None,
            detached: false,
            reset: ResetState::default(),
            notify: Arc::new(Notify::new()),
        }
    }
}

/// RFC 8831 6.7: a channel is closed by resetting its outgoing stream at
/// each end; it is gone, and its stream id free, once both are reset.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct ResetState {
    /// We asked to reset our outgoing stream.
    pub requested: bool,
    /// Our outgoing stream was reset (the peer performed our request).
    pub outgoing: bool,
    /// The peer reset its outgoing stream, our incoming one.
    pub incoming: bool,
    /// The peer refused or could not perform our request.
    pub failed: bool,
    /// We asked the peer to reset its outgoing stream (RFC 6525 5.1.3).
    pub incoming_requested: bool,
}

/// What to do with a DATA_CHANNEL_OPEN (or an unreadable DCEP message).
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum OpenVerdict {
    /// Valid: the channel is in the table; send DATA_CHANNEL_ACK on the stream.
    Ack,
    /// RFC 8832 6: close the channel on this stream (reset it) and send no
    /// ACK. `existing` says a channel already open there was closed.
    Refuse { existing: bool },
}

/// Where a user message goes.
#[derive(Debug)]
pub(crate) enum Route {
    /// Queued.
    Queued,
    /// Discarded (counted).
    Discarded,
    /// The channel's queue is full: wait on its `notify` and try again.
    Full,
}

#[derive(Debug)]
pub(crate) struct Registry {
    pub role: Role,
    pub config: DataChannelConfig,
    pub channels: HashMap<u16, Channel>,
    /// Channels the peer opened, not yet handed to `accept`.
    pub incoming: VecDeque<u16>,
    /// The association ended: nothing more arrives or can be sent.
    pub ended: Option<String>,
    pub stats: DataChannelStats,
    next_generation: u64,
    /// Channels closed in both directions whose handle is still held: out of
    /// the stream table (the id is free again), kept so the handle can drain
    /// its queue and learn why. At most one per live handle.
    pub retired: HashMap<u64, Channel>,
    /// Bytes of labels and protocols of the channels in `channels` and
    /// `retired`: at most `config.metadata_budget_bytes`.
    metadata_bytes: usize,
}

impl Registry {
    pub fn new(role: Role, config: DataChannelConfig) -> Self {
        Self {
            role,
            config,
            channels: HashMap::new(),
            incoming: VecDeque::new(),
            ended: None,
            stats: DataChannelStats::default(),
            next_generation: 0,
            retired: HashMap::new(),
            metadata_bytes: 0,
        }
    }

    /// The counters, with the metadata held now.
    pub fn stats(&self) -> DataChannelStats {
        DataChannelStats {
            metadata_bytes: self.metadata_bytes,
            ..self.stats.clone()
        }
    }

    /// Whether a channel with this label and protocol may be held: each
    /// within its bound, and all channels' together within the budget.
    pub fn check_metadata(&self, label: &str, protocol: &str) -> Result<(), Error> {
        let c = &self.config;
        let too_large = |what, len, max| Err(Error::MetadataTooLarge { what, len, max });
        if label.len() > c.max_label_bytes {
            return too_large("label", label.len(), c.max_label_bytes);
        }
        if protocol.len() > c.max_protocol_bytes {
            return too_large("protocol", protocol.len(), c.max_protocol_bytes);
        }
        let total = self.metadata_bytes + label.len() + protocol.len();
        if total > c.metadata_budget_bytes {
            return too_large("metadata budget", total, c.metadata_budget_bytes);
        }
        Ok(())
    }

    fn insert(&mut self, stream: u16, meta: Meta, opener: bool, acked: bool) {
        self.next_generation += 1;
        self.metadata_bytes += meta.bytes();
        let ch = Channel::new(self.next_generation, meta, opener, acked);
        self.channels.insert(stream, ch);
    }

    /// A channel leaves the registry: its metadata is no longer charged.
    pub(crate) fn forget(&mut self, ch: &Channel) {
        self.metadata_bytes = self.metadata_bytes.saturating_sub(ch.meta.bytes());
    }

    /// The channel a handle (`stream`, `generation`) refers to, if it is
    /// still in the table.
    pub fn get(&mut self, stream: u16, generation: u64) -> Option<&mut Channel> {
        match self.channels.get_mut(&stream) {
            Some(c) if c.generation == generation => Some(c),
            _ => self.retired.get_mut(&generation),
        }
    }

    /// Forgets a channel we failed to open.
    pub fn remove(&mut self, stream: u16, generation: u64) {
        if self.get(stream, generation).is_some()
            && let Some(ch) = self.channels.remove(&stream)
        {
            self.forget(&ch);
        }
    }

    fn check_room(&self) -> Result<(), Error> {
        if let Some(why) = &self.ended {
            return Err(Error::Closed(CloseReason::AssociationEnded(why.clone())));
        }
        if self.channels.len() >= self.config.max_channels {
            return Err(Error::TooManyChannels {
                max: self.config.max_channels,
            });
        }
        Ok(())
    }

    /// RFC 8832 6: the lowest unused stream id of our parity (even for the
    /// DTLS client, odd for the server) below `streams`.
    pub fn allocate(&self, streams: u16) -> Result<u16, Error> {
        self.check_room()?;
        let first = match self.role {
            Role::Client => 0,
            Role::Server => 1,
        };
        (first..streams)
            .step_by(2)
            .find(|s| !self.channels.contains_key(s))
            .ok_or(Error::NoFreeStream { streams })
    }

    /// Enters a channel we open: by DCEP (not yet acknowledged) or agreed out
    /// of band (open at once).
    pub fn add_local(
        &mut self,
        stream: u16,
        streams: u16,
        label: &str,
        options: ChannelOptions,
    ) -> Result<u64, Error> {
        self.check_room()?;
        if stream >= streams {
            return Err(Error::StreamOutOfRange { stream, streams });
        }
        if self.channels.contains_key(&stream) {
            return Err(Error::StreamInUse(stream));
        }
        self.check_metadata(label, &options.protocol)?;
        let acked = options.negotiated.is_some();
        let meta = Meta {
            label: label.to_owned(),
            options,
        };
        self.insert(stream, meta, true, acked);
        Ok(self.next_generation)
    }

    /// RFC 8832 6: a DATA_CHANNEL_OPEN on `stream` is valid when the stream is
    /// unused, its id has the peer's parity, and every parameter is valid
    /// (`open` is `Err` for a message that did not parse). We also refuse what
    /// we could not answer (a stream we cannot send on) or hold (the channel
    /// and accept-queue limits, and the label, protocol and metadata bounds:
    /// RFC 8832 sets none, so a peer could make us hold 128 KiB a channel).
    pub fn on_open(&mut self, stream: u16, streams: u16, open: Result<Open, ()>) -> OpenVerdict {
        self.stats.opens_received += 1;
        let refuse = |reg: &mut Self| {
            reg.stats.opens_refused += 1;
            OpenVerdict::Refuse { existing: false }
        };
        if let Some(ch) = self.channels.get_mut(&stream) {
            // An OPEN on a used stream closes the channel there.
            ch.closed.get_or_insert(CloseReason::ProtocolViolation(
                "DATA_CHANNEL_OPEN on a used stream",
            ));
            ch.notify.notify_waiters();
            self.stats.opens_refused += 1;
            return OpenVerdict::Refuse { existing: true };
        }
        let peer_parity = match self.role {
            Role::Client => 1,
            Role::Server => 0,
        };
        let Ok(open) = open else {
            return refuse(self);
        };
        if stream % 2 != peer_parity
            || stream >= streams
            || self.channels.len() >= self.config.max_channels
            || self.incoming.len() >= self.config.max_pending_accepts
        {
            return refuse(self);
        }
        if self.check_metadata(&open.label, &open.protocol).is_err() {
            self.stats.opens_refused_metadata += 1;
            return refuse(self);
        }
        let options = ChannelOptions::from_open(&open);
        let meta = Meta {
            label: open.label,
            options,
        };
        self.insert(stream, meta, false, true);
        self.incoming.push_back(stream);
        OpenVerdict::Ack
    }

    /// A DCEP message that did not parse: on an unused stream it is a failed
    /// OPEN (refused as one); on a channel it is ignored.
    pub fn on_bad_dcep(&mut self, stream: u16, streams: u16) -> Option<OpenVerdict> {
        self.stats.dcep_malformed += 1;
        if self.channels.contains_key(&stream) {
            return None;
        }
        Some(self.on_open(stream, streams, Err(())))
    }

    /// DATA_CHANNEL_ACK: our channel on `stream` is open.
    pub fn on_ack(&mut self, stream: u16) {
        match self.channels.get_mut(&stream) {
            Some(ch) if ch.opener && !ch.acked => {
                ch.acked = true;
                ch.notify.notify_waiters();
            }
            _ => self.stats.unexpected_acks += 1,
        }
    }

    /// A user message (or one we could not decode, `msg` = `None`) on `stream`.
    pub fn on_data(&mut self, stream: u16, msg: Option<&Message>) -> Route {
        let Some(ch) = self.channels.get_mut(&stream) else {
            self.stats.data_on_unopened_stream += 1;
            return Route::Discarded;
        };
        // User data from the peer means it has our OPEN: its ACK went ahead
        // of it on the stream, unless the peer sent this unordered.
        if ch.opener && !ch.acked {
            ch.acked = true;
            ch.notify.notify_waiters();
        }
        let Some(msg) = msg else {
            self.stats.messages_discarded += 1;
            return Route::Discarded;
        };
        if ch.detached || ch.closed.is_some() {
            self.stats.messages_discarded += 1;
            return Route::Discarded;
        }
        // Bounded: a message is queued only if it fits, or if the queue is
        // empty (so one message larger than the byte bound still passes).
        let fits = ch.queue.len() < self.config.receive_queue_messages
            && ch.queued_bytes + msg.len() <= self.config.receive_queue_bytes;
        if !fits && !ch.queue.is_empty() {
            return Route::Full;
        }
        ch.queued_bytes += msg.len();
        ch.queue.push_back(msg.clone());
        ch.notify.notify_waiters();
        Route::Queued
    }

    /// The next message of `stream`, or why there is none coming; `None`
    /// while the channel waits for more.
    pub fn pop(&mut self, stream: u16, generation: u64) -> Option<Result<Message, Error>> {
        let ended = self.ended.clone();
        let Some(ch) = self.get(stream, generation) else {
            return Some(Err(Error::Closed(CloseReason::Local)));
        };
        if let Some(m) = ch.queue.pop_front() {
            ch.queued_bytes -= m.len();
            // Room: the demux may be waiting for it.
            ch.notify.notify_waiters();
            return Some(Ok(m));
        }
        if let Some(why) = &ch.closed {
            return Some(Err(Error::Closed(why.clone())));
        }
        ended.map(|why| Err(Error::Closed(CloseReason::AssociationEnded(why))))
    }

    /// The association ended: every channel is closed.
    pub fn end(&mut self, why: String) {
        for ch in self.channels.values_mut() {
            ch.closed
                .get_or_insert_with(|| CloseReason::AssociationEnded(why.clone()));
            ch.notify.notify_waiters();
        }
        self.ended = Some(why);
    }

    /// The application dropped a channel's handle.
    pub fn detach(&mut self, stream: u16, generation: u64) {
        if let Some(ch) = self.retired.remove(&generation) {
            self.forget(&ch);
            return;
        }
        if let Some(ch) = self.get(stream, generation) {
            ch.detached = true;
            let dropped = ch.queue.len() as u64;
            ch.queue.clear();
            ch.queued_bytes = 0;
            ch.notify.notify_waiters();
            self.stats.messages_discarded += dropped;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::datachannel::dcep::ChannelType;
    use bytes::Bytes;

    fn open(label: &str) -> Result<Open, ()> {
        open_with(label, "")
    }

    fn open_with(label: &str, protocol: &str) -> Result<Open, ()> {
        Ok(Open {
            channel_type: ChannelType::Reliable,
            priority: 256,
            reliability: 0,
            label: label.into(),
            protocol: protocol.into(),
        })
    }

    fn reg(role: Role) -> Registry {
        Registry::new(role, DataChannelConfig::default())
    }

    #[test]
    fn each_role_allocates_its_parity() {
        let mut client = reg(Role::Client);
        assert!(matches!(client.allocate(16), Ok(0)));
        client
            .add_local(0, 16, "a", ChannelOptions::default())
            .unwrap();
        assert!(matches!(client.allocate(16), Ok(2)));
        let server = reg(Role::Server);
        assert!(matches!(server.allocate(16), Ok(1)));
        assert!(matches!(
            server.allocate(1),
            Err(Error::NoFreeStream { streams: 1 })
        ));
    }

    #[test]
    fn an_open_with_our_parity_or_on_a_used_stream_is_refused() {
        let mut r = reg(Role::Client);
        // The client opens even ids; the peer (server) must use odd ones.
        assert_eq!(
            r.on_open(2, 16, open("x")),
            OpenVerdict::Refuse { existing: false }
        );
        assert_eq!(r.on_open(3, 16, open("x")), OpenVerdict::Ack);
        assert_eq!(r.incoming, [3]);
        assert_eq!(
            r.on_open(3, 16, open("again")),
            OpenVerdict::Refuse { existing: true }
        );
        assert!(matches!(
            r.channels[&3].closed,
            Some(CloseReason::ProtocolViolation(_))
        ));
        assert_eq!(
            r.on_open(17, 16, open("x")),
            OpenVerdict::Refuse { existing: false }
        );
        assert_eq!(r.stats.opens_received, 4);
        assert_eq!(r.stats.opens_refused, 3);
    }

    #[test]
    fn bad_dcep_on_an_unused_stream_is_a_refused_open() {
        let mut r = reg(Role::Server);
        assert_eq!(
            r.on_bad_dcep(4, 16),
            Some(OpenVerdict::Refuse { existing: false })
        );
        assert_eq!(r.on_open(4, 16, open("x")), OpenVerdict::Ack);
        assert_eq!(r.on_bad_dcep(4, 16), None);
        assert_eq!(r.stats.dcep_malformed, 2);
        assert!(r.channels[&4].closed.is_none());
    }

    #[test]
    fn the_accept_queue_and_channel_table_are_bounded() {
        let mut r = Registry::new(
            Role::Client,
            DataChannelConfig {
                max_pending_accepts: 2,
                max_channels: 3,
                ..DataChannelConfig::default()
            },
        );
        assert_eq!(r.on_open(1, 100, open("a")), OpenVerdict::Ack);
        assert_eq!(r.on_open(3, 100, open("b")), OpenVerdict::Ack);
        assert_eq!(
            r.on_open(5, 100, open("c")),
            OpenVerdict::Refuse { existing: false }
        );
        r.incoming.clear();
        assert_eq!(r.on_open(5, 100, open("c")), OpenVerdict::Ack);
        r.incoming.clear();
        assert_eq!(
            r.on_open(7, 100, open("d")),
            OpenVerdict::Refuse { existing: false }
        );
        assert!(matches!(
            r.allocate(100),
            Err(Error::TooManyChannels { max: 3 })
        ));
    }

    #[test]
    fn the_receive_queue_is_bounded_in_messages_and_bytes() {
        let mut r = Registry::new(
            Role::Client,
            DataChannelConfig {
                receive_queue_messages: 3,
                receive_queue_bytes: 10,
                ..DataChannelConfig::default()
            },
        );
        r.add_local(0, 16, "a", ChannelOptions::default()).unwrap();
        let m = |n: usize| Message::Binary(Bytes::from(vec![0; n]));
        // One message larger than the byte bound passes an empty queue.
        assert!(matches!(r.on_data(0, Some(&m(50))), Route::Queued));
        assert!(matches!(r.on_data(0, Some(&m(1))), Route::Full));
        assert!(matches!(r.pop(0, 1), Some(Ok(x)) if x == m(50)));
        for _ in 0..3 {
            assert!(matches!(r.on_data(0, Some(&m(1))), Route::Queued));
        }
        assert!(matches!(r.on_data(0, Some(&m(1))), Route::Full));
        assert!(matches!(r.pop(0, 1), Some(Ok(x)) if x == m(1)));
        // Two bytes queued: nine more exceed ten, eight fit.
        assert!(matches!(r.on_data(0, Some(&m(9))), Route::Full));
        assert!(matches!(r.on_data(0, Some(&m(8))), Route::Queued));
        assert_eq!(r.channels[&0].queued_bytes, 10);
    }

    #[test]
    fn data_marks_our_unacked_channel_open_and_strays_are_counted() {
        let mut r = reg(Role::Client);
        r.add_local(0, 16, "a", ChannelOptions::default()).unwrap();
        assert!(!r.channels[&0].acked);
        let m = Message::Text("hi".into());
        assert!(matches!(r.on_data(0, Some(&m)), Route::Queued));
        assert!(r.channels[&0].acked);
        r.on_ack(0);
        assert_eq!(r.stats.unexpected_acks, 1);
        assert!(matches!(r.on_data(8, Some(&m)), Route::Discarded));
        assert_eq!(r.stats.data_on_unopened_stream, 1);
    }

    #[test]
    fn a_closed_channel_drains_before_it_reports_the_close() {
        let mut r = reg(Role::Client);
        r.add_local(0, 16, "a", ChannelOptions::default()).unwrap();
        let m = Message::Text("last".into());
        r.on_data(0, Some(&m));
        r.end("peer aborted".into());
        assert!(matches!(r.pop(0, 1), Some(Ok(x)) if x == m));
        assert!(matches!(
            r.pop(0, 1),
            Some(Err(Error::Closed(CloseReason::AssociationEnded(why)))) if why == "peer aborted"
        ));
    }

    #[test]
    fn an_open_with_a_label_or_protocol_over_its_bound_is_refused_and_counted() {
        let mut r = reg(Role::Client);
        let max = DataChannelConfig::default().max_label_bytes;
        assert_eq!(
            r.on_open(1, 16, open(&"l".repeat(max + 1))),
            OpenVerdict::Refuse { existing: false }
        );
        assert_eq!(
            r.on_open(3, 16, open_with("", &"p".repeat(65_535))),
            OpenVerdict::Refuse { existing: false }
        );
        assert_eq!(r.on_open(5, 16, open(&"l".repeat(max))), OpenVerdict::Ack);
        let st = r.stats();
        assert_eq!((st.opens_refused, st.opens_refused_metadata), (2, 2));
        assert_eq!(st.metadata_bytes, max);
        assert!(!r.channels.contains_key(&1) && !r.channels.contains_key(&3));
    }

    #[test]
    fn channels_are_charged_to_the_metadata_budget_until_they_leave() {
        let mut r = Registry::new(
            Role::Client,
            DataChannelConfig {
                metadata_budget_bytes: 100,
                ..DataChannelConfig::default()
            },
        );
        assert_eq!(
            r.on_open(1, 16, open_with(&"a".repeat(40), "p")),
            OpenVerdict::Ack
        );
        let g = r
            .add_local(0, 16, &"b".repeat(50), ChannelOptions::default())
            .unwrap();
        assert_eq!(r.stats().metadata_bytes, 91);
        // Ten more bytes would exceed the budget, nine fit.
        assert_eq!(
            r.on_open(3, 16, open(&"c".repeat(10))),
            OpenVerdict::Refuse { existing: false }
        );
        assert!(matches!(
            r.add_local(2, 16, &"c".repeat(10), ChannelOptions::default()),
            Err(Error::MetadataTooLarge { max: 100, .. })
        ));
        assert_eq!(r.stats().opens_refused_metadata, 1);
        assert_eq!(r.on_open(3, 16, open(&"c".repeat(9))), OpenVerdict::Ack);
        assert_eq!(r.stats().metadata_bytes, 100);
        // A channel forgotten, or closed and its handle dropped, is no longer
        // charged.
        r.remove(0, g);
        assert_eq!(r.stats().metadata_bytes, 50);
        r.on_incoming_reset(&[1]);
        r.on_outgoing_reset(&[1]);
        assert_eq!(r.stats().metadata_bytes, 50, "retired, its handle is held");
        let g1 = r.retired.keys().copied().next().unwrap();
        r.detach(1, g1);
        assert_eq!(r.stats().metadata_bytes, 9);
        let g3 = r.channels[&3].generation;
        r.detach(3, g3);
        r.on_incoming_reset(&[3]);
        r.on_outgoing_reset(&[3]);
        assert_eq!(r.stats().metadata_bytes, 0);
    }
}
