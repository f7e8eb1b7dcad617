//! One TCP connection: the state machine of RFC 9293 3.3.2 and the
//! application's side of it.
//!
//! - `input`: segment arrival (handshake, acceptability, RST, data, FIN).
//! - `ack`: the sender's ACK processing and loss detection.
//! - `output`: what to send next (SYN, retransmissions, new data, ACKs).
//! - `timers`: retransmission, delayed ACK, persist, RACK, TLP, autocork,
//!   TIME-WAIT.
//! - `send` and `recv`: the two buffers.

mod ack;
mod input;
mod output;
pub mod recv;
pub mod send;
mod timers;

use std::collections::VecDeque;
use std::net::SocketAddrV4;

use brisk_proto::timer::Timer;

use crate::Time;
use crate::cc::CongestionControl;
use crate::config::TcpConfig;
use crate::events::{CloseReason, RetransmitCause, TcpEvent, TcpStats};
use crate::recovery::rack::Rack;
use crate::recovery::rto::RtoEstimator;
use crate::recovery::scoreboard::Scoreboard;
use crate::recovery::tlp::Tlp;
use recv::Receiver;
use send::SendBuffer;

/// RFC 9293 3.7.1: the MSS assumed when the peer sends no MSS option.
pub const DEFAULT_MSS: u32 = 536;

/// ACKs owed for earlier segments and not yet polled, kept at most; beyond
/// this, ACKs are coalesced (the latest state is acknowledged once).
pub const MAX_QUEUED_ACKS: usize = 64;

/// Connection states (RFC 9293 3.3.2). LISTEN belongs to the endpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum State {
    /// Ended (or never started).
    Closed,
    /// SYN sent, waiting for the SYN-ACK.
    SynSent,
    /// SYN received and SYN-ACK sent, waiting for its ACK.
    SynReceived,
    /// Data flows both ways.
    Established,
    /// We closed; our FIN is sent and not acknowledged.
    FinWait1,
    /// Our FIN is acknowledged; waiting for the peer's.
    FinWait2,
    /// The peer closed; we may still send.
    CloseWait,
    /// Both closed at once; waiting for the ACK of our FIN.
    Closing,
    /// The peer closed first, then we did; waiting for the ACK of our FIN.
    LastAck,
    /// Both FINs done; waiting 2 MSL.
    TimeWait,
}

/// Loss recovery in progress.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Recovery {
    /// None.
    Open,
    /// Fast recovery until SND.UNA reaches `point` (RFC 6675's
    /// RecoveryPoint, RFC 6582's recover + 1).
    Fast { point: u64 },
    /// After a timeout, until SND.UNA reaches `point` (RFC 6675 5.1).
    Timeout { point: u64 },
}

/// One TCP connection.
#[derive(Debug, Clone)]
pub struct Connection {
    cfg: TcpConfig,
    local: SocketAddrV4,
    remote: SocketAddrV4,
    state: State,

    // Handshake and what it negotiated.
    iss: u32,
    irs: u32,
    peer_mss: u32,
    smss: u32,
    snd_shift: u8,
    rcv_shift: u8,
    window_scaling: bool,
    sack_ok: bool,
    /// (Re)send the SYN or SYN-ACK at the next poll.
    syn_pending: bool,
    syn_transmissions: u32,
    syn_first_sent: Time,

