//! `find_failing_checks`: which kernels hold a check that data may make
//! fail at run time, so that a call pays for writing copies.
//!
//! A kernel's bounds and division checks are proved at launch by
//! [`crate::check_ranges`] from the sizes alone. An index read from memory
//! (`x[idx[i]]`) or an integer division by a value read from memory
//! (`a[i] / b[i]`) is beyond any such proof: its check may fail on some
//! data. The runtimes then run the call on copies of the buffers the
//! program writes and commit them only when every check passed, so a failed call
//! changes nothing; programs whose checks are proved write in place. One
//! note per such kernel (under `notes:` in `tile plan`) says so, naming the
//! first access or division that needs it.

use crate::Plan;
use std::collections::{HashMap, HashSet};
use tile_ir::{BinOp, DType, Expr, Program, Stmt};

/// One `[copies]` note per kernel with a check that may fail on some data,
/// in kernel order. A kernel is a candidate when an index or an integer
/// divisor depends on memory (a load, a binding computed from one, a loop
/// or reduction variable over a range read from memory); the range proof
/// then decides, at a representative size (every symbol 64), whether some
/// check of the kernel is open (`max(0, min(B - 1, ...))` keeps a bin read
/// from data inside its box). The note names the first data-dependent
/// access or division; the proof is the kernel's as a whole. Checks that
/// only the sizes can open (an `if`-guarded `x[j - 1]`: the proof ignores
/// conditions) are not noted; whether a call pays is decided at launch.
pub fn find_failing_checks(plan: &Plan) -> Vec<String> {
    let program = &plan.program;
    let written: Vec<&str> = program
        .params
        .iter()
        .filter(|p| p.role.is_written())
        .map(|p| p.name.as_str())
        .collect();
    let sizes: tile_ir::Sizes = program
        .size_symbols()
        .into_iter()
        .map(|s| (s, 64))
        .collect();
    let mut notes = Vec::new();
    for k in &plan.kernels {
        let mut w = Walk {
            program,
            types: HashMap::new(),
            tainted: HashSet::new(),
            found: None,
        };
        for s in &k.body {
            w.stmt(s);
        }
        let Some((what, line)) = w.found else {
            continue;
        };
        let alone = Plan {
            kernels: vec![k.clone()],
            ..plan.clone()
        };
        if !crate::check_ranges(&alone, &sizes).is_ok_and(|p| p.checks_may_fail) {
            continue;
        }
        notes.push(format!(
            "[copies] {}: {what} at line {line} may fail a check on some data, so a call writes copies of what the program writes ({}) and commits them only when every check passed",
            k.name,
            written.join(", ")
        ));
    }
    notes
}

struct Walk<'p> {
    program: &'p Program,
    types: HashMap<String, DType>,
    /// Bindings whose values depend on memory.
    tainted: HashSet<String>,
    found: Option<(String, u32)>,
}

