//! Notes on plans that are correct but costly: a reduction that walks the
//! same range as an enclosing loop or reduction does it once per iteration
//! of that loop, so the work grows with the square of the range's extent
//! (ranking by counting, recomputed attention scores); a reduction that
//! reads an operand down its columns, in step with an enclosing loop,
//! is a matrix product with no tiling (every result re-reads a whole
//! column), unless `find_contractions` found it a contraction that
//! targets tile. `tile plan` prints them under `notes:`; they explain a slow
//! mapping, they change nothing.

use crate::{Kernel, Mapping};
use tile_ir::{Expr, LoopVar, Stmt};

/// One note per reduction whose range `lo..hi` (not two integer literals)
/// is an enclosing loop's or reduction's range, in kernel and program
/// order, each once.
pub fn find_costs(kernels: &[Kernel]) -> Vec<String> {
    let mut notes = Vec::new();
    for k in kernels {
        if k.mapping == Mapping::Serial {
            continue;
        }
        let mut open: Vec<(String, Expr, Expr)> = k
            .domain
            .iter()
            .map(|v| (v.name.clone(), v.lo.clone(), v.hi.clone()))
            .collect();
        for s in &k.body {
            stmt(k, s, &mut open, &mut notes);
        }
    }
    notes
}

fn stmt(k: &Kernel, s: &Stmt, open: &mut Vec<(String, Expr, Expr)>, notes: &mut Vec<String>) {
    let line = s.span().line;
    match s {
        Stmt::For { vars, body, .. } => {
            let depth = open.len();
            open.extend(
                vars.iter()
                    .map(|v: &LoopVar| (v.name.clone(), v.lo.clone(), v.hi.clone())),
            );
            for t in body {
                stmt(k, t, open, notes);
            }
            open.truncate(depth);
        }
        Stmt::Let { value, .. } => expr(k, value, line, open, notes),
        Stmt::Store { idx, value, .. } => {
            for e in idx {
                expr(k, e, line, open, notes);
            }
            expr(k, value, line, open, notes);
        }
        Stmt::If {
            cond, then, els, ..
        } => {
            expr(k, cond, line, open, notes);
            for t in then.iter().chain(els) {
                stmt(k, t, open, notes);
            }
        }
    }
}

fn expr(
    k: &Kernel,
    e: &Expr,
    line: u32,
    open: &mut Vec<(String, Expr, Expr)>,
    notes: &mut Vec<String>,
) {
    if let Expr::Reduce {
        op,
        var,
        lo,
        hi,
        body,
    } = e
    {
        let constant = matches!((&**lo, &**hi), (Expr::Int(_), Expr::Int(_)));
        if let Some((outer, _, _)) = open.iter().find(|(name, l, h)| {
            // A full reduction's domain is its own range: not a repeat.
            !constant && name != var && l == &**lo && h == &**hi
        }) {
            let where_tiled = if k.attention.is_some() {
                " (on targets that tile this attention head, once per row)"
            } else {
                ""
            };
            let note = format!(
                "[quadratic] {} line {line}: the {} over `{var}` in {lo}..{hi} runs once per `{outer}` over the same range: work grows with the square of its extent{where_tiled}",
                k.name,
                op.name()
            );
            if !notes.contains(&note) {
                notes.push(note);
            }
        }
        // A contraction (find_contractions.rs) is tiled where the target
        // tiles contractions; the lowering says where it is not.
        let tiled = k.contraction.is_some() || k.attention.is_some();
        if let Some((buf, outer)) = down_a_column(body, var, open).filter(|_| !tiled) {
            let note = format!(
                "[untiled] {} line {line}: the {} over `{var}` reads `{buf}` down a column (its last index follows `{outer}`, an enclosing variable), so each result re-reads a whole column: it is not a contraction Tile tiles (docs/guide/contractions.md says which are)",
                k.name,
                op.name()
            );
            if !notes.contains(&note) {
                notes.push(note);
            }
        }
        expr(k, lo, line, open, notes);
        expr(k, hi, line, open, notes);
        open.push((var.clone(), (**lo).clone(), (**hi).clone()));
        expr(k, body, line, open, notes);
        open.pop();
        return;
    }
    for c in e.children() {
        expr(k, c, line, open, notes);
    }
}

/// A load in `body` whose indices before the last use the reduction
/// variable `var` while its last index uses an enclosing variable and not
/// `var`, and which some other enclosing variable does not index, so the
/// column is read again for each of its values (`b[k, j]` in `sum(k:
/// a[i, k] * b[k, j])`, re-read for every `i`; a column sum reads each
/// column once): its buffer and the variable of its last index.
fn down_a_column(
    body: &Expr,
    var: &str,
    open: &[(String, Expr, Expr)],
) -> Option<(String, String)> {
    let mut found = None;
    body.walk(&mut |x| {
        let Expr::Load { buf, idx, .. } = x else {
            return;
        };
        let Some((last, rest)) = idx.split_last() else {
            return;
        };
        let uses = |e: &Expr, n: &str| {
            let mut free = Vec::new();
            e.free_vars(&mut free);
            free.iter().any(|f| f == n)
        };
        if found.is_some() || uses(last, var) || !rest.iter().any(|e| uses(e, var)) {
            return;
        }
        // Re-read: some enclosing variable is in no index, so the same
        // column is read again for each of its values.
        let reread = open
            .iter()
            .any(|(n, _, _)| n != var && !idx.iter().any(|e| uses(e, n)));
        if !reread {
            return;
        }
        if let Some((outer, _, _)) = open.iter().rev().find(|(n, _, _)| uses(last, n)) {
            found = Some((buf.clone(), outer.clone()));
        }
    });
    found
}
