//! `plan_groups`: cut the simplified body into groups and give each group
//! one mapping, recording a fallback for every refusal.
//!
//! 1. Each top-level statement becomes a unit: an element nest (bindings,
//!    stores and `if`s only), a row nest (inner loops or reductions), or
//!    anything else (statements outside a nest).
//! 2. With fusion on, adjacent element nests over the same domain with no
//!    dependency between them are merged (horizontal fusion); a dependency
//!    or a different domain keeps them apart, in order, and is recorded.
//! 3. Each element group that [`find_element_hazards`] clears becomes one
//!    `element_grid` kernel (fusion on, or a single store); with fusion off a
//!    multi-store group becomes one `split` kernel per store. Row nests that
//!    [`find_row_hazards`] clears become `row_reduction` kernels, or
//!    `column_reduction` ones when [`crate::orient_rows`] finds their
//!    reductions walking down columns. A store outside any nest that is
//!    one float reduction over the sizes becomes a `full_reduction`
//!    ([`crate::split_reductions`]). Everything
//!    else runs `serial`, in program order; adjacent serial kernels merge.

use crate::find_hazards::{
    find_element_hazards, find_row_hazards, find_split_hazards, nest_dependency, read, written,
    NestBuffers,
};
use crate::plan::{Fallback, Kernel, Mapping, Plan, Rule};
use crate::remove_dead_code::prune;
use std::collections::{BTreeMap, BTreeSet};
use tile_ir::{Expr, LoopVar, Program, Stmt};

enum Unit {
    Elem {
        vars: Vec<LoopVar>,
        body: Vec<Stmt>,
        lines: Vec<u32>,
    },
    Row {
        vars: Vec<LoopVar>,
        body: Vec<Stmt>,
        line: u32,
    },
    /// A store a `full_reduction` kernel runs, split over `var`.
    Full {
        var: LoopVar,
        stmt: Stmt,
    },
    Other(Stmt),
}

/// Whether the bound `e` is one the runtimes evaluate at launch (literals
/// and size symbols under `+`, `-`, `*`, `/`, `%`): a kernel's domain must
/// be, or no target could run it.
fn only_symbols(e: &Expr, symbols: &[String]) -> bool {
    crate::split_reductions::evaluable(e, symbols)
}

fn is_elementwise(body: &[Stmt]) -> bool {
    let mut ok = true;
    for s in body {
        s.walk(&mut |t| ok &= !matches!(t, Stmt::For { .. }));
        s.walk_exprs(&mut |e| ok &= !e.has_reduction());
    }
    ok
}

/// Plans `program` (already simplified).
pub fn plan_groups(program: &Program, unused_inputs: Vec<String>, fusion: bool) -> Plan {
    let symbols = program.size_symbols();
    let mut fallbacks = Vec::new();
    let units = classify_units(program, &symbols, &mut fallbacks);
    let groups = merge_adjacent_nests(units, fusion, &mut fallbacks);
    let mut kernels: Vec<Kernel> = Vec::new();
    for g in groups {
        plan_unit(g, &symbols, fusion, &mut kernels, &mut fallbacks);
    }
    for (i, k) in kernels.iter_mut().enumerate() {
        k.name = format!("k{i}");
    }
    Plan {
        program: program.clone(),
        kernels,
        fallbacks,
        unused_inputs,
        notes: Vec::new(),
        fusion,
        shared: Vec::new(),
    }
}

