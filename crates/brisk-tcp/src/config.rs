//! Every TCP knob, with named presets.
//!
//! [`TcpConfig::default`] is the `rfc` preset: RFC 5681, 6675 and 6298 with
//! SACK and no optional mechanism. Each optional mechanism (Early
//! Retransmit, RACK-TLP, thin-stream tweaks, autocorking) is a knob, off in
//! `rfc`, so that experiments can switch one at a time.

use std::time::Duration;

pub use brisk_proto::config::{format_duration, parse_duration};

/// Declares [`TcpConfig`] and its knob table from one list, so that each
/// knob's name, type, unit and doc are written once.
macro_rules! declare_config {
    (
        $(#[$meta:meta])*
        pub struct TcpConfig {
            $(
                $(#[doc = $doc:literal])*
                #[unit = $unit:literal]
                pub $field:ident: $ty:ty,
            )*
        }
    ) => {
        $(#[$meta])*
        pub struct TcpConfig {
            $(
                $(#[doc = $doc])*
                pub $field: $ty,
            )*
        }

        /// Names of the knobs [`TcpConfig::set`] knows: the fields of [`TcpConfig`].
        pub const KNOBS: &[&str] = &[$(stringify!($field)),*];

        /// Every knob of [`TcpConfig`] in declaration order: name, unit, doc,
        /// and how to read and write its value as text.
        pub const KNOB_TABLE: &[Knob] = &[$(
            Knob {
                name: stringify!($field),
                unit: $unit,
                doc: concat!($($doc),*),
                get: |config| KnobValue::render(&config.$field),
                set: |config, text| {
                    config.$field = KnobValue::parse(text)?;
                    Ok(())
                },
            }
        ),*];
    };
}

declare_config! {
    /// Configuration of one TCP endpoint and its connections.
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub struct TcpConfig {
        // --- Segments and buffers ---
        /// MSS we announce and the largest payload we send (RFC 9293 3.7.1);
        /// the sender uses min(ours, the peer's).
        #[unit = "bytes"]
        pub mss: u32,
        /// Bytes the application may queue, sent and unsent, before `write`
        /// accepts no more.
        #[unit = "bytes"]
        pub send_buffer: usize,
        /// Our receive buffer: the most we ever advertise; the advertised
        /// window is this less the bytes not yet read (window scale chosen to fit).
        #[unit = "bytes"]
        pub receive_window: u32,
        /// Disjoint out-of-order ranges the receiver holds at most; a segment
        /// that would open another is dropped and counted.
        #[unit = "ranges"]
        pub max_ooo_ranges: u32,
        /// Connections an endpoint holds at most; SYNs beyond are ignored and counted.
        #[unit = "connections"]
        pub max_connections: u32,

        // --- Sending and congestion control (RFC 5681) ---
        /// Nagle's algorithm (RFC 9293 3.7.4): hold a less-than-full segment
        /// while data is unacknowledged.
        #[unit = "true|false"]
        pub nagle: bool,
        /// Initial window in segments; `none`: RFC 5681 3.1 (4, 3 or 2 by SMSS).
        #[unit = "segments|none"]
        pub initial_window: Option<u32>,
        /// Initial slow-start threshold in bytes (RFC 5681 3.1 "arbitrarily high").
        #[unit = "bytes|infinite"]
        pub initial_ssthresh: u32,
        /// Count cwnd and flight in whole segments, as ns-2 does (halving 15
        /// gives 7); otherwise in bytes.
        #[unit = "true|false"]
        pub cwnd_in_packets: bool,
        /// Appropriate Byte Counting (RFC 3465; Linux counts acknowledged
        /// segments the same way): congestion avoidance grows cwnd by one
        /// segment per cwnd of data acknowledged, not per cwnd ACKs, so
        /// delayed ACKs do not halve its growth.
        #[unit = "true|false"]
        pub abc: bool,
        /// Congestion avoidance and window reduction: `reno` (RFC 5681) or
        /// `cubic` (RFC 9438: C = 0.4, β = 0.7, fast convergence, the
        /// Reno-friendly region).
        #[unit = "reno|cubic"]
        pub congestion_control: CongestionAlgorithm,

        // --- Acknowledgement (RFC 5681 4.2, RFC 2018) ---
        /// Delayed ACK: ack every second full-sized segment or after this
        /// delay; `none` acks every segment (ns-2's TCPSink).
        #[unit = "duration|none"]
        pub delayed_ack: Option<Duration>,
        /// Ack the first this many data segments of a connection at once, as
        /// Linux's quick-ack mode does at connection start (0: off).
        #[unit = "segments"]
        pub quickack_segments: u32,
        /// Offer and use SACK (RFC 2018) with RFC 6675 loss recovery.
        #[unit = "true|false"]
        pub sack: bool,

        // --- Loss recovery (RFC 5681, 6582, 6675, 6298) ---
        /// Duplicate ACKs that trigger fast retransmit (RFC 5681 3.2, DupThresh of RFC 6675).
        #[unit = "count"]
        pub dupthresh: u32,
        /// Limited Transmit (RFC 3042): a new segment on each of the first two
        /// duplicate ACKs.
        #[unit = "true|false"]
        pub limited_transmit: bool,
        /// RTO before the first RTT measurement (RFC 6298 2.1).
        #[unit = "duration"]
        pub rto_initial: Duration,
        /// Lower bound of RTO (RFC 6298 2.4).
        #[unit = "duration"]
        pub rto_min: Duration,
        /// Upper bound of RTO and of its back-off (RFC 6298 2.5).
        #[unit = "duration"]
        pub rto_max: Duration,
        /// Clock granularity G of RFC 6298 2: RTO = SRTT + max(G, 4 RTTVAR).
        #[unit = "duration"]
        pub clock_granularity: Duration,
        /// Consecutive RTO expirations before the connection gives up (RFC 9293 3.8.3 R2).
        #[unit = "count"]
        pub max_retransmissions: u32,
        /// SYN or SYN-ACK retransmissions before the handshake gives up.
        #[unit = "count"]
        pub max_syn_retransmissions: u32,

        // --- Optional mechanisms (off in `rfc`) ---
        /// Early Retransmit (RFC 5827, segment-based 3.2): with fewer than four
        /// segments outstanding and no new data to send, retransmit after
        /// oseg - 1 duplicate ACKs.
        #[unit = "true|false"]
        pub early_retransmit: bool,
        /// RACK-TLP (RFC 8985): time-based loss detection and tail loss probes
        /// (with SACK only; replaces the DupThresh rules when on).
        #[unit = "true|false"]
        pub rack_tlp: bool,
        /// RACK reordering window; `none`: RFC 8985 6.2 step 4 (min_RTT / 4,
        /// zero in recovery until reordering is seen).
        #[unit = "duration|none"]
        pub rack_reo_wnd: Option<Duration>,
        /// Worst-case delayed-ACK time a tail loss probe allows for with one
        /// segment in flight (WCDelAckT of RFC 8985 7.2).
        #[unit = "duration"]
        pub tlp_max_ack_delay: Duration,
        /// Linux's tcp_thin_linear_timeouts: while fewer than four segments are
        /// outstanding, the first six consecutive RTO expirations do not double RTO.
        #[unit = "true|false"]
        pub thin_linear_timeouts: bool,
        /// Linux's tcp_thin_dupack: while fewer than four segments are
        /// outstanding, fast retransmit on the first duplicate ACK.
        #[unit = "true|false"]
        pub thin_dupack: bool,
        /// Linux's tcp_autocorking: a write of less than a full segment made
        /// within this time after the connection last sent a segment is held
        /// and sent, coalesced with whatever else is written meanwhile, when
        /// that time has passed (the earlier segment's stay in the host's
        /// transmit queue); `none`: off.
        #[unit = "duration|none"]
        pub autocork: Option<Duration>,

        // --- Closing ---
        /// TIME-WAIT duration, 2 MSL (RFC 9293 3.4.2 suggests MSL = 2 minutes).
        #[unit = "duration"]
        pub time_wait: Duration,

        // --- Observability ---
        /// Emit `TcpEvent::Trace` whenever cwnd or ssthresh changes.
        #[unit = "true|false"]
        pub trace: bool,
    }
}

/// One knob of [`TcpConfig`]: its name, unit, doc and value as text.
#[derive(Debug, Clone, Copy)]
pub struct Knob {
    /// The field's name, which [`TcpConfig::set`] and [`TcpConfig::get`] take.
    pub name: &'static str,
    /// What a value is: `duration`, `bytes`, `segments`, `count`,
    /// `true|false`; `|none` where it may be unset.
    pub unit: &'static str,
    /// The field's documentation, its lines joined.
    pub doc: &'static str,
    get: fn(&TcpConfig) -> String,
    set: fn(&mut TcpConfig, &str) -> Result<(), &'static str>,
}

impl Knob {
    /// Finds a knob by name.
    pub fn named(name: &str) -> Option<&'static Knob> {
        KNOB_TABLE.iter().find(|k| k.name == name)
    }

    /// The knob's value in `config`, as [`TcpConfig::set`] accepts it.
    pub fn get(&self, config: &TcpConfig) -> String {
        (self.get)(config)
    }

    /// The first sentence of the doc, on one line.
    pub fn summary(&self) -> String {
        let doc = self.doc.split_whitespace().collect::<Vec<_>>().join(" ");
        match doc.find(". ") {
            Some(end) => doc.get(..=end).unwrap_or(&doc).to_owned(),
            None => doc,
        }
    }
}

/// The congestion control algorithm of the TCP model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CongestionAlgorithm {
    /// RFC 5681 slow start and congestion avoidance, halving on loss.
    #[default]
    Reno,
    /// RFC 9438 CUBIC.
    Cubic,
}

impl CongestionAlgorithm {
    /// The knob's spelling: `reno` or `cubic`.
    pub fn name(self) -> &'static str {
        match self {
            Self::Reno => "reno",
            Self::Cubic => "cubic",
        }
    }
}

impl KnobValue for CongestionAlgorithm {
    fn parse(text: &str) -> Result<Self, &'static str> {
        match text.trim() {
            "reno" => Ok(Self::Reno),
            "cubic" => Ok(Self::Cubic),
            _ => Err("reno or cubic"),
        }
    }
    fn render(&self) -> String {
        self.name().to_owned()
    }
}

