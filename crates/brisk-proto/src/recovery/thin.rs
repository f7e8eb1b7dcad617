//! Thin-stream mode (seed 001, 4.1 to 4.4): while fewer than `thin_threshold`
//! packets are outstanding, the stream cannot produce the SACKs that normal
//! loss recovery needs, and each of these switches helps on its own:
//! linear timeouts, fast retransmit on the first miss indication, a lower
//! RTO.Min, the RTO restart correction, aggressive and redundant bundling, and
//! the I bit (ours) so a standard receiver answers at once.

use std::time::Duration;

use crate::config::Config;
use crate::recovery::rto::RtoEstimator;

/// Whether the stream is thin: fewer than the threshold of packets outstanding.
pub fn is_thin(cfg: &Config, packets_outstanding: u32) -> bool {
    packets_outstanding < cfg.thin_threshold
}

/// The miss-indication threshold: 1 while thin with `thin_fast_retransmit`
/// (seed 001 4.3), else the configured one.
pub fn dupthresh(cfg: &Config, thin: bool) -> u32 {
    if thin && cfg.thin_fast_retransmit {
        1
    } else {
        cfg.fast_retransmit_threshold
    }
}

/// The RTO in force: while thin, the thin RTO.Min applies (seed 001 4.2). It
/// only ever lowers the bound: a thin RTO.Min above RTO.Min changes nothing.
pub fn rto(cfg: &Config, thin: bool, estimator: &RtoEstimator) -> Duration {
    match cfg.thin_rto_min {
        Some(min) if thin => estimator.rto_with_min(min.min(cfg.rto_min)),
        _ => estimator.rto(),
    }
}

/// Whether a T3 expiry backs off: not while thin with linear timeouts
/// (seed 001 4.2.2).
pub fn backs_off(cfg: &Config, thin: bool) -> bool {
    !(thin && cfg.thin_linear_timeouts)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thin_switches_apply_only_while_thin_and_only_when_on() {
        let ms = Duration::from_millis;
        let mut cfg = Config::rfc9260();
        assert!(is_thin(&cfg, 3) && !is_thin(&cfg, 4));
        assert_eq!(dupthresh(&cfg, true), 3);
        cfg.thin_fast_retransmit = true;
        assert_eq!((dupthresh(&cfg, true), dupthresh(&cfg, false)), (1, 3));
        let mut e = RtoEstimator::new(ms(1000), ms(1000), ms(60_000));
        e.on_measurement(ms(20));
        assert_eq!(rto(&cfg, true, &e), ms(1000));
        cfg.thin_rto_min = Some(ms(200));
        assert_eq!(
            (rto(&cfg, true, &e), rto(&cfg, false, &e)),
            (ms(200), ms(1000))
        );
        cfg.thin_rto_min = Some(ms(1500));
        assert_eq!(rto(&cfg, true, &e), ms(1000), "never raises RTO.Min");
        cfg.thin_rto_min = Some(ms(200));
        assert!(backs_off(&cfg, true));
        cfg.thin_linear_timeouts = true;
        assert!(!backs_off(&cfg, true) && backs_off(&cfg, false));
    }
}
