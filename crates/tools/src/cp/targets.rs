//! Where each SOURCE goes, as GNU cp decides it (`-t DIR`, `-T`, a DEST that is a directory), and
//! the rerun of an interrupted copy: a DEST (or DEST/SRC) carrying the marker of a copy of the same
//! source is resumed in place (see `transfer::marker`). Every process reads the markers first;
//! then the leader makes the new top directories, each with its marker from the start, and marks
//! the existing ones.

use super::CpArgs;
use crate::common::guard::is_within;
use crate::common::print_error;
use crate::transfer::temp::discard;
use crate::transfer::{RootPair, marker};
use canopy_engine::sys::{open_path, stat_path};
use canopy_engine::{Errno, Follow, Metadata, errno_message};
use canopy_util::path::{join_path, last_component, split_parent, without_trailing_slashes};
use canopy_util::temp_name::temp_name;
use rustix::fs::{AtFlags, Mode, RenameFlags, mkdirat, renameat, renameat_with, unlinkat};
use std::ffi::CString;

/// The copies to make and what must be done before.
pub struct Targets {
    pub pairs: Vec<RootPair>,
    /// Where hard links meet across processes: the directory copied into, else the copy itself.
    pub link_area: (Vec<u8>, bool),
    /// An operand was refused (reported): the exit status is 1.
    pub failed: bool,
    preparations: Vec<Preparation>,
}

/// A directory copy's top directory, before the copy starts.
enum Preparation {
    /// Made aside with its marker (mode 0700 while it is filled), renamed into place.
    Make { dest: Vec<u8>, marker: (Vec<u8>, (u64, u64)) },
    /// There already: marked.
    Mark { dest: Vec<u8>, follow: bool, marker: (Vec<u8>, (u64, u64)) },
}

fn show(path: &[u8]) -> String {
    String::from_utf8_lossy(path).into_owned()
}

/// The source's absolute path, for its marker.
fn absolute(path: &[u8]) -> Vec<u8> {
    use std::os::unix::ffi::{OsStrExt, OsStringExt};
    std::fs::canonicalize(std::ffi::OsStr::from_bytes(path))
        .map_or_else(|_| path.to_vec(), |p| p.into_os_string().into_vec())
}

/// The marker in the directory `dest`, if it names `source`.
fn marker_of(dest: &[u8], follow: bool, source: &[u8], meta: &Metadata) -> Option<marker::Marker> {
    let dir = open_path(dest, follow).ok()?;
    marker::read(&dir).ok().flatten().filter(|m| m.names(&absolute(source), meta))
}

impl Targets {
    /// Resolves the operands; refused ones are reported (when `report`) and left out.
    pub fn resolve(
        args: &CpArgs,
        mut paths: Vec<Vec<u8>>,
        target_directory: Option<Vec<u8>>,
        report: bool,
    ) -> Result<Targets, String> {
        let (dest, into_dir) = match target_directory {
            Some(dir) => {
                if !stat_path(&dir, true).is_ok_and(|m| m.is_dir()) {
                    return Err(format!("target directory '{}' is not a directory", show(&dir)));
                }
                (dir, true)
            }
            None => {
                if paths.len() < 2 {
                    return Err(format!("missing destination file operand after '{}'", show(&paths[0])));
                }
                let dest = paths.pop().expect("two paths or more");
                if args.no_target_directory && paths.len() > 1 {
                    return Err(format!("extra operand '{}'", show(&paths[1])));
                }
                let is_dir = stat_path(&dest, true).is_ok_and(|m| m.is_dir());
                if paths.len() > 1 && !is_dir {
                    return Err(format!("target '{}' is not a directory", show(&dest)));
                }
                (dest, is_dir && !args.no_target_directory)
            }
        };
        let follow = args.follow();
        let mut targets = Targets {
            pairs: Vec::new(),
            link_area: (dest.clone(), true),
            failed: false,
            preparations: Vec::new(),
        };
        for source in paths {
            match targets.add(args, &source, &dest, into_dir, follow) {
                Ok(()) => {}
                Err(message) => {
                    if report {
                        print_error("cp", message);
                    }
                    targets.failed = true;
                }
            }
        }
        if let (false, Some(pair)) = (into_dir, targets.pairs.first()) {
            targets.link_area = (pair.dest.clone(), pair.follow_dest);
        }
        Ok(targets)
    }

