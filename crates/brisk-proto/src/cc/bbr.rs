//! A BBR v1-like controller (draft-cardwell-iccrg-bbr-congestion-control-00;
//! Linux tcp_bbr.c for structure): cwnd follows a model of the path, the
//! bottleneck bandwidth (the max delivery rate of the last 10 round trips)
//! times the minimum RTT (of the last 10 s), not the losses. A random loss
//! leaves cwnd alone, so a stream over a lossy path keeps its rate where RFC
//! 9260 7.2.3 halves cwnd on every loss.
//!
//! The states are the draft's: STARTUP (gain 2/ln2) until the bandwidth stops
//! growing by 25% for 3 rounds, DRAIN, PROBE_BW (gain cycle 1.25, 0.75, 1 x6)
//! and PROBE_RTT (4 PMDCS for 200 ms and a round, once the min RTT is 10 s
//! old). cwnd is at most cwnd_gain (2) x BDP + an allowance of 3 PMDCS for
//! delayed and aggregated SACKs (+2 in the 1.25 phase), never below 4 PMDCS.
//!
//! Differences from the draft, all because Brisk has no pacer:
//! - cwnd alone limits the flight. In PROBE_BW it is the flight a pacer at
//!   the phase's gain would keep, gain x BDP + the allowance, within the
//!   cwnd_gain bound: about one BDP, where a standing 2 BDP (cwnd_gain alone)
//!   would keep one BDP queued at the bottleneck and overflow any queue
//!   shallower than that (`tests/congestion.rs` measures both).
//! - DRAIN caps cwnd at one BDP, which empties the queue STARTUP built
//!   (paced, the draft sends at 0.35 x the bandwidth for that).
//! - STARTUP is not paced either: its 2.89 BDP window can overflow a
//!   shallow queue once, as slow start does.
//! - No packet conservation in Fast Recovery (optional in the draft).
//! - [`Bbr::pacing_gain`] is there for a pacer.
//!
//! And one of ours: no PROBE_RTT while app-limited (Linux skips it only on a
//! restart from idle); such a sender keeps no queue of its own to drain.
//!
//! Losses reduce cwnd in two cases only:
//! - A T3 expiry collapses it to 1 PMDCS, as BBR does on RTO; it grows
//!   from the next SACK and returns to its value before the expiry once what
//!   was in flight then has been delivered (or at once on an undo).
//! - A loss-rate ceiling, after BBRv2's inflight_hi: over a window of at
//!   least 2 rounds and 50 PMDCS of data, a loss rate above 20% caps cwnd
//!   at 0.7 x itself; windows below it raise the cap by 1 PMDCS a round
//!   until it no longer binds. A bulk flow that overflows a shared drop-tail
//!   queue (BBR v1's known harm) then backs off; random loss of 10% almost
//!   never reaches it (and an app-limited stream's cwnd is far above its
//!   flight anyway).

use std::time::Duration;

use super::delivery_rate::{DeliveryRate, RateSample};
use super::{AckSample, CongestionController};
use crate::time::Time;

