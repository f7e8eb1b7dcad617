//! Graceful shutdown (RFC 9260 9.2), from either side or both at once, with
//! T2-shutdown and the T5-shutdown-guard.

use super::{Association, Control, State, sack};
use crate::events::{CloseReason, Event};
use crate::time::Time;
use crate::timer::TimerKind;
use crate::wire::CommonHeader;
use crate::wire::chunk::{self, Chunk, ShutdownAck, ShutdownComplete};

/// The application asked to shut down.
pub(super) fn start(a: &mut Association, now: Time) {
    match a.state {
        State::Established => {
            a.state = State::ShutdownPending;
            progress(a, now);
        }
        // Nothing was established: there is nothing to shut down gracefully.
        State::CookieWait | State::CookieEchoed => a.close(CloseReason::Shutdown),
        _ => {}
    }
}

/// Moves the shutdown on once every outstanding chunk is acknowledged.
pub(super) fn progress(a: &mut Association, now: Time) {
    if !a.all_acked() {
        return;
    }
    match a.state {
        // 9.2: SHUTDOWN-PENDING with nothing outstanding: send SHUTDOWN.
        State::ShutdownPending => {
            a.state = State::ShutdownSent;
            // 9.2: the SHUTDOWN's Cumulative TSN Ack stands for a SACK, but a
            // peer may wait for its last DATA to be SACKed: a delayed SACK
            // goes now, ahead of the SHUTDOWN in its packet.
            if super::receive::sack_pending(a) {
                a.sack_requested = true;
            }
            send_shutdown(a);
            start_t2(a, now);
            // T5-shutdown-guard bounds the whole shutdown (9.2: 5 * RTO.Max).
            a.timers
                .start(TimerKind::ShutdownGuard, now, 5 * a.cfg.rto_max);
        }
        // 9.2: SHUTDOWN-RECEIVED with nothing outstanding: send SHUTDOWN ACK.
        State::ShutdownReceived => {
            a.state = State::ShutdownAckSent;
            a.control
                .push_back(Control::new(Chunk::ShutdownAck(ShutdownAck)));
            start_t2(a, now);
        }
        _ => {}
    }
}

/// T2-shutdown retransmits SHUTDOWN or SHUTDOWN ACK (9.2).
fn start_t2(a: &mut Association, now: Time) {
    let rto = a.paths.data().rto.rto();
    a.timers.start(TimerKind::T2Shutdown, now, rto);
}

fn send_shutdown(a: &mut Association) {
    a.control
        .push_back(Control::new(Chunk::Shutdown(chunk::Shutdown {
            cum_tsn_ack: a.tracker.cum_tsn().0,
        })));
}

/// 9.2: in SHUTDOWN-SENT, DATA is answered with SHUTDOWN and T2 restarts.
pub(super) fn resend_shutdown(a: &mut Association, now: Time) {
    send_shutdown(a);
    start_t2(a, now);
}

/// 9.2: in SHUTDOWN-ACK-SENT, a repeated INIT or COOKIE ECHO gets the SHUTDOWN ACK again.
pub(super) fn resend_shutdown_ack(a: &mut Association, now: Time) {
    a.control
        .push_back(Control::new(Chunk::ShutdownAck(ShutdownAck)));
    start_t2(a, now);
}

/// A SHUTDOWN from the peer.
pub(super) fn on_shutdown(a: &mut Association, now: Time, s: &chunk::Shutdown) {
    if !matches!(
        a.state,
        State::Established | State::ShutdownPending | State::ShutdownSent | State::ShutdownReceived
    ) {
        return;
    }
    // 9.2: the Cumulative TSN Ack of SHUTDOWN acknowledges like a SACK.
    if sack::on_shutdown_cum_ack(a, now, crate::serial::Tsn(s.cum_tsn_ack)) {
        progress(a, now);
    }
    // The peer sends no more DATA (9.2): a delayed SACK for what it sent has
    // nothing left to wait for, and its SHUTDOWN waits on it. Send it now.
    if super::receive::sack_pending(a) {
        a.sack_requested = true;
    }
    match a.state {
        State::Established | State::ShutdownPending => {
            a.state = State::ShutdownReceived;
            a.emit(Event::PeerShutdown);
            progress(a, now);
        }
        // 9.2: both sides sent SHUTDOWN: answer with SHUTDOWN ACK at once.
        State::ShutdownSent => {
            a.state = State::ShutdownAckSent;
            a.emit(Event::PeerShutdown);
            resend_shutdown_ack(a, now);
        }
        _ => {}
    }
}

/// A SHUTDOWN ACK: our SHUTDOWN was acknowledged (9.2).
pub(super) fn on_shutdown_ack(a: &mut Association, _now: Time) {
    if matches!(a.state, State::ShutdownSent | State::ShutdownAckSent) {
        a.control
            .push_back(Control::new(Chunk::ShutdownComplete(ShutdownComplete {
                reflected_tag: false,
            })));
        a.close(CloseReason::Shutdown);
    }
}

/// 8.5.1 E: a packet with a SHUTDOWN ACK in COOKIE-WAIT or COOKIE-ECHOED is
/// out of the blue, whatever its tag: 8.4 rule 5 answers it with SHUTDOWN
/// COMPLETE under the tag received, T bit set (rule 2: never a packet with
/// an ABORT). Returns whether the packet was taken so.
pub(super) fn out_of_the_blue_shutdown_ack(
    a: &mut Association,
    header: &CommonHeader,
    chunks: &[Chunk<'_>],
) -> bool {
    if !matches!(a.state, State::CookieWait | State::CookieEchoed)
        || !chunks.iter().any(|c| matches!(c, Chunk::ShutdownAck(_)))
        || chunks.iter().any(|c| matches!(c, Chunk::Abort(_)))
    {
        return false;
    }
    a.control.push_back(Control::with_tag(
        Chunk::ShutdownComplete(ShutdownComplete {
            reflected_tag: true,
        }),
        header.verification_tag,
    ));
    true
}

/// A SHUTDOWN COMPLETE ends the association from SHUTDOWN-ACK-SENT (9.2).
pub(super) fn on_shutdown_complete(a: &mut Association) {
    if a.state == State::ShutdownAckSent {
        a.close(CloseReason::Shutdown);
    }
}

/// T2-shutdown expired: resend, backing off; too many errors abort (9.2, 8.1).
pub(super) fn on_t2(a: &mut Association, now: Time) {
    // 8.2: the destination it went to timed out too (a retransmission may
    // then go to another, 9.2).
    let to = a.paths.data_id();
    a.on_path_timeout(now, to);
    if !a.count_error() {
        return;
    }
    a.paths.get_mut(to).rto.back_off();
    match a.state {
        State::ShutdownSent => resend_shutdown(a, now),
        State::ShutdownAckSent => resend_shutdown_ack(a, now),
        _ => {}
    }
}

/// T5-shutdown-guard expired: abort (9.2).
pub(super) fn on_guard(a: &mut Association) {
    if a.state == State::ShutdownSent {
        a.give_up("shutdown did not complete within 5 * RTO.Max");
    }
}
