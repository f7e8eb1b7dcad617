//! Heartbeats (RFC 9260 8.3, 5.4; RFC 7829 3.2 rule 4): probe each idle
//! destination, confirm the ones the peer listed (at most HB.Max.Burst
//! probes to unconfirmed ones per RTO, and none once one is given up),
//! probe a potentially failed one every RTO, measure RTTs, and count
//! unanswered probes towards the destination's and the association's failure.

use std::net::SocketAddr;
use std::time::Duration;

use rand::RngCore;

use super::{Association, Control, State};
use crate::path::{PathId, PathState};
use crate::recovery::failover;
use crate::time::Time;
use crate::timer::TimerKind;
use crate::wire::Param;
use crate::wire::chunk::{Chunk, Heartbeat, HeartbeatAck};

/// Bytes of our Heartbeat Info: a nonce and the send time. The nonce alone
/// names the destination the probe went to (each has its own, 5.4).
const INFO_LEN: usize = 16;

/// The heartbeat schedule of one destination.
#[derive(Debug, Default, Clone, Copy)]
struct Beat {
    /// The heartbeat in flight: its nonce and send time.
    pending: Option<(u64, Time)>,
    /// When this destination's heartbeat timer fires next.
    due: Option<Time>,
}

/// The heartbeats of every destination. One association timer
/// (`TimerKind::Heartbeat`) runs to the earliest of their deadlines.
#[derive(Debug, Default)]
pub(super) struct Heartbeats {
    beats: Vec<Beat>,
    enabled: bool,
}

impl Heartbeats {
    /// The association closed (its timers are stopped with it).
    pub fn stop(&mut self) {
        self.beats.clear();
    }

    fn beat(&mut self, id: PathId) -> &mut Beat {
        if self.beats.len() <= id.index() {
            // Exactly as many as there are destinations: idle associations
            // are many, and each byte counts (`benches/memory.rs`).
            self.beats.reserve_exact(id.index() + 1 - self.beats.len());
            self.beats.resize(id.index() + 1, Beat::default());
        }
        &mut self.beats[id.index()]
    }

    fn earliest(&self) -> Option<Time> {
        self.beats.iter().filter_map(|b| b.due).min()
    }
}

/// Starts heartbeats once the association is established: an idle-path
/// heartbeat after RTO + HB.interval on confirmed destinations (8.3), and
/// at once on unconfirmed ones (5.4).
pub(super) fn start(a: &mut Association, now: Time) {
    a.heartbeats.enabled = a.cfg.heartbeats;
    a.heartbeats.beats.clear();
    let ids: Vec<PathId> = a.paths.iter().map(|(id, _)| id).collect();
    for id in ids {
        schedule_first(a, now, id);
    }
    arm(a, now);
}

/// A destination the peer listed joined after the association was set up:
/// probe it (5.4).
pub(super) fn on_path_added(a: &mut Association, now: Time, id: PathId) {
    if matches!(a.state, State::Established) {
        schedule_first(a, now, id);
        arm(a, now);
    }
}

/// A destination became potentially failed: probe it now, and from then on
/// every RTO (RFC 7829 3.2 rule 4). (An inactive one keeps the normal
/// heartbeat rate, 8.3, RFC 7829 3.2 rule 7.)
pub(super) fn on_path_failing(a: &mut Association, now: Time, id: PathId) {
    if !matches!(a.state, State::Established)
        || a.paths.get(id).state != PathState::PotentiallyFailed
    {
        return;
    }
    let beat = a.heartbeats.beat(id);
    if beat.pending.is_none() {
        beat.due = Some(now);
        arm(a, now);
    }
}

fn schedule_first(a: &mut Association, now: Time, id: PathId) {
    let path = a.paths.get(id);
    let due = if !path.confirmed {
        Some(now)
    } else if a.heartbeats.enabled {
        Some(now + (a.cfg.hb_interval + path.rto.rto()))
    } else {
        None
    };
    let beat = a.heartbeats.beat(id);
    beat.pending = None;
    beat.due = due;
}

