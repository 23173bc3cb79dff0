//! Times that change because of something done elsewhere: a directory's mtime and ctime when an
//! entry in it changes on another server's partition, an object's ctime when it is renamed there,
//! its atime when it is read. A touch is idempotent — the later time wins — so other servers send
//! them before their own commit and this server applies them at once to an overlay that every read
//! of an object consults; the writer folds the overlay into the store with its next commit.
//!
//! Explicitly set times (utimes) win over touches from before the setting: records keep when each
//! time was set, and a set time gives way to the first later touch (older ones cannot win after
//! that, since the later time wins).

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};

use crate::proto::{Attrs, DirMeta, InodeRecord, Touch, TouchKind};

/// (object id, touch kind) -> latest time.
pub type Pending = HashMap<(u64, i32), i64>;

#[derive(Default)]
pub struct Touches {
    pending: Mutex<Pending>,
}

impl Touches {
    /// Records touches; true when the overlay was empty (the writer needs a nudge to fold them).
    pub fn add(&self, touches: &[Touch]) -> bool {
        let mut pending = self.pending.lock().unwrap_or_else(PoisonError::into_inner);
        let was_empty = pending.is_empty();
        for touch in touches {
            let latest = pending.entry((touch.id, touch.kind)).or_insert(touch.time_ns);
            *latest = (*latest).max(touch.time_ns);
        }
        was_empty && !pending.is_empty()
    }

    /// A copy of what is pending (the writer folds it).
    pub fn snapshot(&self) -> Pending {
        self.pending.lock().unwrap_or_else(PoisonError::into_inner).clone()
    }

    /// Forgets what `folded` held, unless a later touch of the same kind came meanwhile.
    pub fn folded(&self, folded: &Pending) {
        let mut pending = self.pending.lock().unwrap_or_else(PoisonError::into_inner);
        for (key, time) in folded {
            if pending.get(key) == Some(time) {
                pending.remove(key);
            }
        }
    }

    fn each(&self, id: u64, mut apply: impl FnMut(TouchKind, i64)) {
        let pending = self.pending.lock().unwrap_or_else(PoisonError::into_inner);
        if pending.is_empty() {
            return;
        }
        for kind in [TouchKind::TouchContents, TouchKind::TouchStatus, TouchKind::TouchAccess] {
            if let Some(&time) = pending.get(&(id, kind as i32)) {
                apply(kind, time);
            }
        }
    }

    /// `meta` as readers must see it: with pending touches, and its link count.
    pub fn overlay_dir(&self, meta: &mut DirMeta) {
        self.each(meta.id, |kind, time| touch_dir(meta, kind, time));
        meta.attrs.get_or_insert_default().nlink = dir_nlink(meta.subdirs);
    }

    pub fn overlay_inode(&self, id: u64, inode: &mut InodeRecord) {
        self.each(id, |kind, time| touch_inode(inode, kind, time));
    }
}

/// The most links ext4 counts on a directory; past it the count is 1 (ext4's dir_nlink), which tells
/// find and other walkers the count says nothing about subdirectories.
const DIR_LINK_MAX: u64 = 65_000;

/// A directory's link count: its entry in its parent, its own ".", and each subdirectory's "..".
pub fn dir_nlink(subdirs: u64) -> u32 {
    let links = subdirs.saturating_add(2);
    if links > DIR_LINK_MAX { 1 } else { links as u32 }
}

/// When each time was set explicitly (0: not since the last touch).
pub struct SetTimes<'a> {
    pub mtime: &'a mut i64,
    pub atime: &'a mut i64,
}

pub fn touch_dir(meta: &mut DirMeta, kind: TouchKind, time: i64) {
    let set = SetTimes { mtime: &mut meta.mtime_set_ns, atime: &mut meta.atime_set_ns };
    touch(meta.attrs.get_or_insert_default(), set, kind, time);
}

pub fn touch_inode(inode: &mut InodeRecord, kind: TouchKind, time: i64) {
    let set = SetTimes { mtime: &mut inode.mtime_set_ns, atime: &mut inode.atime_set_ns };
    touch(inode.attrs.get_or_insert_default(), set, kind, time);
}

fn touch(attrs: &mut Attrs, set: SetTimes<'_>, kind: TouchKind, time: i64) {
    match kind {
        TouchKind::TouchContents => {
            attrs.ctime_ns = attrs.ctime_ns.max(time);
            advance(&mut attrs.mtime_ns, set.mtime, time);
        }
        TouchKind::TouchStatus => attrs.ctime_ns = attrs.ctime_ns.max(time),
        TouchKind::TouchAccess => advance(&mut attrs.atime_ns, set.atime, time),
        TouchKind::TouchUnspecified => {}
    }
}

