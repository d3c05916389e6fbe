//! Launch arguments: binding size symbols from shapes and checking every
//! argument before any work starts. Shared by the interpreter and every
//! back end's runtime.

use crate::{Array, DType, Expr, Program};
use std::collections::BTreeMap;

/// Values of a program's size symbols.
pub type Sizes = BTreeMap<String, i64>;

/// Why a set of arguments cannot be used for a program.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum ArgError {
    /// A parameter has no argument.
    #[error("missing argument for parameter `{0}`")]
    Missing(String),
    /// An argument names no parameter.
    #[error("argument `{0}` does not name a parameter of the program")]
    Unknown(String),
    /// Wrong element type.
    #[error("argument `{name}` has dtype {found}, but the parameter is {expected}")]
    DType {
        /// The parameter.
        name: String,
        /// Its declared dtype.
        expected: DType,
        /// The argument's dtype.
        found: DType,
    },
    /// Wrong number of dimensions.
    #[error("argument `{name}` has {found} dimensions, but the parameter has {expected}")]
    Rank {
        /// The parameter.
        name: String,
        /// Its declared rank.
        expected: usize,
        /// The argument's rank.
        found: usize,
    },
    /// A dimension does not match the box under the bound sizes.
    #[error("argument `{name}` has shape {found:?}, but its box needs {expected:?} ({sizes})")]
    Shape {
        /// The parameter.
        name: String,
        /// The shape the box gives.
        expected: Vec<i64>,
        /// The argument's shape.
        found: Vec<usize>,
        /// The bound sizes, for the message.
        sizes: String,
    },
    /// No argument shape determines a size symbol.
    #[error("size symbol `{0}` is not determined by any argument's shape; bind it explicitly (--bind {0}=...)")]
    Unbound(String),
    /// A box expression cannot be evaluated (division by zero, overflow).
    #[error("cannot evaluate the box of `{0}`")]
    BadBox(String),
    /// Two buffers overlap in memory.
    #[error("buffers `{0}` and `{1}` overlap in memory, and at least one is written")]
    Overlap(String, String),
    /// An argument in caller-owned memory is unusable (size, alignment,
    /// null pointer, given twice).
    #[error("argument `{name}`: {reason}")]
    Raw {
        /// The argument.
        name: String,
        /// What is wrong with it.
        reason: String,
    },
}

/// An argument in caller-owned memory (host or device), as a runtime
/// receives it from a foreign caller: nothing about it is trusted beyond
/// what [`bind_raw`] checks.
#[derive(Clone, Debug)]
pub struct RawArg {
    /// The parameter it binds.
    pub name: String,
    /// Its element type.
    pub dtype: DType,
    /// Its shape (row-major, compact).
    pub shape: Vec<usize>,
    /// The address of the first element.
    pub addr: u64,
    /// The size of the memory at `addr`, in bytes.
    pub bytes: usize,
}

/// Evaluates an integer expression over size symbols (and, with `extra`,
/// other integer names); `None` for unknown names or arithmetic errors.
pub fn eval_int(e: &Expr, sizes: &Sizes) -> Option<i64> {
    use crate::{BinOp, UnOp};
    match e {
        Expr::Int(v) => Some(*v),
        Expr::Var(n) => sizes.get(n).copied(),
        Expr::Unary(UnOp::Neg, a) => eval_int(a, sizes)?.checked_neg(),
        Expr::Binary(op, a, b, _) => {
            let (x, y) = (eval_int(a, sizes)?, eval_int(b, sizes)?);
            match op {
                BinOp::Add => x.checked_add(y),
                BinOp::Sub => x.checked_sub(y),
                BinOp::Mul => x.checked_mul(y),
                BinOp::Div => x.checked_div(y),
                BinOp::Rem => x.checked_rem(y),
                _ => None,
            }
        }
        _ => None,
    }
}

/// The box of every parameter as `(lo, hi)` per dimension.
pub fn boxes(
    program: &Program,
    sizes: &Sizes,
) -> Result<BTreeMap<String, Vec<(i64, i64)>>, ArgError> {
    let mut out = BTreeMap::new();
    for p in &program.params {
        let mut dims = Vec::new();
        for d in &p.dims {
            let lo = eval_int(&d.lo, sizes).ok_or_else(|| ArgError::BadBox(p.name.clone()))?;
            let hi = eval_int(&d.hi, sizes).ok_or_else(|| ArgError::BadBox(p.name.clone()))?;
            dims.push((lo, hi));
        }
        out.insert(p.name.clone(), dims);
    }
    Ok(out)
}

