//! The check itself: from what every server holds, the problems and the repair of each. Pure, so
//! the rules are tested on made-up clusters.
//!
//! - A file's link count must equal its names plus its links in progress; an inode with neither
//!   (a count left too high by a crash) goes, unless a mount has it open.
//! - An unlinked file (count 0) that no mount has open goes (its mount died).
//! - A name whose object does not exist is removed.
//! - Data of an id without an inode is removed.
//! - A directory must have exactly one name, in the directory its parent pointer names; its
//!   subdirectory count must match its directory entries. A directory without a name (an
//!   interrupted mkdir or rmdir) is destroyed if empty.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use crate::ids::ROOT_ID;
use crate::proto::repair_request::Action;
use crate::proto::{
    Kind, LinkIntentRef, ParentChange, ScannedDir, ScannedEntry, ScannedInode, SetLinkCount, SetSubdirs,
};

/// Everything the servers hold, as scanned (each item with the server it came from).
#[derive(Clone, Debug, Default)]
pub struct Scanned {
    pub inodes: Vec<(u32, ScannedInode)>,
    pub entries: Vec<(u32, ScannedEntry)>,
    pub dirs: Vec<(u32, ScannedDir)>,
    pub data: Vec<(u32, u64)>,
    pub intents: Vec<(u32, LinkIntentRef)>,
}

/// How a problem is repaired.
#[derive(Clone, Debug, PartialEq)]
pub enum Fix {
    /// A repair on one server.
    Server(u32, Action),
    /// An empty directory without a name: its partitions and metadata object go.
    DestroyDir { dir: u64, servers: Vec<u32> },
    /// Nothing can be done safely; reported only.
    None,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Problem {
    pub what: String,
    #[serde(skip)]
    pub fix: Fix,
}

/// What the check found: totals and problems.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Findings {
    pub inodes: usize,
    pub entries: usize,
    pub directories: usize,
    /// Unlinked files a mount has open (not a problem: they go at their last close).
    pub open_unlinked: usize,
    pub problems: Vec<Problem>,
}

pub fn analyze(scanned: &Scanned) -> Findings {
    let mut findings = Findings {
        inodes: scanned.inodes.len(),
        entries: scanned.entries.len(),
        directories: scanned.dirs.len(),
        ..Findings::default()
    };
    let inodes: BTreeMap<u64, (u32, &ScannedInode)> =
        scanned.inodes.iter().map(|(s, i)| (i.id, (*s, i))).collect();
    let dirs: BTreeMap<u64, (u32, &ScannedDir)> = scanned.dirs.iter().map(|(s, d)| (d.id, (*s, d))).collect();
    let mut pending: BTreeMap<u64, u32> = BTreeMap::new();
    for (_, intent) in &scanned.intents {
        *pending.entry(intent.id).or_default() += 1;
    }
    // Names that stay after the repairs, per object.
    let mut names: BTreeMap<u64, Vec<(u32, &ScannedEntry)>> = BTreeMap::new();
    for (server, entry) in &scanned.entries {
        let exists = if entry.kind() == Kind::Directory {
            dirs.contains_key(&entry.id)
        } else {
            inodes.contains_key(&entry.id)
        };
        if exists {
            names.entry(entry.id).or_default().push((*server, entry));
        } else {
            findings.problems.push(Problem {
                what: format!(
                    "name {} in directory {:#x} leads to {:#x}, which does not exist: removed",
                    String::from_utf8_lossy(&entry.name),
                    entry.dir,
                    entry.id
                ),
                fix: Fix::Server(*server, Action::RemoveEntry(entry.clone())),
            });
        }
    }
    check_inodes(&inodes, &names, &pending, &mut findings);
    for (server, id) in &scanned.data {
        if !inodes.contains_key(id) {
            findings.problems.push(Problem {
                what: format!("data of {id:#x}, which has no inode: removed"),
                fix: Fix::Server(*server, Action::RemoveData(*id)),
            });
        }
    }
    let removed = check_dir_names(&dirs, &names, scanned, &mut findings);
    check_subdirs(&dirs, scanned, &removed, &mut findings);
    findings
}

fn check_inodes(
    inodes: &BTreeMap<u64, (u32, &ScannedInode)>,
    names: &BTreeMap<u64, Vec<(u32, &ScannedEntry)>>,
    pending: &BTreeMap<u64, u32>,
    findings: &mut Findings,
) {
    for (&id, &(server, inode)) in inodes {
        let named = names.get(&id).map_or(0, Vec::len) as u32;
        let expected = named + pending.get(&id).copied().unwrap_or(0);
        if inode.nlink == expected {
            if expected == 0 {
                if inode.open {
                    findings.open_unlinked += 1;
                } else {
                    findings.problems.push(Problem {
                        what: format!("unlinked file {id:#x} that no mount has open: removed"),
                        fix: set_count(server, id, 0, 0),
                    });
                }
            }
            continue;
        }
        let what = if expected == 0 {
            format!("file {id:#x} has a link count of {} but no name: removed", inode.nlink)
        } else {
            format!(
                "file {id:#x} has a link count of {} but {expected} names: set to {expected}",
                inode.nlink
            )
        };
        findings.problems.push(Problem { what, fix: set_count(server, id, inode.nlink, expected) });
    }
}