    // Send side (offsets from ISS; the SYN is 0).
    sndbuf: SendBuffer,
    snd_una: u64,
    snd_nxt: u64,
    snd_wnd: u64,
    snd_wl1: u64,
    snd_wl2: u64,
    max_snd_wnd: u64,
    fin_queued: bool,
    fin_seq: Option<u64>,
    board: Scoreboard,
    cc: CongestionControl,
    rto: RtoEstimator,
    recovery: Recovery,
    /// No new fast recovery until SND.UNA reaches this (RFC 6582 "recover",
    /// RFC 6675 5.1).
    recover: u64,
    dupacks: u32,
    /// A retransmission that goes out at the next poll regardless of cwnd.
    forced: Option<(u64, RetransmitCause)>,
    /// The next new segment is a tail loss probe and may exceed cwnd.
    probe_new: bool,
    /// A zero-window probe is due.
    window_probe: bool,
    consecutive_rtos: u32,
    rack: Rack,
    tlp: Tlp,
    rtx_timer: Timer,
    persist_timer: Timer,
    persist_backoff: u32,
    time_wait_timer: Timer,
    /// When the last data segment (new or resent) went out: it is taken to
    /// sit in the host's transmit queue for `autocork` after.
    last_data_sent: Option<Time>,
    /// Autocorking holds a short segment until this timer fires.
    autocork_timer: Timer,
    /// A reset to send: (sequence number, acknowledgment number if any).
    pending_rst: Option<(u32, Option<u32>)>,

    // Receive side.
    rcv: Receiver,
    /// ACKs built for earlier segments, to go out before anything else:
    /// each segment that asks for an immediate ACK gets its own, even when
    /// several arrive before the next poll.
    queued_acks: VecDeque<crate::wire::Header>,
    readable_armed: bool,

    // Reporting.
    events: VecDeque<TcpEvent>,
    stats: TcpStats,
    traced: Option<(u32, u32)>,
    /// The application knows of this connection (it opened it, or was told
    /// `Connected`): its end is reported with `Closed`.
    pub(crate) visible: bool,
}

impl Connection {
    fn new(cfg: TcpConfig, local: SocketAddrV4, remote: SocketAddrV4, iss: u32) -> Self {
        let smss = cfg.mss;
        let rto = RtoEstimator::new(
            cfg.rto_initial,
            cfg.rto_min,
            cfg.rto_max,
            cfg.clock_granularity,
        );
        let mut c = Self {
            local,
            remote,
            state: State::Closed,
            iss,
            irs: 0,
            peer_mss: DEFAULT_MSS,
            smss,
            snd_shift: 0,
            rcv_shift: 0,
            window_scaling: false,
            sack_ok: false,
            syn_pending: false,
            syn_transmissions: 0,
            syn_first_sent: Time::ZERO,
            sndbuf: SendBuffer::new(cfg.send_buffer),
            snd_una: 0,
            snd_nxt: 0,
            snd_wnd: 0,
            snd_wl1: 0,
            snd_wl2: 0,
            max_snd_wnd: 0,
            fin_queued: false,
            fin_seq: None,
            board: Scoreboard::default(),
            cc: CongestionControl::new(&cfg, smss),
            rto,
            recovery: Recovery::Open,
            recover: 0,
            dupacks: 0,
            forced: None,
            probe_new: false,
            window_probe: false,
            consecutive_rtos: 0,
            rack: Rack::default(),
            tlp: Tlp {
                rtt_sampled: true,
                ..Tlp::default()
            },
            rtx_timer: Timer::default(),
            persist_timer: Timer::default(),
            persist_backoff: 0,
            time_wait_timer: Timer::default(),
            last_data_sent: None,
            autocork_timer: Timer::default(),
            pending_rst: None,
            rcv: Receiver::new(cfg.receive_window, cfg.max_ooo_ranges),
            queued_acks: VecDeque::new(),
            readable_armed: true,
            events: VecDeque::new(),
            stats: TcpStats::default(),
            traced: None,
            visible: false,
            cfg,
        };
        c.refresh_stats();
        c
    }

    /// An active open (RFC 9293 3.5): a SYN goes out at the next poll.
    pub(crate) fn connect(
        now: Time,
        cfg: TcpConfig,
        local: SocketAddrV4,
        remote: SocketAddrV4,
        iss: u32,
    ) -> Self {
        let mut c = Self::new(cfg, local, remote, iss);
        c.state = State::SynSent;
        c.syn_pending = true;
        c.snd_nxt = 1;
        c.visible = true;
        c.refresh(now);
        c
    }

    /// The application's view of the connection's state.
    pub fn state(&self) -> State {
        self.state
    }

    /// Counters and the loss-recovery variables.
    pub fn stats(&self) -> &TcpStats {
        &self.stats
    }

