//! The GPU printers: the bodies of row, column and full-reduction kernels
//! as blocks of threads (shared memory, barriers, block reductions, loops
//! of threads over a row four elements at a time), printed from a lowered
//! kernel in any dialect that has a [`GpuSpelling`].
//!
//! A GPU back end prints each kernel's signature and launch skeleton, then
//! calls [`element_grid`], [`element_grid_v4`], [`row_reduction`],
//! [`column_reduction`], [`FullPrint`] or [`one_thread`] for the body, and provides the helper library the printed names call
//! (`tile_block_sum_f32`, `tile_max_f32`, ...). What these printers do is
//! what the lowering decided ([`tile_plan::kernel_ir`]); the spelling is
//! the dialect's.

mod print_columns;
mod print_elements;
mod print_full;
mod print_rows;
mod quad_loops;
mod stage_rows;

use crate::dialect::GpuSpelling;
use crate::Printer;

pub use print_columns::{column_reduction, shares, SERIAL_COLUMN};
pub use print_elements::{element_grid, element_grid_v4, one_thread};
pub use print_full::FullPrint;
pub use print_rows::{row_reduction, LOCKSTEP_ROW, SERIAL_ROW};

/// Choices of the printed loops that change the source, not its meaning.
#[derive(Clone, Copy, Debug)]
pub struct Unroll {
    /// Column quads per thread in the 16-byte entry points.
    pub quads: u32,
    /// Quads per thread loaded per step in row loops that read device
    /// memory as 16-byte vectors (every thread still combines its
    /// elements in the same order).
    pub rows: u32,
    /// Quads per thread a streaming row kernel holds in registers between
    /// loops that read the same row (0: none).
    pub held: u32,
}

impl<'a> Printer<'a> {
    /// The dialect's GPU spelling. The GPU printers are called for GPU
    /// dialects only; a dialect without one is a back end's bug.
    pub(crate) fn gpu(&self) -> &'a GpuSpelling {
        self.d
            .gpu
            .as_ref()
            .expect("the GPU printers need a dialect with a GPU spelling")
    }
}

/// The fields of a quad's four lanes.
pub(crate) const FIELDS: [&str; 4] = ["x", "y", "z", "w"];

/// Replaces each load of `e` listed in `loads` by the generated name
/// `kind` numbered by its place in the list (a quad's loaded values).
pub(crate) fn name_loads(
    e: &mut tile_ir::Expr,
    loads: &[(String, Vec<tile_ir::Expr>)],
    kind: &str,
) {
    if let tile_ir::Expr::Load { buf, idx, .. } = e {
        if let Some(n) = loads.iter().position(|(b, i)| b == buf && i == idx) {
            *e = tile_ir::Expr::var(&tile_ir::names::generated(kind, n));
            return;
        }
    }
    for c in e.children_mut() {
        name_loads(c, loads, kind);
    }
}

/// `pattern` with `{a}` replaced by `a` and `{v}` by `v`.
pub(crate) fn spell(pattern: &str, a: &str, v: &str) -> String {
    pattern.replace("{a}", a).replace("{v}", v)
}

/// Binds the program's name `name` to a new value holding the lowered
/// code `code` of type `ty` (a row's or a column's binding).
pub(crate) fn bind_lowered(p: &mut crate::Printer, name: &str, code: &str, ty: crate::VTy) {
    let t = p.tmp("val");
    let decl = p.d.syntax.decl(p.scalar_type(ty), &t, code);
    p.line(format!("{decl} /* {name} */"));
    p.bind_value(name, &t, ty);
}
