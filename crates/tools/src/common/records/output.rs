//! The record pipeline: per-thread buffers, a bounded channel, one writer thread per file.

#[cfg(feature = "parquet")]
use super::RECORDS_VERSION;
use super::Record;
#[cfg(feature = "parquet")]
use super::arrow_rows::{ArrowRows, schema};
use super::format::RecordFormat;
use super::jsonl::append_line;
#[cfg(feature = "parquet")]
use arrow_array::RecordBatch;
use crossbeam_channel::{Receiver, Sender, bounded};
#[cfg(feature = "parquet")]
use parquet::arrow::ArrowWriter;
#[cfg(feature = "parquet")]
use parquet::basic::{Compression, ZstdLevel};
#[cfg(feature = "parquet")]
use parquet::file::metadata::KeyValue;
#[cfg(feature = "parquet")]
use parquet::file::properties::WriterProperties;
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::Path;
use std::thread::JoinHandle;

/// Rows a worker collects before handing them to the writer as one batch. Small, because a walk
/// may run 128 workers (latency-bound file systems) and each holds one partial batch; 8192 rows
/// measured no faster on 1M entries.
#[cfg(feature = "parquet")]
const BATCH_ROWS: usize = 1024;
/// JSON bytes a worker collects before handing them to the writer.
const BATCH_BYTES: usize = 128 << 10;
/// Batches in flight to the writer; when they are all taken the workers wait (back-pressure).
const CHANNEL_BATCHES: usize = 16;
/// A Parquet row group is closed at this estimated encoded size, bounding the writer's memory.
#[cfg(feature = "parquet")]
const ROW_GROUP_BYTES: usize = 128 << 20;
/// zstd level: level 3 is zstd's own default, a good speed/size balance for metadata.
#[cfg(feature = "parquet")]
const ZSTD_LEVEL: i32 = 3;

enum Batch {
    #[cfg(feature = "parquet")]
    Arrow(RecordBatch),
    Lines(Vec<u8>),
}

/// One record file being written by its own thread.
pub struct RecordOutput {
    format: RecordFormat,
    sender: Sender<Batch>,
    writer: JoinHandle<io::Result<u64>>,
}

impl RecordOutput {
    /// Creates (truncates) `path` and starts its writer thread.
    pub fn create(path: &Path, format: RecordFormat) -> io::Result<Self> {
        #[cfg(not(feature = "parquet"))]
        if format == RecordFormat::Parquet {
            return Err(without_parquet());
        }
        let file = File::create(path)?;
        let sink = match format {
            #[cfg(feature = "parquet")]
            RecordFormat::Parquet => {
                FileSink::Parquet(Box::new(ArrowWriter::try_new(file, schema(), Some(parquet_properties()))?))
            }
            _ => FileSink::Lines(BufWriter::with_capacity(1 << 20, file)),
        };
        let (sender, receiver) = bounded(CHANNEL_BATCHES);
        let writer =
            std::thread::Builder::new().name("canopy-records".into()).spawn(move || sink.drain(&receiver))?;
        Ok(RecordOutput { format, sender, writer })
    }

    pub fn format(&self) -> RecordFormat {
        self.format
    }

    /// A buffer for one worker thread. It borrows the output, so every buffer is gone (and has
    /// handed over its rows) before [`RecordOutput::finish`] can run.
    pub fn buffer(&self) -> RecordBuffer<'_> {
        let rows = match self.format {
            #[cfg(feature = "parquet")]
            RecordFormat::Parquet => Rows::Arrow(Box::new(ArrowRows::new())),
            _ => Rows::Lines(Vec::new()),
        };
        RecordBuffer { sender: &self.sender, rows }
    }

    /// Waits until everything is written and the file is complete; returns the number of records.
    pub fn finish(self) -> io::Result<u64> {
        drop(self.sender);
        self.writer.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic))
    }
}

/// A build without the `parquet` feature (the lean tree-tools build) writes JSON Lines only.
#[cfg(not(feature = "parquet"))]
fn without_parquet() -> io::Error {
    io::Error::new(
        io::ErrorKind::Unsupported,
        "this canopy was built without Parquet support (cargo feature `parquet`); name a .jsonl file",
    )
}

#[cfg(feature = "parquet")]
fn parquet_properties() -> WriterProperties {
    let level = ZstdLevel::try_new(ZSTD_LEVEL).expect("valid zstd level");
    WriterProperties::builder()
        .set_compression(Compression::ZSTD(level))
        .set_max_row_group_bytes(Some(ROW_GROUP_BYTES))
        .set_key_value_metadata(Some(vec![KeyValue::new(
            "canopy.records.version".to_string(),
            RECORDS_VERSION.to_string(),
        )]))
        .build()
}

enum Rows {
    #[cfg(feature = "parquet")]
    Arrow(Box<ArrowRows>),
    Lines(Vec<u8>),
}

