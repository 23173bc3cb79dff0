//! The built-in aggregations and their partial results.

use super::Aggregation;
use super::decimal::Decimal;
use crate::value::Value;
use canopy_nodeset::RangeSet;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use sha2::{Digest as _, Sha256};
use std::cmp::Ordering;
use std::fmt;

/// Merges two column vectors position by position; a column missing on one side keeps the other side.
fn zip_columns<T>(left: Vec<Option<T>>, right: Vec<Option<T>>, both: impl Fn(T, T) -> T) -> Vec<Option<T>> {
    let len = left.len().max(right.len());
    let (mut left, mut right) = (left.into_iter(), right.into_iter());
    (0..len)
        .map(|_| match (left.next().flatten(), right.next().flatten()) {
            (Some(a), Some(b)) => Some(both(a, b)),
            (a, b) => a.or(b),
        })
        .collect()
}

/// Column-wise sums ([`Sum`]).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Sums(pub Vec<Option<Decimal>>);

/// Sums the numbers of every member, column by column (for a status: the total bytes read or written).
pub struct Sum;

impl Aggregation for Sum {
    type Partial = Sums;
    fn leaf(&self, _member: u64, value: &Value) -> Sums {
        Sums(value.numbers())
    }
    fn merge(&self, left: Sums, right: Sums) -> Sums {
        Sums(zip_columns(left.0, right.0, Decimal::saturating_add))
    }
}

/// A running average: the sum and the number of values, so that merging never averages averages.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SumCount {
    /// Sum of the values.
    pub sum: Decimal,
    /// Number of values.
    pub count: u64,
}

impl SumCount {
    /// `sum / count`, rounded to nine decimals.
    pub fn mean(&self) -> Decimal {
        self.sum.div_count(self.count)
    }
}

/// Column-wise sums and counts ([`Average`]).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Averages(pub Vec<Option<SumCount>>);

impl Averages {
    /// The mean of each column (`None` where no member had a number).
    pub fn means(&self) -> Vec<Option<Decimal>> {
        self.0.iter().map(|c| c.as_ref().map(SumCount::mean)).collect()
    }
}

/// Averages the numbers of every member, column by column.
pub struct Average;

impl Aggregation for Average {
    type Partial = Averages;
    fn leaf(&self, _member: u64, value: &Value) -> Averages {
        Averages(value.numbers().into_iter().map(|n| n.map(|sum| SumCount { sum, count: 1 })).collect())
    }
    fn merge(&self, left: Averages, right: Averages) -> Averages {
        Averages(zip_columns(left.0, right.0, |a, b| SumCount {
            sum: a.sum.saturating_add(b.sum),
            count: a.count + b.count,
        }))
    }
}

/// An extreme value and every member that has it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Extreme {
    /// The extreme value.
    pub value: Decimal,
    /// Every member with that value.
    pub members: RangeSet,
}

/// Column-wise extremes ([`Min`], [`Max`]).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Extremes(pub Vec<Option<Extreme>>);

fn extreme_leaf(member: u64, value: &Value) -> Extremes {
    let members = RangeSet::from_values([member]);
    Extremes(
        value
            .numbers()
            .into_iter()
            .map(|n| n.map(|value| Extreme { value, members: members.clone() }))
            .collect(),
    )
}

fn extreme_merge(left: Extremes, right: Extremes, keep: Ordering) -> Extremes {
    Extremes(zip_columns(left.0, right.0, |a, b| match a.value.cmp(&b.value) {
        Ordering::Equal => Extreme { value: a.value, members: a.members.union(&b.members) },
        order if order == keep => a,
        _ => b,
    }))
}

/// The smallest number in each column, with the members that have it.
pub struct Min;

impl Aggregation for Min {
    type Partial = Extremes;
    fn leaf(&self, member: u64, value: &Value) -> Extremes {
        extreme_leaf(member, value)
    }
    fn merge(&self, left: Extremes, right: Extremes) -> Extremes {
        extreme_merge(left, right, Ordering::Less)
    }
}

/// The largest number in each column, with the members that have it.
pub struct Max;

impl Aggregation for Max {
    type Partial = Extremes;
    fn leaf(&self, member: u64, value: &Value) -> Extremes {
        extreme_leaf(member, value)
    }
    fn merge(&self, left: Extremes, right: Extremes) -> Extremes {
        extreme_merge(left, right, Ordering::Greater)
    }
}

/// Whether all members produced the same value ([`Equal`]).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Agreement {
    /// Every member produced this value.
    Same(Value),
    /// At least two members differ (Table 2: "return invalid offset value").
    Differ,
}

