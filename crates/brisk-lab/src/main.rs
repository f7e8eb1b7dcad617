//! The `brisk` command line.

use std::net::SocketAddr;
use std::num::NonZeroUsize;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result};
use brisk_lab::reproduce;
use clap::{Args, Parser, Subcommand};

/// Brisk: a user-space SCTP stack for timely delivery of small messages, and the
/// network lab that measures it.
#[derive(Debug, Parser)]
#[command(name = "brisk", version)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run one experiment file in the simulator and write its report
    ///
    /// Exits with status 1 when a check differs from the paper (outside its
    /// bounds and any known gap's) or cannot be computed; known gaps do not
    /// fail the run.
    Run {
        /// The experiment file (TOML)
        file: PathBuf,
        /// Report directory [default: ./brisk-report in the working directory]
        #[arg(long, value_name = "DIR")]
        out: Option<PathBuf>,
        /// Parallel runs (default: the number of cores)
        #[arg(long, value_name = "N")]
        jobs: Option<NonZeroUsize>,
        /// Also capture one run to this file: pcapng, one interface per link
        /// direction (both ways, every hop), SCTP over UDP port 9899, and a
        /// comment on every packet a link dropped or corrupted
        #[arg(long, value_name = "FILE")]
        pcap: Option<PathBuf>,
        /// Which run --pcap captures: KEY=VALUE pairs separated by commas, keys
        /// variant, bandwidth, delay, message-size, loss, corrupt, rate, mtu,
        /// replication, position (e.g. variant=standard,position=3); the
        /// first run that matches them all [default: the first run]
        #[arg(long, value_name = "KEY=VALUE,...", requires = "pcap")]
        pcap_run: Option<String>,
        /// Run only shard K of N: every N-th run of the experiment, from the
        /// K-th (1 <= K <= N), and write the shard's records, counters and
        /// manifest to --out [default: ./brisk-shard-K-of-N] for `brisk merge`
        #[arg(long, value_name = "K/N", conflicts_with = "pcap")]
        shard: Option<brisk_lab::shard::Shard>,
    },
    /// Merge the shards of one experiment (`brisk run --shard K/N`) into the
    /// report an unsharded `brisk run` writes: the same runs.csv, summary.csv
    /// and summary.json, byte for byte
    ///
    /// Every K from 1 to N must be there once, all of the same experiment.
    /// Exits with status 1 when a check differs, as `run` does.
    Merge {
        /// The shard directories
        #[arg(required = true, value_name = "DIR")]
        dirs: Vec<PathBuf>,
        /// Report directory [default: ./brisk-report in the working directory]
        #[arg(long, value_name = "DIR")]
        out: Option<PathBuf>,
        /// The experiment file [default: the one the shards' manifest names]
        #[arg(long, value_name = "FILE")]
        experiment: Option<PathBuf>,
    },
    /// Accept associations over UDP and echo every message back on its stream with its PPID
    Echo {
        /// UDP address to listen on
        #[arg(long, default_value = "0.0.0.0:9899")]
        listen: SocketAddr,
        /// Exit after the first association ends
        #[arg(long)]
        once: bool,
        #[command(flatten)]
        common: CommonArgs,
    },
    /// Accept one association and count what arrives until it ends
    Recv {
        /// UDP address to listen on
        #[arg(long, default_value = "0.0.0.0:9899")]
        listen: SocketAddr,
        /// After this many messages, shut the association down gracefully and
        /// exit (waiting at most 10 s for the shutdown to complete)
        #[arg(long, value_name = "N")]
        count: Option<u64>,
        #[command(flatten)]
        common: CommonArgs,
    },
    /// Associate with a peer, send messages, close gracefully
    Send {
        #[command(flatten)]
        target: TargetArgs,
        #[command(flatten)]
        load: LoadArgs,
        #[command(flatten)]
        common: CommonArgs,
    },
    /// Measure throughput and, against a peer that echoes each message on its
    /// stream with its PPID (`brisk echo`), round-trip latency
    Bench {
        #[command(flatten)]
        target: TargetArgs,
        /// The peer does not echo (`brisk recv`): measure until all is acknowledged
        #[arg(long)]
        sink: bool,
        /// Messages sent but not yet echoed, at most (1 or more)
        #[arg(long, value_name = "W", default_value = "256", value_parser = brisk_lab::net::parse_window)]
        window: u64,
        #[command(flatten)]
        load: LoadArgs,
        #[command(flatten)]
        common: CommonArgs,
    },
    /// Write messages on a schedule, each stamped with CLOCK_MONOTONIC, for
    /// `msg-recv` to time (tests/interop/WORKLOAD.md)
    ///
    /// Prints `SENT count=<N>` once every message is delivered, or
    /// `FAIL <reason>` and exits with status 1.
    MsgSend {
        /// Local address (UDP for SCTP, TCP for TCP); port 0 picks one
        #[arg(long, value_name = "ADDR:PORT")]
        bind: SocketAddr,
        /// The receiver's address
        #[arg(long, value_name = "ADDR:PORT")]
        connect: SocketAddr,
        /// Bytes per message (at least 12: seq and the write stamp)
        #[arg(long, value_name = "BYTES")]
        size: u32,
        /// Periodic schedule: one message every MS milliseconds (with --count)
        #[arg(long, value_name = "MS", allow_hyphen_values = true, value_parser = brisk_lab::workload::parse_millis)]
        every: Option<std::time::Duration>,
        /// Periodic schedule: this many messages (with --every)
        #[arg(long, value_name = "N")]
        count: Option<u64>,
        /// Burst schedule: this many bursts (with --burst-size and --gap)
        #[arg(long, value_name = "B")]
        bursts: Option<u64>,
        /// Burst schedule: messages per burst, written back to back
        #[arg(long, value_name = "K")]
        burst_size: Option<u64>,
        /// Burst schedule: milliseconds from one burst's start to the next's
        #[arg(long, value_name = "MS", allow_hyphen_values = true, value_parser = brisk_lab::workload::parse_millis)]
        gap: Option<std::time::Duration>,
        /// Milliseconds to wait after associating before the first message
        #[arg(long, value_name = "MS", default_value = "500", allow_hyphen_values = true, value_parser = brisk_lab::workload::parse_millis)]
        start_delay: std::time::Duration,
        /// The stack that carries the messages
        #[arg(long, value_enum, default_value_t)]
        transport: brisk_lab::workload::Transport,
        #[command(flatten)]
        common: CommonArgs,
    },
    /// Accept one association (connection), check every message and write
    /// `seq,written_ns,read_ns,size` per message (tests/interop/WORKLOAD.md)
    ///
    /// Prints `CLOSED received=<n>` on stderr when the peer ends gracefully,
    /// or `FAIL <reason>` and exits with status 1.
    MsgRecv {
        /// Address to listen on (UDP for SCTP, TCP for TCP)
        #[arg(long, value_name = "ADDR:PORT")]
        bind: SocketAddr,
        /// CSV file for the records [default: stdout]
        #[arg(long, value_name = "FILE")]
        records: Option<PathBuf>,
        /// The stack that carries the messages
        #[arg(long, value_enum, default_value_t)]
        transport: brisk_lab::workload::Transport,
        #[command(flatten)]
        common: CommonArgs,
    },
    /// Run the built-in experiment suite (experiments/*.toml) in the simulator and write the report
    ///
    /// Exits with status 1 when a check differs from the paper (outside its
    /// bounds and any known gap's) or cannot be computed; known gaps do not
    /// fail the run.
    Reproduce(ReproduceArgs),
    /// List every config knob: its unit, its value in each preset, and what it does
    Knobs {
        /// The TCP model's knobs and presets (experiment variants with
        /// transport = "tcp") instead of Brisk's
        #[arg(long)]
        tcp: bool,
    },
    /// Run real commands in network namespaces joined by emulated links (needs root)
    ///
    /// Like Mahimahi, but with the simulator's own link code on the wall
    /// clock: the same bandwidth, delay, queue, impairments and pattern files.
    /// The server runs in host b (10.77.0.2), the client in host a
    /// (10.77.0.1); in each command `{server}` and `{client}` stand for those
    /// addresses, also given as $BRISK_EMU_SERVER and $BRISK_EMU_CLIENT. The
    /// client's exit status is the command's; the server is stopped after it.
    Emulate(brisk_lab::emulate::EmulateArgs),
    /// Measure the emulator's own error (needs root): the one-way delay error
    /// at 100, 1,000 and 10,000 packets/s, the achieved rate at 1, 10 and 100
    /// Mbit/s, and whether drop ordinals are exact
    ///
    /// Exits with status 1 when a target is missed: p99 delay error under
    /// 0.5 ms at 1,000 packets/s, rates within 2%, ordinals exact.
    EmulateAccuracy {
        /// Seconds each delay and rate probe sends
        #[arg(long, default_value_t = 3.0)]
        seconds: f64,
    },
}

