//! Files open in this mount. Writes go to the file's data server at once and are durable when
//! acknowledged; the size and mtime they produce are pushed to the file's entry when the file is
//! flushed (every close), fsynced or released — close-to-open consistency, as NFS has — so a write
//! costs one request, not two. Until then this mount answers getattr with what it wrote.
//!
//! A file unlinked while open here keeps its data (the unlink says so) until the last handle is
//! released, as POSIX wants.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use crate::client::Attributes;

pub struct FileState {
    /// Attributes as last read from or written to the entry.
    pub attrs: Attributes,
    /// mtime of writes not yet pushed to the entry (their size is in `attrs.size`).
    pub unpushed_mtime: Option<i64>,
    /// The name is gone; the data goes with the last handle.
    pub unlinked: bool,
}

pub struct OpenFile {
    pub ino: u64,
    /// Held across a write's request, so writes to one file update its size in order.
    pub state: tokio::sync::Mutex<FileState>,
}

#[derive(Default)]
pub struct OpenFiles {
    by_ino: Mutex<HashMap<u64, (u32, Arc<OpenFile>)>>,
}

impl OpenFiles {
    /// Another handle on `ino`, whose entry currently has `attrs`. A file already open here keeps
    /// its state when it has unpushed writes (they are newer than the entry).
    pub async fn open(&self, ino: u64, attrs: Attributes) -> Arc<OpenFile> {
        let file = {
            let mut open = self.by_ino.lock().unwrap_or_else(PoisonError::into_inner);
            let (handles, file) = open.entry(ino).or_insert_with(|| {
                let state = FileState { attrs, unpushed_mtime: None, unlinked: false };
                (0, Arc::new(OpenFile { ino, state: tokio::sync::Mutex::new(state) }))
            });
            *handles += 1;
            Arc::clone(file)
        };
        {
            let mut state = file.state.lock().await;
            if state.unpushed_mtime.is_none() && !state.unlinked {
                state.attrs = attrs;
            }
        }
        file
    }

    pub fn get(&self, ino: u64) -> Option<Arc<OpenFile>> {
        self.by_ino.lock().unwrap_or_else(PoisonError::into_inner).get(&ino).map(|(_, file)| Arc::clone(file))
    }

    /// One handle closed; the file when it was the last one.
    pub fn close(&self, ino: u64) -> Option<Arc<OpenFile>> {
        let mut open = self.by_ino.lock().unwrap_or_else(PoisonError::into_inner);
        let (handles, _) = open.get_mut(&ino)?;
        *handles -= 1;
        if *handles > 0 {
            return None;
        }
        open.remove(&ino).map(|(_, file)| file)
    }
}
