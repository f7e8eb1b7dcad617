//! Fast retransmit and fast recovery (RFC 9260 7.2.4): miss indications by the
//! Highest TSN Newly Acknowledged, a configurable threshold, each chunk at most
//! once, and one cwnd reduction per recovery period.

use crate::serial::le32;
use crate::tx::outstanding::{Outstanding, SackOutcome};
use crate::wire::chunk::Sack;

/// Fast recovery state of an association.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FastRecovery {
    /// The highest outstanding TSN when recovery began; recovery ends when the
    /// cumulative ack reaches it.
    exit_point: Option<u32>,
}

/// What one SACK asked of fast retransmit.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FastRetransmitOutcome {
    /// TSNs marked for fast retransmission by this SACK.
    pub marked: Vec<u32>,
    /// Fast recovery began with this SACK: cwnd is to be reduced (7.2.3) and the
    /// marked chunks retransmitted at once, one packet regardless of cwnd.
    pub entered_recovery: bool,
}

impl FastRecovery {
    pub fn in_recovery(&self) -> bool {
        self.exit_point.is_some()
    }

    pub fn exit_point(&self) -> Option<u32> {
        self.exit_point
    }

    /// 6.2.1: leave fast recovery once the cumulative ack reaches the exit point.
    pub fn on_cum_ack(&mut self, cum: u32) {
        if self.exit_point.is_some_and(|exit| le32(exit, cum)) {
            self.exit_point = None;
        }
    }

    /// Enters fast recovery if not in it (7.2.4): the exit point is the highest
    /// TSN outstanding. Returns whether it entered.
    pub fn enter(&mut self, highest_outstanding: u32) -> bool {
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

    /// Counts miss indications for the SACK just applied and marks chunks that
    /// reached `threshold`; with `again`, also chunks fast-retransmitted
    /// before whose retransmission was lost (`lost_retransmission_detection`).
    pub fn on_sack(
        &mut self,
        sack: &Sack,
        outcome: &SackOutcome,
        outstanding: &mut Outstanding,
        threshold: u32,
        again: bool,
    ) -> FastRetransmitOutcome {
        let mut result = FastRetransmitOutcome::default();
        if sack.gap_blocks.is_empty() && !outcome.reneged {
            // No TSN is reported missing.
            return result;
        }
        // 7.2.4: missing TSNs below the HTNA; in fast recovery, a SACK that
        // advances the cumulative ack counts every TSN it reports missing.
        let limit = if self.in_recovery() && outcome.cum_advanced {
            outstanding.highest_gap_acked()
        } else {
            outcome.htna
        };
        let Some(limit) = limit else {
            return result;
        };
        // A lost retransmission is judged only on evidence whose send time is
        // certain: the HTNA chunk sent once (a SACK drawn by an earlier copy of
        // a chunk resent since would report a retransmission missing that
        // has not had time to arrive).
        let again = again && outcome.htna_sent_once;
        result.marked = outstanding.count_misses(limit, threshold, outcome.htna_sent, again);
        if !result.marked.is_empty() {
            // Enter fast recovery; the exit point is the highest outstanding TSN.
            result.entered_recovery = self.enter(outstanding.next_tsn().wrapping_sub(1));
        }
        result
    }
}
