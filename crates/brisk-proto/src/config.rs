//! Every protocol knob, with named presets.
//!
//! Defaults follow RFC 9260 16 ("Suggested SCTP Protocol Parameter Values").
//! Latency mechanisms arrive as further options, all off in [`Config::rfc9260`],
//! so the standard behaviour stays the baseline experiments compare against.

use std::time::Duration;

/// Configuration of one association.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Config {
    // --- Timers (RFC 9260 6.3, 16) ---
    /// RTO before the first RTT measurement.
    pub rto_initial: Duration,
    /// Lower bound of RTO (RFC 9260 6.3.1 C6).
    pub rto_min: Duration,
    /// Upper bound of RTO, also of its back-off (C7, E2).
    pub rto_max: Duration,
    /// INIT and COOKIE ECHO retransmissions before giving up (5.1).
    pub max_init_retransmits: u32,
    /// Consecutive unanswered retransmissions or heartbeats before the
    /// association is considered unreachable (8.1).
    pub assoc_max_retrans: u32,
    /// Consecutive errors before a destination is marked inactive (8.2).
    pub path_max_retrans: u32,
    /// Lifetime of the state cookie we hand out (5.1.3).
    pub valid_cookie_life: Duration,
    /// Heartbeats on idle paths (8.3).
    pub heartbeats: bool,
    /// Added to RTO (with jitter) between heartbeats on an idle path.
    pub hb_interval: Duration,

    // --- Acknowledgement (RFC 9260 6.2) ---
    /// Delay of a delayed SACK (at most 500 ms).
    pub sack_delay: Duration,
    /// SACK at least every this many packets carrying DATA (2; 1 disables delayed SACK).
    pub sack_freq: u32,

    // --- Loss recovery (RFC 9260 7.2.4) ---
    /// Miss indications that trigger fast retransmit: 3 in RFC 9260, 4 in
    /// RFC 2960 and Linux lksctp 2.6.15, the baseline of the research we reproduce.
    pub fast_retransmit_threshold: u32,

    // --- Congestion and flow control (RFC 9260 6.1, 7.2) ---
    /// New-data packets one transmission opportunity may send (0 = no limit).
    pub max_burst: u32,
    /// Initial cwnd in bytes; `None` = RFC 9260 7.2.1: min(4*MTU, max(2*MTU, 4404)).
    pub initial_cwnd: Option<u32>,
    /// Largest SCTP packet (common header included) we send: the path MTU less
    /// the IP and, with RFC 6951 encapsulation, UDP headers. The default, 1452,
    /// fits a 1500-byte path with IPv6 and UDP headers (1472 would be the IPv4
    /// figure, which usrsctp assumes).
    pub mtu: usize,
    /// Our receive buffer, advertised as a_rwnd.
    pub receive_buffer: u32,
    /// Bytes the application may queue before `send` is refused.
    pub send_buffer: usize,
    /// Largest user message we send or accept.
    pub max_message_size: usize,

    // --- Streams (RFC 9260 5.1.1) ---
    /// Outbound streams we ask for.
    pub outbound_streams: u16,
    /// Inbound streams we accept at most.
    pub max_inbound_streams: u16,

    // --- Latency mechanisms (all off in `rfc9260()`) ---
    /// Early Retransmit (RFC 5827): byte-based (3.1) or packet-based (3.2,
    /// seed 000's modification).
    pub early_retransmit: EarlyRetransmit,
    /// Delay an early retransmission by max(SRTT/4, 2 ms), cancelled if a SACK
    /// resolves it (reordering mitigation, RFC 5827 6).
    pub early_retransmit_delay: bool,
    /// RTO restart (RFC 7765): with fewer than 4 packets outstanding and no unsent
    /// data, restart T3 at RTO less the age of the earliest outstanding chunk.
    pub rto_restart: bool,
    /// Thin-stream mode (seed 001) holds while fewer than this many packets are
    /// outstanding.
    pub thin_threshold: u32,
    /// Thin: T3 expiry does not double RTO (linear timeouts, seed 001 4.2.2).
    pub thin_linear_timeouts: bool,
    /// Thin: fast retransmit on the first miss indication (seed 001 4.3).
    pub thin_fast_retransmit: bool,
    /// Thin: a lower RTO.Min (seed 001 uses 200 ms).
    pub thin_rto_min: Option<Duration>,
    /// Thin: a fast retransmission fills its packet with the earliest
    /// outstanding chunks (seed 001 4.4).
    pub thin_aggressive_bundling: bool,
    /// Thin: new packets with room carry unacknowledged chunks in front of the
    /// new ones (redundant bundling, seed 001 4.4; cause `Bundled`).
    pub thin_redundant_bundling: bool,
    /// Thin: set the I bit on DATA sent while thin, so a standard receiver
    /// SACKs at once (ours, not the seed's).
    pub thin_immediate_sack: bool,
    /// Tail loss probe adapted from RFC 8985 7 (cause `TailLossProbe`).
    pub tail_loss_probe: bool,
    /// Nagle's algorithm for messages: off (SCTP_NODELAY), classic, or
    /// Minshall's (hold a small packet only while a small one is unacknowledged).
    pub nagle: Nagle,
    /// PKTDROP (draft-stewart-sctp-pktdrprep): offered in INIT/INIT ACK; used
    /// only with a peer that offers it too.
    pub pktdrop: bool,

    // --- Observability ---
    /// Record per-message and per-retransmission events (`Event::MessageAcked`,
    /// `Event::Retransmission`). Counters in `Stats` are kept regardless.
    pub events: bool,
}

