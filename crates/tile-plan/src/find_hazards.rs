//! `find_hazards`: the legality checks behind every mapping.
//!
//! Each function returns the refusals it finds (empty when the group is
//! proven safe), each under its rule name (docs/guide/plans.md):
//! - [`find_element_hazards`]: can one work item per domain element run the
//!   group's statements in any order of elements? (`waw`, `non_injective`,
//!   `raw`, `war`, `unknown`)
//! - [`find_row_hazards`]: can rows run in any order, each row in program
//!   order?
//! - [`find_split_hazards`]: can each store run as its own kernel, in
//!   program order, recomputing what it needs?
//! - [`find_nest_dependency`]: must two adjacent nests stay apart?

use crate::affine::{is_injective, Affine};
use crate::plan::{Fallback, Rule};
use std::collections::BTreeSet;
use tile_ir::{Expr, LoopVar, Stmt};

/// A load or store, with its position in the body's program order.
#[derive(Clone, Debug)]
pub(crate) struct Access {
    pub buf: String,
    pub idx: Vec<Expr>,
    pub order: usize,
    pub line: u32,
}

/// Loads and stores of `body` in program order (loads of a statement come
/// before its store).
pub(crate) fn accesses(body: &[Stmt]) -> (Vec<Access>, Vec<Access>) {
    let mut loads = Vec::new();
    let mut stores = Vec::new();
    let mut order = 0;
    for s in body {
        s.walk(&mut |t| {
            let line = t.span().line;
            let mut add_loads = |e: &Expr| {
                e.walk(&mut |x| {
                    if let Expr::Load { buf, idx, .. } = x {
                        loads.push(Access {
                            buf: buf.clone(),
                            idx: idx.clone(),
                            order,
                            line,
                        });
                    }
                })
            };
            match t {
                Stmt::Let { value, .. } => add_loads(value),
                Stmt::If { cond, .. } => add_loads(cond),
                Stmt::For { vars, .. } => vars.iter().for_each(|v| {
                    add_loads(&v.lo);
                    add_loads(&v.hi);
                }),
                Stmt::Store {
                    buf, idx, value, ..
                } => {
                    idx.iter().for_each(&mut add_loads);
                    add_loads(value);
                    order += 1;
                    stores.push(Access {
                        buf: buf.clone(),
                        idx: idx.clone(),
                        order,
                        line,
                    });
                }
            }
            order += 1;
        });
    }
    (loads, stores)
}

/// Buffers written by `body`, in program order.
pub(crate) fn written(body: &[Stmt]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for a in accesses(body).1 {
        if !out.contains(&a.buf) {
            out.push(a.buf);
        }
    }
    out
}

/// Buffers read by `body`, in program order.
pub(crate) fn read(body: &[Stmt]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for a in accesses(body).0 {
        if !out.contains(&a.buf) {
            out.push(a.buf);
        }
    }
    out
}

fn affine_index(idx: &[Expr], known: &dyn Fn(&str) -> bool) -> Option<Vec<Affine>> {
    idx.iter()
        .map(|e| Affine::of(e).filter(|a| a.only_uses(known)))
        .collect()
}

fn show_idx(a: &Access) -> String {
    let idx: Vec<String> = a.idx.iter().map(|e| e.to_string()).collect();
    format!("{}[{}]", a.buf, idx.join(", "))
}

/// Checks an element-wise group over `vars` (nest variables) whose body
/// holds only bindings, stores and `if`s. `symbols` are the size symbols.
pub fn find_element_hazards(
    vars: &[LoopVar],
    body: &[Stmt],
    symbols: &[String],
    line: u32,
) -> Vec<Fallback> {
    let names: Vec<String> = vars.iter().map(|v| v.name.clone()).collect();
    let known = |n: &str| names.iter().any(|v| v == n) || symbols.iter().any(|s| s == n);
    let mut out = Vec::new();
    let (loads, stores) = accesses(body);
    let mut seen = BTreeSet::new();
    for s in &stores {
        let count = stores.iter().filter(|t| t.buf == s.buf).count();
        if count > 1 && seen.insert(s.buf.clone()) {
            let lines: Vec<String> = stores
                .iter()
                .filter(|t| t.buf == s.buf)
                .map(|t| t.line.to_string())
                .collect();
            out.push(Fallback {
                rule: Rule::Waw,
                detail: format!(
                    "`{}` is stored {count} times in the nest at line {line} (lines {}): the last write per element depends on order",
                    s.buf,
                    lines.join(", ")
                ),
            });
        }
    }
    for s in &stores {
        match affine_index(&s.idx, &known) {
            None => out.push(Fallback {
                rule: Rule::Unknown,
                detail: format!("the store {} at line {} has an index that is not affine in the loop variables", show_idx(s), s.line),
            }),
            Some(rows) if !is_injective(&rows, &names) => out.push(Fallback {
                rule: Rule::NonInjective,
                detail: format!(
                    "the store {} at line {} writes the same element from different iterations of ({})",
                    show_idx(s),
                    s.line,
                    names.join(", ")
                ),
            }),
            Some(_) => {}
        }
    }
    for l in &loads {
        let mine: Vec<&Access> = stores.iter().filter(|s| s.buf == l.buf).collect();
        if mine.is_empty() {
            continue;
        }
        // A read of exactly the element this iteration writes (the buffer's
        // only store, same affine index) touches no other work item's data.
        let local = mine.len() == 1 && {
            let a = affine_index(&l.idx, &known);
            a.is_some() && a == affine_index(&mine[0].idx, &known)
        };
        if local {
            continue;
        }
        let before = mine.iter().any(|s| s.order > l.order);
        let (rule, when) = if before {
            (Rule::War, "before")
        } else {
            (Rule::Raw, "after")
        };
        out.push(Fallback {
            rule,
            detail: format!(
                "{} at line {} reads `{}` {when} the nest writes it ({} at line {}), at another element",
                show_idx(l),
                l.line,
                l.buf,
                show_idx(mine[0]),
                mine[0].line
            ),
        });
    }
    out
}

