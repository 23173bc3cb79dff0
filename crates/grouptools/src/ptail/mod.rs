//! `canopy ptail [-f] [-n N] FILE`: tail a log on every host (TBON-FS §4.1.3). Each host cuts what it read
//! into lines and strips host-specific fields (timestamp, hostname, pid by default); equal lines from any
//! hosts are merged in the tree into one line with the NodeSet of the hosts that logged it. While
//! following, a line waits up to `--window` for the same line from other hosts before it is printed.

pub mod lines;
pub mod strip;

use crate::hosts::{HostsArgs, with_runtime};
use crate::interrupt;
use crate::problems::Problems;
use canopy_group::{
    AggrSpec, AggrType, Aggregation, FileOp, Group, GroupError, MemberStatus, OpKind, OpenFlags, Registry,
    Runtime, Transport, Whence,
};
use canopy_nodeset::RangeSet;
use canopy_transport::World;
use clap::Args;
use lines::{Line, LineEquivalence, Lines, Params};
use std::io::Write;
use std::process::ExitCode;
use std::time::{Duration, Instant};

const EXAMPLES: &str = "\
Examples:
  canopy ptail /var/log/syslog                       # last 10 lines of every host, merged
  canopy ptail -f /var/log/syslog                    # follow; Ctrl-C to stop
  canopy ptail -f -n 0 --window 2 /var/log/app.log   # only new lines, merged within 2 s
  canopy ptail --strip 'req=(\\d+)' /var/log/app.log  # also ignore request ids
  canopy ptail --no-strip -n 50 /etc/motd --hosts 8 --host-root /srv/sim/{rank}

Lines equal after stripping are printed once as `HOSTS: TIME LINE` (HOSTS in NodeSet notation),
with the stripped text and the earliest of the hosts' timestamps. A leading timestamp (syslog's
`Nov 24 10:00:01` or RFC 3339) is set aside before lines are compared (--no-strip-time compares
it too). Default strip rules (syslog): the hostname after the timestamp and the pid in
`program[pid]:`. --strip replaces them; a rule's first match is removed, or only its first
capture group when it has one. --no-strip compares lines exactly as logged. With G hosts each logging L lines of which a share P
are the same everywhere, about L((1-P)G + P) lines are printed instead of LG.
Exit status: 0 when every host could be read (also after Ctrl-C), 1 when any failed, 2 on usage errors.";

/// Follow a log on every host, merging lines that are equal after stripping host-specific fields.
#[derive(Args, Debug, Clone)]
#[command(after_help = EXAMPLES)]
pub struct PtailArgs {
    /// The log file (a path under each host's root; a glob or a directory gives several per host)
    pub file: String,

    /// Keep reading as the files grow, until Ctrl-C
    #[arg(short, long)]
    pub follow: bool,

    /// Print the last N lines of each host first
    #[arg(short = 'n', long = "lines", value_name = "N", default_value_t = 10)]
    pub lines: usize,

    /// Remove this from every line before comparing (regex; repeatable; replaces the syslog rules)
    #[arg(long = "strip", value_name = "REGEX")]
    pub strip: Vec<String>,

    /// Compare lines as they are, timestamps included
    #[arg(long, conflicts_with = "strip")]
    pub no_strip: bool,

    /// Compare the leading timestamps too: lines merge only when logged at the same time
    #[arg(long)]
    pub no_strip_time: bool,

    /// Seconds a followed line waits for the same line from other hosts
    #[arg(long, value_name = "SECONDS", default_value_t = 1.0)]
    pub window: f64,

    /// One JSON object per line: {"hosts", "count", "time", "line"}
    #[arg(long)]
    pub json: bool,

    #[command(flatten)]
    pub hosts: HostsArgs,
}

/// The aggregation ptail needs on every host.
pub fn registry() -> Registry {
    let mut registry = Registry::new();
    lines::register(&mut registry);
    registry
}

/// Bytes read per host per poll while following.
const READ_SIZE: u64 = 1 << 20;

