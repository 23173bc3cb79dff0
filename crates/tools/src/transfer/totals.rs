//! The totals of a transfer: for the live progress line (files and bytes done, bytes found so far,
//! rate, ETA) and for `--stats`, rsync's summary (entries listed, created and deleted by type,
//! files and bytes transferred). Counted by every worker as it goes; under MPI the processes' totals
//! are summed on rank 0.

use canopy_engine::{FileKind, WalkProgress};
use indicatif::{HumanBytes, HumanDuration};
use serde::{Deserialize, Serialize};
use std::io::Write;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// rsync's categories in `--stats`: `reg`, `dir`, `link`, `dev`, `special`.
const KINDS: [&str; 5] = ["reg", "dir", "link", "dev", "special"];

fn kind_index(kind: FileKind) -> usize {
    match kind {
        FileKind::File | FileKind::Unknown => 0,
        FileKind::Dir => 1,
        FileKind::Symlink => 2,
        FileKind::BlockDevice | FileKind::CharDevice => 3,
        FileKind::Fifo | FileKind::Socket => 4,
    }
}

#[derive(Default)]
pub struct Totals {
    /// Source entries the transfer covered (rsync's "Number of files"), by kind.
    listed: [AtomicU64; 5],
    /// Entries made where the destination had none.
    created: [AtomicU64; 5],
    /// Entries removed (sync's `--delete`).
    deleted: [AtomicU64; 5],
    /// Regular files whose data was (or, in a dry run, would be) copied.
    transferred: AtomicU64,
    /// Sizes of the regular files and symlinks listed.
    total_size: AtomicU64,
    transferred_size: AtomicU64,
    /// Bytes actually written (none in a dry run).
    written: AtomicU64,
    /// Files an interrupted run had completed, left as they were.
    resumed: AtomicU64,
    resumed_size: AtomicU64,
    /// For the progress line: entries finished, bytes dealt with (copied or found complete), bytes
    /// of the files found so far.
    files_done: AtomicU64,
    bytes_done: AtomicU64,
    bytes_found: AtomicU64,
}

fn add(counter: &AtomicU64, n: u64) {
    counter.fetch_add(n, Ordering::Relaxed);
}

impl Totals {
    /// A source entry of `size` bytes (for symlinks, the length of the target) is part of the run.
    pub fn listed(&self, kind: FileKind, size: u64) {
        add(&self.listed[kind_index(kind)], 1);
        if matches!(kind, FileKind::File | FileKind::Symlink) {
            add(&self.total_size, size);
        }
        if kind == FileKind::File {
            add(&self.bytes_found, size);
        }
    }

    pub fn created(&self, kind: FileKind) {
        add(&self.created[kind_index(kind)], 1);
    }

    pub fn deleted(&self, kind: FileKind) {
        add(&self.deleted[kind_index(kind)], 1);
    }

    /// A regular file's data is to be copied.
    pub fn transferring(&self, size: u64) {
        add(&self.transferred, 1);
        add(&self.transferred_size, size);
    }

    /// Bytes went to the destination.
    pub fn written(&self, bytes: u64) {
        add(&self.written, bytes);
    }

    /// An entry is finished: `bytes` of data copied or found already there.
    pub fn done(&self, files: u64, bytes: u64) {
        add(&self.files_done, files);
        add(&self.bytes_done, bytes);
    }

    /// A file an interrupted run had completed was left as it was.
    pub fn resumed(&self, size: u64) {
        add(&self.resumed, 1);
        add(&self.resumed_size, size);
    }

    /// `cp: 1204 files, 3.1 GiB of 7.9 GiB, 412 MiB/s, ETA 12s, 9 errors`.
    pub fn describe(&self, tool: &str, p: &WalkProgress) -> String {
        let load = |c: &AtomicU64| c.load(Ordering::Relaxed);
        let files = load(&self.files_done);
        let done = load(&self.bytes_done);
        let found = load(&self.bytes_found).max(done);
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

    /// The counts as plain numbers, to be summed over the processes of a distributed run.
    pub fn snapshot(&self) -> TransferSummary {
        let load = |c: &AtomicU64| c.load(Ordering::Relaxed);
        let each = |a: &[AtomicU64; 5]| std::array::from_fn(|i| load(&a[i]));
        TransferSummary {
            listed: each(&self.listed),
            created: each(&self.created),
            deleted: each(&self.deleted),
            transferred: load(&self.transferred),
            total_size: load(&self.total_size),
            transferred_size: load(&self.transferred_size),
            written: load(&self.written),
            resumed: load(&self.resumed),
            resumed_size: load(&self.resumed_size),
        }
    }
}

/// [`Totals`] as numbers.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TransferSummary {
    pub listed: [u64; 5],
    pub created: [u64; 5],
    pub deleted: [u64; 5],
    pub transferred: u64,
    pub total_size: u64,
    pub transferred_size: u64,
    pub written: u64,
    pub resumed: u64,
    pub resumed_size: u64,
}

impl TransferSummary {
    pub fn sum(self, other: TransferSummary) -> TransferSummary {
        let each = |a: [u64; 5], b: [u64; 5]| std::array::from_fn(|i| a[i] + b[i]);
        TransferSummary {
            listed: each(self.listed, other.listed),
            created: each(self.created, other.created),
            deleted: each(self.deleted, other.deleted),
            transferred: self.transferred + other.transferred,
            total_size: self.total_size + other.total_size,
            transferred_size: self.transferred_size + other.transferred_size,
            written: self.written + other.written,
            resumed: self.resumed + other.resumed,
            resumed_size: self.resumed_size + other.resumed_size,
        }
    }

