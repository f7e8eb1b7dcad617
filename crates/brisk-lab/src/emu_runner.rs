//! Emulated runs: a variant with a `stack` runs that stack's commands (the
//! message workload protocol of `tests/interop/WORKLOAD.md`) in `brisk-emu`
//! namespaces, through links built from the experiment's topology exactly as
//! the simulator builds them, and is measured into the same records.
//!
//! Placeholders in a stack's commands:
//!
//! | placeholder | becomes |
//! | --- | --- |
//! | `{brisk}` | the running `brisk` binary |
//! | `{peers}` | the directory of the interop peers (`target/interop`) |
//! | `{server}`, `{client}` | host b's and host a's address |
//! | `{records}` | the file the receiver writes its rows to |
//! | `{schedule}` | the workload's arguments: `--size`, then `--bursts ... --gap` or `--every ... --count`, and `--start-delay` |
//! | `{config}` | Brisk's arguments for the variant's config: `--config rfc9260` and a `--set` for every knob that differs |
//!
//! | `{competing_records}` | the file the competing flow's receiver writes its rows to |
//!
//! `{schedule}` and `{config}` must stand alone as one argument; they
//! expand to several.
//!
//! With `[competing]` commands the competing pair starts first in the same
//! two hosts (its server in b, its client in a, sharing the bottleneck) and
//! is stopped when the stack's sender is done; its goodput after the
//! warm-up is recorded as flow 1. The link's packets are then not told
//! apart by flow, so the wire-derived figures (bytes per message,
//! retransmissions, repair delays) are left out of such runs.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use brisk_emu::{Emulation, EmulationConfig, host_addr};
use brisk_net::{Impairment, LinkParams, PacketRecord, QueueLimit};
use brisk_proto::Config;

use crate::experiment::{Count, Experiment, Gap, Method, Stack, Traffic, Variant};
use crate::runner::{Record, RunKey};
use crate::traffic::{Planned, plan};

/// How long the receiver runs alone before the sender starts.
const SERVER_LEAD: Duration = Duration::from_millis(300);
/// Time for the sender after its last scheduled write.
const SENDER_TAIL: Duration = Duration::from_secs(30);
/// Where the sender's schedule starts after the association is up, as the
/// simulator's (`runner::LEAD`).
const START_DELAY: Duration = Duration::from_millis(500);

/// The workload arguments of `traffic`, or why it cannot be emulated.
pub fn schedule_args(traffic: &Traffic) -> Result<Vec<String>, String> {
    let ms = |d: Duration| format!("{}", d.as_secs_f64() * 1e3);
    let mut args = Vec::new();
    match traffic {
        Traffic::Bursts {
            bursts,
            size: Count::Fixed(n),
            gap: Gap::Fixed(gap),
            message_size,
            ..
        } => {
            args.extend([
                "--size".into(),
                message_size.to_string(),
                "--bursts".into(),
                bursts.to_string(),
                "--burst-size".into(),
                n.to_string(),
                "--gap".into(),
                ms(*gap),
            ]);
        }
        Traffic::Periodic {
            interval,
            messages,
            jitter,
            message_size,
            ..
        } if jitter.is_zero() => {
            args.extend([
                "--size".into(),
                message_size.to_string(),
                "--every".into(),
                ms(*interval),
                "--count".into(),
                messages.to_string(),
            ]);
        }
        other => {
            return Err(format!(
                "this traffic cannot be emulated yet (fixed bursts and periodic messages can): {other:?}"
            ));
        }
    }
    args.extend(["--start-delay".into(), ms(START_DELAY)]);
    Ok(args)
}

/// Brisk's command-line arguments for `config`: the RFC 9260 preset and a
/// `--set` for every knob whose value differs from it.
pub fn config_args(config: &Config) -> Vec<String> {
    let base = Config::rfc9260();
    let mut args = vec!["--config".to_owned(), "rfc9260".to_owned()];
    for knob in brisk_proto::config::KNOB_TABLE {
        let (ours, theirs) = (knob.get(config), knob.get(&base));
        if ours != theirs {
            args.push("--set".into());
            args.push(format!("{}={ours}", knob.name));
        }
    }
    args
}

/// The directory of the interop peers' binaries.
fn peers_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/interop")
}