/// The program's top-level statements as units to plan: loop nests over
/// size symbols (element-wise or row), whole-array reductions, and the
/// rest (serial, each with its fallback).
fn classify_units(
    program: &Program,
    symbols: &[String],
    fallbacks: &mut Vec<Fallback>,
) -> Vec<Unit> {
    let top_binding = program.body.iter().find_map(|s| match s {
        Stmt::Let { name, span, .. } => Some((name.clone(), span.line)),
        _ => None,
    });
    if let Some((name, line)) = top_binding {
        fallbacks.push(Fallback {
            rule: Rule::Unknown,
            detail: format!("the top-level binding `{name}` at line {line} is shared by later statements; the whole program runs serially"),
        });
        program.body.iter().cloned().map(Unit::Other).collect()
    } else {
        program
            .body
            .iter()
            .map(|s| match s {
                Stmt::For { vars, body, span }
                    if vars
                        .iter()
                        .all(|v| only_symbols(&v.lo, symbols) && only_symbols(&v.hi, symbols)) =>
                {
                    if is_elementwise(body) {
                        Unit::Elem {
                            vars: vars.clone(),
                            body: body.clone(),
                            lines: vec![span.line],
                        }
                    } else {
                        Unit::Row {
                            vars: vars.clone(),
                            body: body.clone(),
                            line: span.line,
                        }
                    }
                }
                s => {
                    if let Some(var) = crate::split_reductions::full_reduction(program, s) {
                        return Unit::Full {
                            var,
                            stmt: s.clone(),
                        };
                    }
                    let why = if matches!(s, Stmt::For { .. }) {
                        "has bounds that are not sizes (literals and size symbols under +, -, *, / and %, which the runtimes evaluate at launch)"
                    } else if matches!(s, Stmt::Store { .. }) {
                        "is outside any loop nest and not one float reduction over the sizes"
                    } else {
                        "is outside any loop nest"
                    };
                    fallbacks.push(Fallback {
                        rule: Rule::Unknown,
                        detail: format!(
                            "the statement at line {} {why}; it runs serially",
                            s.span().line
                        ),
                    });
                    Unit::Other(s.clone())
                }
            })
            .collect()
    }
}

/// Merges adjacent element nests of the same domain with no dependency
/// between them (fusion on), recording why others stay apart.
fn merge_adjacent_nests(
    units: Vec<Unit>,
    fusion: bool,
    fallbacks: &mut Vec<Fallback>,
) -> Vec<Unit> {
    let mut groups: Vec<Unit> = Vec::new();
    // The buffers and names of the last group, if an element nest: kept
    // as nests merge, so each merge costs the new nest's size (merging
    // thousands of nests stays linear).
    let mut last: Option<(NestBuffers, Taken)> = None;
    for u in units {
        let mine = match &u {
            Unit::Elem { vars, body, .. } if fusion => {
                Some((NestBuffers::of(body), Taken::of(vars, body)))
            }
            _ => None,
        };
        if let (
            Some(Unit::Elem {
                vars: va,
                body: ba,
                lines: la,
            }),
            Unit::Elem {
                vars: vb,
                body: bb,
                lines: lb,
            },
        ) = (groups.last_mut(), &u)
        {
            if fusion {
                let same_domain = va.len() == vb.len()
                    && va.iter().zip(vb).all(|(x, y)| x.lo == y.lo && x.hi == y.hi);
                // Formatted only for a fallback: the group's lines grow.
                let what = || format!("the nests at lines {} and {}", join(la), join(lb));
                if !same_domain {
                    fallbacks.push(Fallback {
                        rule: Rule::DifferentDomain,
                        detail: format!(
                            "{} have different domains ({} vs {}); they run as separate kernels",
                            what(),
                            show_domain(va),
                            show_domain(vb)
                        ),
                    });
                } else if let Some((rule, why)) = last
                    .as_ref()
                    .zip(mine.as_ref())
                    .and_then(|((a, _), (b, _))| nest_dependency(a, b))
                {
                    fallbacks.push(Fallback {
                        rule,
                        detail: format!("{} have the same domain but {why}; they run as separate kernels, in order", what()),
                    });
                } else {
                    if let (Some((a, taken)), Some((b, _))) = (last.as_mut(), mine.as_ref()) {
                        let merged = rename_into(va, taken, vb, bb.clone());
                        ba.extend(merged);
                        la.extend(lb.iter().copied());
                        a.extend(b);
                        continue;
                    }
                }
            }
        }
        groups.push(u);
        last = mine;
    }

    groups
}

/// Appends the kernels of one unit, and its fallbacks.
fn plan_unit(
    g: Unit,
    symbols: &[String],
    fusion: bool,
    kernels: &mut Vec<Kernel>,
    fallbacks: &mut Vec<Fallback>,
) {
    match g {
        Unit::Elem { vars, body, lines } => {
            plan_elements(vars, body, lines, symbols, fusion, kernels, fallbacks)
        }
        Unit::Row { vars, body, line } => plan_rows(vars, body, line, symbols, kernels, fallbacks),
        Unit::Full { var, stmt } => {
            let line = stmt.span().line;
            kernels.push(kernel(
                Mapping::FullReduction,
                vec![var],
                vec![stmt],
                vec![line],
            ));
        }
        Unit::Other(s) => {
            let line = s.span().line;
            push_serial(kernels, vec![s], vec![line]);
        }
    }
}

