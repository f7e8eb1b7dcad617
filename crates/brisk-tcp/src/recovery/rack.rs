//! RACK (RFC 8985 6): time-based loss detection. A segment is lost when a
//! segment sent after it has been delivered (cumulatively acked or SACKed)
//! and more than RACK.rtt + RACK.reo_wnd has passed since it was sent; one
//! still inside that window arms the reordering timer.

use std::time::Duration;

use brisk_proto::timer::Timer;

use crate::Time;
use crate::config::TcpConfig;
use crate::events::RetransmitCause;
use crate::recovery::scoreboard::{Scoreboard, Sent};

/// The RACK state of one connection (RFC 8985 6.1).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Rack {
    /// RACK.xmit_ts and RACK.end_seq: the most recently sent segment delivered.
    latest: Option<(Time, u64)>,
    /// RACK.rtt: the RTT of that segment.
    rtt: Duration,
    /// RACK.min_RTT.
    min_rtt: Option<Duration>,
    /// RACK.fack: the highest end delivered.
    fack: u64,
    /// RACK.reordering_seen.
    reordering_seen: bool,
    /// The reordering timer (6.3).
    pub timer: Timer,
}

/// RACK_sent_after (6.2): t1 later than t2, or the same time and a higher end.
fn sent_after(t1: Time, seq1: u64, t2: Time, seq2: u64) -> bool {
    t1 > t2 || (t1 == t2 && seq1 > seq2)
}

impl Rack {
    /// Steps 1 to 3 of RFC 8985 6.2 for one newly delivered segment.
    pub fn on_delivered(&mut self, now: Time, seg: &Sent) {
        let rtt = now.since(seg.last_sent);
        // Step 2: a retransmitted segment acked sooner than min_RTT after its
        // retransmission was probably acked for its original transmission.
        if seg.transmissions > 1 && self.min_rtt.is_some_and(|m| rtt < m) {
            return;
        }
        self.min_rtt = Some(self.min_rtt.map_or(rtt, |m| m.min(rtt)));
        self.rtt = rtt;
        let newer = match self.latest {
            None => true,
            Some((t, end)) => sent_after(seg.last_sent, seg.end, t, end),
        };
        if newer {
            self.latest = Some((seg.last_sent, seg.end));
        }
        // Step 3: a never-retransmitted segment delivered below RACK.fack was reordered.
        if seg.end < self.fack && seg.transmissions == 1 {
            self.reordering_seen = true;
        }
        self.fack = self.fack.max(seg.end);
    }

    /// Step 4: the reordering window.
    pub fn reo_wnd(
        &self,
        cfg: &TcpConfig,
        in_recovery: bool,
        sacked_segments: usize,
        srtt: Option<Duration>,
    ) -> Duration {
        if let Some(fixed) = cfg.rack_reo_wnd {
            return fixed;
        }
        if !self.reordering_seen
            && (in_recovery || sacked_segments >= usize::try_from(cfg.dupthresh).unwrap_or(3))
        {
            return Duration::ZERO;
        }
        let quarter = self.min_rtt.unwrap_or(Duration::ZERO) / 4;
        srtt.map_or(quarter, |s| quarter.min(s))
    }

    /// Step 5: marks lost (cause `Rack`) each segment sent before the
    /// latest delivered one whose time is up; returns how many were marked
    /// and, if some are still inside the window, when the first of them is due.
    pub fn detect_loss(
        &self,
        now: Time,
        board: &mut Scoreboard,
        reo_wnd: Duration,
    ) -> (usize, Option<Duration>) {
        let Some((xmit_ts, end_seq)) = self.latest else {
            return (0, None);
        };
        let (mut marked, mut timeout) = (0, None::<Duration>);
        for i in 0..board.len() {
            let Some(seg) = board.get_mut(i) else { break };
            // Already SACKed, or already lost and waiting to be resent.
            if seg.sacked || (seg.lost && !seg.rtx_out) {
                continue;
            }
            if !sent_after(xmit_ts, end_seq, seg.last_sent, seg.end) {
                continue;
            }
            let due = seg.last_sent + self.rtt + reo_wnd;
            if due <= now {
                seg.mark_lost(RetransmitCause::Rack);
                marked += 1;
            } else {
                let remaining = due.since(now);
                timeout = Some(timeout.map_or(remaining, |t| t.max(remaining)));
            }
        }
        (marked, timeout)
    }

    /// RACK.min_RTT, once measured.
    pub fn min_rtt(&self) -> Option<Duration> {
        self.min_rtt
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seg(start: u64, sent_ms: u64) -> Sent {
        Sent {
            start,
            end: start + 100,
            fin: false,
            first_sent: Time::from_millis(sent_ms),
            last_sent: Time::from_millis(sent_ms),
            transmissions: 1,
            sacked: false,
            lost: false,
            rtx_out: false,
            cause: RetransmitCause::Rto,
        }
    }

    #[test]
    fn a_segment_sent_before_a_delivered_one_is_lost_after_rtt_plus_reo_wnd() {
        let mut board = Scoreboard::default();
        board.push(seg(1, 0));
        board.push(seg(101, 4));
        let mut rack = Rack::default();
        let now = Time::from_millis(44);
        let delivered = board.apply_sack(101, 201);
        rack.on_delivered(now, &delivered[0]);
        let cfg = TcpConfig::rfc();
        let reo = rack.reo_wnd(&cfg, false, 1, Some(Duration::from_millis(40)));
        assert_eq!(reo, Duration::from_millis(10), "min_RTT / 4");
        // Due at 0 + 40 + 10 = 50 ms: six to go.
        assert_eq!(
            rack.detect_loss(now, &mut board, reo),
            (0, Some(Duration::from_millis(6)))
        );
        assert_eq!(
            rack.detect_loss(Time::from_millis(50), &mut board, reo),
            (1, None)
        );
        assert_eq!(board.next_lost(), Some(0));
        assert_eq!(rack.reo_wnd(&cfg, true, 1, None), Duration::ZERO);
    }
}
