//! Every protocol knob, with named presets.
//!
//! Defaults follow RFC 9260 16 ("Suggested SCTP Protocol Parameter Values").
//! Latency mechanisms arrive as further options, all off in [`Config::rfc9260`],
//! so the standard behaviour stays the baseline experiments compare against.

use std::time::Duration;

pub use crate::tx::stream_scheduler::StreamScheduler;

/// Declares [`Config`], its knob table and its presets from one list, so that
/// each knob is written once: its name, type, unit, doc, default and the value
/// of every preset that changes it. [`Config::set`], [`Config::get`],
/// [`KNOBS`], [`KNOB_TABLE`], [`PRESETS`], [`PRESET_TABLE`],
/// [`Config::preset`], the named constructors ([`Config::rfc9260`], ...) and
/// `brisk knobs` all read this declaration.
///
/// A preset is the defaults with the values its knobs declare for it
/// (`#[presets(Signaling = ...)]`); no preset is built on another.
macro_rules! declare_config {
    (
        $(#[$meta:meta])*
        pub struct Config {
            $(
                $(#[doc = $doc:literal])*
                #[unit = $unit:literal]
                #[default = $default:expr]
                $(#[presets($($preset:ident = $value:expr),+ $(,)?)])?
                pub $field:ident: $ty:ty,
            )*
        }

        presets {
            $(
                $(#[doc = $preset_doc:literal])*
                #[name = $preset_name:literal]
                $id:ident => fn $constructor:ident,
            )*
        }
    ) => {
        $(#[$meta])*
        pub struct Config {
            $(
                $(#[doc = $doc])*
                pub $field: $ty,
            )*
        }

        /// Names of the knobs [`Config::set`] knows: the fields of [`Config`].
        pub const KNOBS: &[&str] = &[$(stringify!($field)),*];

        /// Every knob of [`Config`], in declaration order: name, unit, doc, and
        /// how to read and write its value as text.
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

        /// The presets, as the knobs' `#[presets(...)]` name them.
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        enum PresetId {
            $($id),*
        }

        /// Names of the presets [`Config::preset`] knows, in declaration order.
        pub const PRESETS: &[&str] = &[$($preset_name),*];

        /// Every preset of [`Config`], in declaration order: name, doc and
        /// its configuration.
        pub const PRESET_TABLE: &[Preset] = &[$(
            Preset {
                name: $preset_name,
                doc: concat!($($preset_doc),*),
                config: Config::$constructor,
            }
        ),*];

        impl Config {
            /// Every knob at its declared default.
            fn declared_defaults() -> Self {
                Self {
                    $($field: $default),*
                }
            }

            /// `self` with every value the knobs declare for `preset`.
            fn with_preset(mut self, preset: PresetId) -> Self {
                $($($(
                    if preset == PresetId::$preset {
                        self.$field = $value;
                    }
                )+)?)*
                self
            }

            $(
                $(#[doc = $preset_doc])*
                pub fn $constructor() -> Self {
                    Self::declared_defaults().with_preset(PresetId::$id)
                }
            )*
        }
    };
}

declare_config! {
    /// Configuration of one association.
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub struct Config {
        // --- Timers (RFC 9260 6.3, 16) ---
        /// RTO before the first RTT measurement.
        #[unit = "duration"]
        #[default = Duration::from_secs(1)]
        #[presets(Signaling = Duration::from_millis(200))]
        pub rto_initial: Duration,
        /// Lower bound of RTO (RFC 9260 6.3.1 C6).
        #[unit = "duration"]
        #[default = Duration::from_secs(1)]
        #[presets(
            Signaling = Duration::from_millis(100),
            LowLatency = Duration::from_millis(200),
        )]
        pub rto_min: Duration,
        /// Upper bound of RTO, also of its back-off (C7, E2).
        #[unit = "duration"]
        #[default = Duration::from_secs(60)]
        #[presets(Signaling = Duration::from_millis(400))]
        pub rto_max: Duration,
        /// INIT and COOKIE ECHO retransmissions before giving up (5.1).
        #[unit = "count"]
        #[default = 8]
        pub max_init_retransmits: u32,
        /// Consecutive unanswered retransmissions or heartbeats before the
        /// association is considered unreachable (8.1).
        #[unit = "count"]
        #[default = 10]
        pub assoc_max_retrans: u32,
        /// A destination whose consecutive errors (T3 expiries, unanswered
        /// heartbeats) exceed this is marked inactive and data moves to another
        /// (8.2). The association fails at `assoc_max_retrans`, counted across
        /// its destinations (8.1).
        #[unit = "count"]
        #[default = 5]
        pub path_max_retrans: u32,
        /// SCTP-PF quick failover (RFC 7829): a destination whose errors exceed
        /// `pf_max_retrans` is potentially failed: new data and timed-out chunks
        /// go to another destination at once, and heartbeats probe it every RTO
        /// until one comes back.
        #[unit = "true|false"]
        #[default = false]
        #[presets(Signaling = true, LowLatency = true)]
        pub potentially_failed: bool,
        /// PotentiallyFailed.Max.Retrans (RFC 7829 3.2): errors a destination may
        /// have before it is potentially failed; 0 fails over on the first timeout.
        #[unit = "count"]
        #[default = 0]
        pub pf_max_retrans: u32,
        /// Primary.Switchover.Max.Retrans (RFC 7829 5): a primary whose errors
        /// exceed this is replaced for good by the destination data moved to;
        /// `none`: data switches back to the primary once it answers again.
        #[unit = "count|none"]
        #[default = None]
        pub primary_switchover: Option<u32>,
        /// Lifetime of the state cookie we hand out (5.1.3).
        #[unit = "duration"]
        #[default = Duration::from_secs(60)]
        pub valid_cookie_life: Duration,
        /// Timers fire on the next tick of this period, as in a kernel with a
        /// periodic clock (0: exactly on time; Linux at HZ 250 ticks every 4 ms).
        #[unit = "duration"]
        #[default = Duration::ZERO]
        pub timer_granularity: Duration,
        /// Heartbeats on idle paths (8.3).
        #[unit = "true|false"]
        #[default = true]
        pub heartbeats: bool,
        /// Added to RTO (with jitter) between heartbeats on an idle path.
        #[unit = "duration"]
        #[default = Duration::from_secs(30)]
        pub hb_interval: Duration,
        /// HB.Max.Burst (RFC 9260 5.4, 16): HEARTBEATs to unconfirmed
        /// addresses in flight at once, across all of them, each for one RTO
        /// at most: a peer listing addresses it does not own gets at most this
        /// many probes per RTO sent to them.
        #[unit = "count"]
        #[default = 1]
        pub hb_max_burst: u32,

        // --- Acknowledgement (RFC 9260 6.2) ---
        /// Delay of a delayed SACK (at most 500 ms).
        #[unit = "duration"]
        #[default = Duration::from_millis(200)]
        #[presets(Signaling = Duration::from_millis(40))]
        pub sack_delay: Duration,
        /// SACK at least every this many packets carrying DATA (2; 1 disables delayed SACK).
        #[unit = "packets"]
        #[default = 2]
        pub sack_freq: u32,
        /// Receiver: SACK at once for DATA with the I bit set (RFC 7053, in
        /// RFC 9260 6.2). Off models receivers older than RFC 7053, such as
        /// Linux 2.6.15, which ignore the bit.
        #[unit = "true|false"]
        #[default = true]
        // Linux 2.6.15 (2006) predates RFC 7053's I bit.
        #[presets(Lksctp2615 = false)]
        pub honor_i_bit: bool,
        /// Sender: the longest the peer may delay a SACK of DATA sent without the
        /// I bit (for `ack_reach_floor`); `none`: our own `sack_delay` (both ends
        /// configured alike).
        #[unit = "duration|none"]
        #[default = None]
        pub peer_sack_delay: Option<Duration>,

        // --- Loss recovery (RFC 9260 7.2.4) ---
        /// Miss indications that trigger fast retransmit: 3 in RFC 9260, 4 in
        /// RFC 2960 and Linux lksctp 2.6.15, the baseline of the research we reproduce.
        #[unit = "count"]
        #[default = 3]
        #[presets(Lksctp2615 = 4)]
        pub fast_retransmit_threshold: u32,
        /// Fast-retransmit a chunk again when SACKs for data sent after its
        /// retransmission report it missing `fast_retransmit_threshold` times:
        /// its retransmission was lost too. RFC 9260 7.2.4 allows one fast
        /// retransmit per chunk and leaves a lost retransmission to T3, which
        /// stalls an ordered stream for an RTO; RACK (RFC 8985 6.2) finds lost
        /// retransmissions by the same evidence (ours, for SCTP).
        #[unit = "true|false"]
        #[default = false]
        #[presets(LowLatency = true)]
        pub lost_retransmission_detection: bool,

        // --- Congestion and flow control (RFC 9260 6.1, 7.2) ---
        /// New-data packets one transmission opportunity may send (0 = no limit).
        #[unit = "packets"]
        #[default = 4]
        pub max_burst: u32,
        /// Initial cwnd in bytes; `none`: RFC 9260 7.2.1's min(4*MTU, max(2*MTU, 4404)).
        #[unit = "bytes|none"]
        #[default = None]
        pub initial_cwnd: Option<u32>,
        /// Congestion controller of each path: `rfc9260`, RFC 9260 7.2's (slow
        /// start, congestion avoidance, halving on loss); `cubic` (RFC 9438:
        /// 0.7 on loss, the cubic curve back to the last maximum); `bbr`, a
        /// BBR v1-like model of bottleneck bandwidth and min RTT
        /// (draft-cardwell-iccrg-bbr-congestion-control) that keeps cwnd through
        /// random loss, without a pacer (`cc/bbr.rs`).
        #[unit = "rfc9260|cubic|bbr"]
        #[default = CongestionAlgorithm::Rfc9260]
        #[presets(LowLatency = CongestionAlgorithm::Bbr)]
        pub congestion_control: CongestionAlgorithm,
        /// RFC 7661 congestion window validation: a window in use by at
        /// least half (pipeACK) may grow though not full, an unused one is
        /// kept (no idle decay) for five minutes, and a loss while
        /// rate-limited cuts from what was in use.
        #[unit = "true|false"]
        #[default = false]
        pub cwnd_validation: bool,
        /// Largest SCTP packet (common header included) we send: the path MTU less
        /// the IP and, with RFC 6951 encapsulation, UDP headers. The default, 1452,
        /// fits a 1500-byte path with IPv6 and UDP headers (1472 would be the IPv4
        /// figure, which usrsctp assumes). Under DTLS (RFC 8261), or any datagram
        /// transport that wraps each packet, subtract its per-record overhead too.
        #[unit = "bytes"]
        #[default = 1452]
        pub mtu: usize,
        /// Our receive buffer, advertised as a_rwnd.
        #[unit = "bytes"]
        #[default = 1 << 20]
        pub receive_buffer: u32,
        /// Bytes the application may queue before `send` is refused.
        #[unit = "bytes"]
        #[default = 4 << 20]
        pub send_buffer: usize,
        /// Largest user message we send or accept.
        #[unit = "bytes"]
        #[default = 256 << 10]
        pub max_message_size: usize,

        // --- Streams (RFC 9260 5.1.1) ---
        /// Outbound streams we ask for.
        #[unit = "streams"]
        #[default = 16]
        pub outbound_streams: u16,
        /// Inbound streams we accept at most.
        #[unit = "streams"]
        #[default = 16]
        pub max_inbound_streams: u16,
        /// Stream scheduler (RFC 8260 3): first come first served, round robin
        /// per message, round robin per packet, strict priority, or weighted
        /// fair queueing; per-stream priorities and weights are set at run time
        /// (`Association::set_stream_priority`, `set_stream_weight`).
        #[unit = "fcfs|rr|rr-packet|priority|wfq"]
        #[default = StreamScheduler::RoundRobin]
        pub stream_scheduler: StreamScheduler,

        // --- Latency mechanisms (all off by default, in `rfc9260()`) ---
        /// Early Retransmit (RFC 5827): byte-based (3.1) or packet-based (3.2,
        /// seed 000's modification).
        #[unit = "off|bytes|packets"]
        #[default = EarlyRetransmit::Off]
        #[presets(
            Signaling = EarlyRetransmit::Packets,
            LowLatency = EarlyRetransmit::Packets,
        )]
        pub early_retransmit: EarlyRetransmit,
        /// Delay an early retransmission by max(SRTT/4, 2 ms), cancelled if a SACK
        /// resolves it (reordering mitigation, RFC 5827 6).
        #[unit = "true|false"]
        #[default = false]
        pub early_retransmit_delay: bool,
        /// RTO restart (RFC 7765): with fewer than 4 packets outstanding and no unsent
        /// data, restart T3 at RTO less the age of the earliest outstanding chunk.
        #[unit = "true|false"]
        #[default = false]
        #[presets(Signaling = true, ThinStream = true, LowLatency = true)]
        pub rto_restart: bool,
        /// Detect spurious T3 expirations from the SACKs that follow (F-RTO,
        /// RFC 5682, for SCTP; duplicate TSNs, RFC 3708) and undo their cwnd
        /// collapse and RTO back-off (RFC 4015).
        #[unit = "true|false"]
        #[default = false]
        #[presets(Signaling = true, ThinStream = true, LowLatency = true)]
        pub spurious_timeout_undo: bool,
        /// RTO restart and a thin RTO.Min never arm T3 to expire before the
        /// earliest outstanding chunk's SACK can be back: its queueing behind
        /// the acknowledged packet and the peer's SACK delay (`recovery::ack_reach`).
        #[unit = "true|false"]
        #[default = false]
        #[presets(Signaling = true, ThinStream = true, LowLatency = true)]
        pub ack_reach_floor: bool,
        /// Thin-stream mode (seed 001) holds while fewer than this many packets are
        /// outstanding.
        #[unit = "packets"]
        #[default = 4]
        pub thin_threshold: u32,
        /// Thin: T3 expiry does not double RTO (linear timeouts, seed 001 4.2.2).
        #[unit = "true|false"]
        #[default = false]
        #[presets(ThinStream = true, LowLatency = true)]
        pub thin_linear_timeouts: bool,
        /// Thin: fast retransmit on the first miss indication (seed 001 4.3).
        #[unit = "true|false"]
        #[default = false]
        #[presets(ThinStream = true, LowLatency = true)]
        pub thin_fast_retransmit: bool,
        /// Thin: a lower RTO.Min (seed 001 uses 200 ms); `none`: `rto_min` holds.
        #[unit = "duration|none"]
        #[default = None]
        #[presets(
            ThinStream = Some(Duration::from_millis(200)),
            LowLatency = Some(Duration::from_millis(200)),
        )]
        pub thin_rto_min: Option<Duration>,
        /// Thin: a fast retransmission fills its packet with the earliest
        /// outstanding chunks (seed 001 4.4).
        #[unit = "true|false"]
        #[default = false]
        #[presets(ThinStream = true, LowLatency = true)]
        pub thin_aggressive_bundling: bool,
        /// Thin: new packets with room carry unacknowledged chunks in front of the
        /// new ones (redundant bundling, seed 001 4.4; cause `Bundled`).
        #[unit = "true|false"]
        #[default = false]
        #[presets(ThinStream = true, LowLatency = true)]
        pub thin_redundant_bundling: bool,
        /// Thin: set the I bit on DATA sent while thin, so a standard receiver
        /// SACKs at once (ours, not the seed's).
        #[unit = "true|false"]
        #[default = false]
        #[presets(ThinStream = true, LowLatency = true)]
        pub thin_immediate_sack: bool,
        /// Redundancy within a byte budget for streams that are not thin (Linux
        /// RDB, Opstad et al. LCN 2015; cause `Bundled`): the stream's bytes on the
        /// wire (IPv6, UDP and SCTP headers counted) stay within this percentage of
        /// what they would be without copies; 0 (or up to 100) is off. A new
        /// packet with room carries unacknowledged chunks, fewest copies and most
        /// recent first, while the budget allows, the sender is
        /// application-limited and the trigger (`redundancy_min_itt`) holds.
        #[unit = "percent"]
        #[default = 0]
        #[presets(LowLatency = 300)]
        pub redundancy_budget: u32,
        /// With `redundancy_budget`: copies only as many as keep a chunk's chance of
        /// losing every copy below this, at the loss rate the sender measures (losses
        /// found, and those copies repaired, told by the peer's Duplicate TSN reports);
        /// a path that loses nothing gets none. 0: the whole budget, loss or not.
        #[unit = "ppm"]
        #[default = 0]
        #[presets(LowLatency = 300)]
        pub redundancy_residual_loss: u32,
        /// The trigger of `redundancy_budget` (RDB's DPIFL, default 10 ms as Linux's):
        /// copies only while packets in flight < min RTT / this and the stream's
        /// smoothed inter-transmission time is at least this.
        #[unit = "duration"]
        #[default = Duration::from_millis(10)]
        pub redundancy_min_itt: Duration,
        /// With `redundancy_budget`, for a chunk too large to share a packet with
        /// another as large (a 1 KiB message at a 1452-byte MTU): a copy in a packet of
        /// its own half an ITT after it, if no packet carried a copy since, within the
        /// budget (headers counted) and its trigger (cause `Bundled`).
        #[unit = "true|false"]
        #[default = false]
        #[presets(LowLatency = true)]
        pub redundancy_copy_probe: bool,
        /// Tail loss probe adapted from RFC 8985 7 (cause `TailLossProbe`).
        #[unit = "true|false"]
        #[default = false]
        #[presets(LowLatency = true)]
        pub tail_loss_probe: bool,
        /// RACK-TLP for SCTP (RFC 8985): a chunk is lost once a chunk sent
        /// after it was acknowledged and RACK.rtt plus a reordering window
        /// (min_RTT/4, grown by Duplicate TSN reports) has passed, with a
        /// reordering timer; and a tail loss probe SRTT + max(SRTT/4, 2 ms)
        /// after the latest packet in flight left, that sets the I bit (RFC
        /// 7053), as does the last DATA packet before the sender goes idle; the
        /// peer's SACK delay is added only once the peer is seen to ignore the
        /// I bit. The probe is on whatever `tail_loss_probe` says, with this
        /// timing.
        #[unit = "true|false"]
        #[default = false]
        #[presets(LowLatency = true)]
        pub rack: bool,
        /// Nagle's algorithm for messages: off (SCTP_NODELAY), classic, or
        /// Minshall's (hold a small packet only while a small one is unacknowledged).
        #[unit = "off|classic|minshall"]
        #[default = Nagle::Off]
        pub nagle: Nagle,
        /// PKTDROP (draft-stewart-sctp-pktdrprep): offered in INIT/INIT ACK; used
        /// only with a peer that offers it too.
        #[unit = "true|false"]
        #[default = false]
        #[presets(LowLatency = true)]
        pub pktdrop: bool,
        /// Partial reliability (RFC 3758): Forward-TSN-Supported offered in
        /// INIT/INIT ACK. A message sent with a lifetime or a retransmission
        /// limit (RFC 7496) is abandoned, and skipped with FORWARD TSN, only
        /// with a peer that offers it too; otherwise it is sent reliably.
        #[unit = "true|false"]
        #[default = false]
        pub partial_reliability: bool,
        /// Stream reconfiguration (RFC 6525): RE-CONFIG listed in Supported
        /// Extensions in INIT/INIT ACK. Streams are reset or added
        /// (`Association::reset_streams`, `add_streams`) only with a peer
        /// that lists it too; otherwise its requests are denied.
        #[unit = "true|false"]
        #[default = false]
        pub stream_reconfig: bool,
        /// Message interleaving (RFC 8260): I-DATA (and I-FORWARD-TSN with partial
        /// reliability) offered in INIT/INIT ACK; with a peer that offers it too, all
        /// user data goes as I-DATA and the scheduler may switch streams between fragments.
        #[unit = "true|false"]
        #[default = false]
        pub message_interleaving: bool,

        // --- Observability ---
        /// Record per-message and per-retransmission events (`Event::MessageAcked`,
        /// `Event::Retransmission`). Counters in `Stats` are kept regardless.
        #[unit = "true|false"]
        #[default = true]
        pub events: bool,
    }

    presets {
        /// The RFC 9260 baseline: the suggested values of RFC 9260 16, no latency
        /// mechanism switched on. Every knob at its default.
        #[name = "rfc9260"]
        Rfc9260 => fn rfc9260,
        /// Linux lksctp of kernel 2.6.15, the "Standard" of seeds 000 and 001:
        /// fast retransmit after four miss indications (RFC 2960); otherwise RFC 9260.
        #[name = "lksctp-2.6.15"]
        Lksctp2615 => fn lksctp_2_6_15,
        /// Seed 000's signaling setup: its timer values (RTO.Initial 200 ms,
        /// RTO.Min 100 ms, RTO.Max 400 ms, SACK delay 40 ms) with packet-based Early
        /// Retransmit and RTO restart.
        #[name = "signaling"]
        Signaling => fn signaling,
        /// Seed 001's thin-stream mode, every piece on, for a thin stream talking to
        /// a standard receiver: the I bit replaces the seed's receiver change.
        #[name = "thin-stream"]
        ThinStream => fn thin_stream,
        /// Everything that helps timely delivery, on: packet-based Early
        /// Retransmit, RTO restart, thin-stream mode, RACK-TLP, lost retransmission
        /// detection, Nagle off, PKTDROP, the BBR-like controller, RTO.Min 200 ms,
        /// and copies within a 300% budget where the loss measured calls for them.
        #[name = "low-latency"]
        LowLatency => fn low_latency,
    }
}

/// One knob of [`Config`], as declared: its name, the unit (or the words) its
/// values take, its doc, and its value as text in the syntax [`Config::set`]
/// accepts.
#[derive(Debug, Clone, Copy)]
pub struct Knob {
    /// The field's name, which [`Config::set`] and [`Config::get`] take.
    pub name: &'static str,
    /// What a value is: `duration`, `bytes`, `packets`, `streams`, `count`,
    /// `true|false`, or the words it takes (`off|bytes|packets`); `|none`
    /// where it may be unset.
    pub unit: &'static str,
    /// The field's documentation, its lines joined.
    pub doc: &'static str,
    get: fn(&Config) -> String,
    set: fn(&mut Config, &str) -> Result<(), &'static str>,
}

impl Knob {
    /// Finds a knob by name, or by its dotted alias in a group of
    /// [`KNOB_GROUPS`]: `thin.rto_min` is `thin_rto_min`,
    /// `early_retransmit.delay` is `early_retransmit_delay`.
    pub fn named(name: &str) -> Option<&'static Knob> {
        let flat = |name: &str| KNOB_TABLE.iter().find(|k| k.name == name);
        flat(name).or_else(|| {
            let (group, rest) = name.split_once('.')?;
            KNOB_GROUPS
                .contains(&group)
                .then(|| flat(&format!("{group}_{rest}")))
                .flatten()
        })
    }

    /// The knob's value in `config`, as [`Config::set`] accepts it.
    pub fn get(&self, config: &Config) -> String {
        (self.get)(config)
    }

    /// The first sentence of the doc, on one line.
    pub fn summary(&self) -> String {
        first_sentence(self.doc)
    }

    /// The knob's default value (its value in [`Config::rfc9260`]), as
    /// [`Config::set`] accepts it.
    pub fn default_value(&self) -> String {
        self.get(&Config::rfc9260())
    }
}

