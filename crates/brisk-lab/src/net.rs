//! `brisk echo | send | recv | bench`: Brisk over real UDP (RFC 6951).
//!
//! Every message carries its sequence number as its PPID, so an echoing peer
//! (Brisk's `echo`, or a foreign stack that echoes on the same stream with the
//! same PPID) lets `bench` time each message's round trip.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use brisk::{Association, Config, Endpoint, EndpointConfig, Error, SendOptions};
use bytes::Bytes;

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
            println!("echoed {n} messages; association {how}");
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
                };
                assoc.send(m.stream_id, m.payload, opts).await?;
                n += 1;
            }
            Err(Error::Closed(how)) => return Ok((n, how)),
            Err(e) => return Ok((n, e.to_string())),
        }
    }
}

/// `brisk recv`: accept one association and read until it ends (or `count`).
pub async fn recv(listen: SocketAddr, common: &Common, count: Option<u64>) -> Result<()> {
    let ep = Endpoint::bind(listen, common.endpoint_config(true)?)
        .await
        .with_context(|| format!("binding {listen}"))?;
    eprintln!("brisk recv: listening on {}", ep.local_addr());
    let assoc = ep.accept().await?;
    let (mut msgs, mut bytes) = (0u64, 0u64);
    let mut start = None;
    let end = loop {
        if count.is_some_and(|c| msgs >= c) {
            break "count reached".to_string();
        }
        match assoc.recv().await {
            Ok(m) => {
                start.get_or_insert_with(Instant::now);
                msgs += 1;
                bytes += m.payload.len() as u64;
            }
            Err(e) => break e.to_string(),
        }
    };
    let secs = start.map_or(0.0, |s| s.elapsed().as_secs_f64());
    println!(
        "received {msgs} messages, {bytes} bytes in {secs:.3} s: {:.0} msgs/s, {:.1} Mbit/s ({end})",
        rate(msgs as f64, secs),
        rate(bytes as f64 * 8.0 / 1e6, secs)
    );
    Ok(())
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

async fn connect(
    to: SocketAddr,
    bind: SocketAddr,
    common: &Common,
) -> Result<(Endpoint, Association)> {
    let ep = Endpoint::bind(bind, common.endpoint_config(false)?).await?;
    let assoc = ep
        .connect_to_port(to, common.sctp_port, common.config()?)
        .await
        .with_context(|| format!("associating with {to}"))?;
    Ok((ep, assoc))
}

fn options(seq: u64, load: &Load) -> SendOptions {
    SendOptions {
        ppid: seq as u32,
        unordered: load.unordered,
        // The last message asks for an immediate SACK (I bit): `flush` waits
        // for it, and a delayed SACK would hold it back up to SACK.Delay.
        immediate_sack: seq + 1 == load.count,
    }
}

/// `brisk send`: send `count` messages, then close gracefully.
pub async fn send(to: SocketAddr, bind: SocketAddr, common: &Common, load: &Load) -> Result<()> {
    let (_ep, assoc) = connect(to, bind, common).await?;
    let payload = Bytes::from(vec![0x5a; load.size]);
    let start = Instant::now();
    let gap = load.rate.map(|r| Duration::from_secs_f64(1.0 / r));
    for seq in 0..load.count {
        if let Some(gap) = gap {
            tokio::time::sleep_until((start + gap.mul_f64(seq as f64)).into()).await;
        }
        let stream = (seq % u64::from(load.streams.max(1))) as u16;
        assoc
            .send(stream, payload.clone(), options(seq, load))
            .await?;
    }
    assoc.flush().await?;
    let secs = start.elapsed().as_secs_f64();
    assoc.close().await?;
    let bytes = load.count as f64 * load.size as f64;
    println!(
        "sent {} messages of {} bytes in {secs:.3} s: {:.0} msgs/s, {:.1} Mbit/s, all acknowledged",
        load.count,
        load.size,
        rate(load.count as f64, secs),
        rate(bytes * 8.0 / 1e6, secs)
    );
    Ok(())
}

/// The result of `brisk bench`.
#[derive(Debug, Clone)]
pub struct BenchReport {
    pub messages: u64,
    pub size: usize,
    pub seconds: f64,
    pub msgs_per_sec: f64,
    pub mbit_per_sec: f64,
    /// Round-trip times in microseconds, sorted; empty in sink mode.
    pub rtts_us: Vec<u64>,
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
            _ => writeln!(f, "latency: not measured (the peer does not echo)")?,
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

/// `brisk bench`: throughput and, against an echoing peer, round-trip latency.
/// `window` bounds the messages sent but not yet echoed.
pub async fn bench(
    to: SocketAddr,
    bind: SocketAddr,
    common: &Common,
    load: &Load,
    echo: bool,
    window: u64,
) -> Result<BenchReport> {
    let (_ep, assoc) = connect(to, bind, common).await?;
    let payload = Bytes::from(vec![0xa5; load.size]);
    let cpu0 = cpu_seconds();
    let start = Instant::now();
    let mut sent_at = Vec::with_capacity(load.count as usize);
    let mut rtts = Vec::with_capacity(if echo { load.count as usize } else { 0 });
    let (mut sent, mut echoed) = (0u64, 0u64);
    let gap = load.rate.map(|r| Duration::from_secs_f64(1.0 / r));
    while echoed < if echo { load.count } else { 0 } || sent < load.count {
        while sent < load.count && (!echo || sent - echoed < window) {
            if let Some(gap) = gap {
                tokio::time::sleep_until((start + gap.mul_f64(sent as f64)).into()).await;
            }
            let stream = (sent % u64::from(load.streams.max(1))) as u16;
            sent_at.push(Instant::now());
            assoc
                .send(stream, payload.clone(), options(sent, load))
                .await?;
            sent += 1;
        }
        if echo && echoed < load.count {
            let m = assoc.recv().await?;
            let seq = m.ppid as usize;
            let Some(t) = sent_at.get(seq) else {
                bail!("the peer echoed PPID {} which was never sent", m.ppid);
            };
            rtts.push(t.elapsed().as_micros() as u64);
            echoed += 1;
        }
    }
    if !echo {
        assoc.flush().await?;
    }
    let seconds = start.elapsed().as_secs_f64();
    let cpu_seconds = cpu_seconds().zip(cpu0).map(|(b, a)| b - a);
    assoc.close().await?;
    rtts.sort_unstable();
    let bytes = load.count as f64 * load.size as f64;
    Ok(BenchReport {
        messages: load.count,
        size: load.size,
        seconds,
        msgs_per_sec: rate(load.count as f64, seconds),
        mbit_per_sec: rate(bytes * 8.0 / 1e6, seconds),
        rtts_us: rtts,
        cpu_seconds,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_last_message_asks_for_an_immediate_sack() {
        let load = Load {
            size: 1200,
            count: 3,
            streams: 1,
            unordered: false,
            rate: None,
        };
        let flags: Vec<bool> = (0..3)
            .map(|seq| options(seq, &load).immediate_sack)
            .collect();
        assert_eq!(
            flags,
            [false, false, true],
            "flush() must not wait for a delayed SACK"
        );
    }
}
