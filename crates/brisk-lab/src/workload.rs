//! `brisk msg-send | msg-recv`: the message workload protocol of
//! `tests/interop/WORKLOAD.md`, over Brisk's SCTP (over UDP, as the other
//! network commands) or over the kernel's TCP.
//!
//! The sender writes messages on a schedule (periodic, or bursts), each stamped
//! with `CLOCK_MONOTONIC` just before its write; the receiver reads them,
//! checks them and writes one CSV row per message, `seq,written_ns,read_ns,size`,
//! so that `read_ns - written_ns` is the message's transfer time (MTT). Sender
//! and receiver run on one machine, so they share the clock.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, anyhow, bail};
use brisk::{Association, CloseReason, Endpoint, EndpointConfig, Error, SendOptions};
use bytes::Bytes;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::{TcpSocket, TcpStream};

use crate::net::{Common, DEFAULT_CONNECT_TIMEOUT};

/// The smallest message: `seq` (4 bytes) and the write stamp (8 bytes).
pub const MIN_SIZE: usize = 12;

/// How long the sender may run after its schedule's last write is due
/// (WORKLOAD.md: never longer than `t0 + schedule + 60 s`).
pub const GRACE: Duration = Duration::from_secs(60);

/// The first line of the records: the names of the columns.
pub const RECORDS_HEADER: &str = "seq,written_ns,read_ns,size";

/// How long the sender waits after associating, unless `--start-delay`.
pub const DEFAULT_START_DELAY: Duration = Duration::from_millis(500);

/// Bytes of TCP's length prefix before each message.
pub(crate) const TCP_PREFIX: usize = brisk_sim::transport::TCP_MESSAGE_PREFIX;

/// Which stack carries the messages.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum Transport {
    /// Brisk's SCTP over UDP (RFC 6951), SCTP port 5000 on both sides.
    #[default]
    Sctp,
    /// The kernel's TCP, TCP_NODELAY on both sides, each message preceded by
    /// its length (32-bit big-endian).
    Tcp,
}

impl std::fmt::Display for Transport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Transport::Sctp => "SCTP over UDP",
            Transport::Tcp => "TCP",
        })
    }
}

/// Parses a duration in milliseconds, with an optional fraction (`16`,
/// `0.5`): a finite number, 0 or more.
pub fn parse_millis(s: &str) -> Result<Duration, String> {
    let expected =
        || format!("expected milliseconds, a number of 0 or more (such as 16 or 0.5), found `{s}`");
    let ms: f64 = s.trim().parse().map_err(|_| expected())?;
    if !(ms.is_finite() && ms >= 0.0) {
        return Err(expected());
    }
    Duration::try_from_secs_f64(ms / 1000.0).map_err(|_| expected())
}

// ---------------------------------------------------------------------------
// The schedule
// ---------------------------------------------------------------------------

/// The schedule options of `msg-send` as given: exactly one of the two
/// schedules must be given in full.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ScheduleArgs {
    pub every: Option<Duration>,
    pub count: Option<u64>,
    pub bursts: Option<u64>,
    pub burst_size: Option<u64>,
    pub gap: Option<Duration>,
}

/// When each message is due, as an offset from `t0`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Schedule {
    /// `--every MS --count N`: message `seq` at `seq * every`.
    Periodic { every: Duration, count: u64 },
    /// `--bursts B --burst-size K --gap MS`: burst `b` at `b * gap`, its `K`
    /// messages back to back.
    Bursts {
        bursts: u64,
        burst_size: u64,
        gap: Duration,
    },
}