/// Knob groups, whose knobs also answer to a dotted name: the group, a dot,
/// and the rest of the knob's name (`thin.rto_min` for `thin_rto_min`).
pub const KNOB_GROUPS: &[&str] = &["thin", "early_retransmit"];

/// One named preset of [`Config`], as declared: its name, its doc, and the
/// configuration it stands for (the defaults, with the values the knobs
/// declare for it).
#[derive(Debug, Clone, Copy)]
pub struct Preset {
    /// The name [`Config::preset`] takes, such as `lksctp-2.6.15`.
    pub name: &'static str,
    /// The preset's documentation, its lines joined.
    pub doc: &'static str,
    config: fn() -> Config,
}

impl Preset {
    /// Finds a preset by name.
    pub fn named(name: &str) -> Option<&'static Preset> {
        PRESET_TABLE.iter().find(|p| p.name == name)
    }

    /// The preset's configuration.
    pub fn config(&self) -> Config {
        (self.config)()
    }

    /// The first sentence of the doc, on one line.
    pub fn summary(&self) -> String {
        first_sentence(self.doc)
    }

    /// The knobs whose value in this preset differs from their default, in
    /// declaration order.
    pub fn changes(&self) -> Vec<&'static str> {
        let (config, defaults) = (self.config(), Config::rfc9260());
        KNOB_TABLE
            .iter()
            .filter(|k| k.get(&config) != k.get(&defaults))
            .map(|k| k.name)
            .collect()
    }
}

