//! Spurious T3 expirations: detected from the SACKs that follow, and undone.
//!
//! A T3 expiry collapses cwnd to one PMDCS and doubles RTO (RFC 9260 6.3.3
//! E1, E2). When the data was not lost, only late (a delayed SACK, a queue),
//! both cost the next burst dearly for nothing. Detection, for the chunk that
//! was earliest outstanding at the expiry (E):
//!
//! - **duplicate TSN** (RFC 3708 3): the peer reports E as a duplicate while E
//!   was sent at most once since the expiry, so it held E when that copy
//!   arrived (two copies since, such as a retransmission and a redundant
//!   bundle, could make the duplicate between them: no evidence);
//! - **acknowledged too soon** (F-RTO's question, RFC 5682 2, answered for
//!   SCTP from the RTT instead of from new data): a SACK acknowledges E while E
//!   has not been sent again since the expiry, or sooner after its first copy
//!   since than half the smallest RTT ever measured. That SACK cannot answer
//!   a copy sent after the expiry: one sent before it arrived. (Half, not the
//!   whole: the timed chunks rode in larger, queued packets, so a lone
//!   retransmission may cross a little faster than any RTT measured.)
//!
//! The response is Eifel's (RFC 4015 3.2, as Linux "undoes" a recovery): cwnd
//! and ssthresh go back to at least what they were before the expiry, and the
//! RTO back-off of the episode is withdrawn.

use std::time::Duration;

use crate::time::Time;

/// What the sender was before the expiry, to return to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Before {
    pub cwnd: u32,
    pub ssthresh: u32,
    pub backoff: u32,
}

/// One episode of T3 expiries that may prove spurious.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Episode {
    /// The earliest outstanding TSN at the first expiry.
    tsn: u32,
    before: Before,
    /// When E was first sent again after the expiry.
    resent: Option<Time>,
    /// Copies of E sent since the expiry.
    copies: u32,
}

/// What a SACK tells about E.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Evidence {
    /// The SACK reports E among its duplicate TSNs.
    pub duplicate: bool,
    /// The SACK newly acknowledges E (cumulatively or by a gap block).
    pub acked: bool,
}

/// The detector: an open episode, and the smallest RTT measured.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SpuriousTimeouts {
    episode: Option<Episode>,
    min_rtt: Option<Duration>,
}

/// What [`SpuriousTimeouts::on_sack`] decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// No episode, or no evidence yet.
    Open,
    /// The expiry was spurious: restore these.
    Spurious(Before),
    /// E was acknowledged by a copy sent after the expiry: the loss was real.
    Genuine,
}

impl SpuriousTimeouts {
    /// A clean RTT measurement (6.3.1 C5: never of a retransmitted chunk).
    pub fn on_rtt(&mut self, rtt: Duration) {
        self.min_rtt = Some(self.min_rtt.map_or(rtt, |m| m.min(rtt)));
    }

    /// T3 expired with `tsn` earliest outstanding. Only the first expiry of an
    /// episode is remembered: undoing returns to the state before all of them.
    pub fn on_expiry(&mut self, tsn: u32, before: Before) {
        if self.episode.is_none() {
            self.episode = Some(Episode {
                tsn,
                before,
                resent: None,
                copies: 0,
            });
        }
    }

    /// DATA chunk `tsn` left at `now` (a retransmission or a bundled copy).
    pub fn on_sent(&mut self, tsn: u32, now: Time) {
        if let Some(e) = &mut self.episode
            && e.tsn == tsn
        {
            e.resent.get_or_insert(now);
            e.copies += 1;
        }
    }

    /// The TSN whose SACK decides the open episode, if any.
    pub fn watched(&self) -> Option<u32> {
        self.episode.map(|e| e.tsn)
    }

    /// A SACK arrived at `now` with this evidence about the watched TSN.
    pub fn on_sack(&mut self, now: Time, e: Evidence) -> Verdict {
        let Some(episode) = self.episode else {
            return Verdict::Open;
        };
        let too_soon = match episode.resent {
            None => true,
            Some(at) => self.min_rtt.is_some_and(|min| now.since(at) < min / 2),
        };
        if (e.duplicate && episode.copies <= 1) || (e.acked && too_soon) {
            self.episode = None;
            return Verdict::Spurious(episode.before);
        }
        if e.acked {
            self.episode = None;
            return Verdict::Genuine;
        }
        Verdict::Open
    }

