//! A group file: the paper's Table 1 (gsize, gfiles, gindex, gstatus, gbindaggr) and the group versions of
//! the file operations, each returning the aggregated group status and data (Fig. 1).

use crate::aggr::{AggrError, AggrResult, AggrSpec, Agreement, Builtin, Sums};
use crate::ops::{AggrType, Bindings, FileOp, OpKind, Piece, Whence};
use crate::protocol::{OpPartial, OpenPartial, Reply, Request};
use crate::runtime::Runtime;
use crate::status::{Errno, MemberStatus};
use crate::topology::Rank;
use crate::transport::Transport;
use crate::value::Value;
use canopy_nodeset::{NodeSet, RangeSet};
use std::collections::HashMap;
use std::ffi::OsStr;
use std::fmt;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// One member of a group: a file on a host.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Member {
    /// The host's name.
    pub host: String,
    /// The path under the host's root, as an absolute path.
    pub path: PathBuf,
}

/// The hosts holding a group's members, in member order.
#[derive(Clone, Debug)]
struct HostSpan {
    rank: Rank,
    name: String,
    first: u64,
    count: u64,
}

/// A file that failed to open, or a path that named nothing, on one host.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OpenFailure {
    /// The host's name.
    pub host: String,
    /// The path as the group names it.
    pub path: PathBuf,
    /// Why it failed.
    pub errno: Errno,
}

/// What gopen found: how many members opened, what failed, which hosts did not answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OpenReport {
    /// Number of members that opened.
    pub opened: u64,
    /// Files that did not open and paths that named nothing, per host.
    pub failures: Vec<OpenFailure>,
    /// Hosts that did not answer in time, named `rank<N>` (their names were never heard).
    pub missing: NodeSet,
}

impl OpenReport {
    pub(crate) fn from_partial(partial: &OpenPartial) -> OpenReport {
        let failures = partial
            .hosts
            .iter()
            .flat_map(|host| {
                host.failures.iter().map(|(path, errno)| OpenFailure {
                    host: host.name.clone(),
                    path: PathBuf::from(OsStr::from_bytes(path)),
                    errno: *errno,
                })
            })
            .collect();
        OpenReport {
            opened: partial.member_count(),
            failures,
            missing: NodeSet::from_names(partial.missing.values().map(|r| format!("rank{r}"))),
        }
    }

    /// Failures grouped by path and error, with the set of hosts where each happened.
    pub fn grouped(&self) -> Vec<(PathBuf, Errno, NodeSet)> {
        let mut groups: Vec<(PathBuf, Errno, Vec<&str>)> = Vec::new();
        for failure in &self.failures {
            match groups.iter_mut().find(|(p, e, _)| *p == failure.path && *e == failure.errno) {
                Some((_, _, hosts)) => hosts.push(&failure.host),
                None => groups.push((failure.path.clone(), failure.errno, vec![&failure.host])),
            }
        }
        groups.into_iter().map(|(path, errno, hosts)| (path, errno, NodeSet::from_names(hosts))).collect()
    }
}

/// Members that ended an operation with the same failure.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Failure {
    /// The failure.
    pub status: MemberStatus,
    /// The members that had it.
    pub members: RangeSet,
    /// Their hosts.
    pub hosts: NodeSet,
}

/// The result of one group operation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Outcome {
    kind: OpKind,
    status: AggrResult,
    data: Option<AggrResult>,
    failures: Vec<Failure>,
    missing: NodeSet,
}

impl Outcome {
    /// The operation this is the outcome of.
    pub fn kind(&self) -> OpKind {
        self.kind
    }

    /// The group status result (the status aggregation over the members that succeeded).
    pub fn status(&self) -> &AggrResult {
        &self.status
    }

    /// The group data result, for operations that produce data.
    pub fn data(&self) -> Option<&AggrResult> {
        self.data.as_ref()
    }

    /// Members that failed, grouped by failure; members of unreachable hosts are one of these groups.
    pub fn failures(&self) -> &[Failure] {
        &self.failures
    }

