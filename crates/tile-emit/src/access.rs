//! Loads, stores and bounds checks.
//!
//! Each index dimension of an access is classified against the vector
//! context: uniform (the same for every lane), linear (`a * j + base` in
//! the vectorised variable `j`), or varying (anything else). A load or
//! store whose last dimension is linear with `a = 1` and whose other
//! dimensions are uniform is one contiguous vector access; everything else
//! goes lane by lane (gather/scatter). Under a lane mask, inactive lanes
//! never touch memory: a contiguous access runs whole only when every lane
//! is active and in bounds, else lane by lane.
//!
//! Every access is bounds-checked against its parameter's box, because a
//! program may index outside it (the interpreter reports that as an
//! error). An access that is unconditional in a loop level and affine in
//! names with known ranges is checked once at the level's entry over the
//! whole range ([`Printer::precheck`]); the others are checked where they
//! run. A failed check writes the access's site number to the error word
//! and returns from the kernel.

use crate::dialect::Syntax;
use crate::printer::{Kind, Printer, VTy, Val};
use std::collections::{BTreeMap, HashSet};
use tile_ir::{Expr, NodeId, Stmt};
use tile_plan::affine::Affine;

/// One index dimension of an access, classified against the lanes.
enum Dim {
    /// The same index for every lane (scalar code).
    Uni(String),
    /// `base + a * lane` (scalar code for `base`).
    Lin(i64, String),
    /// A vector of per-lane indices (vector code).
    Vary(String),
}

/// Interval of a name for a level's check: C code of its lowest and
/// highest value.
pub(crate) type Ranges = BTreeMap<String, (String, String)>;