/// Protocol configuration, shared by the network commands.
#[derive(Debug, Args)]
struct CommonArgs {
    /// Config preset: the protocol's settings before any --set
    #[arg(
        long = "config",
        value_name = "PRESET",
        default_value = "rfc9260",
        value_parser = clap::builder::PossibleValuesParser::new(brisk_proto::PRESETS.iter().copied())
    )]
    preset: String,
    /// Override one knob, e.g. --set rto_min=200ms (repeatable; `brisk knobs` lists them)
    #[arg(long = "set", value_name = "KNOB=VALUE")]
    set: Vec<String>,
    /// SCTP port, ours and the peer's
    #[arg(long, default_value_t = 5000)]
    sctp_port: u16,
}

impl CommonArgs {
    fn common(&self) -> brisk_lab::net::Common {
        brisk_lab::net::Common {
            preset: self.preset.clone(),
            set: self.set.clone(),
            sctp_port: self.sctp_port,
        }
    }
}

/// The peer of `send` and `bench`, and how to reach it.
#[derive(Debug, Args)]
struct TargetArgs {
    /// The peer's UDP address
    #[arg(long, value_name = "ADDR")]
    to: SocketAddr,
    /// Local UDP address, of the same family as --to [default: 0.0.0.0:0, or [::]:0 for an IPv6 peer]
    #[arg(long, value_name = "ADDR")]
    bind: Option<SocketAddr>,
    /// Give up if the handshake has not completed within this time (e.g. 10s, 500ms)
    #[arg(long, value_name = "DURATION", default_value = "10s", value_parser = brisk_lab::net::parse_timeout)]
    connect_timeout: std::time::Duration,
}

