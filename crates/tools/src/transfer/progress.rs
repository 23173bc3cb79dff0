//! Live totals for the progress line: files and bytes done, bytes found so far, rate and ETA. The
//! walk and the copy overlap, so the total grows while the walk goes on and the ETA is for what has
//! been found so far.

use canopy_engine::WalkProgress;
use indicatif::{HumanBytes, HumanDuration};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

#[derive(Default)]
pub struct Counters {
    /// Entries copied or created.
    files: AtomicU64,
    /// Bytes of files dealt with (copied or found complete).
    bytes_done: AtomicU64,
    /// Bytes of the files found so far.
    bytes_found: AtomicU64,
}

impl Counters {
    pub fn found(&self, bytes: u64) {
        self.bytes_found.fetch_add(bytes, Ordering::Relaxed);
    }

    pub fn copied(&self, files: u64, bytes: u64) {
        self.files.fetch_add(files, Ordering::Relaxed);
        self.bytes_done.fetch_add(bytes, Ordering::Relaxed);
    }

    /// `cp: 1204 files, 3.1 GiB of 7.9 GiB, 412 MiB/s, ETA 12s, 9 errors`.
    pub fn describe(&self, tool: &str, p: &WalkProgress) -> String {
        let files = self.files.load(Ordering::Relaxed);
        let done = self.bytes_done.load(Ordering::Relaxed);
        let found = self.bytes_found.load(Ordering::Relaxed).max(done);
        let secs = p.elapsed.as_secs_f64().max(1e-3);
        let rate = done as f64 / secs;
        let eta = if rate > 0.0 {
            format!(", ETA {}", HumanDuration(Duration::from_secs_f64((found - done) as f64 / rate)))
        } else {
            String::new()
        };
        format!(
            "{tool}: {files} files, {} of {}, {}/s{eta}, {} errors",
            HumanBytes(done),
            HumanBytes(found),
            HumanBytes(rate as u64),
            p.errors
        )
    }
}
