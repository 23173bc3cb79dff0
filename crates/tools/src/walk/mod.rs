//! `canopy walk`: metadata gathering (the seed's daily production job, mpiFileUtils' dwalk). Stats
//! every entry once and prints a summary; `--output` also writes one record per entry.

mod document;
mod histogram;
mod summary;
mod text;
mod top;
mod totals;
mod visitor;

pub use document::{
    AgeBucket, DOCUMENT_FORMAT, DOCUMENT_VERSION, DeepPath, LargeFile, Owner, Owners, RecordsWritten,
    SizeBucket, SummaryDocument, WideDir,
};
pub use summary::{Seen, TreeSummary};
pub use totals::{ByKind, Totals};

use crate::common::records::{EncodedPath, RecordFormat, finish_output, open_output, record_path};
use crate::common::{Exit, Progress, WalkArgs, print_stdout};
use canopy_distwalk::Cluster;
use canopy_engine::{Follow, Timestamp, WalkOutcome};
use canopy_util::path::os_to_bytes;
use clap::Args;
use document::RunFacts;
use serde::{Deserialize, Serialize};
use std::ffi::OsString;
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;
use std::time::{SystemTime, UNIX_EPOCH};
use visitor::WalkVisitor;

const EXAMPLES: &str = "\
Examples:
  canopy walk /scratch                        summary of a tree
  canopy walk --json /scratch | jq .totals    the summary as JSON (canopy.walk.summary v1)
  canopy walk /scratch -o scratch.parquet     also one record per entry, zstd Parquet
  canopy walk /home -o home.jsonl             also one JSON object per entry
  duckdb -c \"select uid, sum(size) from 'scratch.parquet' group by 1 order by 2 desc\"
  mpirun -n 64 canopy walk /lustre -o scan/   every rank writes scan/part-RANK.parquet
  duckdb -c \"select count(*) from 'scan/*.parquet'\"

Bytes count every hard link of a file, as find lists them; allocated = st_blocks x 512.
Exit status: 0 if every entry was read, 1 if any error was reported, 2 on usage errors.";

/// Gather metadata: counts by type, bytes, size and age histograms, top owners, largest files.
#[derive(Args, Debug)]
#[command(after_help = EXAMPLES)]
pub struct WalkCmdArgs {
    /// Trees to walk.
    #[arg(value_name = "PATH", default_value = ".")]
    pub paths: Vec<OsString>,

    /// Print the summary as one JSON object (versioned schema) instead of text.
    #[arg(long)]
    pub json: bool,

    /// Also write one record per entry to FILE: Parquet if it ends in `.parquet`, JSON Lines if it
    /// ends in `.jsonl` (columns: path, type, size, blocks, mode, uid, gid, a/m/ctime in ns, inode,
    /// nlink, dev, depth). A directory (`DIR/`) gets a Parquet dataset, `part-RANK.parquet` per
    /// process — the way to write records under mpirun.
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,

    /// How many largest files, widest directories, users and groups to list.
    #[arg(long, value_name = "N", default_value_t = 10)]
    pub top: usize,

    /// Follow symbolic links (entries are what they point to). Each directory is walked once,
    /// however many links lead to it, as du -L does: a later link to it, or a loop, is skipped.
    #[arg(short = 'L', long)]
    pub dereference: bool,

    #[command(flatten)]
    pub walk: WalkArgs,
}

/// What every rank contributes to the printed report.
#[derive(Serialize, Deserialize)]
struct RankResult {
    summary: TreeSummary,
    errors: u64,
    entries: u64,
    threads: usize,
    elapsed_secs: f64,
    records: Option<u64>,
}

impl RankResult {
    fn merge(mut self, other: RankResult) -> RankResult {
        self.summary.merge(other.summary);
        self.errors += other.errors;
        self.entries += other.entries;
        self.threads += other.threads;
        self.elapsed_secs = self.elapsed_secs.max(other.elapsed_secs);
        self.records = match (self.records, other.records) {
            (Some(a), Some(b)) => Some(a + b),
            _ => None,
        };
        self
    }
}

pub fn run(args: &WalkCmdArgs, cluster: &Cluster) -> Exit {
    let opened = match &args.output {
        None => Ok(None),
        Some(path) => record_path("walk", path, cluster)
            .and_then(|file| open_output("walk", &file).map(|o| Some((path, o)))),
    };
    // Every rank must take part in the walk or none: agree on the setup first.
    let setup = opened.as_ref().err().copied().unwrap_or(Exit::Ok);
    let agreed = Exit::from_code(cluster.agree_exit(setup.code()));
    let output = match opened {
        Ok(output) if agreed == Exit::Ok => output,
        _ => return agreed,
    };

    let roots: Vec<Vec<u8>> = args.paths.iter().map(|p| os_to_bytes(p)).collect();
    let mut options = args.walk.options();
    if args.dereference {
        options.follow = Follow::Always;
        options.each_dir_once = true;
    }
    let progress = Progress::start(true, "walk", &mut options);
    let reference = now();
    let visitor = WalkVisitor::new(reference, args.top, output.as_ref().map(|(_, o)| o));
    let WalkOutcome { states, errors, stats, .. } =
        cluster.walk(&roots, &options, &visitor, &args.walk.plan());
    progress.finish();

    let mut summary = TreeSummary::new(args.top);
    for state in states {
        summary.merge(state.summary);
    }
    let (output_path, written) = match output {
        Some((path, output)) => (Some(path), finish_output("walk", path, output)),
        None => (None, None),
    };
    let failed_output = output_path.is_some() && written.is_none();
    let mine = RankResult {
        summary,
        errors,
        entries: stats.entries,
        threads: stats.threads,
        elapsed_secs: stats.elapsed_secs,
        records: written,
    };
    let mut exit = Exit::from_errors(errors).max(if failed_output { Exit::Errors } else { Exit::Ok });
    if let Some(all) = cluster.reduce(mine, RankResult::merge) {
        let records = output_path.zip(all.records).map(|(path, records)| RecordsWritten {
            path: EncodedPath::new(path.as_os_str().as_bytes()),
            format: RecordFormat::from_path(path).unwrap_or(RecordFormat::Parquet).to_string(),
            records,
        });
        let facts = RunFacts {
            roots: &roots,
            reference,
            elapsed_secs: all.elapsed_secs,
            entries_visited: all.entries,
            threads: all.threads,
            errors: all.errors,
            records,
        };
        let report = SummaryDocument::new(&all.summary, facts, args.top);
        exit = exit.max(print_summary(&report, args.json));
    }
    Exit::from_code(cluster.agree_exit(exit.code()))
}

fn print_summary(report: &SummaryDocument, json: bool) -> Exit {
    let printed = if json {
        serde_json::to_string_pretty(report).expect("a report serialises") + "\n"
    } else {
        text::render(report)
    };
    if print_stdout(printed.as_bytes()) { Exit::Errors } else { Exit::Ok }
}

fn now() -> Timestamp {
    let since_epoch = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default();
    Timestamp { sec: since_epoch.as_secs() as i64, nsec: since_epoch.subsec_nanos() }
}