/// The first sentence of a doc, on one line.
fn first_sentence(doc: &str) -> String {
    let doc = doc.split_whitespace().collect::<Vec<_>>().join(" ");
    match doc.find(". ") {
        Some(end) => doc[..=end].to_owned(),
        None => doc,
    }
}

/// A knob's value type: parsed from text, rendered back in the same syntax.
trait KnobValue: Sized {
    /// The value, or what was expected instead (completing "is not ...").
    fn parse(text: &str) -> Result<Self, &'static str>;
    fn render(&self) -> String;
}

const DURATION: &str = "a duration such as 200ms or 1s";

fn whole_number(text: &str) -> Result<u64, &'static str> {
    text.trim().parse::<u64>().map_err(|_| "a whole number")
}

impl KnobValue for Duration {
    fn parse(text: &str) -> Result<Self, &'static str> {
        parse_duration(text).ok_or(DURATION)
    }
    fn render(&self) -> String {
        format_duration(*self)
    }
}

impl KnobValue for u32 {
    fn parse(text: &str) -> Result<Self, &'static str> {
        u32::try_from(whole_number(text)?).map_err(|_| "a 32-bit number")
    }
    fn render(&self) -> String {
        self.to_string()
    }
}

impl KnobValue for u16 {
    fn parse(text: &str) -> Result<Self, &'static str> {
        u16::try_from(whole_number(text)?).map_err(|_| "a 16-bit number")
    }
    fn render(&self) -> String {
        self.to_string()
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
            _ => match whole_number(text) {
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
            _ => parse_duration(text)
                .map(Some)
                .ok_or("none or a duration such as 200ms or 1s"),
        }
    }
    fn render(&self) -> String {
        self.map_or_else(|| "none".to_owned(), format_duration)
    }
}

