//! Prints a row kernel's loops of threads over a row, four elements at a
//! time: thread `t` takes the quads starting at `4 t`, `4 (t + B)`, ...
//! (B threads per block), and the one partial quad at the row's ragged end
//! element by element. Within a quad:
//!
//! - rows staged in shared memory are read as one 16-byte vector;
//! - when every load of the body is a contiguous `f32` access (index `j +
//!   c` in the last dimension, `c` fixed over the loop) checked at the
//!   loop's entry, each is read as one 16-byte vector, and each contiguous
//!   store is written as one, where the row start is 16-byte aligned (one
//!   test per loop; four scalar accesses otherwise);
//! - otherwise the body prints per element, unchanged.
//!
//! Staged and streaming kernels print the same loops, so every thread
//! combines the same elements in the same order in both (their results
//! agree bit for bit at the same block size).

use crate::dialect::GpuSpelling;
use crate::gpu::stage_rows::staged_name;
use crate::gpu::{name_loads, spell, FIELDS};
use crate::{Printer, VTy};
use tile_ir::{Expr, ReduceOp, Stmt};
use tile_plan::kernel_ir::{QuadAccesses, StagedRow};

/// A loop of the block's threads over `var in lo..hi`, whose bounds the C
/// code `bl` and `bh` hold.
pub(crate) struct RowLoop<'a> {
    pub var: &'a str,
    pub bl: &'a str,
    pub bh: &'a str,
    pub lo: &'a Expr,
    pub hi: &'a Expr,
    /// The kernel's staged rows; those over exactly `lo..hi` are read as
    /// vectors (empty in streaming kernels).
    pub staged: &'a [StagedRow],
    /// The range is a row in shared memory, so 32-bit counters suffice.
    pub short: bool,
    /// Quads each thread loads before computing any, in loops that read
    /// device memory as 16-byte vectors (more bytes in flight per thread;
    /// the elements still combine in the same order).
    pub unroll: u32,
    /// Rows the kernel holds in registers between its loops (empty in
    /// staged kernels).
    pub held: &'a [Held],
    /// The accesses the lowering found contiguous in their loop's
    /// variable ([`tile_plan::kernel_ir::LoweredKernel::quads`]).
    pub quads: &'a QuadAccesses,
}

/// A row of an input that several of a streaming row kernel's loops read
/// (`x[i, j]` over exactly the row's range, `x` not written by the
/// kernel): the first loop that reads it as 16-byte vectors keeps each
/// thread's first `quads` quads of it in the register array `name`, and
/// later loops over the same range read them there instead of reading
/// device memory again. A thread's quads are the same in every loop over
/// the range (`4 t`, then `blockDim.x * 4` apart), and whether a quad is
/// whole depends only on the range's length, so a later loop finds
/// exactly the quads it would load, with the values a load would return.
pub(crate) struct Held {
    pub buf: String,
    /// The row variable.
    pub row: String,
    pub lo: Expr,
    pub hi: Expr,
    pub name: String,
    pub quads: u32,
    /// Whether a loop printed so far filled the array.
    pub filled: std::cell::Cell<bool>,
}

impl Held {
    /// Whether the load `buf[idx]` of a loop over `rl` reads this row.
    fn reads(&self, rl: &RowLoop, buf: &str, idx: &[Expr]) -> bool {
        self.buf == buf
            && &self.lo == rl.lo
            && &self.hi == rl.hi
            && matches!(idx, [Expr::Var(r), Expr::Var(c)] if *r == self.row && c == rl.var)
    }
}

/// What runs for each element of the loop.
pub(crate) enum Each<'a> {
    /// `acc = acc OP body` (a reduction's partial result).
    Reduce {
        body: &'a Expr,
        acc: &'a str,
        op: ReduceOp,
        t: VTy,
    },
    /// A row-level loop's statements. With `acc`, the value of the body's
    /// only store is also reduced into `acc` (a scratch row's fill fused
    /// with the reduction that reads it); only for bodies [`fusable`]
    /// accepts.
    Stmts {
        body: &'a [Stmt],
        acc: Option<(&'a str, ReduceOp)>,
        /// The lowering found that the loop's quads may load before they
        /// store ([`tile_plan::kernel_ir::LoweredKernel::batches`]).
        batch: bool,
    },
}

