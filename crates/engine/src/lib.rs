//! Canopy's traversal engine. See the crate README for the design.
