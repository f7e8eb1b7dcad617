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
        /// Also write the packets of the experiment's first run (entering the
        /// bottleneck) to this pcap file (UDP port 9899)
        #[arg(long, value_name = "FILE")]
        pcap: Option<PathBuf>,
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
    /// Run the built-in experiment suite (experiments/*.toml) in the simulator and write the report
    ///
    /// Exits with status 1 when a check differs from the paper (outside its
    /// bounds and any known gap's) or cannot be computed; known gaps do not
    /// fail the run.
    Reproduce(ReproduceArgs),
    /// List every config knob: its unit, its value in each preset, and what it does
    Knobs,
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
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Reproduce(args) => run_reproduce(args),
        Command::Knobs => {
            print!("{}", knobs_table());
            Ok(ExitCode::SUCCESS)
        }
        Command::Run {
            file,
            out,
            jobs,
            pcap,
        } => run_one_file(file, out, jobs, pcap),
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
            println!("{report}");
            // Echoes that match no message sent fail the run, after the report.
            report.check()
        }),
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
        let key = brisk_lab::runner::capture_first_run(&exp, &pcap).map_err(anyhow::Error::msg)?;
        eprintln!(
            "pcap of the run ({}) written to {}",
            describe_run(&exp, &key),
            pcap.display()
        );
    }
    let suite = reproduce::run_files(&[file], &dir, &opts)?;
    println!("{suite}");
    Ok(checks_exit_code(&suite))
}

fn run_reproduce(args: ReproduceArgs) -> Result<ExitCode> {
    use std::io::IsTerminal;
    let opts = reproduce::Options {
        only: args.only,
        out: args.out,
        jobs: args.jobs,
        progress: std::io::stderr().is_terminal(),
    };
    let cwd = std::env::current_dir()
        .context("brisk reproduce: cannot determine the current directory")?;
    let dir = reproduce::resolve_experiments_dir(&cwd, &reproduce::workspace_experiments_dir())?;
    let suite = reproduce::reproduce(&dir, &opts)?;
    println!("{suite}");
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

/// `brisk knobs`: every knob of [`brisk_proto::Config`] as declared in
/// `config.rs`, with its unit, its value in each preset (the lab's included)
/// and the first sentence of its doc.
fn knobs_table() -> String {
    use brisk_lab::experiment::{LAB_PRESETS, preset};
    use brisk_proto::config::KNOB_TABLE;
    let presets: Vec<(&str, brisk_proto::Config)> = LAB_PRESETS
        .iter()
        .filter_map(|&name| preset(name).map(|c| (name, c)))
        .collect();
    let mut header = vec!["KNOB".to_owned(), "UNIT".to_owned()];
    header.extend(presets.iter().map(|(name, _)| (*name).to_owned()));
    header.push("WHAT IT DOES".to_owned());
    let mut rows = vec![header];
    for knob in KNOB_TABLE {
        let mut row = vec![knob.name.to_owned(), knob.unit.to_owned()];
        row.extend(presets.iter().map(|(_, c)| knob.get(c)));
        row.push(knob.summary());
        rows.push(row);
    }
    let columns = rows[0].len();
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
    out.push_str(
        "\nThe network commands start from rfc9260 (--config picks another preset) and take\n\
         --set KNOB=VALUE; an experiment's [[variants]] take `set = { KNOB = VALUE }`.\n\
         Values are written as in the table.\n",
    );
    out
}