impl Schedule {
    /// The schedule `args` give, or why they give none.
    pub fn from_args(args: &ScheduleArgs) -> Result<Self> {
        let periodic = args.every.is_some() || args.count.is_some();
        let bursty = args.bursts.is_some() || args.burst_size.is_some() || args.gap.is_some();
        let schedule = match (periodic, bursty) {
            (false, false) => bail!(
                "no schedule: give --every MS --count N, or --bursts B --burst-size K --gap MS"
            ),
            (true, true) => bail!(
                "two schedules: give either --every and --count, or --bursts, --burst-size \
                 and --gap, not options of both"
            ),
            (true, false) => Schedule::Periodic {
                every: required(args.every, "--every", "--every MS --count N")?,
                count: at_least_one(
                    required(args.count, "--count", "--every MS --count N")?,
                    "--count",
                )?,
            },
            (false, true) => {
                let usage = "--bursts B --burst-size K --gap MS";
                Schedule::Bursts {
                    bursts: at_least_one(required(args.bursts, "--bursts", usage)?, "--bursts")?,
                    burst_size: at_least_one(
                        required(args.burst_size, "--burst-size", usage)?,
                        "--burst-size",
                    )?,
                    gap: required(args.gap, "--gap", usage)?,
                }
            }
        };
        schedule.check_bounds()?;
        Ok(schedule)
    }

    /// The rule `seq` is a 32-bit number and every offset is a duration.
    fn check_bounds(&self) -> Result<()> {
        let max = 1u64 << 32;
        let len = self.len().ok_or_else(|| anyhow!("too many messages"))?;
        if len > max {
            bail!("{len} messages: at most {max}, as seq is a 32-bit number");
        }
        self.offset(len - 1)
            .and_then(|last| last.checked_add(GRACE))
            .map(|_| ())
            .ok_or_else(|| anyhow!("the schedule's last message would be due beyond the clock"))
    }

    /// How many messages the schedule writes (`None`: more than a `u64`).
    pub fn len(&self) -> Option<u64> {
        match *self {
            Schedule::Periodic { count, .. } => Some(count),
            Schedule::Bursts {
                bursts, burst_size, ..
            } => bursts.checked_mul(burst_size),
        }
    }

    /// Whether the schedule writes nothing (never, once validated).
    pub fn is_empty(&self) -> bool {
        self.len() == Some(0)
    }

    /// When message `seq` is due after `t0` (`None`: beyond the clock).
    pub fn offset(&self, seq: u64) -> Option<Duration> {
        let (step, n) = match *self {
            Schedule::Periodic { every, .. } => (every, seq),
            Schedule::Bursts {
                burst_size, gap, ..
            } => (gap, seq / burst_size.max(1)),
        };
        step.checked_mul(u32::try_from(n).ok()?)
    }
}

/// The value of an option one schedule needs, or an error naming it.
fn required<T>(value: Option<T>, name: &str, usage: &str) -> Result<T> {
    value.ok_or_else(|| anyhow!("{name} is missing: this schedule is {usage}"))
}

fn at_least_one(n: u64, name: &str) -> Result<u64> {
    if n == 0 {
        bail!("{name} 0: must be at least 1");
    }
    Ok(n)
}

// ---------------------------------------------------------------------------
// The clock and the message
// ---------------------------------------------------------------------------

/// `CLOCK_MONOTONIC` in nanoseconds: the system-wide clock both processes
/// share (not an `Instant` relative to this process).
pub fn monotonic_ns() -> Result<u64> {
    let t = nix::time::clock_gettime(nix::time::ClockId::CLOCK_MONOTONIC)
        .context("reading CLOCK_MONOTONIC")?;
    let secs = u64::try_from(t.tv_sec()).context("CLOCK_MONOTONIC before 0")?;
    let nanos = u64::try_from(t.tv_nsec()).context("CLOCK_MONOTONIC nanoseconds below 0")?;
    secs.checked_mul(1_000_000_000)
        .and_then(|ns| ns.checked_add(nanos))
        .ok_or_else(|| anyhow!("CLOCK_MONOTONIC beyond 64-bit nanoseconds"))
}

/// Byte `j` of message `seq`, for `j >= 12`: `(seq * 131 + j * 7) mod 256`.
pub fn filler_byte(seq: u32, j: usize) -> u8 {
    ((u64::from(seq) * 131 + j as u64 * 7) % 256) as u8
}

/// Writes message `seq` into `msg` (its whole size): `seq` big-endian, a zero
/// stamp (see [`stamp`]), then the filler.
pub fn fill_message(msg: &mut [u8], seq: u32) {
    msg[..4].copy_from_slice(&seq.to_be_bytes());
    msg[4..MIN_SIZE].fill(0);
    for (j, b) in msg.iter_mut().enumerate().skip(MIN_SIZE) {
        *b = filler_byte(seq, j);
    }
}

