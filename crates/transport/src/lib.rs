//! The processes of a job and the messages between them, below both the distributed walk
//! (`canopy-distwalk`) and the group layer (`canopy-group`).
//!
//! A [`World`] is one local process, or the ranks of an MPI job: it joins the job (refusing
//! launches that would run N copies of it: [`launch`]), gives the rank, the size and which ranks
//! share a node, aborts the job, and hands out a [`Messenger`] of byte messages whose sends never
//! wait and whose receives have a deadline. A heartbeat thread per rank answers pings and watches
//! the next rank, so a rank that stops answering ends the job instead of hanging it
//! ([`World::watch`]). [`users_terminal`] is the one "is this the user's terminal" decision.
//!
//! Without the `mpi` cargo feature (or when not started by an MPI launcher) a `World` is a single
//! local process. This crate knows nothing of walks or files.

pub mod launch;
mod messenger;
#[cfg(feature = "mpi")]
pub mod mpi;
mod terminal;
mod world;

pub use messenger::Messenger;
pub use terminal::users_terminal;
pub use world::{NO_ANSWER_EXIT, World, hostname};
