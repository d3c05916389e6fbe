//! `share_common_values`: one computation per shared value.
//!
//! Within each block, an expression computed more than once (across every
//! store, binding and condition of the block, so across all outputs of a
//! nest) is bound once to a fresh name before its first use, and every
//! later occurrence reads that name. Existing bindings are reused the same
//! way. Expressions are only shared at the level where they are evaluated
//! unconditionally (nothing is hoisted out of an `if`), never across a
//! binder (a reduction or loop variable of the same name), and never when
//! they load from a buffer the program writes (a store between two loads
//! could change the value). Affine index arithmetic is never bound: it is
//! cheap, and the access-map analysis must see it in place.

use crate::affine::Affine;
use std::collections::{BTreeSet, HashMap};
use tile_ir::{Expr, Program, Span, Stmt};

/// Shares common sub-expressions in `program` in place.
pub fn share_common_values(program: &mut Program) {
    let mut written = BTreeSet::new();
    let mut names = BTreeSet::new();
    program.walk(&mut |s| match s {
        Stmt::Store { buf, .. } => {
            written.insert(buf.clone());
        }
        Stmt::Let { name, .. } => {
            names.insert(name.clone());
        }
        Stmt::For { vars, .. } => names.extend(vars.iter().map(|v| v.name.clone())),
        Stmt::If { .. } => {}
    });
    // Reduction variables too: a fresh name must not be captured by one.
    for s in &program.body {
        s.walk_exprs(&mut |e| {
            e.walk(&mut |x| {
                if let Expr::Reduce { var, .. } = x {
                    names.insert(var.clone());
                }
            })
        });
    }
    names.extend(program.size_symbols());
    names.extend(program.params.iter().map(|p| p.name.clone()));
    let mut cx = Sharer {
        written,
        names,
        next: 0,
    };
    let body = std::mem::take(&mut program.body);
    program.body = cx.block(body);
}

struct Sharer {
    written: BTreeSet<String>,
    names: BTreeSet<String>,
    next: usize,
}

/// Expressions evaluated directly by a statement (not in nested blocks).
fn level_exprs(s: &Stmt) -> Vec<&Expr> {
    match s {
        Stmt::Let { value, .. } => vec![value],
        Stmt::Store { idx, value, .. } => idx.iter().chain(std::iter::once(value)).collect(),
        Stmt::If { cond, .. } => vec![cond],
        // Loop bounds are index arithmetic, left where they are.
        Stmt::For { .. } => vec![],
    }
}

fn size(e: &Expr) -> usize {
    let mut n = 0;
    e.walk(&mut |_| n += 1);
    n
}

impl Sharer {
    fn fresh(&mut self) -> String {
        loop {
            // Listed in `Plan::shared`: range-proof messages show its
            // value instead (`check_ranges`).
            let n = format!("c{}", self.next);
            self.next += 1;
            if self.names.insert(n.clone()) {
                return n;
            }
        }
    }

    fn shareable(&self, e: &Expr) -> bool {
        // Affine expressions are index arithmetic: cheap, and binding them
        // would hide access maps from the analysis.
        if matches!(
            e,
            Expr::Float(_) | Expr::Int(_) | Expr::Bool(_) | Expr::Var(_)
        ) || Affine::of(e).is_some()
        {
            return false;
        }
        let mut loads = Vec::new();
        e.loaded_buffers(&mut loads);
        loads.iter().all(|b| !self.written.contains(b))
    }