/// An element nest: one `element_grid` kernel (fusion on, or one store),
/// one `split` kernel per stored buffer (fusion off), or `serial` with the
/// hazards that forbid the others.
fn plan_elements(
    vars: Vec<LoopVar>,
    body: Vec<Stmt>,
    lines: Vec<u32>,
    symbols: &[String],
    fusion: bool,
    kernels: &mut Vec<Kernel>,
    fallbacks: &mut Vec<Fallback>,
) {
    let line = lines[0];
    let hazards = find_element_hazards(&vars, &body, symbols, line);
    let stores = written(&body);
    let nstores = crate::find_hazards::accesses(&body).1.len();
    if !hazards.is_empty() {
        fallbacks.extend(hazards);
        push_serial_nest(kernels, vars, body, line, lines);
    } else if fusion || nstores <= 1 {
        kernels.push(kernel(Mapping::ElementGrid, vars, body, lines));
    } else {
        let split = find_split_hazards(&body, line);
        if split.is_empty() {
            for b in &stores {
                let only = keep_store(&body, b);
                kernels.push(kernel(
                    Mapping::Split,
                    vars.clone(),
                    prune(only),
                    lines.clone(),
                ));
            }
        } else {
            fallbacks.extend(split);
            push_serial_nest(kernels, vars, body, line, lines);
        }
    }
}

/// A row nest: a `row_reduction` or `column_reduction` kernel over its
/// first variable, or `serial` with the hazards between rows.
fn plan_rows(
    vars: Vec<LoopVar>,
    body: Vec<Stmt>,
    line: u32,
    symbols: &[String],
    kernels: &mut Vec<Kernel>,
    fallbacks: &mut Vec<Fallback>,
) {
    let row = vars[0].clone();
    let inner = if vars.len() > 1 {
        vec![Stmt::For {
            vars: vars[1..].to_vec(),
            body: body.clone(),
            span: tile_ir::Span::new(line, 1),
        }]
    } else {
        body.clone()
    };
    let hazards = find_row_hazards(&row, &inner, symbols, line);
    if hazards.is_empty() {
        let mapping = if crate::orient_rows::walks_columns(&row, &inner) {
            Mapping::ColumnReduction
        } else {
            Mapping::RowReduction
        };
        kernels.push(kernel(mapping, vec![row], inner, vec![line]));
    } else {
        fallbacks.extend(hazards);
        push_serial_nest(kernels, vars, body, line, vec![line]);
    }
}

fn kernel(mapping: Mapping, domain: Vec<LoopVar>, body: Vec<Stmt>, lines: Vec<u32>) -> Kernel {
    Kernel {
        name: String::new(),
        mapping,
        stores: written(&body),
        reads: read(&body),
        domain,
        body,
        lines,
        sharing: None,
        cached: None,
        interchanged: None,
        contraction: None,
        attention: None,
        rereads: Vec::new(),
        lanes: Vec::new(),
        full: None,
    }
}

/// Appends serial statements, merging with a serial kernel just before.
/// A refused nest, whole, as a `serial` kernel.
fn push_serial_nest(
    kernels: &mut Vec<Kernel>,
    vars: Vec<LoopVar>,
    body: Vec<Stmt>,
    line: u32,
    lines: Vec<u32>,
) {
    let nest = Stmt::For {
        vars,
        body,
        span: tile_ir::Span::new(line, 1),
    };
    push_serial(kernels, vec![nest], lines);
}

fn push_serial(kernels: &mut Vec<Kernel>, stmts: Vec<Stmt>, lines: Vec<u32>) {
    if let Some(k) = kernels.last_mut().filter(|k| k.mapping == Mapping::Serial) {
        k.body.extend(stmts);
        k.lines.extend(lines);
        k.stores = written(&k.body);
        k.reads = read(&k.body);
    } else {
        kernels.push(kernel(Mapping::Serial, vec![], stmts, lines));
    }
}

