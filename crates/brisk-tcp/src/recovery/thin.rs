//! Linux's thin-stream options (Petlund et al.; Linux 2.6.34 to 4.x): a
//! stream with fewer than four segments outstanding cannot draw the three
//! duplicate ACKs fast retransmit needs, so
//!
//! - `thin_dupack` (tcp_thin_dupack) fast-retransmits on the first
//!   duplicate ACK, and
//! - `thin_linear_timeouts` (tcp_thin_linear_timeouts) does not double RTO
//!   for the first six consecutive expirations (TCP_THIN_LINEAR_RETRIES).
//!
//! Linux also requires SACK and no unsent data for thin_dupack, and calls a
//! stream in its initial slow start not thin; we follow the plain rule
//! (fewer than four segments outstanding) as the lab specifies.

use crate::config::TcpConfig;

/// Linux's tcp_stream_is_thin: fewer than four packets outstanding.
pub const THIN_LIMIT: u64 = 4;
/// Linux's TCP_THIN_LINEAR_RETRIES.
pub const LINEAR_RETRIES: u32 = 6;

/// Whether the stream is thin.
pub fn is_thin(segments_outstanding: u64) -> bool {
    segments_outstanding < THIN_LIMIT
}

/// tcp_thin_dupack: a thin stream fast-retransmits on its first duplicate ACK.
pub fn dupack_fires(cfg: &TcpConfig, segments_outstanding: u64, dupacks: u32) -> bool {
    cfg.thin_dupack && is_thin(segments_outstanding) && dupacks >= 1
}

/// Whether the `consecutive`-th expiry in a row (1-based) doubles RTO:
/// not while thin with linear timeouts, for the first six.
pub fn backs_off(cfg: &TcpConfig, segments_outstanding: u64, consecutive: u32) -> bool {
    !(cfg.thin_linear_timeouts && is_thin(segments_outstanding) && consecutive <= LINEAR_RETRIES)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thin_switches_apply_only_when_on_and_thin() {
        let mut cfg = TcpConfig::rfc();
        assert!(!dupack_fires(&cfg, 1, 1));
        assert!(backs_off(&cfg, 1, 1));
        cfg.thin_dupack = true;
        cfg.thin_linear_timeouts = true;
        assert!(dupack_fires(&cfg, 3, 1) && !dupack_fires(&cfg, 4, 1) && !dupack_fires(&cfg, 3, 0));
        assert!(!backs_off(&cfg, 3, 6) && backs_off(&cfg, 3, 7) && backs_off(&cfg, 4, 1));
    }
}
