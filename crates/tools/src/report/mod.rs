//! `canopy report STATS.json`: reads the per-rank statistics a distributed walk wrote with
//! `--stats`, prints a table, and draws the seed paper's figures — the heat maps of messages and
//! bytes exchanged between ranks (its Fig. 1/5) and the work each rank did with the work requests
//! it sent (Fig. 6). Above [`MAX_CELLS`] ranks the figures draw blocks of consecutive ranks.

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

    /// Draw the messages and the bytes sent from each rank (row) to each rank (column) as SVG heat
    /// maps (blocks of ranks above 256 ranks).
    #[arg(long, value_name = "SVG")]
    pub heatmap: Option<PathBuf>,

    /// Draw the entries each rank visited and the work requests it sent (and how many bore fruit)
    /// as an SVG bar chart (blocks of ranks above 256 ranks).
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

/// Ranks (or blocks of ranks) a figure draws at most along an axis.
pub const MAX_CELLS: usize = 256;

/// How a figure groups ranks: `count` blocks of `size` consecutive ranks (the last may be short).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Block {
    pub size: usize,
    pub count: usize,
}

impl Block {
    pub fn of(self, rank: u32) -> usize {
        rank as usize / self.size
    }

    /// ", in blocks of K ranks" when ranks are grouped.
    pub fn describe(self) -> String {
        if self.size == 1 {
            String::new()
        } else {
            format!(", in {} blocks of {} ranks", self.count, self.size)
        }
    }
}

/// One rank per cell up to [`MAX_CELLS`] ranks, else the fewest equal blocks that fit.
pub fn block_of(ranks: usize) -> Block {
    let size = ranks.div_ceil(MAX_CELLS).max(1);
    Block { size, count: ranks.div_ceil(size).max(1) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranks_are_grouped_only_above_the_cell_limit() {
        assert_eq!(block_of(1), Block { size: 1, count: 1 });
        assert_eq!(block_of(256), Block { size: 1, count: 256 });
        assert_eq!(block_of(257), Block { size: 2, count: 129 });
        let ten_thousand = block_of(10_000);
        assert_eq!(ten_thousand, Block { size: 40, count: 250 });
        assert_eq!(ten_thousand.of(9_999), 249);
    }
}
