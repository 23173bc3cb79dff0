//! A chain of directories whose full path is longer than PATH_MAX.

use rustix::fs::{CWD, Mode, OFlags, mkdirat, openat};
use std::path::Path;

/// Makes `top` and a chain of `levels` directories with 200-byte names below it, with an empty
/// `bottom.txt` at the end: built with `mkdirat`/`openat`, since the full path is longer than
/// PATH_MAX once `levels` passes 20.
pub fn deep_chain(top: &Path, levels: usize) {
    std::fs::create_dir(top).unwrap();
    let mut fd = openat(CWD, top, OFlags::DIRECTORY | OFlags::CLOEXEC, Mode::empty()).unwrap();
    let name = vec![b'd'; 200];
    for _ in 0..levels {
        mkdirat(&fd, name.as_slice(), Mode::from_raw_mode(0o755)).unwrap();
        fd = openat(&fd, name.as_slice(), OFlags::DIRECTORY | OFlags::CLOEXEC, Mode::empty()).unwrap();
    }
    let flags = OFlags::CREATE | OFlags::WRONLY | OFlags::CLOEXEC;
    openat(&fd, "bottom.txt", flags, Mode::from_raw_mode(0o644)).unwrap();
}