    /// Hosts that did not answer, in this operation or an earlier one of the group.
    pub fn missing(&self) -> &NodeSet {
        &self.missing
    }

    /// The group status as the single number a file operation returns, for Table 2's default
    /// aggregations: total bytes (sum), 0 (zero), the common offset (equal; `None` when offsets differ).
    pub fn status_value(&self) -> Result<Option<i64>, AggrError> {
        match self.status.spec() {
            AggrSpec::Builtin(Builtin::Sum) => Ok(Some(match self.status.decode::<Sums>()? {
                Some(Sums(columns)) => {
                    columns.first().copied().flatten().and_then(|d| d.to_i64()).unwrap_or(0)
                }
                None => 0,
            })),
            AggrSpec::Builtin(Builtin::Zero) => Ok(Some(0)),
            AggrSpec::Builtin(Builtin::Equal) => Ok(match self.status.decode::<Agreement>()? {
                Some(Agreement::Same(Value::Int(v))) => Some(v),
                _ => None,
            }),
            other => Err(AggrError(format!("the status aggregation {other} is not a single number"))),
        }
    }
}

/// Why a group call failed.
#[derive(Clone, Debug)]
pub enum GroupError {
    /// gopen failed: a member failed to open or a host did not answer (default mode), or nothing opened.
    Open(OpenReport),
    /// Some members failed (the paper's `E_GROUP`); the outcome aggregates the others and names the failures.
    Members(Box<Outcome>),
    /// An aggregation could not be built or failed on some rank.
    Aggregation(AggrError),
    /// Ranks refused the request (built with another topology, or without the group).
    Refused(Vec<String>),
    /// The call does not make sense (closed group, data aggregation on an operation without data, ...).
    Usage(String),
}

impl fmt::Display for GroupError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GroupError::Open(report) => {
                write!(f, "gopen failed ({} opened", report.opened)?;
                for (path, errno, hosts) in report.grouped() {
                    write!(f, "; {hosts}:{}: {errno}", path.display())?;
                }
                if !report.missing.is_empty() {
                    write!(f, "; no answer from {}", report.missing)?;
                }
                f.write_str(")")
            }
            GroupError::Members(outcome) => {
                f.write_str("some members failed")?;
                for failure in outcome.failures() {
                    write!(f, "; {}: {}", failure.hosts, failure.status)?;
                }
                Ok(())
            }
            GroupError::Aggregation(e) => write!(f, "aggregation failed: {e}"),
            GroupError::Refused(problems) => write!(f, "request refused: {}", problems.join("; ")),
            GroupError::Usage(message) => f.write_str(message),
        }
    }
}

impl std::error::Error for GroupError {}

/// An open group of files across hosts (the paper's group file descriptor).
///
/// Members are numbered in tree order (see [`crate::ReductionTree::order`]): each host's files in name order,
/// hosts one after another. Dropping an open group closes it.
pub struct Group<'rt, T: Transport> {
    runtime: &'rt Runtime<T>,
    id: u64,
    members: Vec<Member>,
    index: HashMap<Member, u64>,
    hosts: Vec<HostSpan>,
    bindings: Bindings,
    statuses: Vec<(MemberStatus, RangeSet)>,
    /// Ranks that missed an operation: their members stay unreachable.
    lost: RangeSet,
    report: OpenReport,
    closed: bool,
}

impl<'rt, T: Transport> Group<'rt, T> {
    pub(crate) fn new(
        runtime: &'rt Runtime<T>,
        id: u64,
        partial: OpenPartial,
        report: OpenReport,
        bindings: Bindings,
    ) -> Self {
        let mut members = Vec::new();
        let mut hosts = Vec::new();
        for host in partial.hosts {
            let first = members.len() as u64;
            hosts.push(HostSpan {
                rank: host.rank,
                name: host.name.clone(),
                first,
                count: host.members.len() as u64,
            });
            members.extend(host.members.iter().map(|path| Member {
                host: host.name.clone(),
                path: PathBuf::from(OsStr::from_bytes(path)),
            }));
        }
        let index = members.iter().enumerate().map(|(i, m)| (m.clone(), i as u64)).collect();
        let statuses = if members.is_empty() {
            Vec::new()
        } else {
            vec![(MemberStatus::Ok(0), RangeSet::from_span(0, members.len() as u64 - 1))]
        };
        Group {
            runtime,
            id,
            members,
            index,
            hosts,
            bindings,
            statuses,
            lost: RangeSet::new(),
            report,
            closed: false,
        }
    }

