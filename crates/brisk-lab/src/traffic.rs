//! Traffic generators and sinks, as simulator applications over any
//! transport that carries messages ([`Messages`]: SCTP, the TCP model).
//!
//! The sender writes each message in its own callback, so that each message
//! leaves in its own packet (Nagle off, as in seed 000). Every message carries
//! its number in its first 8 bytes, so the receiver can time it: the message
//! transfer time (MTT) runs from the sending application's write to the
//! receiving application's read.

use std::net::SocketAddr;
use std::time::Duration;

use brisk_proto::{Endpoint, Time};
use brisk_sim::{App, AppCtx, Happening, Messages, Refused, SendOptions};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, Exp};

use crate::experiment::{Count, Gap, Packing, Traffic};

/// One message of the plan: when it is written, relative to the start.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Planned {
    pub offset: Duration,
    pub size: usize,
    /// Counts in the results (warm-up bursts do not).
    pub measured: bool,
    /// Number of the burst it belongs to (0 for periodic traffic).
    pub burst: u32,
    /// The SCTP stream it goes on (a trace may name one; 0 otherwise).
    pub stream: u16,
}

/// Draws the messages of one replication. The same seed gives the same plan,
/// whatever the protocol variant, so variants are compared on identical traffic.
pub fn plan(traffic: &Traffic, seed: u64) -> Vec<Planned> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut out = Vec::new();
    match *traffic {
        Traffic::Bursts {
            bursts,
            warmup_bursts,
            size,
            gap,
            message_size,
        } => {
            let mut t = Duration::ZERO;
            for b in 0..bursts {
                let n = match size {
                    Count::Fixed(n) => n,
                    Count::Uniform(lo, hi) => rng.random_range(lo..=hi),
                };
                for _ in 0..n {
                    out.push(Planned {
                        offset: t,
                        size: message_size,
                        measured: b >= warmup_bursts,
                        burst: b,
                        stream: 0,
                    });
                }
                t += match gap {
                    Gap::Fixed(g) => g,
                    Gap::Exponential(mean) => {
                        let lambda = 1.0 / mean.as_secs_f64().max(1e-9);
                        let draw = Exp::new(lambda).map(|e| e.sample(&mut rng)).unwrap_or(0.0);
                        Duration::from_secs_f64(draw)
                    }
                };
            }
        }
        Traffic::Bulk {
            messages,
            message_size,
        } => {
            for _ in 0..messages {
                out.push(Planned {
                    offset: Duration::ZERO,
                    size: message_size,
                    measured: true,
                    burst: 0,
                    stream: 0,
                });
            }
        }
        Traffic::Trace { ref entries } => {
            for &(offset, size, stream) in entries {
                out.push(Planned {
                    offset,
                    size,
                    measured: true,
                    burst: 0,
                    stream,
                });
            }
        }
        // A saturated sender writes as it goes: nothing is planned.
        Traffic::Saturated { .. } => {}
        Traffic::Periodic {
            interval,
            messages,
            jitter,
            message_size,
            ..
        } => {
            let mut t = Duration::ZERO;
            for k in 0..messages {
                if k > 0 {
                    t += interval;
                    if !jitter.is_zero() {
                        t += Duration::from_nanos(rng.random_range(0..jitter.as_nanos() as u64));
                    }
                }
                out.push(Planned {
                    offset: t,
                    size: message_size,
                    measured: true,
                    burst: 0,
                    stream: 0,
                });
            }
        }
    }
    out
}

/// A retransmission the sender made, in every protocol's terms: `tsn` is
/// the data unit (an SCTP chunk's TSN, a TCP segment's first sequence
/// number) and `cause` one of the transport's cause names.
pub type Retransmitted = brisk_sim::Retransmission;

/// How soon a write refused for a full send buffer is tried again.
const RETRY: Duration = Duration::from_millis(1);

/// A saturated sender keeps about this many bytes of messages queued.
const SATURATED_BACKLOG: usize = 64 << 10;

/// A saturated sender looks for room at least this often, whatever happens.
const SATURATED_POLL: Duration = Duration::from_millis(50);

/// Timer tokens at and above this are the saturated sender's refills.
const REFILL: u64 = 1 << 62;

/// A sender that always has data: writes `message_size` messages for
/// `duration` from the start of the traffic, either keeping a backlog queued
/// (bundling) or one message at a time when nothing is queued and cwnd has room.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Saturation {
    pub message_size: usize,
    pub duration: Duration,
    pub packing: Packing,
}

