//! Early Retransmit (RFC 5827), the segment-based variant of 3.2: when fewer
//! than four segments are outstanding and no new segment can be sent, the
//! duplicate ACK threshold drops to oseg - 1 (without SACK), or loss recovery
//! starts once oseg - 1 segments are SACKed (with SACK).

/// RFC 5827 3.2 (1): Early Retransmit applies below four outstanding segments.
const OSEG_LIMIT: u64 = 4;

/// What the sender looks like when a duplicate ACK arrives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Outstanding {
    /// Segments outstanding (oseg).
    pub segments: u64,
    /// Of those, SACKed.
    pub sacked: u64,
    /// Duplicate ACKs counted so far.
    pub dupacks: u32,
    /// SACK was negotiated.
    pub sack: bool,
    /// Unsent data exists and the peer's window lets a segment out
    /// (RFC 5827 3.2 (2): then new data, not Early Retransmit, draws ACKs).
    pub can_send_new: bool,
}

/// Whether Early Retransmit starts loss recovery now.
pub fn fires(o: &Outstanding) -> bool {
    if o.can_send_new || o.segments >= OSEG_LIMIT || o.segments < 2 {
        return false;
    }
    let er_thresh = o.segments - 1;
    if o.sack {
        // RFC 5827 3.2: with SACK, once oseg - 1 segments are SACKed.
        o.sacked >= er_thresh
    } else {
        // RFC 5827 3.2: without SACK, ER_thresh = oseg - 1 duplicate ACKs.
        u64::from(o.dupacks) >= er_thresh
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn o(segments: u64, sacked: u64, dupacks: u32, sack: bool, can_send_new: bool) -> Outstanding {
        Outstanding {
            segments,
            sacked,
            dupacks,
            sack,
            can_send_new,
        }
    }

    #[test]
    fn fires_on_oseg_minus_one_below_four_segments_only() {
        assert!(fires(&o(2, 1, 1, true, false)));
        assert!(!fires(&o(3, 1, 1, true, false)));
        assert!(fires(&o(3, 2, 2, true, false)));
        assert!(!fires(&o(4, 3, 3, true, false)), "dupthresh territory");
        assert!(!fires(&o(2, 1, 1, true, true)), "new data can be sent");
        assert!(fires(&o(3, 0, 2, false, false)));
        assert!(!fires(&o(1, 0, 1, false, false)));
    }
}
