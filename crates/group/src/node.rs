//! One rank of the aggregation tree: forwards requests to its children, runs them on its own host, collects
//! the children's partial results within its time budget, and merges everything in member order.

use crate::aggr::{AggrError, AggrSpec, Classes, ErasedAggregation, Registry};
use crate::host::{Delivery, Host, HostConfig, MemberResult, OpenSpec};
use crate::ops::FileOp;
use crate::protocol::{
    self, Envelope, HostOpened, Message, OpPartial, OpenPartial, PartialResult, Reply, Request,
};
use crate::status::MemberStatus;
use crate::topology::{Rank, ReductionTree};
use crate::transport::{Transport, TransportError};
use crate::value::Value;
use canopy_nodeset::RangeSet;
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How a group's members below this rank are laid out: this host's count, then each child's subtree.
#[derive(Clone, Debug, Default)]
struct Route {
    own: u64,
    /// Index of each child's first member, once committed (kept when a child leaves the group, so the
    /// others' members stay where they are).
    child_bases: HashMap<Rank, u64>,
    /// Children still in the group, with the number of members in their subtree.
    children: Vec<(Rank, u64)>,
    /// Children that missed gopen; they are told to close what they opened.
    excluded: Vec<Rank>,
}

impl Route {
    /// The children whose subtrees hold a member `only` selects (every child when `None`).
    fn selected_children(&self, only: Option<&RangeSet>) -> Vec<Rank> {
        let Some(only) = only else {
            return self.children.iter().map(|&(child, _)| child).collect();
        };
        self.children
            .iter()
            .filter(|&&(child, count)| {
                let first = self.child_bases.get(&child).copied().unwrap_or(0);
                count > 0 && !RangeSet::from_span(first, first + count - 1).intersection(only).is_empty()
            })
            .map(|&(child, _)| child)
            .collect()
    }
}

/// A request that arrived while this rank was waiting for its children: its parent gave up on the current
/// one, so the new message is handled next.
pub(crate) struct Interrupted;

pub(crate) struct Node<T: Transport> {
    transport: T,
    topology: ReductionTree,
    host: Host,
    registry: Registry,
    routes: HashMap<u64, Route>,
    pending: Option<(Rank, Message)>,
}

impl<T: Transport> Node<T> {
    pub(crate) fn new(transport: T, topology: ReductionTree, host: HostConfig, registry: Registry) -> Self {
        Node { transport, topology, host: Host::new(host), registry, routes: HashMap::new(), pending: None }
    }

    pub(crate) fn rank(&self) -> Rank {
        self.transport.rank()
    }

    pub(crate) fn topology(&self) -> &ReductionTree {
        &self.topology
    }

    /// The server loop of a non-root rank, until [`Message::Shutdown`].
    pub(crate) fn serve(&mut self) -> Result<(), TransportError> {
        let parent = self.topology.parent(self.rank());
        loop {
            let (from, message) = match self.pending.take() {
                Some(pending) => pending,
                None => match self.transport.receive(None)? {
                    Some((from, bytes)) => match protocol::decode(&bytes) {
                        Some(message) => (from, message),
                        None => continue,
                    },
                    None => continue,
                },
            };
            match message {
                Message::Shutdown => {
                    self.shutdown();
                    return Ok(());
                }
                Message::Request(envelope) if Some(from) == parent => {
                    let seq = envelope.seq;
                    if let Ok(Some(reply)) = self.handle(envelope, Instant::now()) {
                        // A parent that is gone cannot be answered; its own parent reports us missing.
                        let _ = self.transport.send(from, protocol::encode(&Message::Reply { seq, reply }));
                    }
                }
                // Stale replies and strays.
                _ => {}
            }
        }
    }

