//! Records as Arrow columns, built on the worker thread that visits the entries.

use super::path_text::split;
use super::{Record, timestamp_ns};
use arrow_array::builder::{
    BinaryBuilder, StringBuilder, TimestampNanosecondBuilder, UInt32Builder, UInt64Builder,
};
use arrow_array::{ArrayRef, RecordBatch};
use arrow_schema::{DataType, Field, Schema, SchemaRef, TimeUnit};
use std::sync::{Arc, LazyLock};

const UTC: &str = "UTC";

static SCHEMA: LazyLock<SchemaRef> = LazyLock::new(|| {
    let time = || DataType::Timestamp(TimeUnit::Nanosecond, Some(UTC.into()));
    Arc::new(Schema::new(vec![
        Field::new("path", DataType::Utf8, false),
        Field::new("path_bytes", DataType::Binary, true),
        Field::new("type", DataType::Utf8, false),
        Field::new("size", DataType::UInt64, false),
        Field::new("blocks", DataType::UInt64, false),
        Field::new("mode", DataType::UInt32, false),
        Field::new("uid", DataType::UInt32, false),
        Field::new("gid", DataType::UInt32, false),
        Field::new("atime", time(), false),
        Field::new("mtime", time(), false),
        Field::new("ctime", time(), false),
        Field::new("inode", DataType::UInt64, false),
        Field::new("nlink", DataType::UInt64, false),
        Field::new("dev", DataType::UInt64, false),
        Field::new("depth", DataType::UInt32, false),
    ]))
});

/// The Arrow schema of the records (see the module documentation for the columns).
pub(super) fn schema() -> SchemaRef {
    Arc::clone(&SCHEMA)
}

/// Column builders for one batch of records.
pub(super) struct ArrowRows {
    path: StringBuilder,
    path_bytes: BinaryBuilder,
    kind: StringBuilder,
    size: UInt64Builder,
    blocks: UInt64Builder,
    mode: UInt32Builder,
    uid: UInt32Builder,
    gid: UInt32Builder,
    atime: TimestampNanosecondBuilder,
    mtime: TimestampNanosecondBuilder,
    ctime: TimestampNanosecondBuilder,
    inode: UInt64Builder,
    nlink: UInt64Builder,
    dev: UInt64Builder,
    depth: UInt32Builder,
    rows: usize,
}

impl ArrowRows {
    pub(super) fn new() -> Self {
        let time = || TimestampNanosecondBuilder::new().with_timezone(UTC);
        ArrowRows {
            path: StringBuilder::new(),
            path_bytes: BinaryBuilder::new(),
            kind: StringBuilder::new(),
            size: UInt64Builder::new(),
            blocks: UInt64Builder::new(),
            mode: UInt32Builder::new(),
            uid: UInt32Builder::new(),
            gid: UInt32Builder::new(),
            atime: time(),
            mtime: time(),
            ctime: time(),
            inode: UInt64Builder::new(),
            nlink: UInt64Builder::new(),
            dev: UInt64Builder::new(),
            depth: UInt32Builder::new(),
            rows: 0,
        }
    }

    pub(super) fn push(&mut self, record: &Record<'_>) {
        let meta = record.meta;
        let (text, raw) = split(record.path);
        self.path.append_value(text);
        self.path_bytes.append_option(raw);
        self.kind.append_value(record.kind.name());
        self.size.append_value(meta.size);
        self.blocks.append_value(meta.blocks);
        self.mode.append_value(meta.mode);
        self.uid.append_value(meta.uid);
        self.gid.append_value(meta.gid);
        self.atime.append_value(timestamp_ns(meta.atime));
        self.mtime.append_value(timestamp_ns(meta.mtime));
        self.ctime.append_value(timestamp_ns(meta.ctime));
        self.inode.append_value(meta.ino);
        self.nlink.append_value(meta.nlink);
        self.dev.append_value(meta.dev);
        self.depth.append_value(record.depth);
        self.rows += 1;
    }

    pub(super) fn rows(&self) -> usize {
        self.rows
    }

    /// The rows so far as one batch; the builders start over empty.
    pub(super) fn take_batch(&mut self) -> RecordBatch {
        let columns: Vec<ArrayRef> = vec![
            Arc::new(self.path.finish()),
            Arc::new(self.path_bytes.finish()),
            Arc::new(self.kind.finish()),
            Arc::new(self.size.finish()),
            Arc::new(self.blocks.finish()),
            Arc::new(self.mode.finish()),
            Arc::new(self.uid.finish()),
            Arc::new(self.gid.finish()),
            Arc::new(self.atime.finish()),
            Arc::new(self.mtime.finish()),
            Arc::new(self.ctime.finish()),
            Arc::new(self.inode.finish()),
            Arc::new(self.nlink.finish()),
            Arc::new(self.dev.finish()),
            Arc::new(self.depth.finish()),
        ];
        self.rows = 0;
        RecordBatch::try_new(schema(), columns).expect("builders follow the schema")
    }
}
