//! `canopy pgrep PATTERN FILE`: grep the same file on every host (TBON-FS §4.1.2). One group read; each
//! host selects and strips its lines, and hosts with identical results are merged in the tree into one
//! equivalence class, printed once under the NodeSet of its hosts the way `clush -b` prints.

pub mod matches;

use crate::hosts::{HostsArgs, with_runtime};
use crate::problems::Problems;
use canopy_group::aggr::Classes;
use canopy_group::cli::{Labels, block};
use canopy_group::{
    AggrSpec, AggrType, Client, FileOp, GroupError, OpKind, OpenFlags, Registry, Transport, Value,
};
use canopy_nodeset::RangeSet;
use canopy_transport::World;
use clap::Args;
use matches::{Matches, Params};
use std::io::Write;
use std::process::ExitCode;

const EXAMPLES: &str = "\
Examples:
  mpirun -n 64 canopy pgrep -i 'error|fail' /var/log/syslog
  canopy pgrep -L MaxSessions /etc/ssh/sshd_config        # NODESET: line, one per line
  canopy pgrep --strip '^\\S+ \\S+ \\S+ \\S+ ' sshd /var/log/auth.log   # ignore timestamp and host
  canopy pgrep -c 'Out of memory' /var/log/kern.log
  canopy pgrep -F -w nfs /etc/fstab --hosts 8 --host-root /srv/sim/{rank}

Every host greps its own FILE (under its root). Hosts whose selected lines are identical after
--strip print as one block, like `clush -b grep`: a line of 15 dashes, the hosts as a NodeSet with
their number when more than one, 15 dashes, then the lines — the stripped lines, so the block is
exactly what those hosts have in common. Blocks come in clush's order: hosts that selected lines
first, larger sets first, then by first host. Hosts that selected nothing print nothing (with -c
they print 0). -L prints `HOSTS: LINE` lines as clush -bL: the first lines of all hosts, equal ones once,
then the second lines, and so on. A host whose file cannot
be read is reported on stderr with the others that failed the same way.
Exit status as clush's: 0 (whatever the hosts found or failed: see stderr), 2 on usage errors;
-S: the largest of the hosts' grep statuses (0 selected, 1 none, 2 failed; 255 no answer).";

/// Grep the same file on every host; hosts with identical results are printed once, like clush -b.
#[derive(Args, Debug, Clone)]
#[command(after_help = EXAMPLES)]
pub struct PgrepArgs {
    /// A regular expression (Rust syntax, like grep -E); with -F fixed strings, one per line
    pub pattern: String,

    /// The file on every host (a path under each host's root; a glob or directory gives several)
    pub file: String,

    /// Ignore case
    #[arg(short, long)]
    pub ignore_case: bool,

    /// Select the lines that do not match
    #[arg(short = 'v', long)]
    pub invert_match: bool,

    /// PATTERN is fixed strings, not a regular expression
    #[arg(short = 'F', long)]
    pub fixed_strings: bool,

    /// Match whole words only
    #[arg(short = 'w', long)]
    pub word_regexp: bool,

    /// Print the number of selected lines of each host
    #[arg(short, long)]
    pub count: bool,

    /// Line mode, as clush -bL: `HOSTS: LINE`, the hosts' k-th lines gathered
    #[arg(short = 'L', long = "lines")]
    pub line_mode: bool,

    /// Remove this from every selected line before hosts are compared (regex; repeatable); a rule's
    /// first match is removed, or only its first capture group when it has one
    #[arg(long = "strip", value_name = "REGEX")]
    pub strip: Vec<String>,

    /// Exit with the largest of the hosts' grep statuses, as clush -S
    #[arg(short = 'S', long = "maxrc")]
    pub maxrc: bool,

    #[command(flatten)]
    pub hosts: HostsArgs,
}

/// The aggregation pgrep needs on every host.
pub fn registry() -> Registry {
    let mut registry = Registry::new();
    matches::register(&mut registry);
    registry
}

/// Runs `canopy pgrep`.
pub fn run(args: PgrepArgs, cluster: &World) -> ExitCode {
    let params = Params {
        pattern: args.pattern.clone(),
        ignore_case: args.ignore_case,
        invert: args.invert_match,
        fixed: args.fixed_strings,
        word: args.word_regexp,
        count: args.count,
        strip: args.strip.clone(),
    };
    let matcher = match Matches::new(params.clone()) {
        Ok(matcher) => matcher,
        Err(message) => {
            if cluster.is_root() {
                eprintln!("canopy pgrep: {message}");
            }
            return ExitCode::from(2);
        }
    };
    let outcome =
        with_runtime(&args.hosts, cluster, registry(), |runtime| grep(runtime, &args, &params, &matcher));
    match outcome {
        // Another MPI rank: it served its host; rank 0 reports for the job.
        Ok(None) => ExitCode::SUCCESS,
        Ok(Some(Ok(code))) => ExitCode::from(code),
        Ok(Some(Err(message))) | Err(message) => {
            eprintln!("canopy pgrep: {message}");
            ExitCode::from(2)
        }
    }
}