/// Sends the plan once the receiver has associated.
#[derive(Debug)]
pub struct Sender<T: Messages = Endpoint> {
    plan: Vec<Planned>,
    /// Time between the association coming up and the first message.
    lead: Duration,
    assoc: Option<T::Conn>,
    /// When each message was written, by message number.
    pub written: Vec<Option<Time>>,
    /// When each message was first sent, by message number (known once the
    /// transport reports it acknowledged).
    pub first_sent: Vec<Option<Time>>,
    /// (the transport's handle, the message's number) of each message
    /// written and not yet acknowledged, in the order written (bounded by
    /// the messages in flight; acknowledgements come nearly in order, so the
    /// one acknowledged is found near the front).
    handles: std::collections::VecDeque<(u64, usize)>,
    /// Whether to record `first_sent` (loss-position runs, which measure one
    /// message's MTT, do not).
    track_first_sent: bool,
    pub retransmissions: Vec<Retransmitted>,
    /// When new data moved to another of the peer's addresses (multi-homed
    /// SCTP), in order.
    pub data_path_changes: Vec<Time>,
    pub send_errors: u64,
    /// Which messages the transport reported abandoned (partial
    /// reliability), by message number; empty until one is.
    pub abandoned: Vec<bool>,
    /// How each message is sent (unordered, its reliability).
    options: SendOptions,
    saturation: Option<Saturation>,
    /// Saturated: messages written so far (they are numbered from 0).
    pub saturated_written: u64,
    /// Saturated: a refill is already set for this instant.
    refill_at: Option<Time>,
    /// Saturated: when writing starts and stops.
    active: Option<(Time, Time)>,
}

impl<T: Messages> Sender<T> {
    pub fn new(plan: Vec<Planned>, lead: Duration) -> Self {
        let n = plan.len();
        Self {
            plan,
            lead,
            assoc: None,
            written: vec![None; n],
            first_sent: vec![None; n],
            handles: std::collections::VecDeque::new(),
            track_first_sent: true,
            retransmissions: Vec::new(),
            data_path_changes: Vec::new(),
            send_errors: 0,
            abandoned: Vec::new(),
            options: SendOptions::default(),
            saturation: None,
            saturated_written: 0,
            refill_at: None,
            active: None,
        }
    }

    /// A sender that always has data, from `lead` after the association is up
    /// for `s.duration`.
    pub fn saturated(s: Saturation, lead: Duration) -> Self {
        Self {
            saturation: Some(s),
            ..Self::new(Vec::new(), lead)
        }
    }

    /// Sends every message as `options` say.
    pub fn with_options(mut self, options: SendOptions) -> Self {
        self.options = options;
        self
    }

    /// Records no first transmissions (they cost a little per message).
    pub fn without_first_sent(mut self) -> Self {
        self.track_first_sent = false;
        self
    }

    pub fn plan(&self) -> &[Planned] {
        &self.plan
    }

    /// The association it sends on, once up.
    pub fn assoc(&self) -> Option<T::Conn> {
        self.assoc
    }

    /// Saturated: set a refill for now, once per instant.
    fn refill_soon(&mut self, ctx: &mut AppCtx<'_, T>) {
        let now = ctx.now();
        if self.saturation.is_some() && self.assoc.is_some() && self.refill_at != Some(now) {
            self.refill_at = Some(now);
            ctx.set_timer(now, REFILL);
        }
    }

    /// Saturated: write what the packing allows now.
    fn refill(&mut self, ctx: &mut AppCtx<'_, T>, token: u64) {
        let (Some(s), Some(assoc), Some((from, until))) =
            (self.saturation, self.assoc, self.active)
        else {
            return;
        };
        let now = ctx.now();
        if now < from || now >= until {
            return;
        }
        if token == REFILL + 1 {
            // The periodic poll keeps a sender going that no event wakes.
            ctx.set_timer(now + SATURATED_POLL, REFILL + 1);
        }
        if self.refill_at == Some(now) && token == REFILL {
            self.refill_at = None;
        }
        let t = ctx.transport();
        let Some(state) = t.send_state(assoc) else {
            return;
        };
        let size = s.message_size.max(8);
        let message = |n: u64| {
            let mut payload = n.to_be_bytes().to_vec();
            payload.resize(size, 0x5a);
            payload
        };
        match s.packing {
            Packing::Bundle => {
                let backlog = (SATURATED_BACKLOG / size).max(16);
                let mut queued = state.queued_messages;
                while queued < backlog {
                    match t.send_message_with(
                        now,
                        assoc,
                        message(self.saturated_written),
                        self.options,
                    ) {
                        Ok(_) => self.saturated_written += 1,
                        Err(_) => break,
                    }
                    queued = t
                        .send_state(assoc)
                        .map_or(usize::MAX, |s| s.queued_messages);
                }
            }
            Packing::OnePerPacket => {
                if state.queued_messages == 0
                    && state.flight_size < state.cwnd
                    && t.send_message_with(
                        now,
                        assoc,
                        message(self.saturated_written),
                        self.options,
                    )
                    .is_ok()
                {
                    self.saturated_written += 1;
                    // The next one in a callback of its own, after this
                    // one has left in a packet of its own.
                    ctx.set_timer(now, REFILL + 2);
                }
            }
        }
    }
}