/// Runs `canopy ptail`.
pub fn run(args: PtailArgs, cluster: &World) -> ExitCode {
    let mut err = std::io::stderr().lock();
    if !(args.window >= 0.0 && args.window.is_finite()) {
        let _ = writeln!(err, "canopy ptail: invalid --window {}", args.window);
        return ExitCode::from(2);
    }
    let strip: Vec<String> = match (args.no_strip, args.strip.is_empty()) {
        (true, _) => Vec::new(),
        (false, true) => strip::SYSLOG.iter().map(|s| s.to_string()).collect(),
        (false, false) => args.strip.clone(),
    };
    if let Err(e) = strip::Strip::new(&strip) {
        let _ = writeln!(err, "canopy ptail: {e}");
        return ExitCode::from(2);
    }
    if args.follow {
        interrupt::install();
    }
    let cut_time = !(args.no_strip || args.no_strip_time);
    let tailed =
        with_runtime(&args.hosts, cluster, registry(), |runtime| tail(runtime, &args, strip, cut_time));
    match tailed {
        // Another MPI rank: it served its host; rank 0 reports for the job.
        Ok(None) => ExitCode::SUCCESS,
        Ok(Some(Ok(clean))) => ExitCode::from(if clean { 0 } else { 1 }),
        Ok(Some(Err(message))) => {
            let _ = writeln!(err, "canopy ptail: {message}");
            ExitCode::from(1)
        }
        Err(usage) => {
            let _ = writeln!(err, "canopy ptail: {usage}");
            ExitCode::from(2)
        }
    }
}

/// Output of merged lines and the problems seen, printed as they come.
struct Printer<'a> {
    json: bool,
    problems: Problems,
    reported: usize,
    group_hosts: &'a dyn Fn(&RangeSet) -> canopy_nodeset::NodeSet,
}

impl Printer<'_> {
    fn line(
        &self,
        out: &mut dyn Write,
        members: &RangeSet,
        time: Option<&[u8]>,
        text: &[u8],
    ) -> std::io::Result<()> {
        let hosts = (self.group_hosts)(members);
        if self.json {
            let value = serde_json::json!({
                "hosts": hosts.to_string(),
                "count": hosts.len(),
                "time": time.map(String::from_utf8_lossy),
                "line": String::from_utf8_lossy(text),
            });
            writeln!(out, "{value}")
        } else {
            write!(out, "{hosts}: ")?;
            if let Some(time) = time {
                out.write_all(time)?;
                out.write_all(b" ")?;
            }
            out.write_all(text)?;
            out.write_all(b"\n")
        }
    }

    /// Prints problems not printed yet.
    fn flush_problems(&mut self) {
        let mut err = std::io::stderr().lock();
        for (message, hosts) in &self.problems.entries()[self.reported..] {
            let _ = writeln!(err, "canopy ptail: {hosts}: {message}");
        }
        self.reported = self.problems.entries().len();
    }
}

/// Tails the group; `Ok(true)` when nothing failed.
fn tail<T: Transport>(
    runtime: &Runtime<T>,
    args: &PtailArgs,
    strip: Vec<String>,
    cut_time: bool,
) -> Result<bool, String> {
    let mut group = match runtime.gopen(&args.file, OpenFlags::RDONLY | OpenFlags::BESTEFFORT) {
        Ok(group) => group,
        Err(GroupError::Open(report)) => {
            let mut problems = Problems::default();
            problems.add_open(&report, "cannot open");
            problems.print("ptail", &mut std::io::stderr().lock()).map_err(|e| e.to_string())?;
            return Ok(false);
        }
        Err(other) => return Err(other.to_string()),
    };
    let mut problems = Problems::default();
    problems.add_open(group.open_report(), "cannot open");
    let hosts_of = {
        let members: Vec<canopy_group::Member> = group.gfiles().to_vec();
        move |set: &RangeSet| {
            canopy_nodeset::NodeSet::from_names(set.values().map(|m| members[m as usize].host.clone()))
        }
    };
    let mut printer = Printer { json: args.json, problems, reported: 0, group_hosts: &hosts_of };
    printer.flush_problems();
    let mut out = std::io::stdout().lock();
    let params = Params { strip, cut_time, ..Default::default() };
    let merger = LineEquivalence::new(params.clone())?;
    let mut ok = group.all_members();
    if args.lines > 0 {
        let initial = last_lines(&mut group, args.lines, &params, &merger, &mut ok, &mut printer.problems)?;
        for line in initial {
            printer
                .line(&mut out, &line.members, line.time.as_deref(), &line.text)
                .map_err(|e| e.to_string())?;
        }
    } else {
        let result = group.run_on(FileOp::Lseek { offset: 0, whence: Whence::End }, &ok);
        ok = ok.difference(&printer.problems.check(&group, result, "seek").map_err(|e| e.to_string())?.1);
    }
    out.flush().map_err(|e| e.to_string())?;
    printer.flush_problems();
    if args.follow {
        follow(&mut group, args, params, &mut ok, &mut printer, &mut out)?;
    }
    Ok(printer.problems.is_empty())
}

