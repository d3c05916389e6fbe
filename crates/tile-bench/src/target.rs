//! Tile's side of a case: compile the variant fresh (no cache), allocate
//! and fill arguments, and expose an [`Invoker`] for the protocol.

use crate::protocol::Invoker;
use crate::run::validation_record;
use crate::suite::Case;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use tile_ir::{Array, ArrayData, Sizes};
use tile_plan::{Mapping, Options, Plan};

/// Tile's variants.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Variant {
    /// The automatic planner.
    Fused,
    /// The element grid requested explicitly (must equal `Fused`).
    Reference,
    /// Fusion off: the control.
    Split,
    /// A Tile-compiled copy of a plane of `f32` that reads and writes as
    /// many bytes as the case's program (half of them each way): the floor
    /// a kernel moving those bytes could reach, measured in the same run.
    Copy,
}

impl Variant {
    /// The name in results.
    pub fn name(self) -> &'static str {
        match self {
            Variant::Fused => "fused",
            Variant::Reference => "reference",
            Variant::Split => "split",
            Variant::Copy => "copy",
        }
    }

    /// Parses a variant name.
    pub fn parse(s: &str) -> Option<Variant> {
        [
            Variant::Fused,
            Variant::Reference,
            Variant::Split,
            Variant::Copy,
        ]
        .into_iter()
        .find(|v| v.name() == s)
    }
}

/// A compiled variant with its arguments, ready to time.
pub struct Prepared {
    /// Invokes the kernels on the prepared arguments.
    pub invoker: Box<dyn PreparedRun>,
    /// The realised plan: mappings, kernel count, and target details.
    pub plan: Value,
    /// Generated sources: (sha256, extension, text).
    pub sources: Vec<(String, String, String)>,
    /// Compiler and runtime identity.
    pub artifacts: Value,
}

/// An invoker that can also hand back its outputs and inputs.
pub trait PreparedRun: Invoker {
    /// Output arrays by name (after at least one invocation).
    fn outputs(&mut self) -> Result<Vec<(String, Vec<f32>)>, String>;
    /// The input arrays in parameter order.
    fn inputs(&self) -> Vec<Vec<f32>>;
}

impl Prepared {
    /// Runs once and validates every output against the FP64 oracle.
    pub fn validate(&mut self, case: &Case) -> Result<Value, String> {
        self.invoker.invoke()?;
        self.invoker.sync()?;
        let outs = self.invoker.outputs()?;
        validation_record(case, &outs, &self.invoker.inputs())
    }
}

/// The data of the named arrays as `f32` (`i32` arrays converted, exact
/// below 2^24; an error for another dtype).
pub fn f32_arrays(
    arrays: &BTreeMap<String, Array>,
    names: &[String],
) -> Result<Vec<(String, Vec<f32>)>, String> {
    names
        .iter()
        .map(|n| match arrays.get(n).map(|a| a.data()) {
            Some(ArrayData::F32(v)) => Ok((n.clone(), v.clone())),
            Some(ArrayData::I32(v)) => Ok((n.clone(), v.iter().map(|&x| x as f32).collect())),
            _ => Err(format!("`{n}` is not an f32 array")),
        })
        .collect()
}

/// The values of the named arrays, in order (none where one is not `f32`
/// or `i32`).
pub fn f32_values(arrays: &BTreeMap<String, Array>, names: &[String]) -> Vec<Vec<f32>> {
    f32_arrays(arrays, names)
        .map(|v| v.into_iter().map(|(_, d)| d).collect())
        .unwrap_or_default()
}

/// Plans a case's program for a variant.
pub fn plan_variant(case: &Case, variant: Variant) -> Result<Plan, String> {
    let program =
        tile_ir::parse_program(&case.program).map_err(|e| format!("{}: {e}", case.graph))?;
    let fusion = variant != Variant::Split;
    let plan = tile_plan::compile(&program, &Options { fusion })
        .map_err(|e| format!("{}: {e}", case.graph))?;
    if variant == Variant::Reference {
        if let Some(k) = plan
            .kernels
            .iter()
            .find(|k| k.mapping != Mapping::ElementGrid)
        {
            return Err(format!(
                "{}: the element grid was requested, but kernel {} is {}: {:?}",
                case.graph,
                k.name,
                k.mapping.name(),
                plan.fallbacks
            ));
        }
    }
    Ok(plan)
}

