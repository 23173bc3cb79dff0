//! Cheapest first: within `-a` and `-o` chains, runs of side-effect-free tests are reordered by
//! cost, so `-size +1M -name '*.c'` checks the name before it pays for a stat. Actions, `-prune` and
//! `-quit` never move, and nothing moves across them, so behaviour is unchanged.

use crate::ast::Expr;

pub fn reorder(expr: Expr) -> Expr {
    match expr {
        Expr::And(items) => Expr::And(reorder_chain(flatten(items, |e| matches!(e, Expr::And(_))))),
        Expr::Or(items) => Expr::Or(reorder_chain(flatten(items, |e| matches!(e, Expr::Or(_))))),
        Expr::List(items) => Expr::List(items.into_iter().map(reorder).collect()),
        Expr::Not(inner) => Expr::Not(Box::new(reorder(*inner))),
        leaf => leaf,
    }
}

/// Merges nested chains of the same operator (`a -a (b -a c)` is `a -a b -a c`).
fn flatten(items: Vec<Expr>, same: impl Fn(&Expr) -> bool + Copy) -> Vec<Expr> {
    let mut flat = Vec::with_capacity(items.len());
    for item in items {
        if same(&item) {
            if let Expr::And(inner) | Expr::Or(inner) = item {
                flat.extend(flatten(inner, same));
            }
        } else {
            flat.push(item);
        }
    }
    flat
}

fn reorder_chain(items: Vec<Expr>) -> Vec<Expr> {
    let mut out = Vec::with_capacity(items.len());
    let mut run: Vec<Expr> = Vec::new();
    for item in items.into_iter().map(reorder) {
        if item.has_side_effects() {
            run.sort_by_key(Expr::cost);
            out.append(&mut run);
            out.push(item);
        } else {
            run.push(item);
        }
    }
    run.sort_by_key(Expr::cost);
    out.append(&mut run);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ast::{Cmp, Num, Test};
    use crate::glob::Glob;

    #[test]
    fn tests_move_before_stats_but_not_across_actions() {
        let size = || Expr::Test(Test::Size { num: Num { cmp: Cmp::Greater, value: 1 }, unit: 1 });
        let name = || Expr::Test(Test::Name(Glob::new(b"*.c", false)));
        let e = reorder(Expr::And(vec![size(), name(), Expr::Action(0), size(), name()]));
        let Expr::And(items) = e else { panic!() };
        assert!(matches!(items[0], Expr::Test(Test::Name(_))));
        assert!(matches!(items[1], Expr::Test(Test::Size { .. })));
        assert!(matches!(items[2], Expr::Action(0)));
        assert!(matches!(items[3], Expr::Test(Test::Name(_))));
        assert!(matches!(items[4], Expr::Test(Test::Size { .. })));
    }
}
