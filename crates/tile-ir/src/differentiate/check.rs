//! What can be differentiated: the checks `differentiate` makes before any
//! work, each naming the parameter or statement that fails it.
//!
//! A program is differentiated as a function from its `in` parameters to
//! its `out` parameters, so: no `inout` parameter; no output read back; and
//! every element of a float output written at most once, by a store whose
//! indices are the enclosing loops' variables (each once, an integer offset
//! allowed) or integer literals, with at most one such store on any path
//! through the program.

use super::GradError;
use crate::{BinOp, Diagnostic, Expr, Program, Role, Stmt};

/// Checks the request (`wrt` names float `in` parameters) and the program.
pub(super) fn check(program: &Program, wrt: &[String]) -> Result<(), GradError> {
    check_request(program, wrt)?;
    for p in &program.params {
        if p.role == Role::InOut {
            return Err(unsupported(
                p.span,
                format!(
                    "`{}` is `inout`; a program is differentiated as a function from its `in` \
                     parameters to its `out` parameters, so give it an `in` and an `out` \
                     parameter instead",
                    p.name
                ),
            ));
        }
    }
    let mut err = None;
    program.walk(&mut |s| {
        if err.is_some() {
            return;
        }
        let mut read = None;
        let mut visit = |e: &Expr| {
            e.walk(&mut |n| {
                if let Expr::Load { buf, .. } = n {
                    if program.param(buf).is_some_and(|q| q.role == Role::Out) {
                        read.get_or_insert_with(|| buf.clone());
                    }
                }
            })
        };
        s.exprs().into_iter().for_each(&mut visit);
        if let Some(buf) = read {
            err = Some(unsupported(
                s.span(),
                format!(
                    "the output `{buf}` is read here; differentiation needs outputs that are \
                     only written (compute the value again, or split the program in two)"
                ),
            ));
        }
    });
    if let Some(e) = err {
        return Err(e);
    }
    let mut loops = Vec::new();
    check_stores(program, &program.body, &mut loops)?;
    for p in &program.params {
        if p.role != Role::Out || !p.dtype.is_float() {
            continue;
        }
        for (key, span) in store_keys(&program.body, &p.name) {
            if writes(&program.body, &p.name, &key) > 1 {
                return Err(unsupported(
                    span,
                    format!(
                        "`{}` may be written more than once on one path through the program; \
                         differentiation needs each output element written at most once",
                        p.name
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// Refuses a program with a size symbol that only an output the
/// derivative program does not take (one that is not a float) has in its
/// box: nothing would bind it. With `with_value` every output is taken.
pub(super) fn check_sizes(program: &Program, with_value: bool) -> Result<(), GradError> {
    if with_value {
        return Ok(());
    }
    let mut taken = Vec::new();
    for p in &program.params {
        if p.role == Role::In || p.dtype.is_float() {
            for d in &p.dims {
                d.lo.free_vars(&mut taken);
                d.hi.free_vars(&mut taken);
            }
        }
    }
    for p in &program.params {
        for d in &p.dims {
            let mut here = Vec::new();
            d.lo.free_vars(&mut here);
            d.hi.free_vars(&mut here);
            if let Some(s) = here.iter().find(|s| !taken.contains(s)) {
                return Err(unsupported(
                    p.span,
                    format!(
                        "the size `{s}` is fixed only by the output `{}` ({}), which the \
                         derivative program does not take; pass --with-value (the derivative \
                         then writes every output), or give `{s}` to an input",
                        p.name, p.dtype
                    ),
                ));
            }
        }
    }
    Ok(())
}

fn unsupported(span: crate::Span, message: String) -> GradError {
    GradError::Unsupported(Diagnostic::new(span, message))
}

fn check_request(program: &Program, wrt: &[String]) -> Result<(), GradError> {
    if wrt.is_empty() {
        return Err(GradError::Request(
            "name the inputs to differentiate with respect to (`--wrt x` or `--wrt x,y`)".into(),
        ));
    }
    let inputs: Vec<&str> = program
        .params
        .iter()
        .filter(|p| p.role == Role::In && p.dtype.is_float())
        .map(|p| p.name.as_str())
        .collect();
    for (k, name) in wrt.iter().enumerate() {
        if wrt[..k].contains(name) {
            return Err(GradError::Request(format!("`{name}` is named twice")));
        }
        let hint = if inputs.is_empty() {
            "it has no float inputs".to_string()
        } else {
            format!("its float inputs are {}", inputs.join(", "))
        };
        match program.param(name) {
            None => {
                return Err(GradError::Request(format!(
                    "`{}` has no parameter `{name}`; {hint}",
                    program.name
                )))
            }
            Some(p) if p.role != Role::In => {
                return Err(GradError::Request(format!(
                    "`{name}` is an `{}` parameter; gradients are taken with respect to inputs \
                     ({hint})",
                    p.role
                )))
            }
            Some(p) if !p.dtype.is_float() => {
                return Err(GradError::Request(format!(
                    "`{name}` holds {}, which has no gradient; {hint}",
                    p.dtype
                )))
            }
            Some(_) => {}
        }
    }
    Ok(())
}

/// The loop variable an index names, when it is one (`i`, `i + 2`, `i - 1`,
/// `2 + i`); `Some("")` for an integer literal (one element).
fn index_variable<'e>(e: &'e Expr, loops: &[String]) -> Option<&'e str> {
    if let Expr::Int(_) = e {
        return Some("");
    }
    let var = match e {
        Expr::Var(v) => v,
        Expr::Binary(BinOp::Add | BinOp::Sub, a, b, _) => match (&**a, &**b) {
            (Expr::Var(v), Expr::Int(_)) => v,
            (Expr::Int(_), Expr::Var(v)) if matches!(e, Expr::Binary(BinOp::Add, ..)) => v,
            _ => return None,
        },
        _ => return None,
    };
    loops.contains(var).then_some(var.as_str())
}

fn check_stores(
    program: &Program,
    body: &[Stmt],
    loops: &mut Vec<String>,
) -> Result<(), GradError> {
    for s in body {
        match s {
            Stmt::For { vars, body, .. } => {
                let depth = loops.len();
                loops.extend(vars.iter().map(|v| v.name.clone()));
                check_stores(program, body, loops)?;
                loops.truncate(depth);
            }
            Stmt::If { then, els, .. } => {
                check_stores(program, then, loops)?;
                check_stores(program, els, loops)?;
            }
            Stmt::Let { .. } => {}
            Stmt::Store { buf, idx, span, .. } => {
                let float_out = program
                    .param(buf)
                    .is_some_and(|q| q.role == Role::Out && q.dtype.is_float());
                if !float_out {
                    continue;
                }
                let mut used: Vec<&str> = Vec::new();
                for e in idx {
                    match index_variable(e, loops) {
                        Some("") => {}
                        Some(v) if !used.contains(&v) => used.push(v),
                        _ => {
                            return Err(unsupported(
                                *span,
                                format!(
                                    "the store to `{buf}` has the index `{e}`; differentiation \
                                     needs each index to be a loop variable of its own (an \
                                     integer offset allowed) or an integer, so each element is written once"
                                ),
                            ))
                        }
                    }
                }
                if let Some(v) = loops.iter().find(|v| !used.contains(&v.as_str())) {
                    return Err(unsupported(
                        *span,
                        format!(
                            "the store to `{buf}` does not index by the loop variable `{v}`, so \
                             it writes the same elements once per value of `{v}`; \
                             differentiation needs each output element written once"
                        ),
                    ));
                }
            }
        }
    }
    Ok(())
}

/// Which elements a store may write, by its literal indices (`None` for
/// an index that varies): `s[0]` and `s[1]` never meet.
type Key = Vec<Option<i64>>;

fn key_of(idx: &[Expr]) -> Key {
    idx.iter()
        .map(|e| match e {
            Expr::Int(v) => Some(*v),
            _ => None,
        })
        .collect()
}

fn meet(a: &Key, b: &Key) -> bool {
    a.iter()
        .zip(b)
        .all(|(x, y)| x.is_none() || y.is_none() || x == y)
}

/// Every store to `buf`: its key and where it is, in program order.
fn store_keys(body: &[Stmt], buf: &str) -> Vec<(Key, crate::Span)> {
    let mut out = Vec::new();
    for s in body {
        s.walk(&mut |t| {
            if let Stmt::Store {
                buf: b, idx, span, ..
            } = t
            {
                if b == buf {
                    out.push((key_of(idx), *span));
                }
            }
        });
    }
    out
}

/// The most stores to `buf` that may meet `key` on any one path through
/// `body` (a loop's body counts once: its indices already differ per
/// iteration).
fn writes(body: &[Stmt], buf: &str, key: &Key) -> usize {
    body.iter()
        .map(|s| match s {
            Stmt::Store { buf: b, idx, .. } => usize::from(b == buf && meet(&key_of(idx), key)),
            Stmt::For { body, .. } => writes(body, buf, key),
            Stmt::If { then, els, .. } => writes(then, buf, key).max(writes(els, buf, key)),
            Stmt::Let { .. } => 0,
        })
        .sum()
}