/// Gains in 1/256 (Linux's BBR_UNIT).
const UNIT: u64 = 256;
/// Draft 4.3.2.1: 2/ln2, the smallest gain that doubles the rate each round.
const HIGH_GAIN: u64 = 739;
/// Draft 4.3.3: ln2/2, the inverse.
const DRAIN_GAIN: u64 = 89;
/// Draft 4.3.4: cwnd_gain in PROBE_BW.
const CWND_GAIN: u64 = 2 * UNIT;
/// Draft 4.3.4.2: the pacing gain cycle.
const CYCLE: [u64; 8] = [
    5 * UNIT / 4,
    3 * UNIT / 4,
    UNIT,
    UNIT,
    UNIT,
    UNIT,
    UNIT,
    UNIT,
];
/// Draft 4.1.1.5: the bandwidth filter's window, in rounds.
const BW_ROUNDS: usize = 10;
/// Draft 4.1.2.3: the min RTT filter's window.
const MIN_RTT_WINDOW: Duration = Duration::from_secs(10);
/// Draft 4.3.5: how long PROBE_RTT holds the flight down.
const PROBE_RTT_TIME: Duration = Duration::from_millis(200);
/// Draft 4.3.2.2: STARTUP ends after 3 rounds without 25% growth.
const FULL_BW_GROWTH: u64 = 5 * UNIT / 4;
const FULL_BW_ROUNDS: u32 = 3;
/// Draft 4.2.3.1: the smallest cwnd, in PMDCS.
const MIN_CWND: u32 = 4;
/// Room for delayed and aggregated SACKs (Linux's quantization budget), PMDCS.
const ALLOWANCE: u32 = 3;
/// The loss-rate ceiling: rate above which it binds (percent), the data a
/// window needs (PMDCS) and its rounds, and the reduction (tenths).
const LOSS_RATE_LIMIT: u64 = 20;
const LOSS_WINDOW_PMDCS: u64 = 50;
const LOSS_WINDOW_ROUNDS: u32 = 2;
const LOSS_BETA_TENTHS: u64 = 7;

/// Draft 4.3: the state machine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Startup,
    Drain,
    ProbeBw,
    ProbeRtt,
}

/// The model, the state and cwnd of one destination.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bbr {
    pmdcs: u32,
    cwnd: u32,
    initial_cwnd: u32,
    /// cwnd before PROBE_RTT or a T3 expiry, restored after it.
    prior_cwnd: u32,
    mode: Mode,
    rate: DeliveryRate,
    /// Draft 4.1.1.5: the max delivery rate of each of the last rounds
    /// (bytes/s), by round count modulo the window. The window moves only
    /// when a sample enters it (as Linux's minmax): app-limited rounds that
    /// add nothing do not age the estimate.
    bw_rounds: [u64; BW_ROUNDS],
    /// The round of the newest sample in `bw_rounds`.
    bw_round: u64,
    round_count: u64,
    next_round_delivered: u64,
    round_start: bool,
    min_rtt: Option<Duration>,
    min_rtt_stamp: Time,
    full_bw: u64,
    full_bw_count: u32,
    full_bw_reached: bool,
    cycle_index: usize,
    cycle_stamp: Time,
    /// A loss was found in the current gain cycle phase.
    phase_lost: bool,
    probe_rtt_done: Option<Time>,
    probe_rtt_round_done: bool,
    /// Data went out after idle while app-limited (draft 4.3.4.4).
    idle_restart: bool,
    /// The flight as last heard of.
    flight: u32,
    /// After a T3 expiry: prior_cwnd returns once `delivered` reaches this.
    t3_recovery_until: Option<u64>,
    /// The loss-rate ceiling and the window it is judged over.
    inflight_hi: Option<u32>,
    window_lost: u64,
    window_delivered: u64,
    window_rounds: u32,
}

impl Bbr {
    /// RFC 9260 7.2.1's initial cwnd (or `initial_cwnd`) until the model
    /// has its first samples.
    pub fn new(pmdcs: u32, initial_cwnd: Option<u32>) -> Self {
        let cwnd = initial_cwnd
            .unwrap_or((4 * pmdcs).min((2 * pmdcs).max(4404)))
            .max(pmdcs);
        Self {
            pmdcs,
            cwnd,
            initial_cwnd: cwnd,
            prior_cwnd: cwnd,
            mode: Mode::Startup,
            rate: DeliveryRate::default(),
            bw_rounds: [0; BW_ROUNDS],
            bw_round: 0,
            round_count: 0,
            next_round_delivered: 0,
            round_start: false,
            min_rtt: None,
            min_rtt_stamp: Time::ZERO,
            full_bw: 0,
            full_bw_count: 0,
            full_bw_reached: false,
            cycle_index: 0,
            cycle_stamp: Time::ZERO,
            phase_lost: false,
            probe_rtt_done: None,
            probe_rtt_round_done: false,
            idle_restart: false,
            flight: 0,
            t3_recovery_until: None,
            inflight_hi: None,
            window_lost: 0,
            window_delivered: 0,
            window_rounds: 0,
        }
    }

    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// The bottleneck bandwidth estimate, bytes/s.
    pub fn max_bw(&self) -> u64 {
        self.bw_rounds.iter().copied().max().unwrap_or(0)
    }