    pub fn deleted_total(&self) -> u64 {
        self.deleted.iter().sum()
    }

    /// rsync's `--stats` block: the lines whose meaning carries over to a local copy, with rsync's
    /// labels and number format. A local copy moves whole files, so all data is literal.
    pub fn write_stats(&self, out: &mut impl Write, numbers: Numbers) -> std::io::Result<()> {
        let n = |v: u64| numbers.format(v);
        let by_kind = |counts: &[u64; 5]| {
            let total: u64 = counts.iter().sum();
            let parts: Vec<String> = KINDS
                .iter()
                .zip(counts)
                .filter(|(_, c)| **c > 0)
                .map(|(name, c)| format!("{name}: {}", n(*c)))
                .collect();
            if parts.is_empty() { n(total) } else { format!("{} ({})", n(total), parts.join(", ")) }
        };
        writeln!(out)?;
        writeln!(out, "Number of files: {}", by_kind(&self.listed))?;
        writeln!(out, "Number of created files: {}", by_kind(&self.created))?;
        writeln!(out, "Number of deleted files: {}", by_kind(&self.deleted))?;
        writeln!(out, "Number of regular files transferred: {}", n(self.transferred))?;
        writeln!(out, "Total file size: {} bytes", n(self.total_size))?;
        writeln!(out, "Total transferred file size: {} bytes", n(self.transferred_size))?;
        writeln!(out, "Literal data: {} bytes", n(self.written))?;
        writeln!(out, "Matched data: 0 bytes")?;
        if self.resumed > 0 {
            writeln!(
                out,
                "Files an interrupted run completed, kept: {} ({} bytes)",
                n(self.resumed),
                n(self.resumed_size)
            )?;
        }
        Ok(())
    }

    /// rsync's closing lines (`-v`, `--stats`): what was sent — here the bytes written, as a local
    /// copy sends nothing else — and the total size.
    pub fn write_trailer(
        &self,
        out: &mut impl Write,
        numbers: Numbers,
        elapsed: Duration,
        dry_run: bool,
    ) -> std::io::Result<()> {
        let rate = self.written as f64 / elapsed.as_secs_f64().max(1e-3);
        writeln!(out)?;
        writeln!(
            out,
            "sent {} bytes  received 0 bytes  {} bytes/sec",
            numbers.format(self.written),
            numbers.format_rate(rate)
        )?;
        let speedup = if self.written == 0 { 0.0 } else { self.total_size as f64 / self.written as f64 };
        let dry = if dry_run { " (DRY RUN)" } else { "" };
        writeln!(out, "total size is {}  speedup is {speedup:.2}{dry}", numbers.format(self.total_size))
    }
}

/// How rsync writes numbers: digits grouped by commas, or with `-h` in units of 1000 (`1.23M`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Numbers {
    Grouped,
    Human,
}

impl Numbers {
    pub fn format(self, v: u64) -> String {
        match self {
            Numbers::Human if v >= 1000 => human(v as f64),
            _ => grouped(v),
        }
    }

    fn format_rate(self, v: f64) -> String {
        match self {
            Numbers::Human if v >= 1000.0 => human(v),
            _ => format!("{}.{:02}", grouped(v as u64), ((v.fract() * 100.0).round() as u64).min(99)),
        }
    }
}

fn grouped(v: u64) -> String {
    let digits = v.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

fn human(v: f64) -> String {
    const UNITS: &[u8] = b"KMGTPE";
    let (mut v, mut unit) = (v / 1000.0, 0);
    while v >= 1000.0 && unit + 1 < UNITS.len() {
        v /= 1000.0;
        unit += 1;
    }
    format!("{v:.2}{}", UNITS[unit] as char)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_as_rsync_writes_them() {
        assert_eq!(Numbers::Grouped.format(0), "0");
        assert_eq!(Numbers::Grouped.format(999), "999");
        assert_eq!(Numbers::Grouped.format(1_234_581), "1,234,581");
        assert_eq!(Numbers::Human.format(999), "999");
        assert_eq!(Numbers::Human.format(1_234_581), "1.23M");
        assert_eq!(Numbers::Human.format(5_000_000_000), "5.00G");
        assert_eq!(Numbers::Grouped.format_rate(2_471_178.0), "2,471,178.00");
    }

    #[test]
    fn stats_lines() {
        let summary = TransferSummary {
            listed: [6, 4, 1, 0, 1],
            created: [6, 4, 1, 0, 1],
            transferred: 6,
            total_size: 1_234_581,
            transferred_size: 1_234_580,
            written: 1_234_580,
            ..TransferSummary::default()
        };
        let mut out = Vec::new();
        summary.write_stats(&mut out, Numbers::Grouped).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(text.starts_with("\nNumber of files: 12 (reg: 6, dir: 4, link: 1, special: 1)\n"), "{text}");
        assert!(text.contains("\nNumber of deleted files: 0\n"), "{text}");
        assert!(text.contains("\nTotal transferred file size: 1,234,580 bytes\n"), "{text}");
    }
}