    /// Runs one request on this rank's subtree; `Ok(None)` for requests without a reply.
    pub(crate) fn handle(
        &mut self,
        envelope: Envelope,
        received: Instant,
    ) -> Result<Option<Reply>, Interrupted> {
        let Envelope { seq, topology, budget, request } = envelope;
        if topology != self.topology.fingerprint() {
            let problem =
                format!("rank {} ({}) was started with another tree topology", self.rank(), self.host.name());
            let reply = match request {
                Request::Open { .. } => {
                    Reply::Opened(OpenPartial { problems: vec![problem], ..Default::default() })
                }
                Request::Op { .. } => Reply::Done(OpPartial::refused(problem)),
                Request::Commit { .. } | Request::Post { .. } => return Ok(None),
            };
            return Ok(Some(reply));
        }
        let timing = Timing::new(&self.topology, self.rank(), budget, received);
        match request {
            Request::Open { group, spec } => {
                self.open(seq, group, spec, &timing).map(|p| Some(Reply::Opened(p)))
            }
            Request::Commit { group, base } => {
                self.commit(seq, group, base);
                Ok(None)
            }
            Request::Op { group, op, status, data, only } => {
                self.op(seq, group, op, &status, data.as_ref(), only, &timing).map(|p| Some(Reply::Done(p)))
            }
            Request::Post { group, op, only } => {
                self.post(seq, group, op, only);
                Ok(None)
            }
        }
    }

    fn open(
        &mut self,
        seq: u64,
        group: u64,
        spec: OpenSpec,
        timing: &Timing,
    ) -> Result<OpenPartial, Interrupted> {
        // Subtrees without a selected rank are left out of the group altogether.
        let children: Vec<Rank> = self
            .topology
            .children(self.rank())
            .iter()
            .copied()
            .filter(|&child| {
                spec.ranks
                    .as_ref()
                    .is_none_or(|ranks| !self.subtree_set(child).intersection(ranks).is_empty())
            })
            .collect();
        let request = Request::Open { group, spec: spec.clone() };
        let reached = self.send_request(seq, timing.child_budget, &children, &request);
        let selected = spec.ranks.as_ref().is_none_or(|ranks| ranks.contains_value(self.rank() as u64));
        let opened = self.host.open(group, &spec, selected);
        let mut partial = OpenPartial {
            hosts: vec![HostOpened {
                rank: self.rank(),
                name: self.host.name().to_owned(),
                members: opened.members,
                failures: opened.failures,
            }],
            ..Default::default()
        };
        let replies = self.collect(seq, &reached, timing.collect_until)?;
        let mut route = Route { own: self.host.member_count(group), ..Default::default() };
        for (child, reply) in children.iter().zip(Self::align(&children, &reached, replies)) {
            match reply {
                Some(Reply::Opened(child_partial)) => {
                    route.children.push((*child, child_partial.member_count()));
                    partial.absorb(child_partial);
                }
                _ => {
                    route.excluded.push(*child);
                    partial.missing = partial.missing.union(&self.subtree_set(*child));
                }
            }
        }
        self.routes.insert(group, route);
        Ok(partial)
    }

    fn commit(&mut self, seq: u64, group: u64, base: Option<u64>) {
        self.host.commit(group, base);
        let Some(base) = base else {
            // Closing: tell every child, whether or not it answered gopen (or we even know the group).
            let route = self.routes.remove(&group);
            let children = match route {
                Some(route) => route.children.iter().map(|&(c, _)| c).chain(route.excluded).collect(),
                None => self.topology.children(self.rank()).to_vec(),
            };
            for child in children {
                self.send_commit(seq, child, group, None);
            }
            return;
        };
        let Some(route) = self.routes.get_mut(&group) else {
            return;
        };
        let mut next = base + route.own;
        let assignments: Vec<(Rank, Option<u64>)> = route
            .children
            .iter()
            .map(|&(child, count)| {
                let child_base = next;
                next += count;
                route.child_bases.insert(child, child_base);
                (child, Some(child_base))
            })
            .chain(route.excluded.drain(..).map(|child| (child, None)))
            .collect();
        for (child, child_base) in assignments {
            self.send_commit(seq, child, group, child_base);
        }
    }

    fn send_commit(&mut self, seq: u64, child: Rank, group: u64, base: Option<u64>) {
        let request = Request::Commit { group, base };
        self.send_request(seq, Duration::ZERO, &[child], &request);
    }