/// A knob's value type: parsed from text, rendered back in the same syntax.
trait KnobValue: Sized {
    /// The value, or what was expected instead (completing "is not ...").
    fn parse(text: &str) -> Result<Self, &'static str>;
    fn render(&self) -> String;
}

fn whole_number(text: &str) -> Result<u64, &'static str> {
    text.trim().parse::<u64>().map_err(|_| "a whole number")
}

impl KnobValue for Duration {
    fn parse(text: &str) -> Result<Self, &'static str> {
        parse_duration(text).ok_or("a duration such as 200ms or 1s")
    }
    fn render(&self) -> String {
        format_duration(*self)
    }
}

impl KnobValue for u32 {
    /// A number, or `infinite` for `u32::MAX` (an infinite ssthresh).
    fn parse(text: &str) -> Result<Self, &'static str> {
        if text.trim() == "infinite" {
            return Ok(u32::MAX);
        }
        u32::try_from(whole_number(text)?).map_err(|_| "a 32-bit number")
    }
    fn render(&self) -> String {
        if *self == u32::MAX {
            "infinite".to_owned()
        } else {
            self.to_string()
        }
    }
}

impl KnobValue for usize {
    fn parse(text: &str) -> Result<Self, &'static str> {
        usize::try_from(whole_number(text)?).map_err(|_| "a size")
    }
    fn render(&self) -> String {
        self.to_string()
    }
}

