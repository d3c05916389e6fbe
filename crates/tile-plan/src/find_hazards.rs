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

use crate::affine::{is_injective, never_equal, Affine, Range};
use crate::plan::{Fallback, Rule};
use std::collections::{BTreeMap, BTreeSet, HashSet};
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
    Buffers::of(accesses(body).1).list
}

/// Buffers read by `body`, in program order.
pub(crate) fn read(body: &[Stmt]) -> Vec<String> {
    Buffers::of(accesses(body).0).list
}

/// Distinct buffer names in first-seen order, with a set for look-ups.
#[derive(Clone, Debug, Default)]
pub(crate) struct Buffers {
    list: Vec<String>,
    set: HashSet<String>,
}

impl Buffers {
    fn of(accesses: Vec<Access>) -> Buffers {
        let mut b = Buffers::default();
        for a in accesses {
            b.push(a.buf);
        }
        b
    }

    fn push(&mut self, name: String) {
        if !self.set.contains(&name) {
            self.set.insert(name.clone());
            self.list.push(name);
        }
    }

    fn contains(&self, name: &str) -> bool {
        self.set.contains(name)
    }

    /// Appends `other`'s names not already here.
    pub(crate) fn extend(&mut self, other: &Buffers) {
        for n in &other.list {
            self.push(n.clone());
        }
    }
}

/// What a nest (or a merged group of nests) writes and reads, for
/// [`find_nest_dependency`] between a growing group and the next nest in
/// time linear in the next nest.
#[derive(Clone, Debug, Default)]
pub(crate) struct NestBuffers {
    pub(crate) written: Buffers,
    pub(crate) read: Buffers,
}

impl NestBuffers {
    pub(crate) fn of(body: &[Stmt]) -> NestBuffers {
        let (loads, stores) = accesses(body);
        NestBuffers {
            written: Buffers::of(stores),
            read: Buffers::of(loads),
        }
    }