/// The C statement combining `b` into the accumulator `acc`.
pub(crate) fn combine(op: ReduceOp, t: VTy, acc: &str, b: &str) -> String {
    match op {
        ReduceOp::Sum => format!("{acc} = {acc} + {b};"),
        ReduceOp::Max => format!("{acc} = tile_max_{}({acc}, {b});", sfx(t)),
        ReduceOp::Min => format!("{acc} = tile_min_{}({acc}, {b});", sfx(t)),
    }
}

/// The helper-name suffix of a value type.
pub(crate) fn sfx(t: VTy) -> &'static str {
    match t {
        VTy::F32 => "f32",
        VTy::F64 => "f64",
        _ => "i64",
    }
}

/// The vector form of a loop body: the body with each contiguous load
/// replaced by a name, the loads, and (for statements) the stores.
struct Vector {
    /// Per distinct replaced load: its buffer and index; the name is
    /// `__gq{n}`.
    loads: Vec<(String, Vec<Expr>)>,
    stmts: Vec<Stmt>,
    expr: Option<Expr>,
}

/// The kind of the generated names of a quad loop's loaded values.
const LOADED: &str = "gq";

fn load_name(n: usize) -> String {
    tile_ir::names::generated(LOADED, n)
}

/// Whether the printer printed the entry check the lowering counts on for
/// an access of `buf`. They never disagree in the tests (debug builds stop
/// here); a release build that met a disagreement would print the loop
/// element by element, checked, rather than load unchecked.
fn entry_checked(printed: bool, buf: &str) -> bool {
    debug_assert!(
        printed,
        "internal error: the lowering proves an access of `{buf}` in bounds at its loop's entry, but the printer printed no such check"
    );
    printed
}

/// The vector form of `each`, when every load in it is contiguous and
/// checked at the loop's entry (both the lowering's
/// [`tile_plan::kernel_ir::LoweredKernel::quads`]) and (for statements)
/// the body is bindings and such stores whose quads may load before they
/// store (the lowering's batch decision, [`Each::Stmts`]).
fn vector(p: &Printer, rl: &RowLoop, each: &Each) -> Option<Vector> {
    let mut exprs: Vec<&Expr> = Vec::new();
    match each {
        Each::Reduce { body, .. } => exprs.push(body),
        Each::Stmts { body, batch, .. } => {
            if !batch {
                return None;
            }
            for s in body.iter() {
                match s {
                    Stmt::Let { value, .. } => {
                        if value.has_reduction() {
                            return None;
                        }
                        exprs.push(value);
                    }
                    Stmt::Store {
                        buf, idx, value, ..
                    } => {
                        if !rl.quads.quad(rl.var, buf, idx) || value.has_reduction() {
                            return None;
                        }
                        if !entry_checked(p.store_checked(s), buf) {
                            return None;
                        }
                        exprs.push(value);
                    }
                    _ => return None,
                }
            }
        }
    }
    let mut loads: Vec<(String, Vec<Expr>)> = Vec::new();
    let mut ok = true;
    for e in &exprs {
        e.walk(&mut |x| {
            if let Expr::Load { buf, idx, .. } = x {
                if !rl.quads.quad(rl.var, buf, idx) {
                    ok = false;
                    return;
                }
                if !entry_checked(p.load_checked(x), buf) {
                    ok = false;
                    return;
                }
                if !loads.iter().any(|(b, i)| b == buf && i == idx) {
                    loads.push((buf.clone(), idx.clone()));
                }
            }
        });
    }
    if !ok {
        return None;
    }
    let (stmts, expr) = match each {
        Each::Reduce { body, .. } => {
            let mut e = (*body).clone();
            name_loads(&mut e, &loads, LOADED);
            (Vec::new(), Some(e))
        }
        Each::Stmts { body, .. } => {
            let mut stmts = body.to_vec();
            for s in stmts.iter_mut() {
                match s {
                    Stmt::Let { value, .. } => name_loads(value, &loads, LOADED),
                    Stmt::Store { value, .. } => name_loads(value, &loads, LOADED),
                    _ => {}
                }
            }
            (stmts, None)
        }
    };
    Some(Vector { loads, stmts, expr })
}

/// Whether a loop over `rl` with these statements can carry a fused
/// reduction of its store (call after the loop's checked level began).
pub(crate) fn fusable(p: &Printer, rl: &RowLoop, body: &[Stmt], batch: bool) -> bool {
    let each = Each::Stmts {
        body,
        acc: None,
        batch,
    };
    matches!(body, [Stmt::Store { .. }]) && vector(p, rl, &each).is_some()
}

