//! Placing the gradients' stores: each differentiated input's gradient is
//! written directly where every load of it is one element per iteration
//! over its whole box, else zeroed and accumulated load by load.
//!
//! Direct: every load of `x` indexes `x[v1, .., vr]` by the variables of
//! the loops and reductions around it, which range exactly over `x`'s box.
//! Then `grad_x[v1, .., vr]` is the sum of the loads' contributions, stored
//! once, in the innermost loop all the loads share (in a new loop over the
//! rest): the softmax row's `x[i, j]` in the `for j` body and in its two
//! reductions give one `for j` store per row. Otherwise (a row of weights
//! read once per row, a gather, a loop over part of the box)
//! `grad_x` is set to zero first and each load adds its contribution
//! where it happened: correct for any index, in the program's order.

use super::{frame_loop, Deriver, FrameKind, GradError, Site};
use crate::{Expr, LoopVar, Param, Stmt};
use std::collections::{HashMap, HashSet};

/// The statements for each block of the derivative program, by block id.
pub(super) type Placed = HashMap<usize, Vec<Stmt>>;

/// The statements that zero gradients (they start the derivative
/// program) and the gradient stores for each block.
pub(super) fn place(d: &mut Deriver) -> Result<(Vec<Stmt>, Placed), GradError> {
    let sites = std::mem::take(&mut d.sites);
    let mut start = Vec::new();
    let mut placed = Placed::new();
    for (x, grad) in d.grads.clone() {
        let param = d.program.param(&x).expect("checked: a parameter").clone();
        let mine: Vec<&Site> = sites.iter().filter(|s| s.param == x).collect();
        if !mine.is_empty() && is_direct(d, &param, &mine) {
            let (block, stmt) = direct(d, &param, &grad, &mine)?;
            placed.entry(block).or_default().push(stmt);
            continue;
        }
        if !mine.is_empty() && is_projection(d, &param, &mine) {
            let stmt = projection(d, &param, &grad, &mine, &mut placed)?;
            let root = placed.entry(0).or_default();
            // Gradients summed over the same loops share one nest (one
            // pass over what they read: LayerNorm's weight and bias).
            if let (
                Some(Stmt::For { vars, body, .. }),
                Stmt::For {
                    vars: new_vars,
                    body: new_body,
                    ..
                },
            ) = (root.last_mut(), &stmt)
            {
                if vars == new_vars {
                    body.extend(new_body.iter().cloned());
                    continue;
                }
            }
            root.push(stmt);
            continue;
        }
        start.push(zero(d, &param, &grad));
        for s in mine {
            let old = Expr::load(&grad, s.idx.clone());
            let value = Expr::binary(crate::BinOp::Add, old, s.value.clone());
            let mut stmt = Stmt::store(grad.clone(), s.idx.clone(), value, s.span);
            for f in s.reduce.iter().rev() {
                if let Some(v) = frame_loop(f) {
                    stmt = Stmt::For {
                        vars: vec![v],
                        body: vec![stmt],
                        span: s.span,
                    };
                }
            }
            placed.entry(s.block).or_default().push(stmt);
        }
    }
    Ok((start, placed))
}

/// Every frame around a site, outermost first.
fn frames<'a>(d: &'a Deriver, s: &'a Site) -> impl Iterator<Item = &'a super::Frame> {
    d.blocks[s.block].frames.iter().chain(s.reduce.iter())
}

fn is_direct(d: &Deriver, param: &Param, sites: &[&Site]) -> bool {
    sites.iter().all(|s| {
        let f: Vec<_> = frames(d, s).collect();
        f.len() == param.dims.len()
            && f.iter()
                .zip(&param.dims)
                .zip(&s.idx)
                .all(|((f, dim), i)| match &f.kind {
                    FrameKind::Loop { var, lo, hi, .. } => {
                        *lo == dim.lo && *hi == dim.hi && matches!(i, Expr::Var(v) if v == var)
                    }
                    FrameKind::Cond => false,
                })
    })
}