    /// Candidate sub-expressions of `e` (not inside reduction bodies).
    fn candidates<'e>(&self, e: &'e Expr, out: &mut Vec<&'e Expr>) {
        if self.shareable(e) {
            out.push(e);
        }
        match e {
            Expr::Reduce { lo, hi, .. } => {
                self.candidates(lo, out);
                self.candidates(hi, out);
            }
            _ => e
                .children()
                .into_iter()
                .for_each(|c| self.candidates(c, out)),
        }
    }

    /// Binds every expression computed more than once at this level,
    /// largest first, each before the first statement that evaluates it.
    ///
    /// One count of the block's candidates (keyed by their text), then a
    /// greedy pass in order of size (then first use): binding `e`, seen
    /// `c` times, leaves one copy of each of its sub-expressions (in the
    /// binding) where there were `c`, so their counts drop by `c - 1`. The
    /// chosen values are then bound and replaced in one forward walk.
    /// Linear in the block's candidates times the expression depth (each
    /// candidate's text is printed once per enclosing candidate).
    fn bind_repeated(&mut self, stmts: Vec<Stmt>) -> Vec<Stmt> {
        struct Seen {
            count: usize,
            first: usize,
            size: usize,
            expr: Expr,
            /// Candidate sub-expressions (keys) inside one copy, the root
            /// excluded.
            inner: Vec<String>,
        }
        let mut seen: HashMap<String, Seen> = HashMap::new();
        // Statements whose level evaluates each key, in order.
        let mut at: HashMap<String, Vec<usize>> = HashMap::new();
        for (k, s) in stmts.iter().enumerate() {
            let mut c = Vec::new();
            for e in level_exprs(s) {
                self.candidates(e, &mut c);
            }
            for e in c {
                let key = e.to_string();
                let users = at.entry(key.clone()).or_default();
                if users.last() != Some(&k) {
                    users.push(k);
                }
                match seen.get_mut(&key) {
                    Some(v) => v.count += 1,
                    None => {
                        let mut inner = Vec::new();
                        self.candidates(e, &mut inner);
                        let inner = inner.iter().skip(1).map(|x| x.to_string()).collect();
                        let v = Seen {
                            count: 1,
                            first: k,
                            size: size(e),
                            expr: e.clone(),
                            inner,
                        };
                        seen.insert(key, v);
                    }
                }
            }
        }
        let mut order: Vec<(&String, usize, usize)> = seen
            .iter()
            .filter(|(_, v)| v.count >= 2)
            .map(|(k, v)| (k, v.size, v.first))
            .collect();
        order.sort_by(|a, b| b.1.cmp(&a.1).then(a.2.cmp(&b.2)).then(b.0.cmp(a.0)));
        let order: Vec<String> = order.into_iter().map(|(k, _, _)| k.clone()).collect();
        let mut chosen: Vec<String> = Vec::new();
        for key in order {
            let c = seen[&key].count;
            if c < 2 {
                continue;
            }
            for sub in seen[&key].inner.clone() {
                if let Some(v) = seen.get_mut(&sub) {
                    v.count -= (c - 1).min(v.count);
                }
            }
            chosen.push(key);
        }
        if chosen.is_empty() {
            return stmts;
        }
        // Names in choice order; each value with the larger chosen values
        // inside it already replaced.
        let names: HashMap<String, String> =
            chosen.iter().map(|k| (k.clone(), self.fresh())).collect();
        // Where each binding goes: before the first statement that
        // evaluates its value at this level, or before the first larger
        // binding that contains it, whichever comes first.
        let n = stmts.len();
        let mut before: Vec<Vec<usize>> = vec![Vec::new(); n];
        let mut before_binding: Vec<Vec<usize>> = vec![Vec::new(); chosen.len()];
        let mut pos: Vec<Vec<usize>> = Vec::with_capacity(chosen.len());
        let index: HashMap<&String, usize> =
            chosen.iter().enumerate().map(|(i, k)| (k, i)).collect();
        let mut users_of_binding: Vec<Vec<usize>> = vec![Vec::new(); chosen.len()];
        for (b, key) in chosen.iter().enumerate() {
            let mut direct = Vec::new();
            top_level_chosen(&seen[key].expr, &names, true, &mut direct);
            for d in direct {
                if let Some(&i) = index.get(&d) {
                    users_of_binding[i].push(b);
                }
            }
        }
        for (b, key) in chosen.iter().enumerate() {
            // Statements where the key is still evaluated once larger
            // chosen values are bound: a statement evaluates it when the
            // key occurs there outside every larger chosen value.
            let stmt_user = at[key].iter().copied().find(|&k| {
                let mut direct = Vec::new();
                for e in level_exprs(&stmts[k]) {
                    top_level_chosen(e, &names, false, &mut direct);
                }
                direct.iter().any(|d| d == key)
            });
            let mut best: Option<(Vec<usize>, Target)> =
                stmt_user.map(|k| (vec![k, usize::MAX], Target::Stmt(k)));
            for &u in &users_of_binding[b] {
                let p = pos[u].clone();
                if best.as_ref().is_none_or(|(q, _)| p < *q) {
                    best = Some((p, Target::Binding(u)));
                }
            }
            let Some((upos, target)) = best else {
                // Unreachable for a key counted twice; keep it anyway.
                pos.push(vec![n, usize::MAX]);
                before.push(Vec::new());
                continue;
            };
            let slot = match target {
                Target::Stmt(k) => &mut before[k],
                Target::Binding(u) => &mut before_binding[u],
            };
            let mut p = upos[..upos.len() - 1].to_vec();
            p.push(slot.len());
            p.push(usize::MAX);
            slot.push(b);
            pos.push(p);
        }
        // Lay out the block and replace chosen values, in one forward walk.
        let mut visible: HashMap<String, String> = HashMap::new();
        let mut out = Vec::with_capacity(n + chosen.len());
        #[allow(clippy::too_many_arguments)]
        fn emit(
            b: usize,
            span: Span,
            chosen: &[String],
            seen_expr: &dyn Fn(&str) -> Expr,
            names: &HashMap<String, String>,
            before_binding: &[Vec<usize>],
            visible: &mut HashMap<String, String>,
            out: &mut Vec<Stmt>,
        ) {
            for &c in &before_binding[b] {
                emit(
                    c,
                    span,
                    chosen,
                    seen_expr,
                    names,
                    before_binding,
                    visible,
                    out,
                );
            }
            let key = &chosen[b];
            let mut value = seen_expr(key);
            for c in value.children_mut() {
                reuse_expr(c, visible);
            }
            // Located at the first statement that uses it: a refusal of
            // the value (`check_ranges`) points at the user's line.
            out.push(Stmt::Let {
                name: names[key].clone(),
                value,
                span,
            });
            visible.insert(key.clone(), names[key].clone());
        }
        let seen_expr = |k: &str| seen[k].expr.clone();
        for (k, mut s) in stmts.into_iter().enumerate() {
            let span = s.span();
            for &b in &before[k] {
                emit(
                    b,
                    span,
                    &chosen,
                    &seen_expr,
                    &names,
                    &before_binding,
                    &mut visible,
                    &mut out,
                );
            }
            reuse_stmt(&mut s, &visible);
            out.push(s);
        }
        out
    }

    fn block(&mut self, mut stmts: Vec<Stmt>) -> Vec<Stmt> {
        // Reuse existing bindings for later occurrences of their values:
        // one walk, each statement rewritten with the bindings before it.
        let mut bound: HashMap<String, String> = HashMap::new();
        for s in stmts.iter_mut() {
            reuse_stmt(s, &bound);
            if let Stmt::Let { name, value, .. } = s {
                if self.shareable(value) {
                    bound
                        .entry(value.to_string())
                        .or_insert_with(|| name.clone());
                }
            }
        }
        // Bind repeated expressions, largest first.
        let stmts = self.bind_repeated(stmts);
        // Nested blocks are scopes of their own.
        stmts
            .into_iter()
            .map(|s| match s {
                Stmt::For { vars, body, span } => Stmt::For {
                    vars,
                    body: self.block(body),
                    span,
                },
                Stmt::If {
                    cond,
                    then,
                    els,
                    span,
                } => Stmt::If {
                    cond,
                    then: self.block(then),
                    els: self.block(els),
                    span,
                },
                s => s,
            })
            .collect()
    }
}

