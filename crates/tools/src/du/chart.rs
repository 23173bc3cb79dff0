//! The chart: each argument's tree of largest entries, one row each — size, tree lines and name,
//! a bar of its share of the argument's total (the parent's share shaded behind it), percentage.
//! Root at the bottom by default (as pdu and dust draw, so the biggest things end next to the
//! prompt), `--top-down` for the other way. Colors only when asked or on a terminal without
//! `NO_COLOR`.

use super::finish::Measured;
use super::tree::{Node, NodeKind};
use super::units::Units;
use super::usage::Metric;
use std::fmt::Write;

pub struct Style {
    pub width: usize,
    pub color: bool,
    pub top_down: bool,
    pub metric: Metric,
}

struct Row {
    size: String,
    /// Tree lines before the name, drawn top-down.
    lines: String,
    name: String,
    is_dir: bool,
    depth: usize,
    share: f64,
    parent_share: f64,
}

const SIZE_WIDTH: usize = 7;
const PERCENT_WIDTH: usize = 5;
const MIN_BAR: usize = 10;
const COLORS: [&str; 6] = ["32", "36", "33", "35", "34", "31"];

pub fn render(measured: &[Measured], style: &Style) -> String {
    let mut out = String::new();
    for (i, m) in measured.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        let total = m.tree.usage.get(style.metric);
        let mut rows = Vec::new();
        collect(&m.tree, style.metric, total, 1.0, String::new(), 0, &mut rows);
        draw(&rows, style, &mut out);
    }
    out
}

fn collect(
    node: &Node,
    metric: Metric,
    total: u64,
    parent_share: f64,
    lines: String,
    depth: usize,
    rows: &mut Vec<Row>,
) {
    let value = node.usage.get(metric);
    let share = if total == 0 { 0.0 } else { value as f64 / total as f64 };
    rows.push(Row {
        size: size_text(value, metric),
        lines: lines.clone(),
        name: shown(&node.name),
        is_dir: node.kind == NodeKind::Dir,
        depth,
        share: if depth == 0 { 1.0 } else { share },
        parent_share,
    });
    let continuing = lines.replace("├─ ", "│  ").replace("└─ ", "   ");
    for (i, child) in node.children.iter().enumerate() {
        let last = i + 1 == node.children.len();
        let branch = format!("{continuing}{}", if last { "└─ " } else { "├─ " });
        // Behind a child's bar, its parent's share (none under the root, whose share is all).
        collect(child, metric, total, if depth == 0 { 0.0 } else { share }, branch, depth + 1, rows);
    }
}

fn draw(rows: &[Row], style: &Style, out: &mut String) {
    let label_width = |r: &Row| r.lines.chars().count() + r.name.chars().count();
    let widest = rows.iter().map(label_width).max().unwrap_or(0);
    let fixed = SIZE_WIDTH + 1 + 1 + 2 + PERCENT_WIDTH;
    let label_cap = (style.width.saturating_sub(fixed + MIN_BAR)).max(12);
    let label = widest.min(label_cap).max(4);
    let bar_width = style.width.saturating_sub(fixed + label).max(MIN_BAR);
    let ordered: Vec<&Row> = if style.top_down { rows.iter().collect() } else { rows.iter().rev().collect() };
    for row in ordered {
        let lines = if style.top_down { row.lines.clone() } else { row.lines.replace('└', "┌") };
        let room = label.saturating_sub(lines.chars().count());
        let name = fit(&row.name, room);
        let pad = room - name.chars().count();
        let filled = (row.share * bar_width as f64).round() as usize;
        let behind = ((row.parent_share * bar_width as f64).round() as usize).clamp(filled, bar_width);
        let bar = format!(
            "{}{}{}",
            "█".repeat(filled),
            "░".repeat(behind - filled),
            " ".repeat(bar_width - behind)
        );
        let percent = percent_text(row.share);
        if style.color {
            let color = COLORS[row.depth % COLORS.len()];
            let name_style = if row.is_dir { "1;34" } else { "0" };
            let _ = writeln!(
                out,
                "{:>SIZE_WIDTH$} {lines}\x1b[{name_style}m{name}\x1b[0m{:pad$} │\x1b[{color}m{bar}\x1b[0m│{percent:>PERCENT_WIDTH$}",
                row.size, ""
            );
        } else {
            let _ = writeln!(
                out,
                "{:>SIZE_WIDTH$} {lines}{name}{:pad$} │{bar}│{percent:>PERCENT_WIDTH$}",
                row.size, ""
            );
        }
    }
}