/// Early Retransmit variants (RFC 5827).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EarlyRetransmit {
    Off,
    /// RFC 5827 3.1: ownd < 4*SMSS, fire once ownd - SMSS bytes are SACKed.
    Bytes,
    /// RFC 5827 3.2 and seed 000 2.3: fewer than 4 packets outstanding, fire
    /// once all but one of them are SACKed.
    Packets,
}

/// Nagle's algorithm for messages (thesis paper D; Minshall).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Nagle {
    /// Send at once (SCTP_NODELAY).
    Off,
    /// Hold a less-than-full packet while any data is outstanding.
    Classic,
    /// Hold a less-than-full packet only while a less-than-full packet sent
    /// earlier is unacknowledged.
    Minshall,
}

impl Default for Config {
    fn default() -> Self {
        Self::rfc9260()
    }
}

impl Config {
    /// The RFC 9260 baseline: the suggested values of RFC 9260 16, no latency
    /// mechanism switched on.
    pub fn rfc9260() -> Self {
        Self {
            rto_initial: Duration::from_secs(1),
            rto_min: Duration::from_secs(1),
            rto_max: Duration::from_secs(60),
            max_init_retransmits: 8,
            assoc_max_retrans: 10,
            path_max_retrans: 5,
            valid_cookie_life: Duration::from_secs(60),
            heartbeats: true,
            hb_interval: Duration::from_secs(30),
            sack_delay: Duration::from_millis(200),
            sack_freq: 2,
            fast_retransmit_threshold: 3,
            max_burst: 4,
            initial_cwnd: None,
            mtu: 1452,
            receive_buffer: 1 << 20,
            send_buffer: 4 << 20,
            max_message_size: 256 << 10,
            outbound_streams: 16,
            max_inbound_streams: 16,
            early_retransmit: EarlyRetransmit::Off,
            early_retransmit_delay: false,
            rto_restart: false,
            thin_threshold: 4,
            thin_linear_timeouts: false,
            thin_fast_retransmit: false,
            thin_rto_min: None,
            thin_aggressive_bundling: false,
            thin_redundant_bundling: false,
            thin_immediate_sack: false,
            tail_loss_probe: false,
            nagle: Nagle::Off,
            pktdrop: false,
            events: true,
        }
    }

    /// Seed 000's signaling setup: its timer values (RTO.Initial 200 ms,
    /// RTO.Min 100 ms, RTO.Max 400 ms, SACK delay 40 ms) with packet-based Early
    /// Retransmit and RTO restart.
    pub fn signaling() -> Self {
        Self {
            rto_initial: Duration::from_millis(200),
            rto_min: Duration::from_millis(100),
            rto_max: Duration::from_millis(400),
            sack_delay: Duration::from_millis(40),
            early_retransmit: EarlyRetransmit::Packets,
            rto_restart: true,
            ..Self::rfc9260()
        }
    }