/// The quad at address `a`: one 16-byte load where `aligned`, else four
/// element loads.
fn load_quad(g: &GpuSpelling, a: &str, aligned: bool) -> String {
    if aligned {
        spell(g.quad_load, a, "")
    } else {
        let elements = format!("{a}[0], {a}[1], {a}[2], {a}[3]");
        g.quad_of.replace("{v}", &elements)
    }
}

/// Prints the loop of `rl` running `each` for every element.
pub(crate) fn print_loop(p: &mut Printer, rl: &RowLoop, each: &Each) {
    let vec = vector(p, rl, each);
    let (g, int) = (p.gpu(), p.d.int);
    let ty = if rl.short { g.int32 } else { int };
    let n = p.tmp("len");
    let q4 = p.tmp("quad");
    // The arrays of held rows this loop fills, in the row's scope.
    let vec_loads = vec.as_ref().map_or(&[][..], |v| v.loads.as_slice());
    if !rl.short {
        for (b, i) in vec_loads {
            if let Some(h) = rl
                .held
                .iter()
                .find(|h| h.reads(rl, b, i) && !h.filled.get())
            {
                p.line(format!("{} {}[{}];", g.quad, h.name, h.quads));
            }
        }
    }
    let syn = p.d.syntax;
    p.open("");
    let len = syn.cast(ty, &format!("({} - {})", rl.bh, rl.bl));
    p.line(syn.decl(ty, &n, &len));
    // One alignment test per loop for the vector accesses.
    let stores: Vec<(String, Vec<Expr>)> = vec
        .as_ref()
        .map(|v| {
            v.stmts
                .iter()
                .filter_map(|s| match s {
                    Stmt::Store { buf, idx, .. } => Some((buf.clone(), idx.clone())),
                    _ => None,
                })
                .collect()
        })
        .unwrap_or_default();
    let accesses: Vec<(String, Vec<Expr>)> = vec
        .as_ref()
        .map(|v| {
            v.loads
                .iter()
                .cloned()
                .chain(stores.iter().cloned())
                .collect()
        })
        .unwrap_or_default();
    let va = p.tmp("va");
    if !accesses.is_empty() {
        let conds: Vec<String> = accesses
            .iter()
            .map(|(b, i)| spell(g.aligned16, &p.address(rl.var, rl.bl, b, i), ""))
            .collect();
        p.line(syn.decl(p.d.bool_, &va, &conds.join(" && ")));
    }
    // The vector loads read from (or kept in) held rows: (load, row).
    let holds: Vec<(usize, &Held)> = match vec.as_ref() {
        Some(v) if !rl.short => v
            .loads
            .iter()
            .enumerate()
            .filter_map(|(k, (b, i))| rl.held.iter().find(|h| h.reads(rl, b, i)).map(|h| (k, h)))
            .collect(),
        _ => Vec::new(),
    };
    let staged: Vec<usize> = rl
        .staged
        .iter()
        .enumerate()
        .filter(|(i, s)| {
            rl.short && &s.lo == rl.lo && &s.hi == rl.hi && reads(each, &staged_name(*i, rl.var))
        })
        .map(|(i, _)| i)
        .collect();
    let first = format!("{} * 4", syn.cast(ty, g.thread_x));
    p.line(syn.var(ty, &q4, Some(&first)));
    let quads = Quads {
        rl,
        each,
        vec: vec.as_ref(),
        staged: &staged,
        stores: &stores,
        q4: &q4,
        n: &n,
        ty,
        holds: &holds,
    };
    // Several quads per step first where device vectors are loaded, then
    // one per step for the rest; a thread's quads keep their order.
    let wide = match vec.as_ref() {
        Some(v) if !v.loads.is_empty() && rl.unroll > 1 => rl.unroll,
        _ => 1,
    };
    if accesses.is_empty() {
        quads.print(p, true, 1);
    } else {
        // The loop twice, so that neither has a test per quad.
        p.open(format!("if ({va})"));
        quads.print_held(p, true);
        if wide > 1 {
            quads.print(p, true, wide);
        }
        quads.print(p, true, 1);
        p.close();
        p.open("else");
        quads.print_held(p, false);
        quads.print(p, false, 1);
        p.close();
    }
    for (_, h) in &holds {
        h.filled.set(true);
    }
    // The thread's partial quad at the row's end, element by element.
    let q = p.tmp("q");
    let (cond, step) = (format!("{q} < {n}"), format!("{q}++"));
    p.open(syn.for_head(ty, &q, &q4, &cond, &step));
    let cv = Printer::var_name(rl.var);
    p.line(syn.decl(int, &cv, &format!("{} + {q}", rl.bl)));
    let depth = p.scope_len();
    p.bind_loop(rl.var, &cv);
    for i in &staged {
        p.bind_value(
            &staged_name(*i, rl.var),
            &format!("tile_rows[ro{i} + {q}]"),
            VTy::F32,
        );
    }
    if let Some(v) = &vec {
        for (k, (b, i)) in v.loads.iter().enumerate() {
            let a = p.address(rl.var, &cv, b, i);
            let g = p.tmp("gq");
            p.line(format!("const float {g} = *{a};"));
            p.bind_value(&load_name(k), &g, VTy::F32);
        }
    }
    let vals = element(p, each, vec.as_ref());
    for ((b, i), v) in stores.iter().zip(&vals) {
        let a = p.address(rl.var, &cv, b, i);
        p.line(format!("*{a} = {v};"));
    }
    p.truncate_scope(depth);
    p.close();
    p.close();
}

