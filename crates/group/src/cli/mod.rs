//! `canopy group OP PATH`: one group operation across hosts, its aggregated result printed `clush -b` style.

mod render;
pub mod stat;

// `clush -b` blocks, for the group tools that print that way too.
pub use render::{Labels, block};

use crate::aggr::{AggrSpec, Builtin, gloadaggr};
use crate::group::{Group, GroupError, OpenReport, Outcome};
use crate::launch::{Client, HostsArgs};
use crate::ops::{AggrType, FileOp, OpKind, OpenFlags};
use crate::status::MemberStatus;
use crate::transport::Transport;
use canopy_nodeset::RangeSet;
use canopy_transport::World;
use clap::{Args, ValueEnum};
use std::io::Write;
use std::process::ExitCode;

const EXAMPLES: &str = "\
Examples:
  canopy group read /etc/resolv.conf
  canopy group read /proc/loadavg --agg average
  canopy group stat /etc/passwd --hosts 'node[01-08]' --host-root /srv/sim/{host}
  canopy group stat --checksum /etc/ssh/sshd_config
  canopy group checksum /etc/conf.d --hosts 16 --host-root ./hosts/{rank} --fanout 4
  canopy group read '/var/log/*.log' --bytes 4096 --agg concat --json
  mpirun -n 64 canopy group read /proc/loadavg --agg average      # one host per MPI rank

PATH names a file, the files of a directory (not recursive) or a glob's matches, on every host.
Like `clush -b`: identical results are printed once under the set of hosts that produced them
(larger sets first, then by first host), contents that differ only in a final newline are
identical, and empty ones print nothing; hosts that fail are named on stderr and the others are
still printed. stat compares type, mode, owner, size and mtime to the second (--checksum: the
contents too) and prints `ls -l`'s fields.
Exit status as clush's: 0 (also when some hosts failed: see stderr), 2 on usage errors;
-S: the largest status of any host (1 when its file failed, 255 when it did not answer);
--strict: nothing is printed unless every file opens, and any failure exits 1.";

/// The operation to apply to every member.
#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub enum Operation {
    /// Read the contents (from --offset, at most --bytes).
    Read,
    /// Stat: type, mode, owner, size and modification time, as `ls -l` shows them.
    Stat,
    /// SHA-256 of the contents, computed on each host: only digests cross the tree.
    Checksum,
}

/// Apply one file operation to a group of files across hosts and print the aggregated result.
#[derive(Args, Debug, Clone)]
#[command(after_help = EXAMPLES)]
pub struct GroupArgs {
    /// The operation to apply to every member
    #[arg(value_enum)]
    pub op: Operation,

    /// A file, a directory, or a glob, resolved under each host's root
    pub path: String,

    /// Data aggregation: classes (identical results grouped), concat (one block per member), sum, min,
    /// max, average (column-wise over the numbers in each result), equal, checksum, or
    /// LIBRARY.so:FUNCTION (a C aggregation, see include/canopy_aggr.h)
    #[arg(long, value_name = "AGG")]
    pub agg: Option<String>,

    /// Read at most this many bytes per member (default: to the end)
    #[arg(long, value_name = "N")]
    pub bytes: Option<u64>,

    /// Read from this offset
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub offset: u64,

    /// stat: also compare the contents (SHA-256, computed on each host)
    #[arg(long)]
    pub checksum: bool,

    /// All or nothing: any file that does not open stops the operation, and any failure exits 1
    #[arg(long)]
    pub strict: bool,

    /// Exit with the largest status of any host (1 when its file failed, 255 when it did not answer),
    /// as clush -S
    #[arg(short = 'S', long = "maxrc")]
    pub maxrc: bool,

    /// Where the hosts are and how the aggregation tree is shaped
    #[command(flatten)]
    pub hosts: HostsArgs,

    /// Print one JSON document instead of text
    #[arg(long)]
    pub json: bool,
}

/// Runs `canopy group` on stdout and stderr: every MPI rank calls it, rank 0 prints.
pub fn run(args: GroupArgs, cluster: &World) -> ExitCode {
    run_with(&args, cluster, &mut std::io::stdout(), &mut std::io::stderr())
}

/// Runs `canopy group`, writing results to `out` and diagnostics to `err` (on rank 0).
pub fn run_with(args: &GroupArgs, cluster: &World, out: &mut dyn Write, err: &mut dyn Write) -> ExitCode {
    let mut registry = crate::Registry::new();
    stat::register(&mut registry);
    let outcome = aggregation(args).and_then(|spec| {
        args.hosts.run(cluster, registry, |runtime| execute(runtime, args, spec, out, err))?.transpose()
    });
    let failed = match outcome {
        Ok(Some(met)) => return ExitCode::from(met.exit_code(args)),
        // Another MPI rank: it served its host; rank 0 reports.
        Ok(None) => return ExitCode::SUCCESS,
        Err(failed) => failed,
    };
    let (message, code) = match failed {
        Failed::Usage(message) => (message, 2),
        Failed::Run(message) => (message, 1),
    };
    if cluster.is_root() {
        let _ = writeln!(err, "canopy group: {message}");
    }
    ExitCode::from(code)
}

enum Failed {
    Usage(String),
    Run(String),
}

impl From<GroupError> for Failed {
    fn from(e: GroupError) -> Self {
        match e {
            GroupError::Usage(message) => Failed::Usage(message),
            other => Failed::Run(other.to_string()),
        }
    }
}

impl From<std::io::Error> for Failed {
    fn from(e: std::io::Error) -> Self {
        Failed::Run(format!("cannot write the output: {e}"))
    }
}

/// What went wrong on the hosts, for the exit status.
#[derive(Copy, Clone, Debug, Default)]
struct Met {
    /// Some file did not open or its operation failed.
    failed: bool,
    /// Some host did not answer.
    silent: bool,
}