/// Runs the association's heartbeat timer to the earliest deadline.
fn arm(a: &mut Association, now: Time) {
    match a.heartbeats.earliest() {
        Some(due) => a.timers.start(TimerKind::Heartbeat, now, due.since(now)),
        None => a.timers.stop(TimerKind::Heartbeat),
    }
}

/// Whether a destination gets probed whatever its traffic: unconfirmed
/// (5.4), potentially failed (RFC 7829 3.2 rule 4), or inactive (8.3: it
/// recovers only by a heartbeat).
fn always_probed(a: &Association, id: PathId) -> bool {
    let p = a.paths.get(id);
    !p.confirmed || p.state != PathState::Active
}

/// Whether an unanswered probe is followed by another at once (every RTO,
/// backed off): not for an inactive destination, which is probed at the
/// heartbeat rate (8.3; RFC 7829 3.2 rule 7).
fn probes_every_rto(a: &Association, id: PathId) -> bool {
    a.paths.get(id).state != PathState::Inactive
}

/// Whether we gave up on an unconfirmed destination: its probes went
/// unanswered past Path.Max.Retrans and it became inactive. RFC 9260 5.4
/// lowers its probing to the heartbeat rate; we stop it, so that an
/// address a peer listed but does not own gets Path.Max.Retrans + 1 probes
/// in the association's life, not one every HB.interval for ever (5.4:
/// the probes SHOULD be limited; 11.2.4.1). It stays unconfirmed and
/// never takes data.
fn given_up(a: &Association, id: PathId) -> bool {
    let p = a.paths.get(id);
    !p.confirmed && p.state == PathState::Inactive
}

/// 5.4 HB.Max.Burst: when a probe to an unconfirmed destination may go,
/// `None` now. Such a probe is in flight for one RTO at most (it is answered
/// or counted as an error at its deadline), so at most `hb_max_burst` in
/// flight means at most that many per RTO, across all of them; a further
/// one waits for the earliest deadline of those in flight.
fn unconfirmed_slot(a: &Association) -> Option<Time> {
    let in_flight: Vec<Option<Time>> = a
        .heartbeats
        .beats
        .iter()
        .enumerate()
        .filter(|(i, b)| b.pending.is_some() && !a.paths.get(PathId::from_index(*i)).confirmed)
        .map(|(_, b)| b.due)
        .collect();
    let burst = usize::try_from(a.cfg.hb_max_burst).unwrap_or(usize::MAX);
    if in_flight.len() < burst {
        return None;
    }
    in_flight.into_iter().flatten().min()
}

/// The heartbeat timer fired: every destination whose deadline passed.
pub(super) fn on_timer(a: &mut Association, now: Time, rng: &mut dyn RngCore) {
    if a.state == State::Closed {
        return;
    }
    let due: Vec<PathId> = a
        .heartbeats
        .beats
        .iter()
        .enumerate()
        .filter(|(_, b)| b.due.is_some_and(|d| d <= now))
        .map(|(i, _)| PathId::from_index(i))
        .collect();
    for id in due {
        if !on_path_timer(a, now, id, rng) {
            return;
        }
    }
    arm(a, now);
}