impl TargetArgs {
    fn target(&self) -> brisk_lab::net::Target {
        brisk_lab::net::Target {
            to: self.to,
            bind: self.bind,
            connect_timeout: self.connect_timeout,
        }
    }
}

/// What to send.
#[derive(Debug, Args)]
struct LoadArgs {
    /// Message size in bytes (1 or more)
    #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(u32).range(1..))]
    size: u32,
    /// Number of messages
    #[arg(long, default_value_t = 10_000)]
    count: u64,
    /// Spread messages round robin over this many streams (1 or more)
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..))]
    streams: u16,
    /// Send unordered
    #[arg(long)]
    unordered: bool,
    /// Messages per second, above 0 (default: as fast as possible)
    #[arg(long, value_parser = brisk_lab::net::parse_rate)]
    rate: Option<f64>,
}

impl LoadArgs {
    fn load(&self) -> brisk_lab::net::Load {
        brisk_lab::net::Load {
            size: self.size as usize,
            count: self.count,
            streams: self.streams,
            unordered: self.unordered,
            rate: self.rate,
        }
    }
}

#[derive(Debug, Args)]
struct ReproduceArgs {
    /// Run only the experiment with this name (file stem of experiments/NAME.toml)
    #[arg(long, value_name = "NAME")]
    only: Option<String>,
    /// Directory to write the report into [default: ./brisk-report in the working directory]
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// Number of replications to run in parallel (at least 1)
    #[arg(long, value_name = "N")]
    jobs: Option<NonZeroUsize>,
    /// Run the emulator experiments (experiments/emu/: real stacks through
    /// emulated links, in real time; needs root) instead of the simulator's.
    /// `--only emu` does the same
    #[arg(long)]
    emulate: bool,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Reproduce(args) => run_reproduce(args),
        Command::Emulate(args) => brisk_lab::emulate::run(&args),
        Command::EmulateAccuracy { seconds } => brisk_lab::emulate::accuracy(seconds),
        Command::Knobs { tcp } => {
            let table = if tcp {
                tcp_knobs_table()
            } else {
                knobs_table()
            };
            brisk_lab::output::print_stdout(&table);
            Ok(ExitCode::SUCCESS)
        }
        Command::Run {
            file,
            out,
            jobs,
            pcap,
            pcap_run,
            shard,
        } => match shard {
            Some(shard) => run_shard(&file, out, jobs, shard),
            None => run_one_file(file, out, jobs, pcap, pcap_run.as_deref()),
        },
        Command::Merge {
            dirs,
            out,
            experiment,
        } => merge_shards(&dirs, out, experiment),
        Command::Echo {
            listen,
            once,
            common,
        } => block_on(brisk_lab::net::echo(listen, &common.common(), once)),
        Command::Recv {
            listen,
            count,
            common,
        } => block_on(brisk_lab::net::recv(listen, &common.common(), count)),
        Command::Send {
            target,
            load,
            common,
        } => block_on(brisk_lab::net::send(
            &target.target(),
            &common.common(),
            &load.load(),
        )),
        Command::Bench {
            target,
            sink,
            window,
            load,
            common,
        } => block_on(async {
            let report = brisk_lab::net::bench(
                &target.target(),
                &common.common(),
                &load.load(),
                !sink,
                window,
            )
            .await?;
            brisk_lab::output::print_stdout(&format!("{report}\n"));
            // Echoes that match no message sent fail the run, after the report.
            report.check()
        }),
        Command::MsgSend {
            bind,
            connect,
            size,
            every,
            count,
            bursts,
            burst_size,
            gap,
            start_delay,
            transport,
            common,
        } => Ok(brisk_lab::workload::msg_send(
            &brisk_lab::workload::SendArgs {
                bind,
                connect,
                size,
                schedule: brisk_lab::workload::ScheduleArgs {
                    every,
                    count,
                    bursts,
                    burst_size,
                    gap,
                },
                start_delay,
                transport,
                common: common.common(),
            },
        )),
        Command::MsgRecv {
            bind,
            records,
            transport,
            common,
        } => Ok(brisk_lab::workload::msg_recv(
            &brisk_lab::workload::RecvArgs {
                bind,
                records,
                transport,
                common: common.common(),
            },
        )),
    };
    match result {
        Ok(code) => code,
        Err(err) => {
            eprintln!("{err:#}");
            ExitCode::FAILURE
        }
    }
}

