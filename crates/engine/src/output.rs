//! Output with per-thread batching: each worker appends records to its own buffer and hands full
//! buffers to the shared sink under a lock. The write blocks when the reader is slow, which is the
//! back-pressure that keeps memory bounded on a walk of any size.

use std::io::{self, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

/// Bytes a worker collects before writing them out.
const BATCH: usize = 64 * 1024;

/// A shared destination (stdout or a file) that records whether any write failed.
pub struct Sink {
    out: Mutex<Box<dyn Write + Send>>,
    failed: AtomicBool,
}

impl Sink {
    pub fn new(out: Box<dyn Write + Send>) -> Arc<Self> {
        Arc::new(Sink { out: Mutex::new(out), failed: AtomicBool::new(false) })
    }

    pub fn stdout() -> Arc<Self> {
        Self::new(Box::new(io::stdout()))
    }

    /// Creates (truncates) `path`, as find's `-fprint` does.
    pub fn create(path: &std::path::Path) -> io::Result<Arc<Self>> {
        Ok(Self::new(Box::new(std::fs::File::create(path)?)))
    }

    pub fn write_all(&self, bytes: &[u8]) -> io::Result<()> {
        let mut out = self.out.lock().unwrap_or_else(|e| e.into_inner());
        out.write_all(bytes).inspect_err(|_| self.failed.store(true, Ordering::Relaxed))
    }

    pub fn flush(&self) -> io::Result<()> {
        let mut out = self.out.lock().unwrap_or_else(|e| e.into_inner());
        out.flush().inspect_err(|_| self.failed.store(true, Ordering::Relaxed))
    }

    /// Whether any write or flush failed (the tool then exits 1, like find on a write error).
    pub fn failed(&self) -> bool {
        self.failed.load(Ordering::Relaxed)
    }
}

/// One worker's buffer in front of a [`Sink`].
pub struct OutBuf {
    sink: Arc<Sink>,
    buf: Vec<u8>,
}

impl OutBuf {
    pub fn new(sink: Arc<Sink>) -> Self {
        OutBuf { sink, buf: Vec::with_capacity(BATCH + 4096) }
    }

    /// The buffer to append a record to; call [`OutBuf::end_record`] after each record.
    pub fn buf(&mut self) -> &mut Vec<u8> {
        &mut self.buf
    }

    /// Writes the batch out once it is full. Records are never split across batches.
    pub fn end_record(&mut self) {
        if self.buf.len() >= BATCH {
            self.flush();
        }
    }

    pub fn flush(&mut self) {
        if !self.buf.is_empty() {
            // A failed write is recorded in the sink and reported once by the tool at exit.
            let _ = self.sink.write_all(&self.buf);
            self.buf.clear();
        }
    }

    pub fn sink(&self) -> &Arc<Sink> {
        &self.sink
    }

    /// Bytes buffered and not yet written.
    pub fn len(&self) -> usize {
        self.buf.len()
    }

    pub fn is_empty(&self) -> bool {
        self.buf.is_empty()
    }

    /// Drops buffered bytes past `len` (output that must not appear after all).
    pub fn truncate(&mut self, len: usize) {
        self.buf.truncate(len);
    }
}

impl Drop for OutBuf {
    fn drop(&mut self) {
        self.flush();
    }
}
