//! The ack-reach floor: T3 is never armed to expire before the SACK of the
//! earliest outstanding chunk can be back (ours; issue 10).
//!
//! RFC 7765's restart runs T3 from the *send* time of the earliest outstanding
//! chunk. With a thin RTO.Min of 100 or 200 ms that can be sooner than its
//! SACK returns: the chunk waited at the bottleneck behind the rest of its
//! burst, and the receiver may hold the SACK for its delayed-SACK timer
//! (RFC 9260 6.2) unless the chunk carried the I bit (RFC 7053). A T3 expiry
//! then re-sends data that arrived and collapses cwnd for nothing.
//!
//! What the sender knows when a SACK arrives at `now`, having acknowledged the
//! packet sent at `htna_sent` (6.2.1's HTNA): the earliest outstanding chunk E
//! left `max(0, E.last_sent - htna_sent)` after that packet, so it reaches the
//! receiver that much later, plus its own place in the bottleneck queue; the
//! peer then SACKs at once (I bit honoured) or within its SACK delay. So
//!
//! ```text
//! floor = max(0, E.last_sent - htna_sent) + n * spacing + ack delay + 4 * RTTVAR
//! ```
//!
//! where `n` (at most RRTHRESH) is the packets still outstanding, each
//! arriving one bottleneck `spacing` after the one before (the interval the
//! SACKs of back-to-back packets come back at, measured by [`AckSpacing`]),
//! and 4 RTTVAR is the variation C3 already allows for in RTO. The restart
//! (or R3) timeout is raised to the floor, never lowered, and never beyond
//! RTO plus the peer's SACK delay: a chunk sent long after the acknowledged
//! one (after an idle spell) must not push T3 out by that spell.

use std::time::Duration;

use crate::time::Time;

/// What the floor is computed from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AckReach {
    /// When the SACK arrived.
    pub now: Time,
    /// When the newest chunk it acknowledged (HTNA) was last sent.
    pub htna_sent: Time,
    /// When the earliest outstanding chunk was last sent.
    pub earliest_sent: Time,
    /// Its last transmission carried the I bit and the peer honours it.
    pub immediate: bool,
    /// The longest the peer may delay a SACK otherwise.
    pub peer_sack_delay: Duration,
    /// RTTVAR (RFC 9260 6.3.1).
    pub rttvar: Duration,
    /// Packets still outstanding, E's among them.
    pub packets_outstanding: u32,
    /// The bottleneck's spacing of one packet, as the SACKs show it.
    pub spacing: Duration,
    /// The RTO in force (back-off included).
    pub rto: Duration,
}

/// The least time from `now` until T3 may expire.
pub fn floor(r: &AckReach) -> Duration {
    let behind = r.earliest_sent.since(r.htna_sent);
    let delay = if r.immediate {
        Duration::ZERO
    } else {
        r.peer_sack_delay
    };
    let queue = r.spacing.saturating_mul(
        r.packets_outstanding
            .min(crate::recovery::rto_restart::RRTHRESH),
    );
    behind + queue + delay + r.rttvar.saturating_mul(4)
}

/// The interval at which the bottleneck delivers one packet, as measured from
/// SACKs of packets that were in flight together: two SACKs `dt` apart, the
/// later acknowledging `n` packets all sent before the earlier arrived,
/// show the link took `dt / n` per packet (the ack clock).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AckSpacing {
    last_sack: Option<Time>,
    per_packet: Duration,
}

impl AckSpacing {
    /// A SACK arrived at `now` newly acknowledging `packets` packets, the
    /// newest of them sent at `htna_sent`.
    pub fn on_sack(&mut self, now: Time, packets: u32, htna_sent: Time) {
        if packets == 0 {
            return;
        }
        if let Some(last) = self.last_sack
            && htna_sent <= last
        {
            self.per_packet = now.since(last) / packets;
        }
        self.last_sack = Some(now);
    }

    /// The latest measurement (zero before one).
    pub fn per_packet(&self) -> Duration {
        self.per_packet
    }
}

/// The T3 timeout to restart with: `timeout` (R3, or RFC 7765's restart),
/// raised to the floor when it would expire before the SACK can be back.
pub fn apply(timeout: Duration, r: &AckReach) -> Duration {
    let ceiling = r.rto.saturating_add(r.peer_sack_delay);
    timeout.max(floor(r).min(ceiling))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reach(earliest_ms: u64, immediate: bool) -> AckReach {
        AckReach {
            now: Time::from_millis(1005),
            htna_sent: Time::from_millis(930),
            earliest_sent: Time::from_millis(earliest_ms),
            immediate,
            peer_sack_delay: Duration::from_millis(40),
            rttvar: Duration::from_millis(5),
            packets_outstanding: 1,
            spacing: Duration::ZERO,
            rto: Duration::from_millis(100),
        }
    }

    #[test]
    fn the_floor_waits_for_a_delayed_sack_of_the_last_packet_of_a_burst() {
        let ms = Duration::from_millis;
        // Sent with the acknowledged packet: the peer's 40 ms SACK delay and
        // 4 RTTVAR (20 ms).
        assert_eq!(floor(&reach(930, false)), ms(60));
        // RFC 7765 would restart at 100 ms less 75 ms of age: 25 ms, before
        // the SACK can be back.
        assert_eq!(apply(ms(25), &reach(930, false)), ms(60));
        assert_eq!(apply(ms(108), &reach(930, false)), ms(108), "never lowered");
        // Sent 10 ms after the acknowledged packet: 10 ms more.
        assert_eq!(floor(&reach(940, false)), ms(70));
        // The I bit, honoured: no SACK delay to wait for.
        assert_eq!(floor(&reach(930, true)), ms(20));
        // Sent before the acknowledged packet: nothing to add for it.
        assert_eq!(floor(&reach(900, false)), ms(60));
        // Two packets still to cross a bottleneck of 4.1 ms per packet.
        let queued = AckReach {
            packets_outstanding: 2,
            spacing: Duration::from_micros(4100),
            ..reach(930, false)
        };
        assert_eq!(floor(&queued), Duration::from_micros(68_200));
        // Sent 5 s after the acknowledged packet (an idle spell): the floor
        // stops at RTO plus the SACK delay.
        assert_eq!(floor(&reach(5930, false)), ms(5060));
        assert_eq!(apply(ms(25), &reach(5930, false)), ms(140));
    }

    #[test]
    fn the_spacing_is_measured_from_sacks_of_packets_in_flight_together() {
        let mut s = AckSpacing::default();
        // A burst sent at 0: SACKs of two packets each, 8.2 ms apart.
        s.on_sack(Time::from_millis(60), 2, Time::ZERO);
        assert_eq!(s.per_packet(), Duration::ZERO, "one SACK shows no interval");
        s.on_sack(Time::from_micros(68_200), 2, Time::ZERO);
        assert_eq!(s.per_packet(), Duration::from_micros(4100));
        // A packet sent after the last SACK: the interval is the sender's own
        // pause, not the link's spacing.
        s.on_sack(Time::from_millis(300), 1, Time::from_millis(250));
        assert_eq!(s.per_packet(), Duration::from_micros(4100));
        // A SACK that acknowledged nothing new is no sample.
        s.on_sack(Time::from_millis(301), 0, Time::ZERO);
        assert_eq!(s.per_packet(), Duration::from_micros(4100));
    }
}
