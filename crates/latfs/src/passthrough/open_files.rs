//! Open files by handle, and the handles each node has open: a file unlinked while open has no
//! path any more, but its open descriptors still reach it (`fstat` and `fchmod` on it must work).

use std::collections::HashMap;
use std::os::fd::OwnedFd;
use std::sync::{Arc, Mutex, PoisonError};

use rustix::io::Result;

use canopy_fusekit::HandleTable;

pub(crate) struct OpenFile {
    node: u64,
    pub(crate) fd: OwnedFd,
}

#[derive(Default)]
pub(crate) struct OpenFiles {
    handles: HandleTable<OpenFile>,
    by_node: Mutex<HashMap<u64, Vec<u64>>>,
}

impl OpenFiles {
    pub(crate) fn insert(&self, node: u64, fd: OwnedFd) -> u64 {
        let handle = self.handles.insert(OpenFile { node, fd });
        self.by_node.lock().unwrap_or_else(PoisonError::into_inner).entry(node).or_default().push(handle);
        handle
    }

    pub(crate) fn get(&self, handle: u64) -> Result<Arc<OpenFile>> {
        self.handles.get(handle)
    }

    pub(crate) fn remove(&self, handle: u64) -> Result<()> {
        let file = self.handles.remove(handle)?;
        let mut by_node = self.by_node.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(handles) = by_node.get_mut(&file.node) {
            handles.retain(|&h| h != handle);
            if handles.is_empty() {
                by_node.remove(&file.node);
            }
        }
        Ok(())
    }

    /// The file behind `handle` when the kernel names one, else any file open on `node`.
    pub(crate) fn of(&self, node: u64, handle: Option<u64>) -> Option<Arc<OpenFile>> {
        if let Some(file) = handle.and_then(|h| self.get(h).ok()) {
            return Some(file);
        }
        let any = self.by_node.lock().unwrap_or_else(PoisonError::into_inner).get(&node)?.first().copied()?;
        self.get(any).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fd() -> OwnedFd {
        rustix::fs::open("/dev/null", rustix::fs::OFlags::RDONLY, rustix::fs::Mode::empty()).unwrap()
    }

    #[test]
    fn a_node_is_reachable_through_any_of_its_open_handles_until_the_last_is_closed() {
        let files = OpenFiles::default();
        let first = files.insert(7, fd());
        let second = files.insert(7, fd());
        assert!(files.of(7, None).is_some());
        assert!(files.of(8, None).is_none());
        files.remove(first).unwrap();
        assert_eq!(files.of(7, None).map(|f| f.node), Some(7));
        files.remove(second).unwrap();
        assert!(files.of(7, None).is_none());
        assert!(files.remove(second).is_err());
    }
}
