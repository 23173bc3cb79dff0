//! Small helpers that several Canopy crates share, below all of them: it depends on no Canopy crate,
//! so the engine, the find expressions, the tools and the group tools can all use it.
//!
//! - [`path`]: paths as bytes (any name the kernel accepts, UTF-8 or not): parents, last components,
//!   joins, trailing slashes;
//! - [`errors`]: the C library's text for an I/O error, as the classic tools print it;
//! - [`owners`]: user and group names through NSS, cached per thread;
//! - [`size`]: size arguments (`64K`, `1M`);
//! - [`temp_name`]: the temporary names under which copies are built.

#![warn(missing_docs)]

pub mod errors;
pub mod owners;
pub mod path;
pub mod size;
pub mod temp_name;
