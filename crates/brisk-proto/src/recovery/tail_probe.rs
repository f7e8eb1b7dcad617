//! Tail loss probe, adapted from RFC 8985 7: Early Retransmit cannot help when
//! the last packet of a burst is lost, because nothing follows it to draw a
//! SACK. A probe timer, shorter than T3, sends new data if there is any, or the
//! highest outstanding chunk again (cause `TailLossProbe`), so that the
//! peer's SACK reveals the loss to fast retransmit. One probe at a time; then
//! T3. The probe itself does not reduce cwnd.
//!
//! With RACK-TLP (`Config::rack`) the probe asks for an immediate SACK (the
//! I bit, RFC 7053), so its timeout need not wait out the peer's delayed
//! SACK: [`rack_pto`] is SRTT plus a small margin, and the delayed-SACK
//! allowance returns only against a peer seen to ignore the I bit
//! ([`IBitWatch`]). RFC 8985 7.4: a probe that repaired a loss is a loss.

use std::time::Duration;

use crate::serial::Tsn;
use crate::time::Time;

/// RFC 8985 7.2: when no SRTT is known yet, the PTO is one second.
const PTO_WITHOUT_SRTT: Duration = Duration::from_secs(1);

/// Whether a probe is unanswered (the probe timer is `TimerKind::TailLossProbe`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TailProbe {
    /// A probe went out and no SACK has acknowledged new data since.
    pub probing: bool,
    /// RFC 8985 7.4: the retransmission a probe sent, until a SACK tells
    /// whether it repaired a loss.
    pub episode: Option<ProbeEpisode>,
}

/// A probe that retransmitted a chunk (RFC 8985 7.4 `TLP.end_seq`,
/// `TLP.is_retrans`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProbeEpisode {
    pub tsn: Tsn,
    pub sent: Time,
    /// A SACK acknowledged the chunk before the probe could have drawn one:
    /// the original arrived.
    pub acked_early: bool,
}

/// What a SACK says of a probe's retransmission (RFC 8985 7.4).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProbeVerdict {
    /// Nothing yet.
    Open,
    /// The peer reported the probe a duplicate: the original had arrived, and
    /// its SACK was late (delayed, or lost).
    Needless,
    /// The probe's SACK acknowledged the chunk and no duplicate: the probe
    /// repaired a loss, which calls for a congestion response.
    RepairedLoss,
    /// Over without a verdict (acknowledged early, then no duplicate report).
    Closed,
}

impl ProbeEpisode {
    /// RFC 8985 7.4, for SCTP: a SACK at `now` reports `dups` and has
    /// `newly_acked` the chunk (cumulatively or by gap). A SACK sooner than
    /// `min_rtt` after the probe left was drawn by the original, which
    /// therefore arrived.
    pub fn on_sack(
        &mut self,
        now: Time,
        dups: &[u32],
        newly_acked: bool,
        min_rtt: Duration,
    ) -> ProbeVerdict {
        let own_sack = now.since(self.sent) >= min_rtt;
        if dups.contains(&self.tsn.0) {
            ProbeVerdict::Needless
        } else if newly_acked && own_sack {
            ProbeVerdict::RepairedLoss
        } else if newly_acked {
            self.acked_early = true;
            ProbeVerdict::Open
        } else if self.acked_early && own_sack {
            ProbeVerdict::Closed
        } else {
            ProbeVerdict::Open
        }
    }
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

/// The PTO of RACK-TLP for SCTP: SRTT + max(SRTT/4, 2 ms), plus
/// `ignored_i_bit` (the peer's delayed-SACK allowance) when a single packet
/// is outstanding and the peer was seen to ignore the I bit.
///
/// RFC 8985 7.2 waits 2 SRTT because a TCP receiver may delay the ACK of the
/// tail; a probe that sets the I bit (RFC 7053 4.1) is answered at once, so
/// its SACK is due one SRTT after it left. The margin covers the variation
/// of that round trip as RACK's reordering window does (min_RTT/4), and as
/// Early Retransmit's delay does (RFC 5827 6: max(SRTT/4, 2 ms)); an RTTVAR
/// margin would shrink to nothing on a steady path and grow to RTO-like
/// values on a noisy one, where a probe costs one small packet anyway.
pub fn rack_pto(
    srtt: Option<Duration>,
    packets_outstanding: u32,
    ignored_i_bit: Option<Duration>,
) -> Duration {
    let Some(srtt) = srtt else {
        return PTO_WITHOUT_SRTT;
    };
    let base = (srtt + rack_pto_margin(Some(srtt))).max(MIN_PTO);
    match ignored_i_bit {
        Some(delay) if packets_outstanding == 1 => base + delay,
        _ => base,
    }
}

/// The least margin of [`rack_pto`] over SRTT.
pub const RACK_PTO_MARGIN: Duration = Duration::from_millis(2);

/// The margin of [`rack_pto`] over SRTT: max(SRTT/4, 2 ms).
pub fn rack_pto_margin(srtt: Option<Duration>) -> Duration {
    srtt.map_or(RACK_PTO_MARGIN, |s| (s / 4).max(RACK_PTO_MARGIN))
}

/// When RACK-TLP's probe is due: `pto` after the latest packet still in
/// flight left (`latest_sent`), since its SACK is due SRTT after it left, not
/// after the SACK that re-arms the timer; and never sooner than `margin`
/// from `now`. Ours: RFC 8985 7.2 times the PTO from the re-arming SACK,
/// which for a burst's lost tail adds the time between the tail's send and
/// the SACK of the packet before it, as RFC 9260's T3 restart does (RFC 7765
/// removes it for T3 as this does for the probe).
pub fn rack_probe_at(now: Time, latest_sent: Time, pto: Duration, margin: Duration) -> Time {
    (latest_sent + pto).max(now + margin)
}

/// Whether the peer answers the I bit (RFC 7053) at once, judged from SACKs
/// that newly acknowledge one packet sent once with the I bit and carry no
/// gap block or duplicate (nothing else would make the peer SACK at once):
/// one that comes later than min_RTT plus half the peer's delayed-SACK
/// allowance, or a probe found needless, counts against it; one on time
/// for it. Two against in a row, and the peer is taken to ignore the bit
/// until one comes on time.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct IBitWatch {
    late: u8,
    ignored: bool,
}