impl KnobValue for bool {
    fn parse(text: &str) -> Result<Self, &'static str> {
        match text.trim() {
            "true" | "on" | "yes" => Ok(true),
            "false" | "off" | "no" => Ok(false),
            _ => Err("true or false"),
        }
    }
    fn render(&self) -> String {
        self.to_string()
    }
}

impl KnobValue for Option<u32> {
    fn parse(text: &str) -> Result<Self, &'static str> {
        match text.trim() {
            "none" => Ok(None),
            t => match whole_number(t) {
                Ok(n) => u32::try_from(n).map(Some).map_err(|_| "a 32-bit number"),
                Err(_) => Err("none or a whole number"),
            },
        }
    }
    fn render(&self) -> String {
        self.map_or_else(|| "none".to_owned(), |v| v.to_string())
    }
}

impl KnobValue for Option<Duration> {
    fn parse(text: &str) -> Result<Self, &'static str> {
        match text.trim() {
            "none" => Ok(None),
            t => parse_duration(t)
                .map(Some)
                .ok_or("none or a duration such as 200ms or 1s"),
        }
    }
    fn render(&self) -> String {
        self.map_or_else(|| "none".to_owned(), format_duration)
    }
}

/// A configuration value out of range, or a name that does not exist.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    /// A field's value would make the protocol misbehave.
    #[error("invalid TCP config: {field} must be {expected}")]
    Invalid {
        /// The knob.
        field: &'static str,
        /// What it must be.
        expected: &'static str,
    },
    /// [`TcpConfig::preset`] does not know the name.
    #[error("unknown TCP preset `{name}`; known presets: {known}")]
    UnknownPreset {
        /// The name asked for.
        name: String,
        /// The presets there are, comma-separated.
        known: String,
    },
    /// [`TcpConfig::set`] does not know the knob.
    #[error("unknown TCP knob `{key}`; known knobs: {known}")]
    UnknownKnob {
        /// The name asked for.
        key: String,
        /// The knobs there are, comma-separated.
        known: String,
    },
    /// The text is not a value of the knob's type.
    #[error("TCP knob `{key}`: `{value}` is not {expected}")]
    BadValue {
        /// The knob.
        key: String,
        /// The text given.
        value: String,
        /// What was expected.
        expected: &'static str,
    },
}

