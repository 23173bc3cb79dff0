//! `RangeSet`: sets of non-negative indices written the ClusterShell way (`1-5,7`, `01-10`, `0-30/3`).

use super::ParseError;
use super::intervals::Intervals;
use serde::{Deserialize, Serialize};
use std::cmp::Ordering;
use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

/// One element of a [`RangeSet`]: an index and the number of digits it is written with.
///
/// As in ClusterShell 1.9+, `1` and `01` are different elements: the width is part of the identity. Elements
/// sort by width first, then value (`9` < `10` < `010`), which is how ClusterShell orders its string elements.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Index {
    value: u64,
    width: u8,
}

impl Index {
    /// An index written with at least `width` digits (zero-padded); the width grows to fit the value.
    pub fn new(value: u64, width: u8) -> Self {
        Index { value, width: width.max(digits(value)) }
    }

    /// An index written without padding.
    pub fn natural(value: u64) -> Self {
        Index { value, width: digits(value) }
    }

    /// The numeric value.
    pub fn value(self) -> u64 {
        self.value
    }

    /// Number of digits the index is written with.
    pub fn width(self) -> u8 {
        self.width
    }

    /// True when written with leading zeros (`01`, `00`).
    pub fn is_padded(self) -> bool {
        self.width > digits(self.value)
    }
}

impl Ord for Index {
    fn cmp(&self, other: &Self) -> Ordering {
        (self.width, self.value).cmp(&(other.width, other.value))
    }
}

