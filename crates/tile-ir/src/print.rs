//! Printer: `Display` for programs and their parts, in normalised `.tile` text.
//!
//! The output is what [`crate::parse_program`] reads back to an equal
//! program: two-space indentation, one statement per line, minimal
//! parentheses, `f32[M, N]` for boxes that start at 0, floats in Rust's
//! shortest round-trip form (always with a `.` or an exponent), and
//! `else if` for an else-block that holds a single `if`.

use crate::{Dim, Expr, LoopVar, Param, Program, Stmt, UnOp};
use std::fmt::{self, Write};

/// Prints several programs as one `.tile` file: programs separated by one
/// blank line, with a trailing newline.
pub fn print_file(programs: &[Program]) -> String {
    let mut out = String::new();
    for (i, p) in programs.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        // Writing into a `String` cannot fail.
        let _ = writeln!(out, "{p}");
    }
    out
}

impl fmt::Display for Program {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "program {}(", self.name)?;
        write_list(f, &self.params)?;
        f.write_str(") ")?;
        write_block(f, &self.body, 0)
    }
}

impl fmt::Display for Param {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {} {}", self.name, self.role, self.dtype)?;
        // A scalar (0-d) parameter is written without brackets.
        if self.dims.is_empty() {
            return Ok(());
        }
        f.write_str("[")?;
        write_list(f, &self.dims)?;
        f.write_str("]")
    }
}

impl fmt::Display for Dim {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.lo == Expr::Int(0) {
            write!(f, "{}", self.hi)
        } else {
            write!(f, "{}..{}", self.lo, self.hi)
        }
    }
}

impl fmt::Display for LoopVar {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} in {}..{}", self.name, self.lo, self.hi)
    }
}

impl fmt::Display for Stmt {
    /// Prints the statement as if at the outermost level: nested blocks are
    /// indented relative to it, and there is no trailing newline.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_stmt(f, self, 0)
    }
}

impl fmt::Display for Expr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Expr::Float(v) => write_float(f, *v),
            Expr::Int(v) => write!(f, "{v}"),
            Expr::Bool(b) => write!(f, "{b}"),
            Expr::Var(name) => f.write_str(name),
            // A scalar parameter reads as its bare name.
            Expr::Load { buf, idx, .. } if idx.is_empty() => f.write_str(buf),
            Expr::Load { buf, idx, .. } => {
                write!(f, "{buf}[")?;
                write_list(f, idx)?;
                f.write_str("]")
            }
            Expr::Unary(op, a) => {
                let (symbol, bare) = match op {
                    // `-` before a literal would read back as a negative literal.
                    UnOp::Neg => ("-", is_atom(a)),
                    UnOp::Not => ("!", is_atom(a) || is_non_negative_literal(a)),
                };
                f.write_str(symbol)?;
                write_operand(f, a, !bare)
            }
            Expr::Binary(op, a, b, _) => {
                let left_parens = match &**a {
                    Expr::Binary(child, ..) => {
                        child.precedence() < op.precedence()
                            || (child.is_comparison() && op.is_comparison())
                    }
                    _ => false,
                };
                let right_parens = match &**b {
                    Expr::Binary(child, ..) => child.precedence() <= op.precedence(),
                    _ => false,
                };
                write_operand(f, a, left_parens)?;
                write!(f, " {} ", op.symbol())?;
                write_operand(f, b, right_parens)
            }
            Expr::Call(func, args) => {
                write!(f, "{}(", func.name())?;
                write_list(f, args)?;
                f.write_str(")")
            }
            Expr::Reduce {
                op,
                var,
                lo,
                hi,
                body,
            } => write!(f, "{}({var} in {lo}..{hi}: {body})", op.name()),
        }
    }
}

/// Expressions that never need parentheses as the operand of a prefix operator.
fn is_atom(e: &Expr) -> bool {
    matches!(
        e,
        Expr::Var(_) | Expr::Load { .. } | Expr::Call(..) | Expr::Reduce { .. } | Expr::Bool(_)
    )
}

fn is_non_negative_literal(e: &Expr) -> bool {
    match e {
        Expr::Int(v) => *v >= 0,
        Expr::Float(v) => v.is_nan() || v.is_sign_positive(),
        _ => false,
    }
}

/// Finite floats in shortest round-trip form, always with a `.` or an
/// exponent so they read back as floats; `inf`, `-inf` and `nan` otherwise.
fn write_float(f: &mut fmt::Formatter<'_>, v: f64) -> fmt::Result {
    if v.is_nan() {
        f.write_str("nan")
    } else if v.is_infinite() {
        f.write_str(if v > 0.0 { "inf" } else { "-inf" })
    } else {
        // `Debug` gives the shortest text that parses back to `v`, and keeps
        // `.0` or an exponent (`1.0`, `1e-12`, `1e20`).
        write!(f, "{v:?}")
    }
}

fn write_operand(f: &mut fmt::Formatter<'_>, e: &Expr, parens: bool) -> fmt::Result {
    if parens {
        write!(f, "({e})")
    } else {
        write!(f, "{e}")
    }
}

fn write_list<T: fmt::Display>(f: &mut fmt::Formatter<'_>, items: &[T]) -> fmt::Result {
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            f.write_str(", ")?;
        }
        write!(f, "{item}")?;
    }
    Ok(())
}

/// One statement without leading indentation; `level` is the indentation of
/// the line it starts on, for its nested blocks.
fn write_stmt(f: &mut fmt::Formatter<'_>, s: &Stmt, level: usize) -> fmt::Result {
    match s {
        Stmt::For { vars, body, .. } => {
            f.write_str("for ")?;
            write_list(f, vars)?;
            f.write_str(" ")?;
            write_block(f, body, level)
        }
        Stmt::Let { name, value, .. } => write!(f, "{name} = {value}"),
        Stmt::Store {
            buf, idx, value, ..
        } => {
            if idx.is_empty() {
                return write!(f, "{buf} = {value}");
            }
            write!(f, "{buf}[")?;
            write_list(f, idx)?;
            write!(f, "] = {value}")
        }
        Stmt::If {
            cond, then, els, ..
        } => {
            write!(f, "if {cond} ")?;
            write_block(f, then, level)?;
            match els.as_slice() {
                [] => Ok(()),
                [nested @ Stmt::If { .. }] => {
                    f.write_str(" else ")?;
                    write_stmt(f, nested, level)
                }
                _ => {
                    f.write_str(" else ")?;
                    write_block(f, els, level)
                }
            }
        }
    }
}

/// `{`, the statements one per line at `level + 1`, then `}` at `level`.
fn write_block(f: &mut fmt::Formatter<'_>, body: &[Stmt], level: usize) -> fmt::Result {
    f.write_str("{\n")?;
    for s in body {
        write!(f, "{:width$}", "", width = 2 * (level + 1))?;
        write_stmt(f, s, level + 1)?;
        f.write_str("\n")?;
    }
    write!(f, "{:width$}}}", "", width = 2 * level)
}
