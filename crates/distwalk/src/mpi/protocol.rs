//! Message tags and payload encoding (postcard) of the walk protocol. The tags stay below
//! `canopy_transport::mpi::LAYER`, the byte messenger's tag on the same communicator.

use mpi::Tag;
use serde::Serialize;
use serde::de::DeserializeOwned;

/// A rank asks for work (control message: [`super::comm::WorkRequest`]).
pub const WORK_REQUEST: Tag = 1;
/// Work in answer to a request, or (CP) handed out by the master: a batch of remote tasks. Basic.
pub const WORK: Tag = 2;
/// Nothing to give (control, empty).
pub const NO_WORK: Tag = 3;
/// An imported subtree finished; completion goes to where the directory's parent lives. Basic.
pub const COMPLETE: Tag = 4;
/// The termination token (control).
pub const TOKEN: Tag = 5;
/// Rank 0 detected termination (control).
pub const STOP: Tag = 6;
/// (CP) A worker returns the directories it discovered to the master. Basic.
pub const RESULTS: Tag = 7;
/// Output bytes for rank 0 to print.
pub const OUTPUT: Tag = 8;
/// A rank has no more output.
pub const OUTPUT_END: Tag = 9;
/// Work sent unasked to a rank that was refused work earlier (H-DRQS). Basic.
pub const OFFER: Tag = 10;
/// A subtree's folded value on its way to rank 0 after the walk ([`super::reduce`]).
pub const REDUCE: Tag = 11;

pub fn encode<T: Serialize + ?Sized>(value: &T) -> Vec<u8> {
    postcard::to_allocvec(value).expect("walk messages serialise")
}

pub fn decode<T: DeserializeOwned>(bytes: &[u8]) -> T {
    postcard::from_bytes(bytes).expect("walk messages come from the same canopy build")
}