    pub fn min_rtt(&self) -> Option<Duration> {
        self.min_rtt
    }

    pub fn round_count(&self) -> u64 {
        self.round_count
    }

    pub fn full_bw_reached(&self) -> bool {
        self.full_bw_reached
    }

    /// The loss-rate ceiling on cwnd, if one binds.
    pub fn inflight_hi(&self) -> Option<u32> {
        self.inflight_hi
    }

    /// The pacing gain of the state, in 1/256 (no pacer uses it yet).
    pub fn pacing_gain(&self) -> u64 {
        match self.mode {
            Mode::Startup => HIGH_GAIN,
            Mode::Drain => DRAIN_GAIN,
            Mode::ProbeBw => CYCLE[self.cycle_index],
            Mode::ProbeRtt => UNIT,
        }
    }

    /// The bandwidth-delay product times `gain` (1/256), bytes; `None`
    /// before the model has a bandwidth and a min RTT.
    fn bdp(&self, gain: u64) -> Option<u32> {
        let bw = self.max_bw();
        let rtt = self.min_rtt?;
        if bw == 0 {
            return None;
        }
        let bytes =
            u128::from(bw) * rtt.as_micros() * u128::from(gain) / (1_000_000 * u128::from(UNIT));
        Some(u32::try_from(bytes).unwrap_or(u32::MAX))
    }

    /// Draft 4.2.3.2 BBRInflight: BDP x gain and the allowance.
    fn inflight(&self, gain: u64) -> u32 {
        self.bdp(gain)
            .unwrap_or(self.initial_cwnd)
            .saturating_add(ALLOWANCE * self.pmdcs)
    }

    /// The cwnd the model asks for (draft 4.2.3.2), before the floor.
    fn target_cwnd(&self) -> u32 {
        match self.mode {
            // Unpaced, the queue drains only under a smaller window.
            Mode::Drain => self.bdp(UNIT).unwrap_or(self.initial_cwnd),
            Mode::Startup => self.inflight(HIGH_GAIN),
            Mode::ProbeRtt => MIN_CWND * self.pmdcs,
            Mode::ProbeBw => {
                let gain = CYCLE[self.cycle_index];
                let probing = if gain > UNIT { 2 * self.pmdcs } else { 0 };
                // Unpaced: the flight a pacer at this gain would keep,
                // within cwnd_gain x BDP.
                self.inflight(gain)
                    .min(self.inflight(CWND_GAIN))
                    .saturating_add(probing)
            }
        }
    }

    /// Draft 4.1.1.3: a round ends when data sent after it began is
    /// delivered.
    fn update_round(&mut self, rs: Option<&RateSample>) {
        self.round_start = false;
        if let Some(rs) = rs
            && rs.prior_delivered >= self.next_round_delivered
        {
            self.next_round_delivered = self.rate.delivered();
            self.round_count += 1;
            self.round_start = true;
        }
    }

    /// Draft 4.1.1.5: app-limited samples count only when they raise the
    /// estimate.
    fn update_bw(&mut self, rs: &RateSample) {
        let bw = rs.rate();
        if !rs.app_limited || bw >= self.max_bw() {
            // The rounds since the last sample leave the window.
            let moved = self.round_count.saturating_sub(self.bw_round);
            for r in 1..=moved.min(BW_ROUNDS as u64) {
                self.bw_rounds[((self.bw_round + r) % BW_ROUNDS as u64) as usize] = 0;
            }
            self.bw_round = self.round_count;
            let slot = &mut self.bw_rounds[(self.round_count % BW_ROUNDS as u64) as usize];
            *slot = (*slot).max(bw);
        }
    }

