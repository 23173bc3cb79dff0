use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// Canopy: walk, search, measure, copy, sync and remove huge file trees in parallel.
#[derive(Parser)]
#[command(name = "canopy", version)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Mirror a directory through FUSE with a fixed latency per request (emulates a parallel file system)
    Latfs(canopy_latfs::Args),
}

fn main() -> ExitCode {
    match Cli::parse().command {
        Command::Latfs(args) => canopy_latfs::run(args),
    }
}