/// Sets the write stamp (bytes 4..12, big-endian) of the message `msg`.
pub fn stamp(msg: &mut [u8], written_ns: u64) {
    msg[4..MIN_SIZE].copy_from_slice(&written_ns.to_be_bytes());
}

/// The header of a message checked by [`check_message`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header {
    pub seq: u32,
    pub written_ns: u64,
}

/// Reads a message's header and checks its filler.
pub fn check_message(msg: &[u8]) -> Result<Header> {
    let (Some(seq), Some(written)) = (msg.get(..4), msg.get(4..MIN_SIZE)) else {
        bail!(
            "a message of {} bytes: shorter than the {MIN_SIZE} bytes of seq and stamp",
            msg.len()
        );
    };
    let seq = u32::from_be_bytes(seq.try_into()?);
    let written_ns = u64::from_be_bytes(written.try_into()?);
    let bad = msg
        .iter()
        .enumerate()
        .skip(MIN_SIZE)
        .find(|&(j, &b)| b != filler_byte(seq, j));
    if let Some((j, &b)) = bad {
        bail!(
            "message seq {seq}: byte {j} is {b}, expected {}",
            filler_byte(seq, j)
        );
    }
    Ok(Header { seq, written_ns })
}

// ---------------------------------------------------------------------------
// The sender
// ---------------------------------------------------------------------------

/// The arguments of `msg-send` as given on the command line.
#[derive(Debug, Clone)]
pub struct SendArgs {
    pub bind: SocketAddr,
    pub connect: SocketAddr,
    pub size: u32,
    pub schedule: ScheduleArgs,
    pub start_delay: Duration,
    pub transport: Transport,
    pub common: Common,
}

/// A validated `msg-send`.
#[derive(Debug, Clone)]
pub struct SendPlan {
    pub bind: SocketAddr,
    pub connect: SocketAddr,
    pub size: usize,
    pub schedule: Schedule,
    pub count: u64,
    pub start_delay: Duration,
    pub transport: Transport,
    pub common: Common,
}

impl SendPlan {
    /// Checks `args`: a size of at least [`MIN_SIZE`], exactly one schedule,
    /// SCTP options only with SCTP.
    pub fn new(args: &SendArgs) -> Result<Self> {
        let size = usize::try_from(args.size)?;
        if size < MIN_SIZE {
            bail!("--size {size}: a message is at least {MIN_SIZE} bytes (4 of seq, 8 of stamp)");
        }
        check_transport_options(args.transport, &args.common)?;
        let schedule = Schedule::from_args(&args.schedule)?;
        Ok(Self {
            bind: args.bind,
            connect: args.connect,
            size,
            count: schedule.len().ok_or_else(|| anyhow!("too many messages"))?,
            schedule,
            start_delay: args.start_delay,
            transport: args.transport,
            common: args.common.clone(),
        })
    }
}

/// `--set` configures SCTP: with TCP it would silently do nothing.
fn check_transport_options(transport: Transport, common: &Common) -> Result<()> {
    if transport == Transport::Tcp && !common.set.is_empty() {
        bail!("--set configures SCTP; it has no effect with --transport tcp");
    }
    Ok(())
}

/// `brisk msg-send`: prints `SENT count=<N>` on success, `FAIL <reason>`
/// otherwise, both on stdout (as the other peers' result lines).
pub fn msg_send(args: &SendArgs) -> ExitCode {
    let result = SendPlan::new(args).and_then(|plan| run_on_one_core(send(&plan)));
    match result {
        Ok(n) => {
            crate::output::print_stdout(&format!("SENT count={n}\n"));
            ExitCode::SUCCESS
        }
        Err(e) => {
            crate::output::print_stdout(&format!("FAIL {}\n", one_line(&e)));
            ExitCode::FAILURE
        }
    }
}

