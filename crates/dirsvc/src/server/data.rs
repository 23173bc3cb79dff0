//! File data: the bytes of a file, in chunks of `CHUNK` bytes keyed by file id ‖ chunk index, on the
//! server that allocated the file's id. Splits and renames move entries, never data, so a file's
//! data stays where it was written. The file's size lives in its entry (on the partition's server):
//! reads are clipped to the size the client knows, holes read as zeros, and a write first drops
//! bytes beyond the size the client last saw (left by a write whose size update never happened).

use fjall::Readable;

use super::apply::{Batch, internal};
use super::mutation::Refusal;
use super::store::{Store, StoreResult};
use crate::ids::home_server;
use crate::proto::{Attrs, EntryRecord, Kind};

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

/// One past the last stored byte of `file` (0 without data).
fn stored_length(view: &impl Readable, store: &Store, file: u64) -> StoreResult<u64> {
    match view.prefix(&store.data, file.to_be_bytes()).next_back() {
        None => Ok(0),
        Some(item) => {
            let (key, value) = item.into_inner()?;
            Ok(chunk_of(&key) * CHUNK + value.len() as u64)
        }
    }
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
    /// Writes `data` at `offset`, after dropping any stored bytes beyond `valid_size`.
    pub fn write_data(&mut self, file: u64, offset: u64, data: &[u8], valid_size: u64) -> StoreResult<()> {
        if stored_length(self.tx(), self.store(), file)? > valid_size {
            self.truncate_data(file, valid_size)?;
        }
        let end = offset + data.len() as u64;
        let mut at = offset;
        while at < end {
            let chunk = at / CHUNK;
            let start = chunk * CHUNK;
            let upto = end.min(start + CHUNK);
            let key = data_key(file, chunk);
            let mut bytes = self.tx().get(&self.store().data, key)?.map(|v| v.to_vec()).unwrap_or_default();
            let (from, to) = ((at - start) as usize, (upto - start) as usize);
            if bytes.len() < to {
                bytes.resize(to, 0);
            }
            bytes[from..to].copy_from_slice(&data[(at - offset) as usize..(upto - offset) as usize]);
            let data_keyspace = self.store().data.clone();
            self.tx_mut().insert(&data_keyspace, key, bytes);
            at = upto;
        }
        Ok(())
    }

    /// Drops the data of a regular file whose name went away, when this server holds it; the
    /// client asks the server that holds it otherwise.
    pub(super) fn drop_local_data(&mut self, entry: &EntryRecord) -> Result<(), Refusal> {
        let is_file = entry.attrs.as_ref().map(Attrs::kind) == Some(Kind::File);
        if is_file && home_server(entry.id) == self.index() {
            self.truncate_data(entry.id, 0).map_err(internal)?;
        }
        Ok(())
    }

    /// Drops the bytes at and beyond `size` (all of them for 0).
    pub fn truncate_data(&mut self, file: u64, size: u64) -> StoreResult<()> {
        let first_dropped = size.div_ceil(CHUNK);
        let keys: Vec<Vec<u8>> = self
            .tx()
            .range(&self.store().data, data_key(file, first_dropped)..=data_key(file, u64::MAX))
            .map(|item| item.key().map(|k| k.to_vec()))
            .collect::<Result<_, _>>()?;
        let data_keyspace = self.store().data.clone();
        for key in keys {
            self.tx_mut().remove(&data_keyspace, key);
        }
        if !size.is_multiple_of(CHUNK) {
            let key = data_key(file, size / CHUNK);
            if let Some(bytes) = self.tx().get(&data_keyspace, key)?
                && bytes.len() as u64 > size % CHUNK
            {
                let kept = bytes[..(size % CHUNK) as usize].to_vec();
                self.tx_mut().insert(&data_keyspace, key, kept);
            }
        }
        Ok(())
    }
}
