//! Listing a directory across its partitions, complete while partitions split.
//!
//! Each partition is read in name order with a cursor (the last name returned) and an expected
//! level (it owns the hashes with `hash mod 2^level == partition`). Every page comes with the
//! partition's bitmap from the same snapshot as its entries:
//! - the level grew (the partition split since we last read it): the entries past the cursor that
//!   moved are now in the new children, so each child is queued starting from the same cursor;
//! - entries outside the expected hash space (a split copied them to a child we already read from
//!   the metadata bitmap, and the source has not deleted them yet) are skipped.
//!
//! So every entry present for the whole listing is returned exactly once; entries created or
//! removed during it may or may not appear, as POSIX allows.
//!
//! A lister is plain state (cursors, no connection), so it can be cloned: a copy taken before a
//! page reads that page again later (the FUSE mount's readdir offsets rely on that).

use std::collections::VecDeque;

use super::{Client, Listed};
use crate::error::{Error, ErrorKind, Result};
use crate::mapping::{Bitmap, name_hash, owns};
use crate::proto::{FailureKind, PartitionRef, ReadPartitionRequest};

/// Entries per page requested from a server.
const PAGE: u32 = 1024;

#[derive(Clone, Debug)]
struct Cursor {
    partition: u32,
    level: u32,
    after: Vec<u8>,
}

#[derive(Clone, Debug)]
pub struct DirLister {
    dir: u64,
    queue: Option<VecDeque<Cursor>>,
    page: u32,
}

impl DirLister {
    pub fn new(dir: u64) -> Self {
        Self { dir, queue: None, page: PAGE }
    }

    /// Smaller pages (tests use them to interleave splits with a listing).
    pub fn with_page_size(mut self, page: u32) -> Self {
        self.page = page.max(1);
        self
    }

    /// The next non-empty page of entries, or `None` when the listing is complete.
    pub async fn next_page(&mut self, client: &Client) -> Result<Option<Vec<Listed>>> {
        if self.queue.is_none() {
            let info = client.fetch_dir(self.dir).await?;
            self.queue = Some(
                info.bitmap
                    .active()
                    .map(|partition| Cursor {
                        partition,
                        level: info.bitmap.level(partition),
                        after: Vec::new(),
                    })
                    .collect(),
            );
        }
        let info = client.dir_info(self.dir).await?;
        let queue = self.queue.as_mut().expect("initialised above");
        while let Some(cursor) = queue.front_mut() {
            let server = info.servers[cursor.partition as usize];
            let request = ReadPartitionRequest {
                at: Some(PartitionRef { dir: self.dir, partition: cursor.partition }),
                after: cursor.after.clone(),
                limit: self.page,
            };
            let reply = client
                .rpc(server)?
                .read_partition(request)
                .await
                .map_err(|s| client.status_error(server, &s))?
                .into_inner();
            if let Some(failure) = reply.failure {
                return Err(if failure.kind() == FailureKind::WrongPartition {
                    Error::new(
                        ErrorKind::Protocol,
                        format!("partition {} is not active: {}", cursor.partition, failure.message),
                    )
                } else {
                    Error::from_failure(&failure)
                });
            }
            let bitmap = Bitmap::from_bytes(info.bitmap.partitions(), &reply.bitmap)
                .map_err(|e| Error::new(ErrorKind::Protocol, format!("page bitmap: {e}")))?;
            let level = bitmap.level(cursor.partition);
            let mut children = Vec::new();
            for split_level in cursor.level..level {
                children.push(Cursor {
                    partition: cursor.partition + (1 << split_level),
                    level: split_level + 1,
                    after: cursor.after.clone(),
                });
            }
            cursor.level = cursor.level.max(level);
            if let Some(last) = reply.entries.last() {
                cursor.after = last.name.clone();
            }
            let (partition, expected) = (cursor.partition, cursor.level);
            if !reply.more {
                queue.pop_front();
            }
            queue.extend(children);
            let page = reply
                .entries
                .iter()
                .filter(|entry| owns(partition, expected, name_hash(&entry.name)))
                .map(Listed::from_proto)
                .collect::<Result<Vec<_>>>()?;
            if !page.is_empty() {
                return Ok(Some(page));
            }
        }
        Ok(None)
    }
}
