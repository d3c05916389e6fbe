//! Random programs aimed at index and size arithmetic: affine indices with
//! huge coefficients and offsets, products, divisions (by zero too),
//! data-dependent indices (`ix[i]`, `i32(x[...])`), shifted boxes,
//! reductions over shifted ranges, scatters, in-place updates, guarded
//! stores, statements outside nests, and size symbols bound explicitly to
//! anything from 0 to `i64::MAX`.
//!
//! Loop bounds stay small (sizes and small offsets), so every program that
//! passes the launch checks finishes quickly; the huge values live in
//! indices and in the one explicitly bound size `Q`.

use crate::rng::Rng;
use std::collections::BTreeMap;

/// One generated case: the program text and the size values its arrays
/// are built for (`Q` is passed explicitly; the others are solved from
/// the arrays' shapes).
pub struct Case {
    /// The `.tile` text.
    pub text: String,
    /// Values of `M`, `N`, `K`, `P` (for the arrays' shapes) and `Q`.
    pub sizes: BTreeMap<String, i64>,
    /// Run with fusion on.
    pub fusion: bool,
    /// Seed of the arrays' contents.
    pub data_seed: u64,
}

const HUGE: [i64; 12] = [
    1 << 31,
    -(1 << 31) - 1,
    1 << 40,
    1 << 61,
    (1 << 61) + 7,
    1 << 62,
    (1 << 62) - 1,
    (1 << 62) + 3,
    i64::MAX,
    i64::MAX - 2,
    -i64::MAX,
    -(1 << 62),
];

fn constant(r: &mut Rng) -> String {
    if r.one_in(3) {
        r.pick(&HUGE).to_string()
    } else {
        (r.below(7) as i64 - 3).to_string()
    }
}

fn coefficient(r: &mut Rng) -> String {
    if r.one_in(5) {
        r.pick(&HUGE).to_string()
    } else {
        r.pick(&["-1", "2", "3", "-2"]).to_string()
    }
}

/// An integer index expression over the loop variables `vars`.
fn index(r: &mut Rng, vars: &[&str], depth: usize) -> String {
    let v = if vars.is_empty() {
        "0".to_string()
    } else {
        r.pick(vars).to_string()
    };
    let w = if vars.is_empty() {
        "1".to_string()
    } else {
        r.pick(vars).to_string()
    };
    let e = match r.below(16) {
        0 | 1 => v,
        // Offsets near the ends of the 64-bit range: a check that wraps
        // passes them.
        2 | 3 => format!("{v} + {}", i64::MAX - r.below(9) as i64),
        4 => format!("{v} - {}", i64::MAX - r.below(9) as i64),
        5 => format!("{v} + {}", constant(r)),
        6 => format!("{} * {v} + {}", coefficient(r), constant(r)),
        7 => format!("{v} * {w}"),
        8 if r.one_in(2) => format!("{v} % ({w} + {})", *r.pick(&[1i64, 1, 2, 0, -1])),
        8 => format!("{v} / ({w} + {})", *r.pick(&[1i64, 1, 2, 0, -1])),
        9 => {
            let h = r.pick(&HUGE).to_string();
            format!("({v} * {h}) / {h}")
        }
        10 => format!("min({v}, {})", constant(r)),
        11 => format!("ix[{}]", index(r, vars, depth + 1)),
        12 => format!("i32(x[0, {v}])"),
        13 => constant(r),
        14 => format!("abs({v} - {})", constant(r)),
        _ => format!("{v} - {}", constant(r)),
    };
    if depth == 0 && r.one_in(6) {
        format!("{e} + {}", index(r, vars, depth + 1))
    } else {
        e
    }
}

/// Mostly-in-range indices (`v`, `v + small`), sometimes anything.
/// Mostly-in-range indices (`v`, `v + small`), sometimes anything. A
/// clean case gets exactly one hostile index at most, so nothing else in
/// the program fails first and hides what that index does.
fn mostly(r: &mut Rng, st: &Style, vars: &[&str], v: &str) -> String {
    let hostile = if st.clean {
        !st.spent.get() && r.one_in(3)
    } else {
        r.one_in(6)
    };
    if hostile {
        st.spent.set(true);
        index(r, vars, 0)
    } else if !st.clean && r.one_in(6) {
        format!("{v} + {}", r.below(3) as i64 - 1)
    } else {
        v.to_string()
    }
}