/// Runs a network command on a single-threaded tokio runtime: the driver and
/// the application share one core, as in the benchmarks of the README.
fn block_on(f: impl std::future::Future<Output = Result<()>>) -> Result<ExitCode> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("starting the tokio runtime")?;
    rt.block_on(f)?;
    Ok(ExitCode::SUCCESS)
}

fn run_one_file(
    file: PathBuf,
    out: Option<PathBuf>,
    jobs: Option<NonZeroUsize>,
    pcap: Option<PathBuf>,
    pcap_run: Option<&str>,
) -> Result<ExitCode> {
    use std::io::IsTerminal;
    let opts = reproduce::Options {
        only: None,
        out,
        jobs,
        progress: std::io::stderr().is_terminal(),
    };
    let dir = file.parent().map(PathBuf::from).unwrap_or_default();
    if let Some(pcap) = pcap {
        let exp = brisk_lab::experiment::Experiment::load(&file)?;
        let key = select_run(&exp, pcap_run.unwrap_or(""))
            .map_err(|e| anyhow::anyhow!("--pcap-run: {e}"))?;
        brisk_lab::runner::capture_run(&exp, &key, &pcap).map_err(anyhow::Error::msg)?;
        eprintln!(
            "pcap of the run ({}) written to {} (pcapng: one interface per link direction; \
             dropped and corrupted packets carry a comment)",
            describe_run(&exp, &key),
            pcap.display()
        );
    }
    let suite = reproduce::run_files(&[file], &dir, &opts)?;
    brisk_lab::output::print_stdout(&format!("{suite}\n"));
    Ok(checks_exit_code(&suite))
}

/// `brisk run FILE --shard K/N`: runs the shard and writes its directory.
fn run_shard(
    file: &std::path::Path,
    out: Option<PathBuf>,
    jobs: Option<NonZeroUsize>,
    shard: brisk_lab::shard::Shard,
) -> Result<ExitCode> {
    use std::io::IsTerminal;
    let exp = brisk_lab::experiment::Experiment::load(file)?;
    let out = out.unwrap_or_else(|| {
        PathBuf::from(format!("brisk-shard-{}-of-{}", shard.index, shard.count))
    });
    let jobs = jobs
        .map(NonZeroUsize::get)
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, NonZeroUsize::get));
    let bar = reproduce::progress_bar(std::io::stderr().is_terminal(), 0);
    bar.set_message(format!("{} {shard}", exp.name));
    let started = std::time::Instant::now();
    let output = brisk_lab::runner::run_shard(&exp, shard, jobs, &bar);
    bar.finish_and_clear();
    output.write(&out)?;
    let m = &output.manifest;
    brisk_lab::output::print_stdout(&format!(
        "{} shard {shard}: {} of {} runs, {} records in {:.1} s\nshard: {}\n",
        m.experiment,
        m.runs,
        m.runs_total,
        m.records,
        started.elapsed().as_secs_f64(),
        out.display()
    ));
    Ok(ExitCode::SUCCESS)
}

