//! `canopy find`: GNU find's command line on the parallel engine.

mod actions;
mod exec;
mod output;
mod start_points;
mod visitor;

use crate::common::{Exit, Progress, WalkArgs, print_error, users_terminal};
use canopy_distwalk::Cluster;
use canopy_engine::sys::stat_path;
use canopy_engine::{Follow, Timestamp, Visitor};
use canopy_expr::parse;
use clap::Args;
use std::ffi::OsString;
use std::os::unix::ffi::OsStringExt;
use visitor::{Find, StartPass};

const AFTER_HELP: &str = "\
The arguments after canopy's own options are GNU find's: [-H|-L|-P] [-D OPTS] [-OLEVEL] [PATH...]
[EXPRESSION], with GNU find's meaning (checked with bfs's GNU-compatible test suite and GNU find
itself; README.md lists the differences). Tests -name -iname -path -ipath -wholename -iwholename -regex -iregex
-lname -ilname -type -xtype -size -empty -mtime -mmin -atime -amin -ctime -cmin -used -newer
-anewer -cnewer -newerXY -user -group -uid -gid -nouser -nogroup -perm -links -inum -samefile
-readable -writable -executable -fstype -true -false; actions -print -print0 -printf -fprint
-fprint0 -fprintf -ls -fls -exec -execdir -ok -okdir -delete -prune -quit; operators ( ) ! -not
-a -and -o -or ,; options -maxdepth -mindepth -depth -xdev -mount -daystart -regextype
-files0-from -ignore_readdir_race -follow -noleaf -warn. Canopy adds -g GLOB: a name glob,
case-insensitive unless it has capitals.

Output is the same set of lines GNU find prints. Starting points that are not directories come
in command-line order; entries below directories in whatever order the workers finish (--sort
makes it deterministic). On a terminal each match is printed as it is found. -exec, -execdir, -ok
and -okdir children run one at a time, with standard output flushed before each.
Exit status: 0 if all went well, 1 if any error was reported or the expression is wrong (as GNU
find), 2 if canopy's own options are. Under mpirun every rank walks and rank 0 prints (-fprint
files are written by rank 0 too).

Examples:
  canopy find /data -name '*.h5' -size +1G
  canopy find -g '*.rs'                          # like: find . -iname '*.rs'
  canopy find /scratch -user alice -mtime +90 -print0 | xargs -0 ls -l
  canopy find -j 64 /lustre/project -type f -printf '%s %p\\n'
  canopy find --max-rate 2000 --max-in-flight 8 /lustre/project -mtime +365   # polite to other users
  canopy find src -type f -exec grep -H TODO {} +
  canopy find --sort src -type d -empty -delete
  canopy find -files0-from list0.txt -newermt 'yesterday'
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
    // Like GNU find, a bad expression is exit status 1 (canopy's own options, checked before, give 2).
    let (program, warnings) = match parse(&argv, now()) {
        Ok(parsed) => parsed,
        Err(e) => {
            print_error("find", e);
            return Exit::Errors;
        }
    };
    if cluster.is_root() {
        for warning in warnings {
            print_error("find", format_args!("warning: {warning}"));
        }
    }
    // Only rank 0's starting points are walked (the others get work from it).
    let (roots, invalid_roots) = match (&program.start_list, cluster.is_root()) {
        (None, _) => (program.roots.clone(), 0),
        (Some(_), false) => (Vec::new(), 0),
        (Some(list), true) => match start_points::read(list) {
            Ok(points) => (points.roots, points.invalid),
            Err(e) => {
                print_error("find", e);
                return Exit::from_code(cluster.agree_exit(Exit::Errors.code()));
            }
        },
    };
    let stdout_is_terminal = users_terminal(&std::io::stdout());
    let find = Find::new(&program, &roots, args.sort, stdout_is_terminal, cluster);
    if let Err(e) = &find {
        print_error("find", e);
    }
    // Every rank stops if one could not set up (rank 0 creates the -fprint files).
    let setup = if find.is_err() { Exit::Errors } else { Exit::Ok };
    let (Ok(find), Exit::Ok) = (find, Exit::from_code(cluster.agree_exit(setup.code()))) else {
        return Exit::Errors;
    };
    let mut options = args.walk.options();
    options.follow = program.follow;
    options.same_file_system = program.options.same_file_system;
    options.max_depth = program.options.max_depth;
    // A spinner would garble results printed to the same terminal.
    let progress = Progress::start(!stdout_is_terminal, "find", &mut options);
    let (mut states, mut errors) = (Vec::new(), invalid_roots as u64);
    for segment in segments(&roots, program.follow != Follow::Never, cluster) {
        match segment {
            Segment::Files(files) => {
                let mut state = find.new_state();
                let mut pass = StartPass { find: &find, errors: 0, quit: false };
                for file in files {
                    find.visit_start(&mut pass, &mut state, file);
                    if pass.quit {
                        break;
                    }
                }
                state.outputs.flush(); // before what the next segment prints
                states.push(state);
                errors += pass.errors;
                if pass.quit {
                    break;
                }
            }
            Segment::Walk(roots) => {
                let mut outcome = cluster.walk(roots, &options, &find, &args.walk.plan());
                outcome.states.iter_mut().for_each(|state| state.outputs.flush());
                states.extend(outcome.states);
                errors += outcome.errors;
                if outcome.quit {
                    break;
                }
            }
        }
    }
    progress.finish();
    let finished_ok = find.finish(states, cluster);
    let exit = Exit::from_errors(errors).max(if finished_ok { Exit::Ok } else { Exit::Errors });
    Exit::from_code(cluster.agree_exit(exit.code()))
}

/// A stretch of the starting points, in command-line order.
enum Segment<'r> {
    /// Starting points that are not directories: evaluated one by one, in order, outside the walk.
    Files(&'r [Vec<u8>]),
    /// Directories (and starting points that could not be stat'ed, for the walk to report): walked
    /// together in parallel.
    Walk(&'r [Vec<u8>]),
}

/// GNU find handles starting points in order. Canopy keeps that order for everything but the
/// insides of consecutive directories, which are walked together: a run of files comes out in
/// order, and each run of directories after what precedes it. Under MPI one walk takes them all
/// (rank 0 alone knows them, and the ranks' output is merged in any order anyway).
fn segments<'r>(roots: &'r [Vec<u8>], follow: bool, cluster: &Cluster) -> Vec<Segment<'r>> {
    if cluster.size() > 1 || roots.len() <= 1 {
        return vec![Segment::Walk(roots)];
    }
    let is_file: Vec<bool> = roots.iter().map(|r| stat_path(r, follow).is_ok_and(|m| !m.is_dir())).collect();
    let mut segments = Vec::new();
    let mut start = 0;
    while start < roots.len() {
        let files = is_file[start];
        let len = is_file[start..].iter().take_while(|&&f| f == files).count();
        let run = &roots[start..start + len];
        segments.push(if files { Segment::Files(run) } else { Segment::Walk(run) });
        start += len;
    }
    segments
}

fn now() -> Timestamp {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::Realtime);
    Timestamp { sec: t.tv_sec, nsec: t.tv_nsec as u32 }
}
