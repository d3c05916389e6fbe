//! Verifies what kernel-level passes and the lowering produce: each
//! kernel's bodies (the plan's, the cached one, the interchanged one, a
//! lowered entry point's) wrapped as a program over the kernel's domain,
//! with its scratch rows as parameters, through
//! [`tile_ir::verify_generated`]. Debug builds (every test) run it after
//! each such pass, so a pass that leaves a body with an unbound name, a
//! type error or a store to an input stops at once with the pass's name
//! (a Tile bug, not a user's error).

use crate::{Kernel, Mapping, ScratchRow};
use tile_ir::{Program, Span, Stmt};

/// `body`, a body of kernel `k` of `program` using `scratch`, as a program
/// of its own: inside a loop over the kernel's domain for kernels whose
/// work items are its points (element, split, row and column kernels);
/// an interchanged column body instead with its block's bounds bound
/// first ([`crate::column_block_names`]).
fn as_program(
    program: &Program,
    k: &Kernel,
    body: &[Stmt],
    scratch: &[ScratchRow],
    blocks: bool,
) -> Program {
    let mut p = crate::with_scratch(program, scratch).into_owned();
    let span = Span::default();
    p.body = if blocks {
        let (cb, ce) = crate::column_block_names();
        let col = &k.domain[0];
        let mut b = vec![
            Stmt::Let {
                name: cb,
                value: col.lo.clone(),
                span,
            },
            Stmt::Let {
                name: ce,
                value: col.hi.clone(),
                span,
            },
        ];
        b.extend(body.iter().cloned());
        b
    } else {
        match k.mapping {
            Mapping::ElementGrid
            | Mapping::Split
            | Mapping::RowReduction
            | Mapping::ColumnReduction
                if !k.domain.is_empty() =>
            {
                vec![Stmt::For {
                    vars: k.domain.clone(),
                    body: body.to_vec(),
                    span,
                }]
            }
            // A full reduction's domain is its reduction's own range; a
            // serial kernel's statements are the program's.
            _ => body.to_vec(),
        }
    };
    p
}

/// Panics, naming `pass`, when `body` (of kernel `k`) does not verify.
pub(crate) fn verify_body(
    pass: &str,
    program: &Program,
    k: &Kernel,
    body: &[Stmt],
    scratch: &[ScratchRow],
    blocks: bool,
) {
    let p = as_program(program, k, body, scratch, blocks);
    if let Err(e) = tile_ir::verify_generated(&p) {
        panic!(
            "internal error: kernel {} after {pass} does not verify:\n{e}\n{p}",
            k.name
        );
    }
}

/// [`verify_body`] for every body of every kernel: the plan's, the cached
/// one and the interchanged one.
pub(crate) fn verify_kernels(pass: &str, program: &Program, kernels: &[Kernel]) {
    for k in kernels {
        verify_body(pass, program, k, &k.body, &[], false);
        if let Some(c) = &k.cached {
            verify_body(pass, program, k, &c.body, &c.scratch, false);
        }
        if let Some(c) = &k.interchanged {
            let blocks = k.mapping == Mapping::ColumnReduction;
            verify_body(pass, program, k, &c.body, &c.scratch, blocks);
        }
        if let Some(c) = &k.contraction {
            // The epilogue inside the row loop, its block of columns bound
            // to the whole column range.
            let (jb, je) = crate::contraction_block_names();
            let span = Span::default();
            let mut body = vec![
                Stmt::Let {
                    name: jb,
                    value: c.col.lo.clone(),
                    span,
                },
                Stmt::Let {
                    name: je,
                    value: c.col.hi.clone(),
                    span,
                },
            ];
            body.extend(c.epilogue.iter().cloned());
            // A batched product's epilogue runs inside its row loop too.
            if c.batch.is_some() {
                body = vec![Stmt::For {
                    vars: vec![c.row.clone()],
                    body,
                    span,
                }];
            }
            verify_body(
                pass,
                program,
                k,
                &body,
                std::slice::from_ref(&c.scratch),
                false,
            );
        }
        if let Some(c) = &k.contraction {
            // One element: the column loop (a batched product's row and
            // column loop), the product bound first.
            let span = Span::default();
            let mut inner = vec![Stmt::Let {
                name: crate::Contraction::value_name(),
                value: c.sum.clone(),
                span,
            }];
            inner.extend(c.per_element.iter().cloned());
            let mut vars = vec![c.col.clone()];
            if c.batch.is_some() {
                vars.insert(0, c.row.clone());
            }
            let body = vec![Stmt::For {
                vars,
                body: inner,
                span,
            }];
            verify_body(pass, program, k, &body, &[], false);
        }
        if let Some(a) = &k.attention {
            verify_body(pass, program, k, &a.scores, &a.scratch, false);
            verify_body(pass, program, k, &a.output, &a.scratch, false);
            verify_body(pass, program, k, &a.row_in_steps(), &a.scratch, false);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{compile, Options};
    use tile_ir::Expr;

    #[test]
    #[should_panic(expected = "kernel k0 after a broken pass does not verify")]
    fn a_body_with_an_unbound_name_stops_with_the_passes_name() {
        let program = tile_ir::parse_program(
            "program p(x: in f32[N], y: out f32[N]) { for i in 0..N { y[i] = x[i] } }",
        )
        .unwrap();
        let plan = compile(&program, &Options::default()).unwrap();
        let mut k = plan.kernels[0].clone();
        if let Stmt::Store { value, .. } = &mut k.body[0] {
            *value = Expr::var("nowhere");
        }
        verify_kernels("a broken pass", &plan.program, &[k]);
    }

    #[test]
    fn every_fixture_kernel_verifies() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/programs");
        let mut n = 0;
        for path in tile_ir::fixture::tile_files(&[root]) {
            let text = std::fs::read_to_string(&path).unwrap();
            for program in tile_ir::parse_file(&text).unwrap_or_default() {
                let Ok(plan) = compile(&program, &Options::default()) else {
                    continue;
                };
                verify_kernels("compile", &plan.program, &plan.kernels);
                n += plan.kernels.len();
            }
        }
        assert!(n > 50, "{n} kernels");
    }
}
