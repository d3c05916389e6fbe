//! Affine access maps: an index expression as `sum(coeff * name) + constant`.

use std::collections::BTreeMap;
use std::fmt;
use tile_ir::{BinOp, Expr, UnOp};

/// `sum(terms[name] * name) + constant`, over loop variables and size
/// symbols, with integer coefficients. Zero coefficients are never stored.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Default)]
pub struct Affine {
    /// Non-zero coefficients by name.
    pub terms: BTreeMap<String, i64>,
    /// The constant term.
    pub constant: i64,
}

impl Affine {
    /// The affine form of `e`, or `None` when `e` is not affine (a load, a
    /// product of two names, a division, a call, a float, ...).
    pub fn of(e: &Expr) -> Option<Affine> {
        match e {
            Expr::Int(c) => Some(Affine {
                terms: BTreeMap::new(),
                constant: *c,
            }),
            Expr::Var(n) => Some(Affine {
                terms: BTreeMap::from([(n.clone(), 1)]),
                constant: 0,
            }),
            Expr::Unary(UnOp::Neg, a) => Affine::of(a)?.scale(-1),
            Expr::Binary(BinOp::Add, a, b, _) => Affine::of(a)?.add(&Affine::of(b)?, 1),
            Expr::Binary(BinOp::Sub, a, b, _) => Affine::of(a)?.add(&Affine::of(b)?, -1),
            Expr::Binary(BinOp::Mul, a, b, _) => {
                let (x, y) = (Affine::of(a)?, Affine::of(b)?);
                if x.terms.is_empty() {
                    y.scale(x.constant)
                } else if y.terms.is_empty() {
                    x.scale(y.constant)
                } else {
                    None
                }
            }
            _ => None,
        }
    }

    fn scale(mut self, k: i64) -> Option<Affine> {
        for c in self.terms.values_mut() {
            *c = c.checked_mul(k)?;
        }
        self.terms.retain(|_, c| *c != 0);
        self.constant = self.constant.checked_mul(k)?;
        Some(self)
    }

    fn add(mut self, o: &Affine, sign: i64) -> Option<Affine> {
        for (n, c) in &o.terms {
            let e = self.terms.entry(n.clone()).or_insert(0);
            *e = e.checked_add(c.checked_mul(sign)?)?;
        }
        self.terms.retain(|_, c| *c != 0);
        self.constant = self.constant.checked_add(o.constant.checked_mul(sign)?)?;
        Some(self)
    }

    /// The coefficient of `name` (0 when absent).
    pub fn coeff(&self, name: &str) -> i64 {
        self.terms.get(name).copied().unwrap_or(0)
    }

    /// True when the form mentions only names in `allowed`.
    pub fn only_uses(&self, allowed: &dyn Fn(&str) -> bool) -> bool {
        self.terms.keys().all(|n| allowed(n))
    }
}

impl fmt::Display for Affine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut first = true;
        for (n, c) in &self.terms {
            let (sign, mag) = if *c < 0 { ("-", -c) } else { ("+", *c) };
            if first {
                if *c < 0 {
                    f.write_str("-")?;
                }
            } else {
                write!(f, " {sign} ")?;
            }
            if mag == 1 {
                write!(f, "{n}")?;
            } else {
                write!(f, "{mag}*{n}")?;
            }
            first = false;
        }
        if first {
            write!(f, "{}", self.constant)
        } else if self.constant > 0 {
            write!(f, " + {}", self.constant)
        } else if self.constant < 0 {
            write!(f, " - {}", -self.constant)
        } else {
            Ok(())
        }
    }
}

/// Whether `buf[idx]` may be read or written four elements at a time
/// with 16-byte accesses when `var` moves by four: `param` (the accessed
/// buffer) is `f32` and `idx`'s last index is affine with coefficient 1 in
/// `var`. Returns that index's affine form and the outer indices; each
/// caller adds what must be fixed over its loop.
pub fn unit_stride<'i>(
    param: &tile_ir::Param,
    var: &str,
    idx: &'i [Expr],
) -> Option<(Affine, &'i [Expr])> {
    if param.dtype != tile_ir::DType::F32 || param.dims.len() != idx.len() {
        return None;
    }
    let (last, rest) = idx.split_last()?;
    let a = Affine::of(last)?;
    (a.coeff(var) == 1).then_some((a, rest))
}

