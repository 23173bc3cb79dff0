//! Files split into pieces that any worker of any process may work on (a big file's chunks to copy
//! or compare). The process that opened a file keeps it here, under an id unique over the
//! processes of a walk, until its last piece is done — wherever that piece was done: a piece done
//! on another process is reported back in the data of the directory it counts toward
//! ([`PieceReports`], filled through `Cx::job_dir` and folded in by `Visitor::absorb_completed`),
//! hop by hop along the way the work went out.

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

/// Pieces done here for files opened elsewhere, in the data of the directory they count toward.
#[derive(Default, Serialize, Deserialize)]
pub struct PieceReports(Mutex<Vec<PieceDone>>);

impl PieceReports {
    pub fn push(&self, done: PieceDone) {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).push(done);
    }

    pub fn into_inner(self) -> Vec<PieceDone> {
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
        if flagged {
            file.flagged.store(true, Ordering::Relaxed);
        }
        if file.left.fetch_sub(1, Ordering::AcqRel) != 1 {
            return None;
        }
        self.lock().remove(&file.id)
    }

    /// Folds in the reports a stand-in sent back: the files opened here whose last piece they
    /// were are returned; reports of files opened elsewhere go on into `forward`, the data of the
    /// directory here (itself a stand-in) that goes back toward their process.
    pub fn absorb(&self, reports: PieceReports, forward: &PieceReports) -> Vec<Arc<Tracked<T>>> {
        let mut finished = Vec::new();
        for report in reports.into_inner() {
            match self.get(report.id) {
                Some(file) => finished.extend(self.done(&file, report.flagged)),
                None => forward.push(report),
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
        let forward = PieceReports::default();
        let finished = here.absorb(elsewhere, &forward);
        assert!(finished.is_empty(), "one piece still to do");
        assert_eq!(forward.into_inner(), [PieceDone { id: 7 << 40, flagged: false }], "not ours: passed on");
        let last = here.done(&file, false).expect("the last piece");
        assert!(last.flagged(), "a flagged piece flags the file");
        assert!(here.get(file.id).is_none(), "no longer tracked");
    }
}
