//! Prints a `full_reduction` kernel as two entry points. `tile_kN` runs
//! one block per chunk of the reduction's range (`tile_plan::full_chunks`):
//! the block reduces its chunk (its threads split the chunk; or, when the
//! reduced body holds reductions, the chunk's values one after the other,
//! each body's reductions split over the block) into `tile_part[c]`, in
//! `double` (`f32` in a dialect without it: [`Printer::partial_type`]). `tile_kN_fin` (one block) combines the chunks in a fixed tree
//! and one thread runs the store with the reduction replaced by the result. No float
//! atomics: the result is the same on every run.

use crate::gpu::quad_loops::sfx;
use crate::{Printer, VTy};
use tile_ir::Program;
use tile_plan::kernel_ir::{FullForm, LoweredKernel};

/// Prints a full reduction's two entry points from its parts.
pub struct FullPrint<'a>(pub &'a tile_plan::FullParts);

impl FullPrint<'_> {
    /// The body of `tile_kN` (one block per chunk, a grid-stride loop),
    /// in the lowering's form ([`LoweredKernel::full`]) with its
    /// contiguous accesses ([`LoweredKernel::quads`]).
    pub fn print_chunks(
        &self,
        p: &mut Printer,
        nparams: usize,
        program: &Program,
        lowered: &LoweredKernel,
    ) {
        let Some(form) = lowered.full else {
            p.refuse(format!("{} was lowered with no chunk form", lowered.name));
            return;
        };
        let quads = &lowered.quads;
        // One quad per step: more in flight measured slower on an H200
        // (full_sum at 4096x4096: 25.1 us at one, 25.6 at two, 32.5 at
        // four quads per step).
        let unroll = 1;
        // A failing check names the reduction's statement.
        if let Some(s) = self.0.finish.first() {
            p.set_line(s.span().line);
        }
        let (g, int, syn) = (p.gpu(), p.d.int, p.d.syntax);
        let pt = p.partial_type();
        let dbl = p.scalar_type(pt);
        declare_partials(p, nparams, false);
        p.full_range(self.0, true);
        crate::gpu::print_rows::declare_smem(p, 2 * g.row_set);
        let step = format!("c += {}", g.blocks_x);
        p.open(syn.for_head(int, "c", g.block_x, "c < fcount", &step));
        let end = syn.select("frh - fcl < flen", "frh", "fcl + flen");
        p.line(syn.decls(int, &[("fcl", "frl + c * flen"), ("fch", &end)]));
        let depth = p.scope_len();
        let (clo, chi, _) = tile_plan::full_names();
        p.bind_loop(&clo, "fcl");
        p.bind_loop(&chi, "fch");
        let flat = self
            .0
            .flat
            .as_ref()
            .filter(|_| form == FullForm::ThreadShares);
        if form == FullForm::OneThread {
            p.line("/* chunk on one thread: nested reductions (see print_full.rs) */");
            p.open(format!("if ({} == 0)", g.thread_x));
            let (v, t) = p.lower(&self.0.chunk);
            let v = as_partial(p, v, t);
            p.line(format!("tile_part[c] = {v};"));
            p.close();
        } else if let Some(flat) = flat {
            // `op(i: op(j: B))`: every row's share accumulates in one
            // per-thread value, the block combines once per chunk.
            let id = crate::gpu::print_rows::identity_of(p.d, self.0.op, pt);
            p.line(syn.var(dbl, "fthr", Some(&id)));
            let cv = Printer::var_name(&self.0.var);
            let (cond, step) = (format!("{cv} < fch"), format!("{cv}++"));
            p.open(syn.for_head(int, &cv, "fcl", &cond, &step));
            let inner = p.scope_len();
            p.bind_loop(&self.0.var, &cv);
            crate::gpu::print_rows::thread_share(p, flat, "fthr", pt, (program, quads), unroll);
            p.truncate_scope(inner);
            p.close();
            let f = p.helper_call(&format!("tile_block_{}_{}", self.0.op.name(), sfx(pt)));
            p.line(format!("fthr = {f}(fthr, {});", g.smem_base));
            let first = format!("{} == 0", g.thread_x);
            p.line(syn.when(&first, "tile_part[c] = fthr;"));
        } else if form == FullForm::RowsOverBlock {
            // The chunk's values in order, each body's reductions over the
            // block (every thread gets the same bits, so every thread
            // keeps the same accumulator).
            let (init, empty) = p.full_literals(self.0.op);
            p.line(syn.var(dbl, "facc", Some(&init)));
            let cv = Printer::var_name(&self.0.var);
            let (cond, step) = (format!("{cv} < fch"), format!("{cv}++"));
            p.open(syn.for_head(int, &cv, "fcl", &cond, &step));
            let inner = p.scope_len();
            p.bind_loop(&self.0.var, &cv);
            let mut e = self.0.body.clone();
            crate::gpu::print_rows::block_reductions(p, &mut e, (program, quads), 0, unroll);
            let (v, t) = p.lower(&e);
            let v = as_partial(p, v, t);
            let line = p.combine_f64(self.0.op, "facc", &v);
            p.line(line);
            // The next value's reductions reuse the shared slots.
            p.line(g.barrier);
            p.truncate_scope(inner);
            p.close();
            let first = format!("{} == 0", g.thread_x);
            let v = syn.select("fch > fcl", "facc", &empty);
            p.line(syn.when(&first, &format!("tile_part[c] = {v};")));
        } else {
            let mut e = self.0.chunk.clone();
            crate::gpu::print_rows::block_reductions(p, &mut e, (program, quads), 0, unroll);
            let (v, t) = p.lower(&e);
            let v = as_partial(p, v, t);
            let first = format!("{} == 0", g.thread_x);
            p.line(syn.when(&first, &format!("tile_part[c] = {v};")));
        }
        // The next chunk's reductions reuse the shared slots.
        p.line(g.barrier);
        p.truncate_scope(depth);
        p.close();
    }

    /// The body of `tile_kN_fin` (one block of up to `PARTIALS` threads):
    /// each thread takes its chunks' results, the block combines them in a fixed
    /// tree (the same bits on every run), then one thread stores.
    pub fn print_finish(&self, p: &mut Printer, nparams: usize) {
        let (g, int, syn) = (p.gpu(), p.d.int, p.d.syntax);
        let pt = p.partial_type();
        declare_partials(p, nparams, true);
        p.line(syn.leave_if(&format!("{} != 0", g.block_x)));
        p.full_range(self.0, true);
        let (init, _) = p.full_literals(self.0.op);
        crate::gpu::print_rows::declare_smem(p, 2 * g.row_set);
        p.line(syn.var(p.scalar_type(pt), "fcomb", Some(&init)));
        // One chunk per thread at `PARTIALS` threads; fewer threads (a
        // register limit) take theirs in a fixed stride.
        let step = format!("c += {}", g.threads_x);
        p.open(syn.for_head(int, "c", g.thread_x, "c < fcount", &step));
        let line = p.combine_f64(self.0.op, "fcomb", "tile_part[c]");
        p.line(line);
        p.close();
        let f = p.helper_call(&format!("tile_block_{}_{}", self.0.op.name(), sfx(pt)));
        p.line(format!("fcomb = {f}(fcomb, {});", g.smem_base));
        p.line(syn.leave_if(&format!("{} != 0", g.thread_x)));
        p.full_store(self.0, "fcomb");
    }
}

/// Declares `tile_part`, the chunks' results (the kernel's buffer after
/// its parameters), where the dialect passes buffers as pointers (WGSL
/// binds it at module scope).
fn declare_partials(p: &mut Printer, nparams: usize, read_only: bool) {
    let g = p.gpu();
    if g.buffer.is_empty() {
        return;
    }
    let dbl = p.scalar_type(p.partial_type());
    let c = if read_only { "const " } else { "" };
    p.line(format!(
        "{c}{dbl} *{} tile_part = ({c}{dbl} *){};",
        p.d.restrict,
        g.buffer.replace("{n}", &nparams.to_string())
    ));
}

/// The code `v` of type `t` as a chunk's result (C converts on
/// assignment; WGSL needs the conversion spelled).
fn as_partial(p: &Printer, v: String, t: VTy) -> String {
    let pt = p.partial_type();
    if t == pt || p.d.syntax == crate::Syntax::C {
        v
    } else {
        p.d.syntax.cast(p.scalar_type(pt), &v)
    }
}
