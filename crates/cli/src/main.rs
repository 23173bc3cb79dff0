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
    /// Distributed directory service: servers, namespace operations, benchmark
    Dirsvc(canopy_dirsvc::cli::DirsvcArgs),
}

fn main() -> ExitCode {
    match Cli::parse().command {
        Command::Dirsvc(args) => canopy_dirsvc::cli::run(args),
    }
}
