//! RTO restart (RFC 7765; seed 000 4.1; seed 001 4.2.1 "timer restart
//! correction").
//!
//! RFC 9260 6.3.2 R3 restarts T3 with a whole RTO when a SACK acknowledges the
//! earliest outstanding chunk, so the next loss waits RTO plus the time since
//! that chunk was sent. With few packets outstanding and nothing new to send,
//! RTO restart subtracts the age of the earliest outstanding chunk instead.

use std::time::Duration;

/// RFC 7765 3: restart only with fewer than this many packets outstanding.
pub const RRTHRESH: u32 = 4;

/// The T3 timeout to restart with: RTO less the age of the earliest outstanding
/// chunk when that leaves something, else RTO (RFC 7765 3). The RTO value
/// itself, back-off included, is not changed.
pub fn timeout(rto: Duration, earliest_age: Duration) -> Duration {
    match rto.checked_sub(earliest_age) {
        Some(left) if !left.is_zero() => left,
        _ => rto,
    }
}

/// Whether RTO restart applies: enabled, fewer than RRTHRESH packets
/// outstanding, and no unsent data ready to go.
pub fn applies(enabled: bool, packets_outstanding: u32, unsent_ready: bool) -> bool {
    enabled && packets_outstanding < RRTHRESH && !unsent_ready
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_restart_subtracts_the_age_of_the_earliest_chunk() {
        let ms = Duration::from_millis;
        assert_eq!(timeout(ms(100), ms(30)), ms(70));
        assert_eq!(
            timeout(ms(100), ms(100)),
            ms(100),
            "nothing left: a whole RTO"
        );
        assert_eq!(timeout(ms(100), ms(250)), ms(100));
        assert!(applies(true, 3, false));
        assert!(!applies(true, 4, false) && !applies(true, 1, true) && !applies(false, 1, false));
    }
}