/// Associates, writes the schedule from `t0 = now + start delay`, and waits
/// until everything is delivered; all of it after `t0` within the schedule
/// plus [`GRACE`]. Returns the messages written.
async fn send(plan: &SendPlan) -> Result<u64> {
    let mut link = Link::open(plan).await?;
    let beyond = || anyhow!("the schedule runs beyond the clock");
    let t0 = Instant::now()
        .checked_add(plan.start_delay)
        .ok_or_else(beyond)?;
    let deadline = plan
        .schedule
        .offset(plan.count.saturating_sub(1))
        .and_then(|last| last.checked_add(GRACE))
        .and_then(|end| t0.checked_add(end))
        .ok_or_else(beyond)?;
    let work = async {
        write_schedule(&mut link, plan, t0).await?;
        link.finish().await
    };
    match tokio::time::timeout_at(deadline.into(), work).await {
        Ok(done) => done.map(|()| plan.count),
        Err(_) => {
            link.abort().await;
            bail!(
                "timeout: not everything was delivered within {} s of the schedule's end",
                GRACE.as_secs()
            )
        }
    }
}

/// Writes every message at its due time, `t0` plus its offset: each time is
/// absolute, so a late write does not delay the ones after it.
async fn write_schedule(link: &mut Link, plan: &SendPlan, t0: Instant) -> Result<()> {
    for seq in 0..plan.count {
        let seq32 = u32::try_from(seq)?;
        // Everything but the stamp is ready before the message is due.
        let mut frame = link.frame(seq32, plan.size);
        let due = plan
            .schedule
            .offset(seq)
            .and_then(|offset| t0.checked_add(offset))
            .ok_or_else(|| anyhow!("message {seq} would be due beyond the clock"))?;
        sleep_until(due).await?;
        // The stamp is taken just before the write call: a write that waits
        // for room counts in the transfer time.
        stamp(&mut frame[link.prefix()..], monotonic_ns()?);
        link.write(frame, seq + 1 == plan.count)
            .await
            .with_context(|| format!("writing message {seq}"))?;
    }
    Ok(())
}

/// Sleeps until `due` on a blocking thread: tokio's timer counts whole
/// milliseconds, too coarse for `--gap 0.5`, while the thread's sleep is
/// precise; the runtime (the SCTP driver) runs on meanwhile.
async fn sleep_until(due: Instant) -> Result<()> {
    if due > Instant::now() {
        tokio::task::spawn_blocking(move || {
            std::thread::sleep(due.saturating_duration_since(Instant::now()));
        })
        .await
        .context("the schedule's timer thread failed")?;
    }
    Ok(())
}

/// The sender's connection.
enum Link {
    /// Brisk over UDP; the endpoint lives as long as the association.
    Sctp { _ep: Endpoint, assoc: Association },
    /// The kernel's TCP, TCP_NODELAY set.
    Tcp(TcpStream),
}

impl Link {
    /// Associates (connects) within [`DEFAULT_CONNECT_TIMEOUT`].
    async fn open(plan: &SendPlan) -> Result<Self> {
        let to = plan.connect;
        let link = match plan.transport {
            Transport::Sctp => {
                let ep = Endpoint::bind(plan.bind, endpoint_config(&plan.common, false)?)
                    .await
                    .with_context(|| format!("binding UDP {}", plan.bind))?;
                let port = plan.common.sctp_port;
                let handshake = ep.connect_to_port(to, port, plan.common.config()?);
                let what = format!("associating with {to} (SCTP port {port})");
                let assoc = within_connect_timeout(handshake, &what)
                    .await?
                    .context(what)?;
                Link::Sctp { _ep: ep, assoc }
            }
            Transport::Tcp => {
                let socket = tcp_socket(plan.bind)?;
                let what = format!("connecting to TCP {to}");
                let stream = within_connect_timeout(socket.connect(to), &what)
                    .await?
                    .context(what)?;
                stream.set_nodelay(true).context("setting TCP_NODELAY")?;
                Link::Tcp(stream)
            }
        };
        Ok(link)
    }

    /// Bytes before the message in each write: TCP's length prefix.
    fn prefix(&self) -> usize {
        match self {
            Link::Sctp { .. } => 0,
            Link::Tcp(_) => TCP_PREFIX,
        }
    }

