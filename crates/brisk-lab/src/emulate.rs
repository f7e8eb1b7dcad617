//! `brisk emulate`: real commands in network namespaces joined by emulated
//! links, Mahimahi-style, with the simulator's link code on the wall clock.

use std::path::{Path, PathBuf};
use std::process::{Child, ExitCode, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, anyhow, bail};
use brisk_emu::{Emulation, EmulationConfig, host_addr};
use brisk_net::{Impairment, LinkParams, QueueLimit, parse_pattern};
use clap::Args;

/// The arguments of `brisk emulate`.
#[derive(Debug, Args)]
pub struct EmulateArgs {
    /// Each direction's link: RATE,DELAY[,QUEUE], e.g. 2mbit,15ms or
    /// 10mbit,25ms,50pkt (queue in packets, or bytes with a B suffix;
    /// rate 0 is infinitely fast) [default: 0,0ms, no limit]
    #[arg(long, value_name = "RATE,DELAY[,QUEUE]")]
    pub link: Option<String>,
    /// The link from the server back to the client, if not as --link
    #[arg(long, value_name = "RATE,DELAY[,QUEUE]")]
    pub link_back: Option<String>,
    /// Impairments of the client-to-server direction: a pattern file, as the
    /// simulator's experiments use (drop-new-chunk, drop-data, drop,
    /// bernoulli, gilbert, corrupt, reorder, jitter, ...)
    #[arg(long, value_name = "FILE")]
    pub pattern: Option<PathBuf>,
    /// Impairments of the server-to-client direction
    #[arg(long, value_name = "FILE")]
    pub pattern_back: Option<PathBuf>,
    /// Write every packet of both directions to this pcapng, with a comment
    /// on each packet the link dropped, corrupted, duplicated or held back
    #[arg(long, value_name = "FILE")]
    pub pcap: Option<PathBuf>,
    /// Seeds the random impairments
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Charge SCTP-over-UDP packets as if SCTP ran over IP (the UDP header's
    /// 8 bytes not serialized), as the simulator's seed-000 experiments do
    #[arg(long)]
    pub sctp_over_ip_sizes: bool,
    /// How long the server runs alone before the client starts (e.g. 300ms)
    #[arg(long, value_name = "DURATION", default_value = "300ms", value_parser = crate::net::parse_timeout)]
    pub server_lead: Duration,
    /// Stop the client (and fail) after this long (e.g. 60s)
    #[arg(long, value_name = "DURATION", default_value = "120s", value_parser = crate::net::parse_timeout)]
    pub timeout: Duration,
    /// SERVER_CMD... -- CLIENT_CMD...
    #[arg(last = true, num_args = 1.., value_name = "COMMANDS", required = true)]
    pub commands: Vec<String>,
}

/// Parses RATE,DELAY[,QUEUE] into a link direction carrying IP packets
/// (which include their headers: no overhead added).
pub fn parse_link(spec: &str) -> Result<LinkParams, String> {
    let parts: Vec<&str> = spec.split(',').map(str::trim).collect();
    let [rate, delay, rest @ ..] = parts.as_slice() else {
        return Err(format!(
            "`{spec}`: expected RATE,DELAY[,QUEUE], e.g. 2mbit,15ms or 10mbit,25ms,50pkt"
        ));
    };
    let bandwidth_bps = match *rate {
        "0" => 0,
        r => crate::experiment::parse_rate(r).ok_or_else(|| {
            format!("`{spec}`: rate `{r}` is not a rate (e.g. 2mbit, 500kbit, 0 for no limit)")
        })?,
    };
    let delay = brisk_proto::config::parse_duration(delay)
        .ok_or_else(|| format!("`{spec}`: delay `{delay}` is not a duration (e.g. 15ms, 0ms)"))?;
    let queue = match rest {
        [] => QueueLimit::Unlimited,
        [q] => parse_queue(q)
            .ok_or_else(|| format!("`{spec}`: queue `{q}` is not a size (e.g. 50pkt, 64000B)"))?,
        _ => return Err(format!("`{spec}`: expected at most RATE,DELAY,QUEUE")),
    };
    Ok(LinkParams::new(bandwidth_bps, delay)
        .with_queue(queue)
        .with_overhead(0))
}

fn parse_queue(q: &str) -> Option<QueueLimit> {
    if let Some(n) = q.strip_suffix("pkt") {
        return n.parse().ok().map(QueueLimit::Packets);
    }
    q.strip_suffix('B')?.parse().ok().map(QueueLimit::Bytes)
}

fn pattern(path: &Path) -> Result<Vec<Impairment>> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("reading the pattern file {}", path.display()))?;
    parse_pattern(&text).map_err(|e| anyhow!("{}: {e}", path.display()))
}