/// Names of the presets [`TcpConfig::preset`] knows.
pub const PRESETS: &[&str] = &["rfc", "ns2-sack1", "linux", "linux-thin"];

impl Default for TcpConfig {
    fn default() -> Self {
        Self::rfc()
    }
}

impl TcpConfig {
    /// The `rfc` preset: the standards with SACK and no optional mechanism.
    ///
    /// - RFC 5681 congestion control counted in bytes, initial window by
    ///   RFC 5681 3.1 (3 segments at MSS 1460), ssthresh infinite, Limited
    ///   Transmit (RFC 3042) on.
    /// - SACK (RFC 2018) and RFC 6675 recovery; NewReno (RFC 6582) with a
    ///   peer that does not offer SACK. DupThresh 3.
    /// - RFC 6298: RTO.Initial 1 s, RTO.Min 1 s, RTO.Max 60 s (2.5: at least
    ///   60 s). G = 1 ms is a guess: RFC 6298 leaves it to the clock, and
    ///   it matters only when 4 RTTVAR falls below it.
    /// - Delayed ACK 200 ms (RFC 5681 4.2 allows up to 500 ms; 200 ms is the
    ///   common BSD value), Nagle on (RFC 9293 3.7.4 SHOULD).
    /// - Receive window 65535 bytes (the largest without scaling); send
    ///   buffer 256 KiB, enough to keep that window full (a choice).
    /// - 15 RTO expirations before giving up (Linux's tcp_retries2; RFC 9293
    ///   asks for at least 100 s, which 15 back-offs exceed) and 7 SYN
    ///   retransmissions (over 3 minutes with the back-off, RFC 9293 3.8.3).
    /// - TIME-WAIT 240 s (2 MSL of RFC 9293 3.4.2); at most 512 out-of-order
    ///   ranges and 1024 connections (bounds of ours, not of any RFC).
    pub fn rfc() -> Self {
        Self {
            mss: 1460,
            send_buffer: 256 << 10,
            receive_window: 65_535,
            max_ooo_ranges: 512,
            max_connections: 1024,
            nagle: true,
            initial_window: None,
            initial_ssthresh: u32::MAX,
            cwnd_in_packets: false,
            abc: false,
            congestion_control: CongestionAlgorithm::Reno,
            delayed_ack: Some(Duration::from_millis(200)),
            quickack_segments: 0,
            sack: true,
            dupthresh: 3,
            limited_transmit: true,
            rto_initial: Duration::from_secs(1),
            rto_min: Duration::from_secs(1),
            rto_max: Duration::from_secs(60),
            clock_granularity: Duration::from_millis(1),
            max_retransmissions: 15,
            max_syn_retransmissions: 7,
            early_retransmit: false,
            rack_tlp: false,
            rack_reo_wnd: None,
            tlp_max_ack_delay: Duration::from_millis(200),
            thin_linear_timeouts: false,
            thin_dupack: false,
            autocork: None,
            time_wait: Duration::from_secs(240),
            trace: false,
        }
    }