/// Whether the loop body reads the name `v`.
fn reads(each: &Each, v: &str) -> bool {
    let mut found = false;
    let mut look = |e: &Expr| e.walk(&mut |x| found |= matches!(x, Expr::Var(n) if n == v));
    match each {
        Each::Reduce { body, .. } => look(body),
        Each::Stmts { body, .. } => body.iter().for_each(|s| s.walk_exprs(&mut look)),
    }
    found
}

/// The loop over a thread's whole quads.
struct Quads<'a> {
    rl: &'a RowLoop<'a>,
    each: &'a Each<'a>,
    vec: Option<&'a Vector>,
    staged: &'a [usize],
    stores: &'a [(String, Vec<Expr>)],
    q4: &'a str,
    n: &'a str,
    ty: &'a str,
    holds: &'a [(usize, &'a Held)],
}

impl Quads<'_> {
    /// The thread's first quads where the loop reads held rows: each held
    /// load is read from its register array, or (in the loop that fills
    /// it) loaded into it. Unrolled, so the arrays stay in registers.
    fn print_held(&self, p: &mut Printer, aligned: bool) {
        let (Some(v), Some((_, first))) = (self.vec, self.holds.first()) else {
            return;
        };
        let Quads { rl, q4, n, ty, .. } = *self;
        let (gs, int) = (p.gpu(), p.d.int);
        let hu = p.tmp("hu");
        p.line(gs.unroll_fully);
        p.open(format!(
            "for ({} {hu} = 0; {hu} < {}; {hu}++)",
            gs.int32, first.quads
        ));
        p.open(format!("if ({q4} + 3 < {n})"));
        let qb = p.tmp("qb");
        p.line(format!("const {int} {qb} = {} + {q4};", rl.bl));
        let mut gq = Vec::new();
        for (k, (b, i)) in v.loads.iter().enumerate() {
            let held = self.holds.iter().find(|(h, _)| *h == k).map(|(_, h)| *h);
            let (g, decl) = match held {
                Some(h) if h.filled.get() => {
                    gq.push(format!("{}[{hu}]", h.name));
                    continue;
                }
                Some(h) => (format!("{}[{hu}]", h.name), String::new()),
                None => (p.tmp("gq"), format!("const {} ", gs.quad)),
            };
            let a = p.address(rl.var, &qb, b, i);
            p.line(format!("{decl}{g} = {};", load_quad(gs, &a, aligned)));
            gq.push(g);
        }
        self.lanes(p, aligned, &qb, &[], &gq);
        p.line(format!("{q4} += ({ty}){} * 4;", gs.threads_x));
        p.close();
        p.close();
    }

    /// Prints the loop, `width` quads of the thread (`blockDim.x * 4`
    /// elements apart) per step, all loaded before any is computed; with
    /// `aligned` the vector form's device accesses are 16-byte vectors,
    /// else four scalar accesses each.
    fn print(&self, p: &mut Printer, aligned: bool, width: u32) {
        let Quads { rl, q4, n, ty, .. } = *self;
        let (gs, int, syn) = (p.gpu(), p.d.int, p.d.syntax);
        let bx = syn.cast(ty, gs.threads_x);
        let step = |g: u32| {
            if g == 0 {
                String::new()
            } else {
                format!(" + {bx} * {}", 4 * g)
            }
        };
        p.open(format!(
            "for (; {q4}{} + 3 < {n}; {q4} += {bx} * {})",
            step(width - 1),
            4 * width
        ));
        // Per quad of the step: its first element, then its vector loads.
        let mut quads = Vec::new();
        for g in 0..width {
            let qb = p.tmp("qb");
            p.line(syn.decl(int, &qb, &format!("{} + {q4}{}", rl.bl, step(g))));
            let sq: Vec<String> = self.staged.iter().map(|_| p.tmp("sq")).collect();
            for (i, s) in self.staged.iter().zip(&sq) {
                let a = format!("(tile_rows + ro{i} + {q4}{})", step(g));
                p.line(format!(
                    "const {} {s} = {};",
                    gs.quad,
                    spell(gs.quad_load, &a, "")
                ));
            }
            let mut gq = Vec::new();
            if let Some(v) = self.vec {
                for (b, i) in &v.loads {
                    let a = p.address(rl.var, &qb, b, i);
                    let g = p.tmp("gq");
                    p.line(format!(
                        "const {} {g} = {};",
                        gs.quad,
                        load_quad(gs, &a, aligned)
                    ));
                    gq.push(g);
                }
            }
            quads.push((qb, sq, gq));
        }
        for (qb, sq, gq) in &quads {
            self.lanes(p, aligned, qb, sq, gq);
        }
        p.close();
    }

    /// Four lanes of scalar code over one quad's loaded values, then its
    /// vector stores.
    fn lanes(&self, p: &mut Printer, aligned: bool, qb: &str, sq: &[String], gq: &[String]) {
        let rl = self.rl;
        let mut lane_vals: Vec<Vec<String>> = vec![Vec::new(); self.stores.len()];
        for (lane, field) in FIELDS.iter().enumerate() {
            let depth = p.scope_len();
            p.bind_loop(rl.var, &format!("({qb} + {lane})"));
            for (i, s) in self.staged.iter().zip(sq) {
                p.bind_value(&staged_name(*i, rl.var), &format!("{s}.{field}"), VTy::F32);
            }
            for (k, g) in gq.iter().enumerate() {
                p.bind_value(&load_name(k), &format!("{g}.{field}"), VTy::F32);
            }
            let vals = element(p, self.each, self.vec);
            for (k, v) in vals.into_iter().enumerate() {
                lane_vals[k].push(v);
            }
            p.truncate_scope(depth);
        }
        for ((b, i), vals) in self.stores.iter().zip(&lane_vals) {
            let a = p.address(rl.var, qb, b, i);
            if aligned {
                let g = p.gpu();
                let quad = g.quad_of.replace("{v}", &vals.join(", "));
                p.line(spell(g.quad_store, &a, &quad));
            } else {
                for (k, v) in vals.iter().enumerate() {
                    p.line(format!("{a}[{k}] = {v};"));
                }
            }
        }
    }
}

