//! The tools of `canopy`, one module each, all on the one traversal engine (`canopy-engine`).
//! Each tool module exposes its clap `Args` and a `run` function returning the process exit code.

pub mod cmp;
pub mod common;
pub mod cp;
pub mod du;
pub mod find;
pub mod grep;
mod remove;
#[cfg(feature = "report")]
pub mod report;
pub mod rm;
pub mod sync;
pub mod transfer;
pub mod walk;