    /// Seed 001's thin-stream mode, every piece on, for a thin stream talking to
    /// a standard receiver: the I bit replaces the seed's receiver change.
    pub fn thin_stream() -> Self {
        Self {
            rto_restart: true,
            thin_linear_timeouts: true,
            thin_fast_retransmit: true,
            thin_rto_min: Some(Duration::from_millis(200)),
            thin_aggressive_bundling: true,
            thin_redundant_bundling: true,
            thin_immediate_sack: true,
            ..Self::rfc9260()
        }
    }

    /// Everything that helps timely delivery, on: packet-based Early
    /// Retransmit, RTO restart, thin-stream mode, the tail loss probe, Nagle off
    /// and PKTDROP.
    pub fn low_latency() -> Self {
        Self {
            early_retransmit: EarlyRetransmit::Packets,
            tail_loss_probe: true,
            pktdrop: true,
            ..Self::thin_stream()
        }
    }

    /// Linux lksctp of kernel 2.6.15, the "Standard" of seeds 000 and 001:
    /// fast retransmit after four miss indications (RFC 2960); otherwise RFC 9260.
    pub fn lksctp_2_6_15() -> Self {
        Self {
            fast_retransmit_threshold: 4,
            ..Self::rfc9260()
        }
    }

    /// Largest DATA payload that fits one packet: MTU less the common header
    /// and the DATA chunk header.
    /// The largest message this side can receive: `max_message_size`, or less
    /// when the receive buffer cannot hold it whole. A message is held until
    /// its last fragment arrives (no partial delivery), each fragment charged
    /// 256 bytes of bookkeeping (`rx::window`), within `receive_buffer` plus
    /// the one-chunk allowance; assumed cut at this side's MTU. A larger one
    /// ends the association with a reason that says so.
    pub fn largest_message_received(&self) -> usize {
        let f = self.max_data_payload();
        let room = usize::try_from(self.receive_buffer)
            .unwrap_or(usize::MAX)
            .saturating_add(crate::rx::window::NEXT_TSN_ALLOWANCE);
        let fits = |len: usize| crate::rx::window::held(len, len.div_ceil(f)) <= room;
        let mut len = room.saturating_mul(f) / f.saturating_add(crate::rx::window::CHUNK_OVERHEAD);
        while len > 0 && !fits(len) {
            len -= 1;
        }
        len.min(self.max_message_size)
    }

    pub fn max_data_payload(&self) -> usize {
        self.mtu.saturating_sub(12 + 16).max(1)
    }

    /// Checks the values that would make the protocol misbehave.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let fail = |field: &'static str, expected: &'static str| {
            Err(ConfigError::Invalid { field, expected })
        };
        if self.rto_min.is_zero() || self.rto_min > self.rto_max {
            return fail("rto_min", "greater than zero and at most rto_max");
        }
        if self.rto_initial < self.rto_min || self.rto_initial > self.rto_max {
            return fail("rto_initial", "between rto_min and rto_max");
        }
        if self.sack_delay > Duration::from_millis(500) {
            return fail("sack_delay", "at most 500 ms (RFC 9260 6.2)");
        }
        if self.sack_freq == 0 {
            return fail("sack_freq", "at least 1");
        }
        if self.fast_retransmit_threshold == 0 {
            return fail("fast_retransmit_threshold", "at least 1");
        }
        if !(128..=65_535).contains(&self.mtu) {
            return fail("mtu", "between 128 and 65535 bytes");
        }
        if self.receive_buffer < 1500 {
            return fail(
                "receive_buffer",
                "at least 1500 bytes (RFC 9260 6.2.1 a_rwnd)",
            );
        }
        if self.outbound_streams == 0 || self.max_inbound_streams == 0 {
            return fail("outbound_streams", "at least one stream each way");
        }
        if self.max_message_size == 0 || self.max_message_size > self.send_buffer {
            return fail("max_message_size", "at least 1 and at most send_buffer");
        }
        Ok(())
    }
}

