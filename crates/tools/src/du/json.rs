//! `--json`: the tree the chart shows, as one JSON document.
//!
//! Schema `canopy.du`, version 1 (fields are only ever added within a version):
//!
//! ```text
//! format, version      "canopy.du", 1
//! metric               "allocated_bytes" | "apparent_bytes" | "entries": what ranks and prunes
//! depth, min_ratio     the levels shown below each argument, the smallest share shown
//! top                  at most this many entries per directory (null: no limit)
//! files                whether files are shown, not only directories
//! errors               failures reported on stderr (exit status 1 when > 0)
//! total                {allocated_bytes, apparent_bytes, entries} over all arguments
//! roots                one node per PATH argument, its name the path as given
//! node                 {name, name_base64?, type: "dir"|"file", allocated_bytes,
//!                       apparent_bytes, entries, children?: [node…]} — sizes include everything
//!                       below, hard links counted once; children largest first
//! ```
//!
//! `name` is the name as UTF-8 (U+FFFD for invalid bytes); `name_base64` is there only when that
//! is lossy, and holds the exact bytes. Entries left out by depth, `--min-ratio` or `--top` are
//! absent, but their sizes count in every ancestor.

use super::finish::Measured;
use super::tree::{Node, NodeKind, Shape};
use super::usage::Usage;
use crate::common::records::EncodedPath;
use serde::{Deserialize, Serialize};

pub const FORMAT: &str = "canopy.du";
pub const VERSION: u32 = 1;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DuJson {
    pub format: String,
    pub version: u32,
    pub metric: String,
    pub depth: u32,
    pub min_ratio: f64,
    pub top: Option<usize>,
    pub files: bool,
    pub errors: u64,
    pub total: Sizes,
    pub roots: Vec<JsonNode>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Sizes {
    pub allocated_bytes: u64,
    pub apparent_bytes: u64,
    pub entries: u64,
}

impl From<Usage> for Sizes {
    fn from(u: Usage) -> Sizes {
        Sizes { allocated_bytes: u.allocated, apparent_bytes: u.apparent, entries: u.inodes }
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct JsonNode {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name_base64: Option<String>,
    #[serde(rename = "type")]
    pub kind: String,
    #[serde(flatten)]
    pub sizes: Sizes,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub children: Vec<JsonNode>,
}

impl JsonNode {
    pub fn new(node: &Node) -> JsonNode {
        let name = EncodedPath::new(&node.name);
        JsonNode {
            name: name.path,
            name_base64: name.path_base64,
            kind: match node.kind {
                NodeKind::Dir => "dir".into(),
                NodeKind::File => "file".into(),
            },
            sizes: node.usage.into(),
            children: node.children.iter().map(JsonNode::new).collect(),
        }
    }
}

impl DuJson {
    pub fn new(shape: &Shape, measured: &[Measured], total: Usage, errors: u64) -> DuJson {
        DuJson {
            format: FORMAT.into(),
            version: VERSION,
            metric: shape.metric.name().into(),
            depth: shape.depth,
            min_ratio: shape.min_ratio,
            top: shape.top,
            files: shape.files,
            errors,
            total: total.into(),
            roots: measured.iter().map(|m| JsonNode::new(&m.tree)).collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::du::usage::Metric;

    #[test]
    fn round_trips_with_exact_names() {
        let mut root = Node::new(
            b"/data".to_vec(),
            NodeKind::Dir,
            Usage { allocated: 8192, apparent: 10, inodes: 3, latest: None },
        );
        root.children.push(Node::new(
            b"bad\xffname".to_vec(),
            NodeKind::File,
            Usage { allocated: 4096, apparent: 5, inodes: 1, latest: None },
        ));
        let shape = Shape { depth: 3, min_ratio: 0.0, top: Some(4), files: true, metric: Metric::Apparent };
        let measured = [Measured { path: b"/data".to_vec(), tree: root.clone(), export: Vec::new() }];
        let doc = DuJson::new(&shape, &measured, root.usage, 0);
        let text = serde_json::to_string(&doc).unwrap();
        let back: DuJson = serde_json::from_str(&text).unwrap();
        assert_eq!(back, doc);
        let child = &back.roots[0].children[0];
        assert_eq!(
            EncodedPath { path: child.name.clone(), path_base64: child.name_base64.clone() }
                .to_bytes()
                .unwrap(),
            b"bad\xffname"
        );
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(v["roots"][0]["type"], "dir");
        assert_eq!(v["roots"][0]["allocated_bytes"], 8192);
        assert!(v["roots"][0]["children"][0].get("children").is_none());
    }
}