/// A stack's command with its placeholders filled in.
fn expand(argv: &[String], vars: &HashMap<&str, Vec<String>>) -> Vec<String> {
    let mut out = Vec::new();
    for a in argv {
        if let Some(list) = vars.get(a.as_str()).filter(|l| l.len() != 1) {
            out.extend(list.iter().cloned());
            continue;
        }
        let mut s = a.clone();
        for (k, v) in vars {
            if v.len() == 1 {
                s = s.replace(k, &v[0]);
            }
        }
        out.push(s);
    }
    out
}

/// The emulated link directions of the experiment's point-to-point topology,
/// as the simulator builds them: the same bandwidth, delay and queue, and the
/// same serialized size (the simulator charges the SCTP packet plus
/// `overhead_bytes`; the emulator charges the IP packet without the UDP
/// header of the encapsulation, plus what `overhead_bytes` adds beyond 20
/// bytes of IPv4).
fn links(exp: &Experiment, key: &RunKey, forward: Vec<Impairment>) -> (LinkParams, LinkParams) {
    let point = exp.point(&key.point);
    let link = |impairments| LinkParams {
        bandwidth_bps: point.bandwidth_bps,
        delay: point.delay,
        queue: QueueLimit::Packets(exp.topology.queue_packets),
        overhead_bytes: exp.topology.overhead_bytes.saturating_sub(20),
        impairments,
    };
    (link(forward), link(Vec::new()))
}

/// One row of a receiver's records.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Row {
    pub seq: u64,
    pub mtt_ms: f64,
    pub size: usize,
    /// When it was written and read, ns on the emulation's one clock.
    pub written_ns: u64,
    pub read_ns: u64,
}

/// Reads `seq,written_ns,read_ns,size` rows.
pub fn read_records(text: &str) -> Result<Vec<Row>, String> {
    let mut rows = Vec::new();
    for (n, line) in text.lines().enumerate() {
        if n == 0 && line.starts_with("seq") || line.trim().is_empty() {
            continue;
        }
        let f: Vec<&str> = line.split(',').collect();
        let num = |i: usize| -> Result<u64, String> {
            f.get(i)
                .and_then(|x| x.trim().parse().ok())
                .ok_or_else(|| format!("records line {}: `{line}`", n + 1))
        };
        let (seq, written, read, size) = (num(0)?, num(1)?, num(2)?, num(3)?);
        rows.push(Row {
            seq,
            mtt_ms: (read as f64 - written as f64) / 1e6,
            size: size as usize,
            written_ns: written,
            read_ns: read,
        });
    }
    Ok(rows)
}

/// The messages (0-based) whose first transmission the forward link
/// dropped. SCTP: chunk numbers, one chunk per message. TCP: the messages
/// whose first byte a dropped segment sent for the first time (each message
/// is `frame` bytes: its length prefix and its body).
pub(crate) fn lost_messages(dropped: &[brisk_net::NewChunk], tcp: bool, frame: u64) -> Vec<u64> {
    let mut out: Vec<u64> = if tcp {
        dropped
            .iter()
            .filter(|c| c.new_bytes > 0)
            .flat_map(|c| {
                // Message i starts at byte i * frame + 1.
                let first = (c.first_byte - 1).div_ceil(frame);
                let last = (c.first_byte - 1 + c.new_bytes - 1) / frame;
                first..=last
            })
            .collect()
    } else {
        dropped.iter().map(|c| c.number - 1).collect()
    };
    out.sort_unstable();
    out.dedup();
    out
}

/// A competing bulk flow's goodput, kbit/s: the payload read from `warmup`
/// after its first write to its last read.
pub fn competing_goodput_kbps(rows: &[Row], warmup: Duration) -> Option<f64> {
    let start = rows.iter().map(|r| r.written_ns).min()? + warmup.as_nanos() as u64;
    let end = rows.iter().map(|r| r.read_ns).max()?;
    if end <= start {
        return None;
    }
    let bytes: usize = rows
        .iter()
        .filter(|r| r.read_ns > start)
        .map(|r| r.size)
        .sum();
    Some(bytes as f64 * 8.0 / ((end - start) as f64 / 1e9) / 1000.0)
}

