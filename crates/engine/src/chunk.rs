//! A batch of directory entries copied out of the `getdents64` buffer, so a big directory's entries
//! can be handed to other workers while its reader keeps reading.

use crate::meta::FileKind;
use std::ffi::CStr;

#[derive(Default)]
pub(crate) struct Chunk {
    /// NUL-terminated names, back to back.
    names: Vec<u8>,
    /// For each entry, the end of its name in `names` and its `d_type`.
    items: Vec<(u32, FileKind)>,
}

impl Chunk {
    pub fn with_capacity(entries: usize) -> Self {
        Chunk { names: Vec::with_capacity(entries * 16), items: Vec::with_capacity(entries) }
    }

    /// Adds a name (with its terminating NUL).
    pub fn push(&mut self, name_with_nul: &[u8], kind: FileKind) {
        self.names.extend_from_slice(name_with_nul);
        let end = u32::try_from(self.names.len()).expect("a chunk holds far less than 4 GiB of names");
        self.items.push((end, kind));
    }

    /// The raw parts, for sending to another process.
    pub fn into_parts(self) -> (Vec<u8>, Vec<(u32, FileKind)>) {
        (self.names, self.items)
    }

    pub fn from_parts(names: Vec<u8>, items: Vec<(u32, FileKind)>) -> Self {
        Chunk { names, items }
    }

    pub fn len(&self) -> usize {
        self.items.len()
    }

    pub fn clear(&mut self) {
        self.names.clear();
        self.items.clear();
    }

    pub fn iter(&self) -> impl Iterator<Item = (&CStr, FileKind)> {
        let mut start = 0usize;
        self.items.iter().map(move |&(end, kind)| {
            let end = end as usize;
            let name = CStr::from_bytes_with_nul(&self.names[start..end]).expect("names are NUL-terminated");
            start = end;
            (name, kind)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_names_and_kinds() {
        let mut c = Chunk::with_capacity(2);
        c.push(b"a\0", FileKind::File);
        c.push(b"\xff\nb\0", FileKind::Dir);
        let got: Vec<_> = c.iter().map(|(n, k)| (n.to_bytes().to_vec(), k)).collect();
        assert_eq!(got, vec![(b"a".to_vec(), FileKind::File), (b"\xff\nb".to_vec(), FileKind::Dir)]);
    }
}
