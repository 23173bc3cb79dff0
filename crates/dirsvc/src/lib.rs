//! Canopy's scalable distributed directory service: directories whose entries are hashed over
//! partitions on many metadata servers (GIGA+ as implemented in OrangeFS), split as they fill,
//! and located by clients from a cached bitmap. See the crate README for the design.

pub mod auth;
pub mod bench;
pub mod cli;
pub mod client;
pub mod cluster;
mod codec;
pub mod error;
pub mod fsck;
pub mod ids;
pub mod launcher;
pub mod mapping;
pub mod mount;
pub mod names;
pub mod server;
pub mod transport;

/// Generated protocol types and gRPC stubs (see `proto/dirsvc.proto`).
#[allow(clippy::all, clippy::pedantic)]
pub mod proto {
    tonic::include_proto!("canopy.dirsvc.v1");
}
