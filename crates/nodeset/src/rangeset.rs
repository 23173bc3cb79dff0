//! `RangeSet`: sets of non-negative indices written the ClusterShell way (`1-5,7`, `01-10`, `0-30/3`).

use super::ParseError;
use super::intervals::Intervals;
use num_bigint::BigUint;
use num_traits::{One, ToPrimitive, Zero};
use serde::{Deserialize, Serialize};
use std::cmp::Ordering;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::str::FromStr;

/// One element of a [`RangeSet`]: an index and the number of digits it is written with.
///
/// As in ClusterShell 1.9+, `1` and `01` are different elements: the width is part of the identity. Elements
/// sort by width first, then value (`9` < `10` < `010`), which is how ClusterShell orders its string elements.
/// Indices of any length are elements: up to [`NARROW`] digits they are held as `u64`, wider ones as their
/// digit string (of one width, string order is numeric order), so `node18446744073709551616` folds as
/// ClusterShell folds it.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Index(Repr);

#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
enum Repr {
    /// At most [`NARROW`] digits.
    Narrow { value: u64, width: u8 },
    /// More than [`NARROW`] digits, zero padding included.
    Wide(Box<str>),
}

/// The most digits an index held as a `u64` has: every 19-digit number fits in 64 bits.
pub const NARROW: u32 = 19;

impl Index {
    /// An index written with at least `width` digits (zero-padded); the width grows to fit the value.
    pub fn new(value: u64, width: u8) -> Self {
        let width = width.max(digits(value));
        if u32::from(width) <= NARROW {
            Index(Repr::Narrow { value, width })
        } else {
            Index(Repr::Wide(format!("{value:0width$}", width = usize::from(width)).into()))
        }
    }

    /// An index written without padding.
    pub fn natural(value: u64) -> Self {
        Index::new(value, 0)
    }

    /// The index written as `digits` (ASCII digits, at least one), padding included.
    pub(crate) fn from_digits(digits: &str) -> Self {
        debug_assert!(!digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()));
        match u8::try_from(digits.len()) {
            Ok(width) if u32::from(width) <= NARROW => {
                Index(Repr::Narrow { value: digits.parse().expect("19 digits fit in 64 bits"), width })
            }
            _ => Index(Repr::Wide(digits.into())),
        }
    }

    /// `value` written with at least `pad` digits.
    fn of_number(value: &BigUint, pad: usize) -> Self {
        Index::from_digits(&format!("{value:0pad$}"))
    }

    /// The numeric value when it fits in 64 bits.
    pub fn value(&self) -> Option<u64> {
        match &self.0 {
            Repr::Narrow { value, .. } => Some(*value),
            Repr::Wide(digits) => digits.parse().ok(),
        }
    }

    /// Number of digits the index is written with.
    pub fn width(&self) -> u32 {
        match &self.0 {
            Repr::Narrow { width, .. } => u32::from(*width),
            Repr::Wide(digits) => digits.len() as u32,
        }
    }

    /// True when written with leading zeros (`01`, `00`).
    pub fn is_padded(&self) -> bool {
        match &self.0 {
            Repr::Narrow { value, width } => *width > digits(*value),
            Repr::Wide(digits) => digits.starts_with('0'),
        }
    }
}

impl Ord for Index {
    fn cmp(&self, other: &Self) -> Ordering {
        match (&self.0, &other.0) {
            (Repr::Narrow { value: a, width: wa }, Repr::Narrow { value: b, width: wb }) => {
                (wa, a).cmp(&(wb, b))
            }
            // Of one width, digit strings compare as their numbers.
            (Repr::Wide(a), Repr::Wide(b)) => (a.len(), a).cmp(&(b.len(), b)),
            (Repr::Narrow { .. }, Repr::Wide(_)) => Ordering::Less,
            (Repr::Wide(_), Repr::Narrow { .. }) => Ordering::Greater,
        }
    }
}

impl PartialOrd for Index {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl fmt::Display for Index {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            Repr::Narrow { value, width } => write!(f, "{value:0width$}", width = usize::from(*width)),
            Repr::Wide(digits) => f.write_str(digits),
        }
    }
}

pub(crate) fn digits(value: u64) -> u8 {
    value.checked_ilog10().map_or(1, |d| d as u8 + 1)
}

