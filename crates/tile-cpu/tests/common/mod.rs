//! Shared test helpers: deterministic arguments, running a program on the
//! CPU back end and on the FP64 interpreter, and comparing the results.
#![allow(dead_code)]

use std::collections::BTreeMap;
use tile_cpu::{CpuError, CpuModule, CpuOptions};
use tile_ir::{Array, DType, Program, Role, Sizes};

/// `f32` tolerance of the accuracy contract.
pub const ATOL32: f64 = 2e-6;
/// See [`ATOL32`].
pub const RTOL32: f64 = 2e-5;

/// Options for tests: the cache on (shared across runs), two threads so
/// the parallel paths run even on one core.
pub fn opts() -> CpuOptions {
    CpuOptions {
        cache: true,
        threads: Some(2),
        ..CpuOptions::default()
    }
}

/// Plans and compiles `program`.
pub fn build(program: &Program, fusion: bool) -> (tile_plan::Plan, CpuModule) {
    build_with(program, fusion, &opts())
}

/// Plans and compiles `program` with `opts`.
pub fn build_with(
    program: &Program,
    fusion: bool,
    opts: &CpuOptions,
) -> (tile_plan::Plan, CpuModule) {
    let plan = tile_plan::compile(program, &tile_plan::Options { fusion })
        .unwrap_or_else(|e| panic!("{}: plan failed: {e}", program.name));
    let module = tile_cpu::compile(&plan, opts)
        .unwrap_or_else(|e| panic!("{} (fusion {fusion}): compile failed: {e}", program.name));
    (plan, module)
}

/// A deterministic, non-zero value in [-1, 1] for element `k` of stream `seed`.
pub fn value(seed: u64, k: usize) -> f64 {
    let x = ((k as f64 + 1.0) * 0.618_033_988_749_894_9 + seed as f64 * 0.137_155_9).fract();
    let v = x * 2.0 - 1.0 + 1e-3 * (k as f64).sin();
    if v.abs() < 1e-4 {
        0.25
    } else {
        v.clamp(-1.0, 1.0)
    }
}

/// Arguments for `program` at `sizes`: inputs in [-1, 1], outputs with
/// distinct initial content (elements no store writes must keep it).
/// `None` when a box has a negative extent at these sizes.
pub fn arguments(program: &Program, sizes: &Sizes) -> Option<BTreeMap<String, Array>> {
    let boxes = tile_ir::args::boxes(program, sizes).ok()?;
    let mut out = BTreeMap::new();
    for (n, p) in program.params.iter().enumerate() {
        let shape: Vec<usize> = boxes[&p.name]
            .iter()
            .map(|(lo, hi)| usize::try_from(hi - lo).ok())
            .collect::<Option<_>>()?;
        let len: usize = shape.iter().product();
        let seed = n as u64 + if p.role == Role::Out { 100 } else { 0 };
        let vals: Vec<f64> = (0..len)
            .map(|k| match p.dtype {
                DType::I32 => ((k * 7 + n) % 9) as f64 - 4.0,
                DType::Bool => ((k + n) % 3 == 0) as u8 as f64,
                _ => value(seed, k),
            })
            .collect();
        out.insert(p.name.clone(), Array::from_f64(p.dtype, &shape, &vals));
    }
    Some(out)
}

/// Whether `got` matches `want` for an output of `dtype`.
pub fn close(dtype: DType, got: f64, want: f64) -> bool {
    if got.is_nan() || want.is_nan() {
        return got.is_nan() && want.is_nan();
    }
    if got == want {
        return true;
    }
    let (atol, rtol) = match dtype {
        DType::F32 => (ATOL32, RTOL32),
        DType::F64 => (1e-10, 1e-10),
        _ => (0.0, 0.0),
    };
    (got - want).abs() <= atol + rtol * want.abs()
}

/// Runs `program` through `module` and through the interpreter at
/// `sizes`; returns a description of the first mismatch, if any. Both
/// failing counts as agreement.
pub fn compare(
    program: &Program,
    module: &CpuModule,
    sizes: &Sizes,
    what: &str,
) -> Result<(), String> {
    let Some(args) = arguments(program, sizes) else {
        return Ok(());
    };
    let mut want = args.clone();
    let interp = tile_ir::interp::interpret(program, &mut want, sizes);
    let mut got = args;
    let cpu = module.run(&mut got, sizes);
    match (interp, cpu) {
        (
            Err(_),
            Err(CpuError::OutOfBounds { .. } | CpuError::IntArith { .. } | CpuError::Args(_)),
        ) => return Ok(()),
        (Err(e), Ok(())) => {
            return Err(format!("{what}: the interpreter failed ({e}) but cpu ran"))
        }
        (Err(e), Err(c)) => return Err(format!("{what}: interpreter: {e}; cpu: {c}")),
        (Ok(()), Err(e)) => return Err(format!("{what}: cpu failed: {e}")),
        (Ok(()), Ok(())) => {}
    }
    for p in program.params.iter().filter(|p| p.role.is_written()) {
        let (g, w) = (&got[&p.name], &want[&p.name]);
        for k in 0..w.len() {
            let (a, b) = (g.get_f64(k), w.get_f64(k));
            if !close(p.dtype, a, b) {
                return Err(format!(
                    "{what}: `{}`[{k}] (flat) = {a:e}, interpreter {b:e}, sizes {sizes:?}",
                    p.name
                ));
            }
        }
    }
    Ok(())
}

/// `sizes` binding the program's symbols, in order, to `values`.
pub fn sizes_for(program: &Program, values: &[i64]) -> Sizes {
    program
        .size_symbols()
        .iter()
        .zip(values.iter().cycle())
        .map(|(s, v)| (s.clone(), *v))
        .collect()
}
