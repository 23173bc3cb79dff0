//! ptop's aggregation (TBON-FS §4.1.4): the group is every `/proc/PID/stat*` file on every host (stat,
//! statm, status per process, consecutive members). On each host the leaf parses `stat` (command, CPU
//! ticks, resident pages, start time) and `status` (effective uid); halves of one process are joined as
//! soon as a merge brings them together, and joined processes are reduced at once to the top N by CPU and
//! by memory and to per-command totals (across users and per user) with average and maximum and where the
//! maximum is. CPU use is the change in ticks since this host's previous sample of the same process.

use canopy_group::{Aggregation, Registry, Value};
use serde::{Deserialize, Serialize};
use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap};
use std::time::Instant;

/// Registry name of [`ProcessTop`]; its parameter is a JSON [`Params`].
pub const AGGREGATION: &str = "ptop-processes";

/// What to keep.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Params {
    /// Identifies one ptop run: CPU deltas are taken against the previous sample of the same run.
    pub session: u64,
    /// How many processes each top list keeps.
    pub top: usize,
}

/// One process.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Process {
    /// The member its `stat` file is (names the host).
    pub member: u64,
    /// Process id.
    pub pid: u32,
    /// Effective user id.
    pub uid: u32,
    /// Command name (`comm`).
    pub command: String,
    /// CPU use since the previous sample, in hundredths of a percent of one CPU.
    pub cpu: u64,
    /// Resident memory in bytes.
    pub rss: u64,
}

/// Total, count, maximum and where it is: one column of a command's group.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Column {
    /// Sum over the processes.
    pub total: u64,
    /// The largest value.
    pub max: u64,
    /// The lowest-numbered member (stat file) among the processes with the largest value.
    pub max_member: u64,
}

impl Column {
    fn of(value: u64, member: u64) -> Column {
        Column { total: value, max: value, max_member: member }
    }

    fn merge(self, other: Column) -> Column {
        // Ties go to the lowest member, so the answer does not depend on the order halves meet in.
        let (max, max_member) = if (other.max, std::cmp::Reverse(other.max_member))
            > (self.max, std::cmp::Reverse(self.max_member))
        {
            (other.max, other.max_member)
        } else {
            (self.max, self.max_member)
        };
        Column { total: self.total + other.total, max, max_member }
    }
}

/// Processes with one command name (and user): how many, CPU and memory columns.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CommandGroup {
    /// Number of processes.
    pub count: u64,
    /// CPU (hundredths of a percent).
    pub cpu: Column,
    /// Resident bytes.
    pub rss: Column,
}

impl CommandGroup {
    fn of(process: &Process) -> CommandGroup {
        CommandGroup {
            count: 1,
            cpu: Column::of(process.cpu, process.member),
            rss: Column::of(process.rss, process.member),
        }
    }

    fn merge(self, other: CommandGroup) -> CommandGroup {
        CommandGroup {
            count: self.count + other.count,
            cpu: self.cpu.merge(other.cpu),
            rss: self.rss.merge(other.rss),
        }
    }
}

/// Half of a process: what one of its files said.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Half {
    /// From `stat`.
    Stat { member: u64, pid: u32, command: String, cpu: u64, rss: u64 },
    /// From `status`.
    Status { member: u64, pid: u32, uid: u32 },
}

/// The reduced processes of a subtree.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProcessSummary {
    /// Joined processes.
    pub processes: u64,
    /// CPU of all of them (hundredths of a percent).
    pub cpu: u64,
    /// Resident bytes of all of them.
    pub rss: u64,
    /// The top N by CPU (ties: member order).
    pub top_cpu: Vec<Process>,
    /// The top N by resident memory.
    pub top_rss: Vec<Process>,
    /// By command, across users.
    pub commands: BTreeMap<String, CommandGroup>,
    /// By user and command.
    pub user_commands: BTreeMap<(u32, String), CommandGroup>,
    /// Halves waiting for their other half (a process read at the edge of a subtree, or one that ended
    /// between the reads of its files).
    pub halves: Vec<Half>,
}

/// The aggregation.
pub struct ProcessTop {
    params: Params,
    page: u64,
    ticks_per_second: u64,
}

/// A process's last sample on this host: (session, pid, start time) → (CPU ticks, when).
type Samples = HashMap<(u64, u32, u64), (u64, Instant)>;

