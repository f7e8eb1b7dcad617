//! `brisk echo | send | recv | bench`: Brisk over real UDP (RFC 6951).
//!
//! Every message carries its sequence number as its PPID, so an echoing peer
//! (Brisk's `echo`, or a foreign stack that echoes on the same stream with the
//! same PPID) lets `bench` time each message's round trip. Against an echoing
//! peer, `bench` also writes the sequence number into the first bytes of each
//! payload and accepts an echo only if its PPID names a message sent and not yet
//! echoed, on the stream it was sent on, with the payload it was sent with.

use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, anyhow, bail};
use brisk::{Association, Config, Endpoint, EndpointConfig, Error, IncomingMessage, SendOptions};
use bytes::Bytes;

/// How long `send` and `bench` wait for the handshake unless told otherwise
/// (`--connect-timeout`); the protocol alone would retry INIT for minutes
/// (Max.Init.Retransmits).
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// How long a command waits for a graceful shutdown it started to complete;
/// then it aborts the association and fails.
pub const CLOSE_TIMEOUT: Duration = Duration::from_secs(10);

/// The byte that fills payloads (after `bench`'s sequence number).
const FILL: u8 = 0xa5;

/// Options every network command shares.
#[derive(Debug, Clone)]
pub struct Common {
    /// Preset name.
    pub preset: String,
    /// `KNOB=VALUE` overrides, applied in order.
    pub set: Vec<String>,
    /// The SCTP port, ours and the peer's.
    pub sctp_port: u16,
}

impl Common {
    /// The configuration these options describe, validated.
    pub fn config(&self) -> Result<Config> {
        let mut cfg = Config::preset(&self.preset)?;
        for kv in &self.set {
            let Some((k, v)) = kv.split_once('=') else {
                bail!("--set expects KNOB=VALUE, got `{kv}`");
            };
            cfg.set(k.trim(), v)?;
        }
        cfg.validate()?;
        Ok(cfg)
    }

    fn endpoint_config(&self, accept: bool) -> Result<EndpointConfig> {
        Ok(EndpointConfig {
            port: self.sctp_port,
            accept,
            accept_config: self.config()?,
            ..EndpointConfig::default()
        })
    }
}

/// The peer `send` and `bench` associate with, and how.
#[derive(Debug, Clone)]
pub struct Target {
    /// The peer's UDP address.
    pub to: SocketAddr,
    /// The local UDP address; `None` is any port on the unspecified address of
    /// `to`'s family (`0.0.0.0:0` or `[::]:0`).
    pub bind: Option<SocketAddr>,
    /// How long the handshake may take.
    pub connect_timeout: Duration,
}

impl Target {
    /// `to`, bound to the unspecified address of its family, with the default
    /// connect timeout.
    pub fn new(to: SocketAddr) -> Self {
        Self {
            to,
            bind: None,
            connect_timeout: DEFAULT_CONNECT_TIMEOUT,
        }
    }

    /// The local address to bind: `bind`, which must be of `to`'s address
    /// family, or the unspecified address of that family.
    pub fn bind_addr(&self) -> Result<SocketAddr> {
        let family = |a: &SocketAddr| if a.is_ipv4() { "IPv4" } else { "IPv6" };
        match self.bind {
            None if self.to.is_ipv4() => Ok((Ipv4Addr::UNSPECIFIED, 0).into()),
            None => Ok((Ipv6Addr::UNSPECIFIED, 0).into()),
            Some(bind) if bind.is_ipv4() == self.to.is_ipv4() => Ok(bind),
            Some(bind) => bail!(
                "--to {} is an {} address but --bind {bind} is an {} address: \
                 bind an {} address (such as {}) or leave --bind out",
                self.to,
                family(&self.to),
                family(&bind),
                family(&self.to),
                if self.to.is_ipv4() {
                    "0.0.0.0:0"
                } else {
                    "[::]:0"
                },
            ),
        }
    }
}

