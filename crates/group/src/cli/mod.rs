//! `canopy group OP PATH`: one group operation across hosts, its aggregated result printed `clush -b` style.

mod render;

// `clush -b` blocks, for the group tools that print that way too.
pub use render::{Labels, block};

use crate::aggr::{AggrSpec, Builtin, gloadaggr};
use crate::group::{Group, GroupError, Outcome};
use crate::launch::{Client, HostsArgs};
use crate::ops::{AggrType, OpKind, OpenFlags};
use crate::transport::Transport;
use canopy_dist::Cluster;
use clap::{Args, ValueEnum};
use std::io::Write;
use std::process::ExitCode;

const EXAMPLES: &str = "\
Examples:
  canopy group read /etc/resolv.conf
  canopy group read /proc/loadavg --agg average
  canopy group stat /etc/passwd --hosts 8 --host-root /srv/sim/{rank}
  canopy group checksum /etc/conf.d --hosts 16 --host-root ./hosts/{rank} --fanout 4
  canopy group read '/var/log/*.log' --bytes 4096 --agg concat --json
  mpirun -n 64 canopy group read /proc/loadavg --agg average      # one host per MPI rank

PATH names a file, the files of a directory (not recursive) or a glob's matches, on every host.
Identical results are printed once, under the set of hosts that produced them.
Exit status: 0 when every member succeeded, 1 when any failed or a host did not answer,
2 on usage errors.";

/// The operation to apply to every member.
#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub enum Operation {
    /// Read the contents (from --offset, at most --bytes).
    Read,
    /// Stat: size, mode, owner, links, modification time.
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

    /// Go on with the members that open when others fail (default: any failure stops)
    #[arg(long)]
    pub best_effort: bool,

    /// Where the hosts are and how the aggregation tree is shaped
    #[command(flatten)]
    pub hosts: HostsArgs,

    /// Print one JSON document instead of text
    #[arg(long)]
    pub json: bool,
}

/// Runs `canopy group` on stdout and stderr: every MPI rank calls it, rank 0 prints.
pub fn run(args: GroupArgs, cluster: &Cluster) -> ExitCode {
    run_with(&args, cluster, &mut std::io::stdout(), &mut std::io::stderr())
}

/// Runs `canopy group`, writing results to `out` and diagnostics to `err` (on rank 0).
pub fn run_with(args: &GroupArgs, cluster: &Cluster, out: &mut dyn Write, err: &mut dyn Write) -> ExitCode {
    let outcome = aggregation(args).and_then(|spec| {
        args.hosts
            .run(cluster, crate::Registry::new(), |runtime| execute(runtime, args, spec, out, err))?
            .transpose()
    });
    let failed = match outcome {
        Ok(Some(true)) => return ExitCode::SUCCESS,
        Ok(Some(false)) => return ExitCode::from(1),
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

fn aggregation(args: &GroupArgs) -> Result<AggrSpec, Failed> {
    if args.op == Operation::Checksum {
        return match args.agg.as_deref() {
            None | Some("checksum") => Ok(Builtin::Checksum.into()),
            Some(other) => Err(Failed::Usage(format!("checksum aggregates by checksum, not {other}"))),
        };
    }
    let Some(name) = args.agg.as_deref() else {
        return Ok(Builtin::Classes.into());
    };
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
) -> Result<bool, Failed> {
    let timeout = runtime.timeout().as_secs_f64();
    let flags = if args.best_effort { OpenFlags::RDONLY | OpenFlags::BESTEFFORT } else { OpenFlags::RDONLY };
    let mut group = match runtime.gopen(&args.path, flags) {
        Ok(group) => group,
        Err(GroupError::Open(report)) => {
            render::open_failures(err, &report, timeout)?;
            if report.failures.is_empty() && report.missing.is_empty() {
                writeln!(err, "canopy group: {}: no file on any host", args.path)?;
            }
            return Ok(false);
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
    if args.json {
        let document = render::json(args, &group, &report, &outcome)?;
        writeln!(out, "{}", serde_json::to_string_pretty(&document).expect("JSON values serialise"))?;
    } else {
        render::text(out, &group, &outcome)?;
    }
    render::op_failures(err, &group, &outcome, timeout)?;
    Ok(report.failures.is_empty() && report.missing.is_empty() && outcome.failures().is_empty())
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

#[cfg(test)]
mod tests;