/// Loop bounds and boxes: in a clean case they match the arrays exactly,
/// so only the indices are hostile (and an index bug cannot hide behind
/// an ordinary out-of-box access).
struct Style {
    clean: bool,
    /// A clean case's one hostile index is used.
    spent: std::cell::Cell<bool>,
}

impl Style {
    fn pick(&self, r: &mut Rng, clean: &'static str, any: &[&'static str]) -> &'static str {
        if self.clean {
            clean
        } else {
            any[r.below(any.len())]
        }
    }
}

fn lo(r: &mut Rng, st: &Style) -> &'static str {
    st.pick(r, "0", &["0", "0", "0", "1", "-2"])
}

fn statement(r: &mut Rng, st: &Style) -> String {
    match r.below(10) {
        0 | 1 => {
            let vars = ["i", "j"];
            let store = format!(
                "y[{}, {}] = x[{}, {}] + 1.0",
                mostly(r, st, &vars, "i"),
                mostly(r, st, &vars, "j"),
                mostly(r, st, &vars, "i"),
                mostly(r, st, &vars, "j")
            );
            let store = if r.one_in(4) {
                format!(
                    "if {} < {} {{ {store} }}",
                    mostly(r, st, &vars, "i"),
                    constant(r)
                )
            } else {
                store
            };
            format!(
                "for i in {}..{}, j in {}..{} {{\n    {store}\n  }}",
                lo(r, st),
                st.pick(r, "M", &["M", "M", "M - 1", "M + 1"]),
                lo(r, st),
                st.pick(r, "N", &["N", "N", "N + 1"])
            )
        }
        2 => {
            let vars = ["i", "j"];
            let red = r.pick(&["sum", "max", "min"]).to_string();
            let inner = if r.one_in(2) {
                format!(
                    "\n    for j in 0..N {{ y[i, {}] = x[{}, j] - s }}",
                    mostly(r, st, &vars, "j"),
                    mostly(r, st, &vars, "i")
                )
            } else {
                format!("\n    y[{}, 0] = s", mostly(r, st, &["i"], "i"))
            };
            format!(
                "for i in {}..M {{\n    s = {red}(j in {}..{}: x[{}, {}]){inner}\n  }}",
                lo(r, st),
                lo(r, st),
                st.pick(r, "N", &["N", "N - 1", "N + 2"]),
                mostly(r, st, &vars, "i"),
                mostly(r, st, &vars, "j")
            )
        }
        3 => format!(
            "for k in 0..K {{\n    z[{}] = x[{}, {}] * 2.0\n  }}",
            mostly(r, st, &["k"], "ix[k]"),
            mostly(r, st, &["k"], "0"),
            mostly(r, st, &["k"], "k")
        ),
        4 => format!(
            "for p in {}..P {{\n    z[{}] = z[{}] + 1.0\n  }}",
            lo(r, st),
            mostly(r, st, &["p"], "p"),
            mostly(r, st, &["p"], "p")
        ),
        // A column reduction (the reduction walks down the rows).
        7 => {
            let vars = ["i", "j"];
            format!(
                "for j in {}..{} {{\n    y[{}, {}] = {}(i in {}..{}: x[{}, {}])\n  }}",
                lo(r, st),
                st.pick(r, "N", &["N", "N", "N + 1"]),
                mostly(r, st, &["j"], "0"),
                mostly(r, st, &["j"], "j"),
                r.pick(&["sum", "max", "min"]),
                lo(r, st),
                st.pick(r, "M", &["M", "M - 1", "M + 2"]),
                mostly(r, st, &vars, "i"),
                mostly(r, st, &vars, "j")
            )
        }
        // A full reduction (a store outside any nest, split into chunks).
        8 => {
            let vars = ["i", "j"];
            let (outer, inner) = (
                r.pick(&["sum", "max", "min"]),
                r.pick(&["sum", "max", "min"]),
            );
            format!(
                "z[{}] = {outer}(i in {}..{}: {inner}(j in {}..{}: x[{}, {}]))",
                mostly(r, st, &[], "0"),
                lo(r, st),
                st.pick(r, "M", &["M", "M - 1", "M + 2"]),
                lo(r, st),
                st.pick(r, "N", &["N", "N + 1"]),
                mostly(r, st, &vars, "i"),
                mostly(r, st, &vars, "j")
            )
        }
        // An index search (the first or last `j` where a condition
        // holds, else `k`: the CPU runs it on masks), `k` huge at times.
        9 => {
            let vars = ["i", "j"];
            format!(
                "for i in {}..M {{\n    s = {}(j in {}..{}: select(x[{}, {}] > 0.5, j, {}))\n    y[{}, 0] = f32(s)\n  }}",
                lo(r, st),
                r.pick(&["min", "max"]),
                lo(r, st),
                st.pick(r, "N", &["N", "N - 1", "N + 2"]),
                mostly(r, st, &vars, "i"),
                mostly(r, st, &vars, "j"),
                constant(r),
                mostly(r, st, &["i"], "i")
            )
        }
        5 => format!(
            "z[{}] = {}",
            mostly(r, st, &[], "0"),
            r.pick(&["1.0", "x[0, 0]", "f32(K)"])
        ),
        _ => format!(
            "for q in 0..Q {{\n    w[q, {}] = f32(q) + z[{}]\n  }}",
            mostly(r, st, &["q"], "1"),
            mostly(r, st, &["q"], "0")
        ),
    }
}