    /// Draft 4.3.2.2: STARTUP found the bottleneck once three rounds
    /// (not app-limited) failed to grow the bandwidth by 25%.
    fn check_full_bw(&mut self, rs: &RateSample) {
        if self.full_bw_reached || !self.round_start || rs.app_limited {
            return;
        }
        let bw = self.max_bw();
        if u128::from(bw) * u128::from(UNIT)
            >= u128::from(self.full_bw) * u128::from(FULL_BW_GROWTH)
        {
            self.full_bw = bw;
            self.full_bw_count = 0;
            return;
        }
        self.full_bw_count += 1;
        self.full_bw_reached = self.full_bw_count >= FULL_BW_ROUNDS;
    }

    /// Draft 4.3.3: STARTUP to DRAIN to PROBE_BW.
    fn check_drain(&mut self, now: Time) {
        if self.mode == Mode::Startup && self.full_bw_reached {
            self.mode = Mode::Drain;
        }
        if self.mode == Mode::Drain && self.bdp(UNIT).is_some_and(|bdp| self.flight <= bdp) {
            self.enter_probe_bw(now);
        }
    }

    /// Draft 4.3.4.3: PROBE_BW starts at a phase other than 0.75, chosen
    /// from the data delivered (deterministic, where the draft draws it).
    fn enter_probe_bw(&mut self, now: Time) {
        self.mode = Mode::ProbeBw;
        let pick = (self.rate.delivered() / u64::from(self.pmdcs.max(1))) % 7;
        self.cycle_index = if pick == 0 { 0 } else { pick as usize + 1 };
        self.cycle_stamp = now;
        self.phase_lost = false;
    }

    /// Draft 4.3.4.3 BBRIsNextCyclePhase, on the flight before the SACK.
    fn advance_cycle(&mut self, now: Time, prior_inflight: u32) {
        if self.mode != Mode::ProbeBw {
            return;
        }
        let full_length = now.since(self.cycle_stamp) > self.min_rtt.unwrap_or_default();
        let gain = CYCLE[self.cycle_index];
        let next = match gain.cmp(&UNIT) {
            std::cmp::Ordering::Equal => full_length,
            std::cmp::Ordering::Greater => {
                full_length && (self.phase_lost || prior_inflight >= self.inflight(gain))
            }
            std::cmp::Ordering::Less => full_length || prior_inflight <= self.inflight(UNIT),
        };
        if next {
            self.cycle_index = (self.cycle_index + 1) % CYCLE.len();
            self.cycle_stamp = now;
            self.phase_lost = false;
        }
    }

    /// Draft 4.1.2.3 and 4.3.5: the min RTT filter, and PROBE_RTT when it
    /// expires.
    fn update_min_rtt(&mut self, now: Time, rtt: Option<Duration>) {
        let expired = self.min_rtt.is_some() && now.since(self.min_rtt_stamp) > MIN_RTT_WINDOW;
        if let Some(rtt) = rtt
            && (self.min_rtt.is_none_or(|m| rtt <= m) || expired)
        {
            self.min_rtt = Some(rtt);
            self.min_rtt_stamp = now;
        }
        // Linux skips PROBE_RTT on a restart from idle; so does an
        // app-limited sender here (ours): it keeps no queue of its own to
        // drain, so its RTT samples already see the path, and holding it to
        // 4 PMDCS would only delay its messages.
        if expired
            && !self.idle_restart
            && !self.rate.is_app_limited()
            && self.mode != Mode::ProbeRtt
        {
            self.mode = Mode::ProbeRtt;
            self.save_cwnd();
            self.probe_rtt_done = None;
        }
        if self.mode == Mode::ProbeRtt {
            self.handle_probe_rtt(now);
        }
        self.idle_restart = false;
    }

