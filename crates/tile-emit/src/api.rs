//! Entry points for target layers that build their own control structure
//! (CUDA row kernels, vectorised element grids): lower one expression, ask
//! its type, and bind a name to C code.

use crate::lower_expr::Ty;
use crate::printer::{Bind, Kind, Printer, VTy};
use tile_ir::Expr;

impl Printer<'_> {
    /// Lowers `e` in the current scope (lines for its temporaries are
    /// printed first) and returns its C code and type.
    pub fn lower(&mut self, e: &Expr) -> (String, VTy) {
        let want = match self.ty(e) {
            Ty::Known(t) => Some(t),
            _ => None,
        };
        let v = self.expr(e, want);
        (v.code, v.ty)
    }

    /// Lowers `e` where a value of type `want` is expected (literals take
    /// that type).
    pub fn lower_as(&mut self, e: &Expr, want: VTy) -> (String, VTy) {
        let v = self.expr(e, Some(want));
        (v.code, v.ty)
    }

    /// Lowers reductions over one range (`Expr::Reduce` nodes sharing the
    /// first one's variable and bounds) in one scalar loop, each with its
    /// own accumulator and order, so each result has the bits it would
    /// have alone, unrolled `unroll` times where the dialect can ask for
    /// it; returns each result's C name and type.
    pub fn lower_together(&mut self, reductions: &[&Expr], unroll: u32) -> Vec<(String, VTy)> {
        self.reduce_together(reductions, unroll)
    }

    /// The type `e` has in the current scope (literals resolved to the
    /// program's float type or integers).
    pub fn value_type(&self, e: &Expr) -> VTy {
        let t = self.ty(e);
        self.resolve(t, None)
    }

    /// Records that the text calls the target library's helper `name` (so
    /// the target includes it) and returns the name.
    pub fn helper_call(&mut self, name: &str) -> String {
        self.helper(name.to_string())
    }

    /// Begins a loop level over `var in lo..hi` (C code evaluated once)
    /// whose code the target prints itself (strided loops of GPU threads):
    /// one check, when the range is not empty, for every access that runs
    /// unconditionally in `stmts` and `exprs`, which then print unchecked.
    /// End it with [`Printer::end_checked_level`].
    pub fn begin_checked_level(
        &mut self,
        var: &str,
        lo: &str,
        hi: &str,
        stmts: &[tile_ir::Stmt],
        exprs: &[&Expr],
    ) {
        self.precheck(Some((var, lo, hi)), stmts, exprs);
    }

    /// Ends a level begun with [`Printer::begin_checked_level`].
    pub fn end_checked_level(&mut self) {
        self.end_level();
    }

    /// A failure site for a check the target layer prints itself (staging
    /// copies, vector accesses): its 1-based id, reported like the
    /// printer's own sites.
    pub fn new_site(&mut self, buf: &str, what: &'static str) -> u32 {
        self.push_site(buf, what)
    }

    /// Whether the load `e` (a node of statements or expressions passed to
    /// the innermost open [`Printer::begin_checked_level`], or an outer
    /// one) was checked at a level's entry, so it may run unchecked.
    pub fn load_checked(&self, e: &Expr) -> bool {
        matches!(e, Expr::Load { id, .. } if self.node_checked(id))
    }

    /// Whether the store `s` was checked at a level's entry (see
    /// [`Printer::load_checked`]).
    pub fn store_checked(&self, s: &tile_ir::Stmt) -> bool {
        matches!(s, tile_ir::Stmt::Store { id, .. } if self.node_checked(id))
    }

    /// C condition: the `width` elements of `buf` from `buf[idx]` along
    /// its last dimension lie in its box, with `var` bound to the C code
    /// `at` (a target's vector accesses, checked before they are made).
    pub fn span_in_box(
        &mut self,
        var: &str,
        at: &str,
        buf: &str,
        idx: &[Expr],
        width: &str,
    ) -> String {
        let dims = self.index_code(var, at, idx);
        self.in_box_span(buf, &dims, width)
    }

    /// The address of `buf[idx]` with the loop variable `var` bound to the
    /// code `at` (the dialect's [`crate::GpuSpelling::quad_at`]; a C
    /// pointer elsewhere).
    pub fn address(&mut self, var: &str, at: &str, buf: &str, idx: &[Expr]) -> String {
        let dims = self.index_code(var, at, idx);
        let pattern = self.d.gpu.as_ref().map_or("({p} + {o})", |g| g.quad_at);
        pattern
            .replace("{p}", &Printer::ptr_name(buf))
            .replace("{o}", &self.offset(buf, &dims))
    }

    /// For a whole row `row` (C code) of the 2-D `buf`: the C condition
    /// that the row lies in the box's first dimension, and the offset of
    /// its first element in rows (multiply by the row length, `n1_buf`, for
    /// elements). A target's row copies take them from here, like every
    /// other access.
    pub fn row_in_box(&self, buf: &str, row: &str) -> (String, String) {
        let row = row.to_string();
        (
            self.in_dim(buf, 0, &row, &row),
            self.offset(buf, std::slice::from_ref(&row)),
        )
    }

    /// C code of each index of `idx` with `var` bound to `at`.
    fn index_code(&mut self, var: &str, at: &str, idx: &[Expr]) -> Vec<String> {
        let depth = self.scope_len();
        self.bind_loop(var, at);
        let dims = idx.iter().map(|e| self.lower_as(e, VTy::Int).0).collect();
        self.truncate_scope(depth);
        dims
    }

    /// Makes `name` visible as a uniform value held by the C code `code`.
    pub fn bind_value(&mut self, name: &str, code: &str, ty: VTy) {
        self.scope.push(Bind {
            name: name.to_string(),
            code: code.to_string(),
            ty,
            vary: false,
            mw: 0,
            kind: Kind::Value,
        });
    }
}

