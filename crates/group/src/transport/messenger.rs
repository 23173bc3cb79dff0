//! The MPI transport: a cluster's [`Messenger`], one rank per host. The messenger already meets the
//! contract — its sends are nonblocking (`MPI_Isend`, buffers kept until completion), MPI keeps
//! messages between two ranks in order, and its receive polls with a deadline — so this only adapts
//! the types. On a single process (no `mpirun`) the messenger is a one-rank loop.

use super::{Transport, TransportError};
use crate::topology::Rank;
use canopy_transport::Messenger;
use std::time::Instant;

impl Transport for Messenger<'_> {
    fn rank(&self) -> Rank {
        Messenger::rank(self) as Rank
    }

    fn size(&self) -> usize {
        Messenger::size(self) as usize
    }

    fn send(&mut self, to: Rank, message: Vec<u8>) -> Result<(), TransportError> {
        let to = u32::try_from(to).map_err(|_| TransportError(format!("no rank {to}")))?;
        Messenger::send(self, to, message).map_err(TransportError)
    }

    fn receive(&mut self, deadline: Option<Instant>) -> Result<Option<(Rank, Vec<u8>)>, TransportError> {
        Ok(Messenger::receive(self, deadline).map(|(from, bytes)| (from as Rank, bytes)))
    }
}
