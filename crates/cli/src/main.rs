use clap::Parser;

/// Canopy: walk, search, measure, copy, sync and remove huge file trees in parallel.
#[derive(Parser)]
#[command(name = "canopy", version)]
struct Cli {}

fn main() {
    Cli::parse();
}