/// Binds every size symbol from the argument shapes (and `explicit`), then
/// checks every argument: present, known, dtype, rank and shape.
pub fn bind_arguments(
    program: &Program,
    shapes: &BTreeMap<String, (DType, Vec<usize>)>,
    explicit: &Sizes,
) -> Result<Sizes, ArgError> {
    for name in shapes.keys() {
        if program.param(name).is_none() {
            return Err(ArgError::Unknown(name.clone()));
        }
    }
    for p in &program.params {
        let (dtype, shape) = shapes
            .get(&p.name)
            .ok_or_else(|| ArgError::Missing(p.name.clone()))?;
        if *dtype != p.dtype {
            return Err(ArgError::DType {
                name: p.name.clone(),
                expected: p.dtype,
                found: *dtype,
            });
        }
        if shape.len() != p.dims.len() {
            return Err(ArgError::Rank {
                name: p.name.clone(),
                expected: p.dims.len(),
                found: shape.len(),
            });
        }
    }
    let (sizes, origin) = solve_traced(program, shapes, explicit)?;
    let bx = boxes(program, &sizes)?;
    let shown = || {
        sizes
            .iter()
            .map(|(k, v)| match origin.get(k) {
                Some(from) => format!("{k}={v} from the shape of `{from}`"),
                None => format!("{k}={v} from --bind"),
            })
            .collect::<Vec<_>>()
            .join(", ")
    };
    for p in &program.params {
        let shape = &shapes[&p.name].1;
        let expected: Vec<i64> = bx[&p.name]
            .iter()
            .map(|(lo, hi)| hi.saturating_sub(*lo))
            .collect();
        if expected
            .iter()
            .zip(shape)
            .any(|(e, &n)| *e as i128 != n as i128)
        {
            return Err(ArgError::Shape {
                name: p.name.clone(),
                expected,
                found: shape.clone(),
                sizes: shown(),
            });
        }
    }
    Ok(sizes)
}

/// Solves the size symbols from the shapes given (any subset of the
/// parameters, of the right rank) and `explicit`; every symbol must end up
/// bound.
pub fn solve_sizes(
    program: &Program,
    shapes: &BTreeMap<String, (DType, Vec<usize>)>,
    explicit: &Sizes,
) -> Result<Sizes, ArgError> {
    solve_traced(program, shapes, explicit).map(|(s, _)| s)
}

/// [`solve_sizes`], also naming the argument each symbol was solved from
/// (symbols given explicitly have no entry).
fn solve_traced(
    program: &Program,
    shapes: &BTreeMap<String, (DType, Vec<usize>)>,
    explicit: &Sizes,
) -> Result<(Sizes, BTreeMap<String, String>), ArgError> {
    let mut sizes: Sizes = explicit.clone();
    let mut origin = BTreeMap::new();
    let symbols = program.size_symbols();
    // Solve one unknown at a time from extents that are affine in it.
    loop {
        let mut progress = false;
        for p in &program.params {
            let Some((_, shape)) = shapes.get(&p.name) else {
                continue;
            };
            for (d, &n) in p.dims.iter().zip(shape) {
                let extent = Expr::binary(crate::BinOp::Sub, d.hi.clone(), d.lo.clone());
                let mut free = Vec::new();
                extent.free_vars(&mut free);
                free.retain(|s| !sizes.contains_key(s));
                if free.len() != 1 {
                    continue;
                }
                let s = &free[0];
                let at = |v: i64| {
                    let mut t = sizes.clone();
                    t.insert(s.clone(), v);
                    eval_int(&extent, &t)
                };
                let (Some(f0), Some(f1)) = (at(0), at(1)) else {
                    continue;
                };
                // extent = f0 + a * s; solved in i128 so no step wraps.
                let (f0, a, n) = (f0 as i128, f1 as i128 - f0 as i128, n as i128);
                if a != 0 && (n - f0) % a == 0 {
                    let Ok(v) = i64::try_from((n - f0) / a) else {
                        continue;
                    };
                    if at(v).map(|e| e as i128) == Some(n) {
                        origin.insert(s.clone(), p.name.clone());
                        sizes.insert(s.clone(), v);
                        progress = true;
                    }
                }
            }
        }
        if !progress {
            break;
        }
    }
    if let Some(s) = symbols.iter().find(|s| !sizes.contains_key(*s)) {
        return Err(ArgError::Unbound(s.clone()));
    }
    Ok((sizes, origin))
}