/// `brisk merge DIR...`: the report of the merged shards, and the exit
/// status of `run`.
fn merge_shards(
    dirs: &[PathBuf],
    out: Option<PathBuf>,
    experiment: Option<PathBuf>,
) -> Result<ExitCode> {
    let started = std::time::Instant::now();
    let file = match experiment {
        Some(file) => file,
        None => {
            let first = &dirs[0];
            let m = brisk_lab::shard::read_manifest(first)?;
            PathBuf::from(m.experiment_file)
        }
    };
    let exp = brisk_lab::experiment::Experiment::load(&file).with_context(|| {
        format!(
            "loading the experiment the shards belong to ({}; pass --experiment FILE to name it)",
            file.display()
        )
    })?;
    let (records, totals) = brisk_lab::shard::merge_dirs(&exp, dirs)?;
    let out = reproduce::prepare_out(out.as_deref())?;
    let experiments = std::slice::from_ref(&exp);
    let accuracy = reproduce::emulator_accuracy(experiments, &indicatif::ProgressBar::hidden())?;
    let result = reproduce::ExperimentResult {
        exp: &exp,
        records,
        totals,
        wall_seconds: started.elapsed().as_secs_f64(),
    };
    let suite = reproduce::write_results(&out, accuracy, vec![result], started)?;
    brisk_lab::output::print_stdout(&format!("{suite}\n"));
    Ok(checks_exit_code(&suite))
}

fn run_reproduce(args: ReproduceArgs) -> Result<ExitCode> {
    use std::io::IsTerminal;
    let mut opts = reproduce::Options {
        only: args.only,
        out: args.out,
        jobs: args.jobs,
        progress: std::io::stderr().is_terminal(),
    };
    let cwd = std::env::current_dir()
        .context("brisk reproduce: cannot determine the current directory")?;
    let mut dir =
        reproduce::resolve_experiments_dir(&cwd, &reproduce::workspace_experiments_dir())?;
    if args.emulate || opts.only.as_deref() == Some("emu") {
        // Beside the simulator's report, not over it.
        opts.out
            .get_or_insert_with(|| cwd.join(reproduce::DEFAULT_EMU_OUT_DIR));
        // The emulator's experiments take minutes of wall clock each: only
        // when asked for.
        dir = dir.join(reproduce::EMULATOR_DIR);
        if opts.only.as_deref() == Some("emu") {
            opts.only = None;
        }
    }
    let suite = reproduce::reproduce(&dir, &opts)?;
    brisk_lab::output::print_stdout(&format!("{suite}\n"));
    Ok(checks_exit_code(&suite))
}