/// A set of [`Index`] elements with ClusterShell's syntax: comma-separated items, each an index (`7`), a range
/// (`1-5`, `01-10`) or a strided range (`0-30/3`).
///
/// Also used for group member indices and MPI ranks (unpadded, see [`RangeSet::from_values`]). Display folds
/// contiguous runs as ClusterShell does; [`RangeSet::folded`] also folds arithmetic progressions (`0-30/3`),
/// ClusterShell's `autostep`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct RangeSet {
    /// Values per written width up to [`NARROW`] digits; a width's values all have at most that many digits.
    by_width: BTreeMap<u8, Intervals>,
    /// Wider elements per width, as digit strings of exactly that width (host names only: member indices
    /// and ranks are always narrow).
    wide: BTreeMap<u32, BTreeSet<Box<str>>>,
}

/// ClusterShell's bound on one range item (`stop - start < 1e9`): beyond it a set is not worth expanding.
const MAX_RANGE_SPAN: u64 = 1_000_000_000;

impl RangeSet {
    /// The empty set.
    pub fn new() -> Self {
        Self::default()
    }

    /// Unpadded indices (member indices, ranks).
    pub fn from_values(values: impl IntoIterator<Item = u64>) -> Self {
        let mut by_width: BTreeMap<u8, Vec<u64>> = BTreeMap::new();
        for v in values {
            by_width.entry(digits(v)).or_default().push(v);
        }
        let by_width = by_width.into_iter().map(|(w, vs)| (w, vs.into_iter().collect())).collect();
        RangeSet { by_width, wide: BTreeMap::new() }
    }

    /// Unpadded indices `lo..=hi`.
    pub fn from_span(lo: u64, hi: u64) -> Self {
        let mut set = Self::new();
        set.insert_span(lo, hi);
        set
    }

    /// Parses ClusterShell range syntax: `1-5,7`, `01-10`, `0-30/3`.
    pub fn parse(text: &str) -> Result<Self, ParseError> {
        let mut set = RangeSet::new();
        for item in text.split(',') {
            set.parse_item(item)?;
        }
        Ok(set)
    }

    /// One `a`, `a-b` or `a-b/step` item, with ClusterShell's padding rules.
    fn parse_item(&mut self, raw: &str) -> Result<(), ParseError> {
        let item = raw.trim();
        let err = |msg: &str| Err(ParseError::new(item, msg));
        if item.is_empty() {
            return err("empty range");
        }
        let (range, step) = match item.split_once('/') {
            Some((range, step)) => match parse_digits(step.trim()) {
                Ok(step) => (range, step),
                Err(msg) => return err(msg),
            },
            None => (item, BigUint::one()),
        };
        let (begin, end) = match range.split_once('-') {
            None if !step.is_one() => return err("invalid step usage"),
            None => (range.trim(), range.trim()),
            Some((b, e)) if b.trim().is_empty() || e.contains('-') => {
                return err("invalid range (negative indices are not supported)");
            }
            Some((b, e)) => (b.trim(), e.trim()),
        };
        let (start, stop) = match (parse_digits(begin), parse_digits(end)) {
            (Ok(start), Ok(stop)) => (start, stop),
            (Err(msg), _) | (_, Err(msg)) => return err(msg),
        };
        // As in ClusterShell, a zero end (`0-00`) does not count as padded.
        let begin_padded = begin.len() > 1 && begin.starts_with('0');
        let end_padded = end.len() > 1 && end.starts_with('0') && !stop.is_zero();
        if (begin_padded || end_padded) && begin.len() != end.len() {
            return err("padding length mismatch");
        }
        if start > stop || step.is_zero() {
            return err("invalid values in range");
        }
        if &stop - &start >= BigUint::from(MAX_RANGE_SPAN) {
            return err("range too large");
        }
        let pad = if begin_padded { begin.len() } else { 0 };
        if let (Some(start), Some(stop), Some(step), true) =
            (start.to_u64(), stop.to_u64(), step.to_u64(), pad <= NARROW as usize)
        {
            self.insert_narrow_range(start, stop, step, pad as u8);
            return Ok(());
        }
        let mut v = start;
        while v <= stop {
            self.insert(Index::of_number(&v, pad));
            v += &step;
        }
        Ok(())
    }

