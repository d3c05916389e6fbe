//! Which loops of a kernel may run several iterations at once, and how:
//! the two lane rules every target asks, and [`Kernel::lanes`], where the
//! plan records their verdicts for each innermost loop so that `tile plan`
//! shows them.
//!
//! - [`lane_refusal`]: may the iterations of an innermost `for` run as
//!   vector lanes or as threads (each in its own order)? The CPU
//!   vectorises such loops, row kernels split them over a block's threads
//!   ([`crate::find_row_forms`]), and `interchange_row_loops` blocks them.
//! - [`batch_refusal`]: may a group of consecutive iterations run with all
//!   of the group's loads before any of its stores? The CUDA target reads
//!   four elements as one 16-byte vector and writes four as one, which
//!   moves every load of a quad ahead of its stores.
//!
//! Each answer is `None` (allowed) or the rule that refuses, naming the
//! buffer, so a plan says why a loop runs one iteration at a time.

use crate::affine::{Affine, Range};
use crate::Kernel;
use std::collections::{BTreeMap, BTreeSet};
use tile_ir::{Expr, LoopVar, Stmt};

/// The lane rules' verdicts for one loop of a kernel.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LaneLoop {
    /// The loop variable.
    pub var: String,
    /// The `for` keyword's line; 0 for an element kernel's innermost
    /// domain variable (no loop of its own).
    pub line: u32,
    /// [`lane_refusal`]: `None` when iterations may run as lanes or
    /// threads.
    pub lanes: Option<String>,
    /// [`batch_refusal`]: `None` when a group's loads may run before its
    /// stores.
    pub batch: Option<String>,
}

impl LaneLoop {
    /// The line `tile plan` prints.
    pub fn describe(&self) -> String {
        let at = if self.line == 0 {
            format!("{} (the innermost domain variable)", self.var)
        } else {
            format!("{} at line {}", self.var, self.line)
        };
        let lanes = match &self.lanes {
            None => "iterations independent".to_string(),
            Some(why) => format!("one iteration at a time ({why})"),
        };
        let batch = match (&self.lanes, &self.batch) {
            (Some(_), _) => String::new(),
            (None, None) => "; a group's loads may run before its stores".to_string(),
            (None, Some(why)) => format!("; loads stay after earlier stores ({why})"),
        };
        format!("{at}: {lanes}{batch}")
    }
}

/// Sets [`Kernel::lanes`] of every kernel: the last variable of each of
/// its innermost loops in program order, and for element kernels
/// (`element_grid`, `split`) the innermost domain variable.
pub fn find_lane_loops(kernels: &mut [Kernel]) {
    for k in kernels {
        let mut found = Vec::new();
        if k.mapping.is_elementwise() {
            if let Some(v) = k.domain.last() {
                // The grid's points are independent (find_hazards proved
                // it), so only the batch rule can refuse.
                found.push(LaneLoop {
                    var: v.name.clone(),
                    line: 0,
                    lanes: None,
                    batch: batch_refusal(&k.body),
                });
            }
        }
        for s in &k.body {
            s.walk(&mut |t| {
                let Stmt::For {
                    vars, body, span, ..
                } = t
                else {
                    return;
                };
                let innermost = body.iter().all(|u| {
                    let mut nested = false;
                    u.walk(&mut |w| nested |= matches!(w, Stmt::For { .. }));
                    !nested
                });
                // The last variable of an innermost loop (`j` of `for i in
                // .., j in ..`) is the one lanes would take.
                if let (Some(v), true) = (vars.last(), innermost) {
                    found.push(LaneLoop {
                        var: v.name.clone(),
                        line: span.line,
                        lanes: lane_refusal(v, body),
                        batch: batch_refusal(body),
                    });
                }
            });
        }
        k.lanes = found;
    }
}

/// Whether the iterations of an innermost `for` over `var` may run as
/// vector lanes or threads ([`lane_refusal`] allows it).
pub fn lanes_independent(var: &LoopVar, body: &[Stmt]) -> bool {
    lane_refusal(var, body).is_none()
}