    /// Number of members (`gsize`).
    pub fn gsize(&self) -> u64 {
        self.members.len() as u64
    }

    /// The members, by index (`gfiles`).
    pub fn gfiles(&self) -> &[Member] {
        &self.members
    }

    /// The index of a member in group results (`gindex`).
    pub fn gindex(&self, host: &str, path: impl AsRef<Path>) -> Option<u64> {
        self.index.get(&Member { host: host.to_owned(), path: path.as_ref().to_owned() }).copied()
    }

    /// Each member's status in the last operation (`gstatus`), by member index.
    pub fn gstatus(&self) -> Vec<MemberStatus> {
        let mut out = vec![MemberStatus::Unreachable; self.members.len()];
        for (status, members) in &self.statuses {
            for member in members.values() {
                out[member as usize] = *status;
            }
        }
        out
    }

    /// The statuses of the last operation as classes: each distinct status with the members that had it.
    pub fn gstatus_classes(&self) -> &[(MemberStatus, RangeSet)] {
        &self.statuses
    }

    /// What gopen found (failures are only possible with [`crate::OpenFlags::BESTEFFORT`]).
    pub fn open_report(&self) -> &OpenReport {
        &self.report
    }

    /// The hosts holding the given members.
    pub fn hosts_of(&self, members: &RangeSet) -> NodeSet {
        let mut names = Vec::new();
        for member in members.values() {
            // The last host starting at or before `member` holds it (hosts are in member order).
            let after = self.hosts.partition_point(|h| h.first <= member);
            if let Some(host) = after.checked_sub(1).map(|i| &self.hosts[i])
                && member < host.first + host.count
                && names.last() != Some(&host.name.as_str())
            {
                names.push(host.name.as_str());
            }
        }
        NodeSet::from_names(names)
    }

    /// The ranks of the hosts holding the given members (for [`Runtime::gopen_on`]).
    pub fn ranks_of(&self, members: &RangeSet) -> RangeSet {
        RangeSet::from_values(
            self.hosts
                .iter()
                .filter(|h| {
                    h.count > 0
                        && !RangeSet::from_span(h.first, h.first + h.count - 1)
                            .intersection(members)
                            .is_empty()
                })
                .map(|h| h.rank as u64),
        )
    }

    /// The members held by the hosts of `ranks`.
    pub fn members_on(&self, ranks: &RangeSet) -> RangeSet {
        let mut members = RangeSet::new();
        for host in self.hosts.iter().filter(|h| h.count > 0 && ranks.contains_value(h.rank as u64)) {
            members.insert_span(host.first, host.first + host.count - 1);
        }
        members
    }

    /// Every host that answered gopen, with its rank, in member order (hosts without a member included).
    pub fn host_ranks(&self) -> Vec<(&str, Rank)> {
        self.hosts.iter().map(|h| (h.name.as_str(), h.rank)).collect()
    }

    /// Every member, as a set.
    pub fn all_members(&self) -> RangeSet {
        match self.gsize() {
            0 => RangeSet::new(),
            n => RangeSet::from_span(0, n - 1),
        }
    }

    /// Binds an aggregation to an operation of this group (`gbindaggr`).
    pub fn gbindaggr(&mut self, op: OpKind, ty: AggrType, spec: AggrSpec) -> Result<(), GroupError> {
        self.bindings.bind(op, ty, spec).map_err(GroupError::Usage)
    }

    /// Reads up to `len` bytes from every member at its offset; data: concatenation by default.
    pub fn read(&mut self, len: u64) -> Result<Outcome, GroupError> {
        self.run(FileOp::Read { len })
    }

