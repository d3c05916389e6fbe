//! How both back ends print a `full_reduction` kernel's parts
//! ([`tile_plan::FullParts`], built by tile-plan's `split_full_reductions`):
//! the chunk range, the accumulator literals, the final store and the
//! `double` combination.

use crate::printer::Printer;
use tile_ir::{DType, ReduceOp};
use tile_plan::{full_names, FullParts};

impl Printer<'_> {
    /// Declares `frl`, `frh` (the range) and `flen` (a chunk's length), as
    /// `tile_plan::full_chunks` counts them; `with_count` adds `fcount`,
    /// the chunks (for kernels that do not receive it).
    pub fn full_range(&mut self, f: &FullParts, with_count: bool) {
        let (int, parts) = (self.d.int, tile_plan::PARTIALS);
        self.line(format!(
            "const {int} frl = {}, frh = {};",
            self.size_expr(&f.lo),
            self.size_expr(&f.hi)
        ));
        self.line(format!("const {int} fn_ = frh > frl ? frh - frl : 0;"));
        self.line(format!("const {int} fp = fn_ < {parts} ? fn_ : {parts};"));
        self.line(format!(
            "const {int} flen = fp > 0 ? fn_ / fp + (fn_ % fp != 0) : 0;"
        ));
        if with_count {
            self.line(format!(
                "const {int} fcount = flen > 0 ? fn_ / flen + (fn_ % flen != 0) : 1;"
            ));
        }
    }

    /// A `double` accumulator's start for `op` (NaN for `max`/`min`: the
    /// first value replaces it) and the value of an empty range.
    pub fn full_literals(&self, op: ReduceOp) -> (String, String) {
        let f = |x: f64| self.float_lit(x, crate::VTy::F64);
        match op {
            ReduceOp::Sum => (f(0.0), f(0.0)),
            ReduceOp::Max => (f(f64::NAN), f(f64::NEG_INFINITY)),
            ReduceOp::Min => (f(f64::NAN), f(f64::INFINITY)),
        }
    }

    /// Binds the combined result (the `double` held by `comb`) in the
    /// reduction's type and prints the store.
    pub fn full_store(&mut self, f: &FullParts, comb: &str) {
        let depth = self.scope_len();
        let (_, _, name) = full_names();
        match f.t {
            DType::F64 => self.bind_value(&name, comb, crate::VTy::F64),
            _ => self.bind_value(&name, &format!("(({}){comb})", self.d.f32), crate::VTy::F32),
        }
        self.lane_loops.clear();
        self.stmts(&f.finish);
        self.truncate_scope(depth);
    }

    /// `acc = acc op v;` for `double` values (the helpers `tile_max_f64`
    /// and `tile_min_f64` of the target's library).
    pub fn combine_f64(&mut self, op: ReduceOp, acc: &str, v: &str) -> String {
        match op {
            ReduceOp::Sum => format!("{acc} = {acc} + {v};"),
            ReduceOp::Max => {
                let f = self.helper_call("tile_max_f64");
                format!("{acc} = {f}({acc}, {v});")
            }
            ReduceOp::Min => {
                let f = self.helper_call("tile_min_f64");
                format!("{acc} = {f}({acc}, {v});")
            }
        }
    }
}
