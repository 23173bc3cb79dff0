//! readdir, with offsets that stay valid for as long as the directory is open — across partition
//! splits and concurrent changes. The listing itself (`client::DirLister`) is split-safe: read
//! through, it returns every entry present throughout exactly once. An entry's offset is
//! `3 + page × SLOTS + index` ("." is 1, ".." is 2). One reply to the kernel never spans two
//! pages, so the offset the kernel passes back always falls in the page just served or starts the
//! next one: a sequential listing never reads a page twice.
//!
//! A copy of the lister is kept from before each page, so `seekdir` to any offset `telldir` gave
//! reads that page again and continues from there (the listing after it is complete again). The
//! page read again reflects entries created, removed or moved by a split since, which may shift
//! positions within that one page.

use fuser::{Errno, FileType};
use tokio::sync::Mutex;

use super::attr::file_type;
use super::core::{Answer, MountCore, OrErrno};
use crate::client::{Client, DirLister, Listed};
use crate::error::Result;

/// Offsets reserved per page (a page holds at most the server's page limit, 4096 entries).
const SLOTS: u64 = 1 << 16;
const FIRST_ENTRY: u64 = 3;

pub struct DirStream {
    /// The lister before page p was read, for every page read so far.
    before_page: Vec<DirLister>,
    /// The lister after the last page read.
    next: DirLister,
    /// The page last served, to serve the following offsets without a request.
    current: Option<(usize, Vec<Listed>)>,
    exhausted: bool,
}

/// Where an offset the kernel passes back ("resume after this one") continues.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Resume {
    /// At "." (offset 0) or ".." (offset 1).
    Dots(u64),
    /// At entry `index` of page `page`.
    Entry { page: usize, index: usize },
}

pub fn resume(offset: u64) -> Resume {
    if offset < FIRST_ENTRY - 1 {
        return Resume::Dots(offset);
    }
    if offset == FIRST_ENTRY - 1 {
        return Resume::Entry { page: 0, index: 0 };
    }
    let slot = offset - FIRST_ENTRY;
    Resume::Entry { page: (slot / SLOTS) as usize, index: (slot % SLOTS) as usize + 1 }
}

pub fn entry_offset(page: usize, index: usize) -> u64 {
    FIRST_ENTRY + page as u64 * SLOTS + index as u64
}

impl DirStream {
    pub fn new(dir: u64) -> Self {
        Self { before_page: Vec::new(), next: DirLister::new(dir), current: None, exhausted: false }
    }

    /// Page `page` of the listing; `None` past its end.
    pub async fn page(&mut self, client: &Client, page: usize) -> Result<Option<&[Listed]>> {
        if self.current.as_ref().is_none_or(|(current, _)| *current != page) {
            let Some(entries) = self.read(client, page).await? else {
                return Ok(None);
            };
            self.current = Some((page, entries));
        }
        Ok(self.current.as_ref().map(|(_, entries)| entries.as_slice()))
    }

    async fn read(&mut self, client: &Client, page: usize) -> Result<Option<Vec<Listed>>> {
        if let Some(before) = self.before_page.get(page) {
            // Continue from this reading: the later pages are read afresh after it.
            let mut lister = before.clone();
            let entries = lister.next_page(client).await?;
            self.before_page.truncate(page + 1);
            self.next = lister;
            self.exhausted = entries.is_none();
            return Ok(entries);
        }
        while !self.exhausted {
            let before = self.next.clone();
            match self.next.next_page(client).await? {
                None => self.exhausted = true,
                Some(entries) => {
                    self.before_page.push(before);
                    if self.before_page.len() > page {
                        return Ok(Some(entries));
                    }
                }
            }
        }
        Ok(None)
    }
}

impl MountCore {
    pub fn opendir(&self, ino: u64) -> u64 {
        self.dir_handles.insert(Mutex::new(DirStream::new(ino)))
    }

    pub fn releasedir(&self, fh: u64) {
        let _ = self.dir_handles.remove(fh);
    }

    /// Hands entries after `offset` to `add` (inode, offset, type, name) until it reports the
    /// kernel's buffer full.
    pub async fn readdir(
        &self,
        ino: u64,
        fh: u64,
        offset: u64,
        mut add: impl FnMut(u64, u64, FileType, &[u8]) -> bool,
    ) -> Answer<()> {
        let stream = self.dir_handles.get(fh).map_err(|_| Errno::EBADF)?;
        let mut stream = stream.lock().await;
        let (mut page, mut index) = match resume(offset) {
            Resume::Dots(at) => {
                if at == 0 && add(ino, 1, FileType::Directory, b".") {
                    return Ok(());
                }
                let parent = self.client.dir_info(ino).await.or_errno()?.parent;
                if add(parent, 2, FileType::Directory, b"..") {
                    return Ok(());
                }
                (0, 0)
            }
            Resume::Entry { page, index } => (page, index),
        };
        while let Some(entries) = stream.page(&self.client, page).await.or_errno()? {
            if index < entries.len() {
                for (at, entry) in entries.iter().enumerate().skip(index) {
                    if add(entry.id, entry_offset(page, at), file_type(entry.kind), &entry.name) {
                        break;
                    }
                }
                // One page per reply (see the module comment); an empty reply would mean the end.
                return Ok(());
            }
            page += 1;
            index = 0;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_resume_after_the_entry_that_carried_them() {
        assert_eq!(resume(0), Resume::Dots(0));
        assert_eq!(resume(1), Resume::Dots(1));
        assert_eq!(resume(2), Resume::Entry { page: 0, index: 0 });
        for (page, index) in [(0, 0), (0, 4095), (7, 12)] {
            assert_eq!(resume(entry_offset(page, index)), Resume::Entry { page, index: index + 1 });
        }
    }
}
