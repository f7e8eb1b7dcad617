//! Spurious T3 expirations: detected from the SACKs that follow, and undone.
//!
//! A T3 expiry collapses cwnd to one PMDCS and doubles RTO (RFC 9260 6.3.3
//! E1, E2). When the data was not lost, only late (a delayed SACK, a queue),
//! both cost the next burst dearly for nothing. Detection, for the chunk that
//! was earliest outstanding at the expiry (E):
//!
//! - **duplicate TSN** (RFC 3708 3): the peer reports E as a duplicate, so it
//!   held E when E's retransmission arrived;
//! - **acknowledged too soon** (F-RTO's question, RFC 5682 2, answered for
//!   SCTP from the RTT instead of from new data): a SACK acknowledges E while E
//!   has not been sent again since the expiry, or sooner after the
//!   retransmission than the smallest RTT ever measured. That SACK cannot
//!   answer the retransmission: the original arrived.
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
    /// When the first expiry fired.
    at: Time,
    before: Before,
}

/// What a SACK tells about E.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Evidence {
    /// The SACK reports E among its duplicate TSNs.
    pub duplicate: bool,
    /// The SACK newly acknowledges E (cumulatively or by a gap block).
    pub acked: bool,
    /// When E was last sent before this SACK.
    pub last_sent: Time,
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
    /// E was acknowledged by its retransmission: the loss was real.
    Genuine,
}

impl SpuriousTimeouts {
    /// A clean RTT measurement (6.3.1 C5: never of a retransmitted chunk).
    pub fn on_rtt(&mut self, rtt: Duration) {
        self.min_rtt = Some(self.min_rtt.map_or(rtt, |m| m.min(rtt)));
    }

    /// T3 expired with `tsn` earliest outstanding. Only the first expiry of an
    /// episode is remembered: undoing returns to the state before all of them.
    pub fn on_expiry(&mut self, tsn: u32, now: Time, before: Before) {
        if self.episode.is_none() {
            self.episode = Some(Episode {
                tsn,
                at: now,
                before,
            });
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
        let not_resent = e.last_sent < episode.at;
        let too_soon = self.min_rtt.is_some_and(|min| now.since(e.last_sent) < min);
        if e.duplicate || (e.acked && (not_resent || too_soon)) {
            self.episode = None;
            return Verdict::Spurious(episode.before);
        }
        if e.acked {
            self.episode = None;
            return Verdict::Genuine;
        }
        Verdict::Open
    }

    /// Everything is acknowledged or the association restarts recovery from
    /// scratch: no episode is open any more.
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

    fn detector() -> SpuriousTimeouts {
        let mut d = SpuriousTimeouts::default();
        d.on_rtt(Duration::from_millis(54));
        d.on_rtt(Duration::from_millis(70));
        d.on_expiry(7, Time::from_millis(1038), BEFORE);
        d
    }

    fn acked(last_sent_ms: u64) -> Evidence {
        Evidence {
            duplicate: false,
            acked: true,
            last_sent: Time::from_millis(last_sent_ms),
        }
    }

    #[test]
    fn a_sack_sooner_than_the_smallest_rtt_after_the_retransmission_proves_the_expiry_spurious() {
        // Retransmitted at 1038; acknowledged 11.5 ms later, but no round
        // trip took less than 54 ms: the SACK answers the original.
        let mut d = detector();
        assert_eq!(
            d.on_sack(Time::from_micros(1_049_500), acked(1038)),
            Verdict::Spurious(BEFORE)
        );
        assert_eq!(d.watched(), None, "decided once");
    }

    #[test]
    fn a_sack_a_round_trip_after_the_retransmission_is_the_retransmission_s() {
        let mut d = detector();
        assert_eq!(
            d.on_sack(Time::from_millis(1100), acked(1038)),
            Verdict::Genuine
        );
    }

    #[test]
    fn a_chunk_acknowledged_before_it_was_sent_again_was_never_lost() {
        let mut d = detector();
        assert_eq!(
            d.on_sack(Time::from_millis(1200), acked(930)),
            Verdict::Spurious(BEFORE)
        );
    }

    #[test]
    fn a_duplicate_report_proves_it_even_without_a_new_ack() {
        let mut d = detector();
        let dup = Evidence {
            duplicate: true,
            acked: false,
            last_sent: Time::from_millis(1038),
        };
        assert_eq!(
            d.on_sack(Time::from_millis(1200), dup),
            Verdict::Spurious(BEFORE)
        );
    }

    #[test]
    fn sacks_that_say_nothing_about_the_watched_chunk_leave_the_episode_open() {
        let mut d = detector();
        let nothing = Evidence {
            duplicate: false,
            acked: false,
            last_sent: Time::from_millis(1038),
        };
        assert_eq!(d.on_sack(Time::from_millis(1045), nothing), Verdict::Open);
        // A second expiry keeps the state from before the first.
        d.on_expiry(
            7,
            Time::from_millis(1238),
            Before {
                cwnd: 1172,
                ssthresh: 4688,
                backoff: 1,
            },
        );
        assert_eq!(
            d.on_sack(Time::from_millis(1240), acked(930)),
            Verdict::Spurious(BEFORE)
        );
    }
}