/// Data units sent again: every copy of a unit after its first, and of
/// those the ones whose earlier copy was not lost (spurious).
fn retransmissions(trace: &[PacketRecord]) -> (u64, u64) {
    let mut first_lost: HashMap<u32, bool> = HashMap::new();
    let (mut all, mut spurious) = (0, 0);
    for r in trace {
        for &k in &r.data_tsns {
            match first_lost.get_mut(&k) {
                None => {
                    first_lost.insert(k, r.lost());
                }
                Some(lost) => {
                    all += 1;
                    if !*lost {
                        spurious += 1;
                    }
                    // The next copy is needed only if this one is lost too.
                    *lost = r.lost();
                }
            }
        }
    }
    (all, spurious)
}

/// Whether SIGINT or SIGTERM arrived since the first emulated run began:
/// the run in progress stops its commands and removes its namespaces, and
/// no further run starts.
pub fn interrupted() -> bool {
    static FLAG: std::sync::OnceLock<std::sync::Arc<std::sync::atomic::AtomicBool>> =
        std::sync::OnceLock::new();
    let flag = FLAG.get_or_init(|| {
        let flag = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        for signal in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
            // Without the handler the default action ends the process and
            // leaves the namespaces to the next run's leftover check.
            let _ = signal_hook::flag::register(signal, flag.clone());
        }
        flag
    });
    flag.load(std::sync::atomic::Ordering::Relaxed)
}

/// Ends the process after an interruption, once the emulation in progress
/// has stopped its commands and removed its namespaces.
pub fn exit_interrupted(progress: &indicatif::ProgressBar) -> ! {
    progress.suspend(|| eprintln!("interrupted: the namespaces were removed"));
    std::process::exit(130);
}

