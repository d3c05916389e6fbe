//! `tile._native`: the compiled core of Tile's Python package. A `Kernel`
//! is one verified program and its plan; it compiles for the CPU or CUDA
//! on first use and runs on arrays in place, without copies. Capture and
//! argument handling by name live in Python (`python/tile/`).

mod arrays;
mod streams;

use arrays::{describe, unusable, Device, What};
use pyo3::create_exception;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyTuple};
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use tile_ir::args::RawArg;
use tile_ir::{Program, Role, Sizes};
use tile_plan::Plan;

create_exception!(
    _native,
    TileError,
    PyValueError,
    "A program, its arguments or a run were refused; nothing was written."
);

/// A Rust error as a `TileError`.
pub(crate) fn err(e: impl std::fmt::Display) -> PyErr {
    TileError::new_err(e.to_string())
}

/// Refuses, before anything is allocated, outputs Tile would allocate
/// whose bytes together exceed the memory ceiling (`TILE_MAX_MEMORY`, else
/// physical memory), naming the largest.
fn check_ceiling(made: &[(tile_ir::DType, Vec<usize>)]) -> PyResult<()> {
    let ceiling = tile_ir::limits::memory_ceiling().map_err(err)?;
    let mut total: u128 = 0;
    for (dtype, shape) in made {
        let (_, bytes) = tile_ir::shape_bytes(*dtype, shape).map_err(err)?;
        total += bytes as u128;
    }
    if total > ceiling as u128 {
        return Err(err(format!(
            "the results to allocate need {total} bytes together, above the memory ceiling of {ceiling} bytes (set TILE_MAX_MEMORY to change it, or pass the arrays to write); nothing was allocated"
        )));
    }
    Ok(())
}

/// One program, verified and planned, compiled per target on first use.
#[pyclass(module = "tile._native", frozen)]
struct Kernel {
    /// The program as given (verified, before the planner's passes).
    given: Program,
    plan: Plan,
    cpu: Mutex<Option<Arc<tile_cpu::CpuModule>>>,
    cuda: Mutex<Option<Arc<tile_cuda::CudaModule>>>,
    /// `target="wgpu"`: host arrays run through wgpu (WGSL on Vulkan,
    /// Metal or DirectX 12) instead of the CPU.
    wgpu_target: bool,
    /// `allow_tf32=True`: `f32` contractions on CUDA arrays multiply on
    /// TF32 tensor cores.
    allow_tf32: bool,
    #[cfg(feature = "wgpu")]
    wgpu: Mutex<Option<Arc<tile_wgpu::WgpuModule>>>,
}

impl Kernel {
    fn program(&self) -> &Program {
        &self.plan.program
    }

    /// The module for `target`, compiled without the GIL on first use. No
    /// lock is held while the GIL is released: threads making a first
    /// call at once may each compile, and the first to finish is kept (a
    /// lock held across the release would deadlock against a thread that
    /// holds the GIL and waits for the lock). A Ctrl-C that stopped the
    /// compiler is raised as KeyboardInterrupt.
    fn cpu_module(&self, py: Python<'_>) -> PyResult<Arc<tile_cpu::CpuModule>> {
        compiled_once(py, &self.cpu, || {
            tile_cpu::compile(&self.plan, &tile_cpu::CpuOptions::default()).map_err(err)
        })
    }

    #[cfg(feature = "wgpu")]
    fn wgpu_module(&self, py: Python<'_>) -> PyResult<Arc<tile_wgpu::WgpuModule>> {
        compiled_once(py, &self.wgpu, || {
            tile_wgpu::WgpuModule::compile(&self.plan).map_err(err)
        })
    }

    /// Runs the program through wgpu on host arrays (`target="wgpu"`).
    #[cfg(feature = "wgpu")]
    fn run_wgpu(&self, py: Python<'_>, raws: &[RawArg], sizes: &Sizes) -> PyResult<()> {
        let module = self.wgpu_module(py)?;
        // SAFETY: each address and size come from the owning object's own
        // description, held by the caller (`descs`) for the call, as for
        // the CPU.
        py.detach(|| unsafe { module.run_raw(raws, sizes) })
            .map_err(err)
    }