/// The body with every store to another buffer removed.
fn keep_store(body: &[Stmt], buf: &str) -> Vec<Stmt> {
    body.iter()
        .filter_map(|s| match s {
            Stmt::Store { buf: b, .. } if b != buf => None,
            Stmt::If {
                cond,
                then,
                els,
                span,
            } => Some(Stmt::If {
                cond: cond.clone(),
                then: keep_store(then, buf),
                els: keep_store(els, buf),
                span: *span,
            }),
            s => Some(s.clone()),
        })
        .collect()
}

/// The names a group of merged nests binds (its loop variables and every
/// `let`), with the next suffix to try for each name a merge renamed:
/// kept as nests merge, so renaming stays linear in the merged nest.
struct Taken {
    names: BTreeSet<String>,
    next: BTreeMap<String, usize>,
}

impl Taken {
    fn of(vars: &[LoopVar], body: &[Stmt]) -> Taken {
        let mut names: BTreeSet<String> = vars.iter().map(|v| v.name.clone()).collect();
        names.extend(bindings(body));
        Taken {
            names,
            next: BTreeMap::new(),
        }
    }
}

fn bindings(body: &[Stmt]) -> Vec<String> {
    let mut out = Vec::new();
    for s in body {
        s.walk(&mut |t| {
            if let Stmt::Let { name, .. } = t {
                out.push(name.clone());
            }
        });
    }
    out
}

/// `body_b` with its loop variables renamed to `vars_a`'s, and its bindings
/// renamed where they would clash with a name `taken` (the group's loop
/// variables and bindings so far), to which its bindings are added.
fn rename_into(
    vars_a: &[LoopVar],
    taken: &mut Taken,
    vars_b: &[LoopVar],
    mut body_b: Vec<Stmt>,
) -> Vec<Stmt> {
    let b_names = bindings(&body_b);
    // Bindings of B first (so a loop variable of A can't be captured), then
    // the loop variables.
    let clashing: Vec<String> = b_names
        .iter()
        .filter(|n| taken.names.contains(*n))
        .cloned()
        .collect();
    for n in &clashing {
        let mut k = taken.next.get(n).copied().unwrap_or(1);
        // A generated name (`__t_1` for `t`): no user name, size symbol
        // included, can be captured.
        let fresh = loop {
            let f = tile_ir::names::generated(&format!("{n}_"), k);
            if !taken.names.contains(&f) && !b_names.contains(&f) {
                break f;
            }
            k += 1;
        };
        taken.next.insert(n.clone(), k + 1);
        taken.names.insert(fresh.clone());
        rename_binding(&mut body_b, n, &fresh);
    }
    taken.names.extend(bindings(&body_b));
    // Through temporaries, so swapped names (`i, j` against `j, i`) work.
    let temps: Vec<String> = (0..vars_b.len())
        .map(|k| tile_ir::names::generated("tile_", k))
        .collect();
    for (b, t) in vars_b.iter().zip(&temps) {
        let to = Expr::var(t);
        body_b.iter_mut().for_each(|s| s.substitute(&b.name, &to));
    }
    for (a, t) in vars_a.iter().zip(&temps) {
        let to = Expr::var(&a.name);
        body_b.iter_mut().for_each(|s| s.substitute(t, &to));
    }
    body_b
}

fn rename_binding(stmts: &mut [Stmt], from: &str, to: &str) {
    let with = Expr::var(to);
    for s in stmts.iter_mut() {
        match s {
            Stmt::Let { name, .. } if name == from => *name = to.to_string(),
            Stmt::If { then, els, .. } => {
                rename_binding(then, from, to);
                rename_binding(els, from, to);
            }
            _ => {}
        }
        s.substitute(from, &with);
    }
}

fn join(v: &[u32]) -> String {
    v.iter()
        .map(|l| l.to_string())
        .collect::<Vec<_>>()
        .join("+")
}

fn show_domain(vars: &[LoopVar]) -> String {
    vars.iter()
        .map(|v| format!("{}..{}", v.lo, v.hi))
        .collect::<Vec<_>>()
        .join(" x ")
}
