//! `canopy rm`: GNU rm's command line (`-r -f -i -I -d -v --one-file-system --preserve-root`) on
//! a parallel removal, optionally filtered by a find expression.

mod filter;

use crate::common::guard::Protected;
use crate::common::{
    Exit, Progress, WalkArgs, cluster_stdout, print_error, quote, report_write_errors, users_terminal,
};
use crate::remove::{Conduct, Prompter, Remover};
use canopy_distwalk::Cluster;
use canopy_engine::sys::stat_path;
use canopy_engine::{Follow, ThreadPolicy, Timestamp};
use canopy_expr::parse_filter;
use canopy_util::path::split_parent;
use clap::{Args, ValueEnum};
use filter::Filter;
use std::ffi::OsString;
use std::os::unix::ffi::OsStringExt;

const AFTER_HELP: &str = "\
As GNU rm: without -r a directory is not removed ('Is a directory'; -d removes an empty one), -f
makes missing names silent and never asks, -i asks before every removal, -I once before removing
more than three names or any recursively, -v prints each removal. Answers are read from stdin: a
line starting with y or Y is yes. Options go before the paths (`--` ends them).

Files are removed as they are found, by every worker at once; each directory goes as soon as it is
empty. Everything happens relative to directory fds opened without following symlinks, so a
directory replaced by a symlink during the run stops the removal there: nothing outside the given
trees is ever removed. Symlinks themselves are removed, never followed. With -i the workers are
one, so that the questions come one at a time.

