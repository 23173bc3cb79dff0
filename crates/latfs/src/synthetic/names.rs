//! Entry names. Files are named as the benchmarks' generated trees name them, `STEM_0000042.EXT`
//! (stem and extension drawn per file, the number its slot in the directory), so `-name '*.c'` and
//! friends select about the same share; directories are `d00042` (`n42` in deep trees, as there).

use super::draw::{Purpose, draw};

const STEMS: [&str; 20] = [
    "data", "report", "main", "util", "index", "config", "test", "image", "log", "model", "core", "lib",
    "readme", "notes", "backup", "cache", "module", "chunk", "result", "sample",
];
const EXTENSIONS: [&str; 13] =
    [".c", ".h", ".py", ".rs", ".txt", ".json", ".log", ".dat", ".so", ".html", ".png", ".gz", ""];

/// The name of file slot `index`, whose own inode number is `ino`.
pub(crate) fn file_name(seed: u64, ino: u64, index: u64) -> String {
    let random = draw(seed, ino, Purpose::Name);
    let stem = STEMS[(random % STEMS.len() as u64) as usize];
    let extension = EXTENSIONS[((random >> 32) % EXTENSIONS.len() as u64) as usize];
    format!("{stem}_{index:07}{extension}")
}

/// The slot a file name claims, read from the digits after its `_`; the caller checks the whole name.
pub(crate) fn claimed_file_index(name: &[u8]) -> Option<u64> {
    let at = name.iter().position(|&b| b == b'_')?;
    number_prefix(&name[at + 1..])
}

/// How a shape numbers its subdirectories.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum DirNames {
    /// `d00042`: wide, flat and irregular trees.
    Padded,
    /// `n42`: deep trees.
    Short,
}

impl DirNames {
    pub(crate) fn name(self, index: u64) -> String {
        match self {
            DirNames::Padded => format!("d{index:05}"),
            DirNames::Short => format!("n{index}"),
        }
    }

    /// The subdirectory a name claims; the caller checks the whole name.
    pub(crate) fn claimed_index(self, name: &[u8]) -> Option<u64> {
        let prefix = match self {
            DirNames::Padded => b'd',
            DirNames::Short => b'n',
        };
        match name.split_first() {
            Some((&first, digits)) if first == prefix && !digits.is_empty() => {
                number_prefix(digits).filter(|_| digits.iter().all(u8::is_ascii_digit))
            }
            _ => None,
        }
    }
}

/// The number the leading digits of `bytes` spell (at most 19 of them, so it fits).
fn number_prefix(bytes: &[u8]) -> Option<u64> {
    let digits = bytes.iter().take_while(|b| b.is_ascii_digit()).count();
    if digits == 0 || digits > 19 {
        return None;
    }
    std::str::from_utf8(&bytes[..digits]).ok()?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_names_carry_their_slot_and_vary_their_stem() {
        let name = file_name(1, 100, 42);
        assert!(name.contains("_0000042"), "{name}");
        assert_eq!(claimed_file_index(name.as_bytes()), Some(42));
        assert_eq!(file_name(1, 100, 42), name, "the same every time");
        let stems: std::collections::HashSet<String> =
            (0..200).map(|i| file_name(1, i, 0).split('_').next().unwrap().to_string()).collect();
        assert_eq!(stems.len(), STEMS.len());
        assert!(file_name(1, 7, 12_345_678).contains("_12345678"), "more digits past 10^7 slots");
        assert_eq!(claimed_file_index(b"nounderscore"), None);
        assert_eq!(claimed_file_index(b"data_.c"), None);
    }

    #[test]
    fn directory_names_round_trip() {
        for names in [DirNames::Padded, DirNames::Short] {
            for index in [0, 7, 99_999, 100_000, 123_456_789] {
                assert_eq!(names.claimed_index(names.name(index).as_bytes()), Some(index));
            }
        }
        assert_eq!(DirNames::Padded.name(3), "d00003");
        assert_eq!(DirNames::Short.name(3), "n3");
        assert_eq!(DirNames::Padded.claimed_index(b"d12x"), None);
        assert_eq!(DirNames::Padded.claimed_index(b"n12"), None);
        assert_eq!(DirNames::Short.claimed_index(b"n"), None);
    }
}