    #[cfg(not(feature = "wgpu"))]
    fn run_wgpu(&self, _: Python<'_>, _: &[RawArg], _: &Sizes) -> PyResult<()> {
        Err(err(
            "this build of tile has no wgpu runtime (build the package with the `wgpu` feature: pip install ./python does)",
        ))
    }

    fn cuda_module(&self, py: Python<'_>) -> PyResult<Arc<tile_cuda::CudaModule>> {
        compiled_once(py, &self.cuda, || {
            tile_cuda::compile(&self.plan, &self.cuda_options()).map_err(err)
        })
    }

    /// The CUDA options of this kernel: the environment's, and
    /// `allow_tf32` as given.
    fn cuda_options(&self) -> tile_cuda::CudaOptions {
        tile_cuda::CudaOptions {
            allow_tf32: self.allow_tf32,
            ..Default::default()
        }
    }
}

/// The value in `slot`, or `build`'s, run without the GIL and without
/// holding the slot's lock (see `Kernel::cpu_module`).
fn compiled_once<T: Send + Sync>(
    py: Python<'_>,
    slot: &Mutex<Option<Arc<T>>>,
    build: impl FnOnce() -> PyResult<T> + Send,
) -> PyResult<Arc<T>> {
    let lock = || slot.lock().map_err(|_| err("a previous compile panicked"));
    if let Some(m) = lock()?.as_ref() {
        return Ok(m.clone());
    }
    let built = py.detach(build);
    py.check_signals()?;
    let built = Arc::new(built?);
    let mut guard = lock()?;
    Ok(guard.get_or_insert(built).clone())
}

impl Kernel {
    /// `tile grad` of the given program.
    fn derive(
        &self,
        wrt: Vec<String>,
        with_value: bool,
        saves: &str,
    ) -> PyResult<tile_ir::Derivative> {
        let options = tile_ir::GradOptions {
            wrt,
            with_value,
            saves: saves.parse().map_err(err)?,
        };
        let name = &self.given.name;
        tile_ir::derive(&self.given, &options).map_err(|e| match e {
            tile_ir::GradError::Unsupported(d) => err(format!(
                "<program {name}>:{}:{}: error: {}",
                d.span.line, d.span.col, d.message
            )),
            e => err(format!("{name}: {e}")),
        })
    }

    /// A generated program, planned with fusion on, for this kernel's
    /// target.
    fn planned(&self, program: tile_ir::Program) -> PyResult<Kernel> {
        let plan = tile_plan::compile(&program, &tile_plan::Options { fusion: true })
            .map_err(|e| err(format!("{}: error: {e}", program.name)))?;
        Ok(Kernel::with_plan(
            program,
            plan,
            (self.wgpu_target, self.allow_tf32),
        ))
    }

    fn with_plan(given: Program, plan: Plan, (wgpu_target, allow_tf32): (bool, bool)) -> Kernel {
        Kernel {
            given,
            plan,
            cpu: Mutex::new(None),
            cuda: Mutex::new(None),
            wgpu_target,
            allow_tf32,
            #[cfg(feature = "wgpu")]
            wgpu: Mutex::new(None),
        }
    }
}

#[pymethods]
impl Kernel {
    /// Parses `text` (named `file` in messages), selects `program` (needed
    /// when the text holds several), verifies and plans it. `target`:
    /// `None` runs on the arrays' device (the CPU or CUDA), `"wgpu"` runs
    /// host arrays through wgpu. `allow_tf32`: `f32` contractions on CUDA
    /// arrays multiply on TF32 tensor cores (not with `"wgpu"`).
    #[new]
    #[pyo3(signature = (text, program=None, file="<string>", fusion=true, target=None, allow_tf32=false))]
    fn new(
        text: &str,
        program: Option<&str>,
        file: &str,
        fusion: bool,
        target: Option<&str>,
        allow_tf32: bool,
    ) -> PyResult<Self> {
        let wgpu_target = match target {
            None => false,
            Some("wgpu") => true,
            Some(other) => {
                return Err(err(format!(
                "unknown target {other:?}: None (the arrays' device: the CPU or CUDA) or \"wgpu\""
            )))
            }
        };
        if allow_tf32 && wgpu_target {
            return Err(err(
                "allow_tf32 asks for CUDA's TF32 tensor cores; target=\"wgpu\" computes exact FP32",
            ));
        }
        if text.len() as u64 > tile_ir::load::MAX_TEXT_BYTES {
            return Err(err(format!(
                "{file}: error: the program text has {} bytes; at most {} are accepted",
                text.len(),
                tile_ir::load::MAX_TEXT_BYTES
            )));
        }
        let program = tile_ir::load::load_program(text, file, program).map_err(err)?;
        let plan = tile_plan::compile(&program, &tile_plan::Options { fusion })
            .map_err(|e| err(format!("{file}: error: {e}")))?;
        Ok(Kernel::with_plan(program, plan, (wgpu_target, allow_tf32)))
    }

