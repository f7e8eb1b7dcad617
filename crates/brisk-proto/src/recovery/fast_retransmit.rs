//! Fast retransmit and fast recovery (RFC 9260 7.2.4): miss indications by the
//! Highest TSN Newly Acknowledged, a configurable threshold, each chunk at most
//! once, and one cwnd reduction per recovery period.

use crate::serial::Tsn;

/// Fast recovery state of an association.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FastRecovery {
    /// The highest outstanding TSN when recovery began; recovery ends when the
    /// cumulative ack reaches it.
    exit_point: Option<Tsn>,
}

impl FastRecovery {
    pub fn in_recovery(&self) -> bool {
        self.exit_point.is_some()
    }

    pub fn exit_point(&self) -> Option<Tsn> {
        self.exit_point
    }

    /// 6.2.1: leave fast recovery once the cumulative ack reaches the exit point.
    pub fn on_cum_ack(&mut self, cum: Tsn) {
        if self
            .exit_point
            .is_some_and(|exit| exit.is_at_or_before(cum))
        {
            self.exit_point = None;
        }
    }

    /// Enters fast recovery if not in it (7.2.4): the exit point is the highest
    /// TSN outstanding. Returns whether it entered.
    pub fn enter(&mut self, highest_outstanding: Tsn) -> bool {
        if self.in_recovery() {
            return false;
        }
        self.exit_point = Some(highest_outstanding);
        true
    }

    /// Leaves fast recovery (a T3 expiry starts slow start instead).
    pub fn reset(&mut self) {
        self.exit_point = None;
    }

    /// 7.2.4: the TSN below which chunks still in flight are reported
    /// missing by a SACK that reports any: its HTNA, or in fast recovery,
    /// when the SACK advances the cumulative ack, every TSN it reports
    /// missing (up to the highest it gap-acknowledges).
    pub fn miss_limit(
        &self,
        cum_advanced: bool,
        htna: Option<Tsn>,
        highest_gap_acked: impl FnOnce() -> Option<Tsn>,
    ) -> Option<Tsn> {
        if self.in_recovery() && cum_advanced {
            highest_gap_acked()
        } else {
            htna
        }
    }
}