An expression after the paths (GNU find's tests and options, no actions) chooses what goes: the
entries it matches anywhere below the paths, a matching directory with everything in it (with -r).

Differences from GNU rm: '/', the current directory and its ancestors are always refused
(--no-preserve-root is accepted and changes nothing); -n (--dry-run) and the expression are
canopy's own; usage errors exit 2.
Exit status: 0 if everything asked for is gone, 1 if anything could not be removed (each failure is
reported with its path and reason) or a name is missing (without -f), 2 on a usage error.

Examples:
  canopy rm -rf /scratch/run-2023                 # like rm -rf, in parallel
  canopy rm -rv old-build | tail -1               # print each removal
  canopy rm -rI /data/tmp/*                       # ask once before a big removal
  canopy rm -n -r /scratch/run-2023 | head        # list what would go, remove nothing
  canopy rm /data -name '*.tmp' -mtime +7         # old temporary files anywhere under /data
  canopy rm -r /data -name __pycache__ -type d    # those directories, whole
  canopy rm -rf -j 64 /lustre/project/old         # more workers on a parallel file system
  mpirun -n 16 canopy rm -rf /lustre/project/old  # every rank removes a share; rank 0 lists (-n, -v)";

/// Remove files and trees in parallel, with GNU rm's options; find's tests may choose what goes.
#[derive(Args, Debug)]
#[command(after_help = AFTER_HELP)]
pub struct RmArgs {
    #[command(flatten)]
    pub walk: WalkArgs,

    /// Remove directories and their contents recursively.
    #[arg(short = 'r', short_alias = 'R', long)]
    pub recursive: bool,

    /// Ignore nonexistent files and arguments, never prompt.
    #[arg(short = 'f', long, overrides_with_all = ["ask_each", "ask_once", "interactive"])]
    pub force: bool,

    /// Prompt before every removal.
    #[arg(short = 'i', overrides_with_all = ["force", "ask_once", "interactive"])]
    pub ask_each: bool,

    /// Prompt once before removing more than three files, or when removing recursively.
    #[arg(short = 'I', overrides_with_all = ["force", "ask_each", "interactive"])]
    pub ask_once: bool,

    /// Prompt according to WHEN: never, once (-I) or always (-i); without WHEN, always.
    #[arg(long, value_name = "WHEN", num_args = 0..=1, require_equals = true,
          default_missing_value = "always", overrides_with_all = ["force", "ask_each", "ask_once"])]
    pub interactive: Option<When>,

    /// Remove empty directories.
    #[arg(short = 'd', long = "dir")]
    pub empty_dirs: bool,

    /// Explain what is being done.
    #[arg(short = 'v', long)]
    pub verbose: bool,

    /// When removing recursively, skip any directory on a file system other than its argument's.
    #[arg(long)]
    pub one_file_system: bool,

    /// Do not remove '/' (the default); with 'all', also refuse an argument on a file system
    /// other than its parent's.
    #[arg(long, value_name = "all", num_args = 0..=1, require_equals = true, default_missing_value = "",
          overrides_with = "no_preserve_root")]
    pub preserve_root: Option<String>,

    /// Accepted for compatibility: canopy still refuses '/' and the current directory's ancestors.
    #[arg(long, overrides_with = "preserve_root")]
    pub no_preserve_root: bool,

    /// List what would be removed, one path per line (directories after their contents), and
    /// remove nothing.
    #[arg(short = 'n', long)]
    pub dry_run: bool,

    /// PATH... [EXPRESSION]: what to remove, optionally filtered with find's tests.
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, value_name = "PATH... [EXPRESSION]")]
    pub args: Vec<OsString>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum When {
    #[value(alias = "no", alias = "none")]
    Never,
    Once,
    #[value(alias = "yes")]
    Always,
}

impl RmArgs {
    /// When to ask, if the user said (`None`: only about write-protected files, as rm by default).
    fn when(&self) -> Option<When> {
        if self.ask_each {
            Some(When::Always)
        } else if self.ask_once {
            Some(When::Once)
        } else if self.force {
            Some(When::Never)
        } else {
            self.interactive
        }
    }
}

pub fn run(args: RmArgs, cluster: &Cluster) -> Exit {
    let (argv, operands) = split_operands(&args.args);
    let (mut program, warnings) = match parse_filter(&argv, now()) {
        Ok(parsed) => parsed,
        Err(e) => {
            print_error("rm", e);
            return Exit::Usage;
        }
    };
    if cluster.is_root() {
        for warning in warnings {
            print_error("rm", format_args!("warning: {warning}"));
        }
    }
    let expression = argv.len() > program.roots.len();
    let mut roots = std::mem::take(&mut program.roots);
    roots.extend(operands);
    if roots.is_empty() {
        if args.force {
            return Exit::Ok;
        }
        print_error("rm", "missing operand\nTry 'canopy rm --help' for more information.");
        return Exit::Errors;
    }
    if program.follow != Follow::Never {
        print_error("rm", "-H and -L are not allowed: rm never follows symlinks");
        return Exit::Usage;
    }
    let when = args.when();
    if when == Some(When::Always) && cluster.size() > 1 {
        print_error("rm", "-i asks about every file: it cannot run under mpirun");
        return Exit::Usage;
    }
    if when == Some(When::Once) && !confirmed_once(&args, roots.len(), cluster) {
        return Exit::Ok;
    }
    let mut refused = 0;
    if args.preserve_root.as_deref() == Some("all") {
        roots.retain(|root| {
            let keep = !on_other_device_than_parent(root);
            if !keep {
                print_error("rm", format_args!("skipping {}, since it's on a different device", quote(root)));
                print_error("rm", "and --preserve-root=all is in effect");
                refused += 1;
            }
            keep
        });
    } else if let Some(value) = args.preserve_root.as_deref().filter(|v| !v.is_empty()) {
        print_error("rm", format_args!("unrecognized --preserve-root argument: {}", quote(value.as_bytes())));
        return Exit::Usage;
    }
    let protected = Protected::current().map_err(|errno| {
        let reason = canopy_engine::errno_message(errno);
        print_error("rm", format_args!("cannot identify the current directory: {reason}"));
    });
    // Every process takes part in the walk or none.
    let setup = if protected.is_ok() { Exit::Ok } else { Exit::Errors };
    let (Ok(protected), Exit::Ok) = (protected, Exit::from_code(cluster.agree_exit(setup.code()))) else {
        return Exit::Errors;
    };
    let mut options = args.walk.options();
    options.same_file_system = program.options.same_file_system;
    if when == Some(When::Always) {
        // Questions one at a time, in the order one worker meets the entries.
        options.threads = ThreadPolicy::Fixed(1);
    }
    let progress = Progress::start(!args.dry_run && when != Some(When::Always), "rm", &mut options);
    let stdout = (args.dry_run || args.verbose).then(|| cluster_stdout(cluster));
    let listing = stdout.clone().filter(|_| args.dry_run).map(|sink| (sink, &b""[..]));
    let filter = Filter { program, expression, recursive: args.recursive, empty_dirs: args.empty_dirs };
    let conduct = Conduct {
        verbose: stdout.clone().filter(|_| args.verbose),
        force: args.force,
        one_file_system: args.one_file_system,
        prompter: prompter(&args, when),
        rm_messages: true,
    };
    let remover = Remover::new(filter, "rm", listing, protected).with_conduct(conduct);
    let outcome = cluster.walk(&roots, &options, &remover, &args.walk.plan());
    progress.finish();
    refused += outcome.states.iter().map(|s| s.refused).sum::<u64>();
    drop(outcome.states);
    cluster.finish_output();
    let mut exit = Exit::from_errors(outcome.errors + refused);
    if report_write_errors(stdout.as_deref()) {
        exit = Exit::Errors;
    }
    Exit::from_code(cluster.agree_exit(exit.code()))
}

/// The arguments before `--` (paths, then an expression) and the operands after it (paths only,
/// whatever they look like: `rm -- -file`).
fn split_operands(args: &[OsString]) -> (Vec<Vec<u8>>, Vec<Vec<u8>>) {
    let bytes: Vec<Vec<u8>> = args.iter().cloned().map(OsStringExt::into_vec).collect();
    if let Some(at) = bytes.iter().position(|a| a == b"--") {
        return (bytes[..at].to_vec(), bytes[at + 1..].to_vec());
    }
    if all_after_dashdash(&bytes) { (Vec::new(), bytes) } else { (bytes, Vec::new()) }
}

/// Whether `args` came right after a `--`: clap drops a `--` that comes before every path, so it
/// is looked for in the process's own arguments.
fn all_after_dashdash(args: &[Vec<u8>]) -> bool {
    let raw: Vec<Vec<u8>> = std::env::args_os().map(OsStringExt::into_vec).collect();
    let Some(before) = raw.len().checked_sub(args.len() + 1) else { return false };
    raw[before] == b"--" && raw[before + 1..] == *args
}

/// `-I`: asked once, on rank 0, before anything goes.
fn confirmed_once(args: &RmArgs, count: usize, cluster: &Cluster) -> bool {
    let plural = if count == 1 { "" } else { "s" };
    let question = if args.recursive {
        Some(format!("remove {count} argument{plural} recursively"))
    } else {
        (count > 3).then(|| format!("remove {count} arguments"))
    };
    let Some(question) = question else { return true };
    let declined = cluster.is_root() && !Prompter::new("rm", true).ask(&question);
    cluster.agree_exit(u8::from(declined)) == 0
}

/// Who asks questions: `-i`; or by default, as rm does when stdin is a terminal, about
/// write-protected files (never for root, who may write anything; never with -f).
fn prompter(args: &RmArgs, when: Option<When>) -> Option<Prompter> {
    match when {
        Some(When::Always) => Some(Prompter::new("rm", true)),
        None if !args.force && !rustix::process::geteuid().is_root() && users_terminal(&std::io::stdin()) => {
            Some(Prompter::new("rm", false))
        }
        _ => None,
    }
}

/// `--preserve-root=all`: whether `path` is a mount point (on another device than its parent).
fn on_other_device_than_parent(path: &[u8]) -> bool {
    let Ok(meta) = stat_path(path, false) else { return false };
    let (parent, _) = split_parent(path);
    let parent = if meta.is_dir() { [path, b"/.."].concat() } else { parent.to_vec() };
    stat_path(&parent, true).is_ok_and(|p| p.dev != meta.dev)
}

fn now() -> Timestamp {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::Realtime);
    Timestamp { sec: t.tv_sec, nsec: t.tv_nsec as u32 }
}