/// Parses `--rate`: messages per second, a finite number above 0.
pub fn parse_rate(s: &str) -> Result<f64, String> {
    let expected = "expected messages per second, a number greater than 0 (such as 1000 or 0.5)";
    let rate: f64 = s.trim().parse().map_err(|_| expected.to_string())?;
    if !(rate.is_finite() && rate > 0.0) || Duration::try_from_secs_f64(1.0 / rate).is_err() {
        return Err(expected.to_string());
    }
    Ok(rate)
}

/// Parses `--window`: at least one message sent but not yet echoed.
pub fn parse_window(s: &str) -> Result<u64, String> {
    match s.trim().parse::<u64>() {
        Ok(w) if w >= 1 => Ok(w),
        _ => Err("expected a whole number of at least 1 (messages sent but not yet echoed)".into()),
    }
}

/// Parses `--connect-timeout`: a duration with its unit, above zero.
pub fn parse_timeout(s: &str) -> Result<Duration, String> {
    let expected = "expected a duration above zero with its unit, such as 10s, 2.5s or 500ms";
    let v = s.trim();
    if !v.ends_with('s') {
        return Err(expected.into());
    }
    match brisk_proto::config::parse_duration(v) {
        Some(d) if !d.is_zero() => Ok(d),
        _ => Err(expected.into()),
    }
}

/// A duration for people: `10 s`, `500 ms`, `2.5 s`.
fn human(d: Duration) -> String {
    if d.subsec_nanos() == 0 {
        format!("{} s", d.as_secs())
    } else if d < Duration::from_secs(1) {
        format!("{} ms", d.as_nanos() as f64 / 1e6)
    } else {
        format!("{} s", d.as_nanos() as f64 / 1e9)
    }
}

/// `brisk echo`: accept associations and echo every message back on its stream
/// with its PPID. With `once`, exit after the first association ends.
pub async fn echo(listen: SocketAddr, common: &Common, once: bool) -> Result<()> {
    let ep = Endpoint::bind(listen, common.endpoint_config(true)?)
        .await
        .with_context(|| format!("binding {listen}"))?;
    eprintln!(
        "brisk echo: listening on {} (SCTP port {})",
        ep.local_addr(),
        common.sctp_port
    );
    loop {
        let assoc = ep.accept().await?;
        let task = tokio::spawn(echo_one(assoc));
        if once {
            let (n, how) = task.await??;
            crate::output::print_stdout(&format!("echoed {n} messages; association {how}\n"));
            return Ok(());
        }
    }
}

async fn echo_one(assoc: Association) -> Result<(u64, String)> {
    let mut n = 0;
    loop {
        match assoc.recv().await {
            Ok(m) => {
                let opts = SendOptions {
                    ppid: m.ppid,
                    unordered: m.unordered,
                    immediate_sack: false,
                    ..Default::default()
                };
                assoc.send(m.stream_id, m.payload, opts).await?;
                n += 1;
            }
            Err(Error::Closed(how)) => return Ok((n, how)),
            Err(e) => return Ok((n, e.to_string())),
        }
    }
}

/// `brisk recv`: accept one association and read until it ends, or until
/// `count` messages have arrived: then shut it down gracefully, waiting at most
/// [`CLOSE_TIMEOUT`] for the shutdown to complete.
pub async fn recv(listen: SocketAddr, common: &Common, count: Option<u64>) -> Result<()> {
    let ep = Endpoint::bind(listen, common.endpoint_config(true)?)
        .await
        .with_context(|| format!("binding {listen}"))?;
    eprintln!("brisk recv: listening on {}", ep.local_addr());
    let assoc = ep.accept().await?;
    let (mut msgs, mut bytes) = (0u64, 0u64);
    let mut start = None;
    // Why reading stopped: `None` once `count` messages are in.
    let ended = loop {
        if count.is_some_and(|c| msgs >= c) {
            break None;
        }
        match assoc.recv().await {
            Ok(m) => {
                start.get_or_insert_with(Instant::now);
                msgs += 1;
                bytes += m.payload.len() as u64;
            }
            Err(e) => break Some(e.to_string()),
        }
    };
    let secs = start.map_or(0.0, |s| s.elapsed().as_secs_f64());
    let (end, closed) = match ended {
        Some(why) => (why, Ok(())),
        None => match close(&assoc).await {
            Ok(()) => (
                "count reached; association shut down gracefully".into(),
                Ok(()),
            ),
            Err(e) => ("count reached; the shutdown failed".into(), Err(e)),
        },
    };
    crate::output::print_stdout(&format!(
        "received {msgs} messages, {bytes} bytes in {secs:.3} s: {:.0} msgs/s, {:.1} Mbit/s ({end})\n",
        rate(msgs as f64, secs),
        rate(bytes as f64 * 8.0 / 1e6, secs)
    ));
    closed
}