/// Late SACKs in a row that show the peer ignoring the I bit.
const LATE_IN_A_ROW: u8 = 2;

impl IBitWatch {
    /// The peer is taken to ignore the I bit.
    pub fn ignored(&self) -> bool {
        self.ignored
    }

    /// A SACK for one I-bit packet took `rtt`; `min_rtt` and the peer's
    /// delayed-SACK allowance `peer_delay` tell whether it was late.
    pub fn on_sample(&mut self, rtt: Duration, min_rtt: Duration, peer_delay: Duration) {
        if rtt >= min_rtt + peer_delay / 2 {
            self.on_late();
        } else {
            self.late = 0;
            self.ignored = false;
        }
    }

    /// A late SACK, or a needless probe (its original had arrived and the
    /// SACK for it had not come back by the PTO).
    pub fn on_late(&mut self) {
        self.late = self.late.saturating_add(1);
        if self.late >= LATE_IN_A_ROW {
            self.ignored = true;
        }
    }
}

impl TailProbe {
    /// When to (re)arm the probe: `now + pto`, unless a probe is unanswered
    /// or T3 would fire first (the probe never comes after T3); `None` stops it.
    pub fn deadline(&self, now: Time, pto: Duration, t3: Option<Time>) -> Option<Time> {
        self.deadline_at(now + pto, t3)
    }

    /// [`Self::deadline`] for a probe due `at`.
    pub fn deadline_at(&self, at: Time, t3: Option<Time>) -> Option<Time> {
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
    fn the_rack_pto_is_srtt_plus_a_quarter_or_2_ms_and_the_sack_delay_only_against_an_ignoring_peer()
     {
        let ms = Duration::from_millis;
        assert_eq!(
            rack_pto(Some(ms(30)), 1, None),
            Duration::from_micros(37_500)
        );
        assert_eq!(rack_pto(Some(ms(4)), 1, None), ms(6), "the 2 ms floor");
        assert_eq!(rack_pto(Some(ms(20)), 1, Some(ms(200))), ms(225));
        assert_eq!(
            rack_pto(Some(ms(20)), 2, Some(ms(200))),
            ms(25),
            "a second packet draws the SACK"
        );
        assert_eq!(rack_pto(None, 1, None), ms(1000));
    }

    #[test]
    fn the_rack_probe_is_due_a_pto_after_the_latest_packet_left_but_not_at_once() {
        let ms = Duration::from_millis;
        let t = Time::from_millis;
        // The tail left at 3 ms; the SACK of the packet before it at 32 ms.
        assert_eq!(rack_probe_at(t(32), t(3), ms(37), ms(7)), t(40));
        // A late SACK: the probe still waits the margin.
        assert_eq!(rack_probe_at(t(50), t(3), ms(37), ms(7)), t(57));
    }

    #[test]
    fn two_late_sacks_in_a_row_show_a_peer_ignoring_the_i_bit_and_one_on_time_clears_it() {
        let ms = Duration::from_millis;
        let mut w = IBitWatch::default();
        w.on_sample(ms(220), ms(20), ms(200));
        assert!(!w.ignored(), "one late SACK may be a queue");
        w.on_sample(ms(130), ms(20), ms(200));
        assert!(w.ignored());
        w.on_sample(ms(25), ms(20), ms(200));
        assert!(!w.ignored());
        w.on_late();
        w.on_sample(ms(21), ms(20), ms(200));
        w.on_late();
        assert!(!w.ignored(), "not in a row");
    }

    #[test]
    fn a_probe_is_needless_on_a_duplicate_and_repaired_a_loss_when_its_own_sack_acks_it() {
        let ms = Duration::from_millis;
        let t = |v| Time::from_millis(v);
        let ep = ProbeEpisode {
            tsn: Tsn(7),
            sent: t(100),
            acked_early: false,
        };
        let verdict =
            |mut e: ProbeEpisode, now, dups: &[u32], acked| e.on_sack(t(now), dups, acked, ms(20));
        assert_eq!(verdict(ep, 120, &[7], true), ProbeVerdict::Needless);
        assert_eq!(verdict(ep, 120, &[], false), ProbeVerdict::Open);
        assert_eq!(verdict(ep, 120, &[], true), ProbeVerdict::RepairedLoss);
        // Acknowledged 5 ms after the probe: the original's SACK.
        let mut e = ep;
        assert_eq!(e.on_sack(t(105), &[], true, ms(20)), ProbeVerdict::Open);
        assert_eq!(e.on_sack(t(110), &[], false, ms(20)), ProbeVerdict::Open);
        assert_eq!(e.on_sack(t(121), &[], false, ms(20)), ProbeVerdict::Closed);
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