    /// The `ns2-sack1` preset: ns-2.30's Agent/TCP/Sack1 sending to a
    /// TCPSink/Sack1, as in the paper we reproduce.
    ///
    /// - cwnd counted in whole packets (`cwnd_in_packets`), 1480-byte payloads
    ///   (the paper's), every segment acknowledged (TCPSink has no delayed
    ///   ACK), Nagle off and no Limited Transmit (ns-2's agents have neither).
    /// - Initial window 2 segments: ns-default.tcl's `windowInit_`, **from
    ///   memory**, not checked against the 2.30 sources.
    /// - RTO.Min 1 s: **a guess**. ns-2's `minrto_` default is uncertain to
    ///   us; 1 s is the RFC 2988 value of ns-2.30's time. RTO.Initial 3 s is
    ///   likewise a guess (RFC 2988's initial RTO, which we believe ns-2's
    ///   `rtxcur_init_` follows) and RTO.Max 64 s a guess for `maxrto_`.
    /// - G = 10 ms, ns-2's `tcpTick_` of 0.01 s (ns-2 also counts RTT samples
    ///   in ticks; we measure in microseconds and use G only in the RTO).
    /// - Receive window 64 KiB as the lab's setting. ns-2's own default
    ///   `window_` is 20 packets (from memory); set `receive_window` to
    ///   29600 to model that.
    /// - ns-2's Sack1 agent has no handshake (one-way TCP); ours does one,
    ///   which delays the first data by one RTT.
    /// - ssthresh starts infinite; ns-2 starts it at its window (from
    ///   memory), which the receive window limits to the same effect.
    pub fn ns2_sack1() -> Self {
        Self {
            mss: 1480,
            send_buffer: 1 << 20,
            receive_window: 65_536,
            nagle: false,
            initial_window: Some(2),
            cwnd_in_packets: true,
            delayed_ack: None,
            limited_transmit: false,
            rto_initial: Duration::from_secs(3),
            rto_min: Duration::from_secs(1),
            rto_max: Duration::from_secs(64),
            clock_granularity: Duration::from_millis(10),
            ..Self::rfc()
        }
    }