/// Shuts `assoc` down gracefully, waiting at most [`CLOSE_TIMEOUT`]; past
/// that, aborts it and fails.
async fn close(assoc: &Association) -> Result<()> {
    let peer = assoc.remote();
    match tokio::time::timeout(CLOSE_TIMEOUT, assoc.close()).await {
        Ok(result) => result.with_context(|| format!("shutting down the association with {peer}")),
        Err(_) => {
            assoc.abort("shutdown timed out");
            // Let the driver send the ABORT before the endpoint goes.
            let _ = tokio::time::timeout(Duration::from_secs(1), assoc.close()).await;
            Err(anyhow!(
                "the association with {peer} did not shut down within {}: aborted it",
                human(CLOSE_TIMEOUT)
            ))
        }
    }
}

fn rate(x: f64, secs: f64) -> f64 {
    if secs > 0.0 { x / secs } else { 0.0 }
}

/// What `send` and `bench` send.
#[derive(Debug, Clone)]
pub struct Load {
    pub size: usize,
    pub count: u64,
    pub streams: u16,
    pub unordered: bool,
    /// Messages per second; `None` is as fast as possible.
    pub rate: Option<f64>,
}

impl Load {
    /// The stream message `seq` goes on.
    fn stream(&self, seq: u64) -> u16 {
        (seq % u64::from(self.streams.max(1))) as u16
    }

    /// When message `seq` is due: `None` at once (no `rate`).
    fn due(&self, start: Instant, seq: u64) -> Result<Option<Instant>> {
        let Some(rate) = self.rate else {
            return Ok(None);
        };
        Duration::try_from_secs_f64(seq as f64 / rate)
            .ok()
            .and_then(|d| start.checked_add(d))
            .map(Some)
            .ok_or_else(|| anyhow!("--rate {rate}: message {seq} would be due beyond the clock"))
    }
}

/// Binds, then associates with `target.to` within `target.connect_timeout`.
async fn connect(target: &Target, common: &Common) -> Result<(Endpoint, Association)> {
    let bind = target.bind_addr()?;
    let cfg = common.config()?;
    let ep = Endpoint::bind(bind, common.endpoint_config(false)?)
        .await
        .with_context(|| format!("binding {bind}"))?;
    let (to, port) = (target.to, common.sctp_port);
    let handshake = ep.connect_to_port(to, port, cfg);
    match tokio::time::timeout(target.connect_timeout, handshake).await {
        Ok(assoc) => {
            let assoc =
                assoc.with_context(|| format!("associating with {to} (SCTP port {port})"))?;
            Ok((ep, assoc))
        }
        Err(_) => bail!(
            "no association with {to} (SCTP port {port}): the handshake did not complete \
             within the connect timeout of {} (--connect-timeout)",
            human(target.connect_timeout)
        ),
    }
}

fn options(seq: u64, load: &Load) -> SendOptions {
    SendOptions {
        ppid: seq as u32,
        unordered: load.unordered,
        // The last message asks for an immediate SACK (I bit): `flush` waits
        // for it, and a delayed SACK would hold it back up to SACK.Delay.
        immediate_sack: seq + 1 == load.count,
        ..Default::default()
    }
}

