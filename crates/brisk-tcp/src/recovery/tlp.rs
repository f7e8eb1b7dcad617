//! Tail Loss Probe (RFC 8985 7): when the ACK clock may have stopped, a
//! probe after PTO (about two RTTs) draws an ACK whose SACK lets RACK or
//! fast recovery repair a tail loss, instead of waiting for the RTO.

use std::time::Duration;

use brisk_proto::timer::Timer;

use crate::Time;

/// RFC 8985 7.2: the PTO before an RTT has been measured.
pub const INITIAL_PTO: Duration = Duration::from_secs(1);

/// The TLP state of one connection (RFC 8985 7.1).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Tlp {
    /// TLP.end_seq: SND.NXT when the outstanding probe was sent.
    pub end_seq: Option<u64>,
    /// TLP.is_retrans: the probe resent old data.
    pub is_retrans: bool,
    /// FlightSize (bytes, segments) when the probe was sent, for the cwnd
    /// reduction if it repaired a loss.
    pub flight_at_probe: (u64, u64),
    /// An RTT was sampled since the last probe (7.3 condition 2).
    pub rtt_sampled: bool,
    /// The PTO timer.
    pub timer: Timer,
}

/// RFC 8985 7.2 TLP_calc_PTO: 2 SRTT, plus the worst-case delayed ACK with
/// one segment in flight; 1 s without SRTT; never later than the RTO.
pub fn pto(
    now: Time,
    srtt: Option<Duration>,
    segments_in_flight: u64,
    max_ack_delay: Duration,
    rto_deadline: Option<Time>,
) -> Time {
    let pto = match srtt {
        Some(s) if segments_in_flight == 1 => s * 2 + max_ack_delay,
        Some(s) => s * 2,
        None => INITIAL_PTO,
    };
    let at = now + pto;
    rto_deadline.map_or(at, |rto| at.min(rto))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pto_is_two_srtt_plus_the_ack_delay_for_one_segment_capped_by_rto() {
        let ms = Duration::from_millis;
        let now = Time::from_millis(100);
        assert_eq!(
            pto(now, Some(ms(20)), 3, ms(200), None),
            Time::from_millis(140)
        );
        assert_eq!(
            pto(now, Some(ms(20)), 1, ms(200), None),
            Time::from_millis(340)
        );
        assert_eq!(
            pto(now, Some(ms(20)), 1, ms(200), Some(Time::from_millis(300))),
            Time::from_millis(300)
        );
        assert_eq!(pto(now, None, 1, ms(200), None), Time::from_millis(1100));
    }
}