impl Walk<'_> {
    fn stmt(&mut self, s: &Stmt) {
        if self.found.is_some() {
            return;
        }
        let line = s.span().line;
        match s {
            Stmt::For { vars, body, .. } => {
                // A variable whose bounds are read from memory indexes
                // by data too.
                for v in vars {
                    self.expr(&v.lo, line);
                    self.expr(&v.hi, line);
                    if self.reads_memory(&v.lo) || self.reads_memory(&v.hi) {
                        self.tainted.insert(v.name.clone());
                    }
                }
                body.iter().for_each(|t| self.stmt(t))
            }
            Stmt::Let { name, value, .. } => {
                self.expr(value, line);
                let t = self.infer(value);
                self.types.insert(name.clone(), t);
                if self.reads_memory(value) {
                    self.tainted.insert(name.clone());
                }
            }
            Stmt::Store {
                buf, idx, value, ..
            } => {
                self.access(buf, idx, line);
                idx.iter().chain([value]).for_each(|e| self.expr(e, line));
            }
            Stmt::If {
                cond, then, els, ..
            } => {
                self.expr(cond, line);
                then.iter().chain(els).for_each(|t| self.stmt(t));
            }
        }
    }

    fn infer(&self, e: &Expr) -> DType {
        // Names not bound in the kernel are loop and reduction variables
        // and sizes: integers.
        let types = &self.types;
        tile_ir::infer_type(
            e,
            &|n| Some(*types.get(n).unwrap_or(&DType::I32)),
            self.program,
        )
    }

    /// Whether `e` reads memory, directly or through a binding.
    fn reads_memory(&self, e: &Expr) -> bool {
        let mut found = false;
        e.walk(&mut |x| {
            found |= match x {
                Expr::Load { .. } => true,
                Expr::Var(n) => self.tainted.contains(n),
                _ => false,
            }
        });
        found
    }

    fn gather(buf: &str, idx: &[Expr]) -> String {
        let idx: Vec<String> = idx.iter().map(|e| e.to_string()).collect();
        format!(
            "`{buf}[{}]` (an index computed from memory)",
            idx.join(", ")
        )
    }

    fn access(&mut self, buf: &str, idx: &[Expr], line: u32) {
        if self.found.is_none() && idx.iter().any(|e| self.reads_memory(e)) {
            self.found = Some((Walk::gather(buf, idx), line));
        }
    }

    fn expr(&mut self, e: &Expr, line: u32) {
        // Reduction variables over a range read from memory.
        let mut data_ranges = Vec::new();
        e.walk(&mut |x| {
            if let Expr::Reduce { var, lo, hi, .. } = x {
                if self.reads_memory(lo) || self.reads_memory(hi) {
                    data_ranges.push(var.clone());
                }
            }
        });
        self.tainted.extend(data_ranges);
        let mut hit: Option<String> = None;
        e.walk(&mut |x| {
            if hit.is_some() {
                return;
            }
            match x {
                Expr::Load { buf, idx, .. } if idx.iter().any(|i| self.reads_memory(i)) => {
                    hit = Some(Walk::gather(buf, idx));
                }
                Expr::Binary(BinOp::Div | BinOp::Rem, _, b, _)
                    if self.reads_memory(b) && self.infer(x) == DType::I32 =>
                {
                    hit = Some(format!(
                        "`{x}` (an integer division by a value computed from memory)"
                    ));
                }
                _ => {}
            }
        });
        if self.found.is_none() {
            self.found = hit.map(|h| (h, line));
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::{compile, Options};

    fn notes(text: &str) -> Vec<String> {
        let p = tile_ir::parse_program(text).unwrap();
        compile(&p, &Options::default())
            .unwrap()
            .notes
            .into_iter()
            .filter(|n| n.starts_with("[copies]"))
            .collect()
    }

    #[test]
    fn gathers_and_divisions_by_data_pay_and_nothing_else_does() {
        let gather = notes(
            "program g(x: in f32[N], idx: in i32[N], y: out f32[N]) {\n  for i in 0..N {\n    y[i] = x[idx[i]]\n  }\n}",
        );
        assert_eq!(gather.len(), 1, "{gather:?}");
        assert!(
            gather[0].contains("`x[idx[i]]`") && gather[0].contains("line 3"),
            "{gather:?}"
        );
        let div = notes(
            "program d(a: in i32[N], b: in i32[N], y: out i32[N]) {\n  for i in 0..N {\n    y[i] = a[i] / b[i]\n  }\n}",
        );
        assert!(
            div.len() == 1 && div[0].contains("integer division"),
            "{div:?}"
        );
        let bound = notes(
            "program b(x: in f32[N], idx: in i32[N], y: out f32[N]) {\n  for i in 0..N {\n    k = idx[i] + 1\n    y[i] = x[k]\n  }\n}",
        );
        assert!(bound.len() == 1 && bound[0].contains("`x[k]`"), "{bound:?}");
        // A row's length read from memory bounds an inner loop and a
        // reduction: the variables index by data.
        let ragged = notes(
            "program r(x: in f32[M, N], len: in i32[M], y: out f32[M, N], s: out f32[M]) {\n  for i in 0..M {\n    s[i] = sum(k in 0..len[i]: x[i, k])\n    for j in 0..len[i] {\n      y[i, j] = x[i, j]\n    }\n  }\n}",
        );
        assert!(
            ragged.len() == 1 && ragged[0].contains("`x[i, k]`"),
            "{ragged:?}"
        );
        // A float division, a division by a size, plain element-wise work:
        // nothing at run time can fail beyond what the launch proves.
        for quiet in [
            "program f(a: in f32[N], b: in f32[N], y: out f32[N]) {\n  for i in 0..N {\n    y[i] = a[i] / b[i]\n  }\n}",
            "program s(a: in i32[N], y: out i32[N]) {\n  for i in 0..N {\n    y[i] = a[i] / N\n  }\n}",
            "program e(x: in f32[M, N], y: out f32[M, N]) {\n  for i in 0..M, j in 0..N {\n    y[i, j] = exp(x[i, j])\n  }\n}",
            // A bin read from data but clamped into the box: proved.
            "program h(x: in i32[N], c: out f32[B]) {\n  for b in 0..B {\n    c[b] = 0.0\n  }\n  for n in 0..N {\n    k = max(0, min(B - 1, x[n]))\n    c[k] = c[k] + 1.0\n  }\n}",
        ] {
            assert!(notes(quiet).is_empty(), "{quiet}");
        }
    }
}