/// The last `count` lines of every member, merged. Members are positioned `K` bytes before their end,
/// or at the start when shorter (where lseek says EINVAL), and read to the end.
fn last_lines<T: Transport>(
    group: &mut Group<'_, T>,
    count: usize,
    base: &Params,
    merger: &LineEquivalence,
    ok: &mut RangeSet,
    problems: &mut Problems,
) -> Result<Vec<Line>, String> {
    let span = (64 << 10) + 256 * count as u64;
    let seek = group.run_on(FileOp::Lseek { offset: -(span as i64), whence: Whence::End }, ok);
    let outcome = match seek {
        Ok(outcome) => outcome,
        Err(GroupError::Members(outcome)) => *outcome,
        Err(other) => return Err(other.to_string()),
    };
    let _ = outcome;
    let mut inside = RangeSet::new();
    let mut short = RangeSet::new();
    for (status, members) in group.gstatus_classes().to_vec() {
        let members = members.intersection(ok);
        match status {
            MemberStatus::Ok(_) => inside = inside.union(&members),
            MemberStatus::Failed(canopy_group::Errno(libc::EINVAL)) => short = short.union(&members),
            _ => {}
        }
    }
    // Other seek failures (a host gone) are the real ones.
    let failed = ok.difference(&inside.union(&short));
    report_members(group, &failed, "seek", problems);
    if !short.is_empty() {
        let result = group.run_on(FileOp::Lseek { offset: 0, whence: Whence::Set }, &short);
        short = short.difference(&problems.check(group, result, "seek").map_err(|e| e.to_string())?.1);
    }
    *ok = inside.union(&short);
    let mut merged = Lines::default();
    for (members, skip_first) in [(inside, true), (short, false)] {
        if members.is_empty() {
            continue;
        }
        let params = Params { skip_first, last: Some(count), ..base.clone() };
        let read = read_lines(group, span, &params, &members, problems)?;
        *ok = ok.difference(&read.1);
        merged = merger.merge(merged, read.0);
    }
    Ok(merged.in_order())
}

/// Reports the members of `members` with their last status.
fn report_members<T: Transport>(
    group: &Group<'_, T>,
    members: &RangeSet,
    what: &str,
    problems: &mut Problems,
) {
    let statuses = group.gstatus();
    for member in members.values() {
        let file = &group.gfiles()[member as usize];
        let hosts = canopy_nodeset::NodeSet::from_names([file.host.as_str()]);
        problems.add(&hosts, format!("{}: {what}: {}", file.path.display(), statuses[member as usize]));
    }
}

