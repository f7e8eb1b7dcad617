//! The `brisk` command line.

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
    /// Reproduce the published results from the experiment files in experiments/
    /// (the experiment runner is not implemented yet)
    Reproduce(ReproduceArgs),
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
    };
    match result {
        Ok(code) => code,
        Err(err) => {
            eprintln!("{err:#}");
            ExitCode::FAILURE
        }
    }
}

fn run_reproduce(args: ReproduceArgs) -> Result<ExitCode> {
    let opts = reproduce::Options {
        only: args.only,
        out: args.out,
        jobs: args.jobs,
    };
    let cwd = std::env::current_dir()
        .context("brisk reproduce: cannot determine the current directory")?;
    let dir = reproduce::resolve_experiments_dir(&cwd, &reproduce::workspace_experiments_dir())?;
    let outcome = reproduce::reproduce(&dir, &opts)?;
    if outcome.is_success() {
        println!("{outcome}");
        Ok(ExitCode::SUCCESS)
    } else {
        eprintln!("{outcome}");
        Ok(ExitCode::FAILURE)
    }
}
