//! Caches a value a row computes twice. When a reduction's body is an
//! expensive expression of the reduction variable (`exp(x[i, j] - m)` in
//! softmax) and a later loop of the same row over the same range computes
//! it again, the row is rewritten to compute it once into a scratch row,
//!
//! ```text
//! for j in lo..hi { __scr0[j] = E }      # inserted before the reduction
//! z = sum(j in lo..hi: __scr0[j])         # was sum(j in lo..hi: E)
//! for w in lo..hi { ... __scr0[w] ... }   # was ... E[j := w] ...
//! ```
//!
//! and each target gives the scratch row storage (a per-thread buffer on
//! CPUs, shared memory on GPUs). The values, and the order in which they
//! are reduced, are unchanged, so results are identical bit for bit:
//! only calls and divisions are cached, never a product a compiler could
//! contract into its consumer's addition.
//!
//! The rewrite applies only where it cannot change meaning: `E` reads no
//! buffer the kernel writes, its free names are size symbols, the row
//! variable or bindings made before the reduction, the later loop rebinds
//! none of them, and the range is made of size symbols.
//!
//! The pass runs in [`crate::compile`] after the kernels are planned and
//! records the rewritten body beside the kernel's own ([`Kernel::cached`]):
//! a target may run either (CUDA's streaming entry point keeps the plain
//! body, since it has no scratch storage).
//!
//! The fill and the reduction right after it that reads the scratch row
//! back may run as one loop ([`fill_read_back`]: the rule, which the CUDA
//! row kernels ask, is here with the rewrite that makes the pair).

use crate::{Kernel, Mapping};
use std::borrow::Cow;
use tile_ir::{BinOp, DType, Expr, Func, LoopVar, Program, ReduceOp, Stmt};

/// A row kernel's body with reduced values cached in scratch rows.
#[derive(Clone, Debug, PartialEq)]
pub struct Cached {
    /// The rewritten body: fills of the scratch rows, then the row's
    /// statements reading them.
    pub body: Vec<Stmt>,
    /// The scratch rows, at least one.
    pub scratch: Vec<ScratchRow>,
}

impl Cached {
    /// Each scratch row with its fill's variable and the value it stores
    /// (an expression of that variable).
    pub fn cached_values(&self) -> Vec<(&ScratchRow, &str, &Expr)> {
        let mut out = Vec::new();
        for row in &self.scratch {
            // A fill is a loop of one store, at the body's top level.
            for s in &self.body {
                let Stmt::For { vars, body, .. } = s else {
                    continue;
                };
                for t in body {
                    if let Stmt::Store { buf, value, .. } = t {
                        if *buf == row.name {
                            out.push((row, vars[0].name.as_str(), value));
                        }
                    }
                }
            }
        }
        out
    }
}

/// Sets [`Kernel::cached`] on each row kernel of `program` that computes
/// a value twice.
pub fn cache_reduced_values(program: &Program, kernels: &mut [Kernel]) {
    for k in kernels {
        let (Mapping::RowReduction, Some(row)) = (k.mapping, k.domain.first()) else {
            continue;
        };
        let (body, scratch) = cache_row(program, &row.name, &k.body, &k.stores);
        k.cached = (!scratch.is_empty()).then_some(Cached { body, scratch });
    }
}

/// A row of scratch storage a rewritten row body stores to and reads.
#[derive(Clone, Debug, PartialEq)]
pub struct ScratchRow {
    /// The name the rewritten statements use as a buffer (`__scr0`, ...).
    pub name: String,
    /// Element type (the program's float type).
    pub dtype: DType,
    /// The row's range (of size symbols): it is indexed `lo..hi`.
    pub lo: Expr,
    /// One past its last index.
    pub hi: Expr,
}

