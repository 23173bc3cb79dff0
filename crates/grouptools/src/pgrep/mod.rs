//! `canopy pgrep PATTERN FILE`: grep the same file on every host (TBON-FS §4.1.2). One group read; each
//! host selects and strips its lines, and hosts with identical results are merged in the tree into one
//! equivalence class, printed once under the NodeSet of its hosts the way `clush -b` prints.

pub mod matches;

use crate::hosts::{HostsArgs, with_runtime};
use crate::report::Problems;
use canopy_dist::Cluster;
use canopy_group::aggr::Classes;
use canopy_group::cli::{Labels, block};
use canopy_group::{
    AggrSpec, AggrType, Client, FileOp, GroupError, OpKind, OpenFlags, RangeSet, Registry, Value,
};
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
--strip print as one block, like `clush -b`: a line of 15 dashes, the hosts as a NodeSet with
their number when more than one, 15 dashes, then the lines — the stripped lines, so the block is
exactly what those hosts have in common. Hosts that selected nothing print nothing (with -c they
print 0). -L prints `HOSTS: LINE` for every line instead of blocks. A host whose file cannot be
read is reported on stderr with the others that failed the same way.
Exit status as grep's: 0 when some host selected a line, 1 when none did, 2 when a host failed.";

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

    /// Line mode: `HOSTS: LINE` for every line instead of clush -b blocks
    #[arg(short = 'L', long = "lines")]
    pub line_mode: bool,

    /// Remove this from every selected line before hosts are compared (regex; repeatable); a rule's
    /// first match is removed, or only its first capture group when it has one
    #[arg(long = "strip", value_name = "REGEX")]
    pub strip: Vec<String>,

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
pub fn run(args: PgrepArgs, cluster: &Cluster) -> ExitCode {
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

/// Reads and greps the group, prints the classes; the exit code.
fn grep(runtime: &Client<'_>, args: &PgrepArgs, params: &Params, matcher: &Matches) -> Result<u8, String> {
    let mut problems = Problems::default();
    let mut group = match runtime.gopen(&args.file, OpenFlags::RDONLY | OpenFlags::BESTEFFORT) {
        Ok(group) => group,
        Err(GroupError::Open(report)) => {
            problems.add_open(&report, "cannot open");
            problems.print("pgrep", &mut std::io::stderr().lock()).map_err(|e| e.to_string())?;
            return Ok(2);
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
    // Blocks in host order, like clush -b.
    let mut shown: Vec<(RangeSet, Vec<u8>)> = classes
        .0
        .into_iter()
        .filter_map(|(value, members)| match value {
            Value::Bytes(lines) if !lines.is_empty() => Some((members, lines)),
            _ => None,
        })
        .collect();
    shown.sort_by_key(|(members, _)| members.values().next());
    let labels = Labels::new(&group);
    let mut out = std::io::stdout().lock();
    let mut any = false;
    for (members, lines) in &shown {
        any |= matcher.selected_any(lines);
        if args.line_mode {
            let hosts = labels.of(members);
            for line in lines.strip_suffix(b"\n").unwrap_or(lines).split(|&b| b == b'\n') {
                write!(out, "{hosts}: ").map_err(|e| e.to_string())?;
                out.write_all(line).and_then(|()| out.write_all(b"\n")).map_err(|e| e.to_string())?;
            }
        } else {
            block(&mut out, &labels, members, lines).map_err(|e| e.to_string())?;
        }
    }
    out.flush().map_err(|e| e.to_string())?;
    problems.print("pgrep", &mut std::io::stderr().lock()).map_err(|e| e.to_string())?;
    Ok(if !problems.is_empty() {
        2
    } else if any {
        0
    } else {
        1
    })
}
