//! One case: the launch checks, then the FP64 interpreter (the oracle) and
//! the CPU back end on the same arrays, compared element by element.
//!
//! Contents are small integers and the programs only add, subtract,
//! double and reduce them, so every result is exact in `f32` and the two
//! must agree bit for bit (up to the sign of zero).

use crate::generate::Case;
use crate::rng::Rng;
use std::collections::BTreeMap;
use tile_ir::{Array, ArrayData, DType, Program, Role, Sizes};

/// How a case ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Parser or verifier refused the program (a generator's slip).
    Invalid,
    /// Refused before any work: integer ranges, sizes or memory.
    Refused,
    /// Both the interpreter and the CPU stopped with an error.
    BothFailed,
    /// Both ran and every written array agrees.
    Agreed,
    /// Too much work for the interpreter; not run.
    Skipped,
    /// The targets disagree (the detail says how).
    Disagreed(String),
}

impl Outcome {
    /// A one-word name for the summary.
    pub fn name(&self) -> &'static str {
        match self {
            Outcome::Invalid => "invalid",
            Outcome::Refused => "refused",
            Outcome::BothFailed => "both_failed",
            Outcome::Agreed => "agreed",
            Outcome::Skipped => "skipped",
            Outcome::Disagreed(_) => "disagreed",
        }
    }
}

/// The arrays given to a run: `x`, `ix` and `z` from the case's sizes
/// (each box evaluated there), filled from the case's data seed.
fn arguments(program: &Program, case: &Case) -> Option<BTreeMap<String, Array>> {
    let boxes = tile_ir::args::boxes(program, &case.sizes).ok()?;
    let mut r = Rng::new(case.data_seed, 0);
    let k = case.sizes["K"];
    let mut out = BTreeMap::new();
    for p in &program.params {
        if p.role == Role::Out {
            continue;
        }
        let shape: Vec<usize> = boxes[&p.name]
            .iter()
            .map(|(lo, hi)| usize::try_from(hi - lo).ok())
            .collect::<Option<_>>()?;
        let n: usize = shape.iter().product();
        let data = match p.dtype {
            DType::I32 => ArrayData::I32(
                (0..n)
                    .map(|_| {
                        if r.one_in(40) {
                            *r.pick(&[i32::MAX, i32::MIN, -1, k as i32 + 2])
                        } else {
                            r.below(k.max(1) as usize) as i32
                        }
                    })
                    .collect(),
            ),
            _ => ArrayData::F32((0..n).map(|_| r.below(9) as f32 - 4.0).collect()),
        };
        out.insert(p.name.clone(), Array::new(shape, data).ok()?);
    }
    Some(out)
}

/// The memory ceiling of a fuzz run: arrays above it are refused, which is
/// one of the paths under test.
pub const MEMORY_CEILING: u64 = 64 << 20;

/// Runs one case (`sanitize`: kernels built with AddressSanitizer).
pub fn run(case: &Case, sanitize: bool) -> Outcome {
    tile_ir::limits::set_memory_ceiling(MEMORY_CEILING);
    let Ok(program) = tile_ir::parse_program(&case.text) else {
        return Outcome::Invalid;
    };
    let options = tile_plan::Options {
        fusion: case.fusion,
    };
    let Ok(plan) = tile_plan::compile(&program, &options) else {
        return Outcome::Invalid;
    };
    let Some(mut arrays) = arguments(&program, case) else {
        return Outcome::Invalid;
    };
    // The launch checks, in the order `tile run` makes them.
    let explicit: Sizes = BTreeMap::from([("Q".to_string(), case.sizes["Q"])]);
    let shapes = arrays
        .iter()
        .map(|(k, a)| (k.clone(), (a.dtype(), a.shape().to_vec())))
        .collect();
    let Ok(sizes) = tile_ir::args::solve_sizes(&program, &shapes, &explicit) else {
        return Outcome::Refused;
    };
    if tile_plan::check_ranges(&plan, &sizes).is_err() {
        return Outcome::Refused;
    }
    let Ok(boxes) = tile_ir::args::boxes(&program, &sizes) else {
        return Outcome::Refused;
    };
    for p in program.params.iter().filter(|p| p.role == Role::Out) {
        let shape: Vec<usize> = boxes[&p.name]
            .iter()
            .map(|(lo, hi)| (hi - lo) as usize)
            .collect();
        match Array::try_zeros(p.dtype, &shape) {
            Ok(a) => arrays.insert(p.name.clone(), a),
            Err(_) => return Outcome::Refused,
        };
    }
    let work: i64 = plan
        .kernels
        .iter()
        .map(|k| k.work_items(&sizes).unwrap_or(i64::MAX))
        .fold(0i64, |a, b| a.saturating_add(b));
    if work > 1 << 20 {
        return Outcome::Skipped;
    }
    let mut oracle = arrays.clone();
    let expected = tile_ir::interp::interpret(&program, &mut oracle, &explicit);
    let opts = tile_cpu::CpuOptions {
        cache: false,
        sanitize,
        ..tile_cpu::CpuOptions::default()
    };
    let module = match tile_cpu::compile(&plan, &opts) {
        Ok(m) => m,
        Err(e) => return Outcome::Disagreed(format!("the CPU back end cannot build it: {e}")),
    };
    let got = module.run(&mut arrays, &explicit);
    match (expected, got) {
        (Err(_), Err(_)) => Outcome::BothFailed,
        (Ok(()), Err(e)) => Outcome::Disagreed(format!("the interpreter ran, the CPU failed: {e}")),
        (Err(e), Ok(())) => {
            Outcome::Disagreed(format!("the interpreter failed ({e}), the CPU ran"))
        }
        (Ok(()), Ok(())) => {
            for p in program.params.iter().filter(|p| p.role.is_written()) {
                let (a, b) = (oracle[&p.name].to_f64(), arrays[&p.name].to_f64());
                if let Some(i) =
                    (0..a.len()).find(|&i| a[i] != b[i] && !(a[i].is_nan() && b[i].is_nan()))
                {
                    return Outcome::Disagreed(format!(
                        "`{}`[{i}]: interpreter {}, CPU {}",
                        p.name, a[i], b[i]
                    ));
                }
            }
            Outcome::Agreed
        }
    }
}