impl KnobValue for EarlyRetransmit {
    fn parse(text: &str) -> Result<Self, &'static str> {
        match text.trim() {
            "off" | "none" => Ok(EarlyRetransmit::Off),
            "bytes" => Ok(EarlyRetransmit::Bytes),
            "packets" => Ok(EarlyRetransmit::Packets),
            _ => Err("off, bytes or packets"),
        }
    }
    fn render(&self) -> String {
        match self {
            EarlyRetransmit::Off => "off",
            EarlyRetransmit::Bytes => "bytes",
            EarlyRetransmit::Packets => "packets",
        }
        .to_owned()
    }
}

impl KnobValue for Nagle {
    fn parse(text: &str) -> Result<Self, &'static str> {
        match text.trim() {
            "off" => Ok(Nagle::Off),
            "classic" => Ok(Nagle::Classic),
            "minshall" => Ok(Nagle::Minshall),
            _ => Err("off, classic or minshall"),
        }
    }
    fn render(&self) -> String {
        match self {
            Nagle::Off => "off",
            Nagle::Classic => "classic",
            Nagle::Minshall => "minshall",
        }
        .to_owned()
    }
}

impl KnobValue for StreamScheduler {
    fn parse(text: &str) -> Result<Self, &'static str> {
        match text.trim() {
            "fcfs" => Ok(StreamScheduler::Fcfs),
            "rr" => Ok(StreamScheduler::RoundRobin),
            "rr-packet" => Ok(StreamScheduler::RoundRobinPacket),
            "priority" => Ok(StreamScheduler::Priority),
            "wfq" => Ok(StreamScheduler::Wfq),
            _ => Err("fcfs, rr, rr-packet, priority or wfq"),
        }
    }
    fn render(&self) -> String {
        match self {
            StreamScheduler::Fcfs => "fcfs",
            StreamScheduler::RoundRobin => "rr",
            StreamScheduler::RoundRobinPacket => "rr-packet",
            StreamScheduler::Priority => "priority",
            StreamScheduler::Wfq => "wfq",
        }
        .to_owned()
    }
}