    /// `start..=stop` by `step`, padded to `pad` digits, every value 64-bit.
    fn insert_narrow_range(&mut self, start: u64, stop: u64, step: u64, pad: u8) {
        if step != 1 {
            let mut v = start;
            while v <= stop {
                self.insert(Index::new(v, pad));
                match v.checked_add(step) {
                    Some(next) => v = next,
                    None => break,
                }
            }
            return;
        }
        // Only the values below 10^pad are padded; the rest keep their natural width.
        let mut lo = start;
        while lo <= stop {
            let width = digits(lo).max(pad);
            if u32::from(width) > NARROW {
                self.insert(Index::new(lo, pad));
                match lo.checked_add(1) {
                    Some(next) => lo = next,
                    None => break,
                }
                continue;
            }
            let width_end = 10u64.checked_pow(u32::from(width)).map_or(u64::MAX, |p| p - 1);
            let hi = stop.min(width_end);
            self.by_width.entry(width).or_default().insert_span(lo, hi);
            match hi.checked_add(1) {
                Some(next) => lo = next,
                None => break,
            }
        }
    }

    /// True when the set has no element.
    pub fn is_empty(&self) -> bool {
        self.by_width.is_empty() && self.wide.is_empty()
    }

    /// Number of elements.
    pub fn len(&self) -> u64 {
        let wide: usize = self.wide.values().map(BTreeSet::len).sum();
        self.by_width.values().map(Intervals::len).sum::<u64>() + wide as u64
    }

    /// Adds one element.
    pub fn insert(&mut self, index: Index) {
        match index.0 {
            Repr::Narrow { value, width } => self.by_width.entry(width).or_default().insert(value),
            Repr::Wide(digits) => {
                self.wide.entry(digits.len() as u32).or_default().insert(digits);
            }
        }
    }

    /// Adds unpadded indices `lo..=hi`.
    pub fn insert_span(&mut self, lo: u64, hi: u64) {
        let mut lo = lo;
        while lo <= hi {
            let width = digits(lo);
            let width_end = 10u64.checked_pow(u32::from(width)).map_or(u64::MAX, |p| p - 1);
            let top = hi.min(width_end);
            self.by_width.entry(width).or_default().insert_span(lo, top);
            match top.checked_add(1) {
                Some(next) => lo = next,
                None => break,
            }
        }
    }

    /// Whether the element (value and padding) is in the set.
    pub fn contains(&self, index: &Index) -> bool {
        match &index.0 {
            Repr::Narrow { value, width } => self.by_width.get(width).is_some_and(|iv| iv.contains(*value)),
            Repr::Wide(digits) => {
                self.wide.get(&(digits.len() as u32)).is_some_and(|set| set.contains(digits))
            }
        }
    }

    /// Whether the unpadded index `value` is in the set.
    pub fn contains_value(&self, value: u64) -> bool {
        self.by_width.get(&digits(value)).is_some_and(|iv| iv.contains(value))
    }