    /// What one write of message `seq` writes, stamp still zero.
    fn frame(&self, seq: u32, size: usize) -> Vec<u8> {
        let prefix = self.prefix();
        let mut frame = vec![0; prefix + size];
        if prefix > 0 {
            // `size` came from a u32 (`--size`).
            frame[..prefix].copy_from_slice(&(size as u32).to_be_bytes());
        }
        fill_message(&mut frame[prefix..], seq);
        frame
    }

    /// Writes one message in one write call. SCTP: stream 0, ordered, PPID
    /// 0, no I bit (the simulator's senders set none either).
    ///
    /// Each write is its own instant, as each `sendmsg` is for a kernel
    /// stack and each application callback is in the simulator: the driver
    /// (on this same thread) runs before the next write, so a burst's
    /// messages leave in a packet each instead of being bundled together.
    async fn write(&mut self, frame: Vec<u8>, _last: bool) -> Result<()> {
        match self {
            Link::Sctp { assoc, .. } => {
                let opts = SendOptions {
                    ppid: 0,
                    unordered: false,
                    immediate_sack: false,
                    ..Default::default()
                };
                assoc.send(0, Bytes::from(frame), opts).await?;
                tokio::task::yield_now().await;
            }
            Link::Tcp(stream) => stream.write_all(&frame).await?,
        }
        Ok(())
    }

    /// Waits until everything is delivered, then ends gracefully. SCTP: every
    /// message acknowledged, then SHUTDOWN. TCP: shutdown(SHUT_WR), then reads
    /// until the receiver closes (it has read everything).
    async fn finish(&mut self) -> Result<()> {
        match self {
            Link::Sctp { assoc, .. } => {
                assoc
                    .flush()
                    .await
                    .context("waiting for every message to be acknowledged")?;
                assoc
                    .close()
                    .await
                    .context("shutting the association down")?;
            }
            Link::Tcp(stream) => {
                stream.shutdown().await.context("shutdown(SHUT_WR)")?;
                let mut buf = [0u8; 64];
                let n = stream
                    .read(&mut buf)
                    .await
                    .context("waiting for the receiver to close")?;
                if n > 0 {
                    bail!("the receiver sent {n} bytes; it should send nothing");
                }
            }
        }
        Ok(())
    }

    /// Gives up: SCTP aborts the association, and lets the driver send the
    /// ABORT (briefly); TCP's socket closes when dropped.
    async fn abort(&self) {
        if let Link::Sctp { assoc, .. } = self {
            assoc.abort("msg-send timed out");
            let _ = tokio::time::timeout(Duration::from_millis(100), assoc.close()).await;
        }
    }
}

/// `f`, or an error once [`DEFAULT_CONNECT_TIMEOUT`] has passed.
async fn within_connect_timeout<T>(f: impl Future<Output = T>, what: &str) -> Result<T> {
    tokio::time::timeout(DEFAULT_CONNECT_TIMEOUT, f)
        .await
        .map_err(|_| {
            anyhow!(
                "{what}: no answer within {} s",
                DEFAULT_CONNECT_TIMEOUT.as_secs()
            )
        })
}

/// A TCP socket bound to `addr`, reusing an address in TIME_WAIT.
fn tcp_socket(addr: SocketAddr) -> Result<TcpSocket> {
    let socket = if addr.is_ipv4() {
        TcpSocket::new_v4()
    } else {
        TcpSocket::new_v6()
    }
    .context("creating a TCP socket")?;
    socket.set_reuseaddr(true)?;
    socket
        .bind(addr)
        .with_context(|| format!("binding TCP {addr}"))?;
    Ok(socket)
}

/// The SCTP endpoint of the network commands (as `brisk send` and `recv`).
/// The receiver accepts one association at most.
fn endpoint_config(common: &Common, accept: bool) -> Result<EndpointConfig> {
    let mut cfg = EndpointConfig {
        port: common.sctp_port,
        accept,
        accept_config: common.config()?,
        ..EndpointConfig::default()
    };
    if accept {
        cfg.max_associations = 1;
    }
    Ok(cfg)
}