/// A configuration value out of range, or a name that does not exist.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    #[error("invalid config: {field} must be {expected}")]
    Invalid {
        field: &'static str,
        expected: &'static str,
    },
    #[error("unknown config preset `{name}`; known presets: {known}")]
    UnknownPreset { name: String, known: String },
    #[error("unknown config knob `{key}`; known knobs: {known}")]
    UnknownKnob { key: String, known: String },
    #[error("config knob `{key}`: `{value}` is not {expected}")]
    BadValue {
        key: String,
        value: String,
        expected: &'static str,
    },
}

/// Names of the presets [`Config::preset`] knows.
pub const PRESETS: &[&str] = &[
    "rfc9260",
    "lksctp-2.6.15",
    "signaling",
    "thin-stream",
    "low-latency",
];

/// Names of the knobs [`Config::set`] knows: the fields of [`Config`].
pub const KNOBS: &[&str] = &[
    "rto_initial",
    "rto_min",
    "rto_max",
    "max_init_retransmits",
    "assoc_max_retrans",
    "path_max_retrans",
    "valid_cookie_life",
    "heartbeats",
    "hb_interval",
    "sack_delay",
    "sack_freq",
    "fast_retransmit_threshold",
    "max_burst",
    "initial_cwnd",
    "mtu",
    "receive_buffer",
    "send_buffer",
    "max_message_size",
    "outbound_streams",
    "max_inbound_streams",
    "early_retransmit",
    "early_retransmit_delay",
    "rto_restart",
    "thin_threshold",
    "thin_linear_timeouts",
    "thin_fast_retransmit",
    "thin_rto_min",
    "thin_aggressive_bundling",
    "thin_redundant_bundling",
    "thin_immediate_sack",
    "tail_loss_probe",
    "nagle",
    "pktdrop",
    "events",
];

/// Parses a duration: `250ms`, `1.5s`, `800us`, or a bare number of milliseconds.
pub fn parse_duration(value: &str) -> Option<Duration> {
    let v = value.trim();
    let (number, scale) = if let Some(n) = v.strip_suffix("us") {
        (n, 1e-6)
    } else if let Some(n) = v.strip_suffix("ms") {
        (n, 1e-3)
    } else if let Some(n) = v.strip_suffix('s') {
        (n, 1.0)
    } else {
        (v, 1e-3)
    };
    let x: f64 = number.trim().parse().ok()?;
    (x.is_finite() && x >= 0.0).then(|| Duration::from_secs_f64(x * scale))
}

impl Config {
    /// A named preset: `rfc9260` or `lksctp-2.6.15`.
    pub fn preset(name: &str) -> Result<Config, ConfigError> {
        match name {
            "rfc9260" => Ok(Config::rfc9260()),
            "lksctp-2.6.15" => Ok(Config::lksctp_2_6_15()),
            "signaling" => Ok(Config::signaling()),
            "thin-stream" => Ok(Config::thin_stream()),
            "low-latency" => Ok(Config::low_latency()),
            _ => Err(ConfigError::UnknownPreset {
                name: name.to_owned(),
                known: PRESETS.join(", "),
            }),
        }
    }