/// Rewrites the body of a row kernel over `row` that writes `written`;
/// returns the body (unchanged when nothing is cached) and its scratch
/// rows.
pub fn cache_row(
    program: &Program,
    row: &str,
    body: &[Stmt],
    written: &[String],
) -> (Vec<Stmt>, Vec<ScratchRow>) {
    let mut out = body.to_vec();
    let mut scratch: Vec<ScratchRow> = Vec::new();
    let symbols = program.size_symbols();
    let float = program.float_type();
    let mut a = 0;
    while a < out.len() {
        let Stmt::Let { value, span, .. } = &out[a] else {
            a += 1;
            continue;
        };
        let mut allowed: Vec<String> = symbols.clone();
        allowed.push(row.to_string());
        // Types of the names a body may read: sizes and loop variables are
        // integers, earlier bindings have their values' types.
        let mut types: std::collections::HashMap<String, DType> =
            allowed.iter().map(|n| (n.clone(), DType::I32)).collect();
        for s in &out[..a] {
            if let Stmt::Let { name, value, .. } = s {
                allowed.push(name.clone());
                let t = tile_ir::infer_type(value, &|n| types.get(n).copied(), program);
                types.insert(name.clone(), t);
            }
        }
        let span = *span;
        let mut value = value.clone();
        let mut fills = Vec::new();
        let name_base = scratch.len();
        let mut later = out[a + 1..].to_vec();
        each_top_reduction(&mut value, &mut |r| {
            let Expr::Reduce {
                var, lo, hi, body, ..
            } = r
            else {
                return;
            };
            let var_type = |n: &str| {
                if n == var.as_str() {
                    Some(DType::I32)
                } else {
                    types.get(n).copied()
                }
            };
            // Scratch rows hold floats: an integer body (`i32(x) / 3`)
            // would be rounded.
            if tile_ir::infer_type(body, &var_type, program) != float
                || !cacheable(body, program, float, written)
                || !only_names(lo, &symbols)
                || !only_names(hi, &symbols)
            {
                return;
            }
            let mut free = Vec::new();
            body.free_vars(&mut free);
            if free.iter().any(|n| n != var && !allowed.contains(n)) {
                return;
            }
            let name = tile_ir::names::generated("scr", name_base + fills.len());
            let mut used = false;
            for s in later.iter_mut() {
                if let Stmt::For { vars, body: fb, .. } = s {
                    let [w] = vars.as_slice() else { continue };
                    if w.lo != **lo || w.hi != **hi || (w.name != *var && free.contains(&w.name)) {
                        continue;
                    }
                    if fb.iter().any(|t| binds_any(t, &free)) {
                        continue;
                    }
                    let mut target = (**body).clone();
                    target.substitute(var, &Expr::var(&w.name));
                    let load = Expr::load(&name, vec![Expr::var(&w.name)]);
                    let w = w.name.clone();
                    used |= replace_in_body(fb, &target, &load, &w);
                }
            }
            if !used {
                return;
            }
            fills.push(Stmt::For {
                vars: vec![LoopVar {
                    name: var.clone(),
                    lo: (**lo).clone(),
                    hi: (**hi).clone(),
                }],
                body: vec![Stmt::store(
                    name.clone(),
                    vec![Expr::var(var)],
                    (**body).clone(),
                    span,
                )],
                span,
            });
            scratch.push(ScratchRow {
                name: name.clone(),
                dtype: float,
                lo: (**lo).clone(),
                hi: (**hi).clone(),
            });
            **body = Expr::load(&name, vec![Expr::var(var)]);
        });
        if fills.is_empty() {
            a += 1;
            continue;
        }
        if let Stmt::Let { value: v, .. } = &mut out[a] {
            *v = value;
        }
        out.truncate(a + 1);
        out.extend(later);
        let n = fills.len();
        out.splice(a..a, fills);
        a += n + 1;
    }
    (out, scratch)
}

/// `program`'s signature (its parameters; no statements: kernels bring
/// their own bodies) with one `inout` parameter per scratch row appended,
/// so a printer resolves the rewritten statements' scratch accesses
/// (types, boxes, bounds checks) like any buffer's; `program` itself when
/// there are no scratch rows. Targets declare the scratch rows' pointers
/// themselves. The body is left out so that a program of thousands of
/// kernels is not copied once per kernel.
pub fn with_scratch<'p>(program: &'p Program, scratch: &[ScratchRow]) -> Cow<'p, Program> {
    if scratch.is_empty() {
        return Cow::Borrowed(program);
    }
    let mut params = program.params.clone();
    params.extend(scratch_params(program, scratch));
    Cow::Owned(Program {
        name: program.name.clone(),
        params,
        body: Vec::new(),
        span: program.span,
    })
}

