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

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    /// A sink whose bytes the test can read.
    #[derive(Clone, Default)]
    struct Shared(Arc<Mutex<Vec<u8>>>);

    impl std::io::Write for Shared {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(bytes);
            Ok(bytes.len())
        }

        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    fn outputs(line_buffered: bool) -> (Outputs, Shared) {
        let shared = Shared::default();
        let sink = Sink::new(Box::new(shared.clone()));
        let policy = OutputPolicy { sorted: false, line_buffered, gate: None };
        (Outputs::new(&[sink], &policy), shared)
    }

    #[test]
    fn an_entry_is_written_whole_and_only_between_entries() {
        let (mut out, written) = outputs(false);
        let long = vec![b'p'; 70_000]; // past the batch size on its own
        out.emit(0, Vec::new, |b| {
            b.extend_from_slice(&long);
            b.push(b'\n');
        });
        out.emit(0, Vec::new, |b| {
            b.extend_from_slice(&long);
            b.push(0);
        });
        assert!(written.0.lock().unwrap().is_empty(), "nothing leaves in the middle of an entry");
        out.end_entry();
        let bytes = written.0.lock().unwrap().clone();
        assert_eq!(bytes.len(), 2 * 70_001);
        assert_eq!(bytes[70_000], b'\n');
        assert_eq!(bytes[140_001], 0);
    }

    #[test]
    fn a_terminal_gets_each_entry_at_once() {
        let (mut out, written) = outputs(true);
        out.emit(0, Vec::new, |b| b.extend_from_slice(b"match\n"));
        out.end_entry();
        assert_eq!(written.0.lock().unwrap().as_slice(), b"match\n");
        let (mut out, written) = outputs(false);
        out.emit(0, Vec::new, |b| b.extend_from_slice(b"match\n"));
        out.end_entry();
        assert!(written.0.lock().unwrap().is_empty(), "elsewhere it waits for a full batch");
    }
}