/// Splits `SERVER... -- CLIENT...`.
fn split_commands(args: &[String]) -> Result<(Vec<String>, Vec<String>)> {
    let Some(at) = args.iter().position(|a| a == "--") else {
        bail!(
            "brisk emulate needs two commands: -- SERVER_CMD... -- CLIENT_CMD... (got one: `{}`)",
            args.join(" ")
        );
    };
    let (server, client) = (&args[..at], &args[at + 1..]);
    if server.is_empty() {
        bail!("brisk emulate: the server command (before the second --) is empty");
    }
    if client.is_empty() {
        bail!("brisk emulate: the client command (after the second --) is empty");
    }
    Ok((server.to_vec(), client.to_vec()))
}

/// `{server}` and `{client}` replaced by the hosts' addresses.
fn substitute(args: &[String]) -> Vec<String> {
    args.iter()
        .map(|a| {
            a.replace("{server}", &host_addr(1).to_string())
                .replace("{client}", &host_addr(0).to_string())
        })
        .collect()
}

/// The emulation `args` describe, not yet started.
pub fn config(args: &EmulateArgs) -> Result<EmulationConfig> {
    let forward = match &args.link {
        Some(s) => parse_link(s).map_err(|e| anyhow!("--link {e}"))?,
        None => LinkParams::default().with_overhead(0),
    };
    let mut back = match &args.link_back {
        Some(s) => parse_link(s).map_err(|e| anyhow!("--link-back {e}"))?,
        None => LinkParams {
            impairments: Vec::new(),
            ..forward.clone()
        },
    };
    let mut forward = forward;
    if let Some(p) = &args.pattern {
        forward.impairments = pattern(p)?;
    }
    if let Some(p) = &args.pattern_back {
        back.impairments = pattern(p)?;
    }
    // Host a is the client, b the server: forward is a -> b.
    let mut cfg = EmulationConfig::two_hosts(forward, back);
    cfg.seed = args.seed;
    cfg.classifier.charge_udp_encapsulation = !args.sctp_over_ip_sizes;
    cfg.capture = args.pcap.clone();
    Ok(cfg)
}