/// [`bind_arguments`] for a set of host arrays.
pub fn bind_arrays(
    program: &Program,
    arrays: &BTreeMap<String, Array>,
    explicit: &Sizes,
) -> Result<Sizes, ArgError> {
    let shapes = arrays
        .iter()
        .map(|(k, a)| (k.clone(), (a.dtype(), a.shape().to_vec())))
        .collect();
    bind_arguments(program, &shapes, explicit)
}

/// Checks arguments in caller-owned memory and binds the size symbols:
/// each parameter given once, then [`bind_arguments`] (names, dtypes,
/// ranks, shapes), then per argument its size in bytes against its shape,
/// a null address, alignment to its element size, and overlap: no written
/// parameter's memory may overlap another argument's.
pub fn bind_raw(program: &Program, args: &[RawArg], explicit: &Sizes) -> Result<Sizes, ArgError> {
    let raw = |a: &RawArg, reason: String| ArgError::Raw {
        name: a.name.clone(),
        reason,
    };
    let mut shapes = BTreeMap::new();
    for a in args {
        if shapes
            .insert(a.name.clone(), (a.dtype, a.shape.clone()))
            .is_some()
        {
            return Err(raw(a, "is given twice".to_string()));
        }
    }
    let sizes = bind_arguments(program, &shapes, explicit)?;
    check_raw_memory(program, args)?;
    Ok(sizes)
}

/// The memory checks of [`bind_raw`] (for arguments already bound): size
/// in bytes against the shape, null, alignment, a range that wraps, and
/// overlap of a written parameter with any other argument.
pub fn check_raw_memory(program: &Program, args: &[RawArg]) -> Result<(), ArgError> {
    let raw = |a: &RawArg, reason: String| ArgError::Raw {
        name: a.name.clone(),
        reason,
    };
    for a in args {
        let need = a
            .shape
            .iter()
            .try_fold(a.dtype.size_bytes(), |acc, &n| acc.checked_mul(n));
        if need != Some(a.bytes) {
            return Err(raw(
                a,
                format!(
                    "{} bytes given, but shape {:?} of {} needs {}",
                    a.bytes,
                    a.shape,
                    a.dtype,
                    need.map_or("more than memory holds".to_string(), |n| n.to_string())
                ),
            ));
        }
        if a.bytes > 0 && a.addr == 0 {
            return Err(raw(a, "null pointer".to_string()));
        }
        if a.addr % a.dtype.size_bytes() as u64 != 0 {
            return Err(raw(
                a,
                format!("address not aligned to {} bytes", a.dtype.size_bytes()),
            ));
        }
        if a.addr.checked_add(a.bytes as u64).is_none() {
            return Err(raw(a, "memory range wraps the address space".to_string()));
        }
    }
    let written = |n: &str| program.param(n).is_some_and(|p| p.role.is_written());
    for (i, a) in args.iter().enumerate() {
        for b in &args[i + 1..] {
            if !(written(&a.name) || written(&b.name)) || a.bytes == 0 || b.bytes == 0 {
                continue;
            }
            let (a0, b0) = (a.addr, b.addr);
            if a0 < b0 + b.bytes as u64 && b0 < a0 + a.bytes as u64 {
                return Err(ArgError::Overlap(a.name.clone(), b.name.clone()));
            }
        }
    }
    Ok(())
}

/// What decides a raw argument's binding: its name, dtype and shape.
type Signature = (String, DType, Vec<usize>);

/// The last binding of arguments (raw or arrays), remembered: arguments
/// with the same names, dtypes and shapes as the last call's, under the
/// same explicit sizes, bind the same sizes (the binding depends on
/// nothing else), so a runtime's repeated calls check only raw arguments'
/// memory again.
#[derive(Debug, Default)]
pub struct RawBinding {
    /// The arguments' signatures, the explicit sizes, and the binding.
    last: std::sync::Mutex<Option<(Vec<Signature>, Sizes, Sizes)>>,
}

