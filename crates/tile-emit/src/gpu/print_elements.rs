//! Prints the bodies of element kernels (`element_grid`, `split`) and of
//! kernels that run on one thread (`serial`): grid-stride loops over the
//! domain, one element per thread, and where the plan allows it a second
//! entry point with four consecutive elements per thread and 16-byte
//! accesses (which entry point runs is the runtime's choice, by alignment).

use crate::gpu::{name_loads, spell, FIELDS};
use crate::{Printer, VTy};
use tile_ir::{Expr, Stmt};
use tile_plan::Kernel;

/// The kind of the generated names of the 16-byte entry point's loaded
/// quads (`__vldN`).
const VECTOR_LOADS: &str = "vld";

/// Prints statements that one thread of the grid runs, in order.
pub fn one_thread(p: &mut Printer, body: &[Stmt]) {
    let g = p.gpu();
    p.line(
        p.d.syntax
            .leave_if(&format!("{} != 0 || {} != 0", g.block_x, g.thread_x)),
    );
    p.stmts(body);
}

fn domain_prologue(p: &mut Printer, k: &Kernel) {
    for (d, v) in k.domain.iter().enumerate() {
        let (lo, n) = (p.size_expr(&v.lo), p.extent(&v.lo, &v.hi));
        let (dl, dn) = (format!("dl{d}"), format!("dn{d}"));
        p.line(p.d.syntax.decls(p.d.int, &[(&dl, &lo), (&dn, &n)]));
    }
    let empty: Vec<String> = (0..k.domain.len()).map(|d| format!("dn{d} <= 0")).collect();
    if !empty.is_empty() {
        p.line(p.d.syntax.leave_if(&empty.join(" || ")));
    }
}

/// Binds the outer domain variables from `t` (the flat index of a row of
/// the innermost variable); returns the scope depth to restore.
fn bind_outer(p: &mut Printer, k: &Kernel, t: &str) {
    let last = k.domain.len() - 1;
    if last == 0 {
        return;
    }
    let (int, syn) = (p.d.int, p.d.syntax);
    p.line(syn.var(int, "q", Some(t)));
    for d in (0..last).rev() {
        let cv = Printer::var_name(&k.domain[d].name);
        if d == 0 {
            p.line(syn.decl(int, &cv, "dl0 + q"));
        } else {
            p.line(syn.decl(int, &cv, &format!("dl{d} + q % dn{d}")));
            p.line(format!("q /= dn{d};"));
        }
        p.bind_loop(&k.domain[d].name, &cv);
    }
}

/// Prints the body of an `element_grid` or `split` kernel: a grid-stride
/// loop, one element per thread.
pub fn element_grid(p: &mut Printer, k: &Kernel) {
    if k.domain.is_empty() {
        one_thread(p, &k.body);
        return;
    }
    domain_prologue(p, k);
    let last = k.domain.len() - 1;
    let jname = k.domain[last].name.clone();
    grid_loops(p, k, &format!("dn{last}"), 1, None, |p, c| {
        let jv = Printer::var_name(&jname);
        p.line(p.d.syntax.decl(p.d.int, &jv, &format!("dl{last} + {c}")));
        p.bind_loop(&jname, &jv);
        p.stmts(&k.body);
    });
}

/// The elements of a row past its last whole quad (`dn % 4` of them), one
/// per thread of block 0 with the scalar code: printed first in the `_v4`
/// entry point, so its failure sites are numbered as the plain entry
/// point's. Where `f32` buffers are read through 16-byte views (WGSL), the
/// tail's elements share one `vec4` of each buffer, so thread 0 writes
/// them all, in order: no two threads write components of one vector.
fn ragged_tail(p: &mut Printer, k: &Kernel) {
    let last = k.domain.len() - 1;
    let jname = &k.domain[last].name;
    let g = p.gpu();
    let (int, syn) = (p.d.int, p.d.syntax);
    let one_thread = g.quad_elem.is_some();
    let first = if one_thread {
        p.open(format!("if ({} == 0 && {} == 0)", g.block_x, g.thread_x));
        p.open(syn.for_head(int, "tt", "0", &format!("tt < dn{last} % 4"), "tt += 1"));
        "tt"
    } else {
        p.open(format!(
            "if ({} == 0 && {} < dn{last} % 4)",
            g.block_x, g.thread_x
        ));
        g.thread_x
    };
    let depth = p.scope_len();
    let jv = Printer::var_name(jname);
    p.line(syn.decl(int, &jv, &format!("dl{last} + dn{last} / 4 * 4 + {first}")));
    p.bind_loop(jname, &jv);
    p.stmts(&k.body);
    p.truncate_scope(depth);
    p.close();
    if one_thread {
        p.close();
    }
}