    /// Reads up to `len` bytes from every member at `offset`; data: concatenation by default.
    pub fn pread(&mut self, len: u64, offset: u64) -> Result<Outcome, GroupError> {
        self.run(FileOp::Pread { len, offset })
    }

    /// Writes `data` to every member at its offset.
    pub fn write(&mut self, data: &[u8]) -> Result<Outcome, GroupError> {
        self.run(FileOp::Write { data: data.to_vec() })
    }

    /// Writes `data` to every member at `offset`.
    pub fn pwrite(&mut self, data: &[u8], offset: u64) -> Result<Outcome, GroupError> {
        self.run(FileOp::Pwrite { data: data.to_vec(), offset })
    }

    /// Moves every member's offset; status: the common offset (equal) by default.
    pub fn lseek(&mut self, offset: i64, whence: Whence) -> Result<Outcome, GroupError> {
        self.run(FileOp::Lseek { offset, whence })
    }

    /// Every member's stat; data: concatenation of [`crate::FileStat`]s by default.
    pub fn fstat(&mut self) -> Result<Outcome, GroupError> {
        self.run(FileOp::Fstat)
    }

    /// Flushes every member to stable storage.
    pub fn fsync(&mut self) -> Result<Outcome, GroupError> {
        self.run(FileOp::Fsync)
    }

    /// Sets every member's length.
    pub fn ftruncate(&mut self, len: u64) -> Result<Outcome, GroupError> {
        self.run(FileOp::Ftruncate { len })
    }

    /// Closes every member.
    pub fn close(mut self) -> Result<Outcome, GroupError> {
        self.run(FileOp::Close)
    }

    /// Renames every member's file to `name` in its own directory (temp + rename: the new content
    /// appears under the real name in one step).
    pub fn rename(&mut self, name: &[u8]) -> Result<Outcome, GroupError> {
        self.run(FileOp::Rename { name: name.to_vec() })
    }

    /// Removes every member's file name; the files stay open.
    pub fn unlink(&mut self) -> Result<Outcome, GroupError> {
        self.run(FileOp::Unlink)
    }

    /// Writes `pieces` at every member's offset, copying [`Piece::Copy`] ranges from the member at the same
    /// position on the same host of `source` (rsync's reconstruction, on each host).
    pub fn assemble(&mut self, source: &Group<'_, T>, pieces: Vec<Piece>) -> Result<Outcome, GroupError> {
        self.run(self.assemble_op(source, pieces))
    }

    /// The operation [`Group::assemble`] runs, for [`Group::post`] and [`Group::run_on`].
    pub fn assemble_op(&self, source: &Group<'_, T>, pieces: Vec<Piece>) -> FileOp {
        FileOp::Assemble { source: source.id, pieces }
    }

    /// Applies `op` to the members in `members` only (a sub-group); the others keep their last status.
    pub fn run_on(&mut self, op: FileOp, members: &RangeSet) -> Result<Outcome, GroupError> {
        if op == FileOp::Close {
            return Err(GroupError::Usage("close applies to the whole group".into()));
        }
        self.execute(op, Some(members.clone()))
    }

    /// Sends `op` to every member without waiting (write-behind): the call returns at once, the hosts
    /// apply posted operations in order, and a member whose posted operation failed reports the failure
    /// in its next acknowledged operation (which it then skips). Streams data down the tree without a
    /// round trip per piece; follow with an acknowledged operation (fsync, a last write) to learn the
    /// outcome and to bound how much is in flight.
    pub fn post(&mut self, op: FileOp) -> Result<(), GroupError> {
        self.post_to(op, None)
    }

    /// [`Group::post`] to the members in `members` only.
    pub fn post_on(&mut self, op: FileOp, members: &RangeSet) -> Result<(), GroupError> {
        self.post_to(op, Some(members.clone()))
    }