/// Can the stores of an element group run as separate kernels in program
/// order? Only when no statement reads a buffer the group writes: a split
/// kernel recomputes its inputs after earlier kernels have run.
pub fn find_split_hazards(body: &[Stmt], line: u32) -> Vec<Fallback> {
    let (loads, stores) = accesses(body);
    let mut out = Vec::new();
    for l in &loads {
        if let Some(s) = stores.iter().find(|s| s.buf == l.buf) {
            let rule = if s.order > l.order {
                Rule::War
            } else {
                Rule::Raw
            };
            out.push(Fallback {
                rule,
                detail: format!(
                    "with fusion off, the nest at line {line} cannot be split per store: {} at line {} reads `{}`, which the nest writes at line {}",
                    show_idx(l),
                    l.line,
                    l.buf,
                    s.line
                ),
            });
            break;
        }
    }
    out
}

/// Checks a row-reduction nest: rows of `row` run in any order, each row in
/// program order. Every store must write only its own row: some dimension
/// of the index is `a*row + c` (`a != 0`, no other loop variable) and every
/// store and load of that buffer uses the same form there.
pub fn find_row_hazards(
    row: &LoopVar,
    body: &[Stmt],
    symbols: &[String],
    line: u32,
) -> Vec<Fallback> {
    let mut out = Vec::new();
    let (loads, stores) = accesses(body);
    let is_symbol = |n: &str| symbols.iter().any(|s| s == n);
    let row_dims = |idx: &[Expr]| -> Vec<(usize, Affine)> {
        idx.iter()
            .enumerate()
            .filter_map(|(d, e)| {
                let a = Affine::of(e)?;
                (a.coeff(&row.name) != 0 && a.terms.keys().all(|n| n == &row.name || is_symbol(n)))
                    .then_some((d, a))
            })
            .collect()
    };
    let mut bufs: Vec<String> = Vec::new();
    for s in &stores {
        if !bufs.contains(&s.buf) {
            bufs.push(s.buf.clone());
        }
    }
    for b in bufs {
        let mine: Vec<&Access> = stores.iter().filter(|s| s.buf == b).collect();
        let candidates = row_dims(&mine[0].idx);
        let common = candidates.into_iter().find(|(d, a)| {
            mine.iter()
                .all(|s| row_dims(&s.idx).contains(&(*d, a.clone())))
        });
        let Some((d, form)) = common else {
            out.push(Fallback {
                rule: Rule::NonInjective,
                detail: format!(
                    "different rows of `{}` may write the same element of `{b}` ({} at line {}): no index dimension is a function of the row alone",
                    row.name,
                    show_idx(mine[0]),
                    mine[0].line
                ),
            });
            continue;
        };
        for l in loads.iter().filter(|l| l.buf == b) {
            if !row_dims(&l.idx).contains(&(d, form.clone())) {
                let rule = if mine.iter().any(|s| s.order > l.order) {
                    Rule::War
                } else {
                    Rule::Raw
                };
                out.push(Fallback {
                    rule,
                    detail: format!(
                        "{} at line {} may read another row of `{b}`, which the nest at line {line} writes",
                        show_idx(l),
                        l.line
                    ),
                });
            }
        }
    }
    out
}

/// The dependency that keeps two nests apart, if any: `a` runs first.
pub fn find_nest_dependency(a: &[Stmt], b: &[Stmt]) -> Option<(Rule, String)> {
    let (wa, ra, wb, rb) = (written(a), read(a), written(b), read(b));
    if let Some(x) = wa.iter().find(|x| rb.contains(x)) {
        return Some((
            Rule::Raw,
            format!("the second reads `{x}`, which the first writes"),
        ));
    }
    if let Some(x) = ra.iter().find(|x| wb.contains(x)) {
        return Some((
            Rule::War,
            format!("the second writes `{x}`, which the first reads"),
        ));
    }
    if let Some(x) = wa.iter().find(|x| wb.contains(x)) {
        return Some((Rule::Waw, format!("both write `{x}`")));
    }
    None
}