/// One group read of up to `len` bytes per member, cut into merged lines on the hosts; members left with an
/// incomplete last line are moved back to its start. Returns the lines and the members that failed.
fn read_lines<T: Transport>(
    group: &mut Group<'_, T>,
    len: u64,
    params: &Params,
    members: &RangeSet,
    problems: &mut Problems,
) -> Result<(Lines, RangeSet), String> {
    let spec = AggrSpec::Registered {
        name: lines::AGGREGATION.into(),
        params: serde_json::to_string(params).expect("params serialise"),
    };
    group.gbindaggr(OpKind::Read, AggrType::Data, spec).map_err(|e| e.to_string())?;
    let result = group.run_on(FileOp::Read { len }, members);
    let (outcome, mut failed) = problems.check(group, result, "read").map_err(|e| e.to_string())?;
    let lines: Lines = outcome
        .data()
        .map(|d| d.decode::<Lines>())
        .transpose()
        .map_err(|e| e.to_string())?
        .flatten()
        .unwrap_or_default();
    for (partial, holders) in &lines.partial {
        if *partial > 0 {
            let back = FileOp::Lseek { offset: -(*partial as i64), whence: Whence::Cur };
            let result = group.run_on(back, &holders.difference(&failed));
            failed = failed.union(&problems.check(group, result, "seek").map_err(|e| e.to_string())?.1);
        }
    }
    Ok((lines, failed))
}

/// A line waiting for the same line from other hosts.
struct Held {
    text: Vec<u8>,
    time: Option<Vec<u8>>,
    members: RangeSet,
    since: Instant,
    first: (u64, u32),
}

/// Reads new lines until Ctrl-C; each is printed once it has waited `--window` for its equals, and what is
/// held at Ctrl-C (including what was logged just before it) is printed then.
fn follow<T: Transport>(
    group: &mut Group<'_, T>,
    args: &PtailArgs,
    base: Params,
    ok: &mut RangeSet,
    printer: &mut Printer<'_>,
    out: &mut dyn Write,
) -> Result<(), String> {
    let window = Duration::from_secs_f64(args.window);
    let poll = (window / 4).clamp(Duration::from_millis(20), Duration::from_millis(500));
    let params = Params { skip_first: false, last: None, ..base };
    let mut held: Vec<Held> = Vec::new();
    while !ok.is_empty() {
        // After Ctrl-C one last read: what was logged before it is printed too.
        let stopping = interrupt::requested();
        let (lines, failed) = read_lines(group, READ_SIZE, &params, ok, &mut printer.problems)?;
        *ok = ok.difference(&failed);
        printer.flush_problems();
        let now = Instant::now();
        for line in lines.in_order() {
            hold(&mut held, line, now);
        }
        let due = now.checked_sub(window).unwrap_or(now);
        release(&mut held, |h| h.since <= due, printer, out)?;
        if stopping {
            break;
        }
        let wake = Instant::now() + poll;
        while Instant::now() < wake && !interrupt::requested() {
            std::thread::sleep(Duration::from_millis(10).min(poll));
        }
    }
    release(&mut held, |_| true, printer, out)
}

/// Adds a line's members to the held lines with the same text that do not have them yet (a host's second
/// "x" is a new line), in the order they were held; the rest start a new held line.
fn hold(held: &mut Vec<Held>, line: Line, now: Instant) {
    let mut rest = line.members;
    for entry in held.iter_mut().filter(|h| h.text == line.text) {
        let joining = rest.difference(&entry.members);
        if joining.is_empty() {
            continue;
        }
        entry.members = entry.members.union(&joining);
        entry.time = Line::earliest(entry.time.take(), line.time.clone());
        rest = rest.difference(&joining);
        if rest.is_empty() {
            return;
        }
    }
    held.push(Held { text: line.text, time: line.time, members: rest, since: now, first: line.first });
}

/// Prints and forgets the held lines `due` selects, oldest first.
fn release(
    held: &mut Vec<Held>,
    due: impl Fn(&Held) -> bool,
    printer: &Printer<'_>,
    out: &mut dyn Write,
) -> Result<(), String> {
    let (mut ready, waiting): (Vec<Held>, Vec<Held>) = held.drain(..).partition(|h| due(h));
    *held = waiting;
    ready.sort_by_key(|h| (h.since, h.first));
    for line in ready {
        printer.line(out, &line.members, line.time.as_deref(), &line.text).map_err(|e| e.to_string())?;
    }
    out.flush().map_err(|e| e.to_string())
}
