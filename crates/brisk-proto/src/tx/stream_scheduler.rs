//! Stream schedulers (RFC 8260 3): which stream's message the send queue
//! starts next.
//!
//! The scheduler sees streams only as slots (indices into the send queue's
//! stream table) and schedules whole messages: with DATA (not I-DATA) a
//! started message takes consecutive TSNs to its end (RFC 9260 6.9), so the
//! send queue asks the scheduler only when no message is in progress. With
//! I-DATA (RFC 8260 2.1) it asks for every fragment: a fragment that does
//! not end its message is a turn too ([`Scheduler::on_fragment`]), so the
//! same policies share fragments instead of messages.
//!
//! The send queue tells the scheduler when a stream gets a message
//! ([`Scheduler::on_push`]), when it started a stream's front message
//! ([`Scheduler::on_start`]) and when a packet of new data ends
//! ([`Scheduler::on_packet_end`]); [`Scheduler::peek`] names the stream whose
//! front message goes next. Every structure holds at most one entry per
//! stream used (bounded by the negotiated outbound streams), apart from
//! first come first served's one entry per queued message (bounded by the
//! send buffer).

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use thiserror::Error;

/// The stream schedulers of RFC 8260 3, selectable per association
/// (`Config::stream_scheduler`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum StreamScheduler {
    /// RFC 8260 3.1: messages leave in the order the application sent them,
    /// across streams.
    Fcfs,
    /// RFC 8260 3.2: streams with messages take turns, one message each.
    #[default]
    RoundRobin,
    /// RFC 8260 3.3: streams take turns one packet each; a packet of new
    /// data carries the messages of one stream.
    RoundRobinPacket,
    /// RFC 8260 3.4: the stream with the lowest priority value goes first;
    /// streams of equal priority take turns, one message each.
    Priority,
    /// RFC 8260 3.6: streams share the bytes sent in proportion to their
    /// weights (weighted fair queueing by virtual finish time).
    Wfq,
}

/// Why a stream's scheduling parameter was not set.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum SchedulingError {
    /// The stream does not exist on this association (RFC 9260 6.5).
    #[error(
        "stream {stream_id} does not exist: the association has {outbound_streams} \
         outbound streams, numbered from 0"
    )]
    InvalidStream {
        stream_id: u16,
        outbound_streams: u16,
    },
    /// A weight of 0 would never let the stream send (RFC 8260 3.6).
    #[error("a stream's weight must be at least 1")]
    ZeroWeight,
}

/// A stream's priority before the application sets one (RFC 8260 3.4).
pub const DEFAULT_PRIORITY: u16 = 0;
/// A stream's weight before the application sets one (RFC 8260 3.6).
pub const DEFAULT_WEIGHT: u16 = 1;

/// Virtual-time units per byte at weight 1: a message of `len` bytes costs
/// `len * WFQ_SCALE / weight`, so the rounding is below one byte in 65536.
const WFQ_SCALE: u64 = 1 << 16;

/// What a stream asks of the scheduler.
#[derive(Debug, Clone, Copy)]
struct Class {
    /// RFC 8260 3.4: lower values go first.
    priority: u16,
    /// RFC 8260 3.6: share of the bytes, relative to the other streams'.
    weight: u16,
    /// WFQ: the key under which the stream waits, while it has messages.
    finish: Option<(u64, u64)>,
}

impl Default for Class {
    fn default() -> Self {
        Self {
            priority: DEFAULT_PRIORITY,
            weight: DEFAULT_WEIGHT,
            finish: None,
        }
    }
}

/// RR-P: where the packet being filled stands (RFC 8260 3.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum PacketTurn {
    /// No message started in this packet yet: the stream in turn goes next.
    Open,
    /// The packet belongs to this stream, which has more messages.
    Serving(u32),
    /// The packet's stream has no more messages: no other stream may start
    /// a message in this packet.
    Dry,
}