/// Congestion controllers a path may run (`cc/`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum CongestionAlgorithm {
    /// RFC 9260 7.2: slow start, congestion avoidance, halving on loss.
    Rfc9260,
    /// RFC 9438 CUBIC.
    Cubic,
    /// BBR v1-like (draft-cardwell-iccrg-bbr-congestion-control): cwnd from
    /// the measured bandwidth and min RTT; loss lowers it only on T3 or
    /// above a 20% loss rate.
    Bbr,
}

impl KnobValue for CongestionAlgorithm {
    fn parse(text: &str) -> Result<Self, &'static str> {
        match text.trim() {
            "rfc9260" => Ok(CongestionAlgorithm::Rfc9260),
            "cubic" => Ok(CongestionAlgorithm::Cubic),
            "bbr" => Ok(CongestionAlgorithm::Bbr),
            _ => Err("rfc9260, cubic or bbr"),
        }
    }
    fn render(&self) -> String {
        match self {
            CongestionAlgorithm::Rfc9260 => "rfc9260",
            CongestionAlgorithm::Cubic => "cubic",
            CongestionAlgorithm::Bbr => "bbr",
        }
        .to_owned()
    }
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
    /// The largest message this side can receive: `max_message_size`, or less
    /// when the receive buffer cannot hold it whole. A message is held until
    /// its last fragment arrives (no partial delivery), each fragment charged
    /// 256 bytes of bookkeeping (`rx::window`), within `receive_buffer` plus
    /// the one-chunk allowance; assumed cut at this side's MTU, in I-DATA
    /// chunks (RFC 8260 2.1: 4 bytes more header each) when
    /// `message_interleaving` is on. A larger one ends the association with a
    /// reason that says so.
    pub fn largest_message_received(&self) -> usize {
        let f = if self.message_interleaving {
            self.mtu.saturating_sub(12 + 20).max(1)
        } else {
            self.max_data_payload()
        };
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

    /// The peer's SACK delay this sender assumes: `peer_sack_delay`, or our own.
    pub fn assumed_peer_sack_delay(&self) -> Duration {
        self.peer_sack_delay.unwrap_or(self.sack_delay)
    }

    /// Largest DATA payload that fits one packet: MTU less the common header
    /// and the DATA chunk header.
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
        if self
            .peer_sack_delay
            .is_some_and(|d| d > Duration::from_millis(500))
        {
            return fail("peer_sack_delay", "at most 500 ms (RFC 9260 6.2)");
        }
        if self.hb_max_burst == 0 {
            return fail("hb_max_burst", "at least 1 (RFC 9260 5.4)");
        }
        if self.sack_freq == 0 {
            return fail("sack_freq", "at least 1");
        }
        if self.redundancy_min_itt.is_zero() {
            return fail("redundancy_min_itt", "greater than zero");
        }
        if self.redundancy_residual_loss > 1_000_000 {
            return fail("redundancy_residual_loss", "at most 1000000 ppm");
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
        if self.outbound_streams == 0 {
            return fail("outbound_streams", "at least 1");
        }
        if self.max_inbound_streams == 0 {
            return fail("max_inbound_streams", "at least 1");
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
    #[error(
        "unknown config knob `{key}`{hint}; `brisk knobs` lists every knob",
        hint = did_you_mean(.suggestions)
    )]
    UnknownKnob {
        key: String,
        /// The knobs whose names are closest to `key`, best first.
        suggestions: Vec<&'static str>,
    },
    #[error("config knob `{key}`: `{value}` is not {expected}")]
    BadValue {
        key: String,
        value: String,
        expected: &'static str,
    },
}

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
    /// A named preset: one of [`PRESETS`].
    pub fn preset(name: &str) -> Result<Config, ConfigError> {
        Preset::named(name)
            .map(Preset::config)
            .ok_or_else(|| ConfigError::UnknownPreset {
                name: name.to_owned(),
                known: PRESETS.join(", "),
            })
    }

    /// Sets one knob by name from text: durations as `250ms`/`1s`, numbers,
    /// `true`/`false`, the words of the knob's unit (`packets`, `minshall`),
    /// and `none` for a knob that may be unset. [`KNOB_TABLE`] lists them.
    pub fn set(&mut self, key: &str, value: &str) -> Result<(), ConfigError> {
        let Some(knob) = Knob::named(key) else {
            return Err(ConfigError::UnknownKnob {
                key: key.to_owned(),
                suggestions: closest_knobs(key),
            });
        };
        (knob.set)(self, value).map_err(|expected| ConfigError::BadValue {
            key: key.to_owned(),
            value: value.to_owned(),
            expected,
        })
    }

    /// One knob's value by name, in the syntax [`Config::set`] accepts
    /// (`200ms`, `none`, `packets`, ...); `None` for an unknown name.
    pub fn get(&self, key: &str) -> Option<String> {
        Knob::named(key).map(|knob| knob.get(self))
    }
}

/// Renders a duration as [`parse_duration`] reads it: the largest unit of `s`,
/// `ms` and `us` that holds it whole (`1s`, `200ms`, `800us`, `1.5us`).
pub fn format_duration(d: Duration) -> String {
    let ns = d.as_nanos();
    if ns == 0 {
        "0ms".to_owned()
    } else if ns % 1_000_000_000 == 0 {
        format!("{}s", ns / 1_000_000_000)
    } else if ns % 1_000_000 == 0 {
        format!("{}ms", ns / 1_000_000)
    } else if ns % 1_000 == 0 {
        format!("{}us", ns / 1_000)
    } else {
        let frac = format!("{:03}", ns % 1_000);
        format!("{}.{}us", ns / 1_000, frac.trim_end_matches('0'))
    }
}

