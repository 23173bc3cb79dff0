//! `canopy cmp`: compare two trees — what is missing, extra, of another type, size, modification
//! time or (with `--content`) content — for people and for programs.

mod content;
mod difference;
mod visitor;

use crate::common::pieces::Pieces;
use crate::common::{Exit, Progress, WalkArgs, cluster_stdout, report_write_errors, users_terminal};
use canopy_distwalk::Cluster;
use canopy_engine::Follow;
use canopy_util::path::os_to_bytes;
use canopy_util::size::parse_size;
use clap::Args;
use serde::{Deserialize, Serialize};
use std::ffi::OsString;
use visitor::Compare;

const AFTER_HELP: &str = "\
Both trees are walked at once. Each difference is one line on stdout, with the path relative to
the two roots:
  only in A: PATH            PATH exists under A only (nothing below it is listed)
  only in B: PATH
  type differs: PATH (regular file vs directory)
  size differs: PATH (SIZE_A vs SIZE_B)
  mtime differs: PATH (SECONDS.NANOSECONDS vs …)
  content differs: PATH      with --content: the bytes differ (or the device numbers)
  target differs: PATH (A vs B)   two symlinks point to different places
then a summary line: \"no differences (N entries compared)\", \"N differences (…)\", or, when
something could not be read, \"comparison incomplete: …\" (never \"no differences\"). With --json,
one JSON object per line instead ({\"difference\":\"size\",\"path\":\"PATH\",\"a\":10,\"b\":12}; a path that
is not UTF-8 also comes as path_base64), and a last line {\"summary\":{…}} (\"complete\": false when
something could not be read).

Symlinks are compared as links, never followed (the two roots themselves are followed).
Exit status: 0 when the trees are identical, 1 when they differ, 2 if something could not be read
(each such error is reported on stderr). Under mpirun every rank compares a share (big files
too, chunk by chunk) and rank 0 prints every difference and the summary.

Examples:
  canopy cmp /data/project /backup/project
  canopy cmp --content /scratch/run /archive/run
  canopy cmp --json a b | jq -r 'select(.difference == \"only_in_a\") | .path'";

/// Compare two trees: missing, extra, type, size, mtime and (with --content) content differences.
#[derive(Args, Debug)]
#[command(after_help = AFTER_HELP)]
pub struct CmpArgs {
    #[command(flatten)]
    pub walk: WalkArgs,

    /// Also compare the bytes of regular files of equal size.
    #[arg(long)]
    pub content: bool,

    /// One JSON object per difference, then a summary object.
    #[arg(long)]
    pub json: bool,

    /// With --content, files bigger than this are compared in chunks of this size, by all workers
    /// at once. Suffixes K, M, G, T (powers of 1024).
    #[arg(long, value_name = "SIZE", default_value = "64M", value_parser = parse_size)]
    pub chunk_size: u64,

    pub a: OsString,
    pub b: OsString,
}

/// What every process found, summed at rank 0.
#[derive(Serialize, Deserialize)]
struct Counts {
    compared: u64,
    differences: u64,
    errors: u64,
}

impl Counts {
    fn merge(self, other: Counts) -> Counts {
        Counts {
            compared: self.compared + other.compared,
            differences: self.differences + other.differences,
            errors: self.errors + other.errors,
        }
    }
}

pub fn run(args: CmpArgs, cluster: &Cluster) -> Exit {
    let (a, b) = (os_to_bytes(&args.a), os_to_bytes(&args.b));
    let sink = cluster_stdout(cluster);
    let compare = Compare {
        a: a.clone(),
        b: b.clone(),
        content: args.content,
        json: args.json,
        chunk_size: args.chunk_size,
        sink: sink.clone(),
        pairs: Pieces::new(cluster.rank()),
    };
    let mut options = args.walk.options();
    options.follow = Follow::Roots;
    let progress = Progress::start(!users_terminal(&std::io::stdout()), "cmp", &mut options);
    let outcome = cluster.walk(&[a, b], &options, &compare, &args.walk.plan());
    progress.finish();
    let counts = Counts {
        compared: outcome.states.iter().map(|s| s.compared).sum(),
        differences: outcome.states.iter().map(|s| s.differences).sum(),
        errors: outcome.errors,
    };
    drop(outcome.states);
    let all = cluster.reduce(counts, Counts::merge);
    // Every difference is printed (rank 0 prints the other ranks') before the summary.
    cluster.finish_output();
    let exit = all.map_or(Exit::Ok, |all| summarise(&sink, &all, args.json));
    Exit::from_code(cluster.agree_exit(exit.code()))
}

/// Prints the summary line; the exit status of the comparison.
fn summarise(sink: &canopy_engine::output::Sink, all: &Counts, json: bool) -> Exit {
    let Counts { compared, differences, errors } = *all;
    let summary = if json {
        serde_json::json!({ "summary": {
            "compared": compared, "differences": differences, "errors": errors, "complete": errors == 0
        } })
        .to_string()
    } else if errors > 0 {
        // What could not be read may differ: never claim the trees are the same then.
        format!(
            "comparison incomplete: {differences} differences, {errors} errors ({compared} entries compared)"
        )
    } else if differences == 0 {
        format!("no differences ({compared} entries compared)")
    } else {
        format!("{differences} differences ({compared} entries compared)")
    };
    let _ = sink.write_all(format!("{summary}\n").as_bytes());
    if report_write_errors([sink]) {
        return Exit::Trouble;
    }
    if errors > 0 {
        Exit::Trouble
    } else if differences > 0 {
        Exit::Different
    } else {
        Exit::Ok
    }
}