// ---------------------------------------------------------------------------
// The receiver
// ---------------------------------------------------------------------------

/// The arguments of `msg-recv`.
#[derive(Debug, Clone)]
pub struct RecvArgs {
    pub bind: SocketAddr,
    /// The records' file; `None` is stdout.
    pub records: Option<PathBuf>,
    pub transport: Transport,
    pub common: Common,
}

/// `brisk msg-recv`: prints `CLOSED received=<n>` on stderr when the peer
/// ended gracefully, `FAIL <reason>` (also on stderr: stdout may hold the
/// records) otherwise.
pub fn msg_recv(args: &RecvArgs) -> ExitCode {
    let result = check_transport_options(args.transport, &args.common)
        .and_then(|()| Records::open(args.records.as_ref()))
        .and_then(|records| run_on_one_core(recv(args, records)));
    match result {
        Ok(n) => {
            eprintln!("CLOSED received={n}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("FAIL {}", one_line(&e));
            ExitCode::FAILURE
        }
    }
}

/// Receives until the peer ends; the rows read are written out in any case.
async fn recv(args: &RecvArgs, mut records: Records) -> Result<u64> {
    let read = match args.transport {
        Transport::Sctp => recv_sctp(args, &mut records).await,
        Transport::Tcp => recv_tcp(args, &mut records).await,
    };
    let flushed = records.flush();
    read?;
    flushed?;
    Ok(records.received)
}

/// The line tests and scripts wait for before starting the sender.
fn listening(addr: SocketAddr, transport: Transport) {
    eprintln!("brisk msg-recv: listening on {addr} ({transport})");
}

/// Accepts one association and reads it until the peer shuts it down.
async fn recv_sctp(args: &RecvArgs, records: &mut Records) -> Result<()> {
    let ep = Endpoint::bind(args.bind, endpoint_config(&args.common, true)?)
        .await
        .with_context(|| format!("binding UDP {}", args.bind))?;
    listening(ep.local_addr(), args.transport);
    let assoc = ep.accept().await.context("accepting an association")?;
    loop {
        // Rows are flushed whenever no message is waiting: at once, but not
        // between the messages of a burst.
        let next = match assoc.try_recv() {
            Some(m) => Ok(m),
            None => {
                records.flush()?;
                assoc.recv().await
            }
        };
        match next {
            Ok(m) => {
                let read_ns = monotonic_ns()?;
                records.take(&m.payload, read_ns)?;
            }
            Err(e) if is_graceful_end(&e) => return Ok(()),
            Err(e) => return Err(anyhow::Error::new(e).context("the association failed")),
        }
    }
}

/// Whether `e` is the end of an association shut down gracefully (not an
/// abort, ours or the peer's).
fn is_graceful_end(e: &Error) -> bool {
    matches!(e, Error::Closed(_))
        && e.to_string() == Error::from_close(&CloseReason::Shutdown).to_string()
}

/// Accepts one connection and reads it until the peer's FIN.
async fn recv_tcp(args: &RecvArgs, records: &mut Records) -> Result<()> {
    let listener = tcp_socket(args.bind)?
        .listen(1)
        .with_context(|| format!("listening on TCP {}", args.bind))?;
    listening(listener.local_addr()?, args.transport);
    let (stream, _) = listener.accept().await.context("accepting a connection")?;
    drop(listener);
    stream.set_nodelay(true).context("setting TCP_NODELAY")?;
    let mut reader = BufReader::with_capacity(1 << 16, stream);
    loop {
        // Rows are flushed whenever no message is buffered.
        if reader.buffer().is_empty() {
            records.flush()?;
        }
        let Some(msg) = read_frame(&mut reader, records).await? else {
            // Dropping the stream closes ours: the sender sees the end.
            return Ok(());
        };
        let read_ns = monotonic_ns()?;
        records.take(&msg, read_ns)?;
    }
}

/// Reads one length-prefixed message; `None` at a clean end (between two
/// messages). The length is checked before the message is read.
async fn read_frame(
    reader: &mut (impl AsyncRead + Unpin),
    records: &mut Records,
) -> Result<Option<Vec<u8>>> {
    let mut prefix = [0u8; TCP_PREFIX];
    if reader.read(&mut prefix[..1]).await? == 0 {
        return Ok(None);
    }
    reader
        .read_exact(&mut prefix[1..])
        .await
        .context("the connection ended inside a length prefix")?;
    let len = u32::from_be_bytes(prefix);
    records.check_size(usize::try_from(len)?)?;
    // Read as the bytes come, not into a buffer of the claimed length.
    let mut msg = Vec::with_capacity(usize::try_from(len)?.min(1 << 16));
    reader.take(u64::from(len)).read_to_end(&mut msg).await?;
    if msg.len() != usize::try_from(len)? {
        bail!(
            "the connection ended inside a message: {} of its {len} bytes",
            msg.len()
        );
    }
    Ok(Some(msg))
}

/// One record: a message read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Row {
    pub seq: u32,
    pub written_ns: u64,
    pub read_ns: u64,
    pub size: usize,
}

