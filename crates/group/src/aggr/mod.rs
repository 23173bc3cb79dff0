//! Aggregations: how the results of one operation on many members become one group result, computed in the
//! tree (at every host for its own members, then at every inner node for its subtree).
//!
//! An aggregation turns one member's [`Value`] into a *partial* result and merges partials. Partials are
//! serialised between tree nodes, so the same merge runs at every level, in threads or across MPI ranks. The
//! framework guarantees that a merge's left input covers members that all precede its right input's, and
//! that failed members never reach an aggregation (they are reported separately, see
//! [`crate::MemberStatus`]), so aggregations are error-aware by construction, as the paper requires.
//!
//! Three kinds, named by an [`AggrSpec`] that travels with each request:
//! - [`Builtin`]s: sum, min, max, average, equal, zero, concat, classes (equivalence classes), checksum;
//! - Rust aggregations implementing [`Aggregation`], registered by name in a [`Registry`] on every rank;
//! - C aggregations loaded from a shared library ([`gloadaggr`]), the ABI in `include/canopy_aggr.h`.

mod builtin;
pub mod decimal;
mod foreign;
mod registry;

pub use builtin::{
    Agreement, Average, Averages, Checksum, Classes, Concat, Concatenation, Digest, Equal, Equivalence,
    Extreme, Extremes, Max, Min, Succeeded, Sum, SumCount, Sums, Zero,
};
pub use foreign::{ForeignPartial, gloadaggr};
pub use registry::Registry;

use crate::host::HostConfig;
use crate::value::Value;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use std::fmt;

/// A custom aggregation in Rust.
///
/// `merge` must be associative: the tree may group members as `(a·b)·c` or `a·(b·c)` depending on its
/// shape, and the result must not change (the tests check every built-in with random tree shapes). It need
/// not be commutative: `left` always covers members that precede `right`'s.
///
/// ```
/// use canopy_group::{Aggregation, Value};
/// use serde::{Deserialize, Serialize};
///
/// /// Longest line length across the group.
/// struct LongestLine;
///
/// #[derive(Serialize, Deserialize)]
/// struct Longest(usize);
///
/// impl Aggregation for LongestLine {
///     type Partial = Longest;
///     fn leaf(&self, _member: u64, value: &Value) -> Longest {
///         let longest = match value {
///             Value::Bytes(data) => data.split(|&b| b == b'\n').map(<[u8]>::len).max().unwrap_or(0),
///             _ => 0,
///         };
///         Longest(longest)
///     }
///     fn merge(&self, left: Longest, right: Longest) -> Longest {
///         Longest(left.0.max(right.0))
///     }
/// }
/// ```
pub trait Aggregation: Send + Sync + 'static {
    /// The partial result carried up the tree; serialised between tree nodes.
    type Partial: Serialize + DeserializeOwned + Send + 'static;

    /// The partial result of one member that succeeded.
    fn leaf(&self, member: u64, value: &Value) -> Self::Partial;

    /// [`Aggregation::leaf`], run on `host`: for an aggregation that also looks at the host itself, such
    /// as the monitor's file-system collector, which stats under the host's root the mount points its
    /// `/proc/mounts` lists. Defaults to `leaf`.
    fn leaf_on(&self, host: &HostConfig, member: u64, value: &Value) -> Self::Partial {
        let _ = host;
        self.leaf(member, value)
    }

    /// Combines two partial results; `left`'s members all precede `right`'s. Must be associative.
    fn merge(&self, left: Self::Partial, right: Self::Partial) -> Self::Partial;
}

/// The built-in aggregations (the paper's six summaries, concatenation, equivalence classes, checksums).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Builtin {
    /// Column-wise sums of the numbers in each value ([`Sums`]).
    Sum,
    /// Column-wise minimum, with the members that hit it ([`Extremes`]).
    Min,
    /// Column-wise maximum, with the members that hit it ([`Extremes`]).
    Max,
    /// Column-wise average, carried as sum and count ([`Averages`]).
    Average,
    /// The common value when all members agree ([`Agreement`]); Table 2's default for lseek.
    Equal,
    /// Zero when every member succeeded ([`Succeeded`]); Table 2's default for close, fstat, fsync, ftruncate.
    Zero,
    /// Every member's value, indexed by member ([`Concatenation`]); the default data aggregation.
    Concat,
    /// Equivalence classes: each distinct value once, with the set of members that produced it
    /// ([`Equivalence`], [`Classes`]).
    Classes,
    /// Equivalence classes of SHA-256 digests: groups identical contents without shipping them ([`Classes`]).
    Checksum,
}

impl Builtin {
    /// Every built-in aggregation.
    pub const ALL: [Builtin; 9] = [
        Builtin::Sum,
        Builtin::Min,
        Builtin::Max,
        Builtin::Average,
        Builtin::Equal,
        Builtin::Zero,
        Builtin::Concat,
        Builtin::Classes,
        Builtin::Checksum,
    ];

