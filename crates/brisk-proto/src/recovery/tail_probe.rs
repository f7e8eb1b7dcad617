//! Tail loss probe, adapted from RFC 8985 7: Early Retransmit cannot help when
//! the last packet of a burst is lost, because nothing follows it to draw a
//! SACK. A probe timer, shorter than T3, sends new data if there is any, or the
//! highest outstanding chunk again (cause `TailLossProbe`), so that the
//! peer's SACK reveals the loss to fast retransmit. One probe at a time; then
//! T3. The probe itself does not reduce cwnd.

use std::time::Duration;

use crate::time::Time;

/// RFC 8985 7.2: when no SRTT is known yet, the PTO is one second.
const PTO_WITHOUT_SRTT: Duration = Duration::from_secs(1);

/// Whether a probe is unanswered (the probe timer is `TimerKind::TailLossProbe`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TailProbe {
    /// A probe went out and no SACK has acknowledged new data since.
    pub probing: bool,
}

/// The shortest PTO: the clock's granularity (as RFC 9002 6.1.2's
/// kGranularity), so that an RTT sample of 0 never arms a probe due at once.
pub const MIN_PTO: Duration = Duration::from_millis(1);

/// RFC 8985 7.2: PTO = 2 SRTT, plus the peer's delayed-SACK allowance when a
/// single packet is outstanding (its SACK may wait for a second one); never
/// below [`MIN_PTO`].
pub fn pto(srtt: Option<Duration>, packets_outstanding: u32, delayed_sack: Duration) -> Duration {
    let base = srtt.map_or(PTO_WITHOUT_SRTT, |s| (2 * s).max(MIN_PTO));
    if packets_outstanding == 1 {
        base + delayed_sack
    } else {
        base
    }
}

impl TailProbe {
    /// When to (re)arm the probe: `now + pto`, unless a probe is unanswered
    /// or T3 would fire first (the probe never comes after T3); `None` stops it.
    pub fn deadline(&self, now: Time, pto: Duration, t3: Option<Time>) -> Option<Time> {
        let at = now + pto;
        if self.probing || t3.is_none_or(|t3| at >= t3) {
            None
        } else {
            Some(at)
        }
    }

    /// A SACK acknowledged new data: the probe, if any, has done its job.
    pub fn on_new_ack(&mut self) {
        self.probing = false;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pto_is_two_srtt_plus_the_delayed_sack_for_a_single_packet() {
        let ms = Duration::from_millis;
        assert_eq!(pto(Some(ms(20)), 3, ms(200)), ms(40));
        assert_eq!(pto(Some(ms(20)), 1, ms(200)), ms(240));
        assert_eq!(pto(None, 2, ms(200)), ms(1000));
    }

    #[test]
    fn the_probe_is_never_armed_past_t3_or_while_one_is_unanswered() {
        let ms = Duration::from_millis;
        let mut p = TailProbe::default();
        let t3 = Some(Time::from_millis(1000));
        assert_eq!(
            p.deadline(Time::ZERO, ms(40), t3),
            Some(Time::from_millis(40))
        );
        assert_eq!(
            p.deadline(Time::ZERO, ms(1000), t3),
            None,
            "T3 would fire first"
        );
        p.probing = true;
        assert_eq!(p.deadline(Time::ZERO, ms(40), t3), None);
        p.on_new_ack();
        assert!(p.deadline(Time::ZERO, ms(40), t3).is_some());
    }
}
