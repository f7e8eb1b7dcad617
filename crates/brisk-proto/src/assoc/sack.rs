//! A received SACK (RFC 9260 6.2.1): acknowledgement, RTT measurement, the
//! T3-rtx rules, congestion control and fast retransmit, in the order 7.2.4
//! requires (cwnd adjustments for new acks before any fast-retransmit reduction).

use super::{Association, State, shutdown};
use crate::config::EarlyRetransmit;
use crate::events::{Event, RetransmitCause};
use crate::recovery::{early_retransmit, rto_restart, spurious, t3, thin};
use crate::serial::lt32;
use crate::time::Time;
use crate::tx::outstanding::{ChunkState, SackRejected};
use crate::wire::cause::ErrorCause;
use crate::wire::chunk::Sack;

/// Early Retransmit fires: the chunks in flight below `limit` (the one packet
/// left) go out as fast retransmissions (RFC 5827 3.2). Returns whether any did.
pub(super) fn early_retransmit_now(a: &mut Association, limit: u32) -> bool {
    let flight_before = a.outstanding.window_flight();
    let marked = a
        .outstanding
        .mark_missing_below(limit, RetransmitCause::EarlyRetransmit);
    // 6.2.1: marked chunks go back into the peer's window.
    a.peer_rwnd = a
        .peer_rwnd
        .saturating_add(flight_before - a.outstanding.window_flight());
    !marked.is_empty()
}

pub(super) fn on_sack(a: &mut Association, now: Time, sack: &Sack) {
    if !matches!(
        a.state,
        State::Established | State::ShutdownPending | State::ShutdownSent | State::ShutdownReceived
    ) {
        return;
    }
    a.stats.sacks_received += 1;
    a.last_sack = Some((now, sack.a_rwnd));
    apply(a, now, sack);
}

/// F-RTO's question for SCTP, and RFC 3708 (`recovery::spurious`): does this SACK show
/// that the chunk earliest at a T3 expiry had arrived? Then undo the expiry.
fn judge_t3_episode(a: &mut Association, sack: &Sack, tsn: u32, before: Option<ChunkState>) {
    let Some(state) = before else {
        // Acknowledged already, or abandoned: nothing left to judge by.
        a.spurious.close();
        return;
    };
    let acked_now = a
        .outstanding
        .get(tsn)
        .is_none_or(|c| c.state == ChunkState::GapAcked);
    let evidence = spurious::Evidence {
        duplicate: sack.dup_tsns.contains(&tsn),
        acked: acked_now && state != ChunkState::GapAcked,
    };
    if let spurious::Verdict::Spurious(b) = a.spurious.on_sack(evidence) {
        a.path.cc.undo(b.cwnd, b.ssthresh);
        a.path.rto.undo_back_off(b.backoff);
        a.stats.spurious_timeouts_undone += 1;
    }
}