fn set_count(server: u32, id: u64, from: u32, to: u32) -> Fix {
    Fix::Server(server, Action::LinkCount(SetLinkCount { id, from, to }))
}

/// Directories with no name, several, or a parent pointer elsewhere. Returns the names removed.
fn check_dir_names(
    dirs: &BTreeMap<u64, (u32, &ScannedDir)>,
    names: &BTreeMap<u64, Vec<(u32, &ScannedEntry)>>,
    scanned: &Scanned,
    findings: &mut Findings,
) -> BTreeSet<(u64, Vec<u8>)> {
    let mut removed = BTreeSet::new();
    for (&id, &(server, dir)) in dirs {
        if id == ROOT_ID {
            continue;
        }
        let named = names.get(&id).map(Vec::as_slice).unwrap_or_default();
        match named {
            [] => {
                let holds = scanned.entries.iter().filter(|(_, e)| e.dir == id).count();
                findings.problems.push(if holds == 0 {
                    Problem {
                        what: format!(
                            "empty directory {id:#x} has no name (interrupted mkdir or rmdir): removed"
                        ),
                        fix: Fix::DestroyDir { dir: id, servers: dir.servers.clone() },
                    }
                } else {
                    Problem {
                        what: format!(
                            "directory {id:#x} has no name but holds {holds} entries: left as it is"
                        ),
                        fix: Fix::None,
                    }
                });
            }
            [(_, only)] if only.dir == dir.parent => {}
            [(_, only)] => findings.problems.push(Problem {
                what: format!(
                    "directory {id:#x} is in {:#x} but points to {:#x} as its parent: repointed",
                    only.dir, dir.parent
                ),
                fix: Fix::Server(server, Action::Parent(ParentChange { dir: id, parent: only.dir })),
            }),
            several => {
                // Keep the name in the directory the parent pointer names (a rename's target
                // got it), or else the first.
                let keep = several.iter().position(|(_, e)| e.dir == dir.parent).unwrap_or(0);
                if several[keep].1.dir != dir.parent {
                    findings.problems.push(Problem {
                        what: format!(
                            "directory {id:#x} points to {:#x} as its parent: repointed",
                            dir.parent
                        ),
                        fix: Fix::Server(
                            server,
                            Action::Parent(ParentChange { dir: id, parent: several[keep].1.dir }),
                        ),
                    });
                }
                for (i, (entry_server, entry)) in several.iter().enumerate() {
                    if i == keep {
                        continue;
                    }
                    removed.insert((entry.dir, entry.name.clone()));
                    findings.problems.push(Problem {
                        what: format!(
                            "directory {id:#x} has a second name {} in {:#x} (interrupted rename): removed",
                            String::from_utf8_lossy(&entry.name),
                            entry.dir
                        ),
                        fix: Fix::Server(*entry_server, Action::RemoveEntry((*entry).clone())),
                    });
                }
            }
        }
    }
    removed
}