impl PartialOrd for Index {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl fmt::Display for Index {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:0width$}", self.value, width = usize::from(self.width))
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
    /// Values per written width; a width's values all have at most that many digits.
    by_width: BTreeMap<u8, Intervals>,
}

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
        RangeSet { by_width: by_width.into_iter().map(|(w, vs)| (w, vs.into_iter().collect())).collect() }
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
            None => (item, 1),
        };
        let (begin, end) = match range.split_once('-') {
            None if step != 1 => return err("invalid step usage"),
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
        let end_padded = end.len() > 1 && end.starts_with('0') && stop != 0;
        if (begin_padded || end_padded) && begin.len() != end.len() {
            return err("padding length mismatch");
        }
        if start > stop || step < 1 {
            return err("invalid values in range");
        }
        let Ok(pad) = u8::try_from(if begin_padded { begin.len() } else { 0 }) else {
            return err("index too long");
        };
        if step == 1 {
            // Only the values below 10^pad are padded; the rest keep their natural width.
            let mut lo = start;
            while lo <= stop {
                let width = digits(lo).max(pad);
                let width_end = 10u64.checked_pow(u32::from(width)).map_or(u64::MAX, |p| p - 1);
                let hi = stop.min(width_end);
                self.by_width.entry(width).or_default().insert_span(lo, hi);
                match hi.checked_add(1) {
                    Some(next) => lo = next,
                    None => break,
                }
            }
        } else {
            let mut v = start;
            while v <= stop {
                self.insert(Index::new(v, pad));
                match v.checked_add(step) {
                    Some(next) => v = next,
                    None => break,
                }
            }
        }
        Ok(())
    }

    /// True when the set has no element.
    pub fn is_empty(&self) -> bool {
        self.by_width.is_empty()
    }

    /// Number of elements.
    pub fn len(&self) -> u64 {
        self.by_width.values().map(Intervals::len).sum()
    }

    /// Adds one element.
    pub fn insert(&mut self, index: Index) {
        self.by_width.entry(index.width).or_default().insert(index.value);
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
    pub fn contains(&self, index: Index) -> bool {
        self.by_width.get(&index.width).is_some_and(|iv| iv.contains(index.value))
    }

    /// Whether the unpadded index `value` is in the set.
    pub fn contains_value(&self, value: u64) -> bool {
        self.contains(Index::natural(value))
    }

    /// Elements in ClusterShell order (width, then value).
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = Index> + '_ {
        self.by_width.iter().flat_map(|(&width, iv)| iv.iter().map(move |value| Index { value, width }))
    }

    /// Element values, ignoring padding, in element order.
    pub fn values(&self) -> impl DoubleEndedIterator<Item = u64> + '_ {
        self.iter().map(Index::value)
    }

    /// The first element in ClusterShell order.
    pub fn first(&self) -> Option<Index> {
        let (&width, iv) = self.by_width.iter().next()?;
        Some(Index { value: iv.first()?, width })
    }

    /// The last element in ClusterShell order.
    pub fn last(&self) -> Option<Index> {
        let (&width, iv) = self.by_width.iter().next_back()?;
        Some(Index { value: iv.last()?, width })
    }

    /// Elements in either set.
    pub fn union(&self, other: &Self) -> Self {
        let mut by_width = self.by_width.clone();
        for (w, iv) in &other.by_width {
            let merged = by_width.get(w).map_or_else(|| iv.clone(), |mine| mine.union(iv));
            by_width.insert(*w, merged);
        }
        RangeSet { by_width }
    }

    /// Elements in both sets.
    pub fn intersection(&self, other: &Self) -> Self {
        self.combine(other, Intervals::intersection)
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
        RangeSet { by_width }
    }

    /// Elements in exactly one of the sets.
    pub fn symmetric_difference(&self, other: &Self) -> Self {
        self.difference(other).union(&other.difference(self))
    }

    /// Whether every element is in `other`.
    pub fn is_subset(&self, other: &Self) -> bool {
        self.by_width.iter().all(|(w, iv)| other.by_width.get(w).is_some_and(|theirs| iv.is_subset(theirs)))
    }

    fn combine(&self, other: &Self, op: fn(&Intervals, &Intervals) -> Intervals) -> Self {
        let by_width = self
            .by_width
            .iter()
            .filter_map(|(w, iv)| other.by_width.get(w).map(|theirs| (*w, op(iv, theirs))))
            .filter(|(_, iv)| !iv.is_empty())
            .collect();
        RangeSet { by_width }
    }

    /// The ClusterShell string with `autostep`: arithmetic progressions of at least `autostep` elements are
    /// written `a-b/step` (`RangeSet("0,3,6,9", autostep=3)` is `0-9/3`); `None` folds contiguous runs only.
    pub fn folded(&self, autostep: Option<u32>) -> String {
        let mut out = String::new();
        for (i, slice) in self.slices(autostep).into_iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            let pad = usize::from(slice.pad);
            if slice.first == slice.last {
                out += &format!("{:0pad$}", slice.first);
            } else if slice.step == 1 {
                out += &format!("{:0pad$}-{:0pad$}", slice.first, slice.last);
            } else {
                out += &format!("{:0pad$}-{:0pad$}/{}", slice.first, slice.last, slice.step);
            }
        }
        out
    }

    /// ClusterShell's `RangeSet._slices_padding`, ported step for step so folding matches it exactly: a greedy
    /// left-to-right scan that closes a slice on a padding change or a broken step.
    fn slices(&self, autostep: Option<u32>) -> Vec<Slice> {
        // ClusterShell stores `autostep - 1` and compares it with `(last - start) / step`.
        let threshold = autostep.map(|a| u64::from(a.saturating_sub(1)));
        let stepped = |start: u64, last: u64, step: u64| match threshold {
            Some(t) => (last - start) >= t.saturating_mul(step),
            None => false,
        };
        let mut out = Vec::new();
        let singles = |out: &mut Vec<Slice>, from: u64, to_excl: u64, step: u64, pad: u8| {
            let mut j = from;
            while j < to_excl {
                out.push(Slice { first: j, last: j, step: 1, pad });
                j += step;
            }
        };
        let mut run: Option<Run> = None;
        for elem in self.iter() {
            let padded = elem.is_padded();
            let Some(cur) = run.as_mut() else {
                run =
                    Some(Run { start: elem.value, last: elem.value, step: None, padded, width: elem.width });
                continue;
            };
            let idx = elem.value;
            let padding_mismatch = if cur.padded { elem.width != cur.width } else { padded };
            let step_mismatch = !padding_mismatch && cur.step.is_some_and(|s| s != idx - cur.last);
            if padding_mismatch || step_mismatch {
                let (is_stepped, step) = match cur.step {
                    Some(s) => (s == 1 || stepped(cur.start, cur.last, s), s),
                    None => (true, 1),
                };
                let pad = cur.pad();
                if is_stepped {
                    out.push(Slice { first: cur.start, last: cur.last, step, pad });
                    *cur = Run { start: idx, last: cur.last, step: cur.step, padded, width: elem.width };
                } else {
                    let stop = if padding_mismatch { cur.last + 1 } else { cur.last - step + 1 };
                    singles(&mut out, cur.start, stop, step, pad);
                    if padding_mismatch {
                        cur.start = idx;
                        cur.padded = padded;
                        cur.width = elem.width;
                    } else {
                        cur.start = cur.last;
                    }
                }
                cur.step = if step_mismatch { Some(idx - cur.last) } else { None };
                cur.last = idx;
                continue;
            }
            cur.step = Some(idx - cur.last);
            cur.last = idx;
        }
        if let Some(cur) = run {
            let pad = cur.pad();
            match cur.step {
                Some(s) if s != 1 && !stepped(cur.start, cur.last, s) => {
                    singles(&mut out, cur.start, cur.last + 1, s, pad)
                }
                step => out.push(Slice { first: cur.start, last: cur.last, step: step.unwrap_or(1), pad }),
            }
        }
        out
    }
}

/// The run being built by [`RangeSet::slices`].
struct Run {
    start: u64,
    last: u64,
    step: Option<u64>,
    padded: bool,
    width: u8,
}

impl Run {
    fn pad(&self) -> u8 {
        if self.padded { self.width } else { 0 }
    }
}

/// One folded item: `first-last/step`, zero-padded to `pad` digits.
struct Slice {
    first: u64,
    last: u64,
    step: u64,
    pad: u8,
}

fn parse_digits(text: &str) -> Result<u64, &'static str> {
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return Err("cannot convert string to integer");
    }
    text.parse().map_err(|_| "index too large (more than 64 bits)")
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
