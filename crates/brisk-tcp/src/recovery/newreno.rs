//! NewReno (RFC 6582): fast recovery for a connection without SACK.
//!
//! Entering: ssthresh per RFC 5681 eq. 4, cwnd = ssthresh + the duplicate
//! ACKs seen (3*SMSS with DupThresh 3), and the first unacknowledged segment
//! is retransmitted. Each further duplicate ACK inflates cwnd by one SMSS. A
//! partial ACK retransmits the next hole and deflates cwnd; a full ACK ends
//! recovery with cwnd = ssthresh.

use crate::cc::CongestionControl;

/// What a cumulative ACK that advanced during NewReno recovery means.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AckKind {
    /// Covers the recovery point ("recover"): recovery ends (RFC 6582 3.2 step 3).
    Full,
    /// Below it: the next hole is lost too (RFC 6582 3.2 step 5).
    Partial,
}

/// Classifies an ACK whose new SND.UNA is `una` against the recovery point
/// (SND.NXT when recovery began; RFC 6582's recover + 1).
pub fn classify(una: u64, recovery_point: u64) -> AckKind {
    if una >= recovery_point {
        AckKind::Full
    } else {
        AckKind::Partial
    }
}

/// RFC 6582 3.2 step 2 and RFC 5681 3.2 step 3: cwnd on entry.
pub fn enter(cc: &mut CongestionControl, dupacks: u32) {
    cc.cwnd_to_ssthresh();
    cc.inflate(dupacks);
}

/// RFC 6582 3.2 step 3, full acknowledgment, option (2): cwnd = ssthresh.
pub fn on_full_ack(cc: &mut CongestionControl) {
    cc.cwnd_to_ssthresh();
}

/// RFC 6582 3.2 step 5, partial acknowledgment: deflate by the data acked,
/// plus one SMSS back if at least one SMSS was acked.
pub fn on_partial_ack(cc: &mut CongestionControl, acked_bytes: u64, acked_segs: u64) {
    cc.deflate(acked_bytes, acked_segs);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::TcpConfig;

    #[test]
    fn a_full_ack_leaves_cwnd_at_ssthresh() {
        let mut cc = CongestionControl::new(&TcpConfig::rfc(), 1000);
        cc.reduce_ssthresh(10_000, 10);
        enter(&mut cc, 3);
        assert_eq!(cc.cwnd(), 8000);
        on_partial_ack(&mut cc, 1000, 1);
        assert_eq!(cc.cwnd(), 8000);
        assert_eq!(classify(10, 11), AckKind::Partial);
        assert_eq!(classify(11, 11), AckKind::Full);
        on_full_ack(&mut cc);
        assert_eq!(cc.cwnd(), 5000);
    }
}
