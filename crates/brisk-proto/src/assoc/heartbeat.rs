//! Heartbeats (RFC 9260 8.3): probe an idle path, measure its RTT, and count
//! unanswered probes towards the association's failure.

use std::time::Duration;

use rand::RngCore;

use super::{Association, Control, State};
use crate::config::Config;
use crate::time::Time;
use crate::timer::{TimerKind, TimerTable};
use crate::wire::Param;
use crate::wire::chunk::{Chunk, Heartbeat, HeartbeatAck};

/// Bytes of our Heartbeat Info: a nonce and the send time.
const INFO_LEN: usize = 16;

/// The heartbeat of the one path (its timer is `TimerKind::Heartbeat`).
#[derive(Debug, Default)]
pub(super) struct Heartbeats {
    /// The heartbeat in flight: its nonce and send time.
    pending: Option<(u64, Time)>,
    enabled: bool,
}

impl Heartbeats {
    /// Starts heartbeats once the association is established.
    pub fn start(&mut self, now: Time, cfg: &Config, rto: Duration, timers: &mut TimerTable) {
        self.enabled = cfg.heartbeats;
        self.pending = None;
        if self.enabled {
            timers.start(TimerKind::Heartbeat, now, cfg.hb_interval + rto);
        }
    }

    /// The association closed (its timers are stopped with it).
    pub fn stop(&mut self) {
        self.pending = None;
    }
}

/// The heartbeat timer fired.
pub(super) fn on_timer(a: &mut Association, now: Time, rng: &mut dyn RngCore) {
    if !a.heartbeats.enabled || a.state == State::Closed {
        return;
    }
    let rto = a.path.rto.rto();
    if a.heartbeats.pending.take().is_some() {
        // 8.3: a heartbeat unanswered within its interval counts as an error.
        a.path.rto.back_off();
        if !a.count_error() {
            return;
        }
    }
    // 8.3: only idle paths are probed; DATA traffic proves reachability.
    let idle = a.rtx.outstanding().is_empty()
        && a.path
            .last_data_sent
            .is_none_or(|t| now.since(t) >= a.cfg.hb_interval);
    if idle && a.state == State::Established {
        let nonce = rng.next_u64();
        let mut info = Vec::with_capacity(INFO_LEN);
        info.extend_from_slice(&nonce.to_be_bytes());
        info.extend_from_slice(&now.as_micros().to_be_bytes());
        a.control
            .push_back(Control::new(Chunk::Heartbeat(Heartbeat::new(info))));
        a.heartbeats.pending = Some((nonce, now));
        // Unanswered within one RTO, the probe counts as an error (8.3); once
        // answered, the next one is scheduled from the HEARTBEAT ACK.
        a.timers
            .start(TimerKind::Heartbeat, now, rto.max(Duration::from_millis(1)));
    } else {
        // 8.3: the interval is RTO + HB.interval, jittered by +/- 50% of RTO.
        let jitter_us = u64::try_from(rto.as_micros()).unwrap_or(u64::MAX).max(1);
        let jitter = Duration::from_micros(rng.next_u64() % jitter_us);
        a.timers.start(
            TimerKind::Heartbeat,
            now,
            a.cfg.hb_interval + rto / 2 + jitter,
        );
    }
}

/// 8.3: answer a HEARTBEAT with its info, unchanged.
pub(super) fn on_heartbeat(a: &mut Association, hb: &Heartbeat<'_>) {
    if matches!(a.state, State::CookieWait | State::Closed) {
        return;
    }
    let params = hb.params.iter().cloned().map(Param::into_owned).collect();
    // Alone in its packet: some stacks (pion/sctp 1.11) drop any packet that
    // carries a HEARTBEAT ACK, which must not take DATA or a SACK with it.
    a.control
        .push_back(Control::alone(Chunk::HeartbeatAck(HeartbeatAck { params })));
}

/// 8.3: a HEARTBEAT ACK for our probe: an RTT measurement, and the errors clear.
pub(super) fn on_heartbeat_ack(a: &mut Association, now: Time, ack: &HeartbeatAck<'_>) {
    let Some(info) = ack.info() else { return };
    let Some((nonce, sent)) = a.heartbeats.pending else {
        return;
    };
    let Some(echoed) = info.get(..8) else { return };
    if echoed != nonce.to_be_bytes() {
        return;
    }
    a.heartbeats.pending = None;
    a.path.rto.on_measurement(now.since(sent));
    a.clear_errors();
    let next = a.cfg.hb_interval + a.path.rto.rto();
    a.timers.start(TimerKind::Heartbeat, now, next);
}
