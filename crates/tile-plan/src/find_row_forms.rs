//! How the threads of a block share one work item of a row or column
//! kernel (a row, a column), decided here so that the back ends only
//! print it:
//!
//! - [`Sharing::Split`]: bindings, plain stores and single-variable inner
//!   loops whose iterations are independent ([`lanes_independent`]): the
//!   row's reductions and inner loops split over threads and lanes;
//! - [`Sharing::Lockstep`]: an `if`, or an inner loop whose iterations are
//!   not independent, in a row that reduces: every thread walks the
//!   statements in program order, each reduction splits over the block,
//!   every thread performs each store between barriers;
//! - [`Sharing::InOrder`]: such a row with no reduction to split (a
//!   running sum), or such a column: one thread runs it in program order.
//!
//! A column whose only obstacle is a plain `if` (no loop and no reduction
//! inside it, its condition included: `if m > 0.0 { y[j] = m }` after a
//! column max) still splits: the block reduces, and the column's first
//! thread runs the `if`, as it runs a store.
//!
//! The reason of the last two names the statement and its line.

use crate::{lanes_independent, Kernel, Mapping};
use tile_ir::{Expr, Stmt};

/// How a block's threads share a row (or column) of a kernel.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Sharing {
    /// Reductions and inner loops split over the threads.
    Split,
    /// Every thread walks the statements in order; reductions split, each
    /// store between barriers. The reason the row cannot split.
    Lockstep(String),
    /// One thread runs the row in order. The reason.
    InOrder(String),
}

impl Sharing {
    /// The line `tile plan` prints.
    pub fn describe(&self) -> String {
        match self {
            Sharing::Split => "split (reductions and inner loops over threads and lanes)".into(),
            Sharing::Lockstep(why) => {
                format!("lockstep ({why}): each reduction splits, the rest runs in order")
            }
            Sharing::InOrder(why) => format!("in order on one thread ({why})"),
        }
    }
}

/// Sets [`Kernel::sharing`] of every row and column kernel.
pub fn find_row_forms(kernels: &mut [Kernel]) {
    for k in kernels {
        k.sharing = match (k.mapping, sharing(&k.body)) {
            (Mapping::RowReduction, s) => Some(s),
            // A column whose only obstacle is a plain `if` splits, the
            // `if` on the column's first thread; another the block
            // cannot split runs on one thread (no lockstep form for
            // columns).
            (Mapping::ColumnReduction, Sharing::Lockstep(_))
                if k.body
                    .iter()
                    .all(|s| plain_if(s) || unshareable(s).is_none()) =>
            {
                Some(Sharing::Split)
            }
            (Mapping::ColumnReduction, Sharing::Lockstep(why)) => Some(Sharing::InOrder(why)),
            (Mapping::ColumnReduction, s) => Some(s),
            _ => None,
        };
    }
}

/// How a block shares a row whose statements are `body`.
pub fn sharing(body: &[Stmt]) -> Sharing {
    let Some(why) = body.iter().find_map(unshareable) else {
        return Sharing::Split;
    };
    let mut reduces = false;
    let mut bound_reduces = false;
    for s in body {
        s.walk(&mut |t| {
            if let Stmt::For { vars, .. } = t {
                bound_reduces |= vars
                    .iter()
                    .any(|v| v.lo.has_reduction() || v.hi.has_reduction());
            }
        });
        s.walk_exprs(&mut |e| reduces |= e.has_reduction());
    }
    if !reduces {
        Sharing::InOrder(format!("{why}; no reduction to split"))
    } else if bound_reduces {
        Sharing::InOrder(format!("{why}; a loop bound holds a reduction"))
    } else {
        Sharing::Lockstep(why)
    }
}

/// Why the block cannot split the row statement `s`, if it cannot.
fn unshareable(s: &Stmt) -> Option<String> {
    let line = s.span().line;
    match s {
        Stmt::Let { .. } => None,
        Stmt::For { vars, body, .. } => {
            if vars.len() != 1 {
                return Some(format!("a loop over several variables at line {line}"));
            }
            let mut nested = false;
            for t in body {
                t.walk(&mut |u| nested |= matches!(u, Stmt::For { .. }));
            }
            if nested {
                return Some(format!("a loop nest at line {line}"));
            }
            (!lanes_independent(&vars[0], body)).then(|| {
                format!(
                    "the loop over `{}` at line {line}: no rule proves its iterations touch distinct elements",
                    vars[0].name
                )
            })
        }
        Stmt::Store { idx, .. } => idx
            .iter()
            .any(Expr::has_reduction)
            .then(|| format!("a store indexed by a reduction at line {line}")),
        Stmt::If { .. } => Some(format!("an `if` at line {line}")),
    }
}

/// An `if` with no loop and no reduction inside (its condition included):
/// one thread may run it between a split row's reductions.
pub fn plain_if(s: &Stmt) -> bool {
    if !matches!(s, Stmt::If { .. }) {
        return false;
    }
    let mut plain = true;
    s.walk(&mut |t| plain &= !matches!(t, Stmt::For { .. }));
    s.walk_exprs(&mut |e| plain &= !e.has_reduction());
    plain
}
