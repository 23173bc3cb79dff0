//! One host's side of the group layer: its name, its root, and the member files it holds open per group.

mod fileops;
mod members;

use crate::ops::{FileOp, OpenFlags};
use crate::status::{Errno, MemberStatus};
use crate::value::Value;
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

    /// Opens the files `spec` names on this host; they join `group` once committed.
    pub(crate) fn open(&mut self, group: u64, spec: &OpenSpec) -> Opened {
        let (candidates, mut failures) = members::expand(&self.config.root, &spec.path);
        let mut members = Vec::new();
        let mut files = Vec::new();
        for candidate in candidates {
            match fileops::open(&candidate.local, spec.flags, spec.mode) {
                Ok(file) => {
                    files.push(file);
                    members.push(candidate.shown);
                }
                Err(errno) => failures.push((candidate.shown, errno)),
            }
        }
        self.groups.insert(group, LocalGroup { base: None, files });
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

    /// Applies `op` to every member of `group` held here, in member order; `None` when the group is not
    /// committed on this host. Close also forgets the group.
    pub(crate) fn apply(&mut self, group: u64, op: &FileOp) -> Option<Vec<MemberResult>> {
        let base = self.groups.get(&group)?.base?;
        let status = |result: Result<i64, Errno>| match result {
            Ok(v) => MemberStatus::Ok(v),
            Err(errno) => MemberStatus::Failed(errno),
        };
        if *op == FileOp::Close {
            let local = self.groups.remove(&group)?;
            return Some(
                (base..)
                    .zip(local.files)
                    .map(|(member, file)| (member, status(fileops::close(file)), None))
                    .collect(),
            );
        }
        let local = self.groups.get_mut(&group)?;
        Some(
            (base..)
                .zip(local.files.iter_mut())
                .map(|(member, file)| {
                    let (result, data) = fileops::apply(file, op);
                    (member, status(result), data)
                })
                .collect(),
        )
    }
}
