//! What `canopy rm` removes: each argument, or with an expression the entries it matches. A
//! directory goes with everything in it only with `-r`; with `-d` an empty one goes; otherwise it
//! stays, reported as rm reports it ("Is a directory").

use crate::remove::{RemoveDir, Remover, Selection, Selector, is_empty_dir};
use canopy_engine::{Cx, Entry, Errno, FileKind, Op, WalkError};
use canopy_expr::{Actions, Flow, Program, eval};

pub struct Filter {
    pub program: Program,
    /// An expression follows the paths: entries below them are tested too.
    pub expression: bool,
    /// `-r`: a matching directory goes with everything in it.
    pub recursive: bool,
    /// `-d`: a matching empty directory goes.
    pub empty_dirs: bool,
}

impl Filter {
    /// A matching entry: removed, unless it is a directory rm may not remove.
    fn matched(&self, cx: &mut Cx<'_, Remover<Self>>, entry: &Entry<'_, RemoveDir<()>>) -> Selection<()> {
        if self.recursive || entry.kind() != FileKind::Dir {
            return Selection::Remove;
        }
        let errno = if self.empty_dirs {
            match is_empty_dir(entry.dir_fd(), entry.name_cstr()) {
                Ok(true) => return Selection::Remove,
                Ok(false) => Errno::NOTEMPTY,
                Err(errno) => errno,
            }
        } else {
            Errno::ISDIR
        };
        cx.report(WalkError::io(entry.path(), Op::Tool("remove"), errno));
        // With an expression, what matches inside may still go.
        if self.expression { Selection::Keep(()) } else { Selection::Skip }
    }
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
                return self.matched(cx, entry);
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

impl Actions<RemoveDir<()>> for ReportErrors<'_, '_> {
    fn action(&mut self, _: usize, _: &Entry<'_, RemoveDir<()>>) -> bool {
        unreachable!("parse_filter refuses actions")
    }

    fn error(&mut self, entry: &Entry<'_, RemoveDir<()>>, errno: Errno) {
        self.cx.report(WalkError::io(entry.path(), Op::Stat, errno));
    }
}