/// A time moves to `time` if that is later; a time set explicitly at `set` only for a touch after
/// the setting, which then replaces it whatever it was.
fn advance(value: &mut i64, set: &mut i64, time: i64) {
    if *set == 0 {
        *value = (*value).max(time);
    } else if time > *set {
        *value = time;
        *set = 0;
    }
}

/// Whether a read at `now` updates the access time (Linux's relatime): the file changed since it
/// was last read, or that was a day ago.
pub fn relatime_due(attrs: &Attrs, now: i64) -> bool {
    const DAY_NS: i64 = 24 * 3600 * 1_000_000_000;
    attrs.atime_ns <= attrs.mtime_ns || attrs.atime_ns <= attrs.ctime_ns || now - attrs.atime_ns >= DAY_NS
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inode(mtime: i64, ctime: i64) -> InodeRecord {
        InodeRecord {
            attrs: Some(Attrs { mtime_ns: mtime, ctime_ns: ctime, ..Attrs::default() }),
            ..InodeRecord::default()
        }
    }

    fn times(inode: &InodeRecord) -> (i64, i64, i64) {
        let attrs = inode.attrs.unwrap();
        (attrs.atime_ns, attrs.mtime_ns, attrs.ctime_ns)
    }

    #[test]
    fn the_later_touch_wins_in_any_order() {
        let mut a = inode(10, 10);
        let mut b = inode(10, 10);
        touch_inode(&mut a, TouchKind::TouchContents, 30);
        touch_inode(&mut a, TouchKind::TouchContents, 20);
        touch_inode(&mut b, TouchKind::TouchContents, 20);
        touch_inode(&mut b, TouchKind::TouchContents, 30);
        assert_eq!(times(&a), (0, 30, 30));
        assert_eq!(times(&a), times(&b));
        touch_inode(&mut a, TouchKind::TouchStatus, 40);
        assert_eq!(times(&a), (0, 30, 40), "a rename changes ctime only");
    }

    #[test]
    fn set_times_outlive_older_touches_and_give_way_to_newer_changes() {
        // utimes at 50 set mtime to 5 (the past): a touch from before the setting leaves it.
        let mut set = InodeRecord { mtime_set_ns: 50, ..inode(5, 50) };
        touch_inode(&mut set, TouchKind::TouchContents, 40);
        assert_eq!(times(&set), (0, 5, 50));
        // An entry created after the setting makes mtime the creation time, even below a future mtime.
        let mut future = InodeRecord { mtime_set_ns: 50, ..inode(1_000, 50) };
        touch_inode(&mut future, TouchKind::TouchContents, 60);
        assert_eq!(times(&future), (0, 60, 60));
        touch_inode(&mut future, TouchKind::TouchContents, 55);
        assert_eq!(times(&future), (0, 60, 60), "then the later time wins again");
    }

    #[test]
    fn the_overlay_shows_pending_touches_until_folded() {
        let touches = Touches::default();
        let touch = |id, time| Touch { id, kind: TouchKind::TouchContents as i32, time_ns: time };
        assert!(touches.add(&[touch(7, 100)]), "the first touch asks for a fold");
        assert!(!touches.add(&[touch(7, 90), touch(8, 5)]));
        let mut seen = inode(10, 10);
        touches.overlay_inode(7, &mut seen);
        assert_eq!(times(&seen), (0, 100, 100));
        let snapshot = touches.snapshot();
        touches.add(&[touch(7, 200)]);
        touches.folded(&snapshot);
        assert_eq!(touches.snapshot().len(), 1, "the newer touch of 7 stays pending");
    }

    #[test]
    fn directories_count_subdirectories_as_ext4_does() {
        assert_eq!((dir_nlink(0), dir_nlink(3), dir_nlink(64_998)), (2, 5, 65_000));
        assert_eq!(dir_nlink(64_999), 1, "past 65000 links the count is 1");
    }

    #[test]
    fn relatime_updates_after_a_change_or_a_day() {
        let attrs =
            |atime, mtime| Attrs { atime_ns: atime, mtime_ns: mtime, ctime_ns: mtime, ..Attrs::default() };
        assert!(relatime_due(&attrs(10, 20), 30));
        assert!(!relatime_due(&attrs(30, 20), 40));
        assert!(relatime_due(&attrs(30, 20), 30 + 24 * 3600 * 1_000_000_000));
    }
}
