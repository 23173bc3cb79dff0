//! What `canopy rm` removes: the entries its find expression matches — a matching directory with
//! everything in it. Without an expression every starting point matches.

use crate::remove::{RemoveDir, Remover, Selection, Selector};
use canopy_engine::{Cx, Entry, Errno, FileKind, Op, WalkError};
use canopy_expr::{Flow, Host, Program, eval};

pub struct Filter {
    pub program: Program,
}

impl Selector for Filter {
    type Data = ();

    fn select(&self, cx: &mut Cx<'_, Remover<Self>>, entry: &Entry<'_, RemoveDir<()>>) -> Selection<()> {
        let program = &self.program;
        let options = &program.options;
        let beyond_max_depth = options.max_depth.is_some_and(|max| entry.depth() > max);
        if beyond_max_depth {
            return Selection::Skip;
        }
        if entry.depth() >= options.min_depth {
            let mut flow = Flow::default();
            if eval(&program.expr, entry, &mut ReportErrors { cx }, &mut flow) {
                return Selection::Remove;
            }
            if flow.prune {
                return Selection::Skip;
            }
        }
        // -maxdepth N: entries at depth N are tested but not looked into.
        let at_max_depth = options.max_depth == Some(entry.depth());
        if at_max_depth && entry.kind() == FileKind::Dir { Selection::Skip } else { Selection::Keep(()) }
    }
}

/// Tests cannot run actions (the filter has none); they can fail to read what they test.
struct ReportErrors<'a, 'w> {
    cx: &'a mut Cx<'w, Remover<Filter>>,
}

impl Host<RemoveDir<()>> for ReportErrors<'_, '_> {
    fn action(&mut self, _: usize, _: &Entry<'_, RemoveDir<()>>) -> bool {
        unreachable!("parse_filter refuses actions")
    }

    fn error(&mut self, entry: &Entry<'_, RemoveDir<()>>, errno: Errno) {
        self.cx.report(WalkError::io(entry.path(), Op::Stat, errno));
    }
}