impl Printer<'_> {
    /// C code of the extent `hi - lo` of a range over size symbols.
    pub fn extent(&self, lo: &Expr, hi: &Expr) -> String {
        if *lo == Expr::Int(0) {
            self.size_expr(hi)
        } else {
            format!("{} - {}", self.size_expr(hi), self.size_expr(lo))
        }
    }

    /// The storage element type of a buffer of `dtype` in this dialect.
    pub fn storage_type(&self, dtype: tile_ir::DType) -> &'static str {
        match dtype {
            tile_ir::DType::F32 => self.d.f32,
            tile_ir::DType::F64 => self.d.f64,
            tile_ir::DType::I32 => self.d.store_i32,
            tile_ir::DType::Bool => self.d.store_bool,
        }
    }

    /// The kernel prologue every target shares: each size symbol from
    /// `size(n)` (the n-th entry of the target's size array), then for each
    /// parameter a typed, `restrict`-qualified pointer from `ptr(i)` (`const`
    /// unless it is in `written`) and its box constants (`lo{d}_{buf}` where
    /// the box does not start at 0, `n{d}_{buf}`).
    pub fn declare_arguments(
        &mut self,
        params: &[&tile_ir::Param],
        written: &[String],
        size: &dyn Fn(usize) -> String,
        ptr: &dyn Fn(usize) -> String,
    ) {
        self.declare_sizes(size);
        let written: std::collections::HashSet<&str> = written.iter().map(|w| w.as_str()).collect();
        for (i, q) in params.iter().enumerate() {
            self.declare_param(q, written.contains(q.name.as_str()), &ptr(i));
        }
    }

    /// Declares one parameter: a typed, `restrict`-qualified pointer from
    /// the C code `ptr` (`const` unless `written`) and its box constants
    /// (`lo{d}_{buf}` where the box does not start at 0, `n{d}_{buf}`).
    pub fn declare_param(&mut self, q: &tile_ir::Param, written: bool, ptr: &str) {
        let restrict = self.d.restrict;
        let elem = self.storage_type(q.dtype);
        let c = if written { "" } else { "const " };
        self.line(format!(
            "{c}{elem} *{restrict} {} = ({c}{elem} *){ptr};",
            Printer::ptr_name(&q.name)
        ));
        self.declare_box(q);
    }

    /// Declares the size symbols, `size(n)` giving the code of the n-th
    /// (where a target declares its buffers itself: WGSL's bindings).
    pub fn declare_sizes(&mut self, size: &dyn Fn(usize) -> String) {
        let int = self.d.int;
        let symbols = self.size_symbols().to_vec();
        for (n, s) in symbols.iter().enumerate() {
            self.line(self.d.syntax.decl(int, &Printer::size_name(s), &size(n)));
            self.bind_size(s);
        }
    }

    /// Declares a parameter's box constants (`lo{d}_{buf}` where the box
    /// does not start at 0, `n{d}_{buf}`); its buffer is the target's.
    pub fn declare_box(&mut self, q: &tile_ir::Param) {
        let int = self.d.int;
        for (d, dim) in q.dims.iter().enumerate() {
            let lo = self.box_lo(&q.name, d);
            if lo != "0" {
                self.line(self.d.syntax.decl(int, &lo, &self.size_expr(&dim.lo)));
            }
            let n = self.extent(&dim.lo, &dim.hi);
            self.line(self.d.syntax.decl(int, &Printer::box_n(&q.name, d), &n));
        }
    }
}
