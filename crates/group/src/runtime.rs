//! The client side (rank 0, the root of the tree) and the server loop of every other rank.

use crate::aggr::{AggrSpec, Registry};
use crate::group::{Group, GroupError, OpenReport};
use crate::host::{HostConfig, OpenSpec};
use crate::node::Node;
use crate::ops::{AggrType, Bindings, OpKind, OpenFlags};
use crate::protocol::{Envelope, Reply, Request};
use crate::topology::ReductionTree;
use crate::transport::{Transport, TransportError};
use canopy_nodeset::RangeSet;
use std::cell::{Cell, RefCell};
use std::time::{Duration, Instant};

/// The client of the group layer: opens groups and runs their operations through the aggregation tree.
///
/// Runs on rank 0, which is also the root of the tree and serves its own host's files; every other rank
/// runs [`serve`] with the same topology and registry. Dropping the runtime shuts the servers down.
pub struct Runtime<T: Transport> {
    node: RefCell<Node<T>>,
    next_seq: Cell<u64>,
    next_group: Cell<u64>,
    timeout: Cell<Duration>,
    defaults: RefCell<Bindings>,
}

impl<T: Transport> Runtime<T> {
    /// Default time an operation waits for the hosts before reporting the silent ones missing.
    pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);

    /// The client on `transport`'s rank 0, serving `host` itself.
    pub fn new(
        transport: T,
        topology: ReductionTree,
        host: HostConfig,
        registry: Registry,
    ) -> Result<Self, GroupError> {
        if transport.rank() != 0 {
            return Err(GroupError::Usage(format!(
                "the client runs on rank 0, not rank {}; other ranks call serve()",
                transport.rank()
            )));
        }
        if transport.size() != topology.size() {
            return Err(GroupError::Usage(format!(
                "the transport has {} ranks but the topology {}",
                transport.size(),
                topology.size()
            )));
        }
        Ok(Runtime {
            node: RefCell::new(Node::new(transport, topology, host, registry)),
            next_seq: Cell::new(1),
            next_group: Cell::new(1),
            timeout: Cell::new(Self::DEFAULT_TIMEOUT),
            defaults: RefCell::new(Bindings::default()),
        })
    }

    /// Number of hosts (ranks), the client's included.
    pub fn hosts(&self) -> usize {
        self.node.borrow().topology().size()
    }

    /// How long an operation waits for the hosts.
    pub fn timeout(&self) -> Duration {
        self.timeout.get()
    }

    /// How long an operation waits for the hosts; those that have not answered by then are reported missing
    /// and leave the group.
    pub fn set_timeout(&self, timeout: Duration) {
        self.timeout.set(timeout);
    }

    /// Opens a group: on every host, the file at `path`, the files in directory `path`, or the files
    /// matching glob `path` (see the crate documentation), under the host's root. Fails if any member fails
    /// to open or any host does not answer, unless `flags` has [`OpenFlags::BESTEFFORT`], which succeeds when
    /// any member opens. Files are created with mode 0o644 when `flags` has [`OpenFlags::CREAT`].
    pub fn gopen(&self, path: &str, flags: OpenFlags) -> Result<Group<'_, T>, GroupError> {
        self.gopen_mode(path, flags, 0o644)
    }

    /// [`Runtime::gopen`] with the creation mode of new files.
    pub fn gopen_mode(&self, path: &str, flags: OpenFlags, mode: u32) -> Result<Group<'_, T>, GroupError> {
        self.open(OpenSpec { path: path.to_owned(), flags, mode, ranks: None })
    }

    /// [`Runtime::gopen_mode`] on the hosts of `ranks` only (see [`Group::ranks_of`]): a sub-group, such
    /// as the hosts whose copy of a file needs the same update. Other hosts are not asked.
    pub fn gopen_on(
        &self,
        path: &str,
        flags: OpenFlags,
        mode: u32,
        ranks: &RangeSet,
    ) -> Result<Group<'_, T>, GroupError> {
        self.open(OpenSpec { path: path.to_owned(), flags, mode, ranks: Some(ranks.clone()) })
    }

    fn open(&self, spec: OpenSpec) -> Result<Group<'_, T>, GroupError> {
        let flags = spec.flags;
        let id = self.next_group.get();
        self.next_group.set(id + 1);
        let partial = match self.ask(Request::Open { group: id, spec }) {
            Some(Reply::Opened(partial)) => partial,
            _ => {
                return Err(GroupError::Refused(vec!["the root gave no answer to gopen".into()]));
            }
        };
        if !partial.problems.is_empty() {
            self.tell(Request::Commit { group: id, base: None });
            return Err(GroupError::Refused(partial.problems));
        }
        let report = OpenReport::from_partial(&partial);
        let accepted = if flags.contains(OpenFlags::BESTEFFORT) {
            report.opened > 0
        } else {
            report.failures.is_empty() && report.missing.is_empty()
        };
        if !accepted {
            self.tell(Request::Commit { group: id, base: None });
            return Err(GroupError::Open(report));
        }
        self.tell(Request::Commit { group: id, base: Some(0) });
        Ok(Group::new(self, id, partial, report, self.defaults.borrow().clone()))
    }

    /// Binds an aggregation to an operation for groups opened from now on (the paper's `gbindaggr` with
    /// `gfd == -1`).
    pub fn gbindaggr(&self, op: OpKind, ty: AggrType, spec: AggrSpec) -> Result<(), GroupError> {
        self.defaults.borrow_mut().bind(op, ty, spec).map_err(GroupError::Usage)
    }

    /// Runs a request through the tree and returns the root's merged reply.
    pub(crate) fn ask(&self, request: Request) -> Option<Reply> {
        let envelope = self.envelope(request);
        // The root has no parent, so nothing can interrupt it.
        self.node.borrow_mut().handle(envelope, Instant::now()).ok().flatten()
    }

    /// Sends a request that has no reply.
    pub(crate) fn tell(&self, request: Request) {
        let envelope = self.envelope(request);
        let _ = self.node.borrow_mut().handle(envelope, Instant::now());
    }

    fn envelope(&self, request: Request) -> Envelope {
        let seq = self.next_seq.get();
        self.next_seq.set(seq + 1);
        let topology = self.node.borrow().topology().fingerprint();
        Envelope { seq, topology, budget: self.timeout.get(), request }
    }
}

impl<T: Transport> Drop for Runtime<T> {
    fn drop(&mut self) {
        self.node.get_mut().shutdown();
    }
}

/// Serves this host's files to the tree until the client shuts down: the whole job of every rank but 0.
/// `topology` and `registry` must be the ones rank 0 uses.
pub fn serve<T: Transport>(
    transport: T,
    topology: ReductionTree,
    host: HostConfig,
    registry: Registry,
) -> Result<(), TransportError> {
    if transport.rank() == 0 {
        return Err(TransportError("rank 0 runs the client (Runtime), not serve()".into()));
    }
    if transport.size() != topology.size() {
        return Err(TransportError(format!(
            "the transport has {} ranks but the topology {}",
            transport.size(),
            topology.size()
        )));
    }
    Node::new(transport, topology, host, registry).serve()
}
