//! `orient_rows`: decide which way a legal row nest walks memory, so its
//! kernel reads contiguously.
//!
//! A row nest's work items (values of its row variable) are independent
//! ([`crate::find_row_hazards`] proved it). Two mappings run them:
//! - `row_reduction` when the reductions walk along the innermost (unit
//!   stride) dimension: one work group per row, its reductions split over
//!   the group (`y[i] = sum(j in 0..N: x[i, j])`);
//! - `column_reduction` when the reductions walk down an outer dimension
//!   while the row variable indexes the innermost one
//!   (`y[j] = sum(i in 0..M: x[i, j])`): adjacent work items on adjacent
//!   vector lanes or threads, each reducing down its column in order, so
//!   every step of the reduction reads neighbouring elements.
//!
//! The choice is about speed only: both mappings run every work item's
//! statements in order, and a body with an inner `for` stays
//! `row_reduction` (its loops are split over the group).

use crate::affine::Affine;
use tile_ir::{Expr, LoopVar, Stmt};

/// How the loads inside a row's reductions walk memory.
#[derive(Default)]
struct Walks {
    /// Loads whose innermost index follows the row variable and no
    /// reduction variable.
    down_columns: usize,
    /// Loads whose innermost index follows a reduction variable (or that
    /// the analysis cannot read).
    along_rows: usize,
}

/// True when the row nest over `row` with `body` should run as a
/// `column_reduction`: no inner loop, and every load that moves with a
/// reduction variable and differs between work items reads along the row
/// variable in its innermost dimension (at least one such load).
pub fn walks_columns(row: &LoopVar, body: &[Stmt]) -> bool {
    let mut inner_loop = false;
    for s in body {
        s.walk(&mut |t| inner_loop |= matches!(t, Stmt::For { .. }));
    }
    if inner_loop {
        return false;
    }
    let mut walks = Walks::default();
    for s in body {
        s.walk_exprs(&mut |e| count(e, &row.name, &mut Vec::new(), &mut walks));
    }
    walks.down_columns > 0 && walks.along_rows == 0
}

/// Counts the loads under `e` against the reduction variables in scope
/// (`vars`), entering each reduction once.
fn count(e: &Expr, row: &str, vars: &mut Vec<String>, walks: &mut Walks) {
    match e {
        Expr::Reduce {
            var, lo, hi, body, ..
        } => {
            count(lo, row, vars, walks);
            count(hi, row, vars, walks);
            vars.push(var.clone());
            count(body, row, vars, walks);
            vars.pop();
        }
        Expr::Load { idx, .. } => {
            idx.iter().for_each(|i| count(i, row, vars, walks));
            let mentions = |i: &Expr, names: &dyn Fn(&String) -> bool| {
                let mut free = Vec::new();
                i.free_vars(&mut free);
                free.iter().any(names)
            };
            // Loads that stay put as the reduction runs, and loads every
            // work item shares (`w[i]`: the same for all columns), walk
            // nothing.
            let moves = idx.iter().any(|i| mentions(i, &|f| vars.contains(f)));
            let per_item = idx.iter().any(|i| mentions(i, &|f| f == row));
            if !moves || !per_item {
                return;
            }
            let Some(last) = idx.last() else { return };
            match Affine::of(last) {
                Some(a) if vars.iter().all(|v| a.coeff(v) == 0) && a.coeff(row) != 0 => {
                    walks.down_columns += 1
                }
                Some(a) if vars.iter().all(|v| a.coeff(v) == 0) => {}
                _ => walks.along_rows += 1,
            }
        }
        _ => e
            .children()
            .into_iter()
            .for_each(|c| count(c, row, vars, walks)),
    }
}

#[cfg(test)]
mod tests {
    use super::walks_columns;
    use tile_ir::Stmt;

    fn orient(text: &str) -> bool {
        let p = tile_ir::parse_program(text).unwrap();
        let Stmt::For { vars, body, .. } = &p.body[0] else {
            panic!("not a nest")
        };
        walks_columns(&vars[0], body)
    }

    #[test]
    fn reductions_down_columns_walk_columns() {
        let head = "program p(x: in f32[M, N], q: in f32[N, N], w: in f32[M], g: in i32[M], y: out f32[N]) {\n  for j in 0..N {\n    y[j] = ";
        let tail = "\n  }\n}";
        let walks = |body: &str| orient(&format!("{head}{body}{tail}"));
        assert!(walks("sum(i in 0..M: x[i, j])"));
        // A weight shared by every column walks nothing.
        assert!(walks("sum(i in 0..M: x[i, j] * w[i])"));
        assert!(walks("sum(i in 0..M: x[M - 1 - i, j])"));
        // Loads that stay put, or nothing that moves: a row kernel.
        assert!(!walks("x[0, j] + sum(i in 0..M: w[i])"));
        assert!(!walks("x[0, j]"));
        // Along the innermost dimension, or a gather it cannot read.
        assert!(!walks("sum(i in 0..N: q[j, i])"));
        assert!(!walks("sum(i in 0..N: q[j, i] + q[i, j])"));
        assert!(!walks("sum(i in 0..M: x[i, j * g[i]] + x[i, j])"));
    }
}
