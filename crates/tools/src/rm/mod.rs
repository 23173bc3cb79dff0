//! `canopy rm`: parallel removal of trees, optionally filtered by a find expression.

mod filter;

use crate::common::guard::Protected;
use crate::common::{Exit, WalkArgs, cluster_stdout, print_error, report_write_errors, terminal_progress};
use crate::remove::Remover;
use canopy_dist::Cluster;
use canopy_engine::{Follow, Timestamp};
use canopy_expr::parse_filter;
use clap::Args;
use filter::Filter;
use std::ffi::OsString;
use std::os::unix::ffi::OsStringExt;

const AFTER_HELP: &str = "\
Files are removed as they are found, by every worker at once; each directory goes as soon as it is
empty. Everything happens relative to directory fds opened without following symlinks, so a
directory replaced by a symlink during the run stops the removal there: nothing outside the given
trees is ever removed. Symlinks themselves are removed, never followed.

An expression after the paths (GNU find's tests and options, no actions) chooses what goes: the
entries it matches, a matching directory with everything in it. Without one, the paths go whole.

Refused: '/', the current directory and its ancestors, and paths ending in '.' or '..'.
Exit status: 0 if everything asked for is gone, 1 if anything could not be removed (each failure is
reported with its path and reason), 2 on a usage error.

Examples:
  canopy rm /scratch/run-2023                  # like rm -rf, in parallel
  canopy rm -n /scratch/run-2023 | head        # list what would go, remove nothing
  canopy rm /data -name '*.tmp' -mtime +7      # old temporary files anywhere under /data
  canopy rm /data -name __pycache__ -type d    # those directories, whole
  canopy rm -j 64 /lustre/project/old          # more workers on a parallel file system
  mpirun -n 16 canopy rm /lustre/project/old   # every rank removes a share; rank 0 lists (-n)";

/// Remove trees in parallel: files as they are found, directories bottom-up as soon as they are empty.
#[derive(Args, Debug)]
#[command(after_help = AFTER_HELP)]
pub struct RmArgs {
    #[command(flatten)]
    pub walk: WalkArgs,

    /// List what would be removed, one path per line (directories after their contents), and
    /// remove nothing.
    #[arg(short = 'n', long)]
    pub dry_run: bool,

    /// PATH... [EXPRESSION]: what to remove, optionally filtered with find's tests.
    #[arg(
        trailing_var_arg = true,
        allow_hyphen_values = true,
        required = true,
        value_name = "PATH... [EXPRESSION]"
    )]
    pub args: Vec<OsString>,
}

pub fn run(args: RmArgs, cluster: &Cluster) -> Exit {
    let argv: Vec<Vec<u8>> = args.args.into_iter().map(OsStringExt::into_vec).collect();
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
    if program.roots.is_empty() {
        print_error("rm", "missing operand: give the paths to remove before the expression");
        return Exit::Usage;
    }
    if program.follow != Follow::Never {
        print_error("rm", "-H and -L are not allowed: rm never follows symlinks");
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
    let progress = if args.dry_run { None } else { terminal_progress("rm") };
    if let Some((callback, _)) = &progress {
        options.progress = Some(callback.clone());
    }
    let listing = args.dry_run.then(|| (cluster_stdout(cluster), &b""[..]));
    let sink = listing.as_ref().map(|(sink, _)| sink.clone());
    let roots = std::mem::take(&mut program.roots);
    let remover = Remover::new(Filter { program }, "rm", listing, protected);
    let outcome = cluster.walk(&roots, &options, &remover, &args.walk.plan());
    if let Some((_, bar)) = progress {
        bar.finish_and_clear();
    }
    let refused: u64 = outcome.states.iter().map(|s| s.refused).sum();
    drop(outcome.states);
    cluster.finish_output();
    let mut exit = Exit::from_errors(outcome.errors + refused);
    if report_write_errors(sink.as_deref()) {
        exit = Exit::Errors;
    }
    Exit::from_code(cluster.agree_exit(exit.code()))
}

fn now() -> Timestamp {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::Realtime);
    Timestamp { sec: t.tv_sec, nsec: t.tv_nsec as u32 }
}
