//! Messages between tree nodes, serialised with postcard.

use crate::aggr::{AggrError, AggrSpec, Classes};
use crate::host::OpenSpec;
use crate::ops::FileOp;
use crate::status::{Errno, MemberStatus};
use crate::topology::Rank;
use canopy_nodeset::RangeSet;
use serde::{Deserialize, Serialize};
use std::time::Duration;

#[derive(Debug, Serialize, Deserialize)]
pub(crate) enum Message {
    /// Goes down the tree; every rank forwards it to its children.
    Request(Envelope),
    /// Goes up the tree: a subtree's merged answer to request `seq`.
    Reply { seq: u64, reply: Reply },
    /// Stops the server loop (after forwarding to the children).
    Shutdown,
}

#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct Envelope {
    /// Increases with every request of the client; replies to older requests are stale.
    pub(crate) seq: u64,
    /// [`ReductionTree::fingerprint`](crate::ReductionTree::fingerprint) of the sender's tree.
    pub(crate) topology: u64,
    /// Time the receiving rank has to answer, counted from when it receives the request.
    pub(crate) budget: Duration,
    pub(crate) request: Request,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) enum Request {
    /// Open the files of a path on every host (answered with [`Reply::Opened`]).
    Open { group: u64, spec: OpenSpec },
    /// Number the members from `base` in tree order, or close them (`None`); not answered.
    Commit { group: u64, base: Option<u64> },
    /// Apply an operation to the members `only` selects (all when `None`) and aggregate (answered with
    /// [`Reply::Done`]).
    Op { group: u64, op: FileOp, status: AggrSpec, data: Option<AggrSpec>, only: Option<RangeSet> },
    /// Apply an operation without answering: failures wait for each member's next [`Request::Op`]. Lets
    /// the client stream writes down the tree without a round trip each.
    Post { group: u64, op: FileOp, only: Option<RangeSet> },
}

#[derive(Debug, Serialize, Deserialize)]
pub(crate) enum Reply {
    Opened(OpenPartial),
    Done(OpPartial),
}

/// What one host opened.
#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct HostOpened {
    pub(crate) rank: Rank,
    pub(crate) name: String,
    pub(crate) members: Vec<Vec<u8>>,
    pub(crate) failures: Vec<(Vec<u8>, Errno)>,
}

/// A subtree's answer to Open: its hosts in member order.
#[derive(Debug, Default, Serialize, Deserialize)]
pub(crate) struct OpenPartial {
    pub(crate) hosts: Vec<HostOpened>,
    /// Ranks that did not answer in time.
    pub(crate) missing: RangeSet,
    /// Ranks that refused the request (another topology), with why.
    pub(crate) problems: Vec<String>,
}

impl OpenPartial {
    pub(crate) fn member_count(&self) -> u64 {
        self.hosts.iter().map(|h| h.members.len() as u64).sum()
    }

    pub(crate) fn absorb(&mut self, other: OpenPartial) {
        self.hosts.extend(other.hosts);
        self.missing = self.missing.union(&other.missing);
        self.problems.extend(other.problems);
    }
}

/// A partial aggregate, or why there is none; `Ok(None)` when no member of the subtree succeeded.
pub(crate) type PartialResult = Result<Option<Vec<u8>>, AggrError>;

/// A subtree's answer to an operation.
#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct OpPartial {
    /// Every member's status, as equivalence classes (what gstatus returns).
    pub(crate) statuses: Classes<MemberStatus>,
    pub(crate) status: PartialResult,
    pub(crate) data: PartialResult,
    pub(crate) missing: RangeSet,
    pub(crate) problems: Vec<String>,
}

impl OpPartial {
    /// The answer of a rank that cannot run the operation at all.
    pub(crate) fn refused(problem: String) -> OpPartial {
        OpPartial {
            statuses: Classes(Vec::new()),
            status: Ok(None),
            data: Ok(None),
            missing: RangeSet::new(),
            problems: vec![problem],
        }
    }
}

pub(crate) fn encode(message: &Message) -> Vec<u8> {
    postcard::to_stdvec(message).expect("protocol messages always serialise")
}

pub(crate) fn decode(bytes: &[u8]) -> Option<Message> {
    postcard::from_bytes(bytes).ok()
}
