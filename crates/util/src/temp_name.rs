//! The temporary names under which copies are built: `.canopy-tmp-` and 16 hex digits of the xxh3
//! hash of the final name. A name derived from the final one lets a rerun after an interruption find
//! the leftover of the same file under the same name (the copy engine and the group copies both
//! rely on it), and source entries with such names are recognised as leftovers.

use std::ffi::{CStr, CString};

const PREFIX: &[u8] = b".canopy-tmp-";

/// The temporary name under which `name` is built.
pub fn temp_name(name: &CStr) -> CString {
    let hash = xxhash_rust::xxh3::xxh3_64(name.to_bytes());
    CString::new(format!(".canopy-tmp-{hash:016x}")).expect("no NUL in a formatted name")
}

/// Whether `name` is one of canopy's temporary names.
pub fn is_temp_name(name: &[u8]) -> bool {
    name.len() == PREFIX.len() + 16
        && name.starts_with(PREFIX)
        && name[PREFIX.len()..].iter().all(|b| b.is_ascii_hexdigit())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn temp_names_are_stable_short_and_recognised() {
        let long = CString::new(vec![b'x'; 255]).unwrap();
        let t = temp_name(&long);
        assert_eq!(t, temp_name(&long), "a rerun finds the same name");
        assert!(t.to_bytes().len() < 40);
        assert!(is_temp_name(t.to_bytes()));
        assert_ne!(temp_name(c"a"), temp_name(c"b"));
        assert!(!is_temp_name(b".canopy-tmp-xyz"));
        assert!(!is_temp_name(b"file.txt"));
    }
}
