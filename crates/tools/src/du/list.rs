//! GNU du's lines: `SIZE<TAB>PATH` (`SIZE<TAB>TIME<TAB>PATH` with `--time`, NUL-terminated with
//! `-0`), sizes formatted as du formats them, and the fixed order of `--sort`: arguments in the
//! order given, each directory after everything in it, names in byte order — GNU du's own order
//! when directories are read sorted.

use super::args::ListPlan;
use super::links::{Place, component_order};
use super::usage::{Metric, Usage};
use serde::{Deserialize, Serialize};
use std::cmp::Ordering;

/// A line held back for sorting, with where it belongs.
#[derive(Debug, Serialize, Deserialize)]
pub struct Line {
    pub place: Place,
    pub bytes: Vec<u8>,
}

pub fn write_line(out: &mut Vec<u8>, list: &ListPlan, metric: Metric, usage: Usage, path: &[u8]) {
    out.extend_from_slice(list.units.format(usage.get(metric)).as_bytes());
    out.push(b'\t');
    if let Some((_, format)) = &list.time {
        out.extend_from_slice(format.format(usage.latest.unwrap_or_default()).as_bytes());
        out.push(b'\t');
    }
    out.extend_from_slice(path);
    out.push(if list.nul { 0 } else { b'\n' });
}

/// Argument order, then depth-first with every directory after its contents.
pub fn post_order(a: &Place, b: &Place) -> Ordering {
    a.root.cmp(&b.root).then_with(|| {
        if is_below(&a.rel, &b.rel) {
            Ordering::Less
        } else if is_below(&b.rel, &a.rel) {
            Ordering::Greater
        } else {
            component_order(&a.rel, &b.rel)
        }
    })
}

/// Whether `inner` lies strictly below `outer` (both relative to the same argument).
fn is_below(inner: &[u8], outer: &[u8]) -> bool {
    inner.len() > outer.len() && inner.starts_with(outer) && (outer.is_empty() || inner[outer.len()] == b'/')
}

pub fn sort_lines(lines: &mut [Line]) {
    lines.sort_by(|a, b| post_order(&a.place, &b.place));
}

/// Argument order, each argument's lines kept in the order they came.
pub fn group_by_argument(lines: &mut [Line]) {
    lines.sort_by_key(|line| line.place.root);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn post_order_puts_contents_first() {
        let place = |root, rel: &str| Place { root, rel: rel.as_bytes().to_vec() };
        let mut places = [
            place(1, ""),
            place(0, ""),
            place(0, "b"),
            place(0, "a"),
            place(0, "a/x"),
            place(0, "a-b"),
            place(0, "a/x/y"),
        ];
        places.sort_by(post_order);
        let shown: Vec<(u32, &str)> =
            places.iter().map(|p| (p.root, std::str::from_utf8(&p.rel).unwrap())).collect();
        assert_eq!(shown, [(0, "a/x/y"), (0, "a/x"), (0, "a"), (0, "a-b"), (0, "b"), (0, ""), (1, "")]);
    }
}
