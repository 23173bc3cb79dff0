//! File data: the bytes of a file, in chunks of `CHUNK` bytes keyed by file id ‖ chunk index, on the
//! server that allocated the file's id, beside its inode. Splits and renames move entries, never
//! data, so a file's data stays where it was written. The size lives in the inode and changes in
//! the same transaction as the data (a write, a truncate): reads are clipped to it, holes read as
//! zeros.

use fjall::Readable;

use super::apply::Batch;
use super::store::{Store, StoreResult};

/// Bytes per stored chunk: a small file is one chunk, one key.
pub const CHUNK: u64 = 64 * 1024;

pub fn data_key(file: u64, chunk: u64) -> [u8; 16] {
    let mut key = [0u8; 16];
    key[..8].copy_from_slice(&file.to_be_bytes());
    key[8..].copy_from_slice(&chunk.to_be_bytes());
    key
}

fn chunk_of(key: &[u8]) -> u64 {
    let mut raw = [0u8; 8];
    raw.copy_from_slice(&key[8..16]);
    u64::from_be_bytes(raw)
}

/// Bytes `offset..offset + length` of a file of `size` bytes: clipped at `size`, holes as zeros.
pub fn read(
    view: &impl Readable,
    store: &Store,
    file: u64,
    offset: u64,
    length: u64,
    size: u64,
) -> StoreResult<Vec<u8>> {
    let end = offset.saturating_add(length).min(size);
    if end <= offset {
        return Ok(Vec::new());
    }
    let mut out = vec![0u8; (end - offset) as usize];
    let range = data_key(file, offset / CHUNK)..=data_key(file, (end - 1) / CHUNK);
    for item in view.range(&store.data, range) {
        let (key, value) = item.into_inner()?;
        let start = chunk_of(&key) * CHUNK;
        // The overlap of this chunk's bytes with offset..end.
        let from = start.max(offset);
        let to = (start + value.len() as u64).min(end);
        if from < to {
            out[(from - offset) as usize..(to - offset) as usize]
                .copy_from_slice(&value[(from - start) as usize..(to - start) as usize]);
        }
    }
    Ok(out)
}

impl Batch<'_> {
    /// Stores `data` at `offset` of `file`.
    pub(super) fn write_chunks(&mut self, file: u64, offset: u64, data: &[u8]) -> StoreResult<()> {
        let end = offset + data.len() as u64;
        let mut at = offset;
        while at < end {
            let chunk = at / CHUNK;
            let start = chunk * CHUNK;
            let upto = end.min(start + CHUNK);
            let key = data_key(file, chunk);
            let mut bytes = self.tx.get(&self.store.data, key)?.map(|v| v.to_vec()).unwrap_or_default();
            let (from, to) = ((at - start) as usize, (upto - start) as usize);
            if bytes.len() < to {
                bytes.resize(to, 0);
            }
            bytes[from..to].copy_from_slice(&data[(at - offset) as usize..(upto - offset) as usize]);
            self.tx.insert(&self.store.data, key, bytes);
            at = upto;
        }
        Ok(())
    }
}

/// Drops the bytes of `file` at and beyond `size` (all of them for 0).
pub(super) fn truncate(batch: &mut Batch<'_>, file: u64, size: u64) -> StoreResult<()> {
    let first_dropped = size.div_ceil(CHUNK);
    let keys: Vec<Vec<u8>> = batch
        .tx
        .range(&batch.store.data, data_key(file, first_dropped)..=data_key(file, u64::MAX))
        .map(|item| item.key().map(|k| k.to_vec()))
        .collect::<Result<_, _>>()?;
    for key in keys {
        batch.tx.remove(&batch.store.data, key);
    }
    if !size.is_multiple_of(CHUNK) {
        let key = data_key(file, size / CHUNK);
        if let Some(bytes) = batch.tx.get(&batch.store.data, key)?
            && bytes.len() as u64 > size % CHUNK
        {
            let kept = bytes[..(size % CHUNK) as usize].to_vec();
            batch.tx.insert(&batch.store.data, key, kept);
        }
    }
    Ok(())
}

/// The ids of files with stored data, after `after` (fsck looks for data without an inode).
pub fn data_ids(view: &impl Readable, store: &Store, after: u64, limit: usize) -> StoreResult<Vec<u64>> {
    let mut ids: Vec<u64> = Vec::new();
    if after == u64::MAX {
        return Ok(ids);
    }
    let mut from = data_key(after + 1, 0);
    while ids.len() < limit {
        let Some(item) = view.range(&store.data, from..).next() else {
            break;
        };
        let (key, _) = item.into_inner()?;
        let mut raw = [0u8; 8];
        raw.copy_from_slice(&key[..8]);
        let id = u64::from_be_bytes(raw);
        ids.push(id);
        if id == u64::MAX {
            break;
        }
        from = data_key(id + 1, 0);
    }
    Ok(ids)
}