/// The scheduler of one send queue; see the [module docs](self).
#[derive(Debug)]
pub struct Scheduler {
    kind: StreamScheduler,
    /// Per slot, created with the slot.
    classes: Vec<Class>,
    /// RR and RR-P: the streams with messages, in turn order.
    turns: VecDeque<u32>,
    /// RR-P.
    packet: PacketTurn,
    /// The other schedulers' state, allocated when one is first used: the
    /// default round robin keeps an idle association as small as before.
    ordered: Option<Box<Ordered>>,
}

/// The state of FCFS, priority and WFQ.
#[derive(Debug, Default)]
struct Ordered {
    /// FCFS: the stream of every queued message not finished (with DATA:
    /// not started), oldest first.
    arrivals: VecDeque<u32>,
    /// Priority: the streams with messages per priority, each in turn order.
    levels: BTreeMap<u16, VecDeque<u32>>,
    /// WFQ: the streams with messages by (virtual finish time, arrival, slot).
    finish_order: BTreeSet<(u64, u64, u32)>,
    /// WFQ: the finish time of the message started last.
    virtual_time: u64,
    /// WFQ: breaks ties between equal finish times, first activated first.
    activations: u64,
}

impl Scheduler {
    pub fn new(kind: StreamScheduler) -> Self {
        Self {
            kind,
            classes: Vec::new(),
            turns: VecDeque::new(),
            packet: PacketTurn::Open,
            ordered: None,
        }
    }

    /// The state of FCFS, priority and WFQ, allocated on first use.
    fn ord(&mut self) -> &mut Ordered {
        self.ordered.get_or_insert_with(Box::default)
    }

    pub fn kind(&self) -> StreamScheduler {
        self.kind
    }

    /// The send queue created slot `classes.len()`.
    pub fn add_stream(&mut self) {
        self.classes.push(Class::default());
    }

    pub fn priority(&self, slot: u32) -> u16 {
        self.classes[slot as usize].priority
    }

    pub fn weight(&self, slot: u32) -> u16 {
        self.classes[slot as usize].weight
    }

    /// A message joined the back of stream `slot`; `was_idle` if the stream
    /// had none, `head_len` the length of the stream's front message.
    pub fn on_push(&mut self, slot: u32, was_idle: bool, head_len: usize) {
        if self.kind == StreamScheduler::Fcfs {
            self.ord().arrivals.push_back(slot);
        } else if was_idle {
            self.activate(slot, head_len);
        }
    }

    /// The stream whose front message starts next, if any may start.
    pub fn peek(&self) -> Option<u32> {
        match self.kind {
            StreamScheduler::Fcfs => self.ordered.as_ref()?.arrivals.front().copied(),
            StreamScheduler::RoundRobin => self.turns.front().copied(),
            StreamScheduler::RoundRobinPacket => match self.packet {
                PacketTurn::Open => self.turns.front().copied(),
                PacketTurn::Serving(slot) => Some(slot),
                PacketTurn::Dry => None,
            },
            StreamScheduler::Priority => {
                let (_, level) = self.ordered.as_ref()?.levels.first_key_value()?;
                level.front().copied()
            }
            StreamScheduler::Wfq => self
                .ordered
                .as_ref()?
                .finish_order
                .first()
                .map(|&(.., slot)| slot),
        }
    }

    /// The send queue started the front message of `slot`, the one
    /// [`peek`](Self::peek) named; `next_len` is the length of the stream's
    /// new front message, `None` if it has no more.
    pub fn on_start(&mut self, slot: u32, next_len: Option<usize>) {
        let more = next_len.is_some();
        match self.kind {
            // RFC 8260 3.1.
            StreamScheduler::Fcfs => {
                self.ord().arrivals.pop_front();
            }
            // RFC 8260 3.2: the stream goes to the back of the line if it has more.
            StreamScheduler::RoundRobin => {
                self.turns.pop_front();
                if more {
                    self.turns.push_back(slot);
                }
            }
            StreamScheduler::RoundRobinPacket => self.start_in_packet(slot, more),
            StreamScheduler::Priority => self.start_by_priority(slot, more),
            StreamScheduler::Wfq => self.start_by_finish_time(slot, next_len),
        }
    }

