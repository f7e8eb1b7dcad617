//! Delivery rate samples (draft-cheng-iccrg-delivery-rate-estimation-02):
//! how fast the path delivered data over the interval a SACK closes.
//!
//! The draft keeps, for every packet, the connection's delivery state when
//! it was sent. Brisk keeps that state in a small ring of send records
//! instead, at most [`RECORDS`] of them and at most one per `spacing`: a
//! SACK is measured against the newest record sent no later than the chunk
//! it newly acknowledged last (`newest_acked_sent_at`). The record may be a
//! little older than that chunk; the sample then spans a little more time
//! and a little more data, which only smooths it. The memory per path is
//! fixed (a few hundred bytes), whatever the flight.

use std::time::Duration;

use crate::time::Time;

/// Send records kept per path.
pub const RECORDS: usize = 8;

/// The delivery state when a chunk was sent (the draft's per-packet
/// P.delivered, P.delivered_time, P.first_sent_time, P.is_app_limited).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct SendRecord {
    sent_at: Time,
    delivered: u64,
    delivered_time: Time,
    first_sent_time: Time,
    app_limited: bool,
}

/// One delivery rate sample (the draft's rs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RateSample {
    /// Bytes delivered over `interval`.
    pub delivered: u64,
    /// Zero when the sample measures nothing (an interval shorter than the
    /// min RTT); its `prior_delivered` still counts rounds (draft 3.3).
    pub interval: Duration,
    /// Bytes delivered when the measured data was sent (P.delivered): the
    /// round-trip counter compares it with the round's end.
    pub prior_delivered: u64,
    /// The data was sent while the sender had nothing more to send: the
    /// sample may be below what the path can do (draft 3.3).
    pub app_limited: bool,
}

impl RateSample {
    /// The sample measures a rate.
    pub fn measured(&self) -> bool {
        !self.interval.is_zero()
    }

    /// Bytes per second.
    pub fn rate(&self) -> u64 {
        if !self.measured() {
            return 0;
        }
        let us = self.interval.as_micros();
        u64::try_from(u128::from(self.delivered) * 1_000_000 / us).unwrap_or(u64::MAX)
    }
}

/// The connection's delivery state (the draft's C.delivered,
/// C.delivered_time, C.first_sent_time, C.app_limited) and the send records.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeliveryRate {
    delivered: u64,
    delivered_time: Time,
    first_sent_time: Time,
    /// Draft 3.4: while non-zero, the `delivered` count up to which data sent
    /// now is application-limited.
    app_limited_until: u64,
    /// Oldest first; `len` of them valid.
    records: [SendRecord; RECORDS],
    len: usize,
}

impl Default for DeliveryRate {
    fn default() -> Self {
        let zero = SendRecord {
            sent_at: Time::ZERO,
            delivered: 0,
            delivered_time: Time::ZERO,
            first_sent_time: Time::ZERO,
            app_limited: false,
        };
        Self {
            delivered: 0,
            delivered_time: Time::ZERO,
            first_sent_time: Time::ZERO,
            app_limited_until: 0,
            records: [zero; RECORDS],
            len: 0,
        }
    }
}

impl DeliveryRate {
    /// Bytes delivered (acknowledged, cumulatively or by gap) so far.
    pub fn delivered(&self) -> u64 {
        self.delivered
    }

    /// Send records held (for tests of the bound).
    #[cfg(test)]
    pub fn records(&self) -> usize {
        self.len
    }

    pub fn is_app_limited(&self) -> bool {
        self.app_limited_until != 0
    }

    /// Draft 3.2 (upon sending): data left now with `flight_after` in flight
    /// (`bytes` of it this chunk). A record is taken unless the newest one is
    /// younger than `spacing` (or as old as now) and agrees on
    /// app-limitedness, or the ring is full (the older records then serve,
    /// see the module docs).
    pub fn on_sent(&mut self, now: Time, bytes: u32, flight_after: u32, spacing: Duration) {
        if flight_after <= bytes {
            // Draft 3.2: the flight was empty: the intervals start now.
            self.first_sent_time = now;
            self.delivered_time = now;
        }
        let app_limited = self.is_app_limited();
        if let Some(last) = self.len.checked_sub(1).map(|i| self.records[i])
            && last.app_limited == app_limited
            && (last.sent_at == now || now.since(last.sent_at) < spacing || self.len == RECORDS)
        {
            return;
        }
        if self.len == RECORDS {
            // Full, and the app-limited state changed: the newest record
            // takes the new state (it is the closest to the data sent now).
            self.len -= 1;
        }
        self.records[self.len] = SendRecord {
            sent_at: now,
            delivered: self.delivered,
            delivered_time: self.delivered_time,
            first_sent_time: self.first_sent_time,
            app_limited,
        };
        self.len += 1;
    }