/// Where a chosen value's binding goes.
enum Target {
    /// Before this statement of the block.
    Stmt(usize),
    /// Before this (larger) binding.
    Binding(usize),
}

/// The chosen keys `e` evaluates outside every larger chosen value (for
/// `skip_root`, below `e` itself), not looking into reduction bodies: the
/// places a binding must precede.
fn top_level_chosen(
    e: &Expr,
    names: &HashMap<String, String>,
    skip_root: bool,
    out: &mut Vec<String>,
) {
    if !skip_root
        && !matches!(
            e,
            Expr::Float(_) | Expr::Int(_) | Expr::Bool(_) | Expr::Var(_)
        )
    {
        let key = e.to_string();
        if names.contains_key(&key) {
            out.push(key);
            return;
        }
    }
    match e {
        Expr::Reduce { lo, hi, .. } => {
            top_level_chosen(lo, names, false, out);
            top_level_chosen(hi, names, false, out);
        }
        _ => {
            for c in e.children() {
                top_level_chosen(c, names, false, out);
            }
        }
    }
}

/// Rewrites every expression of `s` (nested blocks and reduction bodies
/// included) that prints as a bound value into the binding's name.
/// Bindings are single assignment and never shadowed (the verifier's
/// rule), so a value's free names mean the same wherever it recurs in the
/// statements after it. Used for existing bindings and for the values
/// `bind_repeated` binds.
fn reuse_stmt(s: &mut Stmt, bound: &HashMap<String, String>) {
    if bound.is_empty() {
        return;
    }
    for e in s.exprs_mut() {
        reuse_expr(e, bound);
    }
    for body in s.bodies_mut() {
        body.iter_mut().for_each(|t| reuse_stmt(t, bound));
    }
}

/// The whole expression if it is bound, else its operands, then the
/// rewritten expression again (`x * 2 + 1` after `x * 2` became `a`).
/// True when `e` changed.
fn reuse_expr(e: &mut Expr, bound: &HashMap<String, String>) -> bool {
    if matches!(
        e,
        Expr::Float(_) | Expr::Int(_) | Expr::Bool(_) | Expr::Var(_)
    ) {
        return false;
    }
    if let Some(n) = bound.get(&e.to_string()) {
        *e = Expr::var(n);
        return true;
    }
    let mut changed = false;
    for c in e.children_mut() {
        changed |= reuse_expr(c, bound);
    }
    if changed {
        if let Some(n) = bound.get(&e.to_string()) {
            *e = Expr::var(n);
        }
    }
    changed
}