/// Stops a child: SIGTERM, then SIGKILL after a grace period.
fn stop(child: &mut Child) -> Option<ExitStatus> {
    if let Ok(Some(status)) = child.try_wait() {
        return Some(status);
    }
    let pid = nix::unistd::Pid::from_raw(i32::try_from(child.id()).ok()?);
    let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM);
    let deadline = Instant::now() + Duration::from_secs(2);
    while Instant::now() < deadline {
        if let Ok(Some(status)) = child.try_wait() {
            return Some(status);
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let _ = child.kill();
    child.wait().ok()
}

/// Runs `brisk emulate`.
pub fn run(args: &EmulateArgs) -> Result<ExitCode> {
    let (server, client) = split_commands(&args.commands)?;
    let cfg = config(args)?;
    // Ctrl-C (and SIGTERM) end the run cleanly: children stopped,
    // namespaces removed.
    use crate::emu_runner::interrupted;
    interrupted();
    let emu = Emulation::start(cfg)?;
    let spawn = |host: usize, argv: &[String]| -> Result<Child> {
        let argv = substitute(argv);
        emu.command(host, &argv[0])
            .args(&argv[1..])
            .env("BRISK_EMU_SERVER", host_addr(1).to_string())
            .env("BRISK_EMU_CLIENT", host_addr(0).to_string())
            .stdin(Stdio::null())
            .spawn()
            .with_context(|| format!("starting `{}`", argv.join(" ")))
    };
    let mut server_child = spawn(1, &server)?;
    let lead_end = Instant::now() + args.server_lead;
    while Instant::now() < lead_end && !interrupted() {
        std::thread::sleep(Duration::from_millis(5));
    }
    if let Ok(Some(status)) = server_child.try_wait() {
        emu.finish()?;
        bail!("the server command exited before the client started: {status}");
    }
    let mut client_child = spawn(0, &client)?;
    let deadline = Instant::now() + args.timeout;
    let client_status = loop {
        if let Some(status) = client_child.try_wait().context("waiting for the client")? {
            break Some(status);
        }
        if interrupted() || Instant::now() >= deadline {
            stop(&mut client_child);
            break None;
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    // Give the server a moment to see the end of the association.
    let grace = Instant::now() + Duration::from_secs(2);
    while Instant::now() < grace {
        if let Ok(Some(_)) = server_child.try_wait() {
            break;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    let server_status = stop(&mut server_child);
    let fwd = emu.finish()?;
    let (ab, ba) = (fwd.link_stats(0, 1), fwd.link_stats(1, 0));
    if let (Some(ab), Some(ba)) = (ab, ba) {
        eprintln!(
            "emulated links: client->server {} packets, {} dropped; server->client {} packets, {} dropped",
            ab.sent,
            ab.impairment_drops + ab.queue_drops,
            ba.sent,
            ba.impairment_drops + ba.queue_drops
        );
    }
    if let Some(p) = &args.pcap {
        eprintln!("pcapng written to {}", p.display());
    }
    if interrupted() {
        eprintln!("interrupted: the commands were stopped and the namespaces removed");
        return Ok(ExitCode::from(130));
    }
    let Some(status) = client_status else {
        bail!(
            "the client did not finish within --timeout {}",
            brisk_proto::config::format_duration(args.timeout)
        );
    };
    if let Some(s) = server_status
        && !s.success()
        && s.code().is_some()
    {
        eprintln!("the server command exited with {s}");
    }
    Ok(match status.code() {
        Some(0) => ExitCode::SUCCESS,
        Some(c) => ExitCode::from(u8::try_from(c).unwrap_or(1)),
        None => ExitCode::FAILURE,
    })
}

/// Runs `brisk emulate-accuracy`: the published measurement, printed as
/// tables; exit status 1 when a target is missed.
pub fn accuracy(seconds: f64) -> Result<ExitCode> {
    if !(seconds.is_finite() && seconds > 0.0 && seconds <= 600.0) {
        bail!("--seconds {seconds}: expected a number of seconds above 0 and at most 600");
    }
    let plan = brisk_emu::accuracy::Plan {
        duration: Duration::from_secs_f64(seconds),
        ..brisk_emu::accuracy::Plan::default()
    };
    let acc = brisk_emu::accuracy::measure(&plan)?;
    crate::output::print_stdout(&acc.to_string());
    let section = crate::emu_report::accuracy_section(&acc);
    Ok(match section.status {
        crate::report::Status::Reproduced => ExitCode::SUCCESS,
        _ => {
            eprintln!("a target was missed (see above)");
            ExitCode::FAILURE
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_link_spec_reads_rate_delay_and_queue() {
        let l = parse_link("2mbit,15ms").unwrap();
        assert_eq!(l.bandwidth_bps, 2_000_000);
        assert_eq!(l.delay, Duration::from_millis(15));
        assert_eq!(l.queue, QueueLimit::Unlimited);
        assert_eq!(l.overhead_bytes, 0);
        assert_eq!(
            parse_link("10mbit, 25ms, 50pkt").unwrap().queue,
            QueueLimit::Packets(50)
        );
        assert_eq!(
            parse_link("0,0ms,64000B").unwrap().queue,
            QueueLimit::Bytes(64_000)
        );
    }

    #[test]
    fn a_bad_link_spec_says_what_was_expected() {
        for (spec, words) in [
            ("2mbit", "expected RATE,DELAY"),
            ("fast,15ms", "rate `fast`"),
            ("2mbit,soon", "delay `soon`"),
            ("2mbit,1ms,lots", "queue `lots`"),
        ] {
            let e = parse_link(spec).unwrap_err();
            assert!(e.contains(words), "{spec}: {e}");
        }
    }

    #[test]
    fn the_commands_split_at_the_second_double_dash() {
        let v = |s: &str| s.split(' ').map(String::from).collect::<Vec<_>>();
        let (s, c) = split_commands(&v("srv --x -- cli {server}")).unwrap();
        assert_eq!((s, c), (v("srv --x"), v("cli {server}")));
        assert_eq!(substitute(&v("cli {server}:9")), v("cli 10.77.0.2:9"));
        assert!(
            split_commands(&v("only"))
                .unwrap_err()
                .to_string()
                .contains("two commands")
        );
        assert!(
            split_commands(&v("-- c"))
                .unwrap_err()
                .to_string()
                .contains("server command")
        );
        assert!(
            split_commands(&v("s --"))
                .unwrap_err()
                .to_string()
                .contains("client command")
        );
    }
}
