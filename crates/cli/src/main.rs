use clap::{Parser, Subcommand};
use std::process::ExitCode;

/// Canopy: walk, search, measure, copy, sync and remove huge file trees in parallel.
#[derive(Parser)]
#[command(name = "canopy", version)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Apply one file operation to a group of files across hosts and print the aggregated result
    Group(canopy_group::cli::GroupArgs),
}

fn main() -> ExitCode {
    match Cli::parse().command {
        Command::Group(args) => canopy_group::cli::run(args),
    }
}