    /// Our address.
    pub fn local(&self) -> SocketAddrV4 {
        self.local
    }

    /// The peer's address.
    pub fn remote(&self) -> SocketAddrV4 {
        self.remote
    }

    /// The sender MSS: min(our `mss`, the peer's MSS option or 536).
    pub fn send_mss(&self) -> u32 {
        self.smss
    }

    /// The MSS the peer announced (536 if it sent none).
    pub fn peer_mss(&self) -> u32 {
        self.peer_mss
    }

    /// Whether SACK was negotiated (both sides sent SACK-Permitted).
    pub fn sack_enabled(&self) -> bool {
        self.sack_ok
    }

    /// Window scale shifts in use (peer's, ours), or `None` if either side
    /// did not send the option (RFC 7323 2.2).
    pub fn window_scale(&self) -> Option<(u8, u8)> {
        self.window_scaling
            .then_some((self.snd_shift, self.rcv_shift))
    }

    /// Queues application bytes; returns how many were accepted (bounded by
    /// the send buffer's free space). Sending happens on `poll_transmit`.
    /// Nothing is accepted once the connection is closing or closed.
    pub fn write(&mut self, now: Time, data: &[u8]) -> usize {
        let open = matches!(
            self.state,
            State::SynSent | State::SynReceived | State::Established | State::CloseWait
        );
        if !open || self.fin_queued {
            return 0;
        }
        let n = self.sndbuf.write(data);
        self.refresh(now);
        n
    }

    /// Moves up to `max` in-order received bytes into `out`; returns the count.
    pub fn read(&mut self, out: &mut Vec<u8>, max: usize) -> usize {
        let n = self.rcv.read(out, max);
        if n > 0 {
            self.readable_armed = true;
            if matches!(
                self.state,
                State::Established | State::FinWait1 | State::FinWait2
            ) {
                self.rcv.after_read(u64::from(self.smss));
            }
        }
        n
    }

    /// In-order bytes waiting to be read.
    pub fn readable(&self) -> usize {
        self.rcv.readable()
    }

    /// Bytes held out of order (within the receive window).
    pub fn out_of_order_bytes(&self) -> usize {
        self.rcv.ooo_bytes()
    }

    /// Disjoint out-of-order ranges held (at most `max_ooo_ranges`).
    pub fn out_of_order_ranges(&self) -> usize {
        self.rcv.ooo_ranges()
    }

    /// Bytes written and not yet acknowledged (in flight included).
    pub fn send_queued(&self) -> usize {
        self.sndbuf.len()
    }

    /// Bytes written and never sent.
    pub fn unsent(&self) -> usize {
        usize::try_from(self.sndbuf.end().saturating_sub(self.snd_nxt.max(1))).unwrap_or(0)
    }

    /// Graceful close (RFC 9293 3.6): a FIN follows the data already
    /// written. In SYN-SENT the connection simply ends (`Closed(Aborted)`).
    pub fn close(&mut self, now: Time) {
        match self.state {
            State::SynSent => self.close_with(CloseReason::Aborted),
            State::SynReceived | State::Established | State::CloseWait => {
                self.fin_queued = true;
            }
            _ => {}
        }
        self.refresh(now);
    }

    /// Abort (RFC 9293 3.10.5): a reset goes to the peer and the connection
    /// ends at once (`Closed(Aborted)`).
    pub fn abort(&mut self, now: Time) {
        if self.state == State::Closed {
            return;
        }
        if self.state != State::SynSent {
            self.pending_rst = Some((crate::seq::to_wire(self.iss, self.snd_nxt), None));
        }
        self.close_with(CloseReason::Aborted);
        self.refresh(now);
    }

    /// Ends the connection: every timer stops and, if the application knows
    /// of it, `Closed` is reported.
    fn close_with(&mut self, reason: CloseReason) {
        if self.state == State::Closed {
            return;
        }
        self.state = State::Closed;
        for t in [
            &mut self.rtx_timer,
            &mut self.persist_timer,
            &mut self.time_wait_timer,
            &mut self.rack.timer,
            &mut self.tlp.timer,
            &mut self.rcv.delack,
            &mut self.autocork_timer,
        ] {
            t.stop();
        }
        self.syn_pending = false;
        self.rcv.ack_now = false;
        self.queued_acks.clear();
        if self.visible {
            self.events.push_back(TcpEvent::Closed(reason));
        }
    }

