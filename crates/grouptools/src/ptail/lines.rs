//! The line-equivalence aggregation of ptail (TBON-FS §4.1.3): each host splits what it read into lines,
//! strips host-specific fields and sets a leading timestamp aside, and equal lines from any hosts become one
//! entry with the set of members that logged it and the earliest of their timestamps. The k-th occurrence of a line on a host meets the k-th on the others, so a host that
//! logs the same line twice keeps both. The incomplete last line of each read is left for the next one:
//! its length comes back so the client can seek back over it.

use super::strip::{Strip, cut_time, time_order};
use canopy_group::{Aggregation, Registry, Value};
use canopy_nodeset::RangeSet;
use serde::{Deserialize, Serialize};

/// Registry name of [`LineEquivalence`]; its parameter is a JSON [`Params`].
pub const AGGREGATION: &str = "ptail-lines";

/// How each host cuts its bytes into lines.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Params {
    /// Strip rules (regular expressions).
    pub strip: Vec<String>,
    /// The read started inside a line: drop the first one.
    pub skip_first: bool,
    /// Keep only the last this many complete lines.
    pub last: Option<usize>,
    /// Set a leading timestamp aside (lines then compare without it).
    pub cut_time: bool,
}

/// One distinct line (after stripping), with who logged it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Line {
    /// The stripped line, without its newline.
    pub text: Vec<u8>,
    /// Which occurrence on each host (0 for the first).
    pub occurrence: u32,
    /// The members that logged it.
    pub members: RangeSet,
    /// Where it first appeared: (member, line number in that read), to print lines in log order.
    pub first: (u64, u32),
    /// The earliest timestamp set aside from the line on any member.
    pub time: Option<Vec<u8>>,
}

impl Line {
    /// The earlier of two timestamps (either may be missing).
    pub fn earliest(a: Option<Vec<u8>>, b: Option<Vec<u8>>) -> Option<Vec<u8>> {
        match (a, b) {
            (Some(a), Some(b)) => Some(if time_order(&b) < time_order(&a) { b } else { a }),
            (a, b) => a.or(b),
        }
    }
}

/// A read's lines across members.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Lines {
    /// Sorted by (text, occurrence).
    pub lines: Vec<Line>,
    /// Lengths of the incomplete last lines, with the members that have them.
    pub partial: Vec<(u64, RangeSet)>,
}

impl Lines {
    /// The lines in log order: by first member, then line number.
    pub fn in_order(mut self) -> Vec<Line> {
        self.lines.sort_by_key(|l| l.first);
        self.lines
    }
}

/// The aggregation.
pub struct LineEquivalence {
    strip: Strip,
    params: Params,
}

impl Aggregation for LineEquivalence {
    type Partial = Lines;

    fn leaf(&self, member: u64, value: &Value) -> Lines {
        let Value::Bytes(data) = value else { return Lines::default() };
        let complete = data.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
        let mut text: Vec<&[u8]> = data[..complete].split(|&b| b == b'\n').collect();
        text.pop(); // after the last newline
        if self.params.skip_first && !text.is_empty() {
            text.remove(0);
        }
        if let Some(last) = self.params.last {
            text.drain(..text.len().saturating_sub(last));
        }
        let mut lines: Vec<Line> = Vec::with_capacity(text.len());
        let mut seen: std::collections::HashMap<Vec<u8>, u32> = std::collections::HashMap::new();
        for (number, line) in text.into_iter().enumerate() {
            let stripped = self.strip.apply(line);
            let (time, rest) = if self.params.cut_time { cut_time(&stripped) } else { (None, &stripped[..]) };
            let count = seen.entry(rest.to_vec()).or_insert(0);
            lines.push(Line {
                text: rest.to_vec(),
                occurrence: *count,
                members: RangeSet::from_values([member]),
                first: (member, number as u32),
                time: time.map(<[u8]>::to_vec),
            });
            *count += 1;
        }
        lines.sort_by(|a, b| (&a.text, a.occurrence).cmp(&(&b.text, b.occurrence)));
        let partial = (data.len() - complete) as u64;
        Lines { lines, partial: vec![(partial, RangeSet::from_values([member]))] }
    }

