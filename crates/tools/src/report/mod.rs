//! `canopy report STATS.json`: reads the per-rank statistics a distributed walk wrote with
//! `--stats`, prints a table, and draws the seed paper's figures — the heat map of bytes exchanged
//! between ranks (its Fig. 1/5) and the work each rank did (Fig. 6).

mod balance;
mod heatmap;
mod table;

use crate::common::{Exit, print_error, print_stdout};
use canopy_distwalk::ClusterStats;
use clap::Args;
use std::path::PathBuf;

const EXAMPLES: &str = "\
Examples:
  mpirun -n 16 canopy walk --sched drqs --stats drqs.json /lustre/project
  canopy report drqs.json --heatmap drqs-bytes.svg --balance drqs-work.svg";

/// Summarise and draw the statistics of a distributed walk (written with --stats).
#[derive(Args, Debug)]
#[command(after_help = EXAMPLES)]
pub struct ReportArgs {
    /// Statistics file written by a tree tool's `--stats`.
    pub stats: PathBuf,

    /// Draw the bytes sent from each rank (row) to each rank (column) as an SVG heat map.
    #[arg(long, value_name = "SVG")]
    pub heatmap: Option<PathBuf>,

    /// Draw the work (entries and tasks) each rank did as an SVG bar chart.
    #[arg(long, value_name = "SVG")]
    pub balance: Option<PathBuf>,
}

pub fn run(args: &ReportArgs) -> Exit {
    let stats: ClusterStats = match std::fs::read(&args.stats)
        .map_err(|e| e.to_string())
        .and_then(|bytes| serde_json::from_slice(&bytes).map_err(|e| e.to_string()))
    {
        Ok(stats) => stats,
        Err(e) => {
            print_error("report", format_args!("'{}': {e}", args.stats.display()));
            return Exit::Errors;
        }
    };
    let mut exit = if print_stdout(table::render(&stats).as_bytes()) { Exit::Errors } else { Exit::Ok };
    for (path, draw) in [
        (&args.heatmap, heatmap::draw as fn(&ClusterStats, &std::path::Path) -> Result<(), String>),
        (&args.balance, balance::draw),
    ] {
        if let Some(path) = path
            && let Err(e) = draw(&stats, path)
        {
            print_error("report", format_args!("'{}': {e}", path.display()));
            exit = Exit::Errors;
        }
    }
    exit
}
