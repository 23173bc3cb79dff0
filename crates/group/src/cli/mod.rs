//! `canopy group OP PATH`: one group operation across hosts, its aggregated result printed `clush -b` style.

mod render;

use crate::aggr::{AggrSpec, Builtin, gloadaggr};
use crate::group::{Group, GroupError, Outcome};
use crate::ops::{AggrType, OpKind, OpenFlags};
use crate::sim::Simulation;
use crate::topology::Fanout;
use crate::transport::ThreadTransport;
use clap::{Args, ValueEnum};
use std::io::Write;
use std::process::ExitCode;
use std::time::Duration;

const EXAMPLES: &str = "\
Examples:
  canopy group read /etc/resolv.conf
  canopy group read /proc/loadavg --agg average
  canopy group stat /etc/passwd --hosts 8 --host-root /srv/sim/{rank}
  canopy group checksum /etc/conf.d --hosts 16 --host-root ./hosts/{rank} --fanout 4
  canopy group read '/var/log/*.log' --bytes 4096 --agg concat --json

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

    /// Simulate this many hosts with threads
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub hosts: usize,

    /// Each host's root directory; {rank} is the host's rank ({rank:03} zero-pads)
    #[arg(long, value_name = "DIR", default_value = "/")]
    pub host_root: String,

    /// Each host's name, with {rank}, {rank:03} and {hostname} [default: the hostname for one host,
    /// host{rank} for several]
    #[arg(long, value_name = "NAME")]
    pub host_name: Option<String>,

    /// Children per node of the aggregation tree, or "flat"
    #[arg(long, value_name = "K", default_value = "64")]
    pub fanout: Fanout,

    /// Consecutive simulated hosts per physical node (they aggregate on their node first)
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub ranks_per_node: usize,

    /// Seconds to wait for the hosts; silent ones are reported missing
    #[arg(long, value_name = "SECONDS", default_value_t = 10.0)]
    pub timeout: f64,

    /// Print one JSON document instead of text
    #[arg(long)]
    pub json: bool,
}

/// Runs `canopy group` on stdout and stderr.
pub fn run(args: GroupArgs) -> ExitCode {
    run_with(&args, &mut std::io::stdout().lock(), &mut std::io::stderr().lock())
}

/// Runs `canopy group`, writing results to `out` and diagnostics to `err`.
pub fn run_with(args: &GroupArgs, out: &mut dyn Write, err: &mut dyn Write) -> ExitCode {
    match execute(args, out, err) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(1),
        Err(Failed::Usage(message)) => {
            let _ = writeln!(err, "canopy group: {message}");
            ExitCode::from(2)
        }
        Err(Failed::Run(message)) => {
            let _ = writeln!(err, "canopy group: {message}");
            ExitCode::from(1)
        }
    }
}

enum Failed {
    Usage(String),
    Run(String),
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

fn execute(args: &GroupArgs, out: &mut dyn Write, err: &mut dyn Write) -> Result<bool, Failed> {
    let spec = aggregation(args)?;
    if !(args.timeout > 0.0 && args.timeout.is_finite()) {
        return Err(Failed::Usage(format!("invalid --timeout {}", args.timeout)));
    }
    let host_name = args
        .host_name
        .clone()
        .unwrap_or_else(|| if args.hosts == 1 { "{hostname}".into() } else { "host{rank}".into() });
    let simulation = Simulation {
        hosts: args.hosts,
        host_root: args.host_root.clone(),
        host_name,
        ranks_per_node: args.ranks_per_node,
        fanout: args.fanout,
        timeout: Duration::from_secs_f64(args.timeout),
        ..Default::default()
    };
    let cluster = simulation.start().map_err(|e| Failed::Usage(e.to_string()))?;
    let flags = if args.best_effort { OpenFlags::RDONLY | OpenFlags::BESTEFFORT } else { OpenFlags::RDONLY };
    let mut group = match cluster.runtime().gopen(&args.path, flags) {
        Ok(group) => group,
        Err(GroupError::Open(report)) => {
            render::open_failures(err, &report, args.timeout)?;
            if report.failures.is_empty() && report.missing.is_empty() {
                writeln!(err, "canopy group: {}: no file on any host", args.path)?;
            }
            return Ok(false);
        }
        Err(other) => return Err(Failed::Run(other.to_string())),
    };
    let report = group.open_report().clone();
    render::open_failures(err, &report, args.timeout)?;
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
    render::op_failures(err, &group, &outcome, args.timeout)?;
    Ok(report.failures.is_empty() && report.missing.is_empty() && outcome.failures().is_empty())
}

fn apply(
    group: &mut Group<'_, ThreadTransport>,
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