/// Exit status of `run` and `reproduce`: 1 when a check differs from the
/// paper (outside its bounds and any known gap's) or could not be computed;
/// known gaps and checks awaiting a mechanism do not fail the run.
fn checks_exit_code(suite: &reproduce::SuiteSummary) -> ExitCode {
    if suite.failures().is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

/// A run in words, numbered as in `runs.csv`: `variant standard, 2000kbit/s, 15ms,
/// replication 0, loss position 3`.
fn describe_run(
    exp: &brisk_lab::experiment::Experiment,
    key: &brisk_lab::runner::RunKey,
) -> String {
    let point = exp.point(&key.point);
    let variant = exp
        .variants
        .get(key.variant)
        .map_or("?", |v| v.name.as_str());
    let mut words = vec![
        format!("variant {variant}"),
        format!("{}kbit/s", point.bandwidth_bps / 1000),
        brisk_proto::config::format_duration(point.delay),
    ];
    if let Some(size) = point.message_size {
        words.push(format!("{size}-byte messages"));
    }
    for (name, value) in [
        ("loss", point.loss),
        ("corrupt", point.corrupt),
        ("rate", point.rate),
    ] {
        if let Some(v) = value {
            words.push(format!("{name} {v}"));
        }
    }
    if let Some(mtu) = point.mtu {
        words.push(format!("MTU {mtu}"));
    }
    words.push(format!("replication {}", key.replication));
    words.push(match key.position {
        Some(k) => format!("loss position {k}"),
        None => "no loss position".to_owned(),
    });
    words.join(", ")
}

/// The keys of `--pcap-run`.
const PCAP_RUN_KEYS: [&str; 10] = [
    "variant",
    "bandwidth",
    "delay",
    "message-size",
    "loss",
    "corrupt",
    "rate",
    "mtu",
    "replication",
    "position",
];

/// One `KEY=VALUE` of `--pcap-run`, resolved against the experiment.
#[derive(Debug, Clone, Copy, PartialEq)]
enum RunFilter {
    Variant(usize),
    /// A sweep dimension at this index into its values.
    Point(brisk_lab::experiment::Dim, usize),
    Replication(u32),
    Position(Option<u64>),
}

fn optional<T: std::fmt::Display>(v: &Option<T>) -> String {
    v.as_ref()
        .map_or_else(|| "none".to_owned(), ToString::to_string)
}

/// Value `i` of dimension `d`, written as `--pcap-run` takes it.
fn dim_value(
    exp: &brisk_lab::experiment::Experiment,
    d: brisk_lab::experiment::Dim,
    i: usize,
) -> String {
    use brisk_lab::experiment::Value;
    match exp.sweep.values(d)[i] {
        Value::Bandwidth(bps) => rate_words(bps),
        Value::Delay(delay) => brisk_proto::config::format_duration(delay),
        Value::MessageSize(v) | Value::Mtu(v) => optional(&v),
        Value::Loss(v) | Value::Corrupt(v) | Value::Rate(v) => optional(&v),
    }
}

/// The dimension of a `--pcap-run` key, for the sweep keys: its name in
/// the file with a hyphen for the underscore (`message-size`).
fn key_dim(key: &str) -> Option<brisk_lab::experiment::Dim> {
    brisk_lab::experiment::Dim::ALL
        .into_iter()
        .find(|d| d.name().replace('_', "-") == key)
}

impl RunFilter {
    fn matches(self, key: &brisk_lab::runner::RunKey) -> bool {
        match self {
            RunFilter::Variant(v) => key.variant == v,
            RunFilter::Point(d, i) => key.point.get(d) == i,
            RunFilter::Replication(r) => key.replication == r,
            RunFilter::Position(p) => key.position == p,
        }
    }
}

/// This key's value in run `key`, written as `--pcap-run` takes it.
fn run_value(
    exp: &brisk_lab::experiment::Experiment,
    name: &str,
    key: &brisk_lab::runner::RunKey,
) -> String {
    match name {
        "variant" => exp
            .variants
            .get(key.variant)
            .map_or_else(|| "?".to_owned(), |v| v.name.clone()),
        "replication" => key.replication.to_string(),
        "position" => optional(&key.position),
        _ => key_dim(name).map_or_else(String::new, |d| dim_value(exp, d, key.point.get(d))),
    }
}

/// Distinct values in first-seen order; runs of consecutive integers as `A-B`.
fn value_list(values: impl IntoIterator<Item = String>) -> String {
    let mut seen: Vec<String> = Vec::new();
    for v in values {
        if !seen.contains(&v) {
            seen.push(v);
        }
    }
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < seen.len() {
        let mut j = i;
        if let Ok(first) = seen[i].parse::<u64>() {
            while seen
                .get(j + 1)
                .and_then(|s| s.parse::<u64>().ok())
                .is_some_and(|n| n == first + (j + 1 - i) as u64)
            {
                j += 1;
            }
        }
        if j > i + 1 {
            out.push(format!("{}-{}", seen[i], seen[j]));
        } else {
            out.extend(seen[i..=j].iter().cloned());
        }
        i = j + 1;
    }
    out.join(", ")
}

/// Resolves one `KEY=VALUE` of `--pcap-run` against the experiment.
fn parse_filter(
    exp: &brisk_lab::experiment::Experiment,
    runs: &[brisk_lab::runner::RunKey],
    name: &str,
    value: &str,
) -> Result<RunFilter, String> {
    let valid = || value_list(runs.iter().map(|k| run_value(exp, name, k)));
    let not_a_value = || {
        format!(
            "{name}={value} matches no run of {}; its runs have {name} {}",
            exp.name,
            valid()
        )
    };
    match name {
        "variant" => exp
            .variants
            .iter()
            .position(|v| v.name == value)
            .map(RunFilter::Variant)
            .ok_or_else(not_a_value),
        "replication" => {
            let r: u32 = value.parse().map_err(|_| {
                format!("replication: expected a run number from 0, found `{value}`")
            })?;
            (r < exp.replications)
                .then_some(RunFilter::Replication(r))
                .ok_or_else(not_a_value)
        }
        "position" => {
            let p = match value {
                "none" => None,
                v => Some(v.parse::<u64>().ok().filter(|&p| p > 0).ok_or_else(|| {
                    format!("position: expected a loss position from 1, or none, found `{value}`")
                })?),
            };
            runs.iter()
                .any(|k| k.position == p)
                .then_some(RunFilter::Position(p))
                .ok_or_else(not_a_value)
        }
        _ => {
            let d = key_dim(name).ok_or_else(|| {
                format!(
                    "unknown key `{name}`; expected KEY=VALUE pairs separated by commas, \
                     with keys {}",
                    PCAP_RUN_KEYS.join(", ")
                )
            })?;
            let n = exp.dim_len(d);
            // Compare as the values are written, after parsing both sides.
            let index = if value == "none" {
                (0..n).find(|&i| dim_value(exp, d, i) == "none")
            } else {
                use brisk_lab::experiment::Dim;
                let (wanted, expected): (Option<String>, &str) = match d {
                    Dim::Bandwidth => (
                        brisk_lab::experiment::parse_rate(value).map(rate_words),
                        "a rate such as 2000kbit or 2Mbit",
                    ),
                    Dim::Delay => (
                        brisk_proto::config::parse_duration(value)
                            .map(brisk_proto::config::format_duration),
                        "a duration such as 15ms or 1.5s",
                    ),
                    Dim::MessageSize | Dim::Mtu => (
                        value.parse::<usize>().ok().map(|n| n.to_string()),
                        "a whole number of bytes",
                    ),
                    Dim::Loss | Dim::Corrupt | Dim::Rate => (
                        value
                            .parse::<f64>()
                            .ok()
                            .filter(|x| x.is_finite())
                            .map(|x| x.to_string()),
                        "a number",
                    ),
                };
                let wanted = wanted
                    .ok_or_else(|| format!("{name}: expected {expected}, found `{value}`"))?;
                (0..n).find(|&i| dim_value(exp, d, i) == wanted)
            };
            index
                .map(|i| RunFilter::Point(d, i))
                .ok_or_else(not_a_value)
        }
    }
}

/// A bandwidth written as `--pcap-run` lists it.
fn rate_words(bps: u64) -> String {
    if bps % 1000 == 0 {
        format!("{}kbit", bps / 1000)
    } else {
        format!("{bps}bit")
    }
}

/// The run `--pcap-run SPEC` selects: the first of the experiment's runs (in
/// `runs.csv` order) that matches every `KEY=VALUE` of `spec`; an empty spec
/// selects the first run.
fn select_run(
    exp: &brisk_lab::experiment::Experiment,
    spec: &str,
) -> Result<brisk_lab::runner::RunKey, String> {
    let runs = brisk_lab::runner::expand(exp);
    let mut filters: Vec<(&str, RunFilter)> = Vec::new();
    for part in spec.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let Some((name, value)) = part.split_once('=') else {
            return Err(format!(
                "expected KEY=VALUE, found `{part}` (keys: {})",
                PCAP_RUN_KEYS.join(", ")
            ));
        };
        let (name, value) = (name.trim(), value.trim());
        // `message_size` is accepted for `message-size`, as in runs.csv.
        let name = match name {
            "message_size" => "message-size",
            n => n,
        };
        if filters.iter().any(|(n, _)| *n == name) {
            return Err(format!("key `{name}` given twice"));
        }
        let filter = parse_filter(exp, &runs, name, value)?;
        filters.push((name, filter));
    }
    if let Some(key) = runs
        .iter()
        .find(|k| filters.iter().all(|(_, f)| f.matches(k)))
    {
        return Ok(*key);
    }
    if runs.is_empty() {
        return Err(format!("{} has no runs", exp.name));
    }
    // Each value exists, but not together: say what the others allow.
    let hints: Vec<String> = filters
        .iter()
        .map(|(name, _)| {
            let others: Vec<&RunFilter> = filters
                .iter()
                .filter(|(n, _)| n != name)
                .map(|(_, f)| f)
                .collect();
            let allowed = value_list(
                runs.iter()
                    .filter(|k| others.iter().all(|f| f.matches(k)))
                    .map(|k| run_value(exp, name, k)),
            );
            format!("{name} {allowed}")
        })
        .collect();
    Err(format!(
        "no run of {} matches `{spec}`; with the other keys as given, the runs have {}",
        exp.name,
        hints.join("; ")
    ))
}