    /// Draft 4.3.5: hold the flight at 4 PMDCS for 200 ms and a round.
    fn handle_probe_rtt(&mut self, now: Time) {
        match self.probe_rtt_done {
            None if self.flight <= MIN_CWND * self.pmdcs => {
                self.probe_rtt_done = Some(now + PROBE_RTT_TIME);
                self.probe_rtt_round_done = false;
                self.next_round_delivered = self.rate.delivered();
            }
            None => {}
            Some(done) => {
                self.probe_rtt_round_done |= self.round_start;
                if self.probe_rtt_round_done && now >= done {
                    self.min_rtt_stamp = now;
                    self.cwnd = self.cwnd.max(self.prior_cwnd);
                    if self.full_bw_reached {
                        self.enter_probe_bw(now);
                    } else {
                        self.mode = Mode::Startup;
                    }
                }
            }
        }
    }

    /// Linux bbr_save_cwnd: the cwnd to return to.
    fn save_cwnd(&mut self) {
        self.prior_cwnd = if self.mode == Mode::ProbeRtt || self.t3_recovery_until.is_some() {
            self.prior_cwnd.max(self.cwnd)
        } else {
            self.cwnd
        };
    }

    /// The loss-rate ceiling, judged at the start of each round.
    fn judge_losses(&mut self) {
        if !self.round_start {
            return;
        }
        self.window_rounds += 1;
        let total = self.window_lost + self.window_delivered;
        if self.window_rounds < LOSS_WINDOW_ROUNDS
            || total < LOSS_WINDOW_PMDCS * u64::from(self.pmdcs)
        {
            return;
        }
        let floor = MIN_CWND * self.pmdcs;
        if self.window_lost * 100 > total * LOSS_RATE_LIMIT {
            let base = u64::from(self.inflight_hi.map_or(self.cwnd, |hi| hi.min(self.cwnd)));
            let hi = u32::try_from(base * LOSS_BETA_TENTHS / 10).unwrap_or(u32::MAX);
            self.inflight_hi = Some(hi.max(floor));
        } else if let Some(hi) = self.inflight_hi {
            let hi = hi.saturating_add(self.window_rounds * self.pmdcs);
            // Lifted once above the most the model ever asks for.
            self.inflight_hi = (hi < self.inflight(CWND_GAIN)).then_some(hi);
        }
        self.window_lost = 0;
        self.window_delivered = 0;
        self.window_rounds = 0;
    }

    /// Draft 4.2.3.6 BBRSetCwnd, with the floor, PROBE_RTT and the ceiling.
    fn set_cwnd(&mut self, acked: u32) {
        let target = self.target_cwnd();
        if self.full_bw_reached {
            self.cwnd = self.cwnd.saturating_add(acked).min(target);
        } else if self.cwnd < target || self.rate.delivered() < u64::from(self.initial_cwnd) {
            self.cwnd = self.cwnd.saturating_add(acked);
        }
        let floor = MIN_CWND * self.pmdcs;
        self.cwnd = self.cwnd.max(floor);
        if self.mode == Mode::ProbeRtt {
            self.cwnd = self.cwnd.min(floor);
        }
        if let Some(hi) = self.inflight_hi {
            self.cwnd = self.cwnd.min(hi.max(floor));
        }
    }
}

impl CongestionController for Bbr {
    fn cwnd(&self) -> u32 {
        self.cwnd
    }
    /// BBR has no slow start threshold (Linux: TCP_INFINITE_SSTHRESH).
    fn ssthresh(&self) -> u32 {
        u32::MAX
    }
    fn pmdcs(&self) -> u32 {
        self.pmdcs
    }

    fn on_sent(&mut self, now: Time, bytes: u32, flight_after: u32) {
        if flight_after <= bytes && self.rate.is_app_limited() {
            // Draft 4.3.4.4: restarting from idle.
            self.idle_restart = true;
        }
        self.flight = flight_after;
        // Draft-cheng 3.2, one record per eighth of the min RTT at most.
        let spacing = self.min_rtt.unwrap_or_default() / 8;
        self.rate.on_sent(now, bytes, flight_after, spacing);
    }