fn size_text(value: u64, metric: Metric) -> String {
    match metric {
        Metric::Inodes => Units::si().format(value),
        Metric::Allocated | Metric::Apparent => Units::human().format(value),
    }
}

fn percent_text(share: f64) -> String {
    let percent = share * 100.0;
    if percent >= 9.95 { format!("{percent:.0}%") } else { format!("{percent:.1}%") }
}

/// A name for a terminal: control characters (newlines in names…) escaped, invalid UTF-8 as U+FFFD.
fn shown(name: &[u8]) -> String {
    let mut out = String::with_capacity(name.len());
    for c in String::from_utf8_lossy(name).chars() {
        if c.is_control() {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out
}

/// `name` cut to `room` characters, with an ellipsis when cut.
fn fit(name: &str, room: usize) -> String {
    if name.chars().count() <= room {
        return name.to_string();
    }
    let mut cut: String = name.chars().take(room.saturating_sub(1)).collect();
    cut.push('…');
    cut
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::du::usage::Usage;

    fn node(name: &str, kind: NodeKind, n: u64, children: Vec<Node>) -> Node {
        Node {
            children,
            ..Node::new(
                name.as_bytes().to_vec(),
                kind,
                Usage { allocated: n, apparent: n, inodes: 1, latest: None },
            )
        }
    }

    fn chart(top_down: bool) -> String {
        let tree = node(
            "/data",
            NodeKind::Dir,
            4096,
            vec![
                node("big", NodeKind::Dir, 3072, vec![node("x\ny", NodeKind::File, 2048, vec![])]),
                node("small", NodeKind::Dir, 1024, vec![]),
            ],
        );
        let measured = [Measured { path: b"/data".to_vec(), tree, export: Vec::new() }];
        render(&measured, &Style { width: 60, color: false, top_down, metric: Metric::Allocated })
    }

    #[test]
    fn rows_are_aligned_with_bars_and_shares() {
        let text = chart(true);
        let rows: Vec<&str> = text.lines().collect();
        assert_eq!(rows.len(), 4);
        assert!(rows[0].starts_with("   4.0K /data"), "{text}");
        assert!(rows[1].contains("├─ big") && rows[1].ends_with(" 75%"), "{text}");
        assert!(rows[2].contains("│  └─ x\\ny") && rows[2].ends_with(" 50%"), "{text}");
        assert!(rows[3].contains("└─ small") && rows[3].ends_with(" 25%"), "{text}");
        let widths: Vec<usize> = rows.iter().map(|r| r.chars().count()).collect();
        assert!(widths.iter().all(|&w| w == widths[0]), "aligned: {widths:?}");
        let bar = |r: &str| r.rsplit('│').nth(1).unwrap().to_string();
        assert_eq!(bar(rows[0]).chars().filter(|&c| c == '█').count(), bar(rows[0]).chars().count());
        assert!(bar(rows[2]).contains('░'), "the parent's share shows behind a child's");
    }

    #[test]
    fn bottom_up_mirrors_top_down() {
        let down = chart(true);
        let up = chart(false);
        let mirrored: Vec<String> = down.lines().rev().map(|l| l.replace('└', "┌")).collect();
        assert_eq!(up.lines().collect::<Vec<_>>(), mirrored);
        assert!(up.lines().last().unwrap().contains("/data"));
    }
}