/// The work loops of element kernels: rows (every domain variable but the
/// innermost, flattened) over the grid's y dimension, `cols` work items of
/// the innermost variable over x; no division in the inner loop. `tail`
/// prints per row before the work loop.
fn grid_loops(
    p: &mut Printer,
    k: &Kernel,
    cols: &str,
    unroll: u32,
    tail: Option<fn(&mut Printer, &Kernel)>,
    body: impl FnOnce(&mut Printer, &str),
) {
    let last = k.domain.len() - 1;
    let rows: Vec<String> = (0..last).map(|d| format!("dn{d}")).collect();
    let rows = if rows.is_empty() {
        "1".to_string()
    } else {
        rows.join(" * ")
    };
    let (g, int, syn) = (p.gpu(), p.d.int, p.d.syntax);
    p.line(syn.decls(int, &[("rows", &rows), ("cols", cols)]));
    p.open(syn.for_head(
        int,
        "r",
        g.block_y,
        "r < rows",
        &format!("r += {}", g.blocks_y),
    ));
    let depth = p.scope_len();
    bind_outer(p, k, "r");
    if let Some(tail) = tail {
        tail(p, k);
    }
    let (bx, per) = (
        g.threads_x,
        if unroll == 1 {
            String::new()
        } else {
            format!(" * {unroll}")
        },
    );
    let (first, step) = (
        format!("{} * {bx}{per} + {}", syn.cast(int, g.block_x), g.thread_x),
        format!("c += {} * {bx}{per}", syn.cast(int, g.blocks_x)),
    );
    p.open(syn.for_head(int, "c", &first, "c < cols", &step));
    body(p, "c");
    p.close();
    p.truncate_scope(depth);
    p.close();
}

/// Prints the body of an element kernel's 16-byte entry point: each
/// thread takes four consecutive elements of the innermost variable per
/// work item (`unroll` work items per step), the row's ragged end first;
/// its own checks report `manual_sites + 1, + 2, ...`.
pub fn element_grid_v4(p: &mut Printer, k: &Kernel, unroll: u32, manual_sites: i32) {
    domain_prologue(p, k);
    let last = k.domain.len() - 1;
    let jname = k.domain[last].name.clone();
    grid_loops(
        p,
        k,
        &format!("(dn{last} / 4)"),
        unroll,
        Some(ragged_tail),
        |p, c| v4_body(p, k, &jname, c, (unroll, manual_sites)),
    );
}

/// One work item of the `_v4` entry point: 16-byte loads of every
/// contiguous access, four lanes of scalar code over them, 16-byte stores.
fn v4_body(p: &mut Printer, k: &Kernel, jname: &str, c: &str, (unroll, manual): (u32, i32)) {
    let last = k.domain.len() - 1;
    let (g, int) = (p.gpu(), p.d.int);
    let jv = Printer::var_name(jname);
    // With `unroll` > 1 each thread first loads the vectors of `unroll`
    // column quads (`blockDim.x` apart, so warps stay coalesced), then
    // computes and stores each: more bytes in flight per thread.
    let idx = if unroll == 1 { "" } else { "[u]" };
    if unroll == 1 {
        p.line(p.d.syntax.decl(int, &jv, &format!("dl{last} + {c} * 4")));
    }
    let depth = p.scope_len();
    let loads = contiguous_loads(k, jname);
    let mut site = 0;
    if unroll > 1 {
        for (n, _) in loads.iter().enumerate() {
            p.line(format!("{} vld{n}[{unroll}];", g.quad));
        }
        open_quads(p, c, &jv, last, unroll);
    }
    for (n, (buf, index)) in loads.iter().enumerate() {
        site += 1;
        let in_box = p.span_in_box(jname, &jv, buf, index, "4");
        let fail = g.fail.replace("{n}", &(manual + site).to_string());
        p.line(format!("if (!({in_box})) {fail}"));
        let at = p.address(jname, &jv, buf, index);
        let load = spell(g.quad_load, &at, "");
        p.line(if unroll == 1 {
            p.d.syntax.decl(g.quad, &format!("vld{n}"), &load)
        } else {
            format!("vld{n}{idx} = {load};")
        });
    }
    if unroll > 1 {
        p.close();
        p.close();
        open_quads(p, c, &jv, last, unroll);
    }
    let stores = lanes(p, k, jname, &loads, idx);
    for (buf, index, vals) in &stores {
        site += 1;
        let in_box = p.span_in_box(jname, &jv, buf, index, "4");
        let fail = g.fail.replace("{n}", &(manual + site).to_string());
        p.line(format!("if (!({in_box})) {fail}"));
        let at = p.address(jname, &jv, buf, index);
        let quad = g.quad_of.replace("{v}", &vals.join(", "));
        p.line(spell(g.quad_store, &at, &quad));
    }
    if unroll > 1 {
        p.close();
        p.close();
    }
    p.truncate_scope(depth);
}

