//! Mount tests: real FUSE mounts served by this process, checked against the source with GNU tools as
//! oracles. Skipped (with a message) only where /dev/fuse does not exist.

mod concurrency;
mod passthrough;
mod support;
mod writes;