    fn add(
        &mut self,
        args: &CpArgs,
        source: &[u8],
        dest: &[u8],
        into_dir: bool,
        follow: Follow,
    ) -> Result<(), String> {
        let meta = stat_path(source, follow != Follow::Never)
            .map_err(|e| format!("cannot stat '{}': {}", show(source), errno_message(e)))?;
        if meta.is_dir() && !args.recursive() {
            return Err(format!("-r not specified; omitting directory '{}'", show(source)));
        }
        if self.pairs.iter().any(|p| p.source == source) {
            return Err(format!("warning: source '{}' specified more than once", show(source)));
        }
        let (mut copy, mut follow_dest) = match (into_dir, last_component(source)) {
            (true, b"." | b".." | b"/") => (dest.to_vec(), true),
            (true, base) => (join_path(dest, base), false),
            (false, _) => (dest.to_vec(), false),
        };
        if meta.is_dir() && into_dir && marker_of(dest, true, source, &meta).is_some() {
            // The interrupted `cp -r SRC NEW` made NEW itself: resume there, not in NEW/SRC.
            (copy, follow_dest) = (dest.to_vec(), true);
        }
        if stat_path(&copy, follow_dest).is_ok_and(|d| d.file_id() == meta.file_id()) {
            return Err(format!("'{}' and '{}' are the same file", show(source), show(&copy)));
        }
        let mut pair = RootPair::new(source.to_vec(), follow != Follow::Never, copy.clone(), follow_dest);
        if meta.is_dir() {
            let parent = if follow_dest { copy.as_slice() } else { split_parent(&copy).0 };
            if let Ok(parent) = open_path(parent, true)
                && is_within(&parent, meta.file_id()).unwrap_or(false)
            {
                return Err(format!(
                    "cannot copy a directory, '{}', into itself, '{}'",
                    show(source),
                    show(&copy)
                ));
            }
            let marker = (absolute(source), meta.file_id());
            match stat_path(&copy, follow_dest) {
                Ok(existing) if existing.is_dir() => {
                    pair.resume_since = marker_of(&copy, follow_dest, source, &meta).map(|m| m.since);
                    pair.marked = true;
                    if pair.resume_since.is_none() {
                        self.preparations.push(Preparation::Mark { dest: copy, follow: follow_dest, marker });
                    }
                }
                // A non-directory in the way is refused by the copy.
                Ok(_) => {}
                Err(_) => {
                    pair.marked = true;
                    pair.made = true;
                    self.preparations.push(Preparation::Make { dest: copy, marker });
                }
            }
        }
        self.pairs.push(pair);
        Ok(())
    }

    /// Makes and marks the top directories (on one process only).
    pub fn prepare(&self) -> Result<(), String> {
        for preparation in &self.preparations {
            match preparation {
                Preparation::Make { dest, marker } => {
                    make_marked(dest, marker).map_err(|e| {
                        format!("cannot create directory '{}': {}", show(dest), errno_message(e))
                    })?;
                }
                Preparation::Mark { dest, follow, marker } => {
                    open_path(dest, *follow)
                        .and_then(|dir| marker::write(&dir, &marker.0, marker.1))
                        .map_err(|e| {
                            format!(
                                "cannot mark '{}' as a copy in progress: {}",
                                show(dest),
                                errno_message(e)
                            )
                        })?;
                }
            }
        }
        Ok(())
    }
}

/// Makes the directory `dest` with its marker inside, so that it never exists without one: made
/// under a temporary name (or that of an interrupted attempt), marked, renamed into place.
fn make_marked(dest: &[u8], (source, id): &(Vec<u8>, (u64, u64))) -> Result<(), Errno> {
    let (parent, name) = split_parent(dest);
    let name = CString::new(without_trailing_slashes(name)).map_err(|_| Errno::INVAL)?;
    let parent = open_path(if parent.is_empty() { b"." } else { parent }, true)?;
    let temp = temp_name(&name);
    match mkdirat(&parent, &temp, Mode::from_raw_mode(0o700)) {
        Ok(()) | Err(Errno::EXIST) => {}
        Err(errno) => return Err(errno),
    }
    let made = open_path(&join_path(dest_parent_path(dest), temp.to_bytes()), false)
        .and_then(|dir| marker::write(&dir, source, *id));
    let placed =
        made.and_then(|()| match renameat_with(&parent, &temp, &parent, &name, RenameFlags::NOREPLACE) {
            Err(Errno::INVAL) => renameat(&parent, &temp, &parent, &name),
            other => other,
        });
    match placed {
        Ok(()) => Ok(()),
        Err(errno @ (Errno::EXIST | Errno::NOTEMPTY)) => {
            // Made meanwhile by someone else: leave it, mark it.
            if let Ok(dir) = open_path(&join_path(dest_parent_path(dest), temp.to_bytes()), false) {
                marker::remove(&dir);
            }
            let _ = unlinkat(&parent, &temp, AtFlags::REMOVEDIR);
            let dir = open_path(dest, true).map_err(|_| errno)?;
            marker::write(&dir, source, *id)
        }
        Err(errno) => {
            discard(&parent, &temp);
            Err(errno)
        }
    }
}

/// The parent of `dest` as a path (`.` for a bare name).
fn dest_parent_path(dest: &[u8]) -> &[u8] {
    let parent = split_parent(dest).0;
    if parent.is_empty() { b"." } else { parent }
}