/// The knobs a mistyped name most likely meant: those within a few edits of it
/// (case, and `-` or `.` for `_`, ignored), or else those it is part of, at
/// most three.
fn closest_knobs(key: &str) -> Vec<&'static str> {
    let key = key.trim().to_ascii_lowercase().replace(['-', '.'], "_");
    if key.is_empty() {
        return Vec::new();
    }
    let limit = (key.chars().count() / 3).max(2);
    let mut near: Vec<(usize, &'static str)> = KNOBS
        .iter()
        .map(|&name| (edit_distance(&key, name), name))
        .filter(|&(d, _)| d <= limit)
        .collect();
    near.sort();
    if let Some(&(best, _)) = near.first() {
        near.retain(|&(d, _)| d == best);
    } else if key.len() >= 3 {
        near = KNOBS
            .iter()
            .filter(|name| name.contains(key.as_str()) || key.contains(*name))
            .map(|&name| (0, name))
            .collect();
    }
    near.into_iter().take(3).map(|(_, name)| name).collect()
}

/// Edit distance by characters, a swap of neighbours counting as one edit
/// (optimal string alignment), so `rto_mni` is nearer `rto_min` than `rto_max`.
fn edit_distance(a: &str, b: &str) -> usize {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    // d[i][j]: the distance between the first i characters of a and j of b.
    let mut d = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in d.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, cell) in d[0].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let substitute = d[i - 1][j - 1] + usize::from(a[i - 1] != b[j - 1]);
            let mut best = substitute.min(d[i - 1][j] + 1).min(d[i][j - 1] + 1);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                best = best.min(d[i - 2][j - 2] + 1);
            }
            d[i][j] = best;
        }
    }
    d[a.len()][b.len()]
}