impl<T: Messages> App<T> for Sender<T> {
    fn start(&mut self, _ctx: &mut AppCtx<'_, T>) {}

    fn on_event(&mut self, ctx: &mut AppCtx<'_, T>, assoc: T::Conn, event: &T::Event) {
        match T::happening(event) {
            Happening::Connected if self.assoc.is_none() => {
                self.assoc = Some(assoc);
                let start = ctx.now() + self.lead;
                for (i, m) in self.plan.iter().enumerate() {
                    ctx.set_timer(start + m.offset, i as u64);
                }
                if let Some(s) = &self.saturation {
                    self.active = Some((start, start + s.duration));
                    ctx.set_timer(start, REFILL + 1);
                }
            }
            Happening::Retransmission(r) => self.retransmissions.push(r),
            Happening::DataPathChanged { at } => self.data_path_changes.push(at),
            Happening::Acked {
                message,
                first_sent_at,
            } => {
                if let Some(at) = self.handles.iter().position(|h| h.0 == message)
                    && let Some((_, i)) = self.handles.remove(at)
                    && let Some(slot) = self.first_sent.get_mut(i)
                {
                    *slot = Some(first_sent_at);
                }
            }
            Happening::Abandoned { message } => {
                if let Some(at) = self.handles.iter().position(|h| h.0 == message)
                    && let Some((_, i)) = self.handles.remove(at)
                {
                    if self.abandoned.len() < self.written.len() {
                        self.abandoned.resize(self.written.len(), false);
                    }
                    if let Some(slot) = self.abandoned.get_mut(i) {
                        *slot = true;
                    }
                }
            }
            _ => {}
        }
        // Whatever the protocol did, there may be room for more.
        self.refill_soon(ctx);
    }

    fn on_timer(&mut self, ctx: &mut AppCtx<'_, T>, token: u64) {
        if token >= REFILL {
            self.refill(ctx, token);
            return;
        }
        let i = token as usize;
        let (Some(assoc), Some(m)) = (self.assoc, self.plan.get(i).copied()) else {
            return;
        };
        let mut payload = (i as u64).to_be_bytes().to_vec();
        payload.resize(m.size.max(8), 0x5a);
        let now = ctx.now();
        let options = SendOptions {
            stream: m.stream,
            ..self.options
        };
        match ctx
            .transport()
            .send_message_with(now, assoc, payload, options)
        {
            Ok(handle) => {
                self.written[i] = Some(now);
                if self.track_first_sent {
                    self.handles.push_back((handle, i));
                }
            }
            // The send buffer is full (bulk traffic): try again shortly.
            Err(Refused::Full) => ctx.set_timer(now + RETRY, token),
            Err(Refused::Failed(_)) => self.send_errors += 1,
        }
    }
}

/// Associates with the sender and reads every message the moment it is ready.
#[derive(Debug)]
pub struct Receiver<T: Messages = Endpoint> {
    target: SocketAddr,
    config: T::Config,
    assoc: Option<T::Conn>,
    /// When each message was read, by message number.
    pub read: Vec<Option<Time>>,
    pub duplicates: u64,
    /// Payload bytes read.
    pub bytes: u64,
    /// Payload bytes read within `window` (when set).
    pub window_bytes: u64,
    /// The measurement window, relative to the first message: payload read
    /// from `.0` to `.1` after the traffic started counts in `window_bytes`.
    window: Option<(Duration, Duration)>,
    lead: Duration,
    connected_at: Option<Time>,
}

impl<T: Messages> Receiver<T> {
    pub fn new(target: SocketAddr, config: T::Config, messages: usize) -> Self {
        Self {
            target,
            config,
            assoc: None,
            read: vec![None; messages],
            duplicates: 0,
            bytes: 0,
            window_bytes: 0,
            window: None,
            lead: Duration::ZERO,
            connected_at: None,
        }
    }