/// One element's code in the current bindings; returns the values of the
/// vector form's stores (which the caller writes).
fn element(p: &mut Printer, each: &Each, vec: Option<&Vector>) -> Vec<String> {
    match (each, vec) {
        (Each::Reduce { body, acc, op, t }, v) => {
            let e: &Expr = match v.and_then(|v| v.expr.as_ref()) {
                Some(e) => e,
                None => body,
            };
            let (b, _) = p.lower_as(e, *t);
            p.line(combine(*op, *t, acc, &b));
            Vec::new()
        }
        (Each::Stmts { acc, .. }, Some(v)) => {
            let mut vals = Vec::new();
            for s in &v.stmts {
                match s {
                    Stmt::Let { name, value, .. } => {
                        let (code, ty) = p.lower(value);
                        let t = p.tmp("val");
                        let decl = p.d.syntax.decl(p.scalar_type(ty), &t, &code);
                        p.line(format!("{decl} /* {name} */"));
                        p.bind_value(name, &t, ty);
                    }
                    Stmt::Store { value, .. } => {
                        let (code, _) = p.lower_as(value, VTy::F32);
                        let t = p.tmp("stv");
                        p.line(p.d.syntax.decl(p.d.f32, &t, &code));
                        if let Some((a, op)) = acc {
                            p.line(combine(*op, VTy::F32, a, &t));
                        }
                        vals.push(t);
                    }
                    _ => {}
                }
            }
            vals
        }
        (Each::Stmts { body, .. }, None) => {
            // The program's own nodes, checked at the loop's entry.
            p.stmts(body);
            Vec::new()
        }
    }
}
