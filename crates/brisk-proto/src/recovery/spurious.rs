//! Spurious T3 expirations: detected from the SACKs that follow, and undone.
//!
//! A T3 expiry collapses cwnd to one PMDCS and doubles RTO (RFC 9260 6.3.3
//! E1, E2). When the data was not lost, only late (a delayed SACK, a queue),
//! both cost the next burst dearly for nothing. Detection, for the chunk that
//! was earliest outstanding at the expiry (E):
//!
//! - **acknowledged before it was sent again** (F-RTO's question, RFC 5682
//!   2, answered for SCTP): a SACK newly acknowledges E while no copy of E has
//!   left since the expiry. It can only answer a copy sent before the expiry,
//!   so E had arrived and the expiry was spurious;
//! - **duplicate TSN** (RFC 3708 3): the peer reports E as a duplicate while
//!   exactly one copy of E has left since the expiry, so the peer already held
//!   E when that copy arrived. (Two copies since, such as a retransmission and
//!   a redundant bundle, could make the duplicate between them: no evidence.)
//!
//! Timing alone is no evidence: a SACK that comes back sooner after the
//! retransmission than some RTT measured before may still answer it, because
//! the chunks that could be timed (sent once, 6.3.1 C5) queued behind their
//! burst or waited for a delayed SACK (seen in Fig. 7 at 500 kbit/s: every
//! clean sample was 47 ms, the retransmission's round trip 15 ms).
//!
//! The response is Eifel's (RFC 4015 3.2, as Linux "undoes" a recovery): cwnd
//! and ssthresh go back to at least what they were before the expiry, and the
//! RTO back-off of the episode is withdrawn.

use crate::serial::Tsn;

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
    tsn: Tsn,
    before: Before,
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

/// The detector: the open episode, if any.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SpuriousTimeouts {
    episode: Option<Episode>,
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
    /// T3 expired with `tsn` earliest outstanding. Only the first expiry of an
    /// episode is remembered: undoing returns to the state before all of them.
    pub fn on_expiry(&mut self, tsn: Tsn, before: Before) {
        if self.episode.is_none() {
            self.episode = Some(Episode {
                tsn,
                before,
                copies: 0,
            });
        }
    }

    /// DATA chunk `tsn` left again (a retransmission or a bundled copy).
    pub fn on_sent(&mut self, tsn: Tsn) {
        if let Some(e) = &mut self.episode
            && e.tsn == tsn
        {
            e.copies += 1;
        }
    }

    /// The TSN whose SACK decides the open episode, if any.
    pub fn watched(&self) -> Option<Tsn> {
        self.episode.map(|e| e.tsn)
    }

    /// A SACK arrived with this evidence about the watched TSN.
    pub fn on_sack(&mut self, e: Evidence) -> Verdict {
        let Some(episode) = self.episode else {
            return Verdict::Open;
        };
        let before_resent = episode.copies == 0;
        if (e.duplicate && episode.copies == 1) || (e.acked && before_resent) {
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

    /// T3 expired with TSN 7 earliest.
    fn detector() -> SpuriousTimeouts {
        let mut d = SpuriousTimeouts::default();
        d.on_expiry(Tsn(7), BEFORE);
        d.on_sent(Tsn(8));
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
    fn a_chunk_acknowledged_before_it_was_sent_again_was_never_lost() {
        let mut d = detector();
        assert_eq!(d.on_sack(ACKED), Verdict::Spurious(BEFORE));
        assert_eq!(d.watched(), None, "decided once");
    }

    #[test]
    fn a_chunk_acknowledged_after_its_retransmission_is_no_evidence_of_either() {
        // However soon the SACK comes, it may answer the retransmission.
        let mut d = detector();
        d.on_sent(Tsn(7));
        assert_eq!(d.on_sack(ACKED), Verdict::Genuine);
    }

    #[test]
    fn a_duplicate_report_proves_it_only_while_one_copy_was_sent_since() {
        let mut d = detector();
        d.on_sent(Tsn(7));
        assert_eq!(d.on_sack(DUPLICATE), Verdict::Spurious(BEFORE));
        // A retransmission and a redundant copy: the duplicate may be theirs.
        let mut d = detector();
        d.on_sent(Tsn(7));
        d.on_sent(Tsn(7));
        assert_eq!(d.on_sack(DUPLICATE), Verdict::Open);
        // No copy since: a duplicate of copies sent before the expiry.
        let mut d = detector();
        assert_eq!(d.on_sack(DUPLICATE), Verdict::Open);
    }

    #[test]
    fn sacks_that_say_nothing_about_the_watched_chunk_leave_the_episode_open() {
        let mut d = detector();
        assert_eq!(d.on_sack(NOTHING), Verdict::Open);
        // A second expiry keeps the state from before the first.
        d.on_expiry(
            Tsn(7),
            Before {
                cwnd: 1172,
                ssthresh: 4688,
                backoff: 1,
            },
        );
        assert_eq!(d.on_sack(ACKED), Verdict::Spurious(BEFORE));
    }
}
