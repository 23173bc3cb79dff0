//! rsync's reading of `SRC... DEST`: `SRC` copies the directory itself into `DEST` (as
//! `DEST/SRC`), `SRC/` (or `SRC/.`) its contents; a single non-directory `SRC` and a `DEST` that is
//! not a directory (nor spelled with a trailing `/`) make `DEST` the copy; otherwise `DEST` is a
//! directory, created (one level) if missing — even when nothing is copied into it, as rsync does.

use crate::common::print_error;
use crate::transfer::RootPair;
use canopy_engine::errno_message;
use canopy_engine::sys::stat_path;
use canopy_engine::{Errno, Metadata};
use canopy_util::path::{join_path, without_trailing_slashes};

/// The transfers the command line names.
pub struct Roots {
    pub pairs: Vec<RootPair>,
    /// `DEST` (without trailing slashes), when it is missing: made by [`Roots::make_dest`] —
    /// rsync's "created directory".
    pub created: Option<Vec<u8>>,
    /// Sources that could not be found (reported); the others are copied, the exit status is 23.
    pub missing: u64,
    /// Directories named without -r (or -a), skipped: their names as rsync lists them.
    pub skipped: Vec<Vec<u8>>,
}

/// Why nothing can be copied, with rsync's exit status.
pub enum Refusal {
    /// Status 3: errors selecting input/output files, dirs.
    Selection(String),
    /// Status 11: error in file I/O (`DEST` could not be made).
    FileIo(String),
}

/// A source as given, and what it is.
struct Source {
    path: Vec<u8>,
    /// `SRC/` or `SRC/.`: the contents, not the directory itself.
    contents: bool,
    meta: Metadata,
}

fn show(path: &[u8]) -> String {
    String::from_utf8_lossy(path).into_owned()
}

/// The last component, trailing slashes ignored.
fn basename(path: &[u8]) -> &[u8] {
    let trimmed = without_trailing_slashes(path);
    trimmed.rsplit(|&b| b == b'/').next().unwrap_or(trimmed)
}

fn names_contents(path: &[u8]) -> bool {
    path.ends_with(b"/") || path == b"." || path.ends_with(b"/.")
}

/// Resolves `sources` and `dest` (see [`Roots::make_dest`] for making `dest`). Missing sources
/// are reported (when `report`) and left out, and so are directories without `recursive`.
pub fn resolve(sources: &[Vec<u8>], dest: &[u8], recursive: bool, report: bool) -> Result<Roots, Refusal> {
    let mut found = Vec::new();
    let mut missing = 0;
    let mut skipped = Vec::new();
    for path in sources {
        let contents = names_contents(path);
        match stat_path(path, contents) {
            Ok(meta) if meta.is_dir() && !recursive => {
                skipped.push(if contents { b".".to_vec() } else { basename(path).to_vec() });
            }
            Ok(meta) => found.push(Source { path: path.clone(), contents, meta }),
            Err(errno) => {
                if report {
                    print_error("sync", format_args!("'{}': {}", show(path), errno_message(errno)));
                }
                missing += 1;
            }
        }
    }
    let dest_meta = stat_path(dest, true).ok();
    let dest_is_dir = dest_meta.is_some_and(|m| m.is_dir());
    if let [single] = found.as_slice()
        && !single.meta.is_dir()
        && !dest.ends_with(b"/")
        && !dest_is_dir
    {
        let mut pair = RootPair::new(single.path.clone(), false, dest.to_vec(), false);
        pair.list_name = basename(&single.path).to_vec();
        return Ok(Roots { pairs: vec![pair], created: None, missing, skipped });
    }
    let mut created = None;
    match dest_meta {
        Some(_) if !dest_is_dir => {
            return Err(Refusal::Selection(format!(
                "destination '{}' must be a directory when copying more than 1 file (it is not)",
                show(dest)
            )));
        }
        Some(_) => {}
        None => {
            let trimmed = without_trailing_slashes(dest).len();
            created = Some(dest[..trimmed.max(1)].to_vec());
        }
    }
    let pairs = found
        .into_iter()
        .map(|source| {
            if source.contents {
                let mut pair = RootPair::new(source.path, true, dest.to_vec(), true);
                pair.made = created.is_some();
                pair
            } else {
                let name = basename(&source.path).to_vec();
                let mut pair = RootPair::new(source.path, false, join_path(dest, &name), false);
                pair.list_name = name;
                pair
            }
        })
        .collect();
    Ok(Roots { pairs, created, missing, skipped })
}

