//! A big file's chunks, generated lazily: the file is opened with one job covering all of it, and
//! each job schedules the job for the rest before it copies its own chunk. At any moment one job
//! per file waits in the queues (plus those running, at most one per worker), so scheduling costs
//! the same memory for a file of any size and any `--chunk-size` — yet idle workers, on any
//! process, find the next chunk at once and copy it beside the others.
//!
//! The process that opened the file counts its chunks down ([`crate::common::pieces`]); chunks
//! copied on another process come back as counts with their directory's data. Once a chunk failed
//! (the disk is full, say), the file's remaining chunks are counted off without being copied, and
//! the failure is reported once per process, not once per chunk.

use super::Transfer;
use super::dest::DestDir;
use super::files::{FileChunk, InFlight, chunk_group, reopen};
use super::visitor::{CopyJob, TransferState};
use crate::common::pieces::{PieceDone, Tracked};
use canopy_engine::{Cx, DirNode};
use std::sync::Arc;
use std::sync::atomic::Ordering;

/// What the chunks of a file share besides its roots and path.
pub(super) struct FileChunkSpan {
    pub temp_id: (u64, u64),
    pub noatime: bool,
    pub sparse: bool,
    pub size: u64,
}

impl Transfer {
    /// Starts copying `file`, opened here, in `chunks` chunks.
    pub(super) fn start_chunks(
        &self,
        cx: &mut Cx<'_, Self>,
        file: InFlight,
        chunks: u64,
        span: FileChunkSpan,
    ) {
        let group = chunk_group(&file);
        let chunk = FileChunk {
            id: 0,
            pair: Arc::clone(&file.pair),
            path: file.place.relative(),
            temp: file.temp.as_bytes().to_vec(),
            source_id: file.meta.file_id(),
            temp_id: span.temp_id,
            noatime: span.noatime,
            sparse: span.sparse,
            offset: 0,
            end: span.size,
        };
        let id = self.copies.open(file, chunks as usize).id;
        self.queue_chunk(cx, &group, FileChunk { id, ..chunk });
    }

    fn queue_chunk(&self, cx: &mut Cx<'_, Self>, group: &Arc<DirNode<DestDir>>, chunk: FileChunk) {
        let queued = self.chunks_queued.fetch_add(1, Ordering::Relaxed) + 1;
        self.chunks_queued_peak.fetch_max(queued, Ordering::Relaxed);
        cx.spawn_in(group, CopyJob::Chunk(chunk));
    }

    /// Schedules the rest of the file, then copies the chunk at `chunk.offset`. On the process
    /// that opened the file, whoever copies the last chunk finishes it; elsewhere the chunks are
    /// reported back through the directory they count toward.
    pub(super) fn run_chunk(&self, cx: &mut Cx<'_, Self>, state: &mut TransferState, chunk: FileChunk) {
        self.chunks_queued.fetch_sub(1, Ordering::Relaxed);
        let size = self.options.chunk_size;
        let group = Arc::clone(cx.job_dir().expect("chunks are spawned in a directory or a job group"));
        let here = self.copies.get(chunk.id);
        let failed = match &here {
            Some(file) => file.flagged(),
            None => self.failed_copies.lock().unwrap_or_else(|e| e.into_inner()).contains(&chunk.id),
        };
        if failed {
            let left = (chunk.end - chunk.offset).div_ceil(size) as usize;
            return self.chunks_done(cx, state, &group, &chunk, here, left, true);
        }
        let this_end = (chunk.offset + size).min(chunk.end);
        if this_end < chunk.end {
            self.queue_chunk(cx, &group, FileChunk { offset: this_end, ..chunk.clone() });
        }
        let range = chunk.offset..this_end;
        let copied = match &here {
            Some(file) => {
                let path = file.item.place.relative();
                self.copy_span_checked(state, &file.item.copying(&path, self), range)
            }
            None => reopen(&chunk).and_then(|(src, tmp)| {
                let copying = super::files::Copying {
                    pair: &chunk.pair,
                    path: &chunk.path,
                    src: &src,
                    tmp: &tmp,
                    sparse: chunk.sparse,
                    verify: self.options.verify,
                    offload: self.options.reflink != super::Reflink::Never,
                    dev: chunk.source_id.0,
                };
                self.copy_span_checked(state, &copying, range)
            }),
        };
        let flagged = match copied {
            Ok(()) => false,
            Err(failure) => {
                if self.failed_copies.lock().unwrap_or_else(|e| e.into_inner()).insert(chunk.id) {
                    self.report_failure(state, failure);
                }
                true
            }
        };
        self.chunks_done(cx, state, &group, &chunk, here, 1, flagged);
    }

    /// `pieces` chunks of `chunk`'s file are done (`flagged`: failed or skipped after a failure).
    #[allow(clippy::too_many_arguments)] // where the chunks count, on which process, how many
    fn chunks_done(
        &self,
        cx: &mut Cx<'_, Self>,
        state: &mut TransferState,
        group: &Arc<DirNode<DestDir>>,
        chunk: &FileChunk,
        here: Option<Arc<Tracked<InFlight>>>,
        pieces: usize,
        flagged: bool,
    ) {
        match here {
            Some(file) => {
                if let Some(file) = self.copies.done_many(&file, pieces, flagged) {
                    self.finish(cx, state, &file.item, file.flagged(), None);
                }
            }
            None => group.data.chunks_done.push_many(PieceDone { id: chunk.id, flagged }, pieces),
        }
    }

    /// Chunks of files opened here came back from other processes: the last one finishes its file.
    pub(super) fn absorb_chunks(
        &self,
        cx: &mut Cx<'_, Self>,
        state: &mut TransferState,
        dir: &Arc<DirNode<DestDir>>,
        from: DestDir,
    ) {
        for file in self.copies.absorb(from.chunks_done, &dir.data.chunks_done) {
            self.finish(cx, state, &file.item, file.flagged(), None);
        }
    }
}