impl RawBinding {
    /// [`bind_raw`], or the remembered sizes and [`check_raw_memory`].
    pub fn bind(
        &self,
        program: &Program,
        args: &[RawArg],
        explicit: &Sizes,
    ) -> Result<Sizes, ArgError> {
        let sig = || {
            args.iter()
                .map(|a| (a.name.as_str(), a.dtype, a.shape.as_slice()))
        };
        if let Some(sizes) = self.recall(explicit, args.len(), sig()) {
            check_raw_memory(program, args)?;
            return Ok(sizes);
        }
        let sizes = bind_raw(program, args, explicit)?;
        self.remember(explicit, sig(), &sizes);
        Ok(sizes)
    }

    /// [`bind_arrays`], or the remembered sizes when the arrays have the
    /// last call's names, dtypes and shapes (an [`Array`]'s memory always
    /// matches its shape, so nothing else needs checking again).
    pub fn bind_arrays(
        &self,
        program: &Program,
        arrays: &BTreeMap<String, Array>,
        explicit: &Sizes,
    ) -> Result<Sizes, ArgError> {
        let sig = || {
            arrays
                .iter()
                .map(|(n, a)| (n.as_str(), a.dtype(), a.shape()))
        };
        if let Some(sizes) = self.recall(explicit, arrays.len(), sig()) {
            return Ok(sizes);
        }
        let sizes = bind_arrays(program, arrays, explicit)?;
        self.remember(explicit, sig(), &sizes);
        Ok(sizes)
    }

    /// The remembered sizes, when `count` arguments with signatures `sig`
    /// and the explicit sizes are the last successful call's.
    fn recall<'a>(
        &self,
        explicit: &Sizes,
        count: usize,
        mut sig: impl Iterator<Item = (&'a str, DType, &'a [usize])>,
    ) -> Option<Sizes> {
        let last = self.last.lock().ok()?;
        let (known, given, sizes) = last.as_ref()?;
        let same = given == explicit
            && known.len() == count
            && known.iter().all(|(n, d, s)| {
                sig.next()
                    .is_some_and(|(n2, d2, s2)| n == n2 && *d == d2 && s.as_slice() == s2)
            });
        same.then(|| sizes.clone())
    }

    /// Keeps a successful binding.
    fn remember<'a>(
        &self,
        explicit: &Sizes,
        sig: impl Iterator<Item = (&'a str, DType, &'a [usize])>,
        sizes: &Sizes,
    ) {
        if let Ok(mut last) = self.last.lock() {
            let sig = sig
                .map(|(n, d, s)| (n.to_string(), d, s.to_vec()))
                .collect();
            *last = Some((sig, explicit.clone(), sizes.clone()));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A remembered binding is reused only for the same names, dtypes and
    /// shapes; anything else is checked again.
    #[test]
    fn remembered_bindings_follow_the_arguments() {
        let p = crate::parse_program(
            "program p(a: in f32[M, N], y: out f32[M]) { for i in 0..M { y[i] = a[i, 0] } }",
        )
        .unwrap();
        let b = RawBinding::default();
        let args = |m: usize, n: usize, t: DType| {
            BTreeMap::from([
                ("a".to_string(), Array::zeros(t, &[m, n])),
                ("y".to_string(), Array::zeros(DType::F32, &[m])),
            ])
        };
        let none = Sizes::new();
        for _ in 0..2 {
            let s = b.bind_arrays(&p, &args(3, 5, DType::F32), &none).unwrap();
            assert_eq!((s["M"], s["N"]), (3, 5));
        }
        let s = b.bind_arrays(&p, &args(4, 2, DType::F32), &none).unwrap();
        assert_eq!((s["M"], s["N"]), (4, 2));
        assert!(b.bind_arrays(&p, &args(4, 2, DType::F64), &none).is_err());
        let mut bad = args(4, 2, DType::F32);
        bad.insert("y".to_string(), Array::zeros(DType::F32, &[3]));
        assert!(b.bind_arrays(&p, &bad, &none).is_err());
        bad.remove("y");
        assert!(b.bind_arrays(&p, &bad, &none).is_err());
        // Explicit sizes are part of what is remembered.
        let m4 = Sizes::from([("M".to_string(), 4)]);
        let m9 = Sizes::from([("M".to_string(), 9)]);
        for _ in 0..2 {
            assert!(b.bind_arrays(&p, &args(4, 2, DType::F32), &m4).is_ok());
        }
        assert!(b.bind_arrays(&p, &args(4, 2, DType::F32), &m9).is_err());
    }
}
