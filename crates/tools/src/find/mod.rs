//! `canopy find`: GNU find's command line on the parallel engine.

mod exec;
mod host;
mod output;
mod visitor;

use crate::common::{Exit, WalkArgs, print_error, terminal_progress};
use canopy_dist::Cluster;
use canopy_engine::Timestamp;
use canopy_expr::parse;
use clap::Args;
use std::ffi::OsString;
use std::io::IsTerminal;
use std::os::unix::ffi::OsStringExt;
use visitor::Find;

const AFTER_HELP: &str = "\
The arguments after canopy's own options are GNU find's: [-H|-L|-P] [PATH...] [EXPRESSION].
Supported: tests -name -iname -path -ipath -regex -iregex -lname -ilname -type -xtype -size -empty
-mtime -mmin -atime -amin -ctime -cmin -newer -anewer -cnewer -newerXY -user -group -uid -gid
-nouser -nogroup -perm -links -inum -samefile -readable -writable -executable -fstype -true -false;
actions -print -print0 -printf -fprint -fprint0 -fprintf -ls -fls -exec -execdir -ok -okdir -delete
-prune -quit; operators ( ) ! -not -a -and -o -or , ; options -maxdepth -mindepth -depth -xdev -mount
-daystart -regextype -ignore_readdir_race -follow -noleaf. Canopy adds -g GLOB: a name glob,
case-insensitive unless it has capitals.

Output is the same set of lines GNU find prints, in whatever order the workers finish; --sort makes
it deterministic. Exit status: 0 if all went well, 1 if any error was reported, 2 on a usage error.
Under mpirun every rank walks and rank 0 prints (-fprint files are written by rank 0 too).

Examples:
  canopy find /data -name '*.h5' -size +1G
  canopy find -g '*.rs'                          # like: find . -iname '*.rs'
  canopy find /scratch -user alice -mtime +90 -print0 | xargs -0 ls -l
  canopy find -j 64 /lustre/project -type f -printf '%s %p\\n'
  canopy find --sort src -type d -empty -delete
  mpirun -n 8 canopy find /lustre/project -newermt 2024-01-01 -print0 > changed.lst";

/// Search a tree in parallel with GNU find's expression language.
#[derive(Args, Debug)]
#[command(after_help = AFTER_HELP)]
pub struct FindArgs {
    #[command(flatten)]
    pub walk: WalkArgs,

    /// Print results sorted by path (collects them first), for deterministic output.
    #[arg(long)]
    pub sort: bool,

    /// [-H|-L|-P] [PATH...] [EXPRESSION], as for GNU find.
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, value_name = "FIND ARGS")]
    pub args: Vec<OsString>,
}

pub fn run(args: FindArgs, cluster: &Cluster) -> Exit {
    let argv: Vec<Vec<u8>> = args.args.into_iter().map(OsStringExt::into_vec).collect();
    let (program, warnings) = match parse(&argv, now()) {
        Ok(parsed) => parsed,
        Err(e) => {
            print_error("find", e);
            return Exit::Usage;
        }
    };
    if cluster.is_root() {
        for warning in warnings {
            print_error("find", format_args!("warning: {warning}"));
        }
    }
    let find = match Find::new(&program, args.sort, cluster) {
        Ok(find) => find,
        Err(e) => {
            print_error("find", e);
            return Exit::Errors;
        }
    };
    let mut options = args.walk.options();
    options.follow = program.follow;
    options.same_file_system = program.options.same_file_system;
    options.max_depth = program.options.max_depth;
    // A spinner would garble results printed to the same terminal.
    let progress = if std::io::stdout().is_terminal() { None } else { terminal_progress("find") };
    if let Some((callback, _)) = &progress {
        options.progress = Some(callback.clone());
    }
    let outcome = cluster.walk(&program.roots, &options, &find, &args.walk.plan());
    if let Some((_, bar)) = progress {
        bar.finish_and_clear();
    }
    let finished_ok = find.finish(outcome.states, cluster);
    let exit = Exit::from_errors(outcome.errors).max(if finished_ok { Exit::Ok } else { Exit::Errors });
    Exit::from_code(cluster.agree_exit(exit.code()))
}

fn now() -> Timestamp {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::Realtime);
    Timestamp { sec: t.tv_sec, nsec: t.tv_nsec as u32 }
}