    /// The `linux` preset: a recent Linux kernel's defaults, approximated.
    ///
    /// - CUBIC (Linux's default since 2.6.19; RFC 9438, `congestion_control
    ///   = cubic`: ssthresh 0.7 cwnd on loss, cubic growth towards W_max,
    ///   without HyStart); cwnd counted in packets as Linux does (slow
    ///   start adds a segment per segment acknowledged, and growth counts
    ///   segments acknowledged, `abc`). `congestion_control = reno` gives
    ///   RFC 5681's congestion avoidance, one segment per cwnd segments
    ///   acknowledged (Linux's tcp_cong_avoid_ai), halving the flight on
    ///   loss (RFC 5681 eq. 4), where Linux's Reno halves cwnd.
    /// - Initial window 10 (RFC 6928, Linux since 2.6.39); SACK, RACK-TLP
    ///   (tcp_recovery=1, which turns the DupThresh rules off), Limited
    ///   Transmit and Nagle on.
    /// - RTO.Min 200 ms, RTO.Initial 1 s, RTO.Max 120 s (TCP_RTO_MIN,
    ///   TCP_TIMEOUT_INIT, TCP_RTO_MAX). G = 200 ms: Linux's RTO is SRTT +
    ///   max(4 RTTVAR, tcp_rto_min), so its RTO.Min plays the role of G.
    /// - Delayed ACK 40 ms (TCP_DELACK_MIN, where Linux's ato starts) and
    ///   quick-ack of the first 16 segments (TCP_MAX_QUICKACKS; Linux also
    ///   re-enters quick-ack mode after idle periods, which we do not).
    /// - Receive window 6 MiB (tcp_rmem's maximum; Linux grows towards it by
    ///   autotuning, we advertise it from the start), send buffer 4 MiB
    ///   (tcp_wmem's maximum).
    /// - 15 RTO expirations (tcp_retries2) and 6 SYN retransmissions
    ///   (tcp_syn_retries); TIME-WAIT 60 s (TCP_TIMEWAIT_LEN); TLP max ACK
    ///   delay 200 ms (TCP_DELACK_MAX).
    /// - Autocorking (tcp_autocorking = 1) with a 50 us hold: **our guess**
    ///   of how long a segment stays in the host's transmit queue before its
    ///   TX completion (a TUN or NIC queue drains a segment within tens of
    ///   microseconds). In a simulator, where the application's writes of
    ///   one instant come at the same microsecond, any positive value
    ///   coalesces all sub-MSS writes of that instant after the first. It
    ///   shows with `nagle` off (TCP_NODELAY); with Nagle on a short segment
    ///   already waits while data is unacknowledged.
    pub fn linux() -> Self {
        Self {
            send_buffer: 4 << 20,
            receive_window: 6 << 20,
            initial_window: Some(10),
            cwnd_in_packets: true,
            abc: true,
            congestion_control: CongestionAlgorithm::Cubic,
            delayed_ack: Some(Duration::from_millis(40)),
            quickack_segments: 16,
            rto_initial: Duration::from_secs(1),
            rto_min: Duration::from_millis(200),
            rto_max: Duration::from_secs(120),
            clock_granularity: Duration::from_millis(200),
            max_syn_retransmissions: 6,
            rack_tlp: true,
            autocork: Some(Duration::from_micros(50)),
            time_wait: Duration::from_secs(60),
            ..Self::rfc()
        }
    }

    /// The `linux-thin` preset: `linux` with tcp_thin_linear_timeouts and
    /// tcp_thin_dupack on (Linux's thin-stream options, removed from the
    /// kernel in 4.x after RACK-TLP; modelled as in 3.x).
    pub fn linux_thin() -> Self {
        Self {
            thin_linear_timeouts: true,
            thin_dupack: true,
            ..Self::linux()
        }
    }

    /// A named preset: one of [`PRESETS`].
    pub fn preset(name: &str) -> Result<TcpConfig, ConfigError> {
        match name {
            "rfc" => Ok(Self::rfc()),
            "ns2-sack1" => Ok(Self::ns2_sack1()),
            "linux" => Ok(Self::linux()),
            "linux-thin" => Ok(Self::linux_thin()),
            _ => Err(ConfigError::UnknownPreset {
                name: name.to_owned(),
                known: PRESETS.join(", "),
            }),
        }
    }

    /// Sets one knob by name from text: durations as `250ms`/`1s`, numbers,
    /// `true`/`false`, `none` for a knob that may be unset, `infinite` for
    /// `initial_ssthresh`. [`KNOB_TABLE`] lists them.
    pub fn set(&mut self, key: &str, value: &str) -> Result<(), ConfigError> {
        let Some(knob) = Knob::named(key) else {
            return Err(ConfigError::UnknownKnob {
                key: key.to_owned(),
                known: KNOBS.join(", "),
            });
        };
        (knob.set)(self, value).map_err(|expected| ConfigError::BadValue {
            key: key.to_owned(),
            value: value.to_owned(),
            expected,
        })
    }

    /// One knob's value by name in the syntax [`TcpConfig::set`] accepts;
    /// `None` for an unknown name.
    pub fn get(&self, key: &str) -> Option<String> {
        Knob::named(key).map(|knob| knob.get(self))
    }