/// Each directory's subdirectory count against its directory entries that stay.
fn check_subdirs(
    dirs: &BTreeMap<u64, (u32, &ScannedDir)>,
    scanned: &Scanned,
    removed: &BTreeSet<(u64, Vec<u8>)>,
    findings: &mut Findings,
) {
    let mut subdirs: BTreeMap<u64, u64> = BTreeMap::new();
    for (_, entry) in &scanned.entries {
        if entry.kind() == Kind::Directory
            && dirs.contains_key(&entry.id)
            && !removed.contains(&(entry.dir, entry.name.clone()))
        {
            *subdirs.entry(entry.dir).or_default() += 1;
        }
    }
    for (&id, &(server, dir)) in dirs {
        let counted = subdirs.get(&id).copied().unwrap_or(0);
        if dir.subdirs != counted {
            findings.problems.push(Problem {
                what: format!(
                    "directory {id:#x} counts {} subdirectories but has {counted}: set to {counted}",
                    dir.subdirs
                ),
                fix: Fix::Server(
                    server,
                    Action::Subdirs(SetSubdirs { dir: id, from: dir.subdirs, to: counted }),
                ),
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DIR: u64 = ROOT_ID;

    fn inode(id: u64, nlink: u32, open: bool) -> (u32, ScannedInode) {
        (0, ScannedInode { id, kind: Kind::File as i32, nlink, open })
    }

    fn entry(name: &str, dir: u64, id: u64, kind: Kind) -> (u32, ScannedEntry) {
        (1, ScannedEntry { dir, partition: 0, name: name.into(), id, kind: kind as i32 })
    }

    fn dir(id: u64, parent: u64, subdirs: u64) -> (u32, ScannedDir) {
        (0, ScannedDir { id, parent, subdirs, servers: vec![0, 1] })
    }

    fn clean() -> Scanned {
        Scanned {
            inodes: vec![inode(10, 2, false), inode(11, 1, false)],
            entries: vec![
                entry("a", DIR, 10, Kind::File),
                entry("sub", DIR, 20, Kind::Directory),
                entry("b", 20, 10, Kind::File),
                entry("c", 20, 11, Kind::File),
            ],
            dirs: vec![dir(DIR, DIR, 1), dir(20, DIR, 0)],
            data: vec![(0, 10), (0, 11)],
            intents: vec![],
        }
    }

    fn fixes(scanned: &Scanned) -> Vec<Fix> {
        analyze(scanned).problems.into_iter().map(|p| p.fix).collect()
    }

    #[test]
    fn a_consistent_cluster_has_no_problems() {
        let findings = analyze(&clean());
        assert_eq!(findings.problems, vec![]);
        assert_eq!((findings.inodes, findings.entries, findings.directories), (2, 4, 2));
    }

    #[test]
    fn link_counts_follow_the_names_and_links_in_progress() {
        let mut scanned = clean();
        scanned.inodes[0].1.nlink = 3; // a crash left one count too many
        scanned.inodes[1].1.nlink = 2;
        scanned.intents.push((0, LinkIntentRef { id: 11, intent: 4 })); // 11: one name, one link coming
        assert_eq!(fixes(&scanned), vec![set_count(0, 10, 3, 2)]);
    }

    #[test]
    fn nameless_inodes_go_unless_open() {
        let mut scanned = clean();
        scanned.inodes.push(inode(12, 1, false)); // counted, but its name is gone
        scanned.inodes.push(inode(13, 0, false)); // unlinked; its mount died
        scanned.inodes.push(inode(14, 0, true)); // unlinked, still open: fine
        assert_eq!(fixes(&scanned), vec![set_count(0, 12, 1, 0), set_count(0, 13, 0, 0)]);
        assert_eq!(analyze(&scanned).open_unlinked, 1);
    }

    #[test]
    fn dangling_names_and_orphan_data_are_removed() {
        let mut scanned = clean();
        let (server, dangling) = entry("ghost", DIR, 99, Kind::File);
        scanned.entries.push((server, dangling.clone()));
        scanned.data.push((0, 98));
        assert_eq!(
            fixes(&scanned),
            vec![Fix::Server(1, Action::RemoveEntry(dangling)), Fix::Server(0, Action::RemoveData(98))]
        );
    }

    #[test]
    fn directories_get_one_name_a_true_parent_and_a_true_count() {
        let mut scanned = clean();
        // An interrupted rename of 20 from / to /x/sub: named twice, pointing to x.
        scanned.dirs.push(dir(30, DIR, 1));
        scanned.entries.push(entry("x", DIR, 30, Kind::Directory));
        let (server, second) = entry("sub", 30, 20, Kind::Directory);
        scanned.entries.push((server, second));
        scanned.dirs[1].1.parent = 30;
        scanned.dirs[0].1.subdirs = 3; // counts sub twice, and x
        let fixes = fixes(&scanned);
        let (_, first) = entry("sub", DIR, 20, Kind::Directory);
        assert!(fixes.contains(&Fix::Server(1, Action::RemoveEntry(first))), "{fixes:?}");
        assert!(
            fixes.contains(&Fix::Server(0, Action::Subdirs(SetSubdirs { dir: DIR, from: 3, to: 1 }))),
            "{fixes:?}"
        );
        assert_eq!(fixes.len(), 2, "{fixes:?}");
    }

    #[test]
    fn a_nameless_empty_directory_is_destroyed_and_a_full_one_reported() {
        let mut scanned = clean();
        scanned.dirs.push(dir(40, DIR, 0));
        scanned.dirs.push(dir(41, DIR, 0));
        scanned.inodes.push(inode(15, 1, false));
        scanned.entries.push(entry("kept", 41, 15, Kind::File));
        assert_eq!(fixes(&scanned), vec![Fix::DestroyDir { dir: 40, servers: vec![0, 1] }, Fix::None]);
    }

    #[test]
    fn a_directory_pointing_to_the_wrong_parent_is_repointed() {
        let mut scanned = clean();
        scanned.dirs[1].1.parent = 77;
        assert_eq!(
            fixes(&scanned),
            vec![Fix::Server(0, Action::Parent(ParentChange { dir: 20, parent: DIR }))]
        );
    }
}
