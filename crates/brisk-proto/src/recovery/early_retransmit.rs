//! Early Retransmit (RFC 5827; seed 000, 2.2 and 2.3): lowers the fast
//! retransmit threshold when too little is outstanding for the normal
//! threshold ever to be reached.
//!
//! - Byte-based (RFC 5827 3.1): with ownd < 4 SMSS outstanding and no new data
//!   to send, fast retransmit once ownd - SMSS bytes are SACKed. Small messages
//!   never get there (seed 000, 2.3: five 200-byte messages never have a whole
//!   SMSS SACKed).
//! - Packet-based (RFC 5827 3.2, seed 000's modification): with oseg < 4
//!   packets outstanding and no new data to send, fast retransmit once oseg - 1
//!   of them are SACKed: the one packet left holds the lost chunks, which are
//!   treated as having reached the miss-indication threshold.

use std::time::Duration;

use crate::config::EarlyRetransmit;

/// What the sender looked like just before and just after a SACK was applied.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Window {
    /// Packets outstanding before the SACK (oseg).
    pub packets_before: u32,
    /// Packets still outstanding after it.
    pub packets_after: u32,
    /// Bytes sent and not cumulatively acknowledged before the SACK (ownd).
    pub bytes_before: u32,
    /// Of those, the bytes still not acknowledged in any way after it.
    pub bytes_after: u32,
}

/// RFC 5827 2: Early Retransmit applies only while fewer than four segments
/// are outstanding.
const OSEG_LIMIT: u32 = 4;

/// Whether Early Retransmit fires on this SACK. `pmdcs` is the SMSS;
/// `new_data_ready`: unsent data exists and the peer's window allows it
/// (RFC 5827 3: then new data, not Early Retransmit, draws the SACKs).
pub fn fires(mode: EarlyRetransmit, w: &Window, pmdcs: u32, new_data_ready: bool) -> bool {
    if new_data_ready {
        return false;
    }
    match mode {
        EarlyRetransmit::Off => false,
        // RFC 5827 3.2: oseg - 1 of the oseg packets have been SACKed.
        EarlyRetransmit::Packets => {
            w.packets_before < OSEG_LIMIT
                && w.packets_before >= 2
                && w.packets_before.saturating_sub(w.packets_after) >= w.packets_before - 1
        }
        // RFC 5827 3.1: ownd - SMSS bytes have been SACKed.
        EarlyRetransmit::Bytes => {
            let sacked = w.bytes_before.saturating_sub(w.bytes_after);
            w.bytes_before < OSEG_LIMIT * pmdcs
                && w.bytes_before > pmdcs
                && sacked >= w.bytes_before - pmdcs
        }
    }
}

/// RFC 5827 6 (reordering mitigation): wait max(SRTT/4, 2 ms) before an early
/// retransmission, in case the "lost" packet was only reordered.
pub fn delay(srtt: Option<Duration>) -> Duration {
    (srtt.unwrap_or(Duration::ZERO) / 4).max(Duration::from_millis(2))
}

#[cfg(test)]
mod tests {
    use super::*;

    const SMSS: u32 = 1440;

    fn w(packets_before: u32, packets_after: u32, bytes_before: u32, bytes_after: u32) -> Window {
        Window {
            packets_before,
            packets_after,
            bytes_before,
            bytes_after,
        }
    }

    #[test]
    fn packet_based_fires_when_all_but_one_of_fewer_than_four_packets_are_sacked() {
        // Two 200-byte packets out, the first lost, a SACK reports the second.
        let two = w(2, 1, 2 * 216, 216);
        assert!(fires(EarlyRetransmit::Packets, &two, SMSS, false));
        // Byte-based cannot: ownd is below one SMSS.
        assert!(!fires(EarlyRetransmit::Bytes, &two, SMSS, false));
        // Three out, only one SACKed so far: not yet.
        assert!(!fires(
            EarlyRetransmit::Packets,
            &w(3, 2, 648, 432),
            SMSS,
            false
        ));
        assert!(fires(
            EarlyRetransmit::Packets,
            &w(3, 1, 648, 216),
            SMSS,
            false
        ));
        // Four or more out: the normal threshold can work.
        assert!(!fires(
            EarlyRetransmit::Packets,
            &w(4, 1, 864, 216),
            SMSS,
            false
        ));
        // New data ready to go: it will draw the SACKs instead.
        assert!(!fires(EarlyRetransmit::Packets, &two, SMSS, true));
        assert!(!fires(EarlyRetransmit::Off, &two, SMSS, false));
    }

    #[test]
    fn byte_based_fires_once_ownd_minus_smss_bytes_are_sacked() {
        // Three full packets out (ownd = 3 SMSS < 4 SMSS), the first lost.
        let ownd = 3 * SMSS;
        assert!(!fires(
            EarlyRetransmit::Bytes,
            &w(3, 2, ownd, 2 * SMSS),
            SMSS,
            false
        ));
        assert!(fires(
            EarlyRetransmit::Bytes,
            &w(3, 1, ownd, SMSS),
            SMSS,
            false
        ));
    }

    #[test]
    fn the_reordering_delay_is_a_quarter_srtt_but_at_least_2_ms() {
        assert_eq!(
            delay(Some(Duration::from_millis(40))),
            Duration::from_millis(10)
        );
        assert_eq!(
            delay(Some(Duration::from_millis(4))),
            Duration::from_millis(2)
        );
        assert_eq!(delay(None), Duration::from_millis(2));
    }
}
