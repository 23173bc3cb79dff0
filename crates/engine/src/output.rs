//! Output with per-thread batching: each worker appends records to its own buffer and hands full
//! buffers to the shared sink under a lock. The write blocks when the reader is slow, which is the
//! back-pressure that keeps memory bounded on a walk of any size.
//!
//! A sink never lies about its output: the first write or flush failure is kept, with its errno,
//! for the tool to report when the run ends ([`Sink::finish`]) — GNU find's
//! `standard output: No space left on device`.

use crate::error::errno_message;
use rustix::fd::BorrowedFd;
use rustix::io::Errno;
use std::fmt;
use std::io::{self, Write};
use std::sync::{Arc, Mutex, OnceLock};

/// Bytes a worker collects before writing them out.
const BATCH: usize = 64 * 1024;

/// A shared destination (stdout or a file) that keeps its first failure.
pub struct Sink {
    out: Mutex<Box<dyn Write + Send>>,
    /// What messages call it: `standard output`, or the file's path.
    name: String,
    failure: OnceLock<WriteError>,
}

/// A write to a [`Sink`] failed: which output, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WriteError {
    pub output: String,
    /// The errno, when the failure came from a system call.
    pub errno: Option<Errno>,
    message: String,
}

impl WriteError {
    fn new(output: &str, error: &io::Error) -> Self {
        let errno = error.raw_os_error().map(Errno::from_raw_os_error);
        let message = errno.map_or_else(|| error.to_string(), errno_message);
        WriteError { output: output.to_owned(), errno, message }
    }

    /// The reader went away (EPIPE): the printing tools end quietly then, as they would by
    /// SIGPIPE.
    pub fn is_broken_pipe(&self) -> bool {
        self.errno == Some(Errno::PIPE)
    }
}

impl fmt::Display for WriteError {
    /// `standard output: Bad file descriptor`, `out.txt: No space left on device`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.output, self.message)
    }
}

impl Sink {
    /// A sink writing to `out`, called `name` in error messages.
    pub fn named(out: Box<dyn Write + Send>, name: impl Into<String>) -> Arc<Self> {
        Arc::new(Sink { out: Mutex::new(out), name: name.into(), failure: OnceLock::new() })
    }

    /// An unnamed sink (output another process prints for us).
    pub fn new(out: Box<dyn Write + Send>) -> Arc<Self> {
        Self::named(out, "output")
    }

    pub fn stdout() -> Arc<Self> {
        Self::named(Box::new(StdoutFd), "standard output")
    }

    /// Creates (truncates) `path`, as find's `-fprint` does.
    pub fn create(path: &std::path::Path) -> io::Result<Arc<Self>> {
        Ok(Self::named(Box::new(std::fs::File::create(path)?), path.to_string_lossy()))
    }

    pub fn write_all(&self, bytes: &[u8]) -> io::Result<()> {
        let mut out = self.out.lock().unwrap_or_else(|e| e.into_inner());
        out.write_all(bytes).inspect_err(|e| self.note(e))
    }

    pub fn flush(&self) -> io::Result<()> {
        let mut out = self.out.lock().unwrap_or_else(|e| e.into_inner());
        out.flush().inspect_err(|e| self.note(e))
    }

    /// Whether any write or flush failed (the tool then exits 1, like find on a write error).
    pub fn failed(&self) -> bool {
        self.failure.get().is_some()
    }

    /// Flushes, then gives the first failure of any write so far: what the tool reports at exit.
    pub fn finish(&self) -> Result<(), WriteError> {
        let _ = self.flush();
        self.failure.get().map_or(Ok(()), |e| Err(e.clone()))
    }

    fn note(&self, error: &io::Error) {
        let _ = self.failure.set(WriteError::new(&self.name, error));
    }
}

/// File descriptor 1, written directly. Rust's `io::stdout()` treats a closed stdout (EBADF) as
/// success, which would make a tool report output it never wrote.
struct StdoutFd;

impl Write for StdoutFd {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        // SAFETY: fd 1 is the process's standard output for its whole life; it is only borrowed
        // for this call.
        let fd = unsafe { BorrowedFd::borrow_raw(1) };
        rustix::io::write(fd, buf).map_err(io::Error::from)
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
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
            // A failed write is kept in the sink and reported once by the tool at exit.
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_failure_is_kept_with_its_errno_and_the_output_named() {
        let full = std::fs::OpenOptions::new().write(true).open("/dev/full").unwrap();
        let sink = Sink::named(Box::new(full), "standard output");
        assert_eq!(sink.finish(), Ok(()), "nothing written, nothing failed");
        assert!(sink.write_all(b"x").is_err());
        let error = sink.finish().unwrap_err();
        assert_eq!(error.to_string(), "standard output: No space left on device");
        assert_eq!(error.errno, Some(Errno::NOSPC));
        assert!(!error.is_broken_pipe());
    }

    #[test]
    fn a_file_sink_is_named_by_its_path() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("out.txt");
        let sink = Sink::create(&path).unwrap();
        sink.write_all(b"line\n").unwrap();
        assert_eq!(sink.finish(), Ok(()));
        assert_eq!(std::fs::read(&path).unwrap(), b"line\n");
        assert_eq!(sink.name, path.to_string_lossy());
    }
}