impl Met {
    fn of(report: &OpenReport, outcome: Option<&Outcome>) -> Met {
        let failures = outcome.map_or(&[][..], Outcome::failures);
        Met {
            failed: !report.failures.is_empty()
                || failures.iter().any(|f| f.status != MemberStatus::Unreachable),
            silent: !report.missing.is_empty()
                || outcome.is_some_and(|o| !o.missing().is_empty())
                || failures.iter().any(|f| f.status == MemberStatus::Unreachable),
        }
    }

    /// clush's statuses: 0 by default; with -S the largest of the hosts' (1 for `cat` failing, 255 for a
    /// host that timed out); with --strict any failure is 1.
    fn exit_code(self, args: &GroupArgs) -> u8 {
        match (args.strict, args.maxrc) {
            (true, _) => u8::from(self.failed || self.silent),
            (false, true) if self.silent => 255,
            (false, true) => u8::from(self.failed),
            (false, false) => 0,
        }
    }
}

fn aggregation(args: &GroupArgs) -> Result<AggrSpec, Failed> {
    if args.checksum && args.op != Operation::Stat {
        return Err(Failed::Usage("--checksum adds the contents to stat's comparison".into()));
    }
    if args.op == Operation::Checksum {
        return match args.agg.as_deref() {
            None | Some("checksum") => Ok(Builtin::Checksum.into()),
            Some(other) => Err(Failed::Usage(format!("checksum aggregates by checksum, not {other}"))),
        };
    }
    let Some(name) = args.agg.as_deref() else {
        return Ok(match args.op {
            Operation::Stat => AggrSpec::Registered { name: stat::AGGREGATION.into(), params: String::new() },
            _ => Builtin::Classes.into(),
        });
    };
    if args.checksum {
        return Err(Failed::Usage("--checksum goes with stat's own grouping, not --agg".into()));
    }
    if let Some(builtin) = Builtin::from_name(name) {
        return Ok(builtin.into());
    }
    match name.rsplit_once(':') {
        Some((library, function)) => gloadaggr(library, function).map_err(|e| Failed::Usage(e.to_string())),
        None => {
            let names: Vec<&str> = Builtin::ALL.iter().map(|b| b.name()).collect();
            Err(Failed::Usage(format!(
                "unknown aggregation {name:?}: expected {} or LIBRARY.so:FUNCTION",
                names.join(", ")
            )))
        }
    }
}

fn execute(
    runtime: &Client<'_>,
    args: &GroupArgs,
    spec: AggrSpec,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<Met, Failed> {
    let timeout = runtime.timeout().as_secs_f64();
    let flags = if args.strict { OpenFlags::RDONLY } else { OpenFlags::RDONLY | OpenFlags::BESTEFFORT };
    let mut group = match runtime.gopen(&args.path, flags) {
        Ok(group) => group,
        Err(GroupError::Open(report)) => {
            render::open_failures(err, &report, timeout)?;
            if report.failures.is_empty() && report.missing.is_empty() {
                writeln!(err, "canopy group: {}: no file on any host", args.path)?;
            }
            return Ok(Met { failed: true, ..Met::of(&report, None) });
        }
        Err(other) => return Err(Failed::Run(other.to_string())),
    };
    let report = group.open_report().clone();
    render::open_failures(err, &report, timeout)?;
    let outcome = match apply(&mut group, args, spec) {
        Ok(outcome) => outcome,
        Err(GroupError::Members(outcome)) => *outcome,
        Err(other) => return Err(Failed::Run(other.to_string())),
    };
    let contents = match args.checksum {
        true => Some(checksums(&mut group, &outcome)?),
        false => None,
    };
    if args.json {
        let document = render::json(args, &group, &report, &outcome, contents.as_ref())?;
        writeln!(out, "{}", serde_json::to_string_pretty(&document).expect("JSON values serialise"))?;
    } else {
        render::text(out, &group, &outcome, contents.as_ref())?;
    }
    render::op_failures(err, &group, &outcome, timeout)?;
    let mut met = Met::of(&report, Some(&outcome));
    if let Some(contents) = &contents {
        render::op_failures(err, &group, contents, timeout)?;
        met.failed |= Met::of(&report, Some(contents)).failed;
        met.silent |= Met::of(&report, Some(contents)).silent;
    }
    Ok(met)
}

fn apply<T: Transport>(
    group: &mut Group<'_, T>,
    args: &GroupArgs,
    spec: AggrSpec,
) -> Result<Outcome, GroupError> {
    match args.op {
        Operation::Read | Operation::Checksum => {
            group.gbindaggr(OpKind::Pread, AggrType::Data, spec)?;
            group.pread(args.bytes.unwrap_or(u64::MAX), args.offset)
        }
        Operation::Stat => {
            group.gbindaggr(OpKind::Fstat, AggrType::Data, spec)?;
            group.fstat()
        }
    }
}

/// `stat --checksum`: the contents' digests of the members the stat succeeded on.
fn checksums<T: Transport>(group: &mut Group<'_, T>, stat: &Outcome) -> Result<Outcome, Failed> {
    let failed = stat.failures().iter().fold(RangeSet::new(), |all, f| all.union(&f.members));
    let members = group.all_members().difference(&failed);
    group.gbindaggr(OpKind::Pread, AggrType::Data, Builtin::Checksum.into())?;
    match group.run_on(FileOp::Pread { len: u64::MAX, offset: 0 }, &members) {
        Ok(outcome) => Ok(outcome),
        Err(GroupError::Members(outcome)) => Ok(*outcome),
        Err(other) => Err(Failed::Run(other.to_string())),
    }
}

#[cfg(test)]
mod tests;