/// Case `case` of the run seeded with `seed`.
pub fn case(seed: u64, case: u64) -> Case {
    let mut r = Rng::new(seed, case);
    let st = Style {
        clean: r.one_in(2),
        spent: std::cell::Cell::new(false),
    };
    let xbox = st.pick(
        &mut r,
        "M, N",
        &["M, N", "M + 2, N", "-3..M - 3, N", "M, N + 1"],
    );
    let ybox = st.pick(&mut r, "M, N", &["M, N", "M, N", "M + 1, 2..N + 2"]);
    let n = 1 + r.below(2);
    let body: Vec<String> = (0..n)
        .map(|_| format!("  {}", statement(&mut r, &st)))
        .collect();
    let text = format!(
        "program fuzz(x: in f32[{xbox}], ix: in i32[K], y: out f32[{ybox}], z: inout f32[P], w: out f32[Q, 2]) {{\n{}\n}}\n",
        body.join("\n")
    );
    let small = |r: &mut Rng| *r.pick(&[0i64, 1, 1, 2, 3, 5, 8, 17]);
    let mut sizes = BTreeMap::new();
    for s in ["M", "N", "K", "P"] {
        let v = small(&mut r);
        sizes.insert(s.to_string(), v);
    }
    let q = if r.one_in(6) {
        *r.pick(&HUGE)
    } else {
        small(&mut r)
    };
    sizes.insert("Q".to_string(), q);
    Case {
        text,
        sizes,
        fusion: !r.one_in(3),
        data_seed: r.next(),
    }
}

#[cfg(test)]
mod tests {
    use super::case;

    /// The generator reaches every mapping the planner has, column and
    /// full reductions included.
    #[test]
    fn generated_programs_reach_every_mapping() {
        let mut seen = std::collections::BTreeSet::new();
        for k in 0..400 {
            let c = case(7, k);
            let Ok(program) = tile_ir::parse_program(&c.text) else {
                continue;
            };
            if let Ok(plan) = tile_plan::compile(&program, &tile_plan::Options::default()) {
                for kernel in &plan.kernels {
                    seen.insert(kernel.mapping.name());
                }
            }
        }
        for m in [
            "element_grid",
            "row_reduction",
            "column_reduction",
            "full_reduction",
            "serial",
        ] {
            assert!(
                seen.contains(m),
                "no generated program maps as {m}: {seen:?}"
            );
        }
    }
}
