use crate::politeness::Politeness;
use crate::sched::{SplitMode, ThreadPolicy};
use std::sync::Arc;
use std::time::Duration;

/// Which symlinks a walk follows (find's `-P`, `-H`, `-L`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Follow {
    /// `-P`: never; symlinks are reported as symlinks.
    #[default]
    Never,
    /// `-H`: only the starting points given on the command line.
    Roots,
    /// `-L`: everywhere, with loops detected by (device, inode) of the ancestors.
    Always,
}

/// A snapshot for progress displays, taken every few tens of milliseconds.
#[derive(Clone, Copy, Debug, Default)]
pub struct WalkProgress {
    pub entries: u64,
    pub dirs: u64,
    pub errors: u64,
    pub threads: usize,
    pub elapsed: Duration,
}

pub type ProgressFn = Arc<dyn Fn(&WalkProgress) + Send + Sync>;

/// How a walk runs. The defaults suit both a warm local disk and a latency-bound parallel file system.
#[derive(Clone)]
pub struct WalkOptions {
    pub threads: ThreadPolicy,
    pub split: SplitMode,
    pub follow: Follow,
    /// `-xdev`: do not descend into directories on other file systems than their root.
    pub same_file_system: bool,
    /// Entries at this depth are visited but not read into (find's `-maxdepth`).
    pub max_depth: Option<u32>,
    /// Entries per chunk when a big directory is handed out to several workers.
    pub chunk_size: usize,
    /// Enter each directory (device, inode) once, however many paths lead to it: a later path to a
    /// directory already entered is skipped silently, visit included — GNU du's way under `-L`
    /// (symlink loops end there too, unreported). Off, every path is walked, as GNU find does
    /// (and reports loops). Each process of a distributed walk keeps its own record.
    pub each_dir_once: bool,
    /// File-system calls per second and in flight, at most (`--max-rate`, `--max-in-flight`).
    pub politeness: Politeness,
    pub progress: Option<ProgressFn>,
}

impl Default for WalkOptions {
    fn default() -> Self {
        WalkOptions {
            threads: ThreadPolicy::adaptive_default(),
            split: SplitMode::default(),
            follow: Follow::Never,
            same_file_system: false,
            max_depth: None,
            chunk_size: 256,
            each_dir_once: false,
            politeness: Politeness::default(),
            progress: None,
        }
    }
}

impl std::fmt::Debug for WalkOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WalkOptions")
            .field("threads", &self.threads)
            .field("split", &self.split)
            .field("follow", &self.follow)
            .field("same_file_system", &self.same_file_system)
            .field("max_depth", &self.max_depth)
            .field("chunk_size", &self.chunk_size)
            .field("each_dir_once", &self.each_dir_once)
            .field("politeness", &self.politeness)
            .finish_non_exhaustive()
    }
}