impl Printer<'_> {
    /// Whether the node `id` was proven in bounds by the check at the
    /// entry of an enclosing level.
    pub(crate) fn node_checked(&self, id: &NodeId) -> bool {
        self.prechecked.iter().any(|s| s.contains(&id.get()))
    }

    fn classify(&mut self, e: &Expr) -> Dim {
        if !self.vary(e) {
            let v = self.expr(e, Some(VTy::Int));
            let v = self.materialize(v, "alu");
            return Dim::Uni(v.code);
        }
        if let (Some(vc), Some(aff)) = (self.vec.clone(), Affine::of(e)) {
            let a = aff.coeff(&vc.var);
            if a != 0 && aff.terms.keys().all(|n| n == &vc.var || !self.name_vary(n)) {
                // Lane 0's index: the same expression with the variable
                // bound to its scalar base.
                let depth = self.scope_len();
                self.bind_loop(&vc.var, &vc.base);
                let saved = self.vec.take();
                let v = self.expr(e, Some(VTy::Int));
                self.vec = saved;
                self.truncate_scope(depth);
                let v = self.materialize(v, "alu");
                return Dim::Lin(a, v.code);
            }
        }
        let v = self.expr(e, Some(VTy::Int));
        let v = self.materialize(v, "alu");
        Dim::Vary(v.code)
    }

    /// Flat offset of a scalar index into `buf` (row-major over its box).
    pub(crate) fn offset(&self, buf: &str, dims: &[String]) -> String {
        if dims.is_empty() {
            return "0".to_string();
        }
        let mut off = String::new();
        for (d, q) in dims.iter().enumerate() {
            let lo = self.box_lo(buf, d);
            let rel = if lo == "0" {
                q.clone()
            } else {
                format!("({q} - {lo})")
            };
            off = if d == 0 {
                rel
            } else {
                format!("({off} * {} + {rel})", Printer::box_n(buf, d))
            };
        }
        off
    }

    /// C condition: `q` (lowest `qlo`, highest `qhi`) lies in dimension `d`.
    pub(crate) fn in_dim(&self, buf: &str, d: usize, qlo: &str, qhi: &str) -> String {
        let lo = self.box_lo(buf, d);
        let n = Printer::box_n(buf, d);
        if lo == "0" {
            format!("{qlo} >= 0 && {qhi} < {n}")
        } else {
            format!("{qlo} >= {lo} && {qhi} - {lo} < {n}")
        }
    }

    fn in_box(&self, buf: &str, dims: &[String]) -> String {
        if dims.is_empty() {
            // A scalar's one element is always in its box.
            return self.d.syntax.always().to_string();
        }
        let parts: Vec<String> = dims
            .iter()
            .enumerate()
            .map(|(d, q)| self.in_dim(buf, d, q, q))
            .collect();
        parts.join(" && ")
    }

    /// In-box condition for a contiguous access (uniform dims, then the
    /// last dim over the vector's lanes).
    fn in_box_run(&self, buf: &str, dims: &[String]) -> String {
        self.in_box_span(buf, dims, self.lanes())
    }

    /// In-box condition for `width` consecutive elements from the index
    /// `dims` along the last dimension.
    pub(crate) fn in_box_span(&self, buf: &str, dims: &[String], width: &str) -> String {
        let last = dims.len() - 1;
        let l = width;
        let parts: Vec<String> = dims
            .iter()
            .enumerate()
            .map(|(d, q)| {
                if d == last {
                    self.in_dim(buf, d, q, &format!("{q} + ({l} - 1)"))
                } else {
                    self.in_dim(buf, d, q, q)
                }
            })
            .collect();
        parts.join(" && ")
    }

    /// The element at offset `off` of the parameter `buf` (of type `ty`):
    /// `ptr[off]`, or its place in the buffer's 16-byte view where the
    /// dialect reads `f32` buffers through one
    /// ([`crate::GpuSpelling::quad_elem`]).
    fn elem_at(&self, buf: &str, ty: VTy, off: &str) -> String {
        let ptr = Printer::ptr_name(buf);
        match self.d.gpu.as_ref().and_then(|g| g.quad_elem) {
            Some(view) if ty == VTy::F32 => view.replace("{p}", &ptr).replace("{o}", off),
            _ => format!("{ptr}[{off}]"),
        }
    }

    fn elem_read(&self, ty: VTy, at: &str) -> String {
        match ty {
            VTy::F32 | VTy::F64 => at.to_string(),
            VTy::Int => format!("({})", self.d.syntax.cast(self.d.int, at)),
            VTy::Bool => format!("({at} != 0)"),
        }
    }

    fn elem_write(&mut self, ty: VTy, v: &str) -> String {
        match ty {
            VTy::F32 | VTy::F64 => v.to_string(),
            VTy::Int => {
                let h = self.helper("tile_sat_i32".to_string());
                format!("{h}({v})")
            }
            VTy::Bool => format!("({})", self.d.syntax.select(v, "1", "0")),
        }
    }

    fn storage_sfx(ty: VTy) -> &'static str {
        match ty {
            VTy::F32 => "vf32",
            VTy::F64 => "vf64",
            VTy::Int => "vi32",
            VTy::Bool => "vb8",
        }
    }

    /// A load (`node` is the `Expr::Load`'s identity).
    pub(crate) fn load(&mut self, node: &NodeId, buf: &str, idx: &[Expr]) -> Val {
        let Some(p) = self.param(buf) else {
            self.error(format!("load from unknown parameter `{buf}`"));
            return Val::lit("0".to_string(), VTy::Int);
        };
        let ty = VTy::of(p.dtype);
        let id = self.site(node.get(), buf, "load");
        let check = !self.node_checked(node);
        let ptr = Printer::ptr_name(buf);
        let t = self.tmp("ld");
        if self.vec.is_none() || !self.vary_any(idx) {
            let dims: Vec<String> = idx
                .iter()
                .map(|e| {
                    let v = self.expr(e, Some(VTy::Int));
                    self.materialize(v, "alu").code
                })
                .collect();
            if check {
                let c = self.in_box(buf, &dims);
                self.line(self.d.check(&c, id));
            }
            let read = self.elem_read(ty, &self.elem_at(buf, ty, &self.offset(buf, &dims)));
            let st = self.scalar_type(ty);
            self.line(self.d.syntax.decl(st, &t, &read));
            return Val::uni(t, ty);
        }
        let mw = if ty == VTy::Bool { self.mw_default } else { 0 };
        let vt = self.vector_type(ty, mw);
        let dims: Vec<Dim> = idx.iter().map(|e| self.classify(e)).collect();
        let l = self.lanes();
        let lane_read = |p: &Printer, at: &str| match ty {
            VTy::Bool => format!("-({at} != 0)"),
            _ => p.elem_read(ty, at),
        };
        if let Some(base) = contiguous(&dims) {
            let off = self.offset(buf, &base);
            let ld = self.helper(format!("tile_ld_{}", Printer::storage_sfx(ty)));
            match self.mask.clone() {
                None => {
                    if check {
                        let c = self.in_box_run(buf, &base);
                        self.line(self.d.check(&c, id));
                    }
                    self.line(format!("const {vt} {t} = {ld}({ptr} + {off});"));
                }
                Some(m) => {
                    let all = self.helper(format!("tile_all_vm{}", m.mw));
                    let range = if check {
                        format!(" && {}", self.in_box_run(buf, &base))
                    } else {
                        String::new()
                    };
                    self.line(format!("{vt} {t} = {{0}};"));
                    self.line(format!(
                        "if ({all}({}){range}) {t} = {ld}({ptr} + {off});",
                        m.code
                    ));
                    self.open(format!("else for (int l = 0; l < {l}; l++)"));
                    self.open(format!("if ({}[l])", m.code));
                    if check {
                        let mut lane = base.clone();
                        if let Some(last) = lane.last_mut() {
                            *last = format!("({last} + l)");
                        }
                        let c = self.in_box(buf, &lane);
                        self.line(self.d.check(&c, id));
                    }
                    let r = lane_read(self, &format!("{ptr}[{off} + l]"));
                    self.line(format!("{t}[l] = {r};"));
                    self.close();
                    self.close();
                }
            }
            return Val::vec(t, ty, mw);
        }
        // Gather, lane by lane.
        self.line(format!("{vt} {t};"));
        self.open(format!("for (int l = 0; l < {l}; l++)"));
        if let Some(m) = self.mask.clone() {
            self.line(format!("if (!{}[l]) {{ {t}[l] = 0; continue; }}", m.code));
        }
        let lane = lane_dims(&dims, self.d.syntax);
        if check {
            let c = self.in_box(buf, &lane);
            self.line(self.d.check(&c, id));
        }
        let r = lane_read(self, &format!("{ptr}[{}]", self.offset(buf, &lane)));
        self.line(format!("{t}[l] = {r};"));
        self.close();
        Val::vec(t, ty, mw)
    }

    /// A store statement.
    pub(crate) fn store(&mut self, node: &NodeId, buf: &str, idx: &[Expr], value: &Expr) {
        let Some(p) = self.param(buf) else {
            self.error(format!("store to unknown parameter `{buf}`"));
            return;
        };
        let ty = VTy::of(p.dtype);
        let id = self.site(node.get(), buf, "store");
        let check = !self.node_checked(node);
        let ptr = Printer::ptr_name(buf);
        let v = self.expr(value, Some(ty));
        let l = self.lanes();
        let idx_vary = self.vary_any(idx);
        if self.vec.is_none() || (!idx_vary && !v.vary) {
            let dims: Vec<String> = idx
                .iter()
                .map(|e| {
                    let v = self.expr(e, Some(VTy::Int));
                    self.materialize(v, "alu").code
                })
                .collect();
            if check {
                let c = self.in_box(buf, &dims);
                self.line(self.d.check(&c, id));
            }
            let w = self.elem_write(ty, &v.code);
            let off = self.offset(buf, &dims);
            let at = self.elem_at(buf, ty, &off);
            self.line(format!("{at} = {w};"));
            return;
        }
        let v = if ty == VTy::Bool {
            let mw = self.mw_default;
            self.mask_width(v, mw)
        } else {
            self.splat_if_uniform(v)
        };
        let v = self.materialize(v, "alu");
        let dims: Vec<Dim> = idx.iter().map(|e| self.classify(e)).collect();
        let lane_val = |p: &mut Printer| p.elem_write(ty, &format!("{}[l]", v.code));
        if let Some(base) = contiguous(&dims) {
            let off = self.offset(buf, &base);
            let st = self.helper(format!("tile_st_{}", Printer::storage_sfx(ty)));
            match self.mask.clone() {
                None => {
                    if check {
                        let c = self.in_box_run(buf, &base);
                        self.line(self.d.check(&c, id));
                    }
                    self.line(format!("{st}({ptr} + {off}, {});", v.code));
                }
                Some(m) => {
                    let all = self.helper(format!("tile_all_vm{}", m.mw));
                    let range = if check {
                        format!(" && {}", self.in_box_run(buf, &base))
                    } else {
                        String::new()
                    };
                    self.line(format!(
                        "if ({all}({}){range}) {st}({ptr} + {off}, {});",
                        m.code, v.code
                    ));
                    self.open(format!("else for (int l = 0; l < {l}; l++)"));
                    self.open(format!("if ({}[l])", m.code));
                    if check {
                        let mut lane = base.clone();
                        if let Some(last) = lane.last_mut() {
                            *last = format!("({last} + l)");
                        }
                        let c = self.in_box(buf, &lane);
                        self.line(self.d.check(&c, id));
                    }
                    let w = lane_val(self);
                    self.line(format!("{ptr}[{off} + l] = {w};"));
                    self.close();
                    self.close();
                }
            }
            return;
        }
        // Scatter, lane by lane in lane order (so the last lane wins where
        // lanes collide, as in sequential order).
        self.open(format!("for (int l = 0; l < {l}; l++)"));
        if let Some(m) = self.mask.clone() {
            self.line(format!("if (!{}[l]) continue;", m.code));
        }
        let lane = lane_dims(&dims, self.d.syntax);
        if check {
            let c = self.in_box(buf, &lane);
            self.line(self.d.check(&c, id));
        }
        let w = lane_val(self);
        let off = self.offset(buf, &lane);
        self.line(format!("{ptr}[{off}] = {w};"));
        self.close();
    }

    // ---- checks at a loop level's entry ----

    /// The ranges of names known at this point: size symbols and scalar
    /// loop variables (points), and the vectorised variable over its lanes
    /// when no mask is active.
    pub(crate) fn known_ranges(&self) -> Ranges {
        let mut r = Ranges::new();
        for b in &self.scope {
            if matches!(b.kind, Kind::Size | Kind::Loop) && !b.vary {
                r.insert(b.name.clone(), (b.code.clone(), b.code.clone()));
            } else {
                r.remove(&b.name);
            }
        }
        if let (Some(vc), None) = (&self.vec, &self.mask) {
            let hi = format!("({} + ({} - 1))", vc.base, self.lanes());
            r.insert(vc.var.clone(), (vc.base.clone(), hi));
        }
        r
    }

    /// Emits the entry check of a loop level over `var in lo..hi` (or of a
    /// level without a variable) for the accesses that run unconditionally
    /// in `stmts` / `exprs`, and marks them checked. Call
    /// [`Printer::end_level`] when the level's code is printed.
    pub(crate) fn precheck(
        &mut self,
        level: Option<(&str, &str, &str)>,
        stmts: &[Stmt],
        exprs: &[&Expr],
    ) {
        let mut ranges = self.known_ranges();
        if let Some((v, lo, hi)) = level {
            ranges.insert(v.to_string(), (lo.to_string(), format!("({hi} - 1)")));
        }
        let found = tile_plan::level_accesses(stmts, exprs, self.line_no);
        let mut conds = Vec::new();
        let mut seen: HashSet<(String, String)> = HashSet::new();
        let mut done = HashSet::new();
        for a in found {
            let (key, buf, idx, line) = (a.id, a.buf.to_string(), a.idx, a.line);
            let what = if a.store { "store" } else { "load" };
            let Some(p) = self.param(&buf) else {
                continue;
            };
            if p.dims.len() != idx.len() || idx.is_empty() {
                continue;
            }
            let Some(parts) = idx
                .iter()
                .enumerate()
                .map(|(d, e)| {
                    let a = Affine::of(e)?;
                    let (lo, hi) = interval(&a, &ranges, self.d.syntax)?;
                    Some(self.in_dim(&buf, d, &lo, &hi))
                })
                .collect::<Option<Vec<String>>>()
            else {
                continue;
            };
            done.insert(key);
            let cond = parts.join(" && ");
            if !seen.insert((cond.clone(), buf.clone())) {
                continue;
            }
            let saved = self.line_no;
            self.line_no = line;
            let id = self.site(key, &buf, what);
            self.line_no = saved;
            conds.push((cond, buf, id));
        }
        let lines: Vec<String> = conds
            .into_iter()
            .map(|(c, _, id)| self.d.check(&c, id))
            .collect();
        if !lines.is_empty() {
            match level {
                Some((_, lo, hi)) => {
                    self.open(format!("if ({hi} > {lo})"));
                    for l in lines {
                        self.line(l);
                    }
                    self.close();
                }
                None => {
                    for l in lines {
                        self.line(l);
                    }
                }
            }
        }
        self.prechecked.push(done);
    }

    /// Ends a level begun with [`Printer::precheck`].
    pub(crate) fn end_level(&mut self) {
        self.prechecked.pop();
    }
}