/// Applies a SACK, or the cumulative ack of a SHUTDOWN (9.2).
pub(super) fn apply(a: &mut Association, now: Time, sack: &Sack) {
    let flight_before = a.outstanding.flight_size();
    let packets_before = a.outstanding.packets_outstanding();
    let er = a.cfg.early_retransmit != EarlyRetransmit::Off;
    let bytes_before = if er {
        a.outstanding.unacked_total_bytes()
    } else {
        0
    };
    // The chunk a T3 episode watches, as it stood before this SACK.
    let watched = a
        .spurious
        .watched()
        .map(|tsn| (tsn, a.outstanding.get(tsn).map(|c| c.state)));
    let outcome = match a.outstanding.on_sack(sack, now) {
        Ok(outcome) => outcome,
        // 6.2.1: an old SACK that arrived late.
        Err(SackRejected::Stale) => return,
        // RFC 9260 15: MUST abort on a SACK acknowledging a TSN never sent.
        Err(SackRejected::AcksUnsentTsn) => {
            a.stats.malformed_chunks += 1;
            a.abort_with(
                ErrorCause::ProtocolViolation(
                    b"SACK acknowledges a TSN never sent".to_vec().into(),
                ),
                "peer acknowledged a TSN never sent",
            );
            return;
        }
    };
    if let Some(rtt) = outcome.rtt {
        a.path.rto.on_measurement(rtt);
    }
    if let Some((tsn, before)) = watched {
        judge_t3_episode(a, sack, tsn, before);
    }
    if outcome.bytes_acked > 0 {
        // 8.3: acknowledged DATA resets the error counters.
        a.clear_errors();
        a.tail_probe.on_new_ack();
    } else if a
        .outstanding
        .earliest_unacked()
        .is_some_and(|c| sack.a_rwnd < crate::tx::outstanding::window_cost(c.size()))
    {
        // RFC 9260 6.1 A: SACKs that keep answering a zero window probe show
        // the peer alive; the unanswered probes are not errors.
        a.clear_errors();
    }
    // Minshall's Nagle: the small packet is acknowledged.
    if a.small_unacked.is_some_and(|t| {
        a.outstanding
            .get(t)
            .is_none_or(|c| c.state == ChunkState::GapAcked)
    }) {
        a.small_unacked = None;
    }
    // 7.2.1, 7.2.2 before 7.2.3 (note at the end of 7.2.4).
    a.path.cc.on_ack(
        outcome.bytes_acked,
        flight_before,
        a.fast_recovery.in_recovery(),
    );
    a.fast_recovery.on_cum_ack(sack.cum_tsn_ack);
    if let Some(sent) = outcome.htna_sent {
        let acked = packets_before.saturating_sub(a.outstanding.packets_outstanding());
        a.path.ack_spacing.on_sack(now, acked, sent);
    }
    let window = early_retransmit::Window {
        packets_before,
        packets_after: a.outstanding.packets_outstanding(),
        bytes_before,
        bytes_after: if er { a.outstanding.unacked_bytes() } else { 0 },
    };
    // Seed 001 4.3: a thin stream fast-retransmits on the first miss indication.
    let thin = thin::is_thin(&a.cfg, packets_before);
    let fr = a.fast_recovery.on_sack(
        sack,
        &outcome,
        &mut a.outstanding,
        thin::dupthresh(&a.cfg, thin),
        a.cfg.lost_retransmission_detection,
    );
    let mut entered = fr.entered_recovery;
    let mut marked = !fr.marked.is_empty();
    // 6.2.1: rwnd = a_rwnd less what is still outstanding.
    a.peer_rwnd = sack.a_rwnd.saturating_sub(a.outstanding.window_flight());
    if !marked
        && !a.fast_recovery.in_recovery()
        && let Some(htna) = outcome.htna
        && early_retransmit::fires(
            a.cfg.early_retransmit,
            &window,
            a.path.cc.pmdcs(),
            a.new_data_ready(),
        )
    {
        if a.cfg.early_retransmit_delay {
            // RFC 5827 6: wait a little in case the packet was only reordered.
            a.early_retransmit_pending = a
                .outstanding
                .chunks()
                .filter(|c| c.state == ChunkState::InFlight && lt32(c.tsn, htna))
                .map(|c| c.tsn)
                .collect();
            let wait = early_retransmit::delay(a.path.rto.srtt());
            a.early_retransmit_timer.start(now, wait);
        } else {
            marked = early_retransmit_now(a, htna);
            entered |= marked
                && a.fast_recovery
                    .enter(a.outstanding.next_tsn().wrapping_sub(1));
        }
    }
    if entered {
        a.path.cc.on_fast_retransmit();
        a.stats.fast_recoveries += 1;
    }
    if marked {
        a.fast_retransmit_now = true;
    }
    let restart = rto_restart::applies(
        a.cfg.rto_restart,
        a.outstanding.packets_outstanding(),
        a.new_data_ready(),
    );
    let rto = a.data_rto();
    // The ack-reach floor guards Brisk's shorter timers: RTO restart and a
    // thin RTO.Min. (Standard timers are left exactly as RFC 9260 has them.)
    let floor = (a.cfg.ack_reach_floor && (a.cfg.rto_restart || a.cfg.thin_rto_min.is_some()))
        .then(|| a.cfg.assumed_peer_sack_delay());
    t3::on_sack(
        &mut a.path,
        &a.outstanding,
        &outcome,
        now,
        rto,
        restart,
        floor,
    );
    a.arm_tail_probe(now);
    if a.outstanding.is_empty() {
        a.path.cc.on_all_acked();
    }
    for m in &outcome.acked_messages {
        a.stats.messages_acked += 1;
        if a.cfg.events {
            a.emit(Event::MessageAcked {
                id: m.id,
                queued_at: m.queued_at,
                first_sent_at: m.first_sent_at,
                acked_at: now,
            });
        }
    }
    shutdown::progress(a, now);
}
