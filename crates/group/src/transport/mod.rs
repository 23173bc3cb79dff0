//! The seam between the group layer and whatever moves bytes between ranks.
//!
//! The group layer speaks to its parent and children in the aggregation tree through a [`Transport`]:
//! [`ThreadTransport`] (one thread per simulated host, channels between them), or a cluster's
//! [`Messenger`](canopy_transport::Messenger) (MPI point-to-point messages, one rank per host).

mod messenger;
mod threads;

pub(crate) use threads::MeshControl;
pub use threads::{ThreadTransport, thread_mesh};

use crate::topology::Rank;
use std::fmt;
use std::time::Instant;

/// Moves opaque messages between the ranks of one aggregation tree.
///
/// # Contract
///
/// The group layer serialises its own messages (requests going down the tree, partial results coming up,
/// shutdown); a transport only moves byte vectors. An implementation must provide:
///
/// 1. **Identity.** `rank()` is this endpoint's rank in `0..size()`; rank 0 runs the client ([`Runtime`]),
///    every other rank runs [`serve`]. Every rank builds the same [`ReductionTree`] (same labels, same fan-out):
///    requests carry a fingerprint of it and a rank with another tree refuses them.
/// 2. **Sends never wait for the receiver.** `send` returns once the message is queued; it must not block
///    until the destination calls `receive` (buffer it, or use a non-blocking send whose buffer the transport
///    keeps alive until completion). A rank that hangs or died must not block its sender. `send` may fail
///    (destination known to be gone): the group layer then counts that rank's subtree as missing.
/// 3. **Reliable, ordered per pair.** Messages from one rank to another arrive once, intact, in the order
///    they were sent (MPI's non-overtaking rule). Across senders there is no order.
/// 4. **Bounded receive.** `receive(Some(deadline))` returns the next message from any rank, or `Ok(None)`
///    once `deadline` has passed without one; `receive(None)` waits indefinitely (an idle server waiting for
///    its next request). The deadline is what turns a dead or hung rank into a *missing* set instead of a
///    hang, so it must be honoured even when no message ever arrives.
/// 5. **One consumer.** The group layer calls a transport from one thread only, so implementations need not
///    be `Sync` (an MPI communicator need not even be `Send`: a rank's transport lives on the thread that
///    serves it). `ThreadTransport` is `Send` because the simulation moves each one to its own thread.
///
/// Errors from `receive` are fatal for the rank (its server returns them); timeouts are not errors.
///
/// [`Runtime`]: crate::Runtime
/// [`serve`]: crate::serve
/// [`ReductionTree`]: crate::ReductionTree
pub trait Transport {
    /// This endpoint's rank.
    fn rank(&self) -> Rank;

    /// Number of ranks.
    fn size(&self) -> usize;

    /// Queues `message` for rank `to` without waiting for it to be received.
    fn send(&mut self, to: Rank, message: Vec<u8>) -> Result<(), TransportError>;

    /// The next message from any rank with its sender, or `None` once `deadline` passes.
    fn receive(&mut self, deadline: Option<Instant>) -> Result<Option<(Rank, Vec<u8>)>, TransportError>;
}

/// Any transport, for code that runs the same way on simulated and on MPI hosts.
pub type DynTransport<'t> = Box<dyn Transport + 't>;

/// A pointer to a transport is a transport: a boxed one, or one borrowed for a while (an MPI rank's
/// messenger, used again after the tree is done).
macro_rules! forward_to_pointee {
    ($($pointer:ty),*) => {$(
        impl<T: Transport + ?Sized> Transport for $pointer {
            fn rank(&self) -> Rank {
                (**self).rank()
            }

            fn size(&self) -> usize {
                (**self).size()
            }

            fn send(&mut self, to: Rank, message: Vec<u8>) -> Result<(), TransportError> {
                (**self).send(to, message)
            }

            fn receive(
                &mut self,
                deadline: Option<Instant>,
            ) -> Result<Option<(Rank, Vec<u8>)>, TransportError> {
                (**self).receive(deadline)
            }
        }
    )*};
}

forward_to_pointee!(Box<T>, &mut T);

/// A transport failure: a destination that is gone, or a broken channel.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TransportError(pub String);

impl fmt::Display for TransportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for TransportError {}
