//! What each timer's expiry does: one dispatch over the timer table, in
//! [`TimerKind::ALL`] order.

use super::{Association, Ctx, handshake, heartbeat, reconfig, shutdown};
use crate::time::Time;
use crate::timer::TimerKind;
use crate::tx::retransmission_queue::T3Expiry;

pub(super) fn on_timeout(a: &mut Association, now: Time, ctx: &mut Ctx<'_>) {
    for kind in TimerKind::ALL {
        // The delayed SACK needs no action here: it stays due until the next
        // packet carries the SACK.
        if kind == TimerKind::DelayedSack || !a.timers.poll_expired(kind, now) {
            continue;
        }
        match kind {
            TimerKind::T1 => handshake::on_t1(a, now),
            TimerKind::T3Rtx => on_t3_expiry(a, now),
            TimerKind::EarlyRetransmit => {
                let (rtx, mut env) = a.tx();
                rtx.on_early_retransmit_timer(now, &mut env);
            }
            TimerKind::RackReorder => {
                let (rtx, mut env) = a.tx();
                rtx.on_rack_timer(now, &mut env);
            }
            TimerKind::TailLossProbe => {
                let queued = a.queued_chunk();
                let (rtx, mut env) = a.tx();
                rtx.on_tail_probe_timer(now, queued, &mut env);
            }
            TimerKind::T2Shutdown => shutdown::on_t2(a, now),
            TimerKind::ShutdownGuard => shutdown::on_guard(a),
            TimerKind::Heartbeat => heartbeat::on_timer(a, now, ctx.rng),
            TimerKind::Reconfig => reconfig::on_timer(a, now),
            TimerKind::CopyProbe => a.rtx.redundancy_mut().on_copy_probe_timer(),
            TimerKind::DelayedSack => {}
        }
    }
    a.new_transmission_opportunity();
}

/// RFC 9260 6.3.3, and 8.2/8.1 error counting between the decision and the
/// retransmission: an association that fails here retransmits nothing.
fn on_t3_expiry(a: &mut Association, now: Time) {
    let T3Expiry::Expired {
        counts_as_error,
        path,
    } = a.rtx.on_t3_expiry(now)
    else {
        return;
    };
    if counts_as_error {
        // 8.2 (RFC 7829 3.2): the destination's count first, so that data
        // has moved before the retransmission picks where to go (6.4).
        a.on_path_timeout(now, path);
        if !a.count_error() {
            return;
        }
    }
    let (rtx, mut env) = a.tx_to(path);
    rtx.retransmit_after_t3(now, &mut env);
}