    fn merge(&self, left: Lines, right: Lines) -> Lines {
        let mut merged = Vec::with_capacity(left.lines.len() + right.lines.len());
        let mut right_lines = right.lines.into_iter().peekable();
        for line in left.lines {
            while let Some(r) =
                right_lines.next_if(|r| (&r.text, r.occurrence) < (&line.text, line.occurrence))
            {
                merged.push(r);
            }
            match right_lines.next_if(|r| (&r.text, r.occurrence) == (&line.text, line.occurrence)) {
                Some(r) => merged.push(Line {
                    members: line.members.union(&r.members),
                    first: line.first.min(r.first),
                    time: Line::earliest(line.time, r.time),
                    ..line
                }),
                None => merged.push(line),
            }
        }
        merged.extend(right_lines);
        let mut partial = left.partial;
        for (len, members) in right.partial {
            match partial.iter_mut().find(|(l, _)| *l == len) {
                Some((_, set)) => *set = set.union(&members),
                None => partial.push((len, members)),
            }
        }
        partial.sort_by_key(|(len, _)| *len);
        Lines { lines: merged, partial }
    }
}

impl LineEquivalence {
    /// The aggregation for `params` (fails on a strip rule that does not compile).
    pub fn new(params: Params) -> Result<LineEquivalence, String> {
        Ok(LineEquivalence { strip: Strip::new(&params.strip)?, params })
    }
}

/// Registers [`LineEquivalence`] (every host must).
pub fn register(registry: &mut Registry) {
    registry.register(AGGREGATION, |params: &str| {
        LineEquivalence::new(serde_json::from_str(params).map_err(|e| e.to_string())?)
    });
}

#[cfg(test)]
mod tests {
    use super::super::strip::SYSLOG;
    use super::*;

    fn aggregation(last: Option<usize>) -> LineEquivalence {
        let strip: Vec<String> = SYSLOG.iter().map(|s| s.to_string()).collect();
        LineEquivalence {
            strip: Strip::new(&strip).unwrap(),
            params: Params { strip, skip_first: false, last, cut_time: true },
        }
    }

    fn leaf(a: &LineEquivalence, member: u64, text: &str) -> Lines {
        a.leaf(member, &Value::Bytes(text.as_bytes().to_vec()))
    }

    fn show(lines: Lines) -> Vec<String> {
        lines
            .in_order()
            .into_iter()
            .map(|l| {
                let time = l.time.map(|t| String::from_utf8_lossy(&t).into_owned() + " ").unwrap_or_default();
                format!("{}: {time}{}", l.members, String::from_utf8_lossy(&l.text))
            })
            .collect()
    }

    #[test]
    fn equal_lines_merge_across_members_and_repeats_stay_separate_in_any_tree_shape() {
        let a = aggregation(None);
        let logs = [
            "Nov 24 10:00:01 n0 sshd[1]: hello\nNov 24 10:00:01 n0 x: mine\nNov 24 10:00:02 n0 sshd[1]: hello\n",
            "Nov 24 10:00:01 n1 sshd[9]: hello\nNov 24 10:00:03 n1 y: other\n",
            "Nov 24 10:00:05 n2 sshd[3]: hello\nNov 24 10:00:05 n2 sshd[3]: hello\npartial",
        ];
        let leaves: Vec<Lines> = logs.iter().enumerate().map(|(m, t)| leaf(&a, m as u64, t)).collect();
        let left_first = a.merge(a.merge(leaves[0].clone(), leaves[1].clone()), leaves[2].clone());
        let right_first = a.merge(leaves[0].clone(), a.merge(leaves[1].clone(), leaves[2].clone()));
        assert_eq!(left_first, right_first);
        assert_eq!(
            show(left_first.clone()),
            [
                "0-2: Nov 24 10:00:01 sshd: hello",
                "0: Nov 24 10:00:01 x: mine",
                "0,2: Nov 24 10:00:02 sshd: hello",
                "1: Nov 24 10:00:03 y: other"
            ]
        );
        assert_eq!(
            left_first.partial,
            vec![(0, RangeSet::from_values([0, 1])), (7, RangeSet::from_values([2]))]
        );
        let last_one = aggregation(Some(1));
        assert_eq!(show(leaf(&last_one, 0, logs[0])), ["0: Nov 24 10:00:02 sshd: hello"]);
        // The earliest time of a merged line, whichever member had it.
        let late_first = [
            leaf(&a, 0, "Nov 24 10:00:09 n0 sshd[1]: hi\n"),
            leaf(&a, 1, "Nov 24 09:59:59 n1 sshd[2]: hi\n"),
        ];
        let merged = a.merge(late_first[0].clone(), late_first[1].clone());
        assert_eq!(show(merged), ["0-1: Nov 24 09:59:59 sshd: hi"]);
    }
}