    /// Counts the payload read between `from` and `to` after the traffic
    /// starts (`lead` after the association comes up) in `window_bytes`.
    pub fn with_window(mut self, lead: Duration, from: Duration, to: Duration) -> Self {
        self.lead = lead;
        self.window = Some((from, to));
        self
    }

    /// Whether every message has been read.
    pub fn complete(&self) -> bool {
        self.read.iter().all(Option::is_some)
    }
}

impl<T: Messages> App<T> for Receiver<T> {
    fn start(&mut self, ctx: &mut AppCtx<'_, T>) {
        let now = ctx.now();
        let target = self.target;
        self.assoc = ctx.transport().open(now, target, &self.config);
    }

    fn on_event(&mut self, ctx: &mut AppCtx<'_, T>, assoc: T::Conn, event: &T::Event) {
        let happening = T::happening(event);
        if happening == Happening::Connected && self.connected_at.is_none() {
            self.connected_at = Some(ctx.now());
        }
        if happening != Happening::MessageReady {
            return;
        }
        let now = ctx.now();
        let in_window = match (self.window, self.connected_at) {
            (Some((from, to)), Some(up)) => {
                let t = now.as_micros().saturating_sub((up + self.lead).as_micros());
                let t = Duration::from_micros(t);
                now >= up + self.lead && t >= from && t < to
            }
            _ => false,
        };
        let (read, bytes, window_bytes, duplicates) = (
            &mut self.read,
            &mut self.bytes,
            &mut self.window_bytes,
            &mut self.duplicates,
        );
        ctx.transport().drain_messages(assoc, &mut |payload| {
            let Some(number) = payload.get(..8).and_then(|b| <[u8; 8]>::try_from(b).ok()) else {
                return;
            };
            let i = u64::from_be_bytes(number) as usize;
            *bytes += payload.len() as u64;
            if in_window {
                *window_bytes += payload.len() as u64;
            }
            match read.get_mut(i) {
                Some(slot @ None) => *slot = Some(now),
                Some(Some(_)) => *duplicates += 1,
                None => {}
            }
        });
    }

    fn on_timer(&mut self, _ctx: &mut AppCtx<'_, T>, _token: u64) {}
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bursts(size: Count, gap: Gap) -> Traffic {
        Traffic::Bursts {
            bursts: 12,
            warmup_bursts: 2,
            size,
            gap,
            message_size: 200,
        }
    }

    #[test]
    fn static_bursts_put_messages_at_the_burst_times() {
        let p = plan(
            &bursts(Count::Fixed(4), Gap::Fixed(Duration::from_millis(200))),
            1,
        );
        assert_eq!(p.len(), 48);
        assert_eq!(p.iter().filter(|m| m.measured).count(), 40);
        assert_eq!(p[4].offset, Duration::from_millis(200));
        assert_eq!(p[47].offset, Duration::from_millis(2200));
        assert!(!p[7].measured && p[8].measured);
    }

    #[test]
    fn random_plans_depend_on_the_seed_only() {
        let t = bursts(
            Count::Uniform(1, 7),
            Gap::Exponential(Duration::from_millis(200)),
        );
        assert_eq!(plan(&t, 5), plan(&t, 5));
        assert_ne!(plan(&t, 5), plan(&t, 6));
        // Uniform sizes stay within their range and average near the middle.
        let mut sizes = Vec::new();
        for seed in 0..200 {
            let p = plan(&t, seed);
            for b in 0..12 {
                sizes.push(p.iter().filter(|m| m.burst == b).count());
            }
        }
        assert!(sizes.iter().all(|&n| (1..=7).contains(&n)));
        let mean = sizes.iter().sum::<usize>() as f64 / sizes.len() as f64;
        assert!((mean - 4.0).abs() < 0.2, "{mean}");
    }

    #[test]
    fn exponential_gaps_have_the_configured_mean() {
        let t = bursts(
            Count::Fixed(1),
            Gap::Exponential(Duration::from_millis(100)),
        );
        let mut total = Duration::ZERO;
        for seed in 0..500 {
            total += plan(&t, seed)[11].offset;
        }
        let mean_gap = total.as_secs_f64() / (500.0 * 11.0);
        assert!((mean_gap - 0.1).abs() < 0.01, "{mean_gap}");
    }
}