    /// The target given at creation (`None` or `"wgpu"`).
    #[getter]
    fn target(&self) -> Option<&'static str> {
        self.wgpu_target.then_some("wgpu")
    }

    /// Whether `f32` contractions on CUDA arrays may use TF32 tensor cores.
    #[getter]
    fn allow_tf32(&self) -> bool {
        self.allow_tf32
    }

    /// The derivative program (`tile grad`) with respect to the inputs
    /// `wrt`, verified and planned: it takes the inputs, a cotangent
    /// `grad_Y` per float output, (with `with_value`) the outputs, and
    /// writes `grad_X` per input of `wrt`; with `saves="reductions"` it
    /// then takes the `saved_*` values `forward_saving` writes; then any
    /// `saved_*` work outputs.
    #[pyo3(signature = (wrt, with_value=false, saves="inputs"))]
    fn grad(&self, wrt: Vec<String>, with_value: bool, saves: &str) -> PyResult<Self> {
        let d = self.derive(wrt, with_value, saves)?;
        self.planned(d.grad)
    }

    /// With `saves="reductions"`: the program itself, also writing every
    /// float binding that holds a reduction to a `saved_*` output, which
    /// the derivative of `grad(wrt, saves="reductions")` reads back.
    fn forward_saving(&self, wrt: Vec<String>) -> PyResult<Self> {
        let d = self.derive(wrt, false, "reductions")?;
        self.planned(
            d.forward
                .expect("saving reductions gives a forward program"),
        )
    }

    /// The program's name.
    #[getter]
    fn name(&self) -> &str {
        &self.program().name
    }

    /// The program as given, in normal form (`.tile` text).
    #[getter]
    fn text(&self) -> String {
        self.given.to_string()
    }

    /// Parameters in order: `(name, role, dtype, rank)`.
    #[getter]
    fn params(&self) -> Vec<(String, &'static str, &'static str, usize)> {
        self.program()
            .params
            .iter()
            .map(|p| {
                let role = match p.role {
                    Role::In => "in",
                    Role::Out => "out",
                    Role::InOut => "inout",
                };
                (p.name.clone(), role, p.dtype.name(), p.dims.len())
            })
            .collect()
    }

    /// What `tile plan --json` prints, as JSON text.
    fn plan_json(&self) -> PyResult<String> {
        serde_json::to_string_pretty(&self.plan.to_json()).map_err(err)
    }

    /// What `tile plan` prints.
    fn plan_text(&self) -> String {
        self.plan.to_string()
    }

    /// The generated source for `target` (`cpu`: C, `cuda`: CUDA C,
    /// `wgpu`: WGSL).
    fn source(&self, target: &str) -> PyResult<String> {
        match target {
            "cpu" => tile_cpu::emit_c(&self.plan, &tile_cpu::CpuOptions::default()).map_err(err),
            "cuda" => tile_cuda::emit_cuda_with(&self.plan, &self.cuda_options()).map_err(err),
            "wgpu" => tile_wgpu::emit_wgsl(&self.plan).map_err(err),
            other => Err(err(format!("unknown target {other:?} (cpu, cuda or wgpu)"))),
        }
    }

    /// The shapes of the `missing` parameters (outputs to allocate), from
    /// the arrays `given` by name: each given array is described (and so
    /// checked: dtype, contiguity, device) and the size symbols solved from
    /// them, and the outputs' bytes together must fit the memory ceiling
    /// (`TILE_MAX_MEMORY`), all before anything is allocated.
    fn output_shapes(
        &self,
        py: Python<'_>,
        given: Vec<(String, Bound<'_, PyAny>)>,
        missing: Vec<String>,
    ) -> PyResult<BTreeMap<String, Vec<usize>>> {
        let program = self.program();
        let mut shapes = BTreeMap::new();
        for (name, obj) in given {
            let p = program
                .param(&name)
                .ok_or_else(|| err(tile_ir::ArgError::Unknown(name.clone())))?;
            let d = describe(py, &obj, What::Name(&name))?;
            if p.dims.len() != d.shape.len() {
                return Err(err(tile_ir::ArgError::Rank {
                    name,
                    expected: p.dims.len(),
                    found: d.shape.len(),
                }));
            }
            shapes.insert(name, (d.dtype, d.shape.clone()));
        }
        let sizes = tile_ir::args::solve_sizes(program, &shapes, &Sizes::new()).map_err(err)?;
        let boxes = tile_ir::args::boxes(program, &sizes).map_err(err)?;
        let mut out = BTreeMap::new();
        let mut made = Vec::new();
        for name in missing {
            let p = program
                .param(&name)
                .ok_or_else(|| err(tile_ir::ArgError::Unknown(name.clone())))?;
            let mut shape = Vec::with_capacity(p.dims.len());
            for &(lo, hi) in boxes.get(&name).map_or(&[][..], |b| b.as_slice()) {
                let n = hi
                    .checked_sub(lo)
                    .and_then(|n| usize::try_from(n).ok())
                    .ok_or_else(|| {
                        err(format!(
                            "the box of `{name}` has a negative extent ({lo}..{hi})"
                        ))
                    })?;
                shape.push(n);
            }
            made.push((p.dtype, shape.clone()));
            out.insert(name, shape);
        }
        check_ceiling(&made)?;
        Ok(out)
    }

    /// The fast path of a `Kernel` call: when `given` (keyword arguments)
    /// names every parameter, and with an array each (no number), runs
    /// like `run` and returns the written arrays (one, or a tuple in
    /// parameter order); otherwise `None`, and the Python side takes the
    /// general path (numbers, allocation, messages for unknown names).
    #[pyo3(signature = (given, stream=None))]
    fn call_given(
        &self,
        py: Python<'_>,
        given: &Bound<'_, PyDict>,
        stream: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Option<Py<PyAny>>> {
        let program = self.program();
        if given.len() != program.params.len() {
            return Ok(None);
        }
        let mut objs = Vec::with_capacity(program.params.len());
        for p in &program.params {
            match given.get_item(&p.name)? {
                Some(obj) if !is_number(&obj)? && !obj.is_instance_of::<PyBool>() => objs.push(obj),
                _ => return Ok(None),
            }
        }
        let mut descs = Vec::with_capacity(objs.len());
        for (p, obj) in program.params.iter().zip(&objs) {
            match describe(py, obj, What::Name(&p.name)) {
                Ok(d) => descs.push(d),
                // Not an array (a `Fraction` for a scalar, say): the
                // general path converts it, or says what is wrong.
                Err(_) => return Ok(None),
            }
        }
        self.launch(py, &mut descs, stream)?;
        drop(descs);
        let written: Vec<&Bound<'_, PyAny>> = program
            .params
            .iter()
            .zip(&objs)
            .filter(|(p, _)| p.role.is_written())
            .map(|(_, o)| o)
            .collect();
        Ok(Some(match written.as_slice() {
            [one] => (*one).clone().unbind(),
            many => PyTuple::new(py, many.iter().copied())?.into_any().unbind(),
        }))
    }

    /// Runs the program on `arrays` (one per parameter, in order), in
    /// place. The target is the arrays' device. CUDA work goes on
    /// `stream` if given, else PyTorch's current stream (torch tensors),
    /// else the stream an array's `__cuda_array_interface__` names, else
    /// the legacy default stream; it is not waited for unless a check the
    /// kernels print may fail at these sizes.
    #[pyo3(signature = (arrays, stream=None))]
    fn run(
        &self,
        py: Python<'_>,
        arrays: &Bound<'_, PyTuple>,
        stream: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<()> {
        let program = self.program();
        if arrays.len() != program.params.len() {
            return Err(err(format!(
                "{} arrays given, but `{}` has {} parameters",
                arrays.len(),
                program.name,
                program.params.len()
            )));
        }
        let mut descs = Vec::with_capacity(arrays.len());
        for (p, obj) in program.params.iter().zip(arrays.iter()) {
            descs.push(describe(py, &obj, What::Name(&p.name))?);
        }
        self.launch(py, &mut descs, stream)
    }
}

impl Kernel {
    /// Runs the program on described arrays (one per parameter, in
    /// order): every check, then the launch (see `run`).
    fn launch(
        &self,
        py: Python<'_>,
        descs: &mut [arrays::Desc],
        stream: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<()> {
        let program = self.program();
        // Foreign Python code (a `__cuda_array_interface__` property, a
        // `__dlpack__` method) may have resized an array described before
        // it ran: those from NumPy and PyTorch are described again, after
        // the last of it.
        if descs.iter().any(|d| d.is_foreign()) {
            for (p, d) in program.params.iter().zip(descs.iter_mut()) {
                d.refresh(py, What::Name(&p.name))?;
            }
        }
        let first = descs.first().map_or(Device::Cpu, |d| d.device);
        let cuda = matches!(first, Device::Cuda(_));
        let mut raws = Vec::with_capacity(descs.len());
        for (p, d) in program.params.iter().zip(descs.iter()) {
            if p.role.is_written() {
                if let Some(why) = &d.read_only {
                    return Err(unusable(
                        &p.name,
                        format!("{why}, but the program writes it"),
                    ));
                }
            }
            let mismatch = match (first, d.device) {
                (Device::Cuda(Some(a)), Device::Cuda(Some(b))) => a != b,
                (a, b) => matches!(a, Device::Cuda(_)) != matches!(b, Device::Cuda(_)),
            };
            if mismatch {
                return Err(err(format!(
                    "arrays on different devices: `{}` is on {}, `{}` on {}",
                    program.params[0].name,
                    first.describe(),
                    p.name,
                    d.device.describe()
                )));
            }
            raws.push(RawArg {
                name: p.name.clone(),
                dtype: d.dtype,
                shape: d.shape.clone(),
                addr: d.addr,
                bytes: d.bytes()?,
            });
        }
        let sizes = Sizes::new();
        if self.wgpu_target {
            if cuda {
                return Err(err(format!(
                    "target=\"wgpu\" runs host arrays (NumPy arrays, CPU tensors), but `{}` is on {}",
                    program.params[0].name,
                    first.describe()
                )));
            }
            if stream.is_some() {
                return Err(err(
                    "stream= is for CUDA arrays; target=\"wgpu\" runs host arrays",
                ));
            }
            self.run_wgpu(py, &raws, &sizes)?;
        } else if cuda {
            let module = self.cuda_module(py)?;
            let ordinal = module.gpu().ordinal;
            for (p, d) in program.params.iter().zip(descs.iter()) {
                if let Some(o) = d.torch_device.filter(|&o| o != ordinal) {
                    return Err(unusable(
                        &p.name,
                        format!("is a PyTorch tensor on cuda:{o}, but Tile runs on device {ordinal} (set TILE_CUDA_DEVICE)"),
                    ));
                }
            }
            let stream = streams::choose(py, stream, descs, ordinal)?;
            // SAFETY: every address was described by its owner; those not
            // from PyTorch tensors (which PyTorch keeps inside their
            // storage, on the device checked above) are checked against
            // the driver's allocation; the objects stay alive (`descs`)
            // until the call returns, and later work on them follows on
            // the same stream, which Tile vouched for.
            let trusted: Vec<bool> = descs.iter().map(|d| d.torch_device.is_some()).collect();
            py.detach(|| unsafe { module.launch_raw(&raws, &trusted, &sizes, stream) })
                .map_err(err)?;
        } else {
            if stream.is_some() {
                return Err(err("stream= is for CUDA arrays; these are on the CPU"));
            }
            let module = self.cpu_module(py)?;
            // SAFETY: each address and size come from the owning object's
            // own description (a buffer export, a NumPy array or a tensor
            // of a C type, a DLPack capsule) held in `descs` for the call.
            py.detach(|| unsafe { module.run_raw(&raws, &sizes) })
                .map_err(err)?;
        }
        // PyTorch's autograd sees the writes as in-place changes, so a
        // tensor saved for a backward pass and then overwritten is
        // reported by PyTorch rather than giving wrong gradients.
        let written = program
            .params
            .iter()
            .zip(descs.iter())
            .filter(|(p, _)| p.role.is_written())
            .filter_map(|(_, d)| d.tensor(py).cloned())
            .collect();
        arrays::increment_versions(py, written)
    }
}

/// A result's symbolic extent.
#[derive(Clone, Copy)]
enum Dim {
    M,
    N,
    One,
}

/// What selects a specialization: each argument's dtype and rank.
type Key = Vec<(tile_ir::DType, usize)>;

/// A captured function's compiled specialization.
struct Entry {
    kernel: Py<Kernel>,
    /// Each result's symbolic shape.
    shapes: Vec<Vec<Dim>>,
    /// Whether the function returns one array (not a tuple).
    single: bool,
    dtype: tile_ir::DType,
}

/// The call path of `@tile.jit` functions: arrays described once, the
/// specialization found by (dtype, rank) of each argument, outputs
/// allocated or taken from `out=`, then one launch. `helper` (Python)
/// captures new specializations and allocates arrays.
#[pyclass(module = "tile._native", frozen)]
struct Function {
    helper: Py<PyAny>,
    cache: Mutex<Vec<(Key, Arc<Entry>)>>,
}

#[pymethods]
impl Function {
    #[new]
    fn new(helper: Py<PyAny>) -> Self {
        Function {
            helper,
            cache: Mutex::new(Vec::new()),
        }
    }

    /// Everything else (`program`, `plan()`, `source()`, `capture()`,
    /// `__name__`) is the Python helper's.
    fn __getattr__<'py>(&self, py: Python<'py>, name: &str) -> PyResult<Bound<'py, PyAny>> {
        self.helper.bind(py).getattr(name)
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        Ok(self.helper.bind(py).repr()?.to_string())
    }

    #[pyo3(signature = (*args, out=None, stream=None))]
    fn __call__(
        &self,
        py: Python<'_>,
        args: &Bound<'_, PyTuple>,
        out: Option<&Bound<'_, PyAny>>,
        stream: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Py<PyAny>> {
        // Numbers (runtime scalars: `leaky(x, 0.1)`) become 0-d arrays of
        // the arrays' dtype, made like the first array (on its device).
        let args = self.numbers_as_arrays(py, args, stream)?;
        let args = &args;
        let mut descs = Vec::with_capacity(args.len() + 2);
        for (k, obj) in args.iter().enumerate() {
            descs.push(describe(py, &obj, What::Position(k))?);
        }
        let key: Key = descs.iter().map(|d| (d.dtype, d.shape.len())).collect();
        let found = {
            let cache = self
                .cache
                .lock()
                .map_err(|_| err("a previous call panicked"))?;
            cache
                .iter()
                .find(|(k, _)| *k == key)
                .map(|(_, e)| e.clone())
        };
        let entry = match found {
            Some(e) => e,
            None => {
                let e = Arc::new(self.specialize(py, &key)?);
                if let Ok(mut cache) = self.cache.lock() {
                    cache.push((key.clone(), e.clone()));
                }
                // The capture ran the function's Python code, which may
                // have changed the arrays.
                for (k, d) in descs.iter_mut().enumerate() {
                    d.refresh(py, What::Position(k))?;
                }
                let now: Key = descs.iter().map(|d| (d.dtype, d.shape.len())).collect();
                if now != key {
                    return Err(err(
                        "the function changed its arguments' dtypes or ranks while it was captured",
                    ));
                }
                e
            }
        };
        let kernel = entry.kernel.get();
        let outs: Bound<'_, PyTuple> = match out {
            Some(o) => {
                let t = if let Ok(t) = o.cast::<PyTuple>() {
                    t.clone()
                } else if o.is_instance_of::<pyo3::types::PyList>() {
                    PyTuple::new(py, o.try_iter()?.collect::<PyResult<Vec<_>>>()?)?
                } else {
                    PyTuple::new(py, [o])?
                };
                if t.len() != entry.shapes.len() {
                    return Err(err(format!(
                        "the function has {} results, but out= holds {}",
                        entry.shapes.len(),
                        t.len()
                    )));
                }
                t
            }
            None => self.allocate(py, &entry, args, &descs)?,
        };
        let program = kernel.program();
        for (p, obj) in program.params[descs.len()..].iter().zip(outs.iter()) {
            descs.push(describe(py, &obj, What::Name(&p.name))?);
        }
        if descs.len() != program.params.len() {
            return Err(err(format!(
                "{} arrays given, but the captured program has {} parameters",
                descs.len(),
                program.params.len()
            )));
        }
        kernel.launch(py, &mut descs, stream)?;
        drop(descs);
        Ok(if entry.single {
            outs.get_item(0)?.unbind()
        } else {
            outs.into_any().unbind()
        })
    }
}

/// Whether `obj` is a number a captured function takes as a runtime
/// scalar: a Python `int` or `float` (not `bool`), or a NumPy integer or
/// float scalar.
fn is_number(obj: &Bound<'_, PyAny>) -> PyResult<bool> {
    if obj.is_instance_of::<PyBool>() {
        return Ok(false);
    }
    if obj.is_instance_of::<PyFloat>() || obj.is_instance_of::<PyInt>() {
        return Ok(true);
    }
    // NumPy scalars: a type of module `numpy` other than `ndarray` (asked
    // of the type, not the object: an array's `__array_interface__` would
    // be built on every look-up).
    let ty = obj.get_type();
    if ty.module()?.to_cow()? != "numpy" || ty.name()?.to_cow()? == "ndarray" {
        return Ok(false);
    }
    // Then an instance of `numpy.generic` (not `memmap` or `matrix`,
    // arrays of module `numpy` too).
    let generic = py_numpy_generic(obj.py())?;
    if !obj.is_instance(generic.bind(obj.py()))? {
        return Ok(false);
    }
    let kind: String = obj.getattr("dtype")?.getattr("kind")?.extract()?;
    Ok(matches!(kind.as_str(), "f" | "i" | "u"))
}

/// `numpy.generic`, the base of NumPy's scalar types (NumPy is loaded:
/// an object of its module was seen).
fn py_numpy_generic(py: Python<'_>) -> PyResult<&'static Py<PyAny>> {
    static GENERIC: pyo3::sync::PyOnceLock<Py<PyAny>> = pyo3::sync::PyOnceLock::new();
    GENERIC.get_or_try_init(py, || Ok(py.import("numpy")?.getattr("generic")?.unbind()))
}

impl Function {
    /// `args` with each number replaced by a 0-d array of the first
    /// array's dtype, made like it (the helper's `_scalar`); `args` itself
    /// when there is no number.
    fn numbers_as_arrays<'py>(
        &self,
        py: Python<'py>,
        args: &Bound<'py, PyTuple>,
        stream: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyTuple>> {
        let mut numbers = Vec::new();
        for (k, obj) in args.iter().enumerate() {
            if is_number(&obj)? {
                numbers.push(k);
            }
        }
        if numbers.is_empty() {
            return Ok(args.clone());
        }
        let Some((at, like)) = args.iter().enumerate().find(|(k, _)| !numbers.contains(k)) else {
            return Err(err(
                "a captured function needs at least one array among its arguments (numbers become scalars of the arrays' dtype)",
            ));
        };
        let dtype = describe(py, &like, What::Position(at))?.dtype;
        let helper = self.helper.bind(py);
        let mut out = Vec::with_capacity(args.len());
        for (k, obj) in args.iter().enumerate() {
            if numbers.contains(&k) {
                out.push(helper.call_method1("_scalar", (&like, k, &obj, dtype.name(), stream))?);
            } else {
                out.push(obj);
            }
        }
        PyTuple::new(py, out)
    }

    /// Captures and compiles the function for arguments of these dtypes
    /// and ranks (the helper's `specialize`).
    fn specialize(&self, py: Python<'_>, key: &[(tile_ir::DType, usize)]) -> PyResult<Entry> {
        let dtypes: Vec<&str> = key.iter().map(|(d, _)| d.name()).collect();
        let ranks: Vec<usize> = key.iter().map(|(_, r)| *r).collect();
        let got = self
            .helper
            .bind(py)
            .call_method1("_specialize", (dtypes, ranks))?;
        let (kernel, shapes, single, dtype): (
            Py<Kernel>,
            Vec<Vec<Bound<'_, PyAny>>>,
            bool,
            String,
        ) = got.extract()?;
        let shapes = shapes
            .into_iter()
            .map(|s| {
                s.into_iter()
                    .map(|d| match d.extract::<String>().ok().as_deref() {
                        Some("M") => Ok(Dim::M),
                        Some("N") => Ok(Dim::N),
                        _ => Ok(Dim::One),
                    })
                    .collect::<PyResult<Vec<Dim>>>()
            })
            .collect::<PyResult<Vec<_>>>()?;
        let dtype = tile_ir::DType::from_name(&dtype)
            .ok_or_else(|| err(format!("unknown dtype {dtype}")))?;
        Ok(Entry {
            kernel,
            shapes,
            single,
            dtype,
        })
    }

    /// New result arrays like the first argument (the helper's `alloc`),
    /// sized from the arguments: the first of rank 2 gives (M, N), else
    /// one of rank 1 gives N.
    fn allocate<'py>(
        &self,
        py: Python<'py>,
        entry: &Entry,
        args: &Bound<'py, PyTuple>,
        descs: &[arrays::Desc],
    ) -> PyResult<Bound<'py, PyTuple>> {
        let (mut m, mut n) = (None, None);
        for d in descs {
            match d.shape.as_slice() {
                [a, b] => {
                    (m, n) = (Some(*a), Some(*b));
                    break;
                }
                [b] if n.is_none() => n = Some(*b),
                _ => {}
            }
        }
        let mut shapes = Vec::with_capacity(entry.shapes.len());
        for s in &entry.shapes {
            let mut shape = Vec::with_capacity(s.len());
            for d in s {
                shape.push(match d {
                    Dim::M => m.ok_or_else(|| err("no argument of rank 2 gives M"))?,
                    Dim::N => n.ok_or_else(|| err("no argument gives N"))?,
                    Dim::One => 1,
                });
            }
            shapes.push(PyTuple::new(py, shape)?);
        }
        let made: Vec<(tile_ir::DType, Vec<usize>)> = shapes
            .iter()
            .map(|t| Ok((entry.dtype, t.extract::<Vec<usize>>()?)))
            .collect::<PyResult<_>>()?;
        check_ceiling(&made)?;
        // The first array that is not a scalar (runtime numbers are 0-d).
        let like = args
            .iter()
            .zip(descs)
            .find(|(_, d)| !d.shape.is_empty())
            .map(|(a, _)| a)
            .ok_or_else(|| err("a captured function needs at least one array"))?;
        let got = self
            .helper
            .bind(py)
            .call_method1("_alloc", (like, shapes, entry.dtype.name()))?;
        Ok(got.cast_into::<PyTuple>()?)
    }
}

/// Describes an array as `(kind, dtype, shape, device)`, the way `run`
/// sees it (for tests and allocation).
#[pyfunction]
fn describe_array(
    py: Python<'_>,
    obj: &Bound<'_, PyAny>,
) -> PyResult<(&'static str, &'static str, Vec<usize>, String)> {
    let d = describe(py, obj, What::Name("array"))?;
    Ok((d.kind, d.dtype.name(), d.shape.clone(), d.device.describe()))
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Kernel>()?;
    m.add_class::<Function>()?;
    m.add_function(wrap_pyfunction!(describe_array, m)?)?;
    m.add("TileError", m.py().get_type::<TileError>())?;
    Ok(())
}