/// A worker's records on their way to the writer.
pub struct RecordBuffer<'a> {
    sender: &'a Sender<Batch>,
    rows: Rows,
}

impl RecordBuffer<'_> {
    /// Adds a record; a full batch goes to the writer, waiting while the writer is behind.
    pub fn push(&mut self, record: &Record<'_>) {
        let full = match &mut self.rows {
            #[cfg(feature = "parquet")]
            Rows::Arrow(rows) => {
                rows.push(record);
                rows.rows() >= BATCH_ROWS
            }
            Rows::Lines(lines) => {
                append_line(lines, record);
                lines.len() >= BATCH_BYTES
            }
        };
        if full {
            self.flush();
        }
    }

    /// Hands the records collected so far to the writer.
    pub fn flush(&mut self) {
        let batch = match &mut self.rows {
            #[cfg(feature = "parquet")]
            Rows::Arrow(rows) if rows.rows() > 0 => Batch::Arrow(rows.take_batch()),
            Rows::Lines(lines) if !lines.is_empty() => Batch::Lines(std::mem::take(lines)),
            _ => return,
        };
        // The writer only hangs up after a write error, which `RecordOutput::finish` reports.
        let _ = self.sender.send(batch);
    }
}

impl Drop for RecordBuffer<'_> {
    fn drop(&mut self) {
        self.flush();
    }
}

enum FileSink {
    #[cfg(feature = "parquet")]
    Parquet(Box<ArrowWriter<File>>),
    Lines(BufWriter<File>),
}

impl FileSink {
    /// Writes batches until every sender is gone, then completes the file. Stops at the first
    /// error, which hangs up the channel so the workers stop sending.
    fn drain(mut self, batches: &Receiver<Batch>) -> io::Result<u64> {
        let mut records = 0;
        for batch in batches {
            records += self.write(&batch)?;
        }
        match self {
            #[cfg(feature = "parquet")]
            FileSink::Parquet(writer) => {
                writer.close()?;
            }
            FileSink::Lines(mut writer) => writer.flush()?,
        }
        Ok(records)
    }

    fn write(&mut self, batch: &Batch) -> io::Result<u64> {
        match (self, batch) {
            #[cfg(feature = "parquet")]
            (FileSink::Parquet(writer), Batch::Arrow(batch)) => {
                writer.write(batch)?;
                Ok(batch.num_rows() as u64)
            }
            (FileSink::Lines(writer), Batch::Lines(lines)) => {
                writer.write_all(lines)?;
                Ok(lines.iter().filter(|&&b| b == b'\n').count() as u64)
            }
            #[cfg(feature = "parquet")]
            _ => unreachable!("a buffer's batches match its output's format"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use canopy_engine::{FileKind, Metadata, Timestamp};

    fn meta(size: u64) -> Metadata {
        Metadata {
            mode: 0o100644,
            nlink: 1,
            uid: 1,
            gid: 2,
            size,
            blocks: size.div_ceil(512),
            blksize: 4096,
            ino: size + 100,
            dev: 7,
            rdev: 0,
            atime: Timestamp { sec: 1, nsec: 2 },
            mtime: Timestamp { sec: 3, nsec: 4 },
            ctime: Timestamp { sec: 5, nsec: 6 },
        }
    }

    /// Many threads' buffers, batches smaller and larger than a channel's worth: every record
    /// arrives exactly once.
    #[test]
    fn every_record_from_every_thread_is_written_once() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("r.jsonl");
        let output = RecordOutput::create(&path, RecordFormat::JsonLines).unwrap();
        let per_thread = 6_000u64;
        std::thread::scope(|scope| {
            for t in 0..4u64 {
                let mut buffer = output.buffer();
                scope.spawn(move || {
                    for i in 0..per_thread {
                        let name = format!("t{t}/f{i}");
                        let m = meta(t * per_thread + i);
                        buffer.push(&Record {
                            path: name.as_bytes(),
                            kind: FileKind::File,
                            meta: &m,
                            depth: 1,
                        });
                    }
                });
            }
        });
        assert_eq!(output.finish().unwrap(), 4 * per_thread);
        let text = std::fs::read_to_string(&path).unwrap();
        let mut sizes: Vec<u64> = text
            .lines()
            .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["size"].as_u64().unwrap())
            .collect();
        sizes.sort_unstable();
        assert_eq!(sizes, (0..4 * per_thread).collect::<Vec<_>>());
    }

    #[test]
    fn a_failing_file_is_reported_at_finish() {
        let output = RecordOutput::create(Path::new("/dev/full"), RecordFormat::JsonLines).unwrap();
        {
            let mut buffer = output.buffer();
            let m = meta(1);
            for _ in 0..10_000 {
                buffer.push(&Record { path: b"x", kind: FileKind::File, meta: &m, depth: 0 });
            }
        }
        assert!(output.finish().is_err());
    }
}