/// `brisk send`: send `count` messages, then close gracefully.
pub async fn send(target: &Target, common: &Common, load: &Load) -> Result<()> {
    let (_ep, assoc) = connect(target, common).await?;
    let payload = Bytes::from(vec![FILL; load.size]);
    let start = Instant::now();
    for seq in 0..load.count {
        if let Some(due) = load.due(start, seq)? {
            tokio::time::sleep_until(due.into()).await;
        }
        assoc
            .send(load.stream(seq), payload.clone(), options(seq, load))
            .await
            .with_context(|| format!("message {} of {} not sent", seq + 1, load.count))?;
    }
    assoc
        .flush()
        .await
        .context("waiting for acknowledgements")?;
    let secs = start.elapsed().as_secs_f64();
    close(&assoc).await?;
    let bytes = load.count as f64 * load.size as f64;
    crate::output::print_stdout(&format!(
        "sent {} messages of {} bytes in {secs:.3} s: {:.0} msgs/s, {:.1} Mbit/s, all acknowledged; \
         association shut down gracefully\n",
        load.count,
        load.size,
        rate(load.count as f64, secs),
        rate(bytes * 8.0 / 1e6, secs)
    ));
    Ok(())
}

/// Echoes `bench` did not accept, by reason.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Rejected {
    /// The PPID names no message sent.
    pub never_sent: u64,
    /// The message was echoed already.
    pub duplicate: u64,
    /// The PPID names a message sent, but the stream or the payload (its
    /// sequence number, length or fill) is not what was sent.
    pub altered: u64,
}

impl Rejected {
    pub fn total(&self) -> u64 {
        self.never_sent + self.duplicate + self.altered
    }
}

impl std::fmt::Display for Rejected {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} never sent, {} already echoed, {} altered (stream or payload not as sent)",
            self.never_sent, self.duplicate, self.altered
        )
    }
}

/// The result of `brisk bench`.
#[derive(Debug, Clone)]
pub struct BenchReport {
    /// Messages sent.
    pub messages: u64,
    pub size: usize,
    pub seconds: f64,
    pub msgs_per_sec: f64,
    pub mbit_per_sec: f64,
    /// Round-trip times in microseconds of the echoes accepted, sorted; empty
    /// in sink mode.
    pub rtts_us: Vec<u64>,
    /// Echoes not accepted (against an echoing peer).
    pub rejected: Rejected,
    pub cpu_seconds: Option<f64>,
}

impl BenchReport {
    fn percentile(&self, p: f64) -> Option<f64> {
        if self.rtts_us.is_empty() {
            return None;
        }
        let i = ((self.rtts_us.len() - 1) as f64 * p).round() as usize;
        Some(self.rtts_us[i] as f64 / 1000.0)
    }

    /// Fails if the peer sent back echoes that match no message sent: its
    /// echoes cannot be trusted, nor the round trips timed from them.
    pub fn check(&self) -> Result<()> {
        let bad = self.rejected.total();
        if bad > 0 {
            bail!(
                "the peer sent back {bad} echo(es) that match no message sent ({}); \
                 the round-trip times cover only the {} echoes that matched",
                self.rejected,
                self.rtts_us.len()
            );
        }
        Ok(())
    }
}

impl std::fmt::Display for BenchReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(
            f,
            "bench: {} messages of {} bytes in {:.3} s",
            self.messages, self.size, self.seconds
        )?;
        writeln!(
            f,
            "throughput: {:.0} msgs/s, {:.2} Mbit/s",
            self.msgs_per_sec, self.mbit_per_sec
        )?;
        match (
            self.percentile(0.5),
            self.percentile(0.99),
            self.percentile(1.0),
        ) {
            (Some(p50), Some(p99), Some(max)) => writeln!(
                f,
                "latency (round trip): p50 {p50:.3} ms, p99 {p99:.3} ms, max {max:.3} ms"
            )?,
            _ if self.rejected.total() > 0 => writeln!(f, "latency: no echo matched")?,
            _ => writeln!(f, "latency: not measured (the peer does not echo)")?,
        }
        if self.rejected.total() > 0 {
            writeln!(
                f,
                "rejected echoes: {} ({})",
                self.rejected.total(),
                self.rejected
            )?;
        }
        match self.cpu_seconds {
            Some(cpu) => write!(f, "cpu: {cpu:.3} s (user + system, this process)"),
            None => write!(f, "cpu: unavailable"),
        }
    }
}