    /// The name used on the command line (`sum`, `classes`, ...).
    pub fn name(self) -> &'static str {
        match self {
            Builtin::Sum => "sum",
            Builtin::Min => "min",
            Builtin::Max => "max",
            Builtin::Average => "average",
            Builtin::Equal => "equal",
            Builtin::Zero => "zero",
            Builtin::Concat => "concat",
            Builtin::Classes => "classes",
            Builtin::Checksum => "checksum",
        }
    }

    /// The built-in called `name`, if any.
    pub fn from_name(name: &str) -> Option<Builtin> {
        Builtin::ALL.into_iter().find(|b| b.name() == name)
    }
}

/// Which aggregation to run: sent with every request so each rank can build it.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum AggrSpec {
    /// A built-in aggregation.
    Builtin(Builtin),
    /// A Rust [`Aggregation`] registered under `name` in every rank's [`Registry`]; `params` go to its
    /// factory (the paper's `gbindaggr` parameters).
    Registered {
        /// The name it was registered under.
        name: String,
        /// Given to its factory on every rank.
        params: String,
    },
    /// A C aggregation: `symbol` in the shared library at `path` (which every host must be able to load).
    Library {
        /// Absolute path of the shared library (UTF-8).
        path: String,
        /// Name of the `canopy_aggr_fn` in it.
        symbol: String,
    },
}

impl From<Builtin> for AggrSpec {
    fn from(builtin: Builtin) -> Self {
        AggrSpec::Builtin(builtin)
    }
}

impl fmt::Display for AggrSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AggrSpec::Builtin(b) => f.write_str(b.name()),
            AggrSpec::Registered { name, params } if params.is_empty() => f.write_str(name),
            AggrSpec::Registered { name, params } => write!(f, "{name}({params})"),
            AggrSpec::Library { path, symbol } => write!(f, "{path}:{symbol}"),
        }
    }
}

/// An aggregation that cannot be built or run (unknown name, library that does not load, a C function
/// that returns an error, a partial that does not decode).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct AggrError(pub String);

impl fmt::Display for AggrError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for AggrError {}

/// An aggregation with its partials serialised: what the tree runs, whatever the aggregation's types.
pub(crate) trait ErasedAggregation: Send + Sync {
    /// The partial of `host`'s members (non-empty, in member order).
    fn leaves(&self, host: &HostConfig, members: &[(u64, &Value)]) -> Result<Vec<u8>, AggrError>;
    /// Merges non-empty partials given in member order.
    fn merge(&self, parts: Vec<Vec<u8>>) -> Result<Vec<u8>, AggrError>;
}

/// Adapts a typed [`Aggregation`] to serialised partials.
pub(crate) struct Typed<A>(pub(crate) A);

pub(crate) fn encode<T: Serialize>(value: &T) -> Result<Vec<u8>, AggrError> {
    postcard::to_stdvec(value).map_err(|e| AggrError(format!("cannot encode a partial result: {e}")))
}

pub(crate) fn decode<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, AggrError> {
    postcard::from_bytes(bytes).map_err(|e| AggrError(format!("cannot decode a partial result: {e}")))
}

impl<A: Aggregation> ErasedAggregation for Typed<A> {
    fn leaves(&self, host: &HostConfig, members: &[(u64, &Value)]) -> Result<Vec<u8>, AggrError> {
        let partial = members
            .iter()
            .map(|&(member, value)| self.0.leaf_on(host, member, value))
            .reduce(|left, right| self.0.merge(left, right))
            .ok_or_else(|| AggrError("no member to aggregate".into()))?;
        encode(&partial)
    }

    fn merge(&self, parts: Vec<Vec<u8>>) -> Result<Vec<u8>, AggrError> {
        let mut merged: Option<A::Partial> = None;
        for part in parts {
            let part = decode::<A::Partial>(&part)?;
            merged = Some(match merged {
                Some(left) => self.0.merge(left, part),
                None => part,
            });
        }
        encode(&merged.ok_or_else(|| AggrError("nothing to merge".into()))?)
    }
}

/// A group result: what an aggregation produced for the whole group.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AggrResult {
    spec: AggrSpec,
    partial: Option<Vec<u8>>,
}

impl AggrResult {
    pub(crate) fn new(spec: AggrSpec, partial: Option<Vec<u8>>) -> Self {
        AggrResult { spec, partial }
    }

    /// The aggregation that produced this result.
    pub fn spec(&self) -> &AggrSpec {
        &self.spec
    }

    /// True when no member succeeded, so the aggregation never ran.
    pub fn is_empty(&self) -> bool {
        self.partial.is_none()
    }

    /// The result as the aggregation's partial type: `decode::<Sums>()` for [`Builtin::Sum`],
    /// `decode::<MyAggregation::Partial>()` for a registered one, `decode::<ForeignPartial>()` for a C one.
    /// `None` when no member succeeded.
    pub fn decode<T: DeserializeOwned>(&self) -> Result<Option<T>, AggrError> {
        self.partial.as_deref().map(decode).transpose()
    }
}

#[cfg(test)]
mod tests;