/// `brisk knobs`: every knob of [`brisk_proto::Config`] as declared in
/// `config.rs`, with its unit, its value in each preset (the lab's included;
/// `rfc9260` is the defaults) and the first sentence of its doc, then what each
/// preset is and which knobs it changes.
fn knobs_table() -> String {
    use brisk_lab::experiment::{LAB_PRESETS, preset};
    use brisk_proto::config::KNOB_TABLE;
    let presets: Vec<(&str, brisk_proto::Config)> = LAB_PRESETS
        .iter()
        .filter_map(|&name| preset(name).map(|c| (name, c)))
        .collect();
    let rows = KNOB_TABLE.iter().map(|knob| {
        let mut row = vec![knob.name.to_owned(), knob.unit.to_owned()];
        row.extend(presets.iter().map(|(_, c)| knob.get(c)));
        row.push(knob.summary());
        row
    });
    let mut out = columns(presets.iter().map(|p| p.0), rows);
    out.push_str(
        "\nThe network commands start from rfc9260 (--config picks another preset) and take\n\
         --set KNOB=VALUE; an experiment's [[variants]] take `set = { KNOB = VALUE }`.\n\
         Values are written as in the table. `brisk knobs --tcp` lists the TCP model's.\n",
    );
    out.push_str(&presets_legend());
    out
}