/// CPU seconds this process has used (user + system), from /proc on Linux.
pub fn cpu_seconds() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // Fields after the command name (which is in parentheses) start at state.
    let rest = stat.rsplit_once(')')?.1;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let utime: f64 = fields.get(11)?.parse().ok()?;
    let stime: f64 = fields.get(12)?.parse().ok()?;
    Some((utime + stime) / 100.0)
}

/// The payload of message `seq` against an echoing peer: `seq` big-endian in
/// the first (up to) 8 bytes, then [`FILL`].
fn numbered_payload(seq: u64, size: usize) -> Bytes {
    let mut p = vec![FILL; size];
    let n = size.min(8);
    p[..n].copy_from_slice(&seq.to_be_bytes()[8 - n..]);
    Bytes::from(p)
}

/// Whether `payload` is exactly [`numbered_payload`]`(seq, size)`.
fn is_numbered_payload(payload: &[u8], seq: u64, size: usize) -> bool {
    let n = size.min(8);
    payload.len() == size
        && payload[..n] == seq.to_be_bytes()[8 - n..]
        && payload[n..].iter().all(|&b| b == FILL)
}

/// The messages `bench` has sent to an echoing peer and what came back.
struct Echoes {
    /// The send time of each message sent, until its echo is accepted.
    sent_at: Vec<Option<Instant>>,
    /// Echoes read, accepted or not: a correct peer sends one per message.
    received: u64,
    rtts_us: Vec<u64>,
    rejected: Rejected,
}

impl Echoes {
    fn new(count: u64) -> Self {
        let cap = count.min(1 << 20) as usize;
        Self {
            sent_at: Vec::with_capacity(cap),
            received: 0,
            rtts_us: Vec::with_capacity(cap),
            rejected: Rejected::default(),
        }
    }

    fn sent(&self) -> u64 {
        self.sent_at.len() as u64
    }

    /// Accounts for one echo, timing its round trip if it is the first echo
    /// of a message sent, as sent.
    fn accept(&mut self, m: &IncomingMessage, load: &Load) {
        let now = Instant::now();
        self.received += 1;
        let seq = u64::from(m.ppid);
        let Some(slot) = self.sent_at.get_mut(seq as usize) else {
            self.rejected.never_sent += 1;
            return;
        };
        let Some(t) = *slot else {
            self.rejected.duplicate += 1;
            return;
        };
        if m.stream_id != load.stream(seq) || !is_numbered_payload(&m.payload, seq, load.size) {
            self.rejected.altered += 1;
            return;
        }
        *slot = None;
        self.rtts_us.push(now.duration_since(t).as_micros() as u64);
    }
}