    /// Checks the values that would make the protocol misbehave.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let fail = |field: &'static str, expected: &'static str| {
            Err(ConfigError::Invalid { field, expected })
        };
        if !(MIN_MSS..=MAX_MSS).contains(&self.mss) {
            return fail("mss", "between 88 and 65475 bytes");
        }
        if self.send_buffer == 0 {
            return fail("send_buffer", "at least 1 byte");
        }
        if self.receive_window == 0 || self.receive_window > MAX_WINDOW {
            return fail(
                "receive_window",
                "between 1 and 1073725440 bytes (RFC 7323 2.3)",
            );
        }
        if self.max_ooo_ranges == 0 {
            return fail("max_ooo_ranges", "at least 1");
        }
        if self.max_connections == 0 {
            return fail("max_connections", "at least 1");
        }
        if self.initial_window == Some(0) {
            return fail("initial_window", "at least 1 segment or none");
        }
        if self.initial_ssthresh == 0 {
            return fail("initial_ssthresh", "at least 1 byte");
        }
        if self
            .delayed_ack
            .is_some_and(|d| d > Duration::from_millis(500))
        {
            return fail("delayed_ack", "at most 500 ms (RFC 5681 4.2)");
        }
        if self.dupthresh == 0 {
            return fail("dupthresh", "at least 1");
        }
        if self.rto_min.is_zero() || self.rto_min > self.rto_max {
            return fail("rto_min", "greater than zero and at most rto_max");
        }
        if self.rto_initial.is_zero() || self.rto_initial > self.rto_max {
            return fail("rto_initial", "greater than zero and at most rto_max");
        }
        Ok(())
    }

    /// The configuration with every out-of-range value moved to the nearest
    /// valid one (what [`crate::TcpEndpoint::new`] uses).
    pub fn sanitized(&self) -> Self {
        let mut c = self.clone();
        c.mss = c.mss.clamp(MIN_MSS, MAX_MSS);
        c.send_buffer = c.send_buffer.max(1);
        c.receive_window = c.receive_window.clamp(1, MAX_WINDOW);
        c.max_ooo_ranges = c.max_ooo_ranges.max(1);
        c.max_connections = c.max_connections.max(1);
        c.initial_window = c.initial_window.map(|w| w.max(1));
        c.initial_ssthresh = c.initial_ssthresh.max(1);
        c.delayed_ack = c.delayed_ack.map(|d| d.min(Duration::from_millis(500)));
        c.dupthresh = c.dupthresh.max(1);
        c.rto_max = c.rto_max.max(Duration::from_micros(1));
        c.rto_min = c.rto_min.clamp(Duration::from_micros(1), c.rto_max);
        c.rto_initial = c.rto_initial.clamp(Duration::from_micros(1), c.rto_max);
        c
    }

    /// The initial window in segments for a sender MSS of `smss` bytes:
    /// `initial_window`, or RFC 5681 3.1's rule.
    pub fn initial_window_segments(&self, smss: u32) -> u32 {
        self.initial_window.unwrap_or(
            // RFC 5681 3.1: IW = min(4*SMSS, max(2*SMSS, 4380)), in segments.
            if smss > 2190 {
                2
            } else if smss > 1095 {
                3
            } else {
                4
            },
        )
    }

    /// The window scale shift we announce: the smallest that lets
    /// `receive_window` fit the 16-bit field (RFC 7323 2.2).
    pub fn window_shift(&self) -> u8 {
        let mut shift = 0u8;
        while shift < crate::wire::MAX_WINDOW_SCALE && (self.receive_window >> shift) > 65_535 {
            shift += 1;
        }
        shift
    }
}