    fn on_ack(&mut self, ack: &AckSample) {
        let prior_inflight = ack.flight_before;
        self.flight = ack.flight_before.saturating_sub(ack.bytes_acked);
        let rs = self.rate.on_ack(
            ack.now,
            ack.bytes_acked,
            ack.newest_acked_sent_at,
            self.min_rtt,
        );
        self.window_delivered += u64::from(ack.bytes_acked);
        self.update_round(rs.as_ref());
        let measured = rs.filter(RateSample::measured);
        if let Some(rs) = &measured {
            self.update_bw(rs);
        }
        self.advance_cycle(ack.now, prior_inflight);
        if let Some(rs) = &measured {
            self.check_full_bw(rs);
        }
        self.check_drain(ack.now);
        self.update_min_rtt(ack.now, ack.rtt);
        self.judge_losses();
        if self
            .t3_recovery_until
            .is_some_and(|until| self.rate.delivered() >= until)
        {
            // What was in flight at the expiry is delivered: cwnd returns.
            self.t3_recovery_until = None;
            self.cwnd = self.cwnd.max(self.prior_cwnd);
        }
        if ack.bytes_acked > 0 {
            self.set_cwnd(ack.bytes_acked);
        }
        // Draft-cheng 3.4: nothing to send with room in cwnd.
        if ack.app_limited && self.flight < self.cwnd {
            self.rate.mark_app_limited(self.flight);
        }
    }

    fn on_all_acked(&mut self) {}

    /// No reduction: a loss is no sign of a full queue to BBR (draft 4.2.3.4
    /// conservation is optional and not done).
    fn on_fast_retransmit(&mut self, _now: Time) {
        self.phase_lost = true;
    }

    fn on_lost(&mut self, _now: Time, bytes: u32) {
        self.phase_lost = true;
        self.window_lost += u64::from(bytes);
    }

    /// Draft 4.2.3.4 and Linux: an RTO collapses cwnd to one packet.
    fn on_t3_expiry(&mut self, _now: Time) {
        self.save_cwnd();
        self.t3_recovery_until = Some(self.rate.delivered() + u64::from(self.flight));
        self.cwnd = self.pmdcs;
        self.phase_lost = true;
    }

    fn undo(&mut self, cwnd: u32, _ssthresh: u32) {
        self.t3_recovery_until = None;
        self.cwnd = self.cwnd.max(cwnd);
    }

    /// Draft 4.3.4.4: no decay after idle; the model still holds.
    fn on_idle(&mut self, _idle_rtos: u32) {}
}

#[cfg(test)]
mod tests {
    use super::*;

    const PMDCS: u32 = 1000;

    fn ms(v: u64) -> Duration {
        Duration::from_millis(v)
    }

    /// A bulk sender over a path of `rate` bytes/s and `rtt`, sending a
    /// PMDCS chunk whenever cwnd allows, acknowledged one by one at the
    /// bottleneck rate (a fluid model: no queue limit, no loss).
    struct Path {
        now: Time,
        cc: Bbr,
        /// (send time, ack arrival time) of each chunk in flight.
        flight: std::collections::VecDeque<(Time, Time)>,
        link_free: Time,
        rate: u64,
        rtt: Duration,
        max_flight: u32,
    }

    impl Path {
        fn new(rate: u64, rtt: Duration) -> Self {
            Self {
                now: Time::ZERO,
                cc: Bbr::new(PMDCS, None),
                flight: Default::default(),
                link_free: Time::ZERO,
                rate,
                rtt,
                max_flight: 0,
            }
        }

        fn flight_bytes(&self) -> u32 {
            self.flight.len() as u32 * PMDCS
        }

