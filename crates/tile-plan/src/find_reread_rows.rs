//! Finds, in each row kernel whose rows the block shares, the rows of an
//! input that several of the row's statements read whole and the kernel
//! never writes ([`Kernel::rereads`]): a target may read such a row from
//! memory once per row and give every later statement the values it
//! kept (CUDA keeps them in shared memory or in registers), and the
//! results are those of reading again.
//!
//! A read counts when it is a load `x[i, v]` of a 2-D input `x`, with `i`
//! the row variable and `v` the variable of a top-level reduction of a
//! binding or a store, or of a row-level loop, whose range is exactly
//! `x`'s last box dimension ([`row_level_loads`]): then every element of
//! the row is in `x`'s box, and since the kernel stores no element of `x`
//! (and arguments never overlap), nothing changes a row while it is read.

use crate::{Kernel, Mapping, Sharing};
use tile_ir::{Expr, Program, Stmt};

/// A row read whole by several statements of a row kernel.
#[derive(Clone, Debug, PartialEq)]
pub struct Reread {
    /// The input.
    pub buf: String,
    /// The row's first index (the last dimension of the buffer's box).
    pub lo: Expr,
    /// One past the row's last index.
    pub hi: Expr,
    /// How many of the row's statements read it.
    pub readers: usize,
}

/// Sets [`Kernel::rereads`] on each row kernel whose rows split over
/// threads.
pub fn find_reread_rows(program: &Program, kernels: &mut [Kernel]) {
    for k in kernels.iter_mut() {
        let (Mapping::RowReduction, Some(Sharing::Split), Some(row)) =
            (k.mapping, &k.sharing, k.domain.first())
        else {
            continue;
        };
        let row = row.name.clone();
        k.rereads = program
            .params
            .iter()
            .filter(|p| p.dims.len() == 2 && !k.stores.contains(&p.name))
            .filter_map(|p| {
                let readers = k
                    .body
                    .iter()
                    .filter(|s| {
                        let mut found = false;
                        row_level_loads(&mut (*s).clone(), &row, &mut |buf, _, lo, hi| {
                            found |= buf == p.name && *lo == p.dims[1].lo && *hi == p.dims[1].hi;
                            None
                        });
                        found
                    })
                    .count();
                (readers >= 2).then(|| Reread {
                    buf: p.name.clone(),
                    lo: p.dims[1].lo.clone(),
                    hi: p.dims[1].hi.clone(),
                    readers,
                })
            })
            .collect();
    }
}

/// Calls `f(buf, v, lo, hi)` for every load `buf[row, v]` of the row
/// statement `s` whose `v` is bound over `lo..hi` by a top-level reduction
/// of a binding or a store, or by a row-level loop of one variable (where
/// a row kernel binds those variables itself); a load is replaced by the
/// expression `f` returns, if any. Loads inside a nested reduction's body
/// are not visited.
pub fn row_level_loads(
    s: &mut Stmt,
    row: &str,
    f: &mut dyn FnMut(&str, &str, &Expr, &Expr) -> Option<Expr>,
) {
    match s {
        Stmt::Let { value, .. } | Stmt::Store { value, .. } => {
            visit(value, row, None, true, f);
        }
        Stmt::For { vars, body, .. } if vars.len() == 1 => {
            let lv = vars[0].clone();
            let bound = Some((lv.name.as_str(), &lv.lo, &lv.hi));
            for t in body {
                match t {
                    Stmt::Let { value, .. } => visit(value, row, bound, false, f),
                    Stmt::Store { idx, value, .. } => {
                        for e in idx.iter_mut() {
                            visit(e, row, bound, false, f);
                        }
                        visit(value, row, bound, false, f);
                    }
                    _ => {}
                }
            }
        }
        _ => {}
    }
}

/// `bound`: the variable bound here and its range; `enter`: whether
/// reductions bind their own variable (top-level reductions of a binding
/// or store) or are left alone.
fn visit(
    e: &mut Expr,
    row: &str,
    bound: Option<(&str, &Expr, &Expr)>,
    enter: bool,
    f: &mut dyn FnMut(&str, &str, &Expr, &Expr) -> Option<Expr>,
) {
    match e {
        Expr::Reduce {
            var, lo, hi, body, ..
        } => {
            if enter {
                let (var, lo, hi) = (var.clone(), (**lo).clone(), (**hi).clone());
                visit(body, row, Some((&var, &lo, &hi)), false, f);
            }
        }
        Expr::Load { buf, idx, .. } => {
            if let (Some((v, lo, hi)), [Expr::Var(r), Expr::Var(c)]) = (bound, idx.as_slice()) {
                if r == row && c == v && v != row {
                    if let Some(new) = f(buf, v, lo, hi) {
                        *e = new;
                    }
                    return;
                }
            }
            for i in idx.iter_mut() {
                visit(i, row, bound, enter, f);
            }
        }
        _ => {
            for c in e.children_mut() {
                visit(c, row, bound, enter, f);
            }
        }
    }
}
