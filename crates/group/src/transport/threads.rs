//! The in-process transport: one unbounded channel per rank.

use super::{Transport, TransportError};
use crate::topology::Rank;
use crossbeam_channel::{Receiver, RecvTimeoutError, Sender, unbounded};
use std::sync::Arc;
use std::time::Instant;

type Envelope = (Rank, Vec<u8>);

/// One rank's endpoint of a [`thread_mesh`]. Sends never block (the channels are unbounded).
pub struct ThreadTransport {
    rank: Rank,
    peers: Arc<[Sender<Envelope>]>,
    inbox: Receiver<Envelope>,
}

/// Endpoints for ranks `0..size`, each able to reach every other.
pub fn thread_mesh(size: usize) -> Vec<ThreadTransport> {
    let (senders, receivers): (Vec<_>, Vec<_>) = (0..size).map(|_| unbounded()).unzip();
    let peers: Arc<[Sender<Envelope>]> = senders.into();
    receivers
        .into_iter()
        .enumerate()
        .map(|(rank, inbox)| ThreadTransport { rank, peers: peers.clone(), inbox })
        .collect()
}

impl ThreadTransport {
    /// A handle that reaches every other rank of the mesh, as this rank.
    pub(crate) fn control(&self) -> MeshControl {
        MeshControl { rank: self.rank, peers: self.peers.clone() }
    }
}

/// Sends to every rank of a mesh (but its own) without owning an endpoint.
pub(crate) struct MeshControl {
    rank: Rank,
    peers: Arc<[Sender<Envelope>]>,
}

impl MeshControl {
    pub(crate) fn send_to_all(&self, message: &[u8]) {
        for (rank, peer) in self.peers.iter().enumerate() {
            if rank != self.rank {
                // A rank that already exited needs no message.
                let _ = peer.send((self.rank, message.to_vec()));
            }
        }
    }
}

impl Transport for ThreadTransport {
    fn rank(&self) -> Rank {
        self.rank
    }

    fn size(&self) -> usize {
        self.peers.len()
    }

    fn send(&mut self, to: Rank, message: Vec<u8>) -> Result<(), TransportError> {
        let peer = self.peers.get(to).ok_or_else(|| TransportError(format!("no rank {to}")))?;
        peer.send((self.rank, message)).map_err(|_| TransportError(format!("rank {to} has exited")))
    }

    fn receive(&mut self, deadline: Option<Instant>) -> Result<Option<Envelope>, TransportError> {
        let received = match deadline {
            Some(deadline) => self.inbox.recv_deadline(deadline),
            None => self.inbox.recv().map_err(|_| RecvTimeoutError::Disconnected),
        };
        match received {
            Ok(envelope) => Ok(Some(envelope)),
            Err(RecvTimeoutError::Timeout) => Ok(None),
            Err(RecvTimeoutError::Disconnected) => Err(TransportError("every sender is gone".into())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn delivers_in_order_and_times_out() {
        let mut mesh = thread_mesh(3);
        let mut two = mesh.pop().unwrap();
        let mut one = mesh.pop().unwrap();
        one.send(2, b"a".to_vec()).unwrap();
        one.send(2, b"b".to_vec()).unwrap();
        assert_eq!(two.receive(None).unwrap(), Some((1, b"a".to_vec())));
        assert_eq!(two.receive(Some(Instant::now())).unwrap(), Some((1, b"b".to_vec())));
        let start = Instant::now();
        assert_eq!(two.receive(Some(start + Duration::from_millis(30))).unwrap(), None);
        assert!(start.elapsed() >= Duration::from_millis(30));
        assert!(one.send(7, vec![]).is_err());
    }
}
