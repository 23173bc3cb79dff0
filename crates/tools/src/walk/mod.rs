//! `canopy walk`: metadata gathering (the seed's daily production job, mpiFileUtils' dwalk). Stats
//! every entry once and prints a summary; `--output` also writes one record per entry.

mod histogram;
mod report;
mod summary;
mod text;
mod top;
mod totals;
mod visitor;

pub use report::{
    AgeBucket, DeepPath, LargeFile, Owner, Owners, REPORT_FORMAT, REPORT_VERSION, RecordsWritten, Report,
    SizeBucket, WideDir,
};
pub use summary::{Seen, Summary};
pub use totals::{ByKind, Totals};

use crate::common::records::{EncodedPath, RecordFormat, RecordOutput};
use crate::common::{Exit, WalkArgs, os_to_bytes, print_error, terminal_progress};
use canopy_engine::{Timestamp, WalkOutcome, walk};
use clap::Args;
use report::RunFacts;
use std::ffi::OsString;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};
use visitor::WalkVisitor;

const EXAMPLES: &str = "\
Examples:
  canopy walk /scratch                        summary of a tree
  canopy walk --json /scratch | jq .totals    the summary as JSON (canopy.walk.summary v1)
  canopy walk /scratch -o scratch.parquet     also one record per entry, zstd Parquet
  canopy walk /home -o home.jsonl             also one JSON object per entry
  duckdb -c \"select uid, sum(size) from 'scratch.parquet' group by 1 order by 2 desc\"

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
    /// nlink, dev, depth).
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,

    /// How many largest files, widest directories, users and groups to list.
    #[arg(long, value_name = "N", default_value_t = 10)]
    pub top: usize,

    #[command(flatten)]
    pub walk: WalkArgs,
}

pub fn run(args: &WalkCmdArgs) -> Exit {
    let output = match &args.output {
        None => None,
        Some(path) => match open_output(path) {
            Ok(output) => Some((path, output)),
            Err(exit) => return exit,
        },
    };

    let roots: Vec<Vec<u8>> = args.paths.iter().map(|p| os_to_bytes(p)).collect();
    let mut options = args.walk.options();
    let progress = terminal_progress("walk");
    if let Some((callback, _)) = &progress {
        options.progress = Some(callback.clone());
    }
    let reference = now();
    let visitor = WalkVisitor::new(reference, args.top, output.as_ref().map(|(_, o)| o));
    let WalkOutcome { states, errors, stats, .. } = walk(&roots, &options, &visitor);
    if let Some((_, bar)) = progress {
        bar.finish_and_clear();
    }

    let mut summary = Summary::new(args.top);
    for state in states {
        summary.merge(state.summary);
    }
    let mut exit = Exit::from_errors(errors);
    let records = output.and_then(|(path, output)| {
        let written = finish_output(path, output);
        if written.is_none() {
            exit = Exit::Errors;
        }
        written
    });
    let facts = RunFacts {
        roots: &roots,
        reference,
        elapsed_secs: stats.elapsed_secs,
        entries_visited: stats.entries,
        threads: stats.threads,
        errors,
        records,
    };
    let report = Report::new(&summary, facts, args.top);
    exit.max(print_report(&report, args.json))
}

/// Creates the `--output` file; a name without a known extension is a usage error.
fn open_output(path: &Path) -> Result<RecordOutput, Exit> {
    let Some(format) = RecordFormat::from_path(path) else {
        print_error(
            "walk",
            format_args!("--output '{}': the file name must end in .parquet or .jsonl", path.display()),
        );
        return Err(Exit::Usage);
    };
    RecordOutput::create(path, format).map_err(|e| {
        print_error("walk", format_args!("cannot create '{}': {e}", path.display()));
        Exit::Errors
    })
}

/// Completes the `--output` file; `None` (with the error shown) when writing it failed.
fn finish_output(path: &Path, output: RecordOutput) -> Option<RecordsWritten> {
    let format = output.format();
    match output.finish() {
        Ok(records) => Some(RecordsWritten {
            path: EncodedPath::new(&os_to_bytes(path.as_os_str())),
            format: format.to_string(),
            records,
        }),
        Err(e) => {
            print_error("walk", format_args!("writing '{}': {e}", path.display()));
            None
        }
    }
}

fn print_report(report: &Report, json: bool) -> Exit {
    let printed = if json {
        serde_json::to_string_pretty(report).expect("a report serialises") + "\n"
    } else {
        text::render(report)
    };
    match std::io::stdout().lock().write_all(printed.as_bytes()) {
        Ok(()) => Exit::Ok,
        Err(e) => {
            print_error("walk", format_args!("writing the summary: {e}"));
            Exit::Errors
        }
    }
}

fn now() -> Timestamp {
    let since_epoch = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default();
    Timestamp { sec: since_epoch.as_secs() as i64, nsec: since_epoch.subsec_nanos() }
}
