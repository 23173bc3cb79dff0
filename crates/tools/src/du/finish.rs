//! After the walk: every worker's (and rank's) results gathered, the hard-linked inodes still open
//! charged to their first names, and the lines that had to wait printed.

use super::args::Settings;
use super::export::Piece;
use super::links::{LinkRecord, Place, merge_records};
use super::list::{Line, group_by_argument, sort_lines, write_line};
use super::roots::Roots;
use super::tree::{Node, NodeKind, Shape};
use super::usage::Usage;
use super::visitor::{DuState, RootResult};
use canopy_util::path::join_path;
use serde::{Deserialize, Serialize};
use std::collections::HashSet;

/// What the workers of one process found; merged across ranks with [`Gathered::merge`].
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct Gathered {
    pub roots: Vec<RootResult>,
    pub lines: Vec<Line>,
    pub links: Vec<LinkRecord>,
    pub errors: u64,
}

impl Gathered {
    /// Takes a worker's results (its buffered lines are flushed as the state is dropped).
    pub fn add_state(&mut self, state: DuState<'_>) {
        let DuState { roots, sorted, .. } = state;
        self.roots.extend(roots);
        self.lines.extend(sorted);
    }

    pub fn merge(mut self, other: Gathered) -> Gathered {
        self.roots.extend(other.roots);
        self.lines.extend(other.lines);
        self.links.extend(other.links);
        self.errors += other.errors;
        self
    }
}

/// The final result of one PATH argument.
pub struct Measured {
    pub path: Vec<u8>,
    pub tree: Node,
    pub export: Vec<Piece>,
}

/// Everything there is to print.
pub struct Settled {
    pub measured: Vec<Measured>,
    /// List lines not printed during the walk (all of them with `--sort` or under MPI), in
    /// argument order.
    pub lines: Vec<Line>,
    /// `-c`'s line.
    pub total_line: Vec<u8>,
    pub total: Usage,
}

pub fn settle(settings: &Settings, roots: &Roots, mut gathered: Gathered) -> Settled {
    let mut results: Vec<Option<RootResult>> = (0..roots.len()).map(|_| None).collect();
    for result in gathered.roots.drain(..) {
        let slot = result.root as usize;
        results[slot] = Some(result);
    }
    for result in results.iter_mut().flatten() {
        result.node.sort_by_name();
    }
    let every_inode = settings.count_every_inode_once;
    let mut owners: HashSet<Place> = HashSet::new();
    let mut lines = gathered.lines;
    for record in merge_records(gathered.links) {
        let depth = record.owner.depth();
        if every_inode && (record.is_dir || depth == 0) {
            owners.insert(record.owner.clone());
        }
        let Some(result) = results[record.owner.root as usize].as_mut() else { continue };
        let holder = result.node.charge(&record.owner, record.usage, record.is_dir);
        if record.is_dir || depth == 0 {
            continue;
        }
        if let Some(list) = settings.list.as_ref().filter(|l| l.all && depth <= l.max_depth)
            && list.passes(record.usage.get(settings.metric))
        {
            let path = join_path(roots.path(record.owner.root), &record.owner.rel);
            let mut bytes = Vec::new();
            write_line(&mut bytes, list, settings.metric, record.usage, &path);
            lines.push(Line { place: record.owner.clone(), bytes });
        }
        if let (Some(shape), Some(holder)) = (settings.shape, holder)
            && shape.files
            && depth <= shape.depth
        {
            let name = record.owner.components().last().unwrap_or_default().to_vec();
            holder.insert_sorted(Node::new(name, NodeKind::File, record.usage));
        }
    }
    let keep = |place: &Place| !every_inode || owners.contains(place);
    if let Some(list) = &settings.list {
        for (root, result) in results.iter().enumerate() {
            if let Some(result) = result {
                let place = Place { root: root as u32, rel: Vec::new() };
                collect_open_lines(
                    settings,
                    list,
                    &result.node,
                    roots.path(root as u32),
                    &place,
                    &keep,
                    &mut lines,
                );
            }
        }
    }
    if settings.list.as_ref().is_some_and(|l| l.sorted) {
        sort_lines(&mut lines);
    } else {
        group_by_argument(&mut lines);
    }
    let mut total = Usage::default();
    let mut measured = Vec::new();
    for (root, result) in results.into_iter().enumerate() {
        let Some(mut result) = result else { continue };
        let place = Place { root: root as u32, rel: Vec::new() };
        if !keep(&place) {
            continue;
        }
        total.add(result.node.usage);
        if every_inode {
            drop_duplicates(&mut result.node, &place, &keep);
        }
        if let Some(shape) = &settings.shape {
            finish_tree(shape, &mut result.node);
        }
        measured.push(Measured {
            path: roots.path(root as u32).to_vec(),
            tree: result.node,
            export: result.export,
        });
    }
    let mut total_line = Vec::new();
    if let Some(list) = settings.list.as_ref().filter(|l| l.total) {
        write_line(&mut total_line, list, settings.metric, total, b"total");
    }
    Settled { measured, lines, total_line, total }
}

/// Lines of the directories whose sizes were open during the walk (and of arguments that are
/// hard-linked files), now final.
fn collect_open_lines(
    settings: &Settings,
    list: &super::args::ListPlan,
    node: &Node,
    path: &[u8],
    place: &Place,
    keep: &impl Fn(&Place) -> bool,
    lines: &mut Vec<Line>,
) {
    let depth = place.depth();
    if depth > list.max_depth || node.printed {
        return;
    }
    for child in node.children.iter().filter(|c| c.kind == NodeKind::Dir) {
        let child_path = join_path(path, &child.name);
        let child_place = Place { root: place.root, rel: join_rel(&place.rel, &child.name) };
        collect_open_lines(settings, list, child, &child_path, &child_place, keep, lines);
    }
    // After its contents, as du prints a directory.
    let shown = if list.separate { node.own } else { node.usage };
    if (node.kind == NodeKind::Dir || depth == 0) && keep(place) && list.passes(shown.get(settings.metric)) {
        let mut bytes = Vec::new();
        write_line(&mut bytes, list, settings.metric, shown, path);
        lines.push(Line { place: place.clone(), bytes });
    }
}

fn join_rel(rel: &[u8], name: &[u8]) -> Vec<u8> {
    if rel.is_empty() { name.to_vec() } else { join_path(rel, name) }
}

/// Under `-L`: directories reached through a second path are shown only where they are counted.
fn drop_duplicates(node: &mut Node, place: &Place, keep: &impl Fn(&Place) -> bool) {
    node.children.retain_mut(|child| {
        let child_place = Place { root: place.root, rel: join_rel(&place.rel, &child.name) };
        if child.kind == NodeKind::Dir && !keep(&child_place) {
            return false;
        }
        drop_duplicates(child, &child_place, keep);
        true
    });
}

/// The shown tree: only as deep as asked, pruned against the final total, ranked.
fn finish_tree(shape: &Shape, root: &mut Node) {
    fn cut(node: &mut Node, levels_left: u32, files: bool) {
        if levels_left == 0 {
            node.children.clear();
            return;
        }
        node.children.retain(|c| files || c.kind == NodeKind::Dir);
        for child in &mut node.children {
            child.open = false;
            cut(child, levels_left - 1, files);
        }
    }
    cut(root, shape.depth, shape.files);
    root.open = false;
    shape.prune(&mut root.children, root.usage.get(shape.metric));
    shape.rank_all(root);
}
