//! `canopy ptop`: top across hosts (TBON-FS §4.1.4). Every refresh is one group read of every
//! `/proc/PID/stat*` file on every host, reduced in the tree to the top processes by CPU and by memory and
//! to per-command groups (across users and per user) with total, average, maximum and where the maximum
//! is. A refreshing terminal view (`-d`, keys to sort and group) or batch frames (`-b -n N`, `--json`).

pub mod procs;
mod view;

use crate::hosts::{HostsArgs, with_runtime};
use canopy_group::{AggrSpec, AggrType, GroupError, OpKind, OpenFlags, Registry, Runtime, Transport};
use canopy_nodeset::NodeSet;
use canopy_transport::World;
use canopy_transport::users_terminal;
use clap::{Args, ValueEnum};
use procs::{Params, ProcessSummary, ProcessTop};
use std::io::Write;
use std::process::ExitCode;
use std::time::{Duration, Instant};

const EXAMPLES: &str = "\
Examples:
  canopy ptop                                   # refreshing view; keys: c m g q
  canopy ptop -b -n 1                           # one frame for scripts
  canopy ptop -b -n 3 -d 5 --json               # three JSON frames, 5 s apart
  canopy ptop -b -n 1 -o mem --group user --top 20
  canopy ptop --hosts 16                        # 16 simulated hosts (all read this /proc)

Lines are cut to the terminal's width in the refreshing view, and in batch mode to -w or
$COLUMNS (as top does). %CPU is the share of one CPU used since the previous refresh (the first frame waits 0.5 s for
a baseline). Groups add up processes with the same command name (--group command: across users;
--group user: per user), with total, average and maximum, and where the maximum is (HOST:PID).
Keys in the terminal view: c sort by CPU, m sort by memory, g next grouping, q quit.
Exit status: 0, or 1 when a host did not answer; 2 on usage errors.";

/// Which list comes first and how lists are ordered.
#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub enum SortKey {
    /// CPU share.
    Cpu,
    /// Resident memory.
    Mem,
}

/// How processes are grouped under the top list.
#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub enum Grouping {
    /// No group table.
    None,
    /// By command name across users.
    Command,
    /// By user and command name.
    User,
}

/// Top across hosts: the busiest processes and per-command totals, aggregated in the tree.
#[derive(Args, Debug, Clone)]
#[command(after_help = EXAMPLES)]
pub struct PtopArgs {
    /// Batch mode: print frames instead of a refreshing view
    #[arg(short, long)]
    pub batch: bool,

    /// Number of frames (default: until q or Ctrl-C)
    #[arg(short = 'n', long = "iterations", value_name = "N")]
    pub iterations: Option<u64>,

    /// Seconds between frames
    #[arg(short, long, value_name = "SECONDS", default_value_t = 5.0)]
    pub delay: f64,

    /// Processes (and groups) per list
    #[arg(long, value_name = "N", default_value_t = 15)]
    pub top: usize,

    /// Order by
    #[arg(short = 'o', long = "sort", value_enum, default_value_t = SortKey::Cpu)]
    pub sort: SortKey,

    /// Group processes with the same command name
    #[arg(long, value_enum, default_value_t = Grouping::Command)]
    pub group: Grouping,

    /// Batch frames as JSON, one object per line
    #[arg(long)]
    pub json: bool,

    /// Cut batch lines to this many columns, as top -w [default: $COLUMNS when set, else no cut; the
    /// refreshing view always fits the terminal]
    #[arg(short = 'w', long, value_name = "COLUMNS", value_parser = clap::value_parser!(u16).range(1..))]
    pub width: Option<u16>,

    #[command(flatten)]
    pub hosts: HostsArgs,
}

/// The aggregation ptop needs on every host.
pub fn registry() -> Registry {
    let mut registry = Registry::new();
    procs::register(&mut registry);
    registry
}

/// The group ptop reads: every process's stat, statm and status file.
const PROCESSES: &str = "/proc/[0-9]*/stat*";

/// One refresh, with members resolved to hosts.
pub struct Frame {
    /// Hosts that answered.
    pub hosts: NodeSet,
    /// Hosts that did not.
    pub missing: NodeSet,
    /// The reduced processes.
    pub summary: ProcessSummary,
    /// Host and pid of each member that appears in the summary.
    pub places: std::collections::HashMap<u64, (String, u32)>,
    /// Time to open, read and aggregate.
    pub latency: Duration,
}

/// Runs `canopy ptop`.
pub fn run(args: PtopArgs, cluster: &World) -> ExitCode {
    let mut err = std::io::stderr().lock();
    if !(args.delay >= 0.0 && args.delay.is_finite()) {
        let _ = writeln!(err, "canopy ptop: invalid --delay {}", args.delay);
        return ExitCode::from(2);
    }
    let interactive = !args.batch && users_terminal(&std::io::stdout()) && users_terminal(&std::io::stdin());
    let outcome = with_runtime(&args.hosts, cluster, registry(), |runtime| {
        let mut sampler = Sampler::new(runtime, args.top);
        if interactive { view::interactive(&mut sampler, &args) } else { batch(&mut sampler, &args) }
    });
    match outcome {
        // Another MPI rank: it served its host; rank 0 reports for the job.
        Ok(None) => ExitCode::SUCCESS,
        Ok(Some(Ok(clean))) => ExitCode::from(if clean { 0 } else { 1 }),
        Ok(Some(Err(message))) => {
            let _ = writeln!(err, "canopy ptop: {message}");
            ExitCode::from(1)
        }
        Err(usage) => {
            let _ = writeln!(err, "canopy ptop: {usage}");
            ExitCode::from(2)
        }
    }
}