thread_local! {
    /// This host's previous samples: (session, pid, start time) → (ticks, when). Each host runs its leaves
    /// on its own thread (simulation) or process (MPI), so the state is per host.
    static PREVIOUS: RefCell<Samples> = RefCell::new(HashMap::new());
}

impl ProcessTop {
    fn stat_half(&self, member: u64, text: &str) -> Option<Half> {
        let open = text.find(" (")?;
        let close = text.rfind(')')?;
        let pid: u32 = text[..open].parse().ok()?;
        let command = text.get(open + 2..close)?.to_owned();
        let fields: Vec<&str> = text[close + 1..].split_whitespace().collect();
        let field = |n: usize| fields.get(n - 3).and_then(|f| f.parse::<u64>().ok());
        let ticks = field(14)? + field(15)?;
        let start = field(22)?;
        let rss = field(24)? * self.page;
        let now = Instant::now();
        let previous =
            PREVIOUS.with(|p| p.borrow_mut().insert((self.params.session, pid, start), (ticks, now)));
        let cpu = match previous {
            Some((before, then)) if ticks >= before => {
                let seconds = now.duration_since(then).as_secs_f64();
                let percent =
                    (ticks - before) as f64 / self.ticks_per_second as f64 / seconds.max(1e-3) * 100.0;
                (percent * 100.0).round() as u64
            }
            _ => 0,
        };
        Some(Half::Stat { member, pid, command, cpu, rss })
    }

    fn status_half(member: u64, text: &str) -> Option<Half> {
        let mut pid = None;
        let mut uid = None;
        for line in text.lines() {
            if let Some(rest) = line.strip_prefix("Pid:") {
                pid = rest.trim().parse().ok();
            } else if let Some(rest) = line.strip_prefix("Uid:") {
                uid = rest.split_whitespace().nth(1).and_then(|u| u.parse().ok());
            }
        }
        Some(Half::Status { member, pid: pid?, uid: uid? })
    }

    /// Adds a joined process to the summary, keeping the top lists short.
    fn add(&self, summary: &mut ProcessSummary, process: Process) {
        summary.processes += 1;
        summary.cpu += process.cpu;
        summary.rss += process.rss;
        let group = CommandGroup::of(&process);
        merge_into(&mut summary.commands, process.command.clone(), group.clone());
        merge_into(&mut summary.user_commands, (process.uid, process.command.clone()), group);
        summary.top_cpu.push(process.clone());
        summary.top_rss.push(process);
        self.trim(summary);
    }

    fn trim(&self, summary: &mut ProcessSummary) {
        summary.top_cpu.sort_by(|a, b| b.cpu.cmp(&a.cpu).then(a.member.cmp(&b.member)));
        summary.top_cpu.truncate(self.params.top);
        summary.top_rss.sort_by(|a, b| b.rss.cmp(&a.rss).then(a.member.cmp(&b.member)));
        summary.top_rss.truncate(self.params.top);
    }

    /// Joins the halves of processes whose `stat` and `status` are both present (they are at most two
    /// members apart: stat, statm, status).
    fn join(&self, summary: &mut ProcessSummary) {
        summary.halves.sort_by_key(|h| match h {
            Half::Stat { member, .. } | Half::Status { member, .. } => *member,
        });
        let mut waiting = Vec::new();
        let mut halves = std::mem::take(&mut summary.halves).into_iter().peekable();
        while let Some(half) = halves.next() {
            if let Half::Stat { member, pid, command, cpu, rss } = &half
                && let Some(Half::Status { member: m, pid: p, uid }) = halves.peek()
                && p == pid
                && *m <= member + 2
            {
                let process = Process {
                    member: *member,
                    pid: *pid,
                    uid: *uid,
                    command: command.clone(),
                    cpu: *cpu,
                    rss: *rss,
                };
                halves.next();
                self.add(summary, process);
                continue;
            }
            waiting.push(half);
        }
        summary.halves = waiting;
    }
}

fn merge_into<K: Ord>(map: &mut BTreeMap<K, CommandGroup>, key: K, group: CommandGroup) {
    let merged = match map.remove(&key) {
        Some(existing) => existing.merge(group),
        None => group,
    };
    map.insert(key, merged);
}

impl Aggregation for ProcessTop {
    type Partial = ProcessSummary;