/// The `inout` parameters [`with_scratch`] appends, one per scratch row:
/// what a printer adds to a kernel's own parameters
/// (`tile_emit::Printer::add_params`).
pub fn scratch_params(program: &Program, scratch: &[ScratchRow]) -> Vec<tile_ir::Param> {
    scratch
        .iter()
        .map(|s| tile_ir::Param {
            name: s.name.clone(),
            role: tile_ir::Role::InOut,
            dtype: s.dtype,
            dims: vec![tile_ir::Dim {
                lo: s.lo.clone(),
                hi: s.hi.clone(),
            }],
            span: program.span,
        })
        .collect()
}

/// Calls `f` on each reduction of `e` that is not inside another one.
fn each_top_reduction(e: &mut Expr, f: &mut dyn FnMut(&mut Expr)) {
    if matches!(e, Expr::Reduce { .. }) {
        f(e);
        return;
    }
    for c in e.children_mut() {
        each_top_reduction(c, f);
    }
}

/// Whether `e` is worth caching and safe to cache: a call to a function
/// that costs more than a load, or a division, with no reduction inside,
/// reading only buffers of the program's float type that the kernel does
/// not write.
fn cacheable(e: &Expr, program: &Program, float: DType, written: &[String]) -> bool {
    let top = match e {
        Expr::Call(f, _) => matches!(
            f,
            Func::Exp
                | Func::Exp2
                | Func::Log
                | Func::Log2
                | Func::Log1p
                | Func::Expm1
                | Func::Sqrt
                | Func::Rsqrt
                | Func::Tanh
                | Func::Sigmoid
                | Func::Erf
                | Func::Sin
                | Func::Cos
                | Func::Pow
        ),
        Expr::Binary(BinOp::Div, _, _, _) => true,
        _ => false,
    };
    if !top || e.has_reduction() {
        return false;
    }
    let mut bufs = Vec::new();
    e.loaded_buffers(&mut bufs);
    !bufs.is_empty()
        && bufs
            .iter()
            .all(|b| !written.contains(b) && program.param(b).is_some_and(|p| p.dtype == float))
}

fn only_names(e: &Expr, names: &[String]) -> bool {
    let mut free = Vec::new();
    e.free_vars(&mut free);
    free.iter().all(|n| names.contains(n))
}

fn binds_any(s: &Stmt, names: &[String]) -> bool {
    let mut found = false;
    s.walk(&mut |t| match t {
        Stmt::Let { name, .. } => found |= names.contains(name),
        Stmt::For { vars, .. } => found |= vars.iter().any(|v| names.contains(&v.name)),
        _ => {}
    });
    found
}

/// Replaces `target` by `by` in the statements of a loop body, outside
/// any reduction that binds `w` again; whether anything was replaced. A
/// name bound earlier in the body stands for its value (the loop body may
/// have bound a shared load, `c0 = x[i, j]`, that `target` spells out).
fn replace_in_body(body: &mut [Stmt], target: &Expr, by: &Expr, w: &str) -> bool {
    let mut env: Vec<(String, Expr)> = Vec::new();
    let mut hit = false;
    for s in body.iter_mut() {
        match s {
            Stmt::Let { name, value, .. } => {
                hit |= replace(value, target, by, w, &env);
                env.push((name.clone(), value.clone()));
            }
            Stmt::Store { idx, value, .. } => {
                for e in idx.iter_mut() {
                    hit |= replace(e, target, by, w, &env);
                }
                hit |= replace(value, target, by, w, &env);
            }
            _ => {}
        }
    }
    hit
}

fn replace(e: &mut Expr, target: &Expr, by: &Expr, w: &str, env: &[(String, Expr)]) -> bool {
    if same(target, e, env) {
        *e = by.clone();
        return true;
    }
    if let Expr::Reduce { var, .. } = e {
        if var == w {
            return false;
        }
    }
    let mut hit = false;
    for c in e.children_mut() {
        hit |= replace(c, target, by, w, env);
    }
    hit
}