    /// Adds a merged nest's buffers.
    pub(crate) fn extend(&mut self, other: &NestBuffers) {
        self.written.extend(&other.written);
        self.read.extend(&other.read);
    }
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
///
/// A buffer may be stored more than once when every two of its stores are
/// provably apart ([`stores_apart`]: `y[t, k, 0]` and `y[t, k, 1]`, `2*k`
/// and `2*k + 1`, `k` and `k + H` with `k` in `0..H`); a load of a written
/// buffer is local when it reads exactly the element one store writes and
/// is apart from every other store. The work is linear in the accesses
/// (stores are indexed by buffer) plus the pairs of stores of one buffer.
pub fn find_element_hazards(
    vars: &[LoopVar],
    body: &[Stmt],
    symbols: &[String],
    line: u32,
) -> Vec<Fallback> {
    let names: Vec<String> = vars.iter().map(|v| v.name.clone()).collect();
    let symbol_set: BTreeSet<&str> = symbols.iter().map(|s| s.as_str()).collect();
    let known = |n: &str| names.iter().any(|v| v == n) || symbol_set.contains(n);
    let domain: Option<Vec<Range<'_>>> = vars
        .iter()
        .map(|v| {
            Some(Range {
                name: &v.name,
                lo: Affine::of(&v.lo).filter(|a| a.only_uses(&|n| symbol_set.contains(n)))?,
                hi: Affine::of(&v.hi).filter(|a| a.only_uses(&|n| symbol_set.contains(n)))?,
            })
        })
        .collect();
    let apart = |a: &Option<Vec<Affine>>, b: &Option<Vec<Affine>>| match (a, b, &domain) {
        (Some(a), Some(b), Some(d)) => stores_apart(a, b, d),
        _ => false,
    };
    let mut out = Vec::new();
    let (loads, stores) = accesses(body);
    let affine: Vec<Option<Vec<Affine>>> = stores
        .iter()
        .map(|s| affine_index(&s.idx, &known))
        .collect();
    // Stores by buffer, in program order.
    let mut by_buf: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for (k, s) in stores.iter().enumerate() {
        by_buf.entry(&s.buf).or_default().push(k);
    }
    let mut reported = BTreeSet::new();
    for s in &stores {
        let mine = &by_buf[s.buf.as_str()];
        if mine.len() < 2 || !reported.insert(s.buf.clone()) {
            continue;
        }
        let clash = mine.iter().enumerate().find_map(|(n, &x)| {
            mine[n + 1..]
                .iter()
                .find(|&&y| !apart(&affine[x], &affine[y]))
                .map(|&y| (x, y))
        });
        if let Some((x, y)) = clash {
            let lines: Vec<String> = mine.iter().map(|&t| stores[t].line.to_string()).collect();
            out.push(Fallback {
                rule: Rule::Waw,
                detail: format!(
                    "`{}` is stored {} times in the nest at line {line} (lines {}), and {} at line {} and {} at line {} may write the same element: the last write per element depends on order",
                    s.buf,
                    mine.len(),
                    lines.join(", "),
                    show_idx(&stores[x]),
                    stores[x].line,
                    show_idx(&stores[y]),
                    stores[y].line,
                ),
            });
        }
    }
    for (s, rows) in stores.iter().zip(&affine) {
        match rows {
            None => out.push(Fallback {
                rule: Rule::Unknown,
                detail: format!("the store {} at line {} has an index that is not affine in the loop variables", show_idx(s), s.line),
            }),
            Some(rows) if !is_injective(rows, &names) => out.push(Fallback {
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
        let Some(mine) = by_buf.get(l.buf.as_str()) else {
            continue;
        };
        // A read of exactly the element this iteration writes (one store's
        // affine index, apart from every other store of the buffer)
        // touches no other work item's data.
        let at = affine_index(&l.idx, &known);
        let local = at.is_some()
            && mine.iter().any(|&x| {
                affine[x] == at && mine.iter().all(|&y| y == x || apart(&at, &affine[y]))
            });
        if local {
            continue;
        }
        let first = &stores[mine[0]];
        let before = mine.iter().any(|&x| stores[x].order > l.order);
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
                show_idx(first),
                first.line
            ),
        });
    }
    out
}

/// True when two affine indices of one buffer never name the same element
/// over the domain, whichever iterations write them: some dimension's
/// indices are [`never_equal`].
pub fn stores_apart(a: &[Affine], b: &[Affine], domain: &[Range<'_>]) -> bool {
    a.len() == b.len() && a.iter().zip(b).any(|(x, y)| never_equal(x, y, domain))
}

/// Can the stores of an element group run as separate kernels in program
/// order? Only when no statement reads a buffer the group writes: a split
/// kernel recomputes its inputs after earlier kernels have run.
pub fn find_split_hazards(body: &[Stmt], line: u32) -> Vec<Fallback> {
    let (loads, stores) = accesses(body);
    let mut first: BTreeMap<&str, &Access> = BTreeMap::new();
    for s in &stores {
        first.entry(&s.buf).or_insert(s);
    }
    let mut out = Vec::new();
    for l in &loads {
        if let Some(&s) = first.get(l.buf.as_str()) {
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
    // Stores and loads by buffer, buffers in the order of their first store.
    let mut bufs: Vec<&str> = Vec::new();
    let mut stores_of: BTreeMap<&str, Vec<&Access>> = BTreeMap::new();
    for s in &stores {
        let list = stores_of.entry(&s.buf).or_default();
        if list.is_empty() {
            bufs.push(&s.buf);
        }
        list.push(s);
    }
    let mut loads_of: BTreeMap<&str, Vec<&Access>> = BTreeMap::new();
    for l in &loads {
        loads_of.entry(&l.buf).or_default().push(l);
    }
    for b in bufs {
        let mine = &stores_of[b];
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
        for l in loads_of.get(b).into_iter().flatten() {
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
    nest_dependency(&NestBuffers::of(a), &NestBuffers::of(b))
}

/// [`find_nest_dependency`] on the nests' buffers.
pub(crate) fn nest_dependency(a: &NestBuffers, b: &NestBuffers) -> Option<(Rule, String)> {
    // Walk the second nest's names (the first may be a group of thousands).
    let (wa, ra, wb, rb) = (&a.written, &a.read, &b.written.list, &b.read.list);
    if let Some(x) = rb.iter().find(|x| wa.contains(x)) {
        return Some((
            Rule::Raw,
            format!("the second reads `{x}`, which the first writes"),
        ));
    }
    if let Some(x) = wb.iter().find(|x| ra.contains(x)) {
        return Some((
            Rule::War,
            format!("the second writes `{x}`, which the first reads"),
        ));
    }
    if let Some(x) = wb.iter().find(|x| wa.contains(x)) {
        return Some((Rule::Waw, format!("both write `{x}`")));
    }
    None
}
