//! Statements, loops and reductions.
//!
//! A loop level (a kernel's slice of the innermost domain variable, an
//! inner `for`, a reduction) prints its entry bounds check, then either a
//! vector loop of `lanes` iterations at a time followed by a scalar tail,
//! or a scalar loop. Reductions keep vector partial results (sums of `f32`
//! accumulate in `f64`), combine the lanes, then finish on the tail.
//! Inside vector code, a reduction whose body varies across lanes runs its
//! own variable as a scalar loop with one accumulator per lane; one whose
//! bounds vary runs lane by lane.

use crate::printer::{Bind, Kind, Mask, Printer, VTy, Val, VecCtx};
use tile_ir::{Expr, Func, LoopVar, ReduceOp, Stmt};

/// Vectors per step of an index search's first loop (a `min`/`max` of
/// indices: the same result in any order).
const SEARCH_UNROLL: usize = 4;

impl Printer<'_> {
    /// Prints `stmts` in the current mode; their bindings end with them.
    pub fn stmts(&mut self, stmts: &[Stmt]) {
        let depth = self.scope_len();
        for s in stmts {
            self.stmt(s);
        }
        self.truncate_scope(depth);
    }

    fn stmt(&mut self, s: &Stmt) {
        self.set_line(s.span().line);
        match s {
            Stmt::Let { name, value, .. } => {
                let want = match self.ty(value) {
                    crate::lower_expr::Ty::Known(t) => Some(t),
                    _ => None,
                };
                let v = self.expr(value, want);
                let t = self.tmp("val");
                let ty = self.type_of(&v);
                let decl = self.d.syntax.decl(ty, &t, &v.code);
                self.line(format!("{decl} /* {name} */"));
                self.scope.push(Bind {
                    name: name.clone(),
                    code: t,
                    ty: v.ty,
                    vary: v.vary,
                    mw: v.mw,
                    kind: Kind::Value,
                });
            }
            Stmt::Store {
                buf,
                idx,
                value,
                id,
                ..
            } => self.store(id, buf, idx, value),
            Stmt::If {
                cond, then, els, ..
            } => self.if_stmt(cond, then, els),
            Stmt::For { vars, body, span } => {
                if self.vec.is_some() {
                    self.error("a `for` loop inside vectorised code".to_string());
                    return;
                }
                self.nest(vars, body, *span);
            }
        }
    }

    fn if_stmt(&mut self, cond: &Expr, then: &[Stmt], els: &[Stmt]) {
        let c = self.expr(cond, Some(VTy::Bool));
        if !c.vary {
            self.open(format!("if ({})", c.code));
            self.stmts(then);
            self.close();
            if !els.is_empty() {
                self.open("else");
                self.stmts(els);
                self.close();
            }
            return;
        }
        let outer = self.mask.clone();
        let mw = outer.as_ref().map_or(c.mw, |m| m.mw);
        let c = self.mask_width(c, mw);
        let c = self.materialize(c, "msk");
        let any = self.helper(format!("tile_any_vm{mw}"));
        for (branch, negate) in [(then, false), (els, true)] {
            if branch.is_empty() {
                continue;
            }
            let cc = if negate {
                format!("~{}", c.code)
            } else {
                c.code.clone()
            };
            let m = self.tmp("msk");
            let mt = self.vector_type(VTy::Bool, mw);
            match &outer {
                Some(o) => self.line(format!("const {mt} {m} = {} & {cc};", o.code)),
                None => self.line(format!("const {mt} {m} = {cc};")),
            }
            self.open(format!("if ({any}({m}))"));
            self.mask = Some(Mask { code: m, mw });
            self.stmts(branch);
            self.mask = outer.clone();
            self.close();
        }
    }

    /// A `for` nest in scalar code (its keyword at `span`): outer variables
    /// as scalar loops, the innermost as a loop level (vectorised where the
    /// lowered kernel says so: [`Printer::lane_loops`]).
    fn nest(&mut self, vars: &[LoopVar], body: &[Stmt], span: tile_ir::Span) {
        let Some((lv, rest)) = vars.split_first() else {
            self.stmts(body);
            return;
        };
        self.open("");
        let lo = self.expr(&lv.lo, Some(VTy::Int));
        let hi = self.expr(&lv.hi, Some(VTy::Int));
        let blo = self.tmp("bnd");
        let bhi = self.tmp("bnd");
        self.line(
            self.d
                .syntax
                .decls(self.d.int, &[(&blo, &lo.code), (&bhi, &hi.code)]),
        );
        if rest.is_empty() {
            let key = tile_plan::kernel_ir::LoopKey::new(span, &lv.name);
            let vectorize = self.lane_loops.contains(&key);
            self.loop_level(&lv.name, &blo, &bhi, body, vectorize);
        } else {
            let cv = Printer::var_name(&lv.name);
            self.open(self.d.syntax.for_head(
                self.d.int,
                &cv,
                &blo,
                &format!("{cv} < {bhi}"),
                &format!("{cv}++"),
            ));
            let depth = self.scope_len();
            self.bind_loop(&lv.name, &cv);
            self.nest(rest, body, span);
            self.truncate_scope(depth);
            self.close();
        }
        self.close();
    }

    /// One loop level over `var in lo..hi` (`lo`, `hi`: C code evaluated
    /// once): the entry check, then a vector loop and a scalar tail, or a
    /// scalar loop.
    pub fn loop_level(&mut self, var: &str, lo: &str, hi: &str, body: &[Stmt], vectorize: bool) {
        let cv = Printer::var_name(var);
        let int = self.d.int;
        self.open("");
        self.precheck(Some((var, lo, hi)), body, &[]);
        if vectorize && self.d.vector.is_some() && self.vec.is_none() {
            let l = self.lanes();
            self.line(format!("{int} {cv} = {lo};"));
            self.open(format!("for (; {cv} + {l} <= {hi}; {cv} += {l})"));
            self.enter_vector(var, &cv);
            self.stmts(body);
            self.leave_vector();
            self.close();
            self.open(format!("for (; {cv} < {hi}; {cv}++)"));
        } else {
            self.open(self.d.syntax.for_head(
                int,
                &cv,
                lo,
                &format!("{cv} < {hi}"),
                &format!("{cv}++"),
            ));
        }
        let depth = self.scope_len();
        self.bind_loop(var, &cv);
        self.stmts(body);
        self.truncate_scope(depth);
        self.close();
        self.end_level();
        self.close();
    }

    /// Makes `var` the vectorised variable, lane 0 held in `cv`.
    fn enter_vector(&mut self, var: &str, cv: &str) {
        let splat = self.helper("tile_splat_vi64".to_string());
        let iota = self.helper("tile_iota_vi64".to_string());
        self.scope.push(Bind {
            name: var.to_string(),
            code: format!("({splat}({cv}) + {iota}())"),
            ty: VTy::Int,
            vary: true,
            mw: 0,
            kind: Kind::Loop,
        });
        self.vec = Some(VecCtx {
            var: var.to_string(),
            base: cv.to_string(),
        });
    }

    fn leave_vector(&mut self) {
        self.vec = None;
        self.scope.pop();
    }

    // ---- reductions ----

    #[allow(clippy::too_many_arguments)]
    pub(crate) fn reduce(
        &mut self,
        node: &Expr,
        op: ReduceOp,
        var: &str,
        lo: &Expr,
        hi: &Expr,
        body: &Expr,
        want: Option<VTy>,
    ) -> Val {
        let t = self.resolve(self.ty(node), want);
        if t == VTy::Bool {
            self.error(format!("`{}` of booleans", op.name()));
            return Val::lit("0".to_string(), VTy::Int);
        }
        if self.vary(lo) || self.vary(hi) {
            return self.per_lane(node, t);
        }
        if self.vec.is_some() && self.vary_without(body, var) {
            return self.reduce_lanes(op, var, lo, hi, body, t);
        }
        // Uniform: vectorise over the reduction's own variable.
        let saved_vec = self.vec.take();
        let saved_mask = self.mask.take();
        let r = self.reduce_own(op, var, lo, hi, body, t);
        self.vec = saved_vec;
        self.mask = saved_mask;
        r
    }

    /// Accumulator type of a reduction producing `t`.
    fn acc_type(&self, op: ReduceOp, t: VTy) -> VTy {
        if op == ReduceOp::Sum && t == VTy::F32 && self.d.f32_sums_in_f64 {
            VTy::F64
        } else {
            t
        }
    }

    /// Initial accumulator (as a scalar literal of `at`).
    fn acc_init(&self, op: ReduceOp, at: VTy) -> String {
        match (op, at) {
            (ReduceOp::Sum, VTy::Int) => "0".to_string(),
            (ReduceOp::Sum, _) => self.float_lit(0.0, at),
            // NaN: IEEE max/min return the other operand, so the first
            // element replaces it (and an all-NaN range stays NaN, as in
            // the interpreter).
            (_, VTy::F32) => self.d.f32_nan.to_string(),
            (_, VTy::F64) => self.d.f64_nan.to_string(),
            (ReduceOp::Max, _) => self.int_extreme(false),
            (ReduceOp::Min, _) => self.int_extreme(true),
        }
    }

    /// The least (or greatest) integer, as `INT64_MIN` in C.
    fn int_extreme(&self, max: bool) -> String {
        match (self.d.syntax, max) {
            (crate::Syntax::C, false) => "INT64_MIN".to_string(),
            (crate::Syntax::C, true) => "INT64_MAX".to_string(),
            (s, _) => s.int_extreme(max),
        }
    }

    /// The value of an empty range.
    fn empty_value(&self, op: ReduceOp, t: VTy) -> String {
        match (op, t) {
            (ReduceOp::Sum, VTy::Int) => "0".to_string(),
            (ReduceOp::Sum, _) => self.float_lit(0.0, t),
            (ReduceOp::Max, VTy::Int) => self.int_extreme(false),
            (ReduceOp::Min, VTy::Int) => self.int_extreme(true),
            (ReduceOp::Max, _) => self.float_lit(f64::NEG_INFINITY, t),
            (ReduceOp::Min, _) => self.float_lit(f64::INFINITY, t),
        }
    }

    /// `acc op= v` (both of accumulator type, same shape).
    fn combine(&mut self, op: ReduceOp, acc: &str, v: &str, at: VTy, vary: bool) -> String {
        match op {
            ReduceOp::Sum => format!("{acc} = {acc} + {v};"),
            ReduceOp::Max | ReduceOp::Min => {
                let f = if op == ReduceOp::Max { "max" } else { "min" };
                let h = self.helper(format!("tile_{f}_{}", Printer::suffix(at, vary, 0)));
                format!("{acc} = {h}({acc}, {v});")
            }
        }
    }

    /// Converts a body value to the accumulator type (same shape).
    fn acc_value(&mut self, v: Val, at: VTy) -> String {
        if v.ty == at {
            return v.code;
        }
        self.cast(
            v,
            match at {
                VTy::F64 => tile_ir::DType::F64,
                VTy::F32 => tile_ir::DType::F32,
                _ => tile_ir::DType::I32,
            },
        )
        .code
    }

    /// The first part of a vectorised reduction's range,
    /// [`Printer::accumulators`] vectors per step into as many accumulators: independent chains, so the loop
    /// runs at the machine's throughput rather than one operation's
    /// latency. The accumulators fold into `vacc` in a fixed order (the
    /// result never depends on timing); the one-vector loop and the
    /// scalar tail finish the range.
    fn unrolled_reduction(
        &mut self,
        op: ReduceOp,
        var: &str,
        body: &Expr,
        t: VTy,
        (cv, bhi): (&str, &str),
        vacc: &str,
    ) {
        let at = self.acc_type(op, t);
        let int = self.d.int;
        let l = self.lanes();
        let avt = self.vector_type(at, 0);
        let splat = self.helper(format!("tile_splat_{}", Printer::suffix(at, true, 0)));
        let init = self.acc_init(op, at);
        let mut accs = vec![vacc.to_string()];
        for _ in 1..self.accumulators {
            let a = self.tmp("acc");
            self.line(format!("{avt} {a} = {splat}({init});"));
            accs.push(a);
        }
        self.open(format!(
            "for (; {cv} + {u} * {l} <= {bhi}; {cv} += {u} * {l})",
            u = self.accumulators
        ));
        for (k, a) in accs.iter().enumerate() {
            let base = if k == 0 {
                cv.to_string()
            } else {
                let b = self.tmp("cv");
                self.line(format!("const {int} {b} = {cv} + {k} * {l};"));
                b
            };
            self.enter_vector(var, &base);
            let b = self.expr(body, Some(t));
            let b = self.splat_if_uniform(b);
            let b = self.acc_value(b, at);
            let c = self.combine(op, a, &b, at, true);
            self.line(c);
            self.leave_vector();
        }
        self.close();
        // ((a0 op a1) op (a2 op a3)): a fixed tree.
        let mut width = 1;
        while width < accs.len() {
            for k in (0..accs.len()).step_by(2 * width) {
                if k + width < accs.len() {
                    let c = self.combine(op, &accs[k], &accs[k + width], at, true);
                    self.line(c);
                }
            }
            width *= 2;
        }
    }

    /// A reduction whose body and bounds are uniform: vectorised over its
    /// own variable (scalar context on entry).
    fn reduce_own(
        &mut self,
        op: ReduceOp,
        var: &str,
        lo: &Expr,
        hi: &Expr,
        body: &Expr,
        t: VTy,
    ) -> Val {
        let at = self.acc_type(op, t);
        let int = self.d.int;
        let red = self.tmp("red");
        let st = self.scalar_type(t);
        self.line(self.d.syntax.var(st, &red, None));
        self.open("");
        let (blo, bhi) = self.range_bounds(lo, hi);
        self.precheck(Some((var, &blo, &bhi)), &[], &[body]);
        let cv = Printer::var_name(var);
        let acc = self.tmp("acc");
        let ast = self.scalar_type(at);
        let init = self.acc_init(op, at);
        let search = Printer::index_search(op, var, body, t);
        if let (Some((cond, other)), true) = (search, self.d.vector.is_some()) {
            self.line(format!("{ast} {acc} = {init};"));
            self.line(format!("{int} {cv} = {blo};"));
            self.search_lanes(op, var, (cond, other), (&cv, &bhi), &acc);
            self.open(format!("for (; {cv} < {bhi}; {cv}++)"));
        } else if self.d.vector.is_some() {
            let l = self.lanes();
            let vacc = self.tmp("acc");
            let avt = self.vector_type(at, 0);
            let splat = self.helper(format!("tile_splat_{}", Printer::suffix(at, true, 0)));
            self.line(format!("{avt} {vacc} = {splat}({init});"));
            self.line(format!("{int} {cv} = {blo};"));
            if self.accumulators > 1 {
                self.unrolled_reduction(op, var, body, t, (&cv, bhi.as_str()), &vacc);
            }
            self.open(format!("for (; {cv} + {l} <= {bhi}; {cv} += {l})"));
            self.enter_vector(var, &cv);
            let b = self.expr(body, Some(t));
            let b = self.splat_if_uniform(b);
            let b = self.acc_value(b, at);
            let c = self.combine(op, &vacc, &b, at, true);
            self.line(c);
            self.leave_vector();
            self.close();
            let hname = match op {
                ReduceOp::Sum => "hsum",
                ReduceOp::Max => "hmax",
                ReduceOp::Min => "hmin",
            };
            let h = self.helper(format!("tile_{hname}_{}", Printer::suffix(at, true, 0)));
            self.line(format!("{ast} {acc} = {h}({vacc});"));
            self.open(format!("for (; {cv} < {bhi}; {cv}++)"));
        } else {
            self.line(self.d.syntax.var(ast, &acc, Some(&init)));
            let (cond, step) = (format!("{cv} < {bhi}"), format!("{cv}++"));
            self.open(self.d.syntax.for_head(int, &cv, &blo, &cond, &step));
        }
        let depth = self.scope_len();
        self.bind_loop(var, &cv);
        let b = self.expr(body, Some(t));
        let b = self.acc_value(b, at);
        let c = self.combine(op, &acc, &b, at, false);
        self.line(c);
        self.truncate_scope(depth);
        self.close();
        self.end_level();
        self.finish_reduction(op, t, &acc, &red, (&blo, &bhi));
        self.close();
        Val::uni(red, t)
    }

    /// Prints a reduction range's bounds, evaluated once, and returns
    /// their names.
    fn range_bounds(&mut self, lo: &Expr, hi: &Expr) -> (String, String) {
        let int = self.d.int;
        let lo_v = self.expr(lo, Some(VTy::Int));
        let hi_v = self.expr(hi, Some(VTy::Int));
        let blo = self.tmp("bnd");
        let bhi = self.tmp("bnd");
        let decls = self
            .d
            .syntax
            .decls(int, &[(&blo, &lo_v.code), (&bhi, &hi_v.code)]);
        self.line(decls);
        (blo, bhi)
    }

    /// `red = acc` in the result type `t`; a `max` or `min` over an empty
    /// range `blo..bhi` gets its empty value instead.
    fn finish_reduction(
        &mut self,
        op: ReduceOp,
        t: VTy,
        acc: &str,
        red: &str,
        (blo, bhi): (&str, &str),
    ) {
        let at = self.acc_type(op, t);
        let fin = if at == t {
            acc.to_string()
        } else {
            format!("({})", self.d.syntax.cast(self.scalar_type(t), acc))
        };
        if op == ReduceOp::Sum {
            self.line(format!("{red} = {fin};"));
        } else {
            let e = self.empty_value(op, t);
            let c = format!("{bhi} > {blo}");
            self.line(format!("{red} = {};", self.d.syntax.select(&c, &fin, &e)));
        }
    }

    /// Reductions `reds` (each an `Expr::Reduce`; the first one's variable
    /// and bounds are every one's) in one scalar loop over the range, each
    /// with its own accumulator, combined in order: each result has the
    /// bits it would have in a loop of its own; the loop unrolled `unroll`
    /// times where the dialect can ask for it. Returns each result's name
    /// and type.
    pub(crate) fn reduce_together(&mut self, reds: &[&Expr], unroll: u32) -> Vec<(String, VTy)> {
        let Some(Expr::Reduce { var, lo, hi, .. }) = reds.first() else {
            return Vec::new();
        };
        let mut parts = Vec::new();
        for r in reds {
            let Expr::Reduce { op, body, .. } = r else {
                self.error("a reduction together with others is not a reduction".to_string());
                return Vec::new();
            };
            let t = self.resolve(self.ty(r), None);
            if t == VTy::Bool {
                self.error(format!("`{}` of booleans", op.name()));
                return Vec::new();
            }
            parts.push((*op, &**body, t, self.tmp("red")));
        }
        let saved_vec = self.vec.take();
        let saved_mask = self.mask.take();
        let int = self.d.int;
        for (_, _, t, red) in &parts {
            let st = self.scalar_type(*t);
            self.line(self.d.syntax.var(st, red, None));
        }
        self.open("");
        let (blo, bhi) = self.range_bounds(lo, hi);
        let bodies: Vec<&Expr> = parts.iter().map(|p| p.1).collect();
        self.precheck(Some((var, &blo, &bhi)), &[], &bodies);
        let cv = Printer::var_name(var);
        let mut accs = Vec::new();
        for (op, _, t, _) in &parts {
            let at = self.acc_type(*op, *t);
            let acc = self.tmp("acc");
            let (ast, init) = (self.scalar_type(at), self.acc_init(*op, at));
            self.line(self.d.syntax.var(ast, &acc, Some(&init)));
            accs.push(acc);
        }
        if let (Some(u), true) = (self.d.unroll, unroll > 1) {
            self.line(u.replace("{n}", &unroll.to_string()));
        }
        let (cond, step) = (format!("{cv} < {bhi}"), format!("{cv}++"));
        self.open(self.d.syntax.for_head(int, &cv, &blo, &cond, &step));
        let depth = self.scope_len();
        self.bind_loop(var, &cv);
        for ((op, body, t, _), acc) in parts.iter().zip(&accs) {
            let at = self.acc_type(*op, *t);
            let b = self.expr(body, Some(*t));
            let b = self.acc_value(b, at);
            let c = self.combine(*op, acc, &b, at, false);
            self.line(c);
        }
        self.truncate_scope(depth);
        self.close();
        self.end_level();
        for ((op, _, t, red), acc) in parts.iter().zip(&accs) {
            self.finish_reduction(*op, *t, acc, red, (&blo, &bhi));
        }
        self.close();
        self.vec = saved_vec;
        self.mask = saved_mask;
        parts.into_iter().map(|(_, _, t, red)| (red, t)).collect()
    }

    /// `min(j in lo..hi: select(c, j, k))` is the first `j` where `c`
    /// holds (or `k`, where it fails somewhere), `max(...)` the last: for
    /// such a body (`k` free of `j`, `c` not), its condition and `k`.
    fn index_search<'e>(
        op: ReduceOp,
        var: &str,
        body: &'e Expr,
        t: VTy,
    ) -> Option<(&'e Expr, &'e Expr)> {
        if op == ReduceOp::Sum || t != VTy::Int {
            return None;
        }
        let Expr::Call(Func::Select, args) = body else {
            return None;
        };
        let [cond, Expr::Var(j), other] = args.as_slice() else {
            return None;
        };
        let (mut in_cond, mut in_other) = (Vec::new(), Vec::new());
        cond.free_vars(&mut in_cond);
        other.free_vars(&mut in_other);
        (j == var && in_cond.iter().any(|n| n == var) && !in_other.iter().any(|n| n == var))
            .then_some((cond, other))
    }

    /// The vector part of an index search ([`Printer::index_search`]):
    /// per step of [`SEARCH_UNROLL`] vectors (then of one), the condition's masks;
    /// where any lane holds, the first (`min`) or last (`max`) such index
    /// becomes `acc`, with no per-lane index arithmetic (64-bit lanes are
    /// twice the native width for `f32`, and slow). `other` is evaluated
    /// once before the loops (where the range is not empty) and joins the
    /// result after them if a lane failed. The scalar tail follows as for
    /// any reduction.
    fn search_lanes(
        &mut self,
        op: ReduceOp,
        var: &str,
        (cond, other): (&Expr, &Expr),
        (cv, bhi): (&str, &str),
        acc: &str,
    ) {
        let int = self.d.int;
        let l = self.lanes();
        let first = op == ReduceOp::Min;
        // `min` latches its first match; `max` takes every later one.
        let found = self.tmp("fnd");
        let failed = self.tmp("nf");
        if first {
            self.line(format!("bool {found} = 0, {failed} = 0;"));
        } else {
            self.line(format!("bool {failed} = 0;"));
        }
        // `k` once, where the range is not empty: the interpreter
        // evaluates it at every index, so its failures (a zero divisor, a
        // load outside its box) stop the run whether or not it is chosen.
        let kv = self.tmp("oth");
        self.line(format!("{int} {kv} = 0;"));
        self.open(format!("if ({cv} < {bhi})"));
        let depth = self.scope_len();
        let k = self.expr(other, Some(VTy::Int));
        self.line(format!("{kv} = {};", k.code));
        self.truncate_scope(depth);
        self.close();
        for step in [SEARCH_UNROLL, 1] {
            self.open(format!(
                "for (; {cv} + {step} * {l} <= {bhi}; {cv} += {step} * {l})"
            ));
            let mut masks = Vec::new();
            let mut w = self.mw_default;
            for q in 0..step {
                let base = if q == 0 {
                    cv.to_string()
                } else {
                    let b = self.tmp("cv");
                    self.line(format!("const {int} {b} = {cv} + {q} * {l};"));
                    b
                };
                self.enter_vector(var, &base);
                let m = self.expr(cond, Some(VTy::Bool));
                let m = if m.vary { m } else { self.mask_width(m, w) };
                w = m.mw;
                let m = self.materialize(m, "msk");
                masks.push(m.code);
                self.leave_vector();
            }
            let any = self.helper(format!("tile_any_vm{w}"));
            let all = self.helper(format!("tile_all_vm{w}"));
            let f = self.tmp("fl");
            if first {
                let h = self.helper(format!("tile_first_vm{w}"));
                self.open(format!("if (!{found} && {any}({}))", masks.join(" | ")));
                self.line(format!("{int} {f} = {h}({});", masks[0]));
                for (q, m) in masks.iter().enumerate().skip(1) {
                    self.line(format!("if ({f} == {q} * {l}) {f} = {q} * {l} + {h}({m});"));
                }
                self.line(format!("{acc} = {cv} + {f};"));
                self.line(format!("{found} = 1;"));
            } else {
                let h = self.helper(format!("tile_last_vm{w}"));
                let top = masks.len() - 1;
                self.open(format!("if ({any}({}))", masks.join(" | ")));
                self.line(format!("{int} {f} = {top} * {l} + {h}({});", masks[top]));
                for q in (0..top).rev() {
                    self.line(format!(
                        "if ({f} < {} * {l}) {f} = {q} * {l} + {h}({});",
                        q + 1,
                        masks[q]
                    ));
                }
                self.line(format!("{acc} = {cv} + {f};"));
            }
            self.close();
            self.line(format!("{failed} |= !{all}({});", masks.join(" & ")));
            self.close();
        }
        self.open(format!("if ({failed})"));
        let c = self.combine(op, acc, &kv, VTy::Int, false);
        self.line(c);
        self.close();
    }

    /// A reduction inside vector code whose body varies across lanes: its
    /// variable runs as a scalar loop, one accumulator per lane.
    fn reduce_lanes(
        &mut self,
        op: ReduceOp,
        var: &str,
        lo: &Expr,
        hi: &Expr,
        body: &Expr,
        t: VTy,
    ) -> Val {
        let at = self.acc_type(op, t);
        let int = self.d.int;
        let red = self.tmp("red");
        let vt = self.vector_type(t, 0);
        self.line(format!("{vt} {red};"));
        self.open("");
        let (blo, bhi) = self.range_bounds(lo, hi);
        self.precheck(Some((var, &blo, &bhi)), &[], &[body]);
        let cv = Printer::var_name(var);
        let acc = self.tmp("acc");
        let avt = self.vector_type(at, 0);
        let init = self.acc_init(op, at);
        let splat = self.helper(format!("tile_splat_{}", Printer::suffix(at, true, 0)));
        self.line(format!("{avt} {acc} = {splat}({init});"));
        self.open(format!("for ({int} {cv} = {blo}; {cv} < {bhi}; {cv}++)"));
        let depth = self.scope_len();
        self.bind_loop(var, &cv);
        let b = self.expr(body, Some(t));
        let b = self.splat_if_uniform(b);
        let b = self.acc_value(b, at);
        let c = self.combine(op, &acc, &b, at, true);
        self.line(c);
        self.truncate_scope(depth);
        self.close();
        self.end_level();
        let fin = if at == t {
            acc.clone()
        } else {
            self.d.convert.replace("{x}", &acc).replace("{t}", vt)
        };
        if op == ReduceOp::Sum {
            self.line(format!("{red} = {fin};"));
        } else {
            let e = self.empty_value(op, t);
            let splat_t = self.helper(format!("tile_splat_{}", Printer::suffix(t, true, 0)));
            self.line(format!("{red} = {bhi} > {blo} ? {fin} : {splat_t}({e});"));
        }
        self.close();
        Val::vec(red, t, 0)
    }

    /// Evaluates `e` lane by lane in scalar code (the fallback for values
    /// the vector forms do not cover, such as reductions whose bounds vary
    /// across lanes).
    fn per_lane(&mut self, e: &Expr, t: VTy) -> Val {
        let l = self.lanes();
        let r = self.tmp("red");
        let mw = if t == VTy::Bool { self.mw_default } else { 0 };
        let vt = self.vector_type(t, mw);
        self.line(format!("{vt} {r};"));
        let ln = self.tmp("ln");
        self.open(format!("for (int {ln} = 0; {ln} < {l}; {ln}++)"));
        if let Some(m) = &self.mask {
            let m = m.code.clone();
            self.line(format!("if (!{m}[{ln}]) {{ {r}[{ln}] = 0; continue; }}"));
        }
        let depth = self.scope_len();
        // Only the innermost binding of each name is visible: a varying
        // binding an enclosing per-lane walk already shadowed (a vector
        // loop variable, now one lane) must not be shadowed again by
        // indexing its vector with this walk's lane.
        let scope = &self.scope;
        let shadows: Vec<Bind> = scope
            .iter()
            .enumerate()
            .filter(|(k, b)| b.vary && !scope[k + 1..].iter().any(|c| c.name == b.name))
            .map(|(_, b)| {
                let code = if self.vec.as_ref().is_some_and(|v| v.var == b.name) {
                    format!("({} + {ln})", self.vec.as_ref().map_or("", |v| &v.base))
                } else if b.ty == VTy::Bool {
                    format!("({}[{ln}] != 0)", b.code)
                } else {
                    format!("{}[{ln}]", b.code)
                };
                Bind {
                    code,
                    vary: false,
                    mw: 0,
                    ..b.clone()
                }
            })
            .collect();
        self.scope.extend(shadows);
        let saved_vec = self.vec.take();
        let saved_mask = self.mask.take();
        let v = self.expr(e, Some(t));
        self.vec = saved_vec;
        self.mask = saved_mask;
        self.truncate_scope(depth);
        if t == VTy::Bool {
            self.line(format!("{r}[{ln}] = -({});", v.code));
        } else {
            self.line(format!("{r}[{ln}] = {};", v.code));
        }
        self.close();
        Val::vec(r, t, mw)
    }
}