/// Whether `e` computes `target`, reading names bound in `env` (latest
/// last) as their values.
fn same(target: &Expr, e: &Expr, env: &[(String, Expr)]) -> bool {
    if let Expr::Var(n) = e {
        if let Some(k) = env.iter().rposition(|(m, _)| m == n) {
            return same(target, &env[k].1, &env[..k]);
        }
    }
    let shallow = match (target, e) {
        (Expr::Load { buf: a, idx: x, .. }, Expr::Load { buf: b, idx: y, .. }) => {
            a == b && x.len() == y.len()
        }
        (Expr::Unary(a, _), Expr::Unary(b, _)) => a == b,
        (Expr::Binary(a, _, _, _), Expr::Binary(b, _, _, _)) => a == b,
        (Expr::Call(a, x), Expr::Call(b, y)) => a == b && x.len() == y.len(),
        (Expr::Reduce { op: a, var: v, .. }, Expr::Reduce { op: b, var: u, .. }) => {
            a == b && v == u
        }
        (a, b) => a == b,
    };
    shallow
        && target
            .children()
            .iter()
            .zip(e.children())
            .all(|(t, c)| same(t, c, env))
}

/// A fill of one of the `scratch` rows at `stmts[a]` whose values the
/// binding at `stmts[a + 1]` reduces directly (`op(j in lo..hi: __scrN[j])`
/// over the fill's range): the reduction's operator. Such a fill and
/// reduction may run as one loop, each iteration storing its value and
/// combining it (the reduction reads exactly what the fill's iteration
/// wrote, in the same order); a target that does so replaces the
/// reduction with its result ([`replace_read_back`]).
pub fn fill_read_back(stmts: &[Stmt], a: usize, scratch: &[ScratchRow]) -> Option<ReduceOp> {
    let (Stmt::For { vars, body, .. }, Some(Stmt::Let { value, .. })) =
        (&stmts[a], stmts.get(a + 1))
    else {
        return None;
    };
    let [lv] = vars.as_slice() else { return None };
    let [Stmt::Store { buf, idx, .. }] = body.as_slice() else {
        return None;
    };
    if !scratch.iter().any(|s| &s.name == buf) || idx.as_slice() != [Expr::var(&lv.name)] {
        return None;
    }
    reads_back(value, buf, &lv.lo, &lv.hi)
}

/// The operator of the first top-level reduction in `e` that reads
/// `buf[v]` over `lo..hi` and nothing else.
fn reads_back(e: &Expr, buf: &str, lo: &Expr, hi: &Expr) -> Option<ReduceOp> {
    match e {
        Expr::Reduce {
            op,
            var,
            lo: l,
            hi: h,
            body,
        } => {
            let read = Expr::load(buf, vec![Expr::var(var)]);
            (**l == *lo && **h == *hi && **body == read).then_some(*op)
        }
        _ => e
            .children()
            .into_iter()
            .find_map(|c| reads_back(c, buf, lo, hi)),
    }
}

