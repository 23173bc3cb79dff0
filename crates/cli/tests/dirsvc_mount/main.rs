//! `canopy dirsvc mount` end to end: real server processes (`canopy dirsvc start`), real mounts
//! (`canopy dirsvc mount --daemon`), GNU tools and a local directory as oracles. Skipped (with a
//! message) only where /dev/fuse does not exist.

#[path = "../common/mod.rs"]
mod common;
mod faults;
mod many_files;
mod posix;
mod same_as_local;
mod support;
mod usage;
