//! One host's side of the group layer: its name, its root, and the member files it holds open per group.

mod fileops;
mod members;

use crate::ops::{FileOp, OpenFlags};
use crate::status::{Errno, MemberStatus};
use crate::value::Value;
use canopy_nodeset::RangeSet;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::fs::File;
use std::path::PathBuf;

/// Who a host is: its name in results and the directory its group paths are resolved under.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HostConfig {
    /// The name results use for this host.
    pub name: String,
    /// Group paths are resolved under this directory (`/` on a real host, one directory per simulated host).
    pub root: PathBuf,
}

impl HostConfig {
    /// This machine: its hostname and `/`.
    pub fn local() -> HostConfig {
        let uname = rustix::system::uname();
        let name = uname.nodename().to_string_lossy().into_owned();
        HostConfig { name, root: PathBuf::from("/") }
    }
}

/// What `gopen` asks of each host.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct OpenSpec {
    pub(crate) path: String,
    pub(crate) flags: OpenFlags,
    pub(crate) mode: u32,
    /// Only these ranks open the path (all when `None`); the others join the group with no member.
    pub(crate) ranks: Option<RangeSet>,
}

/// The outcome of gopen on one host.
pub(crate) struct Opened {
    /// Paths of the files that opened, in member order.
    pub(crate) members: Vec<Vec<u8>>,
    pub(crate) failures: Vec<(Vec<u8>, Errno)>,
}

/// One member's result of an operation: its index, status and data.
pub(crate) type MemberResult = (u64, MemberStatus, Option<Value>);

struct LocalGroup {
    /// Index of the first member; set when the client commits the group.
    base: Option<u64>,
    files: Vec<File>,
    /// Each member's path on this machine (renames update it).
    paths: Vec<PathBuf>,
    /// The first failure of each member's posted operations, reported by its next acknowledged one.
    deferred: Vec<Option<Errno>>,
}

/// Whether an operation is acknowledged (its statuses go to the client) or posted (failures wait for the
/// member's next acknowledged operation).
#[derive(Copy, Clone, PartialEq, Eq)]
pub(crate) enum Delivery {
    Acknowledged,
    Posted,
}

pub(crate) struct Host {
    config: HostConfig,
    groups: HashMap<u64, LocalGroup>,
}

impl Host {
    pub(crate) fn new(config: HostConfig) -> Host {
        Host { config, groups: HashMap::new() }
    }

    pub(crate) fn name(&self) -> &str {
        &self.config.name
    }

    pub(crate) fn config(&self) -> &HostConfig {
        &self.config
    }

    /// Opens the files `spec` names on this host; they join `group` once committed.
    /// `selected` is false on a rank that `spec` leaves out: it joins with no member.
    pub(crate) fn open(&mut self, group: u64, spec: &OpenSpec, selected: bool) -> Opened {
        let (candidates, mut failures) =
            if selected { members::expand(&self.config.root, &spec.path) } else { Default::default() };
        let mut members = Vec::new();
        let mut files = Vec::new();
        let mut paths = Vec::new();
        for candidate in candidates {
            match fileops::open(&candidate.local, spec.flags, spec.mode) {
                Ok(file) => {
                    files.push(file);
                    paths.push(candidate.local);
                    members.push(candidate.shown);
                }
                Err(errno) => failures.push((candidate.shown, errno)),
            }
        }
        let deferred = vec![None; files.len()];
        self.groups.insert(group, LocalGroup { base: None, files, paths, deferred });
        Opened { members, failures }
    }

    /// Makes the opened files members `base..` of `group`, or closes them when `base` is `None` (the group
    /// failed to open, or this host was excluded from it).
    pub(crate) fn commit(&mut self, group: u64, base: Option<u64>) {
        match base {
            Some(base) => {
                if let Some(local) = self.groups.get_mut(&group) {
                    local.base = Some(base);
                }
            }
            None => {
                // Dropping closes; nobody waits for these statuses.
                self.groups.remove(&group);
            }
        }
    }

    /// Number of this host's members of `group`.
    pub(crate) fn member_count(&self, group: u64) -> u64 {
        self.groups.get(&group).map_or(0, |g| g.files.len() as u64)
    }

    /// Applies `op` to the members of `group` held here that `only` selects (all when `None`), in member
    /// order; `None` when the group is not committed on this host. A member whose posted operations failed
    /// reports that failure instead of running an acknowledged one. Close also forgets the group.
    pub(crate) fn apply(
        &mut self,
        group: u64,
        op: &FileOp,
        only: Option<&RangeSet>,
        delivery: Delivery,
    ) -> Option<Vec<MemberResult>> {
        let base = self.groups.get(&group)?.base?;
        let selected = |member: u64| only.is_none_or(|set| set.contains_value(member));
        if *op == FileOp::Close && only.is_none() {
            let local = self.groups.remove(&group)?;
            return Some(
                (base..)
                    .zip(local.files.into_iter().zip(local.deferred))
                    .map(|(member, (file, deferred))| {
                        let result = fileops::close(file);
                        (member, status(deferred.map_or(result, Err)), None)
                    })
                    .collect(),
            );
        }
        // Taken out of the map while it runs, so that Assemble can read another group's files.
        let mut local = self.groups.remove(&group)?;
        let mut results = Vec::new();
        for (position, member) in (base..).take(local.files.len()).enumerate() {
            if !selected(member) {
                continue;
            }
            if delivery == Delivery::Acknowledged
                && let Some(errno) = local.deferred[position].take()
            {
                results.push((member, MemberStatus::Failed(errno), None));
                continue;
            }
            let (result, data) = self.apply_one(&mut local, position, op);
            match (delivery, result) {
                (Delivery::Posted, Err(errno)) => {
                    local.deferred[position].get_or_insert(errno);
                }
                (Delivery::Posted, Ok(_)) => {}
                (Delivery::Acknowledged, result) => results.push((member, status(result), data)),
            }
        }
        self.groups.insert(group, local);
        Some(results)
    }

    fn apply_one(
        &self,
        local: &mut LocalGroup,
        position: usize,
        op: &FileOp,
    ) -> (Result<i64, Errno>, Option<Value>) {
        match op {
            // Closing some members only: the rest stay open.
            FileOp::Close => (Err(Errno(libc::EINVAL)), None),
            FileOp::Rename { name } => match fileops::rename_within(&local.paths[position], name) {
                Ok(path) => {
                    local.paths[position] = path;
                    (Ok(0), None)
                }
                Err(errno) => (Err(errno), None),
            },
            FileOp::Unlink => {
                (std::fs::remove_file(&local.paths[position]).map(|()| 0).map_err(|e| Errno::of(&e)), None)
            }
            FileOp::Assemble { source, pieces } => {
                let source = self.groups.get(source).and_then(|g| g.files.get(position));
                (fileops::assemble(&local.files[position], source, pieces), None)
            }
            other => fileops::apply(&mut local.files[position], other),
        }
    }
}

fn status(result: Result<i64, Errno>) -> MemberStatus {
    match result {
        Ok(v) => MemberStatus::Ok(v),
        Err(errno) => MemberStatus::Failed(errno),
    }
}