    /// Elements in ClusterShell order (width, then value).
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = Index> + '_ {
        let narrow = self
            .by_width
            .iter()
            .flat_map(|(&width, iv)| iv.iter().map(move |value| Index(Repr::Narrow { value, width })));
        let wide =
            self.wide.values().flat_map(|set| set.iter().map(|digits| Index(Repr::Wide(digits.clone()))));
        narrow.chain(wide)
    }

    /// The values of the elements of at most [`NARROW`] digits, ignoring padding, in element order: every
    /// element of a member or rank set.
    pub fn values(&self) -> impl DoubleEndedIterator<Item = u64> + '_ {
        self.by_width.values().flat_map(Intervals::iter)
    }

    /// The first element in ClusterShell order.
    pub fn first(&self) -> Option<Index> {
        match self.by_width.first_key_value() {
            Some((&width, iv)) => Some(Index(Repr::Narrow { value: iv.first()?, width })),
            None => self.wide.values().next()?.first().map(|digits| Index(Repr::Wide(digits.clone()))),
        }
    }

    /// The last element in ClusterShell order.
    pub fn last(&self) -> Option<Index> {
        match self.wide.values().next_back() {
            Some(set) => set.last().map(|digits| Index(Repr::Wide(digits.clone()))),
            None => {
                let (&width, iv) = self.by_width.last_key_value()?;
                Some(Index(Repr::Narrow { value: iv.last()?, width }))
            }
        }
    }

    /// Elements in either set.
    pub fn union(&self, other: &Self) -> Self {
        let mut by_width = self.by_width.clone();
        for (w, iv) in &other.by_width {
            let merged = by_width.get(w).map_or_else(|| iv.clone(), |mine| mine.union(iv));
            by_width.insert(*w, merged);
        }
        let mut wide = self.wide.clone();
        for (w, set) in &other.wide {
            wide.entry(*w).or_default().extend(set.iter().cloned());
        }
        RangeSet { by_width, wide }
    }

    /// Elements in both sets.
    pub fn intersection(&self, other: &Self) -> Self {
        let by_width = self
            .by_width
            .iter()
            .filter_map(|(w, iv)| other.by_width.get(w).map(|theirs| (*w, iv.intersection(theirs))))
            .filter(|(_, iv)| !iv.is_empty())
            .collect();
        let wide = self
            .wide
            .iter()
            .filter_map(|(w, set)| other.wide.get(w).map(|theirs| (*w, set & theirs)))
            .filter(|(_, set)| !set.is_empty())
            .collect();
        RangeSet { by_width, wide }
    }

    /// Elements in this set but not in `other`.
    pub fn difference(&self, other: &Self) -> Self {
        let empty = Intervals::default();
        let by_width = self
            .by_width
            .iter()
            .map(|(w, iv)| (*w, iv.difference(other.by_width.get(w).unwrap_or(&empty))))
            .filter(|(_, iv)| !iv.is_empty())
            .collect();
        let none = BTreeSet::new();
        let wide = self
            .wide
            .iter()
            .map(|(w, set)| (*w, set - other.wide.get(w).unwrap_or(&none)))
            .filter(|(_, set)| !set.is_empty())
            .collect();
        RangeSet { by_width, wide }
    }

    /// Elements in exactly one of the sets.
    pub fn symmetric_difference(&self, other: &Self) -> Self {
        self.difference(other).union(&other.difference(self))
    }

    /// Whether every element is in `other`.
    pub fn is_subset(&self, other: &Self) -> bool {
        self.by_width.iter().all(|(w, iv)| other.by_width.get(w).is_some_and(|theirs| iv.is_subset(theirs)))
            && self.wide.iter().all(|(w, set)| other.wide.get(w).is_some_and(|theirs| set.is_subset(theirs)))
    }

    /// The ClusterShell string with `autostep`: arithmetic progressions of at least `autostep` elements are
    /// written `a-b/step` (`RangeSet("0,3,6,9", autostep=3)` is `0-9/3`); `None` folds contiguous runs only.
    pub fn folded(&self, autostep: Option<u32>) -> String {
        // Arbitrary-precision arithmetic only when some element needs it.
        if self.wide.is_empty() {
            render(&slices::<u64>(self.iter(), autostep))
        } else {
            render(&slices::<BigUint>(self.iter(), autostep))
        }
    }
}

/// The numbers folding computes with: `u64`, or `BigUint` when some index is wider.
trait Number: Clone + Ord + fmt::Display {
    fn of(index: &Index) -> Self;
    fn unit() -> Self;
    fn minus(&self, other: &Self) -> Self;
    fn plus(&self, other: &Self) -> Self;
    /// `self * factor`, saturating.
    fn times(&self, factor: u64) -> Self;
}

impl Number for u64 {
    fn of(index: &Index) -> Self {
        index.value().expect("a set without wide indices")
    }
    fn unit() -> Self {
        1
    }
    fn minus(&self, other: &Self) -> Self {
        self - other
    }
    fn plus(&self, other: &Self) -> Self {
        self + other
    }
    fn times(&self, factor: u64) -> Self {
        self.saturating_mul(factor)
    }
}

impl Number for BigUint {
    fn of(index: &Index) -> Self {
        match &index.0 {
            Repr::Narrow { value, .. } => BigUint::from(*value),
            Repr::Wide(digits) => digits.parse().expect("indices are digit strings"),
        }
    }
    fn unit() -> Self {
        BigUint::one()
    }
    fn minus(&self, other: &Self) -> Self {
        self - other
    }
    fn plus(&self, other: &Self) -> Self {
        self + other
    }
    fn times(&self, factor: u64) -> Self {
        self * factor
    }
}