        /// Runs until `end`: fill cwnd, then deliver the next ack.
        fn run(&mut self, end: Time, app_limited_gap: Option<Duration>) -> Vec<AckSample> {
            let mut acks = Vec::new();
            let mut next_send = self.now;
            let serial = Duration::from_micros(u64::from(PMDCS) * 1_000_000 / self.rate);
            while self.now < end {
                while self.cc.allows_new_data(self.flight_bytes())
                    && app_limited_gap.is_none_or(|_| self.now >= next_send)
                {
                    let start = self.link_free.max(self.now);
                    self.link_free = start + serial;
                    self.flight.push_back((self.now, self.link_free + self.rtt));
                    let flight = self.flight_bytes();
                    self.max_flight = self.max_flight.max(flight);
                    self.cc.on_sent(self.now, PMDCS, flight);
                    if let Some(gap) = app_limited_gap {
                        next_send = self.now + gap;
                    }
                }
                let next_ack = self.flight.front().map(|a| a.1);
                let next = match (next_ack, app_limited_gap) {
                    (Some(a), Some(_)) => a.min(next_send.max(self.now)),
                    (Some(a), None) => a,
                    (None, Some(_)) => next_send.max(self.now + Duration::from_millis(1)),
                    (None, None) => break,
                };
                self.now = next.max(self.now);
                if let Some(&(sent, at)) = self.flight.front()
                    && at <= self.now
                {
                    let flight_before = self.flight_bytes();
                    self.flight.pop_front();
                    let ack = AckSample {
                        now: self.now,
                        bytes_acked: PMDCS,
                        flight_before,
                        in_fast_recovery: false,
                        rtt: Some(self.now.since(sent)),
                        newest_acked_sent_at: Some(sent),
                        app_limited: app_limited_gap.is_some() && self.now < next_send,
                    };
                    self.cc.on_ack(&ack);
                    acks.push(ack);
                }
            }
            acks
        }
    }

    #[test]
    fn startup_finds_the_bottleneck_then_drains_into_probe_bw() {
        // 1 MB/s, 50 ms: BDP 50 kB.
        let mut p = Path::new(1_000_000, ms(50));
        p.run(Time::from_secs(3), None);
        assert!(p.cc.full_bw_reached());
        assert_eq!(p.cc.mode(), Mode::ProbeBw);
        let bw = p.cc.max_bw();
        assert!((900_000..=1_100_000).contains(&bw), "max_bw {bw}");
        assert_eq!(p.cc.min_rtt(), Some(ms(50) + Duration::from_millis(1)));
        // cwnd = the phase's gain (0.75 to 1.25) x BDP + allowance, not
        // cwnd_gain x BDP: unpaced, that would keep a BDP queued.
        let cwnd = p.cc.cwnd();
        assert!((40_000..=70_000).contains(&cwnd), "cwnd {cwnd}");
    }

    #[test]
    fn random_losses_leave_cwnd_alone_but_a_t3_expiry_collapses_it_until_recovered() {
        let mut p = Path::new(1_000_000, ms(50));
        p.run(Time::from_secs(3), None);
        let cwnd = p.cc.cwnd();
        p.cc.on_fast_retransmit(p.now);
        p.cc.on_lost(p.now, PMDCS);
        assert_eq!(p.cc.cwnd(), cwnd, "a loss is not congestion");
        p.cc.on_t3_expiry(p.now);
        assert_eq!(p.cc.cwnd(), PMDCS);
        p.cc.undo(cwnd, u32::MAX);
        assert_eq!(p.cc.cwnd(), cwnd, "undone");
        p.cc.on_t3_expiry(p.now);
        p.run(p.now + Duration::from_secs(1), None);
        assert!(p.cc.cwnd() >= cwnd * 9 / 10, "restored: {}", p.cc.cwnd());
    }