/// `brisk bench`: throughput and, against an echoing peer, round-trip latency.
/// `window` bounds the messages sent but not yet echoed.
///
/// Against an echoing peer, echoes are read as they arrive, also while waiting
/// for the next message to be due under `rate`, so that each round trip runs
/// from its message's own send to its own echo. It ends once as many echoes
/// arrived as messages are to be sent, accepted or not (see [`Rejected`]).
pub async fn bench(
    target: &Target,
    common: &Common,
    load: &Load,
    echo: bool,
    window: u64,
) -> Result<BenchReport> {
    if window == 0 {
        bail!("--window must be at least 1");
    }
    if echo && load.count > 1 << 32 {
        bail!(
            "--count {} is more than bench can number against an echoing peer: the 32-bit PPID \
             numbers each message, so at most {}",
            load.count,
            1u64 << 32
        );
    }
    let (_ep, assoc) = connect(target, common).await?;
    let cpu0 = cpu_seconds();
    let start = Instant::now();
    let mut echoes = Echoes::new(if echo { load.count } else { 0 });
    if echo {
        bench_echo(&assoc, load, window, start, &mut echoes).await?;
    } else {
        let payload = Bytes::from(vec![FILL; load.size]);
        for seq in 0..load.count {
            if let Some(due) = load.due(start, seq)? {
                tokio::time::sleep_until(due.into()).await;
            }
            assoc
                .send(load.stream(seq), payload.clone(), options(seq, load))
                .await?;
        }
        assoc
            .flush()
            .await
            .context("waiting for acknowledgements")?;
    }
    let seconds = start.elapsed().as_secs_f64();
    let cpu_seconds = cpu_seconds().zip(cpu0).map(|(b, a)| b - a);
    close(&assoc).await?;
    let messages = if echo { echoes.sent() } else { load.count };
    let mut rtts = echoes.rtts_us;
    rtts.sort_unstable();
    let bytes = messages as f64 * load.size as f64;
    Ok(BenchReport {
        messages,
        size: load.size,
        seconds,
        msgs_per_sec: rate(messages as f64, seconds),
        mbit_per_sec: rate(bytes * 8.0 / 1e6, seconds),
        rtts_us: rtts,
        rejected: echoes.rejected,
        cpu_seconds,
    })
}