/// ClusterShell's `RangeSet._slices_padding`, ported step for step so folding matches it exactly: a greedy
/// left-to-right scan that closes a slice on a padding change or a broken step.
fn slices<N: Number>(elements: impl Iterator<Item = Index>, autostep: Option<u32>) -> Vec<Slice<N>> {
    // ClusterShell stores `autostep - 1` and compares it with `(last - start) / step`.
    let threshold = autostep.map(|a| u64::from(a.saturating_sub(1)));
    let stepped = |start: &N, last: &N, step: &N| match threshold {
        Some(t) => last.minus(start) >= step.times(t),
        None => false,
    };
    let one = N::unit();
    let mut out = Vec::new();
    let singles = |out: &mut Vec<Slice<N>>, from: &N, to_excl: &N, step: &N, pad: usize| {
        let mut j = from.clone();
        while &j < to_excl {
            out.push(Slice { first: j.clone(), last: j.clone(), step: N::unit(), pad });
            j = j.plus(step);
        }
    };
    let mut run: Option<Run<N>> = None;
    for elem in elements {
        let padded = elem.is_padded();
        let idx = N::of(&elem);
        let Some(cur) = run.as_mut() else {
            run = Some(Run { start: idx.clone(), last: idx, step: None, padded, width: elem.width() });
            continue;
        };
        let padding_mismatch = if cur.padded { elem.width() != cur.width } else { padded };
        let step_mismatch =
            !padding_mismatch && cur.step.as_ref().is_some_and(|s| *s != idx.minus(&cur.last));
        if padding_mismatch || step_mismatch {
            let (is_stepped, step) = match &cur.step {
                Some(s) => (*s == one || stepped(&cur.start, &cur.last, s), s.clone()),
                None => (true, one.clone()),
            };
            let pad = cur.pad();
            if is_stepped {
                out.push(Slice { first: cur.start.clone(), last: cur.last.clone(), step, pad });
                cur.start = idx.clone();
                cur.padded = padded;
                cur.width = elem.width();
            } else {
                let stop =
                    if padding_mismatch { cur.last.plus(&one) } else { cur.last.minus(&step).plus(&one) };
                singles(&mut out, &cur.start, &stop, &step, pad);
                if padding_mismatch {
                    cur.start = idx.clone();
                    cur.padded = padded;
                    cur.width = elem.width();
                } else {
                    cur.start = cur.last.clone();
                }
            }
            cur.step = if step_mismatch { Some(idx.minus(&cur.last)) } else { None };
            cur.last = idx;
            continue;
        }
        cur.step = Some(idx.minus(&cur.last));
        cur.last = idx;
    }
    if let Some(cur) = run {
        let pad = cur.pad();
        match cur.step {
            Some(s) if s != one && !stepped(&cur.start, &cur.last, &s) => {
                singles(&mut out, &cur.start, &cur.last.plus(&one), &s, pad)
            }
            step => out.push(Slice { first: cur.start, last: cur.last, step: step.unwrap_or(one), pad }),
        }
    }
    out
}

fn render<N: Number>(slices: &[Slice<N>]) -> String {
    let one = N::unit();
    let mut out = String::new();
    for (i, slice) in slices.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        let pad = slice.pad;
        if slice.first == slice.last {
            out += &format!("{:0pad$}", slice.first);
        } else if slice.step == one {
            out += &format!("{:0pad$}-{:0pad$}", slice.first, slice.last);
        } else {
            out += &format!("{:0pad$}-{:0pad$}/{}", slice.first, slice.last, slice.step);
        }
    }
    out
}

/// The run being built by [`slices`].
struct Run<N> {
    start: N,
    last: N,
    step: Option<N>,
    padded: bool,
    width: u32,
}

impl<N> Run<N> {
    fn pad(&self) -> usize {
        if self.padded { self.width as usize } else { 0 }
    }
}

/// One folded item: `first-last/step`, zero-padded to `pad` digits.
struct Slice<N> {
    first: N,
    last: N,
    step: N,
    pad: usize,
}

fn parse_digits(text: &str) -> Result<BigUint, &'static str> {
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return Err("cannot convert string to integer");
    }
    Ok(text.parse().expect("ASCII digits"))
}

impl fmt::Display for RangeSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.folded(None))
    }
}

impl FromStr for RangeSet {
    type Err = ParseError;
    fn from_str(s: &str) -> Result<Self, ParseError> {
        RangeSet::parse(s)
    }
}

impl FromIterator<Index> for RangeSet {
    fn from_iter<I: IntoIterator<Item = Index>>(iter: I) -> Self {
        let mut set = RangeSet::new();
        for index in iter {
            set.insert(index);
        }
        set
    }
}