    #[allow(clippy::too_many_arguments)] // one request's fields
    fn op(
        &mut self,
        seq: u64,
        group: u64,
        op: FileOp,
        status_spec: &AggrSpec,
        data_spec: Option<&AggrSpec>,
        only: Option<RangeSet>,
        timing: &Timing,
    ) -> Result<OpPartial, Interrupted> {
        let Some(route) = self.routes.get(&group).cloned() else {
            return Ok(OpPartial::refused(format!("{}: no group {group} here", self.host.name())));
        };
        let children = route.selected_children(only.as_ref());
        let request = Request::Op {
            group,
            op: op.clone(),
            status: status_spec.clone(),
            data: data_spec.cloned(),
            only: only.clone(),
        };
        let reached = self.send_request(seq, timing.child_budget, &children, &request);

        let status_aggr = self.registry.resolve(status_spec);
        let data_aggr = data_spec.map(|spec| self.registry.resolve(spec));
        let Some(results) = self.host.apply(group, &op, only.as_ref(), Delivery::Acknowledged) else {
            return Ok(OpPartial::refused(format!("{}: group {group} is not open here", self.host.name())));
        };
        let mut parts = vec![local_partial(self.host.config(), results, &status_aggr, data_aggr.as_ref())];
        let replies = self.collect(seq, &reached, timing.collect_until)?;
        let mut missing = RangeSet::new();
        let mut lost = Vec::new();
        for (child, reply) in children.iter().zip(Self::align(&children, &reached, replies)) {
            match reply {
                Some(Reply::Done(partial)) => parts.push(partial),
                _ => {
                    missing = missing.union(&self.subtree_set(*child));
                    lost.push(*child);
                }
            }
        }
        if op == FileOp::Close {
            self.routes.remove(&group);
        } else if let Some(route) = self.routes.get_mut(&group) {
            // A child that missed an operation leaves the group: the client counts its members unreachable
            // from now on, and the child closes its files if it ever comes back.
            route.children.retain(|(c, _)| !lost.contains(c));
        }
        for child in lost {
            self.send_commit(seq, child, group, None);
        }
        let mut merged = merge_partials(parts, &status_aggr, data_aggr.as_ref());
        merged.missing = merged.missing.union(&missing);
        Ok(merged)
    }

    /// Forwards a posted operation to the selected children and applies it here; nothing is answered.
    fn post(&mut self, seq: u64, group: u64, op: FileOp, only: Option<RangeSet>) {
        let Some(route) = self.routes.get(&group) else {
            return;
        };
        let children = route.selected_children(only.as_ref());
        let request = Request::Post { group, op, only };
        self.send_request(seq, Duration::ZERO, &children, &request);
        let Request::Post { op, only, .. } = request else { unreachable!("built above") };
        // A member that is not open here has nothing to defer; the next acknowledged operation says so.
        let _ = self.host.apply(group, &op, only.as_ref(), Delivery::Posted);
    }

    /// Sends a request to each child and returns those it could be sent to.
    fn send_request(
        &mut self,
        seq: u64,
        budget: Duration,
        children: &[Rank],
        request: &Request,
    ) -> Vec<Rank> {
        let envelope =
            Envelope { seq, topology: self.topology.fingerprint(), budget, request: request.clone() };
        let bytes = protocol::encode(&Message::Request(envelope));
        children.iter().copied().filter(|&child| self.transport.send(child, bytes.clone()).is_ok()).collect()
    }

    /// Tells the subtree to stop serving.
    pub(crate) fn shutdown(&mut self) {
        let bytes = protocol::encode(&Message::Shutdown);
        for child in self.topology.children(self.rank()).to_vec() {
            let _ = self.transport.send(child, bytes.clone());
        }
    }

    /// Waits until every child in `expected` answered request `seq`, or `until`.
    fn collect(
        &mut self,
        seq: u64,
        expected: &[Rank],
        until: Instant,
    ) -> Result<Vec<Option<Reply>>, Interrupted> {
        let mut replies: Vec<Option<Reply>> = expected.iter().map(|_| None).collect();
        let mut waiting = expected.len();
        let parent = self.topology.parent(self.rank());
        while waiting > 0 {
            let Ok(Some((from, bytes))) = self.transport.receive(Some(until)) else {
                break;
            };
            match protocol::decode(&bytes) {
                Some(Message::Reply { seq: s, reply }) if s == seq => {
                    if let Some(slot) = expected.iter().position(|&c| c == from)
                        && replies[slot].is_none()
                    {
                        replies[slot] = Some(reply);
                        waiting -= 1;
                    }
                }
                Some(message @ Message::Shutdown) => {
                    self.pending = Some((from, message));
                    return Err(Interrupted);
                }
                Some(message @ Message::Request(_)) if Some(from) == parent => {
                    self.pending = Some((from, message));
                    return Err(Interrupted);
                }
                _ => {}
            }
        }
        Ok(replies)
    }