    fn post_to(&mut self, op: FileOp, only: Option<RangeSet>) -> Result<(), GroupError> {
        if self.closed {
            return Err(GroupError::Usage("the group is closed".into()));
        }
        if op == FileOp::Close {
            return Err(GroupError::Usage("close is always acknowledged".into()));
        }
        self.runtime.tell(Request::Post { group: self.id, op, only });
        Ok(())
    }

    /// Applies `op` to every member (Fig. 1) and aggregates statuses and data in the tree.
    pub fn run(&mut self, op: FileOp) -> Result<Outcome, GroupError> {
        self.execute(op, None)
    }

    fn execute(&mut self, op: FileOp, only: Option<RangeSet>) -> Result<Outcome, GroupError> {
        if self.closed {
            return Err(GroupError::Usage("the group is closed".into()));
        }
        let kind = op.kind();
        self.closed = kind == OpKind::Close;
        let status_spec = self.bindings.status(kind).clone();
        let data_spec = self.bindings.data(kind).cloned();
        let request = Request::Op {
            group: self.id,
            op,
            status: status_spec.clone(),
            data: data_spec.clone(),
            only: only.clone(),
        };
        let partial = match self.runtime.ask(request) {
            Some(Reply::Done(partial)) => partial,
            _ => return Err(GroupError::Refused(vec!["the root gave no answer".into()])),
        };
        self.finish(kind, partial, status_spec, data_spec, only)
    }

    fn finish(
        &mut self,
        kind: OpKind,
        partial: OpPartial,
        status_spec: AggrSpec,
        data_spec: Option<AggrSpec>,
        only: Option<RangeSet>,
    ) -> Result<Outcome, GroupError> {
        if !partial.problems.is_empty() {
            return Err(GroupError::Refused(partial.problems));
        }
        self.lost = self.lost.union(&partial.missing);
        let lost_ranks = match &only {
            Some(members) => self.lost.intersection(&self.ranks_of(members)),
            None => self.lost.clone(),
        };
        let selected = only.unwrap_or_else(|| self.all_members());
        let mut statuses = partial.statuses.0;
        let unreachable = self.members_of_lost_hosts().intersection(&selected);
        if !unreachable.is_empty() {
            statuses.push((MemberStatus::Unreachable, unreachable));
        }
        // Members outside a sub-group keep their last status.
        for (status, members) in &self.statuses {
            let kept = members.difference(&selected);
            if kept.is_empty() {
                continue;
            }
            match statuses.iter_mut().find(|(s, _)| s == status) {
                Some((_, set)) => *set = set.union(&kept),
                None => statuses.push((*status, kept)),
            }
        }
        self.statuses = statuses;
        let status = AggrResult::new(status_spec, partial.status.map_err(GroupError::Aggregation)?);
        let data = match data_spec {
            Some(spec) => Some(AggrResult::new(spec, partial.data.map_err(GroupError::Aggregation)?)),
            None => None,
        };
        let failures: Vec<Failure> = self
            .statuses
            .iter()
            .map(|(status, members)| (status, members.intersection(&selected)))
            .filter(|(status, members)| !status.is_ok() && !members.is_empty())
            .map(|(status, members)| Failure { status: *status, hosts: self.hosts_of(&members), members })
            .collect();
        let missing = NodeSet::from_names(
            self.hosts.iter().filter(|h| lost_ranks.contains_value(h.rank as u64)).map(|h| h.name.as_str()),
        );
        let outcome = Outcome { kind, status, data, failures, missing };
        if outcome.failures.is_empty() && outcome.missing.is_empty() {
            Ok(outcome)
        } else {
            Err(GroupError::Members(Box::new(outcome)))
        }
    }

    fn members_of_lost_hosts(&self) -> RangeSet {
        let mut members = RangeSet::new();
        for host in &self.hosts {
            if host.count > 0 && self.lost.contains_value(host.rank as u64) {
                members.insert_span(host.first, host.first + host.count - 1);
            }
        }
        members
    }
}

impl<T: Transport> Drop for Group<'_, T> {
    fn drop(&mut self) {
        if !self.closed {
            // Nobody can look at the statuses of an implicit close.
            let _ = self.run(FileOp::Close);
        }
    }
}