/// ` (did you mean `a`?)`, or nothing without suggestions.
fn did_you_mean(suggestions: &[&str]) -> String {
    let quoted: Vec<String> = suggestions.iter().map(|s| format!("`{s}`")).collect();
    match quoted.as_slice() {
        [] => String::new(),
        [one] => format!(" (did you mean {one}?)"),
        [rest @ .., last] => format!(" (did you mean {} or {last}?)", rest.join(", ")),
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
        // With interleaving the peer may cut it into I-DATA chunks, 4 bytes
        // of header more each (RFC 8260 2.1): still whole in the buffer.
        let idata = Config {
            message_interleaving: true,
            ..small
        };
        let li = idata.largest_message_received();
        let fi = idata.mtu - 12 - 20;
        assert!(li < l);
        assert!(crate::rx::window::held(li, li.div_ceil(fi)) <= room);
        assert!(crate::rx::window::held(l, l.div_ceil(fi)) > room);
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
        assert!(!base.spurious_timeout_undo && !base.ack_reach_floor);
        assert_eq!(base.redundancy_budget, 0, "redundancy off in rfc9260");
        assert!(!base.redundancy_copy_probe);
        assert!(!base.rack);
        assert_eq!(base.nagle, Nagle::Off);
        let ll = Config::low_latency();
        assert_eq!(ll.early_retransmit, EarlyRetransmit::Packets);
        assert!(ll.rto_restart && ll.tail_loss_probe && ll.pktdrop && ll.thin_immediate_sack);
        assert!(ll.spurious_timeout_undo && ll.ack_reach_floor);
        assert!(Config::signaling().ack_reach_floor && Config::thin_stream().ack_reach_floor);
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
                "heartbeats" | "events" | "honor_i_bit" => "true",
                k if k.starts_with("thin_") && k != "thin_rto_min" && k != "thin_threshold" => {
                    "true"
                }
                "rto_restart"
                | "potentially_failed"
                | "tail_loss_probe"
                | "rack"
                | "pktdrop"
                | "partial_reliability"
                | "stream_reconfig"
                | "message_interleaving"
                | "early_retransmit_delay"
                | "spurious_timeout_undo"
                | "lost_retransmission_detection"
                | "ack_reach_floor"
                | "cwnd_validation"
                | "redundancy_copy_probe" => "true",
                "early_retransmit" => "packets",
                "nagle" => "minshall",
                "stream_scheduler" => "wfq",
                "congestion_control" => "bbr",
                "redundancy_budget" => "200",
                "redundancy_min_itt" => "10ms",
                "redundancy_residual_loss" => "300",
                "thin_rto_min" => "200ms",
                "peer_sack_delay" => "40ms",
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

    /// Every preset, and one config with every knob away from its default
    /// (each enum's other words, `Some` where the default is `none`, odd
    /// durations).
    fn every_kind_of_value() -> Vec<(String, Config)> {
        let mut configs: Vec<(String, Config)> = PRESETS
            .iter()
            .map(|&p| (p.to_owned(), Config::preset(p).unwrap()))
            .collect();
        let odd = Config {
            rto_initial: Duration::from_micros(1500),
            rto_min: Duration::from_nanos(1_234_567),
            rto_max: Duration::from_secs(90),
            hb_interval: Duration::from_nanos(1),
            valid_cookie_life: Duration::ZERO,
            heartbeats: false,
            initial_cwnd: Some(9000),
            early_retransmit: EarlyRetransmit::Bytes,
            early_retransmit_delay: true,
            thin_rto_min: Some(Duration::from_millis(250)),
            redundancy_budget: 250,
            redundancy_min_itt: Duration::from_micros(7500),
            redundancy_copy_probe: true,
            nagle: Nagle::Minshall,
            stream_scheduler: StreamScheduler::Wfq,
            events: false,
            mtu: 9000,
            outbound_streams: u16::MAX,
            receive_buffer: u32::MAX,
            ..Config::low_latency()
        };
        configs.push(("odd".to_owned(), odd));
        configs.push((
            "classic".to_owned(),
            Config {
                nagle: Nagle::Classic,
                ..Config::rfc9260()
            },
        ));
        configs
    }

    #[test]
    fn get_renders_every_knob_of_every_preset_so_that_set_reads_it_back() {
        let configs = every_kind_of_value();
        for (from_name, from) in &configs {
            for (to_name, to) in &configs {
                // Start from another config, so that `set` has to change the value.
                let mut c = from.clone();
                for knob in KNOBS {
                    let text = to.get(knob).unwrap();
                    c.set(knob, &text)
                        .unwrap_or_else(|e| panic!("{to_name}: {knob} = {text}: {e}"));
                    assert_eq!(c.get(knob).as_deref(), Some(text.as_str()), "{knob}");
                }
                assert_eq!(&c, to, "{from_name} set to every knob of {to_name}");
            }
        }
        assert_eq!(Config::rfc9260().get("nope"), None);
    }

    #[test]
    fn get_uses_the_syntax_of_set() {
        let c = Config::signaling();
        let get = |k: &str| c.get(k).unwrap();
        assert_eq!(get("rto_initial"), "200ms");
        assert_eq!(get("rto_max"), "400ms");
        assert_eq!(get("hb_interval"), "30s");
        assert_eq!(get("early_retransmit"), "packets");
        assert_eq!(get("initial_cwnd"), "none");
        assert_eq!(get("thin_rto_min"), "none");
        assert_eq!(get("nagle"), "off");
        assert_eq!(get("rto_restart"), "true");
        assert_eq!(get("mtu"), "1452");
        assert_eq!(Config::thin_stream().get("thin_rto_min").unwrap(), "200ms");
        assert_eq!(format_duration(Duration::from_micros(800)), "800us");
        assert_eq!(format_duration(Duration::from_nanos(1_500)), "1.5us");
        assert_eq!(
            format_duration(Duration::from_nanos(1_234_567)),
            "1234.567us"
        );
        assert_eq!(format_duration(Duration::ZERO), "0ms");
    }

    #[test]
    fn every_knob_is_declared_once_with_a_unit_and_a_one_line_doc() {
        let names: Vec<&str> = KNOB_TABLE.iter().map(|k| k.name).collect();
        assert_eq!(names, KNOBS);
        assert_eq!(KNOBS.len(), 55);
        let unique: std::collections::BTreeSet<&str> = names.iter().copied().collect();
        assert_eq!(unique.len(), names.len());
        for k in KNOB_TABLE {
            let summary = k.summary();
            assert!(!k.unit.is_empty(), "{}", k.name);
            assert!(
                summary.ends_with('.') && !summary.contains('\n'),
                "{}: {summary}",
                k.name
            );
        }
        let mtu = Knob::named("mtu").unwrap();
        assert_eq!(mtu.unit, "bytes");
        assert_eq!(
            mtu.summary(),
            "Largest SCTP packet (common header included) we send: the path MTU less \
             the IP and, with RFC 6951 encapsulation, UDP headers."
        );
        assert_eq!(
            Knob::named("rto_min").unwrap().summary(),
            "Lower bound of RTO (RFC 9260 6.3.1 C6)."
        );
    }

    #[test]
    fn every_preset_is_declared_once_and_changes_only_the_knobs_that_name_it() {
        let names: Vec<&str> = PRESET_TABLE.iter().map(|p| p.name).collect();
        assert_eq!(names, PRESETS);
        for p in PRESET_TABLE {
            assert_eq!(Config::preset(p.name), Ok(p.config()), "{}", p.name);
            assert!(p.summary().ends_with('.'), "{}: {}", p.name, p.summary());
        }
        let changes = |name: &str| Preset::named(name).unwrap().changes();
        assert!(changes("rfc9260").is_empty());
        assert_eq!(Config::rfc9260(), Config::default());
        assert_eq!(
            changes("lksctp-2.6.15"),
            ["honor_i_bit", "fast_retransmit_threshold"]
        );
        assert_eq!(
            changes("signaling"),
            [
                "rto_initial",
                "rto_min",
                "rto_max",
                "potentially_failed",
                "sack_delay",
                "early_retransmit",
                "rto_restart",
                "spurious_timeout_undo",
                "ack_reach_floor"
            ]
        );
        assert_eq!(Knob::named("rto_min").unwrap().default_value(), "1s");
        assert_eq!(
            Preset::named("thin-stream").unwrap().summary(),
            "Seed 001's thin-stream mode, every piece on, for a thin stream talking to \
             a standard receiver: the I bit replaces the seed's receiver change."
        );
        assert!(Preset::named("bogus").is_none());
    }

    #[test]
    fn an_unknown_knob_names_the_closest_knobs_and_points_to_brisk_knobs() {
        let mut c = Config::rfc9260();
        let msg = |c: &mut Config, key: &str| c.set(key, "1").unwrap_err().to_string();
        assert_eq!(
            msg(&mut c, "sack_dely"),
            "unknown config knob `sack_dely` (did you mean `sack_delay`?); `brisk knobs` lists every knob"
        );
        assert_eq!(
            msg(&mut c, "RTO-Min"),
            "unknown config knob `RTO-Min` (did you mean `rto_min`?); `brisk knobs` lists every knob"
        );
        assert_eq!(
            msg(&mut c, "delay"),
            "unknown config knob `delay` (did you mean `sack_delay`, `peer_sack_delay` or \
             `early_retransmit_delay`?); `brisk knobs` lists every knob"
        );
        assert_eq!(
            msg(&mut c, "colour"),
            "unknown config knob `colour`; `brisk knobs` lists every knob"
        );
        assert_eq!(
            c.set("rto_mni", "1s"),
            Err(ConfigError::UnknownKnob {
                key: "rto_mni".into(),
                suggestions: vec!["rto_min"],
            })
        );
        assert_eq!(
            c.set("initial_cwnd", "lots").unwrap_err().to_string(),
            "config knob `initial_cwnd`: `lots` is not none or a whole number"
        );
        assert_eq!(
            c.set("nagle", "on").unwrap_err().to_string(),
            "config knob `nagle`: `on` is not off, classic or minshall"
        );
        assert_eq!(
            c.set("outbound_streams", "70000").unwrap_err().to_string(),
            "config knob `outbound_streams`: `70000` is not a 16-bit number"
        );
    }

    /// Every preset as `[name]` and one `knob=value` line per knob.
    fn render_presets() -> String {
        let mut out = String::new();
        for &name in PRESETS {
            let config = Config::preset(name).unwrap();
            out.push_str(&format!("[{name}]\n"));
            for knob in KNOB_TABLE {
                out.push_str(&format!("{}={}\n", knob.name, knob.get(&config)));
            }
        }
        out
    }

    /// Every knob of every preset, as the presets were before each knob
    /// carried its own preset values (issue 13): the declaration may change
    /// shape, never a value.
    const PINNED_PRESETS: &str = "\
[rfc9260]
rto_initial=1s
rto_min=1s
rto_max=60s
max_init_retransmits=8
assoc_max_retrans=10
path_max_retrans=5
potentially_failed=false
pf_max_retrans=0
primary_switchover=none
valid_cookie_life=60s
timer_granularity=0ms
heartbeats=true
hb_interval=30s
hb_max_burst=1
sack_delay=200ms
sack_freq=2
honor_i_bit=true
peer_sack_delay=none
fast_retransmit_threshold=3
lost_retransmission_detection=false
max_burst=4
initial_cwnd=none
congestion_control=rfc9260
cwnd_validation=false
mtu=1452
receive_buffer=1048576
send_buffer=4194304
max_message_size=262144
outbound_streams=16
max_inbound_streams=16
stream_scheduler=rr
early_retransmit=off
early_retransmit_delay=false
rto_restart=false
spurious_timeout_undo=false
ack_reach_floor=false
thin_threshold=4
thin_linear_timeouts=false
thin_fast_retransmit=false
thin_rto_min=none
thin_aggressive_bundling=false
thin_redundant_bundling=false
thin_immediate_sack=false
redundancy_budget=0
redundancy_residual_loss=0
redundancy_min_itt=10ms
redundancy_copy_probe=false
tail_loss_probe=false
rack=false
nagle=off
pktdrop=false
partial_reliability=false
stream_reconfig=false
message_interleaving=false
events=true
[lksctp-2.6.15]
rto_initial=1s
rto_min=1s
rto_max=60s
max_init_retransmits=8
assoc_max_retrans=10
path_max_retrans=5
potentially_failed=false
pf_max_retrans=0
primary_switchover=none
valid_cookie_life=60s
timer_granularity=0ms
heartbeats=true
hb_interval=30s
hb_max_burst=1
sack_delay=200ms
sack_freq=2
honor_i_bit=false
peer_sack_delay=none
fast_retransmit_threshold=4
lost_retransmission_detection=false
max_burst=4
initial_cwnd=none
congestion_control=rfc9260
cwnd_validation=false
mtu=1452
receive_buffer=1048576
send_buffer=4194304
max_message_size=262144
outbound_streams=16
max_inbound_streams=16
stream_scheduler=rr
early_retransmit=off
early_retransmit_delay=false
rto_restart=false
spurious_timeout_undo=false
ack_reach_floor=false
thin_threshold=4
thin_linear_timeouts=false
thin_fast_retransmit=false
thin_rto_min=none
thin_aggressive_bundling=false
thin_redundant_bundling=false
thin_immediate_sack=false
redundancy_budget=0
redundancy_residual_loss=0
redundancy_min_itt=10ms
redundancy_copy_probe=false
tail_loss_probe=false
rack=false
nagle=off
pktdrop=false
partial_reliability=false
stream_reconfig=false
message_interleaving=false
events=true
[signaling]
rto_initial=200ms
rto_min=100ms
rto_max=400ms
max_init_retransmits=8
assoc_max_retrans=10
path_max_retrans=5
potentially_failed=true
pf_max_retrans=0
primary_switchover=none
valid_cookie_life=60s
timer_granularity=0ms
heartbeats=true
hb_interval=30s
hb_max_burst=1
sack_delay=40ms
sack_freq=2
honor_i_bit=true
peer_sack_delay=none
fast_retransmit_threshold=3
lost_retransmission_detection=false
max_burst=4
initial_cwnd=none
congestion_control=rfc9260
cwnd_validation=false
mtu=1452
receive_buffer=1048576
send_buffer=4194304
max_message_size=262144
outbound_streams=16
max_inbound_streams=16
stream_scheduler=rr
early_retransmit=packets
early_retransmit_delay=false
rto_restart=true
spurious_timeout_undo=true
ack_reach_floor=true
thin_threshold=4
thin_linear_timeouts=false
thin_fast_retransmit=false
thin_rto_min=none
thin_aggressive_bundling=false
thin_redundant_bundling=false
thin_immediate_sack=false
redundancy_budget=0
redundancy_residual_loss=0
redundancy_min_itt=10ms
redundancy_copy_probe=false
tail_loss_probe=false
rack=false
nagle=off
pktdrop=false
partial_reliability=false
stream_reconfig=false
message_interleaving=false
events=true
[thin-stream]
rto_initial=1s
rto_min=1s
rto_max=60s
max_init_retransmits=8
assoc_max_retrans=10
path_max_retrans=5
potentially_failed=false
pf_max_retrans=0
primary_switchover=none
valid_cookie_life=60s
timer_granularity=0ms
heartbeats=true
hb_interval=30s
hb_max_burst=1
sack_delay=200ms
sack_freq=2
honor_i_bit=true
peer_sack_delay=none
fast_retransmit_threshold=3
lost_retransmission_detection=false
max_burst=4
initial_cwnd=none
congestion_control=rfc9260
cwnd_validation=false
mtu=1452
receive_buffer=1048576
send_buffer=4194304
max_message_size=262144
outbound_streams=16
max_inbound_streams=16
stream_scheduler=rr
early_retransmit=off
early_retransmit_delay=false
rto_restart=true
spurious_timeout_undo=true
ack_reach_floor=true
thin_threshold=4
thin_linear_timeouts=true
thin_fast_retransmit=true
thin_rto_min=200ms
thin_aggressive_bundling=true
thin_redundant_bundling=true
thin_immediate_sack=true
redundancy_budget=0
redundancy_residual_loss=0
redundancy_min_itt=10ms
redundancy_copy_probe=false
tail_loss_probe=false
rack=false
nagle=off
pktdrop=false
partial_reliability=false
stream_reconfig=false
message_interleaving=false
events=true
[low-latency]
rto_initial=1s
rto_min=200ms
rto_max=60s
max_init_retransmits=8
assoc_max_retrans=10
path_max_retrans=5
potentially_failed=true
pf_max_retrans=0
primary_switchover=none
valid_cookie_life=60s
timer_granularity=0ms
heartbeats=true
hb_interval=30s
hb_max_burst=1
sack_delay=200ms
sack_freq=2
honor_i_bit=true
peer_sack_delay=none
fast_retransmit_threshold=3
lost_retransmission_detection=true
max_burst=4
initial_cwnd=none
congestion_control=bbr
cwnd_validation=false
mtu=1452
receive_buffer=1048576
send_buffer=4194304
max_message_size=262144
outbound_streams=16
max_inbound_streams=16
stream_scheduler=rr
early_retransmit=packets
early_retransmit_delay=false
rto_restart=true
spurious_timeout_undo=true
ack_reach_floor=true
thin_threshold=4
thin_linear_timeouts=true
thin_fast_retransmit=true
thin_rto_min=200ms
thin_aggressive_bundling=true
thin_redundant_bundling=true
thin_immediate_sack=true
redundancy_budget=300
redundancy_residual_loss=300
redundancy_min_itt=10ms
redundancy_copy_probe=true
tail_loss_probe=true
rack=true
nagle=off
pktdrop=true
partial_reliability=false
stream_reconfig=false
message_interleaving=false
events=true
";

    #[test]
    fn every_preset_keeps_every_knob_value_it_had() {
        let got = render_presets();
        for (line, (got, want)) in got.lines().zip(PINNED_PRESETS.lines()).enumerate() {
            assert_eq!(got, want, "line {}", line + 1);
        }
        assert_eq!(got, PINNED_PRESETS);
    }

    #[test]
    fn grouped_knobs_answer_to_dotted_names_too() {
        let mut c = Config::rfc9260();
        c.set("thin.rto_min", "200ms").unwrap();
        c.set("early_retransmit.delay", "true").unwrap();
        assert_eq!(c.thin_rto_min, Some(Duration::from_millis(200)));
        assert!(c.early_retransmit_delay);
        assert_eq!(c.get("thin.rto_min"), c.get("thin_rto_min"));
        assert_eq!(c.get("thin.threshold").as_deref(), Some("4"));
        // Only the declared groups, and only one level.
        for key in [
            "rto.min",
            "thin.rto.min",
            "early.retransmit_delay",
            ".thin_rto_min",
        ] {
            assert_eq!(c.get(key), None, "{key}");
        }
        assert_eq!(
            c.set("thin.rto_mni", "1s").unwrap_err().to_string(),
            "unknown config knob `thin.rto_mni` (did you mean `thin_rto_min`?); \
             `brisk knobs` lists every knob"
        );
        assert_eq!(
            c.set("thin.rto_min", "soon").unwrap_err().to_string(),
            "config knob `thin.rto_min`: `soon` is not none or a duration such as 200ms or 1s"
        );
        for group in KNOB_GROUPS {
            assert!(KNOBS.iter().any(|k| k.starts_with(&format!("{group}_"))));
        }
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
