//! Host names and member indices in ClusterShell's NodeSet / RangeSet syntax.
//!
//! A library without a command line, like `globset`: the group layer names its members with it, the group
//! tools print host sets with it, and `grep --group` folds host names with it.
//!
//! `node[01-03,05]` is `node01,node02,node03,node05` (zero padding kept, and `n[1-2,01-02]` keeps both
//! paddings as ClusterShell 1.9+ does), `rack[1-2]n[1-2]` is a two-dimensional set, `0-30/3` a strided
//! range. Parsing and folding follow ClusterShell's algorithms, so `canopy` prints host sets exactly as `clush`
//! and `nodeset -f` would; the golden tests pin that behaviour.

#![warn(missing_docs)]

mod intervals;
mod nd;
mod parse;
mod rangeset;

pub use rangeset::{Index, RangeSet};

use parse::{Operand, SetOp};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::str::FromStr;

/// A NodeSet or RangeSet string that does not parse.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseError {
    /// The faulty part of the input.
    pub part: String,
    /// What is wrong with it.
    pub message: String,
}

impl ParseError {
    pub(crate) fn new(part: &str, message: &str) -> Self {
        ParseError { part: part.to_owned(), message: message.to_owned() }
    }
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.part.is_empty() {
            write!(f, "{}", self.message)
        } else {
            write!(f, "{}: \"{}\"", self.message, self.part)
        }
    }
}

impl std::error::Error for ParseError {}

/// The literal text of names around their index positions: `rack%sn%s` is `["rack", "n", ""]`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Pattern {
    /// ClusterShell's pattern string (`%` escaped, `%s` per index): the output order is this string's order.
    key: String,
    parts: Vec<String>,
}

impl Pattern {
    fn new(parts: Vec<String>) -> Self {
        let key = parts.iter().map(|p| p.replace('%', "%%")).collect::<Vec<_>>().join("%s");
        Pattern { key, parts }
    }

    fn render(&self, indices: &[String]) -> String {
        let mut out = self.parts[0].clone();
        for (index, part) in indices.iter().zip(&self.parts[1..]) {
            out += index;
            out += part;
        }
        out
    }
}

impl Ord for Pattern {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.key.cmp(&other.key).then_with(|| self.parts.cmp(&other.parts))
    }
}

impl PartialOrd for Pattern {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

/// The names sharing one pattern.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Names {
    /// The pattern has no index: one name.
    Plain,
    /// One index position.
    Linear(RangeSet),
    /// Several index positions, as the set of index vectors.
    Grid(BTreeSet<Vec<Index>>),
}

impl Names {
    fn from_axes(axes: Vec<RangeSet>) -> Names {
        match axes.len() {
            0 => Names::Plain,
            1 => Names::Linear(axes.into_iter().next().expect("one axis")),
            _ => {
                let mut points = BTreeSet::new();
                product(&axes, &mut Vec::new(), &mut points);
                Names::Grid(points)
            }
        }
    }

    fn len(&self) -> u64 {
        match self {
            Names::Plain => 1,
            Names::Linear(rs) => rs.len(),
            Names::Grid(points) => points.len() as u64,
        }
    }

    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Set operation between the index sets of one pattern (never called on plain names).
    fn combine(&self, other: &Names, op: SetOp) -> Names {
        match (self, other) {
            (Names::Linear(a), Names::Linear(b)) => Names::Linear(match op {
                SetOp::Union => a.union(b),
                SetOp::Difference => a.difference(b),
                SetOp::Intersection => a.intersection(b),
                SetOp::SymmetricDifference => a.symmetric_difference(b),
            }),
            (Names::Grid(a), Names::Grid(b)) => Names::Grid(match op {
                SetOp::Union => a | b,
                SetOp::Difference => a - b,
                SetOp::Intersection => a & b,
                SetOp::SymmetricDifference => a ^ b,
            }),
            _ => unreachable!("one pattern always has the same number of index positions"),
        }
    }
}