impl std::fmt::Display for Row {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{},{},{},{}",
            self.seq, self.written_ns, self.read_ns, self.size
        )
    }
}

/// The receiver's checks and its CSV records.
struct Records {
    out: BufWriter<Box<dyn Write>>,
    /// The size of the first message: every message has it.
    size: Option<usize>,
    received: u64,
}

impl Records {
    /// The records' file (`None`: stdout), its header written.
    fn open(path: Option<&PathBuf>) -> Result<Self> {
        let out: Box<dyn Write> = match path {
            Some(p) => Box::new(
                File::create(p).with_context(|| format!("creating --records {}", p.display()))?,
            ),
            None => Box::new(std::io::stdout()),
        };
        let mut records = Self {
            out: BufWriter::new(out),
            size: None,
            received: 0,
        };
        writeln!(records.out, "{RECORDS_HEADER}").context("writing the records")?;
        Ok(records)
    }

    /// The size rule: at least [`MIN_SIZE`], and every message as large as
    /// the first.
    fn check_size(&mut self, len: usize) -> Result<()> {
        if len < MIN_SIZE {
            bail!("a message of {len} bytes: shorter than the {MIN_SIZE} bytes of seq and stamp");
        }
        match self.size {
            Some(size) if size != len => {
                bail!("a message of {len} bytes after messages of {size} bytes")
            }
            _ => self.size = Some(len),
        }
        Ok(())
    }

    /// Checks message `msg`, read at `read_ns`, and writes its row.
    fn take(&mut self, msg: &[u8], read_ns: u64) -> Result<()> {
        self.check_size(msg.len())?;
        let header = check_message(msg)?;
        let row = Row {
            seq: header.seq,
            written_ns: header.written_ns,
            read_ns,
            size: msg.len(),
        };
        writeln!(self.out, "{row}").context("writing the records")?;
        self.received += 1;
        Ok(())
    }

    fn flush(&mut self) -> Result<()> {
        self.out.flush().context("writing the records")
    }
}

// ---------------------------------------------------------------------------
// Shared
// ---------------------------------------------------------------------------

/// Runs `f` on a single-threaded runtime, as the other network commands: the
/// SCTP driver and the application share one core.
fn run_on_one_core<T>(f: impl Future<Output = Result<T>>) -> Result<T> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("starting the tokio runtime")?;
    let result = rt.block_on(f);
    // A timer thread still sleeping (after a failure) must not hold the exit.
    rt.shutdown_background();
    result
}