/// Why the iterations of an innermost `for` over `var` with statements
/// `body` may not run as vector lanes (or threads) without changing what
/// the loop computes; `None` when they may. They may when the body has no
/// inner loop, every store's index moves with `var` (so one store touches
/// distinct elements in distinct iterations), and any two accesses to a
/// buffer the body writes are either at the same index or provably apart
/// in every pair of iterations ([`crate::affine::never_equal`] on some
/// dimension, over `var`'s range: `y[t, k, 0]` and `y[t, k, 1]`; `2*k`
/// and `2*k + 1`; `k` and `k + H` for `k` in `0..H`). Distinct parameters
/// never overlap (the runtimes check it).
pub fn lane_refusal(var: &LoopVar, body: &[Stmt]) -> Option<String> {
    let name = var.name.as_str();
    let mut nested = false;
    let mut stores: Vec<(String, Vec<Expr>)> = Vec::new();
    let mut loads: Vec<(String, Vec<Expr>)> = Vec::new();
    let mut bound: Vec<String> = Vec::new();
    for s in body {
        s.walk(&mut |t| match t {
            Stmt::For { .. } => nested = true,
            Stmt::Store { buf, idx, .. } => stores.push((buf.clone(), idx.clone())),
            Stmt::Let { name, .. } => bound.push(name.clone()),
            Stmt::If { .. } => {}
        });
        s.walk_exprs(&mut |e| {
            e.walk(&mut |x| {
                if let Expr::Load { buf, idx, .. } = x {
                    loads.push((buf.clone(), idx.clone()));
                }
            })
        });
    }
    if nested {
        return Some("it holds a loop".into());
    }
    let fixed = |a: &Affine| a.terms.keys().all(|n| n != name && !bound.contains(n));
    let range = Affine::of(&var.lo)
        .filter(&fixed)
        .zip(Affine::of(&var.hi).filter(&fixed))
        .map(|(lo, hi)| [Range { name, lo, hi }]);
    let affine = |idx: &[Expr]| -> Option<Vec<Affine>> {
        idx.iter()
            .map(|e| Affine::of(e).filter(|a| a.terms.keys().all(|n| !bound.contains(n))))
            .collect()
    };
    let apart = |a: &[Expr], b: &[Expr]| match (affine(a), affine(b), &range) {
        (Some(a), Some(b), Some(r)) => crate::find_hazards::stores_apart(&a, &b, r),
        _ => false,
    };
    let show = |buf: &str, idx: &[Expr]| {
        let idx: Vec<String> = idx.iter().map(|e| e.to_string()).collect();
        format!("{buf}[{}]", idx.join(", "))
    };
    // Accesses by buffer: the pairs compared are those of one buffer.
    let mut by_buf: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for (n, (buf, _)) in stores.iter().enumerate() {
        by_buf.entry(buf).or_default().push(n);
    }
    let mut reads: BTreeMap<&str, Vec<&Vec<Expr>>> = BTreeMap::new();
    for (buf, idx) in &loads {
        reads.entry(buf).or_default().push(idx);
    }
    for (n, (buf, idx)) in stores.iter().enumerate() {
        // Injective in `var`: some dimension is `a * var + c` (a != 0) with
        // `c` fixed over the loop (no name bound inside the body).
        let moves = idx.iter().any(|e| {
            Affine::of(e)
                .is_some_and(|a| a.coeff(name) != 0 && a.terms.keys().all(|n| !bound.contains(n)))
        });
        if !moves {
            return Some(format!(
                "`{buf}` is stored at an index that does not move with `{name}`"
            ));
        }
        let (mine, read) = (&by_buf[buf.as_str()], reads.get(buf.as_str()));
        for other in mine.iter().filter(|&&m| m > n).map(|&m| &stores[m].1) {
            if other != idx && !apart(idx, other) {
                return Some(format!(
                    "`{buf}` is stored at {} and {}, which may meet in different iterations",
                    show(buf, idx),
                    show(buf, other)
                ));
            }
        }
        for other in read.into_iter().flatten() {
            if *other != idx && !apart(idx, other) {
                return Some(format!(
                    "`{buf}` is stored at {} and read at {}, which may meet in different iterations",
                    show(buf, idx),
                    show(buf, other)
                ));
            }
        }
    }
    None
}

/// Why a group of consecutive iterations of a loop (or of an element
/// kernel's innermost variable) whose iterations are independent, with
/// statements `body`, may not run with all the group's loads before its
/// stores; `None` when it may: no buffer the body stores is read in it,
/// and none is stored twice. Independence alone is not enough: in
/// `y[j] = x[j]; z[j] = y[j]` each iteration reads the `y` it just wrote.
pub fn batch_refusal(body: &[Stmt]) -> Option<String> {
    let mut stored: BTreeSet<String> = BTreeSet::new();
    let mut twice = None;
    for s in body {
        s.walk(&mut |t| {
            if let Stmt::Store { buf, .. } = t {
                if !stored.insert(buf.clone()) {
                    twice.get_or_insert_with(|| buf.clone());
                }
            }
        });
    }
    if let Some(buf) = twice {
        return Some(format!("`{buf}` is stored twice"));
    }
    let mut read = None;
    for s in body {
        s.walk_exprs(&mut |e| {
            e.walk(&mut |x| {
                if let Expr::Load { buf, .. } = x {
                    if read.is_none() && stored.contains(buf) {
                        read = Some(buf.clone());
                    }
                }
            })
        });
    }
    read.map(|buf| format!("`{buf}` is stored and also read"))
}
