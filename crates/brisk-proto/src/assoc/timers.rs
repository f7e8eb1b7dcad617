//! What each timer's expiry does.

use super::{Association, Ctx, handshake, heartbeat, sack, shutdown};
use crate::events::RetransmitCause;
use crate::recovery::{spurious, t3, thin};
use crate::time::Time;
use crate::tx::outstanding::{ChunkState, window_cost};

pub(super) fn on_timeout(a: &mut Association, now: Time, ctx: &mut Ctx<'_>) {
    if a.handshake.t1.poll_expired(now) {
        handshake::on_t1(a, now);
    }
    if a.path.t3.poll_expired(now) {
        on_t3_expiry(a, now);
    }
    if a.early_retransmit_timer.poll_expired(now) {
        on_early_retransmit_delay(a);
    }
    if a.tail_probe.timer.poll_expired(now) {
        on_tail_probe(a);
    }
    if a.shutdown.t2.poll_expired(now) {
        shutdown::on_t2(a, now);
    }
    if a.shutdown.guard.poll_expired(now) {
        shutdown::on_guard(a);
    }
    if a.heartbeats.poll_expired(now) {
        heartbeat::on_timer(a, now, ctx.rng);
    }
    // The delayed SACK needs no action here: the next packet carries it.
    a.new_transmission_opportunity();
}

/// RFC 9260 6.3.3: E1 (collapse cwnd), E2 (back off), E3 (retransmit the
/// earliest outstanding chunks; the rest as cwnd allows), and 8.2/8.1 error
/// counting.
fn on_t3_expiry(a: &mut Association, now: Time) {
    if a.outstanding.earliest_unacked().is_none() {
        return;
    }
    a.stats.t3_expirations += 1;
    // RFC 9260 6.1 A: while the sender probes a closed window and keeps
    // receiving SACKs (one since the last expiry, its window still closed),
    // the expiry is no sign of an unreachable peer. (Those SACKs also clear
    // the error count: `sack::on_sack`.)
    let since = a.last_t3_expiry.replace(now);
    let answered_probe = a.outstanding.earliest_unacked().is_some_and(|c| {
        a.last_sack
            .is_some_and(|(at, rwnd)| since.is_none_or(|t| at > t) && rwnd < window_cost(c.size()))
    });
    if !answered_probe && !a.count_error() {
        return;
    }
    if a.cfg.spurious_timeout_undo
        && let Some(earliest) = a.outstanding.earliest_unacked()
    {
        let before = spurious::Before {
            cwnd: a.path.cc.cwnd(),
            ssthresh: a.path.cc.ssthresh(),
            backoff: a.path.rto.backoff(),
        };
        a.spurious.on_expiry(earliest.tsn, before);
    }
    // Seed 001 4.2.2: a thin stream's timeouts stay linear.
    let thin = a.is_thin();
    t3::on_expiry(&mut a.path, thin::backs_off(&a.cfg, thin));
    a.early_retransmit_timer.stop();
    a.early_retransmit_pending.clear();
    a.tail_probe.stop();
    a.fast_recovery.reset();
    a.fast_retransmit_now = false;
    let flight_before = a.outstanding.window_flight();
    a.outstanding.mark_all_in_flight(RetransmitCause::T3Timeout);
    // 6.2.1: chunks marked for retransmission go back into the peer's window.
    a.peer_rwnd = a
        .peer_rwnd
        .saturating_add(flight_before - a.outstanding.window_flight());
    // The retransmission itself restarts T3 (R1) when it goes out.
    let _ = now;
}

/// The Early Retransmit delay ran out (RFC 5827 6): retransmit the chunks that
/// are still missing; a SACK in the meantime may have resolved them.
fn on_early_retransmit_delay(a: &mut Association) {
    let pending = std::mem::take(&mut a.early_retransmit_pending);
    let Some(&last) = pending.last() else { return };
    let still_missing = pending.iter().any(|tsn| {
        a.outstanding
            .get(*tsn)
            .is_some_and(|c| c.state == ChunkState::InFlight && !c.fast_retransmitted)
    });
    if !still_missing || a.fast_recovery.in_recovery() {
        return;
    }
    if sack::early_retransmit_now(a, last.wrapping_add(1)) {
        if a.fast_recovery
            .enter(a.outstanding.next_tsn().wrapping_sub(1))
        {
            a.path.cc.on_fast_retransmit();
            a.stats.fast_recoveries += 1;
        }
        a.fast_retransmit_now = true;
    }
}

/// RFC 8985 7.3: the probe timer fired. Send new data if the windows allow;
/// otherwise send the highest outstanding chunk again. No cwnd reduction.
fn on_tail_probe(a: &mut Association) {
    if a.outstanding.earliest_unacked().is_none() || a.fast_recovery.in_recovery() {
        return;
    }
    a.tail_probe.probing = true;
    let cwnd_open = a.path.cc.allows_new_data(a.outstanding.flight_size());
    if a.new_data_ready() && cwnd_open {
        // The next packet carries new data; its SACK does the probing.
        return;
    }
    if let Some(tsn) = a.outstanding.highest_in_flight() {
        let flight_before = a.outstanding.window_flight();
        if a.outstanding.mark(tsn, RetransmitCause::TailLossProbe) {
            a.peer_rwnd = a
                .peer_rwnd
                .saturating_add(flight_before - a.outstanding.window_flight());
            // One packet, regardless of cwnd (like a fast retransmission).
            a.fast_retransmit_now = true;
        }
    }
}