/// The direct store of `grad` and the block it goes in.
fn direct(
    d: &mut Deriver,
    param: &Param,
    grad: &str,
    sites: &[&Site],
) -> Result<(usize, Stmt), GradError> {
    // The loops every site shares, as a block of the first site's chain.
    let first: Vec<super::Frame> = frames(d, sites[0]).cloned().collect();
    let mut shared = first
        .iter()
        .take_while(|f| matches!(f.kind, FrameKind::Loop { reduce: false, .. }))
        .count();
    for s in &sites[1..] {
        let same = frames(d, s)
            .zip(&first)
            .take_while(|(a, b)| a.id == b.id)
            .count();
        shared = shared.min(same);
    }
    let mut block = sites[0].block;
    while d.blocks[block].frames.len() > shared {
        block = d.blocks[block].parent.expect("the root has no frames");
    }
    let shared = d.blocks[block].frames.len();
    let names: Vec<String> = first[shared..]
        .iter()
        .filter_map(|f| frame_loop(f).map(|v| v.name))
        .collect();
    let avoid: HashSet<String> = names.iter().cloned().collect();
    let mut terms = Vec::new();
    for s in sites {
        let mut c = s.value.clone();
        let mut b = s.block;
        while b != block {
            d.inline(b, &mut c, s.span)?;
            b = d.blocks[b].parent.expect("a block below the shared one");
        }
        rename_bound(&mut c, &avoid, d);
        let own: Vec<String> = frames(d, s)
            .skip(shared)
            .filter_map(|f| frame_loop(f).map(|v| v.name))
            .collect();
        let map: HashMap<String, Expr> = own
            .iter()
            .zip(&names)
            .filter(|(a, b)| a != b)
            .map(|(a, b)| (a.clone(), Expr::var(b)))
            .collect();
        if !map.is_empty() {
            c.substitute_all(&map);
        }
        terms.push(c);
    }
    let value = super::partials::add_all(terms).expect("at least one site");
    let idx: Vec<Expr> = first
        .iter()
        .filter_map(|f| frame_loop(f).map(|v| Expr::var(&v.name)))
        .take(shared)
        .chain(names.iter().map(|n| Expr::var(n)))
        .collect();
    let span = sites[0].span;
    let store = Stmt::store(grad.to_string(), idx, value, span);
    if names.is_empty() {
        return Ok((block, store));
    }
    let vars = names
        .iter()
        .zip(&param.dims[shared..])
        .map(|(n, dim)| LoopVar {
            name: n.clone(),
            lo: dim.lo.clone(),
            hi: dim.hi.clone(),
        })
        .collect();
    Ok((
        block,
        Stmt::For {
            vars,
            body: vec![store],
            span,
        },
    ))
}

/// True when every load of the input indexes each dimension by its own
/// loop or reduction variable ranging over exactly that dimension of the
/// box, some variables left out (a row of weights read in every row: the
/// gradient sums over the rows), every range over size symbols alone, and
/// no `if` around it.
fn is_projection(d: &Deriver, param: &Param, sites: &[&Site]) -> bool {
    let symbols = d.program.size_symbols();
    let only_sizes = |e: &Expr| {
        let mut free = Vec::new();
        e.free_vars(&mut free);
        free.iter().all(|v| symbols.contains(v))
    };
    sites.iter().all(|s| {
        let loops: Vec<LoopVar> = frames(d, s).filter_map(frame_loop).collect();
        let all_loops = frames(d, s).all(|f| matches!(f.kind, FrameKind::Loop { .. }));
        let mut seen = Vec::new();
        all_loops
            && s.idx.len() == param.dims.len()
            && loops.iter().all(|v| only_sizes(&v.lo) && only_sizes(&v.hi))
            && s.idx.iter().zip(&param.dims).all(|(i, dim)| {
                let Expr::Var(name) = i else { return false };
                let fresh = !seen.contains(name);
                seen.push(name.clone());
                fresh
                    && loops
                        .iter()
                        .any(|v| v.name == *name && v.lo == dim.lo && v.hi == dim.hi)
            })
    })
}

/// The gradient of a projection, as one nest at the end of the program:
/// `for v.. { grad[v..] = sum(u..: contribution) }`, summing over the
/// loop variables the loads leave out. A contribution's bindings that are
/// cheap (of its own block: see [`cheap`]) are written out; any other
/// binding it reads is saved by its block to a work output `saved_NAME`,
/// indexed by that block's loops, and read back, so the sum does not
/// compute a reduction again per term: the gradient of a matrix product's
/// operand is then the product of the saved output gradient with the
/// other operand.
fn projection(
    d: &mut Deriver,
    param: &Param,
    grad: &str,
    sites: &[&Site],
    placed: &mut Placed,
) -> Result<Stmt, GradError> {
    let canonical: Vec<String> = sites[0]
        .idx
        .iter()
        .map(|i| match i {
            Expr::Var(v) => v.clone(),
            _ => unreachable!("checked: a variable"),
        })
        .collect();
    let mut terms = Vec::new();
    for s in sites {
        let mut c = s.value.clone();
        for (name, value) in d.blocks[s.block].lets.iter().rev() {
            if cheap(value) {
                super::write_out(&mut c, name, value, s.span)?;
            }
        }
        let mut b = Some(s.block);
        while let Some(id) = b {
            let names: Vec<String> = d.blocks[id].lets.iter().map(|l| l.0.clone()).collect();
            for name in names {
                if super::mentions(&c, &name) {
                    let load = save(d, id, &name, placed);
                    c.substitute(&name, &load);
                }
            }
            b = d.blocks[id].parent;
        }
        let loops: Vec<LoopVar> = frames(d, s).filter_map(frame_loop).collect();
        let own: Vec<&str> = s
            .idx
            .iter()
            .filter_map(|i| match i {
                Expr::Var(v) => Some(v.as_str()),
                _ => None,
            })
            .collect();
        let mut map: HashMap<String, Expr> = HashMap::new();
        for (o, n) in own.iter().zip(&canonical) {
            if o != n {
                map.insert(o.to_string(), Expr::var(n));
            }
        }
        let mut summed = Vec::new();
        for v in loops.iter().filter(|v| !own.contains(&v.name.as_str())) {
            let name = if canonical.contains(&v.name) {
                let fresh = d.namer.fresh(&v.name);
                map.insert(v.name.clone(), Expr::var(&fresh));
                fresh
            } else {
                v.name.clone()
            };
            summed.push((name, v.lo.clone(), v.hi.clone()));
        }
        let mut avoid: HashSet<String> = canonical.iter().cloned().collect();
        avoid.extend(summed.iter().map(|u| u.0.clone()));
        rename_bound(&mut c, &avoid, d);
        if !map.is_empty() {
            c.substitute_all(&map);
        }
        for (u, lo, hi) in summed.into_iter().rev() {
            c = super::sum(&u, lo, hi, c);
        }
        terms.push(c);
    }
    let value = super::partials::add_all(terms).expect("at least one site");
    let idx = canonical.iter().map(|n| Expr::var(n)).collect();
    let span = sites[0].span;
    let store = Stmt::store(grad.to_string(), idx, value, span);
    if canonical.is_empty() {
        return Ok(store);
    }
    let vars = canonical
        .iter()
        .zip(&param.dims)
        .map(|(n, dim)| LoopVar {
            name: n.clone(),
            lo: dim.lo.clone(),
            hi: dim.hi.clone(),
        })
        .collect();
    Ok(Stmt::For {
        vars,
        body: vec![store],
        span,
    })
}