/// The common value of all members, if there is one.
pub struct Equal;

impl Aggregation for Equal {
    type Partial = Agreement;
    fn leaf(&self, _member: u64, value: &Value) -> Agreement {
        Agreement::Same(value.clone())
    }
    fn merge(&self, left: Agreement, right: Agreement) -> Agreement {
        match (left, right) {
            (Agreement::Same(a), Agreement::Same(b)) if a == b => Agreement::Same(a),
            _ => Agreement::Differ,
        }
    }
}

/// How many members succeeded ([`Zero`]); the group status is 0.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Succeeded(pub u64);

/// Zero when all members succeed: failures are reported by the framework, so this only counts successes.
pub struct Zero;

impl Aggregation for Zero {
    type Partial = Succeeded;
    fn leaf(&self, _member: u64, _value: &Value) -> Succeeded {
        Succeeded(1)
    }
    fn merge(&self, left: Succeeded, right: Succeeded) -> Succeeded {
        Succeeded(left.0 + right.0)
    }
}

/// Every member's value, in member order ([`Concat`]).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Concatenation(pub Vec<(u64, Value)>);

/// Concatenation: the array of results indexed by member, the paper's default data aggregation.
pub struct Concat;

impl Aggregation for Concat {
    type Partial = Concatenation;
    fn leaf(&self, member: u64, value: &Value) -> Concatenation {
        Concatenation(vec![(member, value.clone())])
    }
    fn merge(&self, mut left: Concatenation, right: Concatenation) -> Concatenation {
        let in_order = match (left.0.last(), right.0.first()) {
            (Some(l), Some(r)) => l.0 < r.0,
            _ => true,
        };
        left.0.extend(right.0);
        if !in_order {
            left.0.sort_by_key(|(member, _)| *member);
        }
        left
    }
}

/// Equivalence classes: each distinct key once, sorted by key, with the members that produced it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(bound = "K: Serialize + DeserializeOwned")]
pub struct Classes<K>(pub Vec<(K, RangeSet)>);

impl<K: Ord> Classes<K> {
    pub(crate) fn leaf(key: K, member: u64) -> Self {
        Classes(vec![(key, RangeSet::from_values([member]))])
    }

    pub(crate) fn merge(self, other: Self) -> Self {
        let mut out = Vec::with_capacity(self.0.len() + other.0.len());
        let (mut left, mut right) = (self.0.into_iter().peekable(), other.0.into_iter().peekable());
        loop {
            let order = match (left.peek(), right.peek()) {
                (Some(l), Some(r)) => l.0.cmp(&r.0),
                (Some(_), None) => Ordering::Less,
                (None, Some(_)) => Ordering::Greater,
                (None, None) => break,
            };
            out.push(match order {
                Ordering::Less => left.next().expect("peeked"),
                Ordering::Greater => right.next().expect("peeked"),
                Ordering::Equal => {
                    let ((key, a), (_, b)) = (left.next().expect("peeked"), right.next().expect("peeked"));
                    (key, a.union(&b))
                }
            });
        }
        Classes(out)
    }

    /// The classes in the order of their first member (how results are listed).
    pub fn by_first_member(&self) -> Vec<&(K, RangeSet)> {
        let mut classes: Vec<&(K, RangeSet)> = self.0.iter().collect();
        classes.sort_by_key(|(_, members)| members.values().next());
        classes
    }
}

/// Groups members whose values are identical: the pgrep / clush -b aggregation.
pub struct Equivalence;

impl Aggregation for Equivalence {
    type Partial = Classes<Value>;
    fn leaf(&self, member: u64, value: &Value) -> Classes<Value> {
        Classes::leaf(value.clone(), member)
    }
    fn merge(&self, left: Classes<Value>, right: Classes<Value>) -> Classes<Value> {
        left.merge(right)
    }
}

/// A SHA-256 digest.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Digest(pub [u8; 32]);

impl fmt::Display for Digest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.iter().try_for_each(|b| write!(f, "{b:02x}"))
    }
}

/// Groups members by the SHA-256 of their values: only digests travel up the tree.
pub struct Checksum;

impl Aggregation for Checksum {
    type Partial = Classes<Digest>;
    fn leaf(&self, member: u64, value: &Value) -> Classes<Digest> {
        Classes::leaf(Digest(Sha256::digest(value.bytes()).into()), member)
    }
    fn merge(&self, left: Classes<Digest>, right: Classes<Digest>) -> Classes<Digest> {
        left.merge(right)
    }
}