/// True when the integer map `vars -> (rows...)` given by `rows` (one affine
/// form per buffer dimension) is injective over the integers: its
/// coefficient matrix restricted to `vars` has full column rank. Terms in
/// other names (size symbols) are constant over the domain.
pub fn is_injective(rows: &[Affine], vars: &[String]) -> bool {
    let mut m: Vec<Vec<i128>> = rows
        .iter()
        .map(|r| vars.iter().map(|v| r.coeff(v) as i128).collect())
        .collect();
    rank(&mut m) == vars.len()
}

/// A loop variable's range `lo..hi` (exclusive), its bounds affine in size
/// symbols.
pub struct Range<'a> {
    /// The variable.
    pub name: &'a str,
    /// The first value.
    pub lo: Affine,
    /// One past the last value.
    pub hi: Affine,
}

/// True when index `a` at one iteration can never equal index `b` at any
/// iteration (the same or another) of a nest over `domain`: either a
/// divisibility argument (`2*k` and `2*k + 1`: with the same size-symbol
/// terms, the constants differ by an amount no integer combination of
/// the variables' coefficients makes up) or the ranges of the two over
/// the domain are apart by a constant (`k` and `k + H` with `k` in
/// `0..H`; `0` and `1`). Any name that is neither a domain variable nor
/// shared alike by both forms (a size symbol) makes the answer `false`,
/// as does a domain bound that mentions a domain variable.
pub fn never_equal(a: &Affine, b: &Affine, domain: &[Range<'_>]) -> bool {
    let is_var = |n: &str| domain.iter().any(|r| r.name == n);
    if domain.iter().any(|r| {
        r.lo.terms
            .keys()
            .chain(r.hi.terms.keys())
            .any(|n| is_var(n))
    }) {
        return false;
    }
    let symbols = |f: &Affine| -> BTreeMap<String, i64> {
        f.terms
            .iter()
            .filter(|(n, _)| !is_var(n))
            .map(|(n, c)| (n.clone(), *c))
            .collect()
    };
    // Divisibility: a(v) - b(w) = sum of coefficients times integers +
    // (a.constant - b.constant) when the symbol terms cancel.
    if symbols(a) == symbols(b) {
        let g = a
            .terms
            .iter()
            .chain(&b.terms)
            .filter(|(n, _)| is_var(n))
            .fold(0i128, |g, (_, &c)| gcd(g, (c as i128).abs()));
        let k = a.constant as i128 - b.constant as i128;
        if (g == 0 && k != 0) || (g > 1 && k % g != 0) {
            return true;
        }
    }
    // Ranges: the lowest value of one above the highest of the other by a
    // constant.
    match (
        bound(a, domain, false),
        bound(a, domain, true),
        bound(b, domain, false),
        bound(b, domain, true),
    ) {
        (Some(alo), Some(ahi), Some(blo), Some(bhi)) => {
            let above = |lo: &Affine, hi: &Affine| {
                lo.clone()
                    .add(hi, -1)
                    .is_some_and(|d| d.terms.is_empty() && d.constant > 0)
            };
            above(&blo, &ahi) || above(&alo, &bhi)
        }
        _ => false,
    }
}

/// The least (`high` false) or greatest value of `f` over `domain`, as an
/// affine form in the other names: each variable at `lo` or `hi - 1` by
/// the sign of its coefficient.
fn bound(f: &Affine, domain: &[Range<'_>], high: bool) -> Option<Affine> {
    let mut out = Affine {
        terms: BTreeMap::new(),
        constant: f.constant,
    };
    for (n, &c) in &f.terms {
        match domain.iter().find(|r| r.name == n) {
            Some(r) => {
                let at = if (c > 0) == high {
                    r.hi.clone().add(&Affine::of(&Expr::Int(1))?, -1)?
                } else {
                    r.lo.clone()
                };
                out = out.add(&at.scale(c)?, 1)?;
            }
            None => {
                out = out.add(
                    &Affine {
                        terms: BTreeMap::from([(n.clone(), c)]),
                        constant: 0,
                    },
                    1,
                )?;
            }
        }
    }
    Some(out)
}

/// Rank of an integer matrix by fraction-free elimination.
fn rank(m: &mut [Vec<i128>]) -> usize {
    let cols = m.first().map_or(0, |r| r.len());
    let mut r = 0;
    for c in 0..cols {
        let Some(p) = (r..m.len()).find(|&i| m[i][c] != 0) else {
            continue;
        };
        m.swap(r, p);
        for i in 0..m.len() {
            if i != r && m[i][c] != 0 {
                let (a, b) = (m[r][c], m[i][c]);
                let pivot = m[r].clone();
                for (x, p) in m[i].iter_mut().zip(&pivot) {
                    *x = *x * a - p * b;
                }
                let g = m[i].iter().fold(0i128, |g, &x| gcd(g, x.abs()));
                if g > 1 {
                    m[i].iter_mut().for_each(|x| *x /= g);
                }
            }
        }
        r += 1;
    }
    r
}

fn gcd(a: i128, b: i128) -> i128 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tile_ir::builder::{int, v};

    fn vars(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn forms() {
        let e = (v("i") + int(2)) * int(3) - v("N");
        assert_eq!(Affine::of(&e).unwrap().to_string(), "-N + 3*i + 6");
        assert!(Affine::of(&(v("i") * v("j"))).is_none());
    }

    #[test]
    fn disjoint_indices() {
        let f = |e: tile_ir::Expr| Affine::of(&e).unwrap();
        let k = |lo: tile_ir::Expr, hi: tile_ir::Expr| {
            vec![Range {
                name: "k",
                lo: f(lo),
                hi: f(hi),
            }]
        };
        let d = k(int(0), v("H"));
        // Constants apart; parity; ranges apart by the bound.
        assert!(never_equal(&f(int(0)), &f(int(1)), &d));
        assert!(never_equal(
            &f(v("k") * int(2)),
            &f(v("k") * int(2) + int(1)),
            &d
        ));
        assert!(never_equal(&f(v("k")), &f(v("k") + v("H")), &d));
        assert!(never_equal(&f(v("k") + v("H")), &f(v("k")), &d));
        // Overlapping: the same index, a shift by less than the range, a
        // shift by a symbol the range does not bound, parities that meet.
        assert!(!never_equal(&f(v("k")), &f(v("k")), &d));
        assert!(!never_equal(&f(v("k")), &f(v("k") + int(1)), &d));
        assert!(!never_equal(&f(v("k")), &f(v("k") + v("N")), &d));
        assert!(!never_equal(
            &f(v("k") * int(2)),
            &f(v("k") * int(4) + int(2)),
            &d
        ));
        assert!(!never_equal(
            &f(v("k") + v("H")),
            &f(v("k")),
            &k(int(0), v("H") + int(1))
        ));
        // A bound in a domain variable: no answer.
        let tri = vec![
            Range {
                name: "i",
                lo: f(int(0)),
                hi: f(v("N")),
            },
            Range {
                name: "k",
                lo: f(int(0)),
                hi: f(v("i")),
            },
        ];
        assert!(!never_equal(&f(v("k")), &f(v("k") + v("N")), &tri));
    }

    #[test]
    fn injectivity() {
        let f = |es: Vec<tile_ir::Expr>| {
            es.iter()
                .map(|e| Affine::of(e).unwrap())
                .collect::<Vec<_>>()
        };
        let ij = vars(&["i", "j"]);
        assert!(is_injective(&f(vec![v("j"), v("i")]), &ij));
        assert!(is_injective(
            &f(vec![v("i") + v("j"), v("i") - v("j")]),
            &ij
        ));
        assert!(!is_injective(&f(vec![v("i") + v("j")]), &ij));
        assert!(!is_injective(&f(vec![int(0), v("j")]), &ij));
        assert!(is_injective(
            &f(vec![v("i") * int(2) + v("N")]),
            &vars(&["i"])
        ));
    }
}
