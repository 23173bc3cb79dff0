//! Files split into pieces that any worker of any process may work on (a big file's chunks to copy
//! or compare). The process that opened a file keeps it here, under an id unique over the
//! processes of a walk, until its last piece is done — wherever that piece was done: a piece done
//! on another process is reported back in the data of the directory it counts toward
//! ([`PieceReports`], filled through `Cx::job_dir` and folded in by
//! `DistributedVisitor::absorb_completed`), hop by hop along the way the work went out — as one
//! count per file, whatever the number of pieces.

use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// The open files of one process.
pub struct Pieces<T> {
    /// This process's rank, the high bits of every id it hands out.
    rank: u64,
    next: AtomicU64,
    open: Mutex<HashMap<u64, Arc<Tracked<T>>>>,
}

/// A file being worked on in pieces.
pub struct Tracked<T> {
    pub id: u64,
    pub item: T,
    left: AtomicUsize,
    /// A piece failed, or (comparison) found a difference.
    flagged: AtomicBool,
}

impl<T> Tracked<T> {
    pub fn flagged(&self) -> bool {
        self.flagged.load(Ordering::Relaxed)
    }
}

/// A piece done on this process of a file opened on another.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PieceDone {
    pub id: u64,
    pub flagged: bool,
}

/// Pieces done here for files opened elsewhere, in the data of the directory they count toward:
/// per file, how many, and whether any was flagged.
#[derive(Default, Serialize, Deserialize)]
pub struct PieceReports(Mutex<HashMap<u64, Tally>>);

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
struct Tally {
    pieces: usize,
    flagged: bool,
}

impl PieceReports {
    pub fn push(&self, done: PieceDone) {
        self.push_many(done, 1);
    }

    /// `pieces` pieces of one file done here.
    pub fn push_many(&self, done: PieceDone, pieces: usize) {
        let mut tallies = self.0.lock().unwrap_or_else(|e| e.into_inner());
        let tally = tallies.entry(done.id).or_default();
        tally.pieces += pieces;
        tally.flagged |= done.flagged;
    }

    fn into_tallies(self) -> HashMap<u64, Tally> {
        self.0.into_inner().unwrap_or_else(|e| e.into_inner())
    }
}

impl<T> Pieces<T> {
    pub fn new(rank: u32) -> Self {
        Pieces { rank: u64::from(rank), next: AtomicU64::new(0), open: Mutex::default() }
    }

    /// Starts tracking `item`, to be done in `pieces` pieces.
    pub fn open(&self, item: T, pieces: usize) -> Arc<Tracked<T>> {
        let id = self.rank << 40 | self.next.fetch_add(1, Ordering::Relaxed);
        let tracked =
            Arc::new(Tracked { id, item, left: AtomicUsize::new(pieces), flagged: AtomicBool::new(false) });
        self.lock().insert(id, Arc::clone(&tracked));
        tracked
    }

    /// The file `id`, if this process opened it (and it is not finished).
    pub fn get(&self, id: u64) -> Option<Arc<Tracked<T>>> {
        self.lock().get(&id).cloned()
    }

    /// One piece of `file` is done; returns the file when it was the last, no longer tracked.
    pub fn done(&self, file: &Tracked<T>, flagged: bool) -> Option<Arc<Tracked<T>>> {
        self.done_many(file, 1, flagged)
    }

    /// `pieces` pieces of `file` are done; returns the file when they were the last.
    pub fn done_many(&self, file: &Tracked<T>, pieces: usize, flagged: bool) -> Option<Arc<Tracked<T>>> {
        if flagged {
            file.flagged.store(true, Ordering::Relaxed);
        }
        if file.left.fetch_sub(pieces, Ordering::AcqRel) != pieces {
            return None;
        }
        self.lock().remove(&file.id)
    }

    /// Folds in the reports a stand-in sent back: the files opened here whose last piece they
    /// were are returned; reports of files opened elsewhere go on into `forward`, the data of the
    /// directory here (itself a stand-in) that goes back toward their process.
    pub fn absorb(&self, reports: PieceReports, forward: &PieceReports) -> Vec<Arc<Tracked<T>>> {
        let mut finished = Vec::new();
        for (id, tally) in reports.into_tallies() {
            match self.get(id) {
                Some(file) => finished.extend(self.done_many(&file, tally.pieces, tally.flagged)),
                None => forward.push_many(PieceDone { id, flagged: tally.flagged }, tally.pieces),
            }
        }
        finished
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<u64, Arc<Tracked<T>>>> {
        self.open.lock().unwrap_or_else(|e| e.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_piece_wherever_done_finishes_the_file() {
        let here = Pieces::new(3);
        let file = here.open("f", 3);
        assert_eq!(file.id >> 40, 3, "ids name the process that opened the file");
        assert!(here.done(&file, false).is_none());
        let elsewhere = PieceReports::default();
        elsewhere.push(PieceDone { id: file.id, flagged: true });
        elsewhere.push(PieceDone { id: 7 << 40, flagged: false });
        elsewhere.push(PieceDone { id: 7 << 40, flagged: false });
        let forward = PieceReports::default();
        let finished = here.absorb(elsewhere, &forward);
        assert!(finished.is_empty(), "one piece still to do");
        let passed_on = forward.into_tallies();
        assert_eq!(passed_on.len(), 1, "not ours: passed on");
        assert_eq!(passed_on[&(7 << 40)], Tally { pieces: 2, flagged: false }, "as one count");
        let last = here.done(&file, false).expect("the last piece");
        assert!(last.flagged(), "a flagged piece flags the file");
        assert!(here.get(file.id).is_none(), "no longer tracked");
    }
}