/// The sending and echo-reading loop of `bench` against an echoing peer.
async fn bench_echo(
    assoc: &Association,
    load: &Load,
    window: u64,
    start: Instant,
    echoes: &mut Echoes,
) -> Result<()> {
    let recv_err = |e: Error| anyhow::Error::new(e).context("waiting for echoes");
    while echoes.received < load.count {
        // Echoes already here are timed before anything else happens.
        while echoes.received < load.count {
            match assoc.try_recv() {
                Some(m) => echoes.accept(&m, load),
                None => break,
            }
        }
        if echoes.received >= load.count {
            break;
        }
        let seq = echoes.sent();
        let in_flight = seq.saturating_sub(echoes.received);
        if seq >= load.count || in_flight >= window {
            let m = assoc.recv().await.map_err(recv_err)?;
            echoes.accept(&m, load);
            continue;
        }
        let due = load.due(start, seq)?;
        if let Some(due) = due.filter(|&due| due > Instant::now()) {
            // Not due yet: read echoes while waiting.
            tokio::select! {
                biased;
                m = assoc.recv() => echoes.accept(&m.map_err(recv_err)?, load),
                () = tokio::time::sleep_until(due.into()) => {}
            }
            continue;
        }
        echoes.sent_at.push(Some(Instant::now()));
        assoc
            .send(
                load.stream(seq),
                numbered_payload(seq, load.size),
                options(seq, load),
            )
            .await?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load(count: u64) -> Load {
        Load {
            size: 1200,
            count,
            streams: 1,
            unordered: false,
            rate: None,
        }
    }

    #[test]
    fn only_the_last_message_asks_for_an_immediate_sack() {
        let load = load(3);
        let flags: Vec<bool> = (0..3)
            .map(|seq| options(seq, &load).immediate_sack)
            .collect();
        assert_eq!(
            flags,
            [false, false, true],
            "flush() must not wait for a delayed SACK"
        );
    }

    #[test]
    fn rate_window_and_timeout_reject_what_cannot_work() {
        for bad in ["0", "-1", "0.0", "inf", "NaN", "fast", "1e-320"] {
            assert!(parse_rate(bad).is_err(), "--rate {bad}");
        }
        assert_eq!(parse_rate("2500"), Ok(2500.0));
        assert_eq!(parse_rate("0.5"), Ok(0.5));
        for bad in ["0", "-3", "many", "1.5"] {
            assert!(parse_window(bad).is_err(), "--window {bad}");
        }
        assert_eq!(parse_window("1"), Ok(1));
        for bad in ["0s", "0ms", "10", "soon", "-1s"] {
            assert!(parse_timeout(bad).is_err(), "--connect-timeout {bad}");
        }
        assert_eq!(parse_timeout("10s"), Ok(DEFAULT_CONNECT_TIMEOUT));
        assert_eq!(parse_timeout("250ms"), Ok(Duration::from_millis(250)));
        assert_eq!(parse_timeout("2.5s"), Ok(Duration::from_millis(2500)));
    }

    #[test]
    fn durations_read_as_people_write_them() {
        assert_eq!(human(Duration::from_secs(10)), "10 s");
        assert_eq!(human(Duration::from_millis(250)), "250 ms");
        assert_eq!(human(Duration::from_millis(2500)), "2.5 s");
        assert_eq!(human(Duration::from_millis(100)), "100 ms");
        assert_eq!(human(Duration::from_micros(1500)), "1.5 ms");
    }

    #[test]
    fn the_bind_address_follows_the_target_family() {
        let v4: SocketAddr = "127.0.0.1:9".parse().unwrap();
        let v6: SocketAddr = "[::1]:9".parse().unwrap();
        assert_eq!(
            Target::new(v4).bind_addr().unwrap(),
            "0.0.0.0:0".parse::<SocketAddr>().unwrap()
        );
        assert_eq!(
            Target::new(v6).bind_addr().unwrap(),
            "[::]:0".parse::<SocketAddr>().unwrap()
        );
        let mixed = Target {
            bind: Some("127.0.0.1:0".parse().unwrap()),
            ..Target::new(v6)
        };
        let err = mixed.bind_addr().unwrap_err().to_string();
        assert_eq!(
            err,
            "--to [::1]:9 is an IPv6 address but --bind 127.0.0.1:0 is an IPv4 address: \
             bind an IPv6 address (such as [::]:0) or leave --bind out"
        );
    }

    #[test]
    fn the_payload_carries_the_sequence_number() {
        for size in [1, 3, 8, 100] {
            for seq in [0, 7, 300, 1 << 40] {
                let p = numbered_payload(seq, size);
                assert_eq!(p.len(), size);
                assert!(is_numbered_payload(&p, seq, size));
                assert!(!is_numbered_payload(&p, seq + 1, size), "{seq} {size}");
                assert!(!is_numbered_payload(&p[..size - 1], seq, size));
            }
        }
        assert_eq!(&numbered_payload(0x0102, 4)[..], [0, 0, 1, 2]);
    }

    #[test]
    fn an_echo_counts_once_and_only_as_sent() {
        let load = Load {
            size: 100,
            streams: 2,
            ..load(4)
        };
        let mut echoes = Echoes::new(load.count);
        let t0 = Instant::now();
        echoes.sent_at.extend([Some(t0), Some(t0), Some(t0)]);
        let echo = |seq: u64, stream: u16, payload: Bytes| IncomingMessage {
            stream_id: stream,
            ppid: seq as u32,
            unordered: false,
            ssn: 0,
            first_tsn: 0,
            payload,
            completed_at: brisk_proto::Time(0),
            deliverable_at: brisk_proto::Time(0),
        };
        echoes.accept(&echo(0, 0, numbered_payload(0, 100)), &load);
        echoes.accept(&echo(0, 0, numbered_payload(0, 100)), &load);
        echoes.accept(&echo(3, 1, numbered_payload(3, 100)), &load);
        echoes.accept(&echo(1, 0, numbered_payload(1, 100)), &load);
        echoes.accept(&echo(2, 0, numbered_payload(1, 100)), &load);
        echoes.accept(&echo(1, 1, numbered_payload(1, 100)), &load);
        assert_eq!(echoes.received, 6);
        assert_eq!(echoes.rtts_us.len(), 2, "messages 0 and 1 (on stream 1)");
        assert_eq!(
            echoes.rejected,
            Rejected {
                never_sent: 1,
                duplicate: 1,
                altered: 2,
            }
        );
    }
}