    fn leaf(&self, member: u64, value: &Value) -> ProcessSummary {
        let Value::Bytes(data) = value else { return ProcessSummary::default() };
        let text = String::from_utf8_lossy(data);
        let half = if text.starts_with("Name:") {
            Self::status_half(member, &text)
        } else if text.contains(" (") {
            self.stat_half(member, &text)
        } else {
            None // statm
        };
        ProcessSummary { halves: half.into_iter().collect(), ..ProcessSummary::default() }
    }

    fn merge(&self, left: ProcessSummary, right: ProcessSummary) -> ProcessSummary {
        let mut merged = ProcessSummary {
            processes: left.processes + right.processes,
            cpu: left.cpu + right.cpu,
            rss: left.rss + right.rss,
            top_cpu: [left.top_cpu, right.top_cpu].concat(),
            top_rss: [left.top_rss, right.top_rss].concat(),
            commands: left.commands,
            user_commands: left.user_commands,
            halves: [left.halves, right.halves].concat(),
        };
        for (key, group) in right.commands {
            merge_into(&mut merged.commands, key, group);
        }
        for (key, group) in right.user_commands {
            merge_into(&mut merged.user_commands, key, group);
        }
        self.trim(&mut merged);
        self.join(&mut merged);
        merged
    }
}

impl ProcessTop {
    /// The aggregation for `params`, with this machine's page size and clock tick.
    pub fn new(params: Params) -> ProcessTop {
        // SAFETY: sysconf has no preconditions.
        let (page, ticks) = unsafe { (libc::sysconf(libc::_SC_PAGESIZE), libc::sysconf(libc::_SC_CLK_TCK)) };
        ProcessTop { params, page: page.max(1) as u64, ticks_per_second: ticks.max(1) as u64 }
    }

    /// Joins what is left after the last merge (a host with a single process never merges).
    pub fn finish(&self, mut summary: ProcessSummary) -> ProcessSummary {
        self.join(&mut summary);
        summary
    }
}

/// Registers [`ProcessTop`] (every host must).
pub fn register(registry: &mut Registry) {
    registry.register(AGGREGATION, |params: &str| {
        Ok(ProcessTop::new(serde_json::from_str(params).map_err(|e| e.to_string())?))
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stat(pid: u32, command: &str, ticks: u64, pages: u64) -> Value {
        Value::Bytes(
            format!("{pid} ({command}) S 1 1 1 0 -1 0 0 0 0 0 {ticks} 0 0 0 20 0 1 0 555 1000 {pages} 0 0\n")
                .into_bytes(),
        )
    }

    fn status(pid: u32, uid: u32) -> Value {
        Value::Bytes(format!("Name:\tx\nPid:\t{pid}\nUid:\t{uid}\t{uid}\t{uid}\t{uid}\n").into_bytes())
    }

    #[test]
    fn halves_join_in_any_tree_shape_and_groups_total_and_point_at_the_maximum() {
        let top = ProcessTop::new(Params { session: 99, top: 2 });
        let page = top.page;
        let files = [
            stat(10, "a b) c", 5, 3),
            Value::Bytes(b"1 2 3 4 5 6 7\n".to_vec()),
            status(10, 1000),
            stat(11, "sh", 5, 7),
            status(11, 0),
            stat(12, "sh", 5, 2),
            status(12, 1000),
        ];
        let leaves: Vec<ProcessSummary> =
            files.iter().enumerate().map(|(m, v)| top.leaf(m as u64, v)).collect();
        let left = leaves.iter().cloned().reduce(|a, b| top.merge(a, b)).unwrap();
        let right = leaves.iter().cloned().rev().reduce(|b, a| top.merge(a, b)).unwrap();
        assert_eq!(left, right);
        assert_eq!(left.processes, 3);
        assert!(left.halves.is_empty());
        assert_eq!(left.rss, 12 * page);
        assert_eq!(left.top_rss.iter().map(|p| p.pid).collect::<Vec<_>>(), [11, 10]);
        let sh = &left.commands["sh"];
        assert_eq!((sh.count, sh.rss.total, sh.rss.max, sh.rss.max_member), (2, 9 * page, 7 * page, 3));
        assert_eq!(left.user_commands[&(1000, "sh".to_string())].count, 1);
        assert_eq!(left.commands["a b) c"].count, 1);
    }
}