fn product(axes: &[RangeSet], prefix: &mut Vec<Index>, out: &mut BTreeSet<Vec<Index>>) {
    match axes.split_first() {
        None => {
            out.insert(prefix.clone());
        }
        Some((axis, rest)) => {
            for index in axis.iter() {
                prefix.push(index);
                product(rest, prefix, out);
                prefix.pop();
            }
        }
    }
}

/// A set of host names, printed and parsed in ClusterShell NodeSet syntax.
///
/// ```
/// use canopy_nodeset::NodeSet;
/// let hosts: NodeSet = "node[01-03,05]".parse().unwrap();
/// assert_eq!(hosts.len(), 4);
/// assert!(hosts.contains("node02"));
/// let more = hosts.union(&"node04".parse().unwrap());
/// assert_eq!(more.to_string(), "node[01-05]");
/// assert_eq!("rack[1-2]n[1-2]!rack2n2".parse::<NodeSet>().unwrap().to_string(), "rack1n[1-2],rack2n1");
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct NodeSet {
    patterns: BTreeMap<Pattern, Names>,
}

impl NodeSet {
    /// The empty set.
    pub fn new() -> Self {
        Self::default()
    }

    /// Parses a NodeSet expression: names, bracketed ranges, and the operators `,` (union), `!` (difference),
    /// `&` (intersection) and `^` (symmetric difference), applied left to right.
    pub fn parse(text: &str) -> Result<Self, ParseError> {
        let mut set = NodeSet::new();
        for Operand { op, parts, axes } in parse::scan(text)? {
            let operand = NodeSet::single(Pattern::new(parts), Names::from_axes(axes));
            set = set.apply(&operand, op);
        }
        Ok(set)
    }

    /// The set of the given host names, each taken literally (digit runs become indices, nothing else is
    /// special).
    pub fn from_names<S: AsRef<str>>(names: impl IntoIterator<Item = S>) -> Self {
        let mut set = NodeSet::new();
        for name in names {
            set.insert(name.as_ref());
        }
        set
    }

    /// Adds one host name, taken literally; an empty name is ignored.
    pub fn insert(&mut self, name: &str) {
        let Ok((parts, axes)) = parse::scan_single(name) else {
            return;
        };
        // In place: one name changes one pattern's set, no need for a union of whole sets.
        let indices: Vec<Index> = axes.iter().filter_map(RangeSet::first).collect();
        let names = self.patterns.entry(Pattern::new(parts)).or_insert_with(|| match indices.len() {
            0 => Names::Plain,
            1 => Names::Linear(RangeSet::new()),
            _ => Names::Grid(BTreeSet::new()),
        });
        match names {
            Names::Plain => {}
            Names::Linear(set) => set.insert(indices[0].clone()),
            Names::Grid(points) => {
                points.insert(indices);
            }
        }
    }

    fn single(pattern: Pattern, names: Names) -> Self {
        let mut patterns = BTreeMap::new();
        if !names.is_empty() {
            patterns.insert(pattern, names);
        }
        NodeSet { patterns }
    }

    /// True when the set has no name.
    pub fn is_empty(&self) -> bool {
        self.patterns.is_empty()
    }

    /// Number of names.
    pub fn len(&self) -> u64 {
        self.patterns.values().map(Names::len).sum()
    }

    /// Whether the host name `name` is in the set.
    pub fn contains(&self, name: &str) -> bool {
        let one = NodeSet::from_names([name]);
        !one.is_empty() && one.is_subset(self)
    }

    /// Whether every name of this set is in `other`.
    pub fn is_subset(&self, other: &NodeSet) -> bool {
        self.difference(other).is_empty()
    }

    /// Names in either set (`a,b`).
    pub fn union(&self, other: &NodeSet) -> NodeSet {
        self.apply(other, SetOp::Union)
    }

    /// Names in this set but not in `other` (`a!b`).
    pub fn difference(&self, other: &NodeSet) -> NodeSet {
        self.apply(other, SetOp::Difference)
    }

