//! `--delete`: removes what a transferred directory of the destination has and the source does not
//! — entries missing from the source, leftover temporaries of interrupted copies — except what the
//! exclude rules protect, at most `--max-delete` of them. A directory where the source has a
//! non-directory is emptied here (its contents listed as deleted) and replaced by the copy, and a
//! non-directory where the source has a directory is replaced by the copy: neither is listed as
//! deleted, as rsync does not. The root of each transfer itself always stays.

use crate::common::Mirror;
use crate::remove::{RemoveDir, Remover, Selection, Selector};
use crate::transfer::{Filter, Listing, Totals};
use canopy_engine::output::OutBuf;
use canopy_engine::{Cx, DirNode, Entry, Errno, FileKind, Op, Timestamp, WalkError};
use canopy_util::path::join_path;
use canopy_util::temp_name::is_temp_name;
use rustix::fs::{AtFlags, CWD, Timespec, Timestamps, statat, utimensat};
use serde::{Deserialize, Serialize};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// At most so many deletions (`--max-delete`), over every process of the run.
pub struct Budget {
    max: u64,
    used: AtomicU64,
    pub skipped: AtomicU64,
}

impl Budget {
    pub fn new(max: u64) -> Self {
        Budget { max, used: AtomicU64::new(0), skipped: AtomicU64::new(0) }
    }

    fn take(&self) -> bool {
        if self.used.fetch_add(1, Ordering::Relaxed) < self.max {
            return true;
        }
        self.skipped.fetch_add(1, Ordering::Relaxed);
        false
    }
}

/// The counterpart of a kept destination directory in the source.
#[derive(Default, Serialize, Deserialize)]
pub struct Counterpart {
    mirror: Mirror,
    /// The source has a non-directory here: everything inside goes.
    gone: bool,
    /// The directory's path and times before anything inside went, put back once done (see
    /// `Extraneous::keep_dir_times`). Only on the process that met the directory.
    #[serde(skip)]
    times: Option<(Vec<u8>, Timestamps)>,
}

/// Selects what one transfer's destination has in excess.
pub struct Extraneous {
    /// The source root (followed if it is a symlink, as the copy pass does).
    pub source: Vec<u8>,
    /// The destination root as given.
    pub dest: Vec<u8>,
    /// rsync's name of the root (see `RootPair::list_name`).
    pub list_name: Vec<u8>,
    pub filter: Option<Arc<Filter>>,
    pub listing: Option<Arc<Listing>>,
    pub out: Mutex<Option<OutBuf>>,
    pub totals: Arc<Totals>,
    pub budget: Option<Arc<Budget>>,
    pub dry_run: bool,
    /// `--delete-after` with times kept: the copy already gave the directories the source's
    /// times, which deleting inside them would move (rsync puts them back too).
    pub keep_dir_times: bool,
}

fn counterpart(dir: &RemoveDir<Counterpart>) -> &Mirror {
    &dir.data.mirror
}

impl Extraneous {
    /// The path of a destination entry relative to the destination root.
    fn relative<'a>(&self, dest_path: &'a [u8]) -> &'a [u8] {
        let rest = &dest_path[self.dest.len().min(dest_path.len())..];
        rest.strip_prefix(b"/").unwrap_or(rest)
    }

    /// rsync's name of a destination entry.
    fn list_name(&self, dest_path: &[u8]) -> Vec<u8> {
        let relative = self.relative(dest_path);
        match (self.list_name.is_empty(), relative.is_empty()) {
            (true, _) => relative.to_vec(),
            (false, true) => self.list_name.clone(),
            (false, false) => join_path(&self.list_name, relative),
        }
    }

    fn protected(&self, entry: &Entry<'_, RemoveDir<Counterpart>>) -> bool {
        self.filter.as_ref().is_some_and(|filter| {
            filter.excluded(&self.list_name(&entry.path()), entry.kind() == FileKind::Dir)
        })
    }

    /// What a kept directory starts with: its times to put back, when they are kept.
    fn kept(&self, entry: &Entry<'_, RemoveDir<Counterpart>>, mirror: Mirror, gone: bool) -> Counterpart {
        let times = self.keep_dir_times.then(|| entry.metadata().ok()).flatten().map(|meta| {
            let spec = |t: Timestamp| Timespec { tv_sec: t.sec, tv_nsec: t.nsec.into() };
            (entry.path(), Timestamps { last_access: spec(meta.atime), last_modification: spec(meta.mtime) })
        });
        Counterpart { mirror, gone, times }
    }

    /// Flushes what was listed.
    pub fn finish(&self) {
        if let Some(out) = self.out.lock().unwrap_or_else(|e| e.into_inner()).as_mut() {
            out.flush();
        }
    }
}