/// A binding worth computing again in every term of a sum rather than
/// saving: a few arithmetic operations, no reduction, no function but
/// `select`, `min`, `max`, `abs` and casts.
fn cheap(value: &Expr) -> bool {
    let mut nodes = 0;
    let mut costly = false;
    value.walk(&mut |e| {
        nodes += 1;
        costly |= match e {
            Expr::Reduce { .. } => true,
            Expr::Call(f, _) => !matches!(
                f,
                crate::Func::Select
                    | crate::Func::Min
                    | crate::Func::Max
                    | crate::Func::Abs
                    | crate::Func::Cast(_)
            ),
            _ => false,
        }
    });
    !costly && nodes <= 12
}

/// The load of binding `name` of block `id` from its work output, made
/// (with the store that fills it, at the end of the block) on first use.
fn save(d: &mut Deriver, id: usize, name: &str, placed: &mut Placed) -> Expr {
    let loops: Vec<LoopVar> = d.blocks[id].frames.iter().filter_map(frame_loop).collect();
    let idx: Vec<Expr> = loops.iter().map(|v| Expr::var(&v.name)).collect();
    if let Some(saved) = d.saved.get(&(id, name.to_string())) {
        return Expr::load(saved, idx);
    }
    let saved = d.namer.fresh(&format!("saved_{name}"));
    d.saved.insert((id, name.to_string()), saved.clone());
    let dtype = d.blocks[id]
        .types
        .get(name)
        .copied()
        .unwrap_or(d.program.float_type());
    d.params.push(Param {
        name: saved.clone(),
        role: crate::Role::Out,
        dtype,
        dims: loops
            .iter()
            .map(|v| crate::Dim {
                lo: v.lo.clone(),
                hi: v.hi.clone(),
            })
            .collect(),
        span: d.program.span,
    });
    let store = Stmt::store(saved.clone(), idx.clone(), Expr::var(name), d.program.span);
    placed.entry(id).or_default().push(store);
    Expr::load(&saved, idx)
}

/// `grad = 0` over the whole box, with fresh loop variables.
fn zero(d: &mut Deriver, param: &Param, grad: &str) -> Stmt {
    let vars: Vec<LoopVar> = param
        .dims
        .iter()
        .enumerate()
        .map(|(k, dim)| LoopVar {
            name: d.namer.fresh(&format!("z{k}")),
            lo: dim.lo.clone(),
            hi: dim.hi.clone(),
        })
        .collect();
    let idx = vars.iter().map(|v| Expr::var(&v.name)).collect();
    let store = Stmt::store(grad.to_string(), idx, Expr::Float(0.0), param.span);
    if vars.is_empty() {
        return store;
    }
    Stmt::For {
        vars,
        body: vec![store],
        span: param.span,
    }
}

/// Renames reduction variables of `e` that are in `avoid` (so renaming
/// free variables to those names cannot capture them).
fn rename_bound(e: &mut Expr, avoid: &HashSet<String>, d: &mut Deriver) {
    if let Expr::Reduce { var, body, .. } = e {
        if avoid.contains(var.as_str()) {
            let fresh = d.namer.fresh(var);
            body.substitute(var, &Expr::var(&fresh));
            *var = fresh;
        }
    }
    for c in e.children_mut() {
        rename_bound(c, avoid, d);
    }
}
