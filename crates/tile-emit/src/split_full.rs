//! How both back ends print a `full_reduction` kernel's parts
//! ([`tile_plan::FullParts`], built by tile-plan's `split_full_reductions`):
//! the chunk range, the accumulator literals, the final store and the
//! combination of chunk results (in `double`, or `f32`:
//! [`Printer::partial_type`]).

use crate::printer::Printer;
use tile_ir::{DType, ReduceOp};
use tile_plan::{full_names, FullParts};

impl Printer<'_> {
    /// Declares `frl`, `frh` (the range) and `flen` (a chunk's length), as
    /// `tile_plan::full_chunks` counts them; `with_count` adds `fcount`,
    /// the chunks (for kernels that do not receive it).
    pub fn full_range(&mut self, f: &FullParts, with_count: bool) {
        let (int, parts, syn) = (self.d.int, tile_plan::PARTIALS, self.d.syntax);
        let (lo, hi) = (self.size_expr(&f.lo), self.size_expr(&f.hi));
        self.line(syn.decls(int, &[("frl", &lo), ("frh", &hi)]));
        let n = syn.select("frh > frl", "frh - frl", "0");
        self.line(syn.decl(int, "fn_", &n));
        let p = syn.select(&format!("fn_ < {parts}"), "fn_", &parts.to_string());
        self.line(syn.decl(int, "fp", &p));
        let ceil = |d: &str| format!("fn_ / {d} + {}", syn.as_int(&format!("fn_ % {d} != 0")));
        self.line(syn.decl(int, "flen", &syn.select("fp > 0", &ceil("fp"), "0")));
        if with_count {
            let count = syn.select("flen > 0", &ceil("flen"), "1");
            self.line(syn.decl(int, "fcount", &count));
        }
    }

    /// The type chunks' results are kept and combined in: `double`, or
    /// `f32` in a dialect without 64-bit floats.
    pub fn partial_type(&self) -> crate::VTy {
        if self.d.f32_sums_in_f64 {
            crate::VTy::F64
        } else {
            crate::VTy::F32
        }
    }

    /// A chunk accumulator's start for `op` ([`Printer::partial_type`]) (NaN for `max`/`min`: the
    /// first value replaces it) and the value of an empty range.
    pub fn full_literals(&self, op: ReduceOp) -> (String, String) {
        let f = |x: f64| self.float_lit(x, self.partial_type());
        match op {
            ReduceOp::Sum => (f(0.0), f(0.0)),
            ReduceOp::Max => (f(f64::NAN), f(f64::NEG_INFINITY)),
            ReduceOp::Min => (f(f64::NAN), f(f64::INFINITY)),
        }
    }

    /// Binds the combined result (held by `comb`, of the partial type) in the
    /// reduction's type and prints the store.
    pub fn full_store(&mut self, f: &FullParts, comb: &str) {
        let depth = self.scope_len();
        let (_, _, name) = full_names();
        match f.t {
            DType::F64 => self.bind_value(&name, comb, crate::VTy::F64),
            _ if self.partial_type() == crate::VTy::F32 => {
                self.bind_value(&name, comb, crate::VTy::F32)
            }
            _ => {
                let v = format!("({})", self.d.syntax.cast(self.d.f32, comb));
                self.bind_value(&name, &v, crate::VTy::F32)
            }
        }
        self.lane_loops.clear();
        self.stmts(&f.finish);
        self.truncate_scope(depth);
    }

    /// `acc = acc op v;` for chunk results (the helpers `tile_max_f64`
    /// and `tile_min_f64` of the target's library).
    pub fn combine_f64(&mut self, op: ReduceOp, acc: &str, v: &str) -> String {
        let t = match self.partial_type() {
            crate::VTy::F64 => "f64",
            _ => "f32",
        };
        match op {
            ReduceOp::Sum => format!("{acc} = {acc} + {v};"),
            ReduceOp::Max => {
                let f = self.helper_call(&format!("tile_max_{t}"));
                format!("{acc} = {f}({acc}, {v});")
            }
            ReduceOp::Min => {
                let f = self.helper_call(&format!("tile_min_{t}"));
                format!("{acc} = {f}({acc}, {v});")
            }
        }
    }
}