/// Waits for `child` until `deadline` (or an interruption), then stops it
/// (SIGTERM, SIGKILL).
fn wait_or_stop(child: &mut Child, deadline: Instant) -> Option<std::process::ExitStatus> {
    while Instant::now() < deadline && !interrupted() {
        if let Ok(Some(status)) = child.try_wait() {
            return Some(status);
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    if let Ok(pid) = i32::try_from(child.id()) {
        let _ = nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(pid),
            nix::sys::signal::Signal::SIGTERM,
        );
    }
    std::thread::sleep(Duration::from_millis(200));
    let _ = child.kill();
    let _ = child.wait();
    None
}

/// Runs one emulated run of `variant` (which has a stack) and measures it;
/// with `capture`, every packet of both directions goes there as pcapng.
pub fn run_one(
    exp: &Experiment,
    key: &RunKey,
    variant: &Variant,
    stack: &Stack,
    workdir: &Path,
    capture: Option<&Path>,
) -> Result<Vec<Record>, String> {
    let point = exp.point(&key.point);
    let traffic = exp.traffic.at(point.message_size, point.rate);
    let traffic_seed = crate::runner::seeds(exp, key).0;
    let planned: Vec<Planned> = plan(&traffic, traffic_seed);
    let size = traffic.message_size().unwrap_or(0);
    let mut forward = Vec::new();
    let tcp = stack.transport_is_tcp();
    let frame = size as u64 + crate::workload::TCP_PREFIX as u64;
    if let Some(k) = key.position {
        forward.push(if tcp {
            // The segment that first sends the k-th message's first byte,
            // however the kernel packs messages into segments.
            Impairment::DropNewBytes {
                bytes: vec![(k - 1) * frame + 1],
            }
        } else {
            // One message, one SCTP chunk: the k-th new one.
            Impairment::DropNewChunks { chunks: vec![k] }
        });
    }
    for line in &exp.impairments {
        forward.extend(brisk_net::parse_pattern(line).map_err(|e| e.to_string())?);
    }
    if let Some(p) = point.loss.filter(|p| *p > 0.0) {
        forward.push(Impairment::Bernoulli { p });
    }
    let (fwd_link, back_link) = links(exp, key, forward);
    let mut cfg = EmulationConfig::two_hosts(fwd_link, back_link);
    cfg.seed = crate::runner::seeds(exp, key).1;
    cfg.classifier.charge_udp_encapsulation = false;
    cfg.capture = capture.map(Path::to_path_buf);
    // The stack's congestion control is allowed for namespaces until the
    // guard drops, after the emulation (declared later, dropped earlier).
    let _allowed = stack
        .congestion_control
        .as_deref()
        .map(crate::linux_cc::AllowedGuard::allow)
        .transpose()?;
    let emu = Emulation::start(cfg).map_err(|e| e.to_string())?;
    let cc = stack
        .congestion_control
        .iter()
        .map(|cc| ("net.ipv4.tcp_congestion_control".to_owned(), cc.clone()));
    for (k, v) in stack.sysctl.iter().cloned().chain(cc) {
        for host in 0..2 {
            emu.sysctl(host, &k, &v).map_err(|e| e.to_string())?;
        }
    }
    let records_path = workdir.join(format!(
        "records-{}-{}-{}.csv",
        variant.name,
        key.replication,
        key.position.unwrap_or(0)
    ));
    let _ = std::fs::remove_file(&records_path);
    let competing = exp.competing.as_ref().filter(|c| !c.server.is_empty());
    let competing_path = workdir.join(format!(
        "competing-{}-{}-{}.csv",
        variant.name,
        key.replication,
        key.position.unwrap_or(0)
    ));
    let _ = std::fs::remove_file(&competing_path);
    let brisk = std::env::current_exe().map_err(|e| e.to_string())?;
    let mut vars: HashMap<&str, Vec<String>> = HashMap::new();
    vars.insert("{brisk}", vec![brisk.display().to_string()]);
    vars.insert("{peers}", vec![peers_dir().display().to_string()]);
    vars.insert("{server}", vec![host_addr(1).to_string()]);
    vars.insert("{client}", vec![host_addr(0).to_string()]);
    vars.insert("{records}", vec![records_path.display().to_string()]);
    vars.insert("{schedule}", schedule_args(&traffic)?);
    vars.insert("{config}", config_args(&variant.config));
    vars.insert(
        "{competing_records}",
        vec![competing_path.display().to_string()],
    );
    let spawn = |host: usize, argv: &[String], log: &str| -> Result<Child, String> {
        let argv = expand(argv, &vars);
        let program = argv.first().ok_or("an empty command")?;
        let log = std::fs::File::create(workdir.join(log)).map_err(|e| e.to_string())?;
        emu.command(host, program)
            .args(&argv[1..])
            .stdin(Stdio::null())
            .stdout(log.try_clone().map_err(|e| e.to_string())?)
            .stderr(log)
            .spawn()
            .map_err(|e| format!("starting `{}`: {e}", argv.join(" ")))
    };
    let mut competing_pair = match competing {
        Some(c) => {
            let server = spawn(
                1,
                &c.server,
                &format!("{}-competing-server.log", variant.name),
            )?;
            Some((server, c))
        }
        None => None,
    };
    let mut server = spawn(1, &stack.server, &format!("{}-server.log", variant.name))?;
    std::thread::sleep(SERVER_LEAD);
    let mut competing_client = match &competing_pair {
        Some((_, c)) => Some(spawn(
            0,
            &c.client,
            &format!("{}-competing-client.log", variant.name),
        )?),
        None => None,
    };
    let mut client = spawn(0, &stack.client, &format!("{}-client.log", variant.name))?;
    let last = planned.last().map(|m| m.offset).unwrap_or_default();
    let client_status = wait_or_stop(
        &mut client,
        Instant::now() + START_DELAY + last + SENDER_TAIL,
    );
    let server_status = wait_or_stop(&mut server, Instant::now() + Duration::from_secs(5));
    // The competing flow ends with the measured one.
    if let Some(c) = competing_client.as_mut() {
        wait_or_stop(c, Instant::now());
    }
    if let Some((s, _)) = competing_pair.as_mut() {
        wait_or_stop(s, Instant::now() + Duration::from_secs(5));
    }
    let fwd = emu.finish().map_err(|e| e.to_string())?;
    let text = std::fs::read_to_string(&records_path).unwrap_or_default();
    let rows = read_records(&text)?;
    let complete = client_status.is_some_and(|s| s.success())
        && server_status.is_some_and(|s| s.success())
        && rows.len() == planned.len();

    let base = Record {
        variant: variant.name.clone(),
        ..Record::base(exp, key, &point, &traffic)
    };
    let record = |tsn: Option<u64>, metric: &str, value: f64| Record {
        tsn,
        metric: metric.to_owned(),
        value,
        ..base.clone()
    };
    let mtt: HashMap<u64, f64> = rows.iter().map(|r| (r.seq, r.mtt_ms)).collect();
    let mut out = Vec::new();
    if let Some((_, c)) = &competing_pair {
        let text = std::fs::read_to_string(&competing_path).unwrap_or_default();
        if let Some(kbps) = competing_goodput_kbps(&read_records(&text)?, c.warmup) {
            out.push(Record {
                flow: 1,
                ..record(None, "goodput_kbps", kbps)
            });
        }
    }
    let stats = fwd.link_stats(0, 1).cloned().unwrap_or_default();
    let trace = fwd.trace(0, 1);
    match key.position {
        Some(_) => {
            for i in lost_messages(&stats.dropped_new_chunks, tcp, frame) {
                if let Some(&v) = mtt.get(&i) {
                    out.push(record(Some(i + 1), "mtt_ms", v));
                }
            }
        }
        None => {
            for (i, m) in planned.iter().enumerate() {
                if m.measured
                    && let Some(&v) = mtt.get(&(i as u64))
                {
                    out.push(record(Some(i as u64 + 1), "mtt_ms", v));
                }
            }
        }
    }
    if exp.method == Method::Flow {
        let measured: Vec<f64> = planned
            .iter()
            .enumerate()
            .filter(|(_, m)| m.measured)
            .filter_map(|(i, _)| mtt.get(&(i as u64)).copied())
            .collect();
        if let Some(mean) = crate::stats::mean(&measured) {
            out.push(record(None, "owd_mean_ms", mean));
        }
        out.push(record(
            None,
            "delivered_pct",
            measured.len() as f64 * 100.0
                / planned.iter().filter(|m| m.measured).count().max(1) as f64,
        ));
        // Goodput: the payload read between the first write and the last read.
        let first = rows.iter().map(|r| r.written_ns).min();
        let last = rows.iter().map(|r| r.read_ns).max();
        if let (Some(a), Some(b)) = (first, last)
            && b > a
        {
            let bytes: usize = rows.iter().map(|r| r.size).sum();
            let kbps = bytes as f64 * 8.0 / ((b - a) as f64 / 1e9) / 1000.0;
            out.push(record(None, "goodput_kbps", kbps));
        }
        // The first retransmission of every unit the link lost, off the wire.
        let lost: std::collections::HashSet<u32> = {
            let mut seen = std::collections::HashSet::new();
            trace
                .iter()
                .flat_map(|p| p.data_tsns.iter().map(move |&u| (u, p.lost())))
                .filter(|&(u, lost)| seen.insert(u) && lost)
                .map(|(u, _)| u)
                .collect()
        };
        let sender = trace.first().map(|p| p.src).filter(|_| competing.is_none());
        if let Some(sender) = sender {
            for d in crate::runner::repair_delays(trace, sender, &lost) {
                out.push(record(None, crate::runner::REPAIR, d));
            }
        }
    }
    let delivered = rows.len();
    if delivered > 0 && competing.is_none() {
        out.push(record(
            None,
            "bottleneck_bytes_per_message",
            stats.bytes as f64 / delivered as f64,
        ));
        out.push(record(
            None,
            "bottleneck_packets_per_message",
            stats.sent as f64 / delivered as f64,
        ));
    }
    if competing.is_none() {
        let (all, spurious) = retransmissions(trace);
        out.push(record(None, "retransmissions_any", all as f64));
        out.push(record(None, "spurious_retransmissions", spurious as f64));
    }
    if !complete {
        out.push(record(None, "incomplete", 1.0));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use brisk_net::Fate;

    #[test]
    fn the_competing_goodput_counts_what_was_read_after_the_warm_up() {
        // 1000 bytes read every 10 ms from t = 0 to 3 s: after a 1 s warm-up
        // 200 rows (1.01 to 3.0 s) in 2 s, 800 kbit/s.
        let rows: Vec<Row> = (0..300)
            .map(|i| Row {
                seq: i,
                mtt_ms: 10.0,
                size: 1000,
                written_ns: i * 10_000_000,
                read_ns: (i + 1) * 10_000_000,
            })
            .collect();
        let kbps = competing_goodput_kbps(&rows, Duration::from_secs(1)).unwrap();
        assert!((kbps - 800.0).abs() < 1e-6, "{kbps}");
        assert_eq!(competing_goodput_kbps(&rows, Duration::from_secs(5)), None);
        assert_eq!(competing_goodput_kbps(&[], Duration::ZERO), None);
    }

    #[test]
    fn records_are_read_and_bad_lines_named() {
        let rows = read_records(
            "seq,written_ns,read_ns,size\n0,1000000,17000000,200\n1,2000000,19500000,200\n",
        )
        .unwrap();
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[0].mtt_ms, 16.0);
        assert_eq!(rows[1].mtt_ms, 17.5);
        let e = read_records("seq,written_ns,read_ns,size\n0,x,1,2\n").unwrap_err();
        assert!(e.contains("line 2"), "{e}");
    }

    #[test]
    fn placeholders_expand_one_or_many_arguments() {
        let mut vars: HashMap<&str, Vec<String>> = HashMap::new();
        vars.insert("{server}", vec!["10.77.0.2".into()]);
        vars.insert("{schedule}", vec!["--size".into(), "200".into()]);
        let argv: Vec<String> = ["peer", "--connect", "{server}:9899", "{schedule}"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        assert_eq!(
            expand(&argv, &vars),
            ["peer", "--connect", "10.77.0.2:9899", "--size", "200"]
        );
    }

    #[test]
    fn brisk_config_arguments_name_only_the_knobs_that_differ() {
        let mut c = Config::rfc9260();
        assert_eq!(config_args(&c), ["--config", "rfc9260"]);
        c.set("rto_min", "100ms").unwrap();
        let args = config_args(&c);
        assert_eq!(args.len(), 4, "{args:?}");
        assert!(args[3].starts_with("rto_min="), "{args:?}");
        // What the arguments say is the config again.
        let mut back = Config::rfc9260();
        let (k, v) = args[3].split_once('=').unwrap();
        back.set(k, v).unwrap();
        assert_eq!(back.get("rto_min"), c.get("rto_min"));
    }

    #[test]
    fn lost_messages_are_those_whose_first_byte_or_chunk_was_dropped() {
        let chunk = |number, first_byte, new_bytes| brisk_net::NewChunk {
            number,
            tsn: 0,
            first_byte,
            new_bytes,
        };
        // TCP, 204-byte frames: one segment sent messages 2 and 3 (0-based)
        // for the first time; another only the tail of message 4.
        assert_eq!(lost_messages(&[chunk(3, 409, 408)], true, 204), vec![2, 3]);
        assert!(lost_messages(&[chunk(5, 818, 100)], true, 204).is_empty());
        assert_eq!(lost_messages(&[chunk(1, 1, 1)], true, 204), vec![0]);
        // SCTP: chunk numbers, bundled chunks too.
        assert_eq!(
            lost_messages(&[chunk(4, 0, 0), chunk(5, 0, 0)], false, 204),
            vec![3, 4]
        );
    }

    #[test]
    fn retransmissions_count_copies_and_spurious_ones() {
        let rec = |tsns: &[u32], fate: Fate| PacketRecord {
            entered: brisk_proto::Time::ZERO,
            src: brisk_net::HostId::new(0),
            dst: brisk_net::HostId::new(1),
            ordinal: 1,
            data_ordinal: Some(1),
            size: 100,
            data_tsns: tsns.to_vec(),
            fate,
        };
        let sent = Fate::Sent {
            start: brisk_proto::Time::ZERO,
            arrival: brisk_proto::Time::ZERO,
            corrupted: false,
            duplicated: false,
            reordered: false,
        };
        let trace = [
            rec(&[1], sent),
            rec(&[2], Fate::ImpairmentDrop),
            rec(&[2], sent),    // needed
            rec(&[1, 2], sent), // both spurious
        ];
        assert_eq!(retransmissions(&trace), (3, 2));
    }

    #[test]
    fn a_schedule_becomes_workload_arguments() {
        let t = Traffic::Bursts {
            bursts: 12,
            warmup_bursts: 2,
            size: Count::Fixed(4),
            gap: Gap::Fixed(Duration::from_millis(200)),
            message_size: 200,
        };
        assert_eq!(
            schedule_args(&t).unwrap().join(" "),
            "--size 200 --bursts 12 --burst-size 4 --gap 200 --start-delay 500"
        );
        let e = Traffic::Bursts {
            bursts: 12,
            warmup_bursts: 2,
            size: Count::Uniform(1, 7),
            gap: Gap::Fixed(Duration::from_millis(200)),
            message_size: 200,
        };
        assert!(
            schedule_args(&e)
                .unwrap_err()
                .contains("cannot be emulated")
        );
    }
}