/// The presets of `brisk knobs`, one paragraph each: name and the first
/// sentence of its doc, then the knobs whose value differs from their default.
fn presets_legend() -> String {
    use brisk_lab::experiment::{LAB_ONLY_PRESETS, preset};
    use brisk_proto::config::PRESET_TABLE;
    let described = PRESET_TABLE.iter().map(|p| (p.name, p.summary())).chain(
        LAB_ONLY_PRESETS
            .iter()
            .map(|&(name, doc)| (name, format!("(experiments only) {doc}"))),
    );
    let described: Vec<(&str, String)> = described.collect();
    let width = described
        .iter()
        .map(|(name, _)| name.len())
        .max()
        .unwrap_or(0);
    let mut out = "\nPresets: rfc9260 holds every knob's default; each other preset is the \
                   defaults with the knobs it changes.\n"
        .to_owned();
    for (name, summary) in &described {
        let changes = preset(name).map(|c| changed_knobs(&c)).unwrap_or_default();
        let changes = match changes.as_slice() {
            [] => "every knob at its default".to_owned(),
            knobs => format!("changes {}", knobs.join(", ")),
        };
        out.push_str(&format!(
            "  {name:<width$}  {summary}\n  {:<width$}  {changes}\n",
            ""
        ));
    }
    out
}

/// The knobs whose value in `config` differs from their default, in
/// declaration order.
fn changed_knobs(config: &brisk_proto::Config) -> Vec<&'static str> {
    brisk_proto::config::KNOB_TABLE
        .iter()
        .filter(|k| k.get(config) != k.default_value())
        .map(|k| k.name)
        .collect()
}

/// The TCP model's knobs: what an experiment's TCP variants set.
fn tcp_knobs_table() -> String {
    use brisk_tcp::{KNOB_TABLE, PRESETS, TcpConfig};
    let presets: Vec<(&str, TcpConfig)> = PRESETS
        .iter()
        .filter_map(|&name| TcpConfig::preset(name).ok().map(|c| (name, c)))
        .collect();
    let rows = KNOB_TABLE.iter().map(|knob| {
        let mut row = vec![knob.name.to_owned(), knob.unit.to_owned()];
        row.extend(presets.iter().map(|(_, c)| knob.get(c)));
        row.push(knob.summary());
        row
    });
    let mut out = columns(presets.iter().map(|p| p.0), rows);
    out.push_str(
        "\nThe TCP model (brisk-tcp) runs in the simulator for experiment variants with\n\
         transport = \"tcp\": `preset` names one of the columns, `set = { KNOB = VALUE }`\n\
         changes both ends, `receiver_set` the receiver alone.\n",
    );
    out
}

/// A table with KNOB, UNIT, one column per preset and WHAT IT DOES.
fn columns<'a>(
    presets: impl Iterator<Item = &'a str>,
    rows: impl Iterator<Item = Vec<String>>,
) -> String {
    let mut header = vec!["KNOB".to_owned(), "UNIT".to_owned()];
    header.extend(presets.map(str::to_owned));
    header.push("WHAT IT DOES".to_owned());
    let mut rows: Vec<Vec<String>> = std::iter::once(header).chain(rows).collect();
    let columns = rows[0].len();
    for r in &mut rows {
        r.resize(columns, String::new());
    }
    let widths: Vec<usize> = (0..columns)
        .map(|i| rows.iter().map(|r| r[i].chars().count()).max().unwrap_or(0))
        .collect();
    let mut out = String::new();
    for row in &rows {
        let mut line = String::new();
        for (i, cell) in row.iter().enumerate() {
            if i + 1 == columns {
                line.push_str(cell);
            } else {
                line.push_str(&format!("{cell:<w$}  ", w = widths[i]));
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}