/// grep's statuses on one host, as `clush -S` sees them.
mod status {
    pub const SELECTED: u8 = 0;
    pub const NONE: u8 = 1;
    pub const FAILED: u8 = 2;
    /// clush's status for a host that timed out.
    pub const SILENT: u8 = 255;
}

/// Reads and greps the group, prints the classes; the exit code.
fn grep(runtime: &Client<'_>, args: &PgrepArgs, params: &Params, matcher: &Matches) -> Result<u8, String> {
    let mut problems = Problems::default();
    let mut group = match runtime.gopen(&args.file, OpenFlags::RDONLY | OpenFlags::BESTEFFORT) {
        Ok(group) => group,
        Err(GroupError::Open(report)) => {
            problems.add_open(&report, "cannot open");
            problems.print("pgrep", &mut std::io::stderr().lock()).map_err(|e| e.to_string())?;
            let worst = if report.missing.is_empty() { status::FAILED } else { status::SILENT };
            return Ok(if args.maxrc { worst } else { 0 });
        }
        Err(other) => return Err(other.to_string()),
    };
    problems.add_open(group.open_report(), "cannot open");
    let spec = AggrSpec::Registered {
        name: matches::AGGREGATION.into(),
        params: serde_json::to_string(params).expect("params serialise"),
    };
    group.gbindaggr(OpKind::Read, AggrType::Data, spec).map_err(|e| e.to_string())?;
    let result = group.run_on(FileOp::Read { len: u64::MAX }, &group.all_members());
    let (outcome, _failed) = problems.check(&group, result, "read").map_err(|e| e.to_string())?;
    let classes: Classes<Value> = outcome
        .data()
        .map(|d| d.decode::<Classes<Value>>())
        .transpose()
        .map_err(|e| e.to_string())?
        .flatten()
        .unwrap_or(Classes(Vec::new()));
    let labels = Labels::new(&group);
    // Blocks in clush's order: by grep's status on the hosts, then larger sets, then first host.
    let mut shown: Vec<(u8, RangeSet, Vec<u8>)> = classes
        .0
        .into_iter()
        .map(|(value, members)| {
            let lines = match value {
                Value::Bytes(lines) => lines,
                _ => Vec::new(),
            };
            let status = if matcher.selected_any(&lines) { status::SELECTED } else { status::NONE };
            (status, members, lines)
        })
        .collect();
    shown.sort_by_cached_key(|(status, members, _)| (*status, labels.clush_key(members)));
    let worst = shown.iter().map(|(status, _, _)| *status).max().unwrap_or(status::SELECTED);
    let mut out = std::io::stdout().lock();
    if args.line_mode {
        for (members, line) in line_classes(&labels, &shown) {
            write!(out, "{}: ", labels.of(&members)).map_err(|e| e.to_string())?;
            out.write_all(line).and_then(|()| out.write_all(b"\n")).map_err(|e| e.to_string())?;
        }
    } else {
        for (_, members, lines) in shown.iter().filter(|(_, _, lines)| !lines.is_empty()) {
            block(&mut out, &labels, members, lines).map_err(|e| e.to_string())?;
        }
    }
    out.flush().map_err(|e| e.to_string())?;
    problems.print("pgrep", &mut std::io::stderr().lock()).map_err(|e| e.to_string())?;
    let silent = !group.open_report().missing.is_empty() || !outcome.missing().is_empty();
    let worst = match (silent, problems.is_empty()) {
        (true, _) => status::SILENT,
        (false, false) => status::FAILED,
        (false, true) => worst,
    };
    Ok(if args.maxrc { worst } else { 0 })
}

/// `clush -bL`'s lines: the k-th lines of all hosts together, equal ones once under their hosts (larger sets
/// first, then by first host), then the next lines.
fn line_classes<'a, Tr: Transport>(
    labels: &Labels<'_, '_, Tr>,
    shown: &'a [(u8, RangeSet, Vec<u8>)],
) -> Vec<(RangeSet, &'a [u8])> {
    let mut by_position: Vec<Vec<(RangeSet, &[u8])>> = Vec::new();
    for (_, members, lines) in shown.iter().filter(|(_, _, lines)| !lines.is_empty()) {
        for (k, line) in lines.strip_suffix(b"\n").unwrap_or(lines).split(|&b| b == b'\n').enumerate() {
            if by_position.len() <= k {
                by_position.push(Vec::new());
            }
            match by_position[k].iter_mut().find(|(_, l)| *l == line) {
                Some((all, _)) => *all = all.union(members),
                None => by_position[k].push((members.clone(), line)),
            }
        }
    }
    by_position
        .into_iter()
        .flat_map(|mut lines| {
            lines.sort_by_cached_key(|(members, _)| labels.clush_key(members));
            lines
        })
        .collect()
}