    /// Sets one knob by name from text: durations as `250ms`/`1s`, numbers,
    /// `true`/`false`, and `none` for `initial_cwnd`.
    pub fn set(&mut self, key: &str, value: &str) -> Result<(), ConfigError> {
        let bad = |expected: &'static str| ConfigError::BadValue {
            key: key.to_owned(),
            value: value.to_owned(),
            expected,
        };
        let duration =
            || parse_duration(value).ok_or_else(|| bad("a duration such as 200ms or 1s"));
        let uint = || {
            value
                .trim()
                .parse::<u64>()
                .map_err(|_| bad("a whole number"))
        };
        let u32v = || uint().and_then(|v| u32::try_from(v).map_err(|_| bad("a 32-bit number")));
        let u16v = || uint().and_then(|v| u16::try_from(v).map_err(|_| bad("a 16-bit number")));
        let usizev = || uint().and_then(|v| usize::try_from(v).map_err(|_| bad("a size")));
        let boolean = || match value.trim() {
            "true" | "on" | "yes" => Ok(true),
            "false" | "off" | "no" => Ok(false),
            _ => Err(bad("true or false")),
        };
        match key {
            "rto_initial" => self.rto_initial = duration()?,
            "rto_min" => self.rto_min = duration()?,
            "rto_max" => self.rto_max = duration()?,
            "max_init_retransmits" => self.max_init_retransmits = u32v()?,
            "assoc_max_retrans" => self.assoc_max_retrans = u32v()?,
            "path_max_retrans" => self.path_max_retrans = u32v()?,
            "valid_cookie_life" => self.valid_cookie_life = duration()?,
            "heartbeats" => self.heartbeats = boolean()?,
            "hb_interval" => self.hb_interval = duration()?,
            "sack_delay" => self.sack_delay = duration()?,
            "sack_freq" => self.sack_freq = u32v()?,
            "fast_retransmit_threshold" => self.fast_retransmit_threshold = u32v()?,
            "max_burst" => self.max_burst = u32v()?,
            "initial_cwnd" => {
                self.initial_cwnd = if value.trim() == "none" {
                    None
                } else {
                    Some(u32v()?)
                }
            }
            "mtu" => self.mtu = usizev()?,
            "receive_buffer" => self.receive_buffer = u32v()?,
            "send_buffer" => self.send_buffer = usizev()?,
            "max_message_size" => self.max_message_size = usizev()?,
            "outbound_streams" => self.outbound_streams = u16v()?,
            "max_inbound_streams" => self.max_inbound_streams = u16v()?,
            "early_retransmit" => {
                self.early_retransmit = match value.trim() {
                    "off" | "none" => EarlyRetransmit::Off,
                    "bytes" => EarlyRetransmit::Bytes,
                    "packets" => EarlyRetransmit::Packets,
                    _ => return Err(bad("off, bytes or packets")),
                }
            }
            "early_retransmit_delay" => self.early_retransmit_delay = boolean()?,
            "rto_restart" => self.rto_restart = boolean()?,
            "thin_threshold" => self.thin_threshold = u32v()?,
            "thin_linear_timeouts" => self.thin_linear_timeouts = boolean()?,
            "thin_fast_retransmit" => self.thin_fast_retransmit = boolean()?,
            "thin_rto_min" => {
                self.thin_rto_min = if value.trim() == "none" {
                    None
                } else {
                    Some(duration()?)
                }
            }
            "thin_aggressive_bundling" => self.thin_aggressive_bundling = boolean()?,
            "thin_redundant_bundling" => self.thin_redundant_bundling = boolean()?,
            "thin_immediate_sack" => self.thin_immediate_sack = boolean()?,
            "tail_loss_probe" => self.tail_loss_probe = boolean()?,
            "nagle" => {
                self.nagle = match value.trim() {
                    "off" => Nagle::Off,
                    "classic" => Nagle::Classic,
                    "minshall" => Nagle::Minshall,
                    _ => return Err(bad("off, classic or minshall")),
                }
            }
            "pktdrop" => self.pktdrop = boolean()?,
            "events" => self.events = boolean()?,
            _ => {
                return Err(ConfigError::UnknownKnob {
                    key: key.to_owned(),
                    known: KNOBS.join(", "),
                });
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_largest_message_received_fits_the_receive_buffer_whole() {
        let c = Config::rfc9260();
        assert_eq!(c.largest_message_received(), c.max_message_size);
        let small = Config {
            receive_buffer: 20_000,
            ..Config::rfc9260()
        };
        let l = small.largest_message_received();
        let f = small.max_data_payload();
        let room = 20_000 + crate::rx::window::NEXT_TSN_ALLOWANCE;
        assert!(crate::rx::window::held(l, l.div_ceil(f)) <= room);
        assert!(crate::rx::window::held(l + f, (l + f).div_ceil(f)) > room);
        assert!(l > 60_000, "{l}");
    }

    #[test]
    fn rfc9260_defaults_match_section_16() {
        let c = Config::rfc9260();
        assert_eq!(c.rto_initial, Duration::from_secs(1));
        assert_eq!(c.rto_min, Duration::from_secs(1));
        assert_eq!(c.rto_max, Duration::from_secs(60));
        assert_eq!(c.max_init_retransmits, 8);
        assert_eq!(c.assoc_max_retrans, 10);
        assert_eq!(c.path_max_retrans, 5);
        assert_eq!(c.fast_retransmit_threshold, 3);
        assert_eq!(c.max_burst, 4);
        assert!(c.validate().is_ok());
    }

    #[test]
    fn lksctp_preset_uses_four_miss_indications() {
        assert_eq!(Config::lksctp_2_6_15().fast_retransmit_threshold, 4);
    }

    #[test]
    fn every_latency_mechanism_is_off_in_rfc9260_and_on_in_low_latency() {
        let base = Config::rfc9260();
        assert_eq!(base.early_retransmit, EarlyRetransmit::Off);
        assert!(!base.rto_restart && !base.tail_loss_probe && !base.pktdrop);
        assert!(!base.thin_fast_retransmit && !base.thin_linear_timeouts);
        assert!(!base.thin_redundant_bundling && !base.thin_immediate_sack);
        assert!(!base.thin_aggressive_bundling && base.thin_rto_min.is_none());
        assert_eq!(base.nagle, Nagle::Off);
        let ll = Config::low_latency();
        assert_eq!(ll.early_retransmit, EarlyRetransmit::Packets);
        assert!(ll.rto_restart && ll.tail_loss_probe && ll.pktdrop && ll.thin_immediate_sack);
        let sig = Config::signaling();
        assert_eq!(
            (sig.rto_min, sig.sack_delay),
            (Duration::from_millis(100), Duration::from_millis(40))
        );
        assert!(
            sig.validate().is_ok()
                && ll.validate().is_ok()
                && Config::thin_stream().validate().is_ok()
        );
    }

    #[test]
    fn every_knob_can_be_set_by_name_and_presets_are_found_by_name() {
        let mut c = Config::preset("lksctp-2.6.15").unwrap();
        assert_eq!(c.fast_retransmit_threshold, 4);
        for (k, v) in [
            ("rto_min", "200ms"),
            ("rto_max", "1.5s"),
            ("sack_delay", "40"),
            ("heartbeats", "off"),
            ("initial_cwnd", "9000"),
            ("mtu", "1452"),
        ] {
            c.set(k, v).unwrap();
        }
        assert_eq!(c.rto_min, Duration::from_millis(200));
        assert_eq!(c.rto_max, Duration::from_millis(1500));
        assert_eq!(c.sack_delay, Duration::from_millis(40));
        assert!(!c.heartbeats);
        assert_eq!((c.initial_cwnd, c.mtu), (Some(9000), 1452));
        for knob in KNOBS {
            let value = match *knob {
                "heartbeats" | "events" => "true",
                k if k.starts_with("thin_") && k != "thin_rto_min" && k != "thin_threshold" => {
                    "true"
                }
                "rto_restart" | "tail_loss_probe" | "pktdrop" | "early_retransmit_delay" => "true",
                "early_retransmit" => "packets",
                "nagle" => "minshall",
                "thin_rto_min" => "200ms",
                "initial_cwnd" => "none",
                k if k.contains("rto")
                    || k.contains("delay")
                    || k.contains("life")
                    || k.contains("interval") =>
                {
                    "1s"
                }
                _ => "1500",
            };
            assert!(c.set(knob, value).is_ok(), "{knob}");
        }
        assert_eq!(
            Config::preset("bogus").unwrap_err().to_string(),
            "unknown config preset `bogus`; known presets: rfc9260, lksctp-2.6.15, signaling, thin-stream, low-latency"
        );
        let err = c.set("rto_min", "fast").unwrap_err();
        assert_eq!(
            err.to_string(),
            "config knob `rto_min`: `fast` is not a duration such as 200ms or 1s"
        );
        assert!(matches!(
            c.set("nope", "1"),
            Err(ConfigError::UnknownKnob { .. })
        ));
        assert_eq!(parse_duration("800us"), Some(Duration::from_micros(800)));
        assert_eq!(parse_duration("-1s"), None);
    }

    #[test]
    fn validate_names_the_bad_field() {
        let c = Config {
            sack_delay: Duration::from_millis(600),
            ..Config::rfc9260()
        };
        assert_eq!(
            c.validate(),
            Err(ConfigError::Invalid {
                field: "sack_delay",
                expected: "at most 500 ms (RFC 9260 6.2)"
            })
        );
    }
}
