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
    Run {
        /// The experiment file (TOML)
        file: PathBuf,
        /// Report directory (default target/brisk-report)
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
        /// Stop after this many messages
        #[arg(long)]
        count: Option<u64>,
        #[command(flatten)]
        common: CommonArgs,
    },
    /// Associate with a peer, send messages, close gracefully
    Send {
        /// The peer's UDP address
        #[arg(long)]
        to: SocketAddr,
        /// Local UDP address
        #[arg(long, default_value = "0.0.0.0:0")]
        bind: SocketAddr,
        #[command(flatten)]
        load: LoadArgs,
        #[command(flatten)]
        common: CommonArgs,
    },
    /// Measure throughput and (against an echoing peer) round-trip latency
    Bench {
        /// The peer's UDP address (`brisk echo`, or any stack that echoes)
        #[arg(long)]
        to: SocketAddr,
        /// Local UDP address
        #[arg(long, default_value = "0.0.0.0:0")]
        bind: SocketAddr,
        /// The peer does not echo (`brisk recv`): measure until all is acknowledged
        #[arg(long)]
        sink: bool,
        /// Messages sent but not yet echoed, at most
        #[arg(long, default_value_t = 256)]
        window: u64,
        #[command(flatten)]
        load: LoadArgs,
        #[command(flatten)]
        common: CommonArgs,
    },
    /// Run the built-in experiment suite (experiments/*.toml) in the simulator and write the report
    Reproduce(ReproduceArgs),
}

/// Protocol configuration, shared by the network commands.
#[derive(Debug, Args)]
struct CommonArgs {
    /// Config preset: rfc9260 or lksctp-2.6.15
    #[arg(long = "config", value_name = "PRESET", default_value = "rfc9260")]
    preset: String,
    /// Override one knob, e.g. --set rto_min=200ms (repeatable; see the README for the knobs)
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

/// What to send.
#[derive(Debug, Args)]
struct LoadArgs {
    /// Message size in bytes
    #[arg(long, default_value_t = 100)]
    size: usize,
    /// Number of messages
    #[arg(long, default_value_t = 10_000)]
    count: u64,
    /// Spread messages round robin over this many streams
    #[arg(long, default_value_t = 1)]
    streams: u16,
    /// Send unordered
    #[arg(long)]
    unordered: bool,
    /// Messages per second (default: as fast as possible)
    #[arg(long)]
    rate: Option<f64>,
}

impl LoadArgs {
    fn load(&self) -> brisk_lab::net::Load {
        brisk_lab::net::Load {
            size: self.size,
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
    /// Directory to write the report into
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
            to,
            bind,
            load,
            common,
        } => block_on(brisk_lab::net::send(
            to,
            bind,
            &common.common(),
            &load.load(),
        )),
        Command::Bench {
            to,
            bind,
            sink,
            window,
            load,
            common,
        } => block_on(async {
            let report =
                brisk_lab::net::bench(to, bind, &common.common(), &load.load(), !sink, window)
                    .await?;
            println!("{report}");
            Ok(())
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
        eprintln!("pcap of run {key:?} written to {}", pcap.display());
    }
    let suite = reproduce::run_files(&[file], &dir, &opts)?;
    println!("{suite}");
    Ok(ExitCode::SUCCESS)
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
    Ok(ExitCode::SUCCESS)
}
