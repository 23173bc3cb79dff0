//! `canopy grep PATTERN PATH...`: `grep -r` on the parallel engine (and under mpirun on every
//! rank), with `--group` to fold identical lines across files.

mod fold;
mod matcher;
mod output;
mod search;
mod visitor;

pub use matcher::{Pattern, PatternFlags};

use crate::common::{Exit, WalkArgs, os_to_bytes, print_error, report_write_errors, terminal_progress};
use canopy_dist::Cluster;
use canopy_engine::Follow;
use clap::Args;
use fold::Folded;
use globset::{Glob, GlobSet, GlobSetBuilder};
use output::Style;
use search::Want;
use std::ffi::OsString;
use std::io::IsTerminal;
use visitor::{Grep, Selection};

const AFTER_HELP: &str = "\
PATTERN is a regular expression in Rust's syntax (like grep -E or rg; with -F, fixed strings, one
per line). Every PATH is searched recursively like grep -r: regular files only, symlinks inside the
trees not followed, binary files (a NUL byte) taken as matching nothing, like grep -I. Lines are
printed as PATH:LINE (PATH:NUMBER:LINE with -n) in whatever order the workers finish.

--group folds identical results across files: each distinct line once, under the folded set of the
files that contain it (ClusterShell syntax, as clush -b prints hosts); lines found in the same files
share one block. With -n only lines at the same number fold; with -c, equal counts; with -l, one set.

Exit status as grep's: 0 when a line was selected, 1 when none was, 2 when an error was reported.
Under mpirun every rank searches and rank 0 prints.

Examples:
  canopy grep -n 'TODO|FIXME' src
  canopy grep -i -w --glob '*.conf' listen /etc
  canopy grep -l -0 secret_key . | xargs -0 chmod go-r
  canopy grep --group -F 'MaxSessions' /srv/nodes/*/etc/ssh/sshd_config
  canopy grep -c --json ERROR /var/log/app
  mpirun -n 16 canopy grep -l -F 'deprecated_api(' /lustre/project/src";

/// Search file contents in parallel, like grep -r.
#[derive(Args, Debug)]
#[command(after_help = AFTER_HELP)]
pub struct GrepArgs {
    #[command(flatten)]
    pub walk: WalkArgs,

    #[command(flatten)]
    pub flags: PatternFlags,

    /// Print line numbers
    #[arg(short = 'n', long)]
    pub line_number: bool,

    /// Print only the names of files with a selected line
    #[arg(short = 'l', long, conflicts_with = "count")]
    pub files_with_matches: bool,

    /// Print the number of selected lines of every file
    #[arg(short = 'c', long)]
    pub count: bool,

    /// Search only files whose name matches GLOB; `!GLOB` skips those that match (repeatable)
    #[arg(long, value_name = "GLOB")]
    pub glob: Vec<String>,

    /// Follow each file name with a NUL instead of ':' or a newline (for xargs -0)
    #[arg(short = '0', long)]
    pub null: bool,

    /// Print JSON Lines: one object per line, count or file (paths that are not UTF-8 also as base64)
    #[arg(long, conflicts_with = "null")]
    pub json: bool,

    /// Fold identical results across files: each distinct line once, with the set of files holding it
    #[arg(long)]
    pub group: bool,

    /// The pattern
    pub pattern: OsString,

    /// Files and directories to search [default: .]
    pub paths: Vec<OsString>,
}

pub fn run(args: GrepArgs, cluster: &Cluster) -> Exit {
    let grep = match prepare(&args, cluster) {
        Ok(grep) => grep,
        Err(message) => {
            if cluster.is_root() {
                print_error("grep", message);
            }
            return Exit::Trouble;
        }
    };
    let roots: Vec<Vec<u8>> = if args.paths.is_empty() {
        vec![b".".to_vec()]
    } else {
        args.paths.iter().map(|p| os_to_bytes(p)).collect()
    };
    let mut options = args.walk.options();
    // grep -r follows a symlink named on the command line, none met inside.
    options.follow = Follow::Roots;
    let progress = if std::io::stdout().is_terminal() { None } else { terminal_progress("grep") };
    if let Some((callback, _)) = &progress {
        options.progress = Some(callback.clone());
    }
    let outcome = cluster.walk(&roots, &options, &grep, &args.walk.plan());
    if let Some((_, bar)) = progress {
        bar.finish_and_clear();
    }
    let mut selected = 0;
    let mut folded = Folded::default();
    for mut state in outcome.states {
        Grep::flush(&mut state);
        selected += state.selected;
        folded = folded.merge(state.folded);
    }
    let totals =
        cluster.reduce((selected, outcome.errors, folded), |a, b| (a.0 + b.0, a.1 + b.1, a.2.merge(b.2)));
    if grep.group
        && let Some((_, _, folded)) = &totals
    {
        let mut out = Vec::new();
        for block in folded.clone().blocks() {
            grep.style.block(&mut out, &block);
        }
        let _ = grep.stdout.write_all(&out);
    }
    cluster.finish_output();
    let write_failed = report_write_errors([&*grep.stdout]);
    match totals {
        // Another rank: rank 0 speaks for the job.
        None => Exit::Ok,
        Some((_, errors, _)) if errors > 0 || write_failed => Exit::Trouble,
        Some((0, _, _)) => Exit::NothingSelected,
        Some(_) => Exit::Ok,
    }
}

fn prepare(args: &GrepArgs, cluster: &Cluster) -> Result<Grep, String> {
    let pattern = args.pattern.to_str().ok_or("the pattern is not valid UTF-8")?;
    let pattern = Pattern::new(pattern, &args.flags)?;
    let want = if args.files_with_matches {
        Want::Any
    } else if args.count {
        Want::Count
    } else {
        Want::Lines
    };
    let (include, exclude): (Vec<&String>, Vec<&String>) =
        args.glob.iter().partition(|g| !g.starts_with('!'));
    let selection = Selection {
        include: glob_set(include.iter().map(|g| g.as_str()))?,
        exclude: glob_set(exclude.iter().map(|g| &g[1..]))?,
    };
    let stdout = cluster.outputs(&[]).map_err(|e| format!("cannot open the output: {e}"))?.remove(0);
    Ok(Grep {
        pattern,
        want,
        style: Style { line_numbers: args.line_number, null: args.null, json: args.json },
        selection,
        group: args.group,
        stdout,
    })
}

fn glob_set<'a>(globs: impl Iterator<Item = &'a str>) -> Result<Option<GlobSet>, String> {
    let mut builder = GlobSetBuilder::new();
    let mut any = false;
    for glob in globs {
        builder.add(Glob::new(glob).map_err(|e| format!("invalid --glob {glob:?}: {e}"))?);
        any = true;
    }
    if !any {
        return Ok(None);
    }
    builder.build().map(Some).map_err(|e| e.to_string())
}