/// Replaces the first top-level reduction of `e` that [`reads_back`]
/// `buf` by `name`.
pub fn replace_read_back(e: &mut Expr, buf: &str, lo: &Expr, hi: &Expr, name: &str) -> bool {
    if let Expr::Reduce { .. } = e {
        if reads_back(e, buf, lo, hi).is_some() {
            *e = Expr::var(name);
            return true;
        }
        return false;
    }
    e.children_mut()
        .into_iter()
        .any(|c| replace_read_back(c, buf, lo, hi, name))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rewrite(text: &str) -> (Vec<Stmt>, Vec<ScratchRow>) {
        let program = tile_ir::parse_program(text).unwrap();
        let Stmt::For { vars, body, .. } = &program.body[0] else {
            panic!("a row nest")
        };
        cache_row(&program, &vars[0].name, body, &["y".to_string()])
    }

    fn text(stmts: &[Stmt]) -> String {
        stmts
            .iter()
            .map(|s| format!("{s}"))
            .collect::<Vec<_>>()
            .join("\n")
    }

    #[test]
    fn softmax_computes_each_exponential_once() {
        let (body, scratch) = rewrite(include_str!(
            "../../../tests/programs/controls/softmax.tile"
        ));
        assert_eq!(scratch.len(), 1);
        let t = text(&body);
        assert_eq!(t.matches("exp(").count(), 1, "{t}");
        assert!(t.contains("__scr0[j] = exp(x[i, j] - m)"), "{t}");
        assert!(t.contains("z = sum(j in 0..N: __scr0[j])"), "{t}");
        assert!(t.contains("y[i, j] = __scr0[j] / z"), "{t}");
    }

    #[test]
    fn integer_bodies_are_not_cached_in_float_rows() {
        let (_, scratch) = rewrite(
            "program p(x: in f32[M, N], y: out f32[M, N]) {
              for i in 0..M {
                s = sum(j in 0..N: i32(x[i, j]) / 3)
                for j in 0..N { y[i, j] = f32(i32(x[i, j]) / 3) + f32(s) }
              }
            }",
        );
        assert!(scratch.is_empty());
    }

    #[test]
    fn cheap_or_unsafe_bodies_are_left_alone() {
        for p in [
            // A product: a compiler may contract it into the sum.
            "program p(x: in f32[M, N], y: out f32[M, N]) { for i in 0..M { s = sum(j in 0..N: x[i, j] * x[i, j]); for j in 0..N { y[i, j] = x[i, j] * x[i, j] + s } } }",
            // Not computed again.
            "program p(x: in f32[M, N], y: out f32[M, N]) { for i in 0..M { s = sum(j in 0..N: exp(x[i, j])); for j in 0..N { y[i, j] = x[i, j] / s } } }",
            // Reads a buffer the kernel writes.
            "program p(x: in f32[M, N], y: inout f32[M, N]) { for i in 0..M { s = sum(j in 0..N: exp(y[i, j])); for j in 0..N { y[i, j] = exp(y[i, j]) / s } } }",
            // A different range.
            "program p(x: in f32[M, N], y: out f32[M, N]) { for i in 0..M { s = sum(j in 1..N: exp(x[i, j])); for j in 0..N { y[i, j] = exp(x[i, j]) / s } } }",
            // The loop rebinds a name the body uses.
            "program p(x: in f32[M, N], y: out f32[M, N]) { for i in 0..M { m = max(j in 0..N: x[i, j]); s = sum(j in 0..N: exp(x[i, j] - m)); for j in 0..N { m = 2.0; y[i, j] = exp(x[i, j] - m) / s } } }",
        ] {
            let (body, scratch) = rewrite(p);
            let program = tile_ir::parse_program(p).unwrap();
            let Stmt::For { body: orig, .. } = &program.body[0] else {
                panic!("a row nest")
            };
            assert!(scratch.is_empty(), "{p}");
            assert_eq!(&body, orig, "{p}");
        }
    }

    #[test]
    fn a_load_the_loop_body_shares_still_matches() {
        let (body, scratch) = rewrite(
            "program p(x: in f32[M, N], y: out f32[M, N]) { for i in 0..M { s = sum(j in 0..N: exp(x[i, j] * 0.5)); for j in 0..N { c0 = x[i, j]; y[i, j] = c0 + exp(c0 * 0.5) / s } } }",
        );
        assert_eq!(scratch.len(), 1);
        let t = text(&body);
        assert!(t.contains("y[i, j] = c0 + __scr0[j] / s"), "{t}");
    }

    #[test]
    fn a_loop_variable_of_another_name_is_substituted() {
        let (body, scratch) = rewrite(
            "program p(x: in f32[M, N], y: out f32[M, N]) { for i in 0..M { s = sum(k in 0..N: exp(x[i, k])); for j in 0..N { y[i, j] = exp(x[i, j]) / s } } }",
        );
        assert_eq!(scratch.len(), 1);
        let t = text(&body);
        assert!(t.contains("__scr0[k] = exp(x[i, k])"), "{t}");
        assert!(t.contains("y[i, j] = __scr0[j] / s"), "{t}");
    }
}
