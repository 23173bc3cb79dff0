//! pgrep's aggregation (TBON-FS §4.1.2): each host greps its own copy of the file and strips
//! host-specific fields from the selected lines; hosts whose results are then identical become one
//! equivalence class, so only one copy of each distinct result travels up the tree.

use crate::ptail::strip::Strip;
use canopy_group::aggr::{Classes, Equivalence};
use canopy_group::{Aggregation, Registry, Value};
use regex::bytes::{Regex, RegexBuilder};
use serde::{Deserialize, Serialize};

/// Registry name of [`Matches`]; its parameter is a JSON [`Params`].
pub const AGGREGATION: &str = "pgrep-matches";

/// What every host selects and how it compares.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Params {
    /// A regular expression, or with `fixed` strings one per line.
    pub pattern: String,
    pub ignore_case: bool,
    /// Select the lines that do not match.
    pub invert: bool,
    pub fixed: bool,
    /// Match whole words only.
    pub word: bool,
    /// A host's result is the number of selected lines instead of the lines.
    pub count: bool,
    /// Strip rules applied to each selected line before hosts are compared.
    pub strip: Vec<String>,
}

/// The aggregation: a host's result is its selected, stripped lines (or their count, `N\n`).
pub struct Matches {
    regex: Regex,
    strip: Strip,
    params: Params,
}

impl Matches {
    /// The aggregation for `params`; the error names the pattern or strip rule that does not compile.
    pub fn new(params: Params) -> Result<Matches, String> {
        let mut pattern = if params.fixed {
            params.pattern.lines().map(regex::escape).collect::<Vec<_>>().join("|")
        } else {
            params.pattern.clone()
        };
        if params.word {
            pattern = format!(r"\b(?:{pattern})\b");
        }
        let regex = RegexBuilder::new(&pattern)
            .case_insensitive(params.ignore_case)
            .build()
            .map_err(|e| format!("bad pattern {:?}: {e}", params.pattern))?;
        Ok(Matches { regex, strip: Strip::new(&params.strip)?, params })
    }

    /// One host's result for the contents of its file.
    pub fn select(&self, data: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        let mut count = 0u64;
        for line in data.split_inclusive(|&b| b == b'\n') {
            let line = line.strip_suffix(b"\n").unwrap_or(line);
            if self.regex.is_match(line) == self.params.invert {
                continue;
            }
            count += 1;
            if !self.params.count {
                out.extend_from_slice(&self.strip.apply(line));
                out.push(b'\n');
            }
        }
        if self.params.count {
            out = format!("{count}\n").into_bytes();
        }
        out
    }

    /// Whether a host's result selected anything.
    pub fn selected_any(&self, result: &[u8]) -> bool {
        if self.params.count { result != b"0\n" } else { !result.is_empty() }
    }
}

impl Aggregation for Matches {
    type Partial = Classes<Value>;

    fn leaf(&self, member: u64, value: &Value) -> Classes<Value> {
        let Value::Bytes(data) = value else { return Classes(Vec::new()) };
        Equivalence.leaf(member, &Value::Bytes(self.select(data)))
    }

    fn merge(&self, left: Classes<Value>, right: Classes<Value>) -> Classes<Value> {
        Equivalence.merge(left, right)
    }
}

/// Registers [`Matches`] (every host must).
pub fn register(registry: &mut Registry) {
    registry.register(AGGREGATION, |params: &str| {
        Matches::new(serde_json::from_str(params).map_err(|e| e.to_string())?)
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use canopy_nodeset::RangeSet;

    fn matches(params: Params) -> Matches {
        Matches::new(params).unwrap()
    }

    fn select(m: &Matches, text: &str) -> String {
        String::from_utf8(m.select(text.as_bytes())).unwrap()
    }

    #[test]
    fn selects_like_grep_with_its_flags() {
        let text = "Error one\nerror two\nterror\nfine\n";
        let base = Params { pattern: "error".into(), ..Default::default() };
        assert_eq!(select(&matches(base.clone()), text), "error two\nterror\n");
        let i = Params { ignore_case: true, ..base.clone() };
        assert_eq!(select(&matches(i.clone()), text), "Error one\nerror two\nterror\n");
        assert_eq!(select(&matches(Params { word: true, ..i.clone() }), text), "Error one\nerror two\n");
        assert_eq!(select(&matches(Params { invert: true, ..base.clone() }), text), "Error one\nfine\n");
        assert_eq!(select(&matches(Params { count: true, ..i }), text), "3\n");
        let fixed = Params { pattern: "a.b\n(x".into(), fixed: true, ..Default::default() };
        assert_eq!(select(&matches(fixed), "a.b\naxb\n(x)\n"), "a.b\n(x)\n");
        assert_eq!(select(&matches(base.clone()), ""), "");
        assert_eq!(select(&matches(Params { count: true, ..base.clone() }), ""), "0\n");
        assert_eq!(select(&matches(base), "no newline error"), "no newline error\n");
        assert!(Matches::new(Params { pattern: "(".into(), ..Default::default() }).is_err());
    }

    #[test]
    fn stripped_results_of_hosts_fall_into_classes_in_any_tree_shape() {
        let m = matches(Params {
            pattern: "sshd".into(),
            strip: vec![r"pid=(\d+)".into()],
            ..Default::default()
        });
        let hosts = ["sshd pid=1 up\nx\n", "sshd pid=2 up\n", "other\n", "sshd pid=3 down\n"];
        let leaves: Vec<_> = hosts
            .iter()
            .enumerate()
            .map(|(i, h)| m.leaf(i as u64, &Value::Bytes(h.as_bytes().into())))
            .collect();
        let left = m.merge(
            m.merge(m.merge(leaves[0].clone(), leaves[1].clone()), leaves[2].clone()),
            leaves[3].clone(),
        );
        let right = m.merge(
            leaves[0].clone(),
            m.merge(leaves[1].clone(), m.merge(leaves[2].clone(), leaves[3].clone())),
        );
        assert_eq!(left, right);
        let classes: Vec<(String, RangeSet)> = left
            .0
            .into_iter()
            .map(|(v, set)| match v {
                Value::Bytes(b) => (String::from_utf8(b).unwrap(), set),
                other => panic!("{other:?}"),
            })
            .collect();
        assert_eq!(
            classes,
            [
                (String::new(), RangeSet::from_values([2])),
                ("sshd pid= down\n".to_string(), RangeSet::from_values([3])),
                ("sshd pid= up\n".to_string(), RangeSet::from_values([0, 1])),
            ]
        );
    }
}