/// Arguments for a case: inputs and `inout` parameters from the benchmark
/// formula (parameter `p` uses seed `p`; `i32` ones
/// [`crate::oracle::int_input`]), `out` parameters poisoned (NaN, or
/// `i32::MIN`) so that an element the program writes but no kernel did
/// fails validation.
pub fn arguments(plan: &Plan, case: &Case) -> Result<(BTreeMap<String, Array>, Sizes), String> {
    let program = &plan.program;
    let (sizes, shapes) = case_shapes(program, case)?;
    let mut arrays = BTreeMap::new();
    for (k, p) in program.params.iter().enumerate() {
        let shape = &shapes[&p.name];
        let n: usize = shape.iter().product();
        let written = p.role == tile_ir::Role::Out;
        let data = match p.dtype {
            tile_ir::DType::F32 if written => ArrayData::F32(vec![f32::NAN; n]),
            tile_ir::DType::F32 => {
                ArrayData::F32((0..n).map(|i| crate::oracle::input(i, k)).collect())
            }
            tile_ir::DType::I32 if written => ArrayData::I32(vec![i32::MIN; n]),
            tile_ir::DType::I32 => {
                ArrayData::I32((0..n).map(|i| crate::oracle::int_input(i, k)).collect())
            }
            other => {
                return Err(format!(
                    "{}: `{}` is {other}; benchmarks take f32 and i32 parameters",
                    case.graph, p.name
                ))
            }
        };
        let array = Array::new(shape.clone(), data).map_err(|e| e.to_string())?;
        arrays.insert(p.name.clone(), array);
    }
    Ok((arrays, sizes))
}

/// The case's sizes (`M` and `N` from its shape, for the symbols the
/// program has) and every parameter's shape, from its box.
pub fn case_shapes(
    program: &tile_ir::Program,
    case: &Case,
) -> Result<(Sizes, BTreeMap<String, Vec<usize>>), String> {
    let symbols = program.size_symbols();
    if let Some(k) = case
        .sizes
        .keys()
        .find(|k| *k == "M" || *k == "N" || !symbols.contains(k))
    {
        return Err(format!(
            "{}: `sizes` gives `{k}`, which is {}",
            case.graph,
            if k == "M" || k == "N" {
                "the case's shape's to give"
            } else {
                "not a size symbol of the program"
            }
        ));
    }
    let mut sizes = Sizes::new();
    let given = [("M", case.shape[0]), ("N", case.shape[1])]
        .into_iter()
        .chain(case.sizes.iter().map(|(k, v)| (k.as_str(), *v)));
    for (name, n) in given {
        if symbols.iter().any(|s| s == name) {
            let n = i64::try_from(n).map_err(|_| format!("size {name}={n} is too large"))?;
            sizes.insert(name.to_string(), n);
        }
    }
    if let Some(other) = symbols.iter().find(|s| !sizes.contains_key(*s)) {
        return Err(format!(
            "{}: size `{other}` is not given: a case's shape gives M and N, the suite's `sizes` (or --bind) the others",
            case.graph
        ));
    }
    let boxes = tile_ir::args::boxes(program, &sizes).map_err(|e| e.to_string())?;
    let mut shapes = BTreeMap::new();
    for (name, dims) in boxes {
        let shape = dims
            .iter()
            .map(|(lo, hi)| {
                hi.checked_sub(*lo)
                    .and_then(|n| usize::try_from(n).ok())
                    .ok_or_else(|| format!("`{name}` has a negative extent ({lo}..{hi})"))
            })
            .collect::<Result<Vec<_>, _>>()?;
        shapes.insert(name, shape);
    }
    Ok((sizes, shapes))
}