/// Prints frames; `Ok(true)` when every host answered every time.
fn batch<T: Transport>(sampler: &mut Sampler<'_, T>, args: &PtopArgs) -> Result<bool, String> {
    let mut clean = true;
    let mut out = std::io::stdout().lock();
    let delay = Duration::from_secs_f64(args.delay);
    let width = args
        .width
        .map(usize::from)
        .or_else(|| std::env::var("COLUMNS").ok()?.parse().ok().filter(|&w: &usize| w > 0));
    let mut index = 0;
    while args.iterations.is_none_or(|n| index < n) {
        if index > 0 {
            std::thread::sleep(delay);
        }
        let frame = sampler.frame()?;
        clean &= frame.missing.is_empty();
        report_missing(&frame);
        let written = if args.json {
            writeln!(out, "{}", view::json(&frame, &sampler.users))
        } else {
            if index > 0 {
                writeln!(out).map_err(|e| e.to_string())?;
            }
            let text = view::text(&frame, args.sort, args.group, &sampler.users, None);
            out.write_all(view::fit(&text, width).as_bytes())
        };
        written.and_then(|()| out.flush()).map_err(|e| e.to_string())?;
        index += 1;
    }
    Ok(clean)
}

fn report_missing(frame: &Frame) {
    if !frame.missing.is_empty() {
        let _ =
            writeln!(std::io::stderr(), "canopy ptop: {}: no answer (host down or too slow)", frame.missing);
    }
}

/// Takes frames: a fresh group each time (processes come and go), one aggregated read.
pub struct Sampler<'rt, T: Transport> {
    runtime: &'rt Runtime<T>,
    params: Params,
    primed: bool,
    users: view::Users,
}

impl<'rt, T: Transport> Sampler<'rt, T> {
    /// A sampler keeping `top` processes per list.
    pub fn new(runtime: &'rt Runtime<T>, top: usize) -> Self {
        let session = rand_seed();
        Sampler { runtime, params: Params { session, top }, primed: false, users: view::Users::default() }
    }

    /// The next frame; the first one takes a baseline sample half a second earlier.
    pub fn frame(&mut self) -> Result<Frame, String> {
        if !self.primed {
            self.sample()?;
            self.primed = true;
            std::thread::sleep(Duration::from_millis(500));
        }
        self.sample()
    }

    fn sample(&mut self) -> Result<Frame, String> {
        let started = Instant::now();
        let mut group = match self.runtime.gopen(PROCESSES, OpenFlags::RDONLY | OpenFlags::BESTEFFORT) {
            Ok(group) => group,
            Err(GroupError::Open(report)) => {
                return Err(format!("cannot read /proc on any host ({report:?})"));
            }
            Err(other) => return Err(other.to_string()),
        };
        let spec = AggrSpec::Registered {
            name: procs::AGGREGATION.into(),
            params: serde_json::to_string(&self.params).expect("params serialise"),
        };
        group.gbindaggr(OpKind::Pread, AggrType::Data, spec).map_err(|e| e.to_string())?;
        // Processes that end between listing and reading fail to read: they are simply gone.
        let outcome = match group.pread(4096, 0) {
            Ok(outcome) => outcome,
            Err(GroupError::Members(outcome)) => *outcome,
            Err(other) => return Err(other.to_string()),
        };
        let summary =
            outcome.data().map(|d| d.decode::<ProcessSummary>()).transpose().map_err(|e| e.to_string())?;
        let summary = ProcessTop::new(self.params.clone()).finish(summary.flatten().unwrap_or_default());
        let latency = started.elapsed();
        let mut places = std::collections::HashMap::new();
        let members = summary.top_cpu.iter().chain(&summary.top_rss).map(|p| p.member).chain(
            summary
                .commands
                .values()
                .chain(summary.user_commands.values())
                .flat_map(|g| [g.cpu.max_member, g.rss.max_member]),
        );
        for member in members {
            if let Some(file) = group.gfiles().get(member as usize) {
                let pid = file
                    .path
                    .iter()
                    .nth(2)
                    .and_then(|p| p.to_str())
                    .and_then(|p| p.parse().ok())
                    .unwrap_or(0);
                places.insert(member, (file.host.clone(), pid));
            }
        }
        let hosts = NodeSet::from_names(group.host_ranks().into_iter().map(|(name, _)| name.to_owned()));
        let missing = outcome.missing().union(&group.open_report().missing);
        Ok(Frame { hosts, missing, summary, places, latency })
    }
}

/// A little entropy for the session id (two ptop runs on one host must not share CPU baselines).
fn rand_seed() -> u64 {
    let mut bytes = [0u8; 8];
    // SAFETY: getrandom writes at most `bytes.len()` bytes into the buffer.
    let _ = unsafe { libc::getrandom(bytes.as_mut_ptr().cast(), bytes.len(), 0) };
    u64::from_ne_bytes(bytes)
}