/// Smallest MSS we accept from a peer or config (Linux's TCP_MIN_MSS).
pub const MIN_MSS: u32 = 88;
/// Largest MSS: a segment is at most 65535 bytes (the pseudo-header's TCP
/// length) and its header may take 60.
pub const MAX_MSS: u32 = 65_475;
/// Largest window RFC 7323 2.3 allows: 65535 << 14.
pub const MAX_WINDOW: u32 = 65_535 << 14;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_preset_is_valid_and_found_by_name() {
        for name in PRESETS {
            let c = TcpConfig::preset(name).unwrap();
            assert_eq!(c.validate(), Ok(()), "{name}");
            assert_eq!(c.sanitized(), c, "{name}");
        }
        assert_eq!(TcpConfig::default(), TcpConfig::rfc());
        assert_eq!(
            TcpConfig::preset("bsd").unwrap_err().to_string(),
            "unknown TCP preset `bsd`; known presets: rfc, ns2-sack1, linux, linux-thin"
        );
    }

    #[test]
    fn rfc_preset_values() {
        let c = TcpConfig::rfc();
        assert_eq!(c.initial_window_segments(1460), 3);
        assert_eq!(c.initial_window_segments(1000), 4);
        assert_eq!(c.initial_window_segments(4000), 2);
        assert_eq!(c.window_shift(), 0);
        assert!(c.sack && c.nagle && c.limited_transmit && !c.cwnd_in_packets);
        assert!(!c.early_retransmit && !c.rack_tlp && !c.thin_dupack && !c.thin_linear_timeouts);
        let l = TcpConfig::linux();
        assert_eq!(l.window_shift(), 7);
        assert_eq!(l.initial_window_segments(1460), 10);
        assert!(TcpConfig::linux_thin().thin_dupack);
        assert_eq!(c.congestion_control, CongestionAlgorithm::Reno);
        assert_eq!(l.congestion_control, CongestionAlgorithm::Cubic);
        assert_eq!(
            TcpConfig::linux_thin().get("congestion_control").as_deref(),
            Some("cubic")
        );
        assert_eq!(l.autocork, Some(Duration::from_micros(50)));
        assert_eq!(TcpConfig::linux_thin().autocork, l.autocork);
        assert_eq!(l.get("autocork").as_deref(), Some("50us"));
        let n = TcpConfig::ns2_sack1();
        assert_eq!(n.window_shift(), 1);
        assert!(n.cwnd_in_packets && n.delayed_ack.is_none());
        assert_eq!((c.autocork, n.autocork), (None, None));
    }

    #[test]
    fn every_knob_round_trips_through_get_and_set() {
        for name in PRESETS {
            let want = TcpConfig::preset(name).unwrap();
            let mut c = TcpConfig::ns2_sack1();
            c.rack_reo_wnd = Some(Duration::from_millis(3));
            for knob in KNOBS {
                let text = want.get(knob).unwrap();
                c.set(knob, &text).unwrap();
            }
            assert_eq!(c, want, "{name}");
        }
        assert_eq!(KNOB_TABLE.len(), KNOBS.len());
        for k in KNOB_TABLE {
            assert!(k.summary().ends_with('.'), "{}", k.name);
            assert!(!k.unit.is_empty());
        }
    }

    #[test]
    fn bad_values_name_the_knob_and_what_was_expected() {
        let mut c = TcpConfig::rfc();
        assert_eq!(
            c.set("rto_min", "soon").unwrap_err().to_string(),
            "TCP knob `rto_min`: `soon` is not a duration such as 200ms or 1s"
        );
        assert_eq!(
            c.set("delayed_ack", "x").unwrap_err().to_string(),
            "TCP knob `delayed_ack`: `x` is not none or a duration such as 200ms or 1s"
        );
        assert!(matches!(
            c.set("rto_mni", "1s"),
            Err(ConfigError::UnknownKnob { .. })
        ));
        c.set("initial_ssthresh", "infinite").unwrap();
        assert_eq!(c.initial_ssthresh, u32::MAX);
        c.set("delayed_ack", "600ms").unwrap();
        assert_eq!(
            c.validate(),
            Err(ConfigError::Invalid {
                field: "delayed_ack",
                expected: "at most 500 ms (RFC 5681 4.2)"
            })
        );
        assert_eq!(c.sanitized().delayed_ack, Some(Duration::from_millis(500)));
        c.set("mss", "10").unwrap();
        assert!(c.validate().is_err());
        assert_eq!(c.sanitized().mss, MIN_MSS);
    }
}