impl Roots {
    /// Makes DEST, when it is missing (one level, as rsync does).
    pub fn make_dest(&self) -> Result<(), Refusal> {
        self.created.as_deref().map_or(Ok(()), make_dest)
    }
}

fn make_dest(dest: &[u8]) -> Result<(), Refusal> {
    let trimmed = without_trailing_slashes(dest);
    let path = std::ffi::CString::new(if trimmed.is_empty() { dest } else { trimmed }).map_err(|_| {
        Refusal::FileIo(format!("mkdir '{}' failed: {}", show(dest), errno_message(Errno::INVAL)))
    })?;
    match rustix::fs::mkdir(path.as_c_str(), rustix::fs::Mode::from_raw_mode(0o777)) {
        Ok(()) | Err(Errno::EXIST) => Ok(()),
        Err(errno) => {
            Err(Refusal::FileIo(format!("mkdir '{}' failed: {}", show(dest), errno_message(errno))))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::ffi::OsStrExt;

    fn bytes(p: &std::path::Path) -> Vec<u8> {
        p.as_os_str().as_bytes().to_vec()
    }

    #[test]
    fn rsync_reads_the_command_line() {
        let tmp = tempfile::tempdir().unwrap();
        let src = tmp.path().join("proj");
        std::fs::create_dir(&src).unwrap();
        std::fs::write(src.join("f"), b"x").unwrap();
        let backup = tmp.path().join("backup");
        std::fs::create_dir(&backup).unwrap();

        let roots = resolve(&[bytes(&src)], &bytes(&backup), true, false).ok().unwrap();
        assert_eq!(roots.pairs[0].dest, bytes(&backup.join("proj")), "SRC goes into DEST/SRC");
        assert_eq!(roots.pairs[0].list_name, b"proj");

        let mut slash = bytes(&src);
        slash.push(b'/');
        let roots = resolve(&[slash], &bytes(&backup), true, false).ok().unwrap();
        assert_eq!(roots.pairs[0].dest, bytes(&backup), "SRC/ copies its contents");
        assert!(roots.pairs[0].list_name.is_empty());

        let fresh = tmp.path().join("fresh");
        let roots = resolve(&[bytes(&src)], &bytes(&fresh), true, false).ok().unwrap();
        assert!(!fresh.exists() && roots.created == Some(bytes(&fresh)), "DEST to make");
        assert!(roots.make_dest().is_ok() && fresh.is_dir());
        assert_eq!(roots.pairs[0].dest, bytes(&fresh.join("proj")));

        let file = src.join("f");
        let roots = resolve(&[bytes(&file)], &bytes(&tmp.path().join("renamed")), true, false).ok().unwrap();
        assert_eq!(roots.pairs[0].dest, bytes(&tmp.path().join("renamed")), "a file becomes DEST");
        assert_eq!(roots.pairs[0].list_name, b"f");

        let missing = tmp.path().join("missing");
        let roots = resolve(&[bytes(&missing), bytes(&src)], &bytes(&backup), true, false).ok().unwrap();
        assert_eq!((roots.missing, roots.pairs.len()), (1, 1), "a missing source is left out");

        assert!(matches!(resolve(&[bytes(&src)], &bytes(&file), true, false), Err(Refusal::Selection(_))));
        let orphan = tmp.path().join("no/such/dir");
        let roots = resolve(&[bytes(&src)], &bytes(&orphan), true, false).ok().unwrap();
        assert!(matches!(roots.make_dest(), Err(Refusal::FileIo(_))));
        let roots = resolve(&[bytes(&src)], &bytes(&backup), false, false).ok().unwrap();
        assert_eq!((roots.pairs.len(), roots.skipped), (0, vec![b"proj".to_vec()]), "no -r: skipped");
    }
}