    /// Everything is acknowledged or abandoned: no episode is open any more.
    pub fn close(&mut self) {
        self.episode = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const BEFORE: Before = Before {
        cwnd: 6000,
        ssthresh: 9000,
        backoff: 0,
    };

    /// Smallest RTT 54 ms; T3 expired with TSN 7 earliest, resent at 1038 ms.
    fn detector() -> SpuriousTimeouts {
        let mut d = SpuriousTimeouts::default();
        d.on_rtt(Duration::from_millis(54));
        d.on_rtt(Duration::from_millis(70));
        d.on_expiry(7, BEFORE);
        d.on_sent(8, Time::from_millis(1037));
        d.on_sent(7, Time::from_millis(1038));
        d
    }

    const ACKED: Evidence = Evidence {
        duplicate: false,
        acked: true,
    };
    const DUPLICATE: Evidence = Evidence {
        duplicate: true,
        acked: false,
    };
    const NOTHING: Evidence = Evidence {
        duplicate: false,
        acked: false,
    };

    #[test]
    fn a_sack_sooner_than_the_smallest_rtt_after_the_retransmission_proves_the_expiry_spurious() {
        // Acknowledged 11.5 ms after the retransmission, but no round trip
        // took less than 54 ms (nor half of it): the SACK answers the original.
        let mut d = detector();
        assert_eq!(
            d.on_sack(Time::from_micros(1_049_500), ACKED),
            Verdict::Spurious(BEFORE)
        );
        assert_eq!(d.watched(), None, "decided once");
    }

    #[test]
    fn a_sack_a_round_trip_after_the_retransmission_is_the_retransmission_s() {
        let mut d = detector();
        assert_eq!(d.on_sack(Time::from_millis(1100), ACKED), Verdict::Genuine);
    }

    #[test]
    fn a_retransmission_acknowledged_a_little_faster_than_any_rtt_measured_is_not_spurious() {
        // 50 ms after the retransmission: smaller than the 54 ms measured,
        // but more than half of it.
        let mut d = detector();
        assert_eq!(d.on_sack(Time::from_millis(1088), ACKED), Verdict::Genuine);
    }

    #[test]
    fn a_later_redundant_copy_does_not_make_the_retransmission_s_sack_look_early() {
        // Bundled again at 1080: the SACK at 1100 is still a round trip after
        // the first copy since the expiry.
        let mut d = detector();
        d.on_sent(7, Time::from_millis(1080));
        assert_eq!(d.on_sack(Time::from_millis(1100), ACKED), Verdict::Genuine);
    }

    #[test]
    fn a_chunk_acknowledged_before_it_was_sent_again_was_never_lost() {
        let mut d = SpuriousTimeouts::default();
        d.on_rtt(Duration::from_millis(54));
        d.on_expiry(7, BEFORE);
        assert_eq!(
            d.on_sack(Time::from_millis(1200), ACKED),
            Verdict::Spurious(BEFORE)
        );
    }

    #[test]
    fn a_duplicate_report_proves_it_only_while_one_copy_was_sent_since() {
        let mut d = detector();
        assert_eq!(
            d.on_sack(Time::from_millis(1200), DUPLICATE),
            Verdict::Spurious(BEFORE)
        );
        // A retransmission and a redundant copy: the duplicate may be theirs.
        let mut d = detector();
        d.on_sent(7, Time::from_millis(1080));
        assert_eq!(d.on_sack(Time::from_millis(1200), DUPLICATE), Verdict::Open);
    }

    #[test]
    fn sacks_that_say_nothing_about_the_watched_chunk_leave_the_episode_open() {
        let mut d = detector();
        assert_eq!(d.on_sack(Time::from_millis(1045), NOTHING), Verdict::Open);
        // A second expiry keeps the state from before the first.
        d.on_expiry(
            7,
            Before {
                cwnd: 1172,
                ssthresh: 4688,
                backoff: 1,
            },
        );
        assert_eq!(
            d.on_sack(Time::from_millis(1060), ACKED),
            Verdict::Spurious(BEFORE)
        );
    }
}