/// An error and its causes on one line.
fn one_line(e: &anyhow::Error) -> String {
    format!("{e:#}").replace('\n', " ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(x: u64) -> Duration {
        Duration::from_millis(x)
    }

    #[test]
    fn milliseconds_take_a_fraction_and_nothing_negative() {
        assert_eq!(parse_millis("16"), Ok(ms(16)));
        assert_eq!(parse_millis("0.5"), Ok(Duration::from_micros(500)));
        assert_eq!(parse_millis("0"), Ok(Duration::ZERO));
        for bad in ["-1", "NaN", "inf", "soon", "", "1e300"] {
            let err = parse_millis(bad).unwrap_err();
            assert!(err.contains("milliseconds"), "{bad}: {err}");
        }
    }

    #[test]
    fn a_periodic_schedule_is_due_every_interval() {
        let s = Schedule::from_args(&ScheduleArgs {
            every: Some(ms(16)),
            count: Some(3),
            ..ScheduleArgs::default()
        })
        .unwrap();
        assert_eq!(s.len(), Some(3));
        let offsets: Vec<_> = (0..3).map(|seq| s.offset(seq).unwrap()).collect();
        assert_eq!(offsets, [ms(0), ms(16), ms(32)]);
    }

    #[test]
    fn a_burst_schedule_writes_each_burst_at_once() {
        let s = Schedule::from_args(&ScheduleArgs {
            bursts: Some(3),
            burst_size: Some(4),
            gap: Some(Duration::from_micros(500)),
            ..ScheduleArgs::default()
        })
        .unwrap();
        assert_eq!(s.len(), Some(12));
        let offsets: Vec<_> = (0..12).map(|seq| s.offset(seq).unwrap()).collect();
        let us = Duration::from_micros;
        assert_eq!(&offsets[..4], [us(0); 4]);
        assert_eq!(&offsets[4..8], [us(500); 4]);
        assert_eq!(&offsets[8..], [us(1000); 4]);
    }

    #[test]
    fn exactly_one_schedule_in_full() {
        let err = |a: ScheduleArgs| Schedule::from_args(&a).unwrap_err().to_string();
        assert!(err(ScheduleArgs::default()).starts_with("no schedule"));
        let both = ScheduleArgs {
            every: Some(ms(1)),
            count: Some(1),
            gap: Some(ms(1)),
            ..ScheduleArgs::default()
        };
        assert!(err(both).starts_with("two schedules"));
        let half = ScheduleArgs {
            every: Some(ms(1)),
            ..ScheduleArgs::default()
        };
        assert!(err(half).starts_with("--count is missing"));
        let empty = ScheduleArgs {
            bursts: Some(0),
            burst_size: Some(4),
            gap: Some(ms(1)),
            ..ScheduleArgs::default()
        };
        assert_eq!(err(empty), "--bursts 0: must be at least 1");
        let huge = ScheduleArgs {
            bursts: Some(1 << 20),
            burst_size: Some(1 << 20),
            gap: Some(ms(1)),
            ..ScheduleArgs::default()
        };
        assert!(err(huge).contains("32-bit"));
    }

    #[test]
    fn a_message_round_trips_and_its_filler_is_checked() {
        let mut msg = vec![0; 40];
        fill_message(&mut msg, 258);
        stamp(&mut msg, 0x0102_0304_0506_0708);
        assert_eq!(&msg[..MIN_SIZE], [0, 0, 1, 2, 1, 2, 3, 4, 5, 6, 7, 8]);
        // Byte 12 of seq 258: (258 * 131 + 84) mod 256.
        assert_eq!(msg[12], ((258 * 131 + 12 * 7) % 256) as u8);
        let header = check_message(&msg).unwrap();
        assert_eq!(
            header,
            Header {
                seq: 258,
                written_ns: 0x0102_0304_0506_0708
            }
        );
        msg[30] ^= 1;
        let err = check_message(&msg).unwrap_err().to_string();
        assert!(err.starts_with("message seq 258: byte 30 is"), "{err}");
        assert!(check_message(&msg[..11]).is_err());
    }

    #[test]
    fn every_message_has_the_first_size() {
        let mut r = Records {
            out: BufWriter::new(Box::new(Vec::new())),
            size: None,
            received: 0,
        };
        assert!(r.check_size(11).is_err());
        r.check_size(100).unwrap();
        r.check_size(100).unwrap();
        let err = r.check_size(99).unwrap_err().to_string();
        assert_eq!(err, "a message of 99 bytes after messages of 100 bytes");
    }

    #[test]
    fn the_clock_is_monotonic() {
        let a = monotonic_ns().unwrap();
        let b = monotonic_ns().unwrap();
        assert!(a > 0 && b >= a);
    }
}