/// The distinct loads of the kernel body that move with the innermost
/// variable `jname`, in order of appearance.
fn contiguous_loads(k: &Kernel, jname: &str) -> Vec<(String, Vec<Expr>)> {
    let mut loads: Vec<(String, Vec<Expr>)> = Vec::new();
    for s in &k.body {
        s.walk_exprs(&mut |e| {
            e.walk(&mut |x| {
                if let Expr::Load { buf, idx, .. } = x {
                    let mut free = Vec::new();
                    x.free_vars(&mut free);
                    if free.iter().any(|n| n == jname)
                        && !loads.iter().any(|(b, i)| b == buf && i == idx)
                    {
                        loads.push((buf.clone(), idx.clone()));
                    }
                }
            })
        });
    }
    loads
}

/// Opens the loop over a thread's `unroll` column quads and binds the
/// innermost variable `jv` to the quad's first column.
fn open_quads(p: &mut Printer, c: &str, jv: &str, last: usize, unroll: u32) {
    let (g, int) = (p.gpu(), p.d.int);
    p.line(g.unroll_fully);
    p.open(format!("for ({} u = 0; u < {unroll}; u++)", g.int32));
    p.line(format!(
        "const {int} cu = {c} + ({int})u * {};",
        g.threads_x
    ));
    p.open("if (cu < cols)");
    p.line(format!("const {int} {jv} = dl{last} + cu * 4;"));
}

/// Four lanes of scalar code over the loaded vectors (`vldN{idx}.x` ...):
/// bindings, and each store's value per lane. Returns per store its
/// buffer, index and the four values' names.
fn lanes(
    p: &mut Printer,
    k: &Kernel,
    jname: &str,
    loads: &[(String, Vec<Expr>)],
    idx: &str,
) -> Vec<(String, Vec<Expr>, Vec<String>)> {
    let jv = Printer::var_name(jname);
    let mut stores: Vec<(String, Vec<Expr>, Vec<String>)> = Vec::new();
    for (lane, field) in FIELDS.iter().enumerate() {
        let lane_depth = p.scope_len();
        p.bind_loop(jname, &format!("({jv} + {lane})"));
        for (n, _) in loads.iter().enumerate() {
            p.bind_value(
                &tile_ir::names::generated(VECTOR_LOADS, n),
                &format!("vld{n}{idx}.{field}"),
                VTy::F32,
            );
        }
        let mut si = 0;
        for s in &k.body {
            let mut s = s.clone();
            if let Stmt::Let { value, .. } | Stmt::Store { value, .. } = &mut s {
                name_loads(value, loads, VECTOR_LOADS);
            }
            match &s {
                Stmt::Let { name, value, .. } => {
                    let (code, ty) = p.lower(value);
                    let t = p.tmp("val");
                    let decl = p.d.syntax.decl(p.scalar_type(ty), &t, &code);
                    p.line(format!("{decl} /* {name} */"));
                    p.bind_value(name, &t, ty);
                }
                Stmt::Store {
                    buf, idx, value, ..
                } => {
                    let (code, _) = p.lower_as(value, VTy::F32);
                    let t = p.tmp("stv");
                    p.line(p.d.syntax.decl(p.d.f32, &t, &code));
                    if lane == 0 {
                        stores.push((buf.clone(), idx.clone(), vec![]));
                    }
                    stores[si].2.push(t);
                    si += 1;
                }
                _ => {}
            }
        }
        p.truncate_scope(lane_depth);
    }
    stores
}