    /// Replies per child of `children` (`None` for those the request did not reach).
    fn align(children: &[Rank], reached: &[Rank], replies: Vec<Option<Reply>>) -> Vec<Option<Reply>> {
        let mut by_child: HashMap<Rank, Reply> =
            reached.iter().copied().zip(replies).filter_map(|(c, r)| r.map(|r| (c, r))).collect();
        children.iter().map(|c| by_child.remove(c)).collect()
    }

    fn subtree_set(&self, rank: Rank) -> RangeSet {
        RangeSet::from_values(self.topology.subtree(rank).into_iter().map(|r| r as u64))
    }
}

/// When a rank must stop waiting for its children: children get a share of this rank's budget that shrinks
/// with depth (`budget·h/(h+1)` at height `h`), and the rank waits until half of the remainder is also gone,
/// keeping the other half to merge and answer. A dead grandchild then shows up as itself, not as its whole
/// subtree timing out at every level at once.
struct Timing {
    child_budget: Duration,
    collect_until: Instant,
}

impl Timing {
    fn new(topology: &ReductionTree, rank: Rank, budget: Duration, received: Instant) -> Timing {
        let height = topology.height(rank);
        let child_budget = budget.mul_f64(f64::from(height) / f64::from(height + 1));
        let collect_until = received + child_budget + (budget - child_budget) / 2;
        Timing { child_budget, collect_until }
    }
}

type Resolved = Result<Arc<dyn ErasedAggregation>, AggrError>;

/// This host's partial: every member's status, and the aggregations over the members that succeeded.
fn local_partial(
    host: &HostConfig,
    results: Vec<MemberResult>,
    status_aggr: &Resolved,
    data_aggr: Option<&Resolved>,
) -> OpPartial {
    let mut classes: BTreeMap<MemberStatus, Vec<u64>> = BTreeMap::new();
    let mut status_values = Vec::new();
    let mut data_values = Vec::new();
    for (member, status, data) in results {
        classes.entry(status).or_default().push(member);
        if let MemberStatus::Ok(value) = status {
            status_values.push((member, Value::Int(value)));
            if let Some(data) = data {
                data_values.push((member, data));
            }
        }
    }
    let statuses = Classes(
        classes.into_iter().map(|(status, members)| (status, RangeSet::from_values(members))).collect(),
    );
    OpPartial {
        statuses,
        status: aggregate_leaves(host, status_aggr, &status_values),
        data: data_aggr.map_or(Ok(None), |aggr| aggregate_leaves(host, aggr, &data_values)),
        missing: RangeSet::new(),
        problems: Vec::new(),
    }
}

fn aggregate_leaves(host: &HostConfig, aggr: &Resolved, values: &[(u64, Value)]) -> PartialResult {
    let aggr = aggr.as_ref().map_err(Clone::clone)?;
    if values.is_empty() {
        return Ok(None);
    }
    let refs: Vec<(u64, &Value)> = values.iter().map(|(m, v)| (*m, v)).collect();
    aggr.leaves(host, &refs).map(Some)
}

/// Merges partials given in member order.
fn merge_partials(parts: Vec<OpPartial>, status_aggr: &Resolved, data_aggr: Option<&Resolved>) -> OpPartial {
    let mut statuses = Classes(Vec::new());
    let mut status_parts = Vec::new();
    let mut data_parts = Vec::new();
    let mut missing = RangeSet::new();
    let mut problems = Vec::new();
    for part in parts {
        statuses = statuses.merge(part.statuses);
        status_parts.push(part.status);
        data_parts.push(part.data);
        missing = missing.union(&part.missing);
        problems.extend(part.problems);
    }
    OpPartial {
        statuses,
        status: merge_results(status_aggr, status_parts),
        data: data_aggr.map_or(Ok(None), |aggr| merge_results(aggr, data_parts)),
        missing,
        problems,
    }
}

fn merge_results(aggr: &Resolved, parts: Vec<PartialResult>) -> PartialResult {
    let mut present = Vec::new();
    for part in parts {
        if let Some(bytes) = part? {
            present.push(bytes);
        }
    }
    match present.len() {
        0 => Ok(None),
        1 => Ok(present.pop()),
        _ => aggr.as_ref().map_err(Clone::clone)?.merge(present).map(Some),
    }
}