/// The realised plan record of a plan.
pub fn plan_record(plan: &Plan, extra: Value) -> Value {
    json!({
        "mappings": plan.kernels.iter().map(|k| k.mapping.name()).collect::<Vec<_>>(),
        "kernels": plan.kernels.len(),
        "fallbacks": plan.fallbacks.iter().map(|f| f.rule.name()).collect::<Vec<_>>(),
        "target": extra,
    })
}

/// The copy program of the [`Variant::Copy`] entry.
pub const COPY_PROGRAM: &str =
    "program copy(x: in f32[N], y: out f32[N]) {\n  for i in 0..N {\n    y[i] = x[i]\n  }\n}\n";

/// Bytes a case's program moves: every parameter read or written once
/// (inputs read, outputs written, both for `inout`), in `f32`.
pub fn moved_bytes(case: &Case) -> Result<u64, String> {
    let program =
        tile_ir::parse_program(&case.program).map_err(|e| format!("{}: {e}", case.graph))?;
    let (_, shapes) = case_shapes(&program, case)?;
    let mut total: u64 = 0;
    for p in &program.params {
        let n = shapes[&p.name]
            .iter()
            .try_fold(1u64, |a, &d| a.checked_mul(d as u64))
            .ok_or("the case's byte count overflows")?;
        let each = if p.role == tile_ir::Role::InOut { 8 } else { 4 };
        total = n
            .checked_mul(each)
            .and_then(|b| total.checked_add(b))
            .ok_or("the case's byte count overflows")?;
    }
    Ok(total)
}

/// The case [`Variant::Copy`] runs for `case`: [`COPY_PROGRAM`] over
/// `ceil(moved / 8)` elements (so it reads and writes at least the bytes
/// `case` moves), validated exactly.
pub fn copy_case(case: &Case) -> Result<Case, String> {
    let n = moved_bytes(case)?.div_ceil(8).max(1);
    Ok(Case {
        name: case.name.clone(),
        graph: "copy".into(),
        group: case.group.clone(),
        program: COPY_PROGRAM.into(),
        shape: [1, usize::try_from(n).map_err(|_| "the copy is too large")?],
        sizes: BTreeMap::new(),
        flops: Vec::new(),
        outputs: vec!["y".into()],
        atol: 0.0,
        rtol: 0.0,
        allow_tf32: false,
    })
}

/// Compiles and prepares `case` for `variant` on `target`.
pub fn prepare(target: &str, case: &Case, variant: Variant) -> Result<Prepared, String> {
    if variant == Variant::Copy {
        return prepare(target, &copy_case(case)?, Variant::Fused);
    }
    match target {
        "cpu" => crate::cpu::prepare(case, variant),
        "cuda" => crate::cuda::prepare(case, variant),
        #[cfg(feature = "wgpu")]
        "wgpu" => crate::wgpu::prepare(case, variant),
        #[cfg(not(feature = "wgpu"))]
        "wgpu" => Err(
            "this `tile` was built without the wgpu runtime: build it with `--features wgpu`"
                .to_string(),
        ),
        t => Err(format!(
            "target `{t}` is not supported by this build of tile bench"
        )),
    }
}

/// The device the target runs on, for the record.
pub fn device_name(target: &str) -> String {
    match target {
        "cpu" => crate::cpu::device_name(),
        "cuda" => crate::cuda::device_name(),
        #[cfg(feature = "wgpu")]
        "wgpu" => crate::wgpu::device_name(),
        t => t.to_string(),
    }
}

/// Whether `target` times calls on the device (wgpu: where the adapter
/// has timestamp queries).
pub fn device_clock(target: &str) -> bool {
    match target {
        "cuda" => true,
        #[cfg(feature = "wgpu")]
        "wgpu" => crate::wgpu::timestamps(),
        _ => false,
    }
}

/// sha256 of a text, hex.
pub fn sha256_hex(text: &str) -> String {
    use sha2::{Digest, Sha256};
    Sha256::digest(text.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}
