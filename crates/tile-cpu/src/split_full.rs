//! Prints a `full_reduction` kernel as two C functions: `tile_kN` reduces
//! chunks `[lo, hi)` of the reduction's range into `tile_part[c]` (in
//! `double`: exact for `max`/`min`, and `f32` sums accumulate in `f64` as
//! everywhere), `tile_kN_fin` combines the chunks in order and runs the
//! store with the reduction replaced by the result.

use tile_emit::Printer;
use tile_plan::Kernel;

/// Prints a full reduction's two functions from its parts.
pub(crate) struct FullPrint<'a>(pub &'a tile_plan::FullParts);

impl FullPrint<'_> {
    /// The body of `tile_kN`: chunks `[lo, hi)` into `tile_part`, which
    /// follows the kernel's `nparams` parameters in `A`.
    pub(crate) fn print_chunks(&self, p: &mut Printer, nparams: usize) {
        // A failing check names the reduction's statement.
        if let Some(s) = self.0.finish.first() {
            p.set_line(s.span().line);
        }
        p.line(format!(
            "double *restrict tile_part = (double *)A[{nparams}];"
        ));
        p.full_range(self.0, false);
        p.open("for (int64_t c = lo; c < hi; c++)");
        p.line("const int64_t fcl = frl + c * flen, fch = frh - fcl < flen ? frh : fcl + flen;");
        let depth = p.scope_len();
        let (clo, chi, _) = tile_plan::full_names();
        p.bind_loop(&clo, "fcl");
        p.bind_loop(&chi, "fch");
        if self.0.nested {
            // Rows of the range one after the other; each row's own
            // reductions run on vectors.
            let (init, empty) = p.full_literals(self.0.op);
            p.line(format!("double facc = {init};"));
            let cv = Printer::var_name(&self.0.var);
            p.open(format!("for (int64_t {cv} = fcl; {cv} < fch; {cv}++)"));
            let inner = p.scope_len();
            p.bind_loop(&self.0.var, &cv);
            let (v, _) = p.lower(&self.0.body);
            let line = p.combine_f64(self.0.op, "facc", &v);
            p.line(line);
            p.truncate_scope(inner);
            p.close();
            p.line(format!("tile_part[c] = fch > fcl ? facc : {empty};"));
        } else {
            let (v, _) = p.lower(&self.0.chunk);
            p.line(format!("tile_part[c] = {v};"));
        }
        p.truncate_scope(depth);
        p.close();
    }

    /// `tile_kN_fin(lo, hi, ...)`: chunks `[lo, hi)` combined in order,
    /// then the store.
    pub(crate) fn print_finish(&self, p: &mut Printer, k: &Kernel, params: &[&tile_ir::Param]) {
        p.line(format!(
            "/* {}_fin: the chunks' results combined in order, then the store */",
            k.name
        ));
        p.open(format!(
            "void {}_fin(int64_t lo, int64_t hi, const int64_t *restrict S, void *const *restrict A, int32_t *restrict err)",
            crate::emit::symbol(k)
        ));
        let depth = p.scope_len();
        p.declare_arguments(params, &k.stores, &|n| format!("S[{n}]"), &|i| {
            format!("A[{i}]")
        });
        p.line(format!(
            "const double *restrict tile_part = (const double *)A[{}];",
            params.len()
        ));
        let (init, _) = p.full_literals(self.0.op);
        p.line(format!("double fcomb = {init};"));
        p.open("for (int64_t c = lo; c < hi; c++)");
        let line = p.combine_f64(self.0.op, "fcomb", "tile_part[c]");
        p.line(line);
        p.close();
        p.full_store(self.0, "fcomb");
        p.truncate_scope(depth);
        p.close();
    }
}