/// The lane-0 index of a contiguous access, if it is one.
fn contiguous(dims: &[Dim]) -> Option<Vec<String>> {
    let (last, rest) = dims.split_last()?;
    let Dim::Lin(1, b) = last else {
        return None;
    };
    let mut out = Vec::new();
    for d in rest {
        match d {
            Dim::Uni(c) => out.push(c.clone()),
            _ => return None,
        }
    }
    out.push(b.clone());
    Some(out)
}

/// Per-lane index code (lane variable `l`).
fn lane_dims(dims: &[Dim], syn: Syntax) -> Vec<String> {
    dims.iter()
        .map(|d| match d {
            Dim::Uni(c) => c.clone(),
            Dim::Lin(1, b) => format!("({b} + l)"),
            Dim::Lin(a, b) => format!("({b} + {} * l)", syn.int_lit(*a)),
            Dim::Vary(v) => format!("{v}[l]"),
        })
        .collect()
}

/// Lowest and highest value of an affine form over `ranges`, as C code.
fn interval(a: &Affine, ranges: &Ranges, syn: Syntax) -> Option<(String, String)> {
    let mut lo: Vec<String> = Vec::new();
    let mut hi: Vec<String> = Vec::new();
    for (n, &c) in &a.terms {
        let (l, h) = ranges.get(n)?;
        let (at_lo, at_hi) = if c > 0 { (l, h) } else { (h, l) };
        let term = |x: &str| match c {
            1 => x.to_string(),
            -1 => format!("-{x}"),
            c => format!("{} * {x}", syn.int_lit(c)),
        };
        lo.push(term(at_lo));
        hi.push(term(at_hi));
    }
    if a.constant != 0 || lo.is_empty() {
        let k = syn.int_lit(a.constant);
        lo.push(k.clone());
        hi.push(k);
    }
    let join = |v: Vec<String>| {
        if v.len() == 1 {
            v.into_iter().next().unwrap_or_default()
        } else {
            format!("({})", v.join(" + "))
        }
    };
    Some((join(lo), join(hi)))
}