    /// Names in both sets (`a&b`).
    pub fn intersection(&self, other: &NodeSet) -> NodeSet {
        self.apply(other, SetOp::Intersection)
    }

    /// Names in exactly one of the sets (`a^b`).
    pub fn symmetric_difference(&self, other: &NodeSet) -> NodeSet {
        self.apply(other, SetOp::SymmetricDifference)
    }

    fn apply(&self, other: &NodeSet, op: SetOp) -> NodeSet {
        let mut patterns = BTreeMap::new();
        let keys: BTreeSet<&Pattern> = self.patterns.keys().chain(other.patterns.keys()).collect();
        for pattern in keys {
            let combined = match (self.patterns.get(pattern), other.patterns.get(pattern)) {
                (Some(Names::Plain), Some(Names::Plain)) => match op {
                    SetOp::Union | SetOp::Intersection => Some(Names::Plain),
                    SetOp::Difference | SetOp::SymmetricDifference => None,
                },
                (Some(mine), Some(theirs)) => Some(mine.combine(theirs, op)),
                (Some(mine), None) => (op != SetOp::Intersection).then(|| mine.clone()),
                (None, Some(theirs)) => {
                    matches!(op, SetOp::Union | SetOp::SymmetricDifference).then(|| theirs.clone())
                }
                (None, None) => None,
            };
            if let Some(names) = combined.filter(|n| !n.is_empty()) {
                patterns.insert(pattern.clone(), names);
            }
        }
        NodeSet { patterns }
    }

    /// The folded string; `autostep` also folds arithmetic progressions of at least that many indices
    /// (ClusterShell's `nodeset --autostep`).
    pub fn folded(&self, autostep: Option<u32>) -> String {
        let mut items = Vec::new();
        for (pattern, names) in &self.patterns {
            match names {
                Names::Plain => items.push(pattern.parts[0].clone()),
                Names::Linear(rs) => items.push(pattern.render(&[bracketed(rs, autostep)])),
                Names::Grid(points) => {
                    for vector in nd::fold(points) {
                        let axes: Vec<String> = vector.iter().map(|rs| bracketed(rs, autostep)).collect();
                        items.push(pattern.render(&axes));
                    }
                }
            }
        }
        items.join(",")
    }

    /// Every name, in ClusterShell's order (`nodeset -e`).
    pub fn iter(&self) -> impl Iterator<Item = String> + '_ {
        self.patterns.iter().flat_map(|(pattern, names)| -> Box<dyn Iterator<Item = String> + '_> {
            match names {
                Names::Plain => Box::new(std::iter::once(pattern.parts[0].clone())),
                Names::Linear(rs) => Box::new(rs.iter().map(|i| pattern.render(&[i.to_string()]))),
                Names::Grid(points) => {
                    Box::new(nd::fold(points).into_iter().flat_map(|vector| {
                        let mut expanded = BTreeSet::new();
                        product(&vector, &mut Vec::new(), &mut expanded);
                        // `product` sorts points as vectors of indices, which is itertools.product's order.
                        expanded.into_iter().map(|point| {
                            pattern.render(&point.iter().map(Index::to_string).collect::<Vec<_>>())
                        })
                    }))
                }
            }
        })
    }
}

fn bracketed(rs: &RangeSet, autostep: Option<u32>) -> String {
    let text = rs.folded(autostep);
    if rs.len() > 1 { format!("[{text}]") } else { text }
}

impl fmt::Display for NodeSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.folded(None))
    }
}

impl FromStr for NodeSet {
    type Err = ParseError;
    fn from_str(s: &str) -> Result<Self, ParseError> {
        NodeSet::parse(s)
    }
}

/// Serialised as its folded string, the form people and other tools read.
impl Serialize for NodeSet {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for NodeSet {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        NodeSet::parse(&text).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod golden;
#[cfg(test)]
mod tests;
