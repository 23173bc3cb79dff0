//! Point-to-point byte messages between the processes of a world, for layers above the walk (the
//! group layer's aggregation tree). Sends never wait for the receiver; receives wait at most until
//! a deadline, which is what turns a dead or hung process into a missing answer instead of a hang.

use std::collections::VecDeque;
use std::time::Instant;

pub struct Messenger<'c> {
    kind: Kind<'c>,
}

enum Kind<'c> {
    /// One process: messages to itself.
    Local(VecDeque<Vec<u8>>),
    #[cfg(feature = "mpi")]
    Mpi(crate::mpi::MpiMessenger<'c>),
    #[cfg(not(feature = "mpi"))]
    #[allow(dead_code)] // keeps the lifetime used when MPI is not built
    Never(std::marker::PhantomData<&'c ()>),
}

impl<'c> Messenger<'c> {
    pub(crate) fn local() -> Self {
        Messenger { kind: Kind::Local(VecDeque::new()) }
    }

    #[cfg(feature = "mpi")]
    pub(crate) fn mpi(inner: crate::mpi::MpiMessenger<'c>) -> Self {
        Messenger { kind: Kind::Mpi(inner) }
    }

    pub fn rank(&self) -> u32 {
        match &self.kind {
            #[cfg(feature = "mpi")]
            Kind::Mpi(m) => m.rank(),
            _ => 0,
        }
    }

    pub fn size(&self) -> u32 {
        match &self.kind {
            #[cfg(feature = "mpi")]
            Kind::Mpi(m) => m.size(),
            _ => 1,
        }
    }

    /// Queues `bytes` for process `to`.
    pub fn send(&mut self, to: u32, bytes: Vec<u8>) -> Result<(), String> {
        match &mut self.kind {
            Kind::Local(queue) if to == 0 => {
                queue.push_back(bytes);
                Ok(())
            }
            #[cfg(feature = "mpi")]
            Kind::Mpi(m) => m.send(to, bytes),
            _ => Err(format!("no process {to} in a single-process run")),
        }
    }

    /// Ends this process's part in the exchange: waits until every process has called `finish` or
    /// `deadline` passes (`None`: wait as long as it takes), discarding messages that arrive meanwhile
    /// so that no sender is left waiting on them. False when some process did not come: it hangs or
    /// died, and the caller should [`crate::World::abort`] the job rather than wait for it in the
    /// collective shutdown. Collective.
    pub fn finish(&mut self, deadline: Option<Instant>) -> bool {
        match &mut self.kind {
            #[cfg(feature = "mpi")]
            Kind::Mpi(m) => m.finish(deadline),
            _ => {
                let _ = deadline;
                true
            }
        }
    }

    /// The next message and its sender, or `None` once `deadline` passes (`None`: wait forever).
    pub fn receive(&mut self, deadline: Option<Instant>) -> Option<(u32, Vec<u8>)> {
        match &mut self.kind {
            Kind::Local(queue) => queue.pop_front().map(|m| (0, m)),
            #[cfg(feature = "mpi")]
            Kind::Mpi(m) => m.receive(deadline),
            #[cfg(not(feature = "mpi"))]
            Kind::Never(_) => {
                let _ = deadline;
                None
            }
        }
    }
}