    /// I-DATA (RFC 8260): the send queue handed out a fragment of the front
    /// message of `slot`, which continues with a next fragment of
    /// `next_len` bytes. Every scheduler but FCFS treats the fragment as a
    /// turn (the stream has more); FCFS keeps the message in front.
    pub fn on_fragment(&mut self, slot: u32, next_len: usize) {
        if self.kind != StreamScheduler::Fcfs {
            self.on_start(slot, Some(next_len));
        }
    }

    /// I-DATA: the started front message of `slot` ended out of the
    /// scheduler's turn (while an SSN/TSN reset waits, RFC 6525 5.1.4);
    /// `next_len` as in [`on_start`](Self::on_start). FCFS forgets the
    /// message's arrival, the stream's first (RFC 8260 3.1); the others keep
    /// the stream's turn if it has more messages.
    pub fn on_finish_out_of_turn(&mut self, slot: u32, next_len: Option<usize>) {
        if next_len.is_none() {
            self.remove(slot);
        } else if let Some(ord) = self.ordered.as_deref_mut()
            && self.kind == StreamScheduler::Fcfs
            && let Some(i) = ord.arrivals.iter().position(|&s| s == slot)
        {
            ord.arrivals.remove(i);
        }
    }

    /// The packet of new data being assembled is complete: under RR-P the
    /// next packet may belong to another stream (RFC 8260 3.3). A no-op for
    /// the other schedulers.
    pub fn on_packet_end(&mut self) {
        self.packet = PacketTurn::Open;
    }

    /// Every message of stream `slot` was removed (its stream was not
    /// negotiated).
    pub fn remove(&mut self, slot: u32) {
        if let Some(ord) = self.ordered.as_deref_mut() {
            ord.arrivals.retain(|&s| s != slot);
        }
        self.deactivate(slot);
        self.packet = PacketTurn::Open;
    }

    /// Every message was removed.
    pub fn clear(&mut self) {
        self.turns.clear();
        if let Some(ord) = self.ordered.as_deref_mut() {
            *ord = Ordered::default();
        }
        for class in &mut self.classes {
            class.finish = None;
        }
        self.packet = PacketTurn::Open;
    }

    /// A scheduler of `kind` with every stream's priority and weight, and no
    /// message: the send queue pushes its queued messages again.
    pub fn switched_to(&self, kind: StreamScheduler) -> Self {
        let mut next = Self::new(kind);
        next.classes = self
            .classes
            .iter()
            .map(|c| Class { finish: None, ..*c })
            .collect();
        next
    }

    /// RFC 8260 3.4: sets the priority of stream `slot`; `head_len` is the
    /// length of its front message if it has one.
    pub fn set_priority(&mut self, slot: u32, priority: u16, head_len: Option<usize>) {
        self.reclassify(slot, head_len, |c| c.priority = priority);
    }

    /// RFC 8260 3.6: sets the weight (at least 1) of stream `slot`.
    pub fn set_weight(&mut self, slot: u32, weight: u16, head_len: Option<usize>) {
        self.reclassify(slot, head_len, |c| c.weight = weight.max(1));
    }

    /// Changes a stream's class; a stream with messages waits again under
    /// its new class (behind the streams of its new priority, or with a
    /// finish time from its new weight).
    fn reclassify(&mut self, slot: u32, head_len: Option<usize>, change: impl FnOnce(&mut Class)) {
        let queued = self.is_active(slot);
        if queued {
            self.deactivate(slot);
        }
        change(&mut self.classes[slot as usize]);
        if let (true, Some(len)) = (queued, head_len) {
            self.activate(slot, len);
        }
    }

    /// Whether the stream waits in the structure of a per-stream scheduler.
    fn is_active(&self, slot: u32) -> bool {
        match self.kind {
            StreamScheduler::Fcfs => false,
            StreamScheduler::RoundRobin | StreamScheduler::RoundRobinPacket => {
                self.turns.contains(&slot)
            }
            StreamScheduler::Priority => self.ordered.as_ref().is_some_and(|o| {
                o.levels
                    .get(&self.priority(slot))
                    .is_some_and(|l| l.contains(&slot))
            }),
            StreamScheduler::Wfq => self.classes[slot as usize].finish.is_some(),
        }
    }