    #[test]
    fn the_bandwidth_filter_forgets_after_ten_rounds_but_app_limited_samples_do_not_lower_it() {
        let mut p = Path::new(1_000_000, ms(50));
        p.run(Time::from_secs(3), None);
        let bw = p.cc.max_bw();
        // One chunk every 20 ms: 50 kB/s offered, app-limited.
        p.run(p.now + Duration::from_secs(3), Some(ms(20)));
        assert!(p.cc.round_count() > 40);
        assert_eq!(p.cc.max_bw(), bw, "app-limited samples never lower it");
        // The same samples, not marked app-limited, replace it in 10 rounds.
        let mut q = Path::new(1_000_000, ms(50));
        q.run(Time::from_secs(3), None);
        let end = q.now + Duration::from_secs(3);
        while q.now < end {
            let sent = q.now;
            q.cc.on_sent(sent, PMDCS, PMDCS);
            q.now = sent + ms(50);
            q.cc.on_ack(&AckSample {
                now: q.now,
                bytes_acked: PMDCS,
                flight_before: PMDCS,
                in_fast_recovery: false,
                rtt: Some(ms(50)),
                newest_acked_sent_at: Some(sent),
                app_limited: false,
            });
        }
        assert!(q.cc.max_bw() < bw / 10, "{} vs {bw}", q.cc.max_bw());
    }

    #[test]
    fn probe_rtt_holds_four_pmdcs_when_the_min_rtt_is_ten_seconds_old() {
        let mut p = Path::new(1_000_000, ms(50));
        p.run(Time::from_secs(3), None);
        let before = p.cc.cwnd();
        // The path's RTT rises: no sample refreshes the min for 10 s.
        p.rtt = ms(80);
        p.run(Time::from_secs(14), None);
        let acks = p.run(Time::from_secs(15), None);
        assert!(!acks.is_empty());
        let mut q = Path::new(1_000_000, ms(50));
        q.run(Time::from_secs(3), None);
        q.rtt = ms(80);
        let mut saw_probe_rtt = false;
        while q.now < Time::from_secs(15) {
            let t = q.now + ms(10);
            q.run(t, None);
            if q.cc.mode() == Mode::ProbeRtt {
                saw_probe_rtt = true;
                assert!(q.cc.cwnd() <= 4 * PMDCS);
            }
        }
        assert!(saw_probe_rtt, "PROBE_RTT after 10 s");
        assert_eq!(q.cc.mode(), Mode::ProbeBw, "and back");
        assert!(q.cc.min_rtt() > Some(ms(80)), "the new min RTT");
        assert!(p.cc.cwnd() > before, "the larger BDP: {}", p.cc.cwnd());
    }

    #[test]
    fn the_gain_cycle_visits_every_phase_in_order() {
        let mut p = Path::new(1_000_000, ms(50));
        p.run(Time::from_secs(3), None);
        let mut gains = Vec::new();
        while p.now < Time::from_secs(5) {
            let t = p.now + ms(5);
            p.run(t, None);
            let g = p.cc.pacing_gain();
            if gains.last() != Some(&g) {
                gains.push(g);
            }
        }
        let probe = gains.iter().position(|g| *g == 320).expect("probing phase");
        assert_eq!(&gains[probe..probe + 3], &[320, 192, 256]);
    }

    #[test]
    fn a_loss_rate_above_twenty_percent_caps_cwnd_and_ten_percent_does_not() {
        for (lost_per_ten, capped) in [(1u32, false), (4, true)] {
            let mut p = Path::new(1_000_000, ms(50));
            p.run(Time::from_secs(3), None);
            let cwnd = p.cc.cwnd();
            let mut n = 0u32;
            while p.now < Time::from_secs(5) {
                let t = p.now + ms(5);
                let acks = p.run(t, None);
                for _ in &acks {
                    n += 1;
                    if n % 10 < lost_per_ten {
                        p.cc.on_lost(p.now, PMDCS);
                    }
                }
            }
            assert_eq!(p.cc.inflight_hi().is_some(), capped, "{lost_per_ten}/10");
            if capped {
                assert!(p.cc.cwnd() < cwnd * 3 / 4, "{} vs {cwnd}", p.cc.cwnd());
            } else {
                assert!(p.cc.cwnd() >= cwnd * 9 / 10, "{} vs {cwnd}", p.cc.cwnd());
            }
        }
    }

    #[test]
    fn the_controller_stays_small() {
        // 608 bytes today: the 8 send records are 320 of them.
        assert!(
            std::mem::size_of::<Bbr>() <= 640,
            "{}",
            std::mem::size_of::<Bbr>()
        );
    }
}
