//! Group file operations across hosts, aggregated in a tree (the TBON-FS idiom).

pub mod nodeset;

pub use nodeset::{NodeSet, RangeSet};
