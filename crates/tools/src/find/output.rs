//! Where find's output goes: per-worker buffers in front of stdout and `-fprint` files, or, with
//! `--sort`, records kept until the walk ends and written in path order. Everything the actions
//! print for one entry stays together: buffers are written out only between entries. On a
//! terminal, stdout is written after every entry (GNU find's line buffering), so matches appear as
//! they are found.

use canopy_engine::output::{OutBuf, Sink};
use std::sync::{Arc, RwLock, RwLockReadGuard, RwLockWriteGuard};

/// Keeps stdout quiet while a child of `-exec` runs: writers take it shared, the child exclusively.
#[derive(Default)]
pub struct StdoutGate(RwLock<()>);

impl StdoutGate {
    pub fn shared(&self) -> RwLockReadGuard<'_, ()> {
        self.0.read().unwrap_or_else(|e| e.into_inner())
    }

    pub fn exclusive(&self) -> RwLockWriteGuard<'_, ()> {
        self.0.write().unwrap_or_else(|e| e.into_inner())
    }
}

/// How a worker's output is held and released.
pub struct OutputPolicy {
    pub sorted: bool,
    /// Write stdout after every entry (it is a terminal).
    pub line_buffered: bool,
    /// Present when the program runs commands: writes then wait for any running child.
    pub gate: Option<Arc<StdoutGate>>,
}

/// One worker's outputs, indexed like the program's outputs (0 = stdout, 1.. = files).
pub enum Outputs {
    Direct { bufs: Vec<OutBuf>, line_buffered: bool, gate: Option<Arc<StdoutGate>> },
    Sorted(Vec<Record>),
}

/// A piece of output held for `--sort`: the path it belongs to, its destination and its bytes.
#[derive(serde::Serialize, serde::Deserialize)]
pub struct Record {
    pub path: Vec<u8>,
    pub sink: usize,
    pub bytes: Vec<u8>,
}

impl Outputs {
    pub fn new(sinks: &[Arc<Sink>], policy: &OutputPolicy) -> Self {
        if policy.sorted {
            Outputs::Sorted(Vec::new())
        } else {
            Outputs::Direct {
                bufs: sinks.iter().map(|s| OutBuf::new(Arc::clone(s))).collect(),
                line_buffered: policy.line_buffered,
                gate: policy.gate.clone(),
            }
        }
    }

    /// Appends output for the entry at `path` to destination `sink`, produced by `write`.
    pub fn emit(&mut self, sink: usize, path: impl FnOnce() -> Vec<u8>, write: impl FnOnce(&mut Vec<u8>)) {
        match self {
            Outputs::Direct { bufs, .. } => write(bufs[sink].buf()),
            Outputs::Sorted(records) => {
                let mut bytes = Vec::new();
                write(&mut bytes);
                records.push(Record { path: path(), sink, bytes });
            }
        }
    }

    /// Ends one entry's output: full buffers (and, on a terminal, stdout) are written out now, each
    /// in one piece.
    pub fn end_entry(&mut self) {
        let Outputs::Direct { bufs, line_buffered, gate } = self else { return };
        let _shared = gate.as_ref().map(|g| g.shared());
        for (i, buf) in bufs.iter_mut().enumerate() {
            if i == 0 && *line_buffered {
                buf.flush();
            } else {
                buf.end_record();
            }
        }
    }

    /// Lengths of the buffers, to undo one entry's output (see [`Outputs::truncate`]).
    pub fn marks(&self) -> Vec<usize> {
        match self {
            Outputs::Direct { bufs, .. } => bufs.iter().map(|b| b.len()).collect(),
            Outputs::Sorted(records) => vec![records.len()],
        }
    }

    pub fn truncate(&mut self, marks: &[usize]) {
        match self {
            Outputs::Direct { bufs, .. } => bufs.iter_mut().zip(marks).for_each(|(b, &m)| b.truncate(m)),
            Outputs::Sorted(records) => records.truncate(marks[0]),
        }
    }

    /// Writes everything buffered and flushes the destinations.
    pub fn flush(&mut self) {
        if let Outputs::Direct { gate, .. } = self {
            let gate = gate.clone();
            let _shared = gate.as_ref().map(|g| g.shared());
            self.flush_alone();
        }
    }

    /// [`Outputs::flush`] for the holder of the exclusive gate: right before its child runs, so
    /// this entry's output and the child's come out together.
    pub fn flush_alone(&mut self) {
        if let Outputs::Direct { bufs, .. } = self {
            for buf in bufs.iter_mut() {
                buf.flush();
                let _ = buf.sink().flush(); // a failure is recorded in the sink
            }
        }
    }
}