    /// Draft 3.3 (upon receiving an ACK): `bytes` newly delivered; the
    /// newest of them was sent at `newest_sent`. Returns the sample, unless
    /// no record is old enough; an interval shorter than `min_rtt` measures
    /// nothing (draft 3.3: such samples overestimate, from ACK compression).
    pub fn on_ack(
        &mut self,
        now: Time,
        bytes: u32,
        newest_sent: Option<Time>,
        min_rtt: Option<Duration>,
    ) -> Option<RateSample> {
        self.delivered += u64::from(bytes);
        self.delivered_time = now;
        // Draft 3.4: the app-limited bubble ends once its data is delivered.
        if self.app_limited_until != 0 && self.delivered > self.app_limited_until {
            self.app_limited_until = 0;
        }
        let newest_sent = newest_sent?;
        if bytes == 0 {
            return None;
        }
        let i = (0..self.len)
            .rev()
            .find(|&i| self.records[i].sent_at <= newest_sent)?;
        let r = self.records[i];
        // Records older than the one used serve no later SACK: later SACKs
        // acknowledge data sent no earlier.
        self.records.copy_within(i..self.len, 0);
        self.len -= i;
        self.first_sent_time = newest_sent;
        let send_elapsed = r.sent_at.since(r.first_sent_time);
        let ack_elapsed = now.since(r.delivered_time);
        let mut interval = send_elapsed.max(ack_elapsed);
        if min_rtt.is_some_and(|m| interval < m) {
            interval = Duration::ZERO;
        }
        Some(RateSample {
            delivered: self.delivered - r.delivered,
            interval,
            prior_delivered: r.delivered,
            app_limited: r.app_limited,
        })
    }

    /// Draft 3.4: the sender has nothing to send and `flight` in flight:
    /// data sent until that is delivered is application-limited.
    pub fn mark_app_limited(&mut self, flight: u32) {
        self.app_limited_until = (self.delivered + u64::from(flight)).max(1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(ms: u64) -> Time {
        Time::from_millis(ms)
    }

    #[test]
    fn a_steady_flow_measures_its_delivery_rate() {
        // 1000 bytes every 10 ms, each acknowledged 100 ms later: 100 kB/s.
        let mut d = DeliveryRate::default();
        let mut samples = Vec::new();
        for i in 0..40u64 {
            let now = t(i * 10);
            if i >= 10 {
                let s = d.on_ack(now, 1000, Some(t((i - 10) * 10)), None);
                samples.extend(s);
            }
            d.on_sent(now, 1000, 10_000, Duration::ZERO);
        }
        let last = samples.last().expect("samples");
        assert!((95_000..=105_000).contains(&last.rate()), "{}", last.rate());
        assert!(!last.app_limited);
    }

    #[test]
    fn records_stay_bounded_and_old_records_still_measure() {
        let mut d = DeliveryRate::default();
        for i in 0..1000u64 {
            d.on_sent(t(i), 1000, 1000 * (i as u32 + 1), Duration::ZERO);
        }
        assert_eq!(d.records(), RECORDS);
        // The first chunk is acknowledged: the first record measures it.
        let s = d.on_ack(t(1100), 1000, Some(t(0)), None).expect("sample");
        assert_eq!(s.prior_delivered, 0);
        // A chunk sent after every record's time still finds the newest.
        assert!(d.on_ack(t(1101), 1000, Some(t(999)), None).is_some());
        assert_eq!(d.records(), 1, "older records were released");
    }

    #[test]
    fn no_sample_without_a_record_and_no_rate_below_min_rtt() {
        let mut d = DeliveryRate::default();
        d.on_sent(t(100), 1000, 1000, Duration::ZERO);
        assert_eq!(d.on_ack(t(200), 1000, Some(t(50)), None), None);
        d.on_sent(t(300), 1000, 1000, Duration::ZERO);
        let s = d
            .on_ack(t(310), 1000, Some(t(300)), Some(Duration::from_millis(50)))
            .expect("a sample for the round count");
        assert!(
            !s.measured(),
            "an interval below min_rtt is ACK compression"
        );
    }

    #[test]
    fn data_sent_while_app_limited_gives_app_limited_samples_until_delivered() {
        let mut d = DeliveryRate::default();
        d.on_sent(t(0), 1000, 1000, Duration::ZERO);
        d.mark_app_limited(1000);
        d.on_sent(t(10), 1000, 2000, Duration::ZERO);
        let first = d.on_ack(t(100), 1000, Some(t(0)), None).expect("sample");
        assert!(!first.app_limited);
        let second = d.on_ack(t(110), 1000, Some(t(10)), None).expect("sample");
        assert!(second.app_limited);
        assert!(!d.is_app_limited(), "the bubble is delivered");
    }
}
