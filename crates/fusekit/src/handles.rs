//! Open files and directories, by the handle number the kernel passes back on each request.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use rustix::io::{Errno, Result};

/// Open items by handle number: handles are never reused while the table lives.
pub struct HandleTable<T> {
    next: AtomicU64,
    open: Mutex<HashMap<u64, Arc<T>>>,
}

impl<T> Default for HandleTable<T> {
    fn default() -> Self {
        HandleTable { next: AtomicU64::new(1), open: Mutex::new(HashMap::new()) }
    }
}

impl<T> HandleTable<T> {
    pub fn insert(&self, item: T) -> u64 {
        let handle = self.next.fetch_add(1, Ordering::Relaxed);
        self.lock().insert(handle, Arc::new(item));
        handle
    }

    /// The item behind `handle`; `EBADF` for a handle that is not open.
    pub fn get(&self, handle: u64) -> Result<Arc<T>> {
        self.lock().get(&handle).cloned().ok_or(Errno::BADF)
    }

    pub fn remove(&self, handle: u64) -> Result<Arc<T>> {
        self.lock().remove(&handle).ok_or(Errno::BADF)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<u64, Arc<T>>> {
        self.open.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn handles_are_distinct_and_closed_handles_are_bad() {
        let table = HandleTable::default();
        let a = table.insert("a");
        let b = table.insert("b");
        assert_ne!(a, b);
        assert_eq!(*table.get(a).unwrap(), "a");
        assert_eq!(*table.remove(b).unwrap(), "b");
        assert_eq!(table.get(b).err(), Some(Errno::BADF));
        assert_eq!(table.remove(b).err(), Some(Errno::BADF));
    }
}