/// One destination's heartbeat deadline passed. Returns false if the
/// association failed.
fn on_path_timer(a: &mut Association, now: Time, id: PathId, rng: &mut dyn RngCore) -> bool {
    a.heartbeats.beat(id).due = None;
    let confirmed = a.paths.get(id).confirmed;
    // The RTO before any back-off below times the next probe.
    let rto = a.paths.get(id).rto.rto();
    let unanswered = a.heartbeats.beat(id).pending.take().is_some();
    if unanswered {
        // 8.3: a heartbeat unanswered within its RTO counts as an error of
        // the destination, with the RTO backed off; 5.4: a probe of an
        // unconfirmed address counts against the destination only.
        a.paths.get_mut(id).rto.back_off();
        a.on_path_timeout(now, id);
        if confirmed && !a.count_error() {
            return false;
        }
    }
    if given_up(a, id) || (!a.heartbeats.enabled && !always_probed(a, id)) {
        return true;
    }
    // 8.3: only idle destinations are probed; DATA traffic proves them.
    let idle = !a.rtx.outstanding().chunks().any(|c| c.path == id)
        && a.paths
            .get(id)
            .last_data_sent
            .is_none_or(|t| now.since(t) >= a.cfg.hb_interval);
    let may_send =
        matches!(a.state, State::Established) && (!unanswered || probes_every_rto(a, id));
    if may_send && (idle || always_probed(a, id)) {
        if !confirmed && let Some(slot) = unconfirmed_slot(a) {
            a.heartbeats.beat(id).due = Some(slot.max(now));
            return true;
        }
        send(a, now, id, rng);
        // Unanswered within one RTO, the probe counts as an error (8.3);
        // once answered, the next one is scheduled from the HEARTBEAT ACK.
        a.heartbeats.beat(id).due = Some(now + rto.max(Duration::from_millis(1)));
    } else {
        // 8.3: the interval is RTO + HB.interval, jittered by +/- 50% of RTO.
        let jitter_us = u64::try_from(rto.as_micros()).unwrap_or(u64::MAX).max(1);
        let jitter = Duration::from_micros(rng.next_u64() % jitter_us);
        let p = a.paths.get(id);
        let next =
            failover::heartbeat_interval(p.state, p.confirmed, rto, a.cfg.hb_interval, jitter);
        a.heartbeats.beat(id).due = Some(now + next);
    }
    true
}

/// Queues a HEARTBEAT to destination `id`.
fn send(a: &mut Association, now: Time, id: PathId, rng: &mut dyn RngCore) {
    let nonce = rng.next_u64();
    let mut info = Vec::with_capacity(INFO_LEN);
    info.extend_from_slice(&nonce.to_be_bytes());
    info.extend_from_slice(&now.as_micros().to_be_bytes());
    a.control
        .push_back(Control::new(Chunk::Heartbeat(Heartbeat::new(info))).to(id));
    a.heartbeats.beat(id).pending = Some((nonce, now));
    a.counters.heartbeats_sent += 1;
}

/// 8.3: answer a HEARTBEAT with its info, unchanged, to where it came from
/// (6.4).
pub(super) fn on_heartbeat(a: &mut Association, hb: &Heartbeat<'_>, from: SocketAddr) {
    if matches!(a.state, State::CookieWait | State::Closed) {
        return;
    }
    let params = hb.params.iter().cloned().map(Param::into_owned).collect();
    // Alone in its packet: some stacks (pion/sctp 1.11) drop any packet that
    // carries a HEARTBEAT ACK, which must not take DATA or a SACK with it.
    let mut reply = Control::alone(Chunk::HeartbeatAck(HeartbeatAck { params }));
    if let Some(id) = a.paths.find(from) {
        reply = reply.to(id);
    }
    a.control.push_back(reply);
}

/// 8.3, 5.4: a HEARTBEAT ACK for one of our probes: an RTT measurement of
/// its destination, which is confirmed, active and free of errors, and the
/// association's errors clear.
pub(super) fn on_heartbeat_ack(a: &mut Association, now: Time, ack: &HeartbeatAck<'_>) {
    let Some(info) = ack.info() else { return };
    let Some(echoed) = info.get(..8) else { return };
    let Some((index, sent)) = a.heartbeats.beats.iter().enumerate().find_map(|(i, b)| {
        b.pending
            .filter(|(nonce, _)| echoed == nonce.to_be_bytes())
            .map(|(_, sent)| (i, sent))
    }) else {
        return;
    };
    let id = PathId::from_index(index);
    a.heartbeats.beat(id).pending = None;
    a.paths.get_mut(id).rto.on_measurement(now.since(sent));
    a.clear_errors();
    a.on_path_reachable(now, id, true);
    let next = if a.heartbeats.enabled || always_probed(a, id) {
        Some(now + (a.cfg.hb_interval + a.paths.get(id).rto.rto()))
    } else {
        None
    };
    a.heartbeats.beat(id).due = next;
    arm(a, now);
}