impl Selector for Extraneous {
    type Data = Counterpart;

    fn select(
        &self,
        cx: &mut Cx<'_, Remover<Self>>,
        entry: &Entry<'_, RemoveDir<Counterpart>>,
    ) -> Selection<Counterpart> {
        let Some(dir) = entry.dir() else {
            return Selection::Keep(self.kept(entry, Mirror::root(&self.source, true), false));
        };
        if self.protected(entry) {
            return Selection::Skip;
        }
        if dir.data.data.gone || is_temp_name(entry.name_cstr().to_bytes()) {
            return Selection::Remove;
        }
        let name = entry.name_cstr();
        let found = Mirror::open(dir, &counterpart)
            .and_then(|source| statat(&source, name, AtFlags::SYMLINK_NOFOLLOW));
        let source_is_dir = match found {
            Ok(st) => st.st_mode & libc::S_IFMT == libc::S_IFDIR,
            Err(Errno::NOENT) => return Selection::Remove,
            Err(errno) => {
                // Without knowing what the source has, keep the entry.
                let source = join_path(&self.source, self.relative(&entry.path()));
                cx.report(WalkError::io(source, Op::Stat, errno));
                return Selection::Skip;
            }
        };
        let source_excluded = self
            .filter
            .as_ref()
            .is_some_and(|filter| filter.excluded(&self.list_name(&entry.path()), source_is_dir));
        if source_excluded {
            // Not transferred, so missing from the source as rsync sees it.
            return Selection::Remove;
        }
        match (entry.kind() == FileKind::Dir, source_is_dir) {
            (true, true) => Selection::Keep(self.kept(entry, Mirror::default(), false)),
            // Emptied here, replaced by the copy.
            (true, false) => {
                Selection::Keep(Counterpart { mirror: Mirror::default(), gone: true, times: None })
            }
            // Replaced by the copy.
            (false, _) => Selection::Skip,
        }
    }

    fn leave(&self, data: &Counterpart) {
        data.mirror.close();
        if let Some((path, times)) = &data.times {
            // Best effort, as rsync's: a time left moved shows as `.d..t` on the next run.
            let _ = utimensat(CWD, path.as_slice(), times, AtFlags::SYMLINK_NOFOLLOW);
        }
    }

    fn lend(&self, dir: &DirNode<RemoveDir<Counterpart>>) -> Counterpart {
        Counterpart {
            mirror: Mirror::beneath(&self.source, true, dir.relative_path()),
            gone: dir.data.data.gone,
            times: None,
        }
    }

    fn spare(&self, entry: &Entry<'_, RemoveDir<Counterpart>>) -> bool {
        self.protected(entry)
    }

    fn admit(&self, _path: &[u8], _kind: FileKind) -> bool {
        self.budget.as_ref().is_none_or(|budget| budget.take())
    }

    fn removed(&self, path: &[u8], kind: FileKind) {
        self.totals.deleted(kind);
        let Some(listing) = &self.listing else { return };
        let mut out = self.out.lock().unwrap_or_else(|e| e.into_inner());
        let out = out.get_or_insert_with(|| listing.buffer());
        listing.deleted(out, &self.list_name(path), kind == FileKind::Dir);
    }

    fn dry_run(&self) -> bool {
        self.dry_run
    }
}