    /// Takes the events queued since the last call.
    pub(crate) fn drain_events(&mut self) -> impl Iterator<Item = TcpEvent> + '_ {
        self.events.drain(..)
    }

    /// Whether RACK-TLP is in use: configured, and SACK negotiated.
    fn rack_active(&self) -> bool {
        self.cfg.rack_tlp && self.sack_ok
    }

    /// Whether the state lets us send new data.
    fn can_send_new_data(&self) -> bool {
        matches!(self.state, State::Established | State::CloseWait)
    }

    /// Bytes written and never sent, as a sequence length.
    fn unsent_bytes(&self) -> u64 {
        if self.fin_seq.is_some() {
            0
        } else {
            self.sndbuf.end().saturating_sub(self.snd_nxt)
        }
    }

    /// Bytes the peer's window leaves beyond SND.NXT.
    fn usable_window(&self) -> u64 {
        (self.snd_una + self.snd_wnd).saturating_sub(self.snd_nxt)
    }

    /// The flight the congestion window is compared with: RFC 6675's pipe
    /// in SACK fast recovery and after a timeout, RFC 5681's FlightSize
    /// otherwise (with NewReno's inflated window in its recovery).
    fn send_flight(&self) -> (u64, u64) {
        match self.recovery {
            Recovery::Fast { .. } if self.sack_ok => self.board.pipe(),
            Recovery::Timeout { .. } => self.board.pipe(),
            _ => self.board.flight(),
        }
    }

    /// Brings the stats snapshot up to date and reports a cwnd or ssthresh
    /// change (`trace`); arms the persist timer when the peer's window
    /// stops us with nothing in flight.
    fn refresh(&mut self, now: Time) {
        self.refresh_stats();
        let cc = (self.cc.cwnd(), self.cc.ssthresh());
        let established_once = !matches!(self.state, State::SynSent | State::SynReceived);
        if self.cfg.trace && established_once && self.traced != Some(cc) {
            self.traced = Some(cc);
            self.events.push_back(TcpEvent::Trace {
                at: now,
                cwnd: cc.0,
                ssthresh: cc.1,
                flight_size: self.stats.flight_size,
            });
        }
        // RFC 9293 3.8.6.1 (probe a zero window) and 3.8.6.2.1 (the
        // override timeout of sender SWS avoidance): the peer's window holds
        // back data with nothing in flight to draw an ACK.
        let blocked = self.can_send_new_data()
            && self.board.is_empty()
            && self.unsent_bytes() > 0
            && self.next_new_len().is_none();
        if blocked {
            if !self.persist_timer.is_running() && !self.window_probe {
                let d = self
                    .rto
                    .rto()
                    .saturating_mul(1u32 << self.persist_backoff.min(16))
                    .min(self.cfg.rto_max);
                self.persist_timer.start(now, d);
            }
        } else {
            self.persist_timer.stop();
        }
        // Nothing left to hold: the autocork timer has nothing to release.
        if self.unsent_bytes() == 0 || !self.can_send_new_data() {
            self.autocork_timer.stop();
        }
    }

    fn refresh_stats(&mut self) {
        let s = &mut self.stats;
        s.cwnd = self.cc.cwnd();
        s.ssthresh = self.cc.ssthresh();
        let flight = if self.sack_ok {
            self.board.pipe().0
        } else {
            self.board.flight().0
        };
        s.flight_size = u32::try_from(flight).unwrap_or(u32::MAX);
        s.segments_outstanding = u32::try_from(self.board.len()).unwrap_or(u32::MAX);
        s.srtt = self.rto.srtt();
        s.rto = self.rto.rto();
        s.peer_window = u32::try_from(self.snd_wnd).unwrap_or(u32::MAX);
    }
}