    /// A stream that had no message has one (all but FCFS).
    fn activate(&mut self, slot: u32, head_len: usize) {
        match self.kind {
            StreamScheduler::Fcfs => {}
            StreamScheduler::RoundRobin | StreamScheduler::RoundRobinPacket => {
                self.turns.push_back(slot);
            }
            StreamScheduler::Priority => {
                let priority = self.priority(slot);
                self.ord()
                    .levels
                    .entry(priority)
                    .or_default()
                    .push_back(slot);
            }
            StreamScheduler::Wfq => self.wait_for_finish_time(slot, head_len),
        }
    }

    /// Takes a stream out of the per-stream structures (all but FCFS's).
    fn deactivate(&mut self, slot: u32) {
        self.turns.retain(|&s| s != slot);
        let priority = self.priority(slot);
        let finish = self.classes[slot as usize].finish.take();
        let Some(ord) = self.ordered.as_deref_mut() else {
            return;
        };
        if let Some(level) = ord.levels.get_mut(&priority) {
            level.retain(|&s| s != slot);
            if level.is_empty() {
                ord.levels.remove(&priority);
            }
        }
        if let Some((finish, order)) = finish {
            ord.finish_order.remove(&(finish, order, slot));
        }
    }

    /// RFC 8260 3.3: the first message of a packet takes the stream's turn;
    /// later messages of the same packet come from the same stream, and
    /// when it runs dry the packet takes no message of another stream.
    fn start_in_packet(&mut self, slot: u32, more: bool) {
        match self.packet {
            PacketTurn::Open => {
                self.turns.pop_front();
                if more {
                    self.turns.push_back(slot);
                }
            }
            // The stream went to the back when its packet began, and nothing
            // joined the line since (no push while a packet is assembled).
            PacketTurn::Serving(_) | PacketTurn::Dry => {
                if !more {
                    if self.turns.back() == Some(&slot) {
                        self.turns.pop_back();
                    } else {
                        self.turns.retain(|&s| s != slot);
                    }
                }
            }
        }
        self.packet = if more {
            PacketTurn::Serving(slot)
        } else {
            PacketTurn::Dry
        };
    }

    /// RFC 8260 3.4: round robin within the stream's priority level.
    fn start_by_priority(&mut self, slot: u32, more: bool) {
        let priority = self.priority(slot);
        let Some(level) = self.ord().levels.get_mut(&priority) else {
            return;
        };
        level.pop_front();
        if more {
            level.push_back(slot);
        }
        if level.is_empty() {
            self.ord().levels.remove(&priority);
        }
    }

    /// RFC 8260 3.6: the stream with the earliest virtual finish time went;
    /// the virtual time moves to its finish, and its next message (if any)
    /// finishes its cost later.
    fn start_by_finish_time(&mut self, slot: u32, next_len: Option<usize>) {
        if let Some((finish, order)) = self.classes[slot as usize].finish.take() {
            self.ord().finish_order.remove(&(finish, order, slot));
            self.ord().virtual_time = finish;
        }
        match next_len {
            Some(len) => self.wait_for_finish_time(slot, len),
            // No stream waits: the virtual clock restarts, so it never overflows.
            None if self.ord().finish_order.is_empty() => self.ord().virtual_time = 0,
            None => {}
        }
    }

    /// WFQ: the stream's front message of `len` bytes finishes at the
    /// virtual time plus its cost at the stream's weight.
    fn wait_for_finish_time(&mut self, slot: u32, len: usize) {
        let weight = self.classes[slot as usize].weight.max(1);
        let cost = (len as u64).saturating_mul(WFQ_SCALE) / u64::from(weight);
        let ord = self.ord();
        let finish = ord.virtual_time.saturating_add(cost);
        let order = ord.activations;
        ord.activations += 1;
        ord.finish_order.insert((finish, order, slot));
        self.classes[slot as usize].finish = Some((finish, order));
    }
}
