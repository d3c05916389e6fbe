//! Describing a Python array without copying it: its address, shape,
//! dtype, device and writability, from PyTorch tensors, the buffer protocol
//! (NumPy), `__cuda_array_interface__` (CuPy, Numba) or `__dlpack__`.
//!
//! Nothing a foreign object reports is trusted beyond what is checked
//! here and in the runtimes: strides must be compact row-major, sizes are
//! multiplied with overflow checks, and the runtimes check every address
//! again (CUDA addresses against the driver's record of their allocation).

use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyTuple};
use tile_ir::DType;

/// Where an array's memory lives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Device {
    /// Host memory.
    Cpu,
    /// Device memory of a CUDA device (its ordinal when the object says).
    Cuda(Option<i32>),
}

impl Device {
    pub fn describe(self) -> String {
        match self {
            Device::Cpu => "cpu".to_string(),
            Device::Cuda(Some(n)) => format!("cuda:{n}"),
            Device::Cuda(None) => "cuda".to_string(),
        }
    }
}

/// How the array's memory is kept alive (and exported) during a call.
enum Keep {
    /// A buffer-protocol export, released on drop.
    Buffer(Box<ffi::Py_buffer>),
    /// The object itself holds it (tensors, CUDA array interface, DLPack
    /// capsules).
    Object(Py<PyAny>),
}

/// One array, described.
pub struct Desc {
    pub addr: u64,
    pub shape: Vec<usize>,
    pub dtype: DType,
    pub device: Device,
    /// Why Tile may not write it (None: it may).
    pub read_only: Option<&'static str>,
    /// The stream its producer names (the CUDA array interface's
    /// `stream`).
    pub stream: Option<u64>,
    /// The CUDA device of a PyTorch tensor (whose current stream is then
    /// the launch's).
    pub torch_device: Option<i32>,
    /// Where it came from, for messages.
    pub kind: &'static str,
    keep: Keep,
}

const NDARRAY_KIND: &str = "numpy.ndarray";
const TORCH_KIND: &str = "torch.Tensor";

impl Desc {
    /// Whether it came through a protocol whose methods may be anyone's
    /// Python code, rather than from a library Tile recognises by its C
    /// type (NumPy's ndarray, PyTorch's Tensor).
    pub fn is_foreign(&self) -> bool {
        !matches!(self.kind, NDARRAY_KIND | TORCH_KIND)
    }

    /// Describes the same object again (after foreign Python code ran,
    /// which might have resized it).
    pub fn refresh(&mut self, py: Python<'_>, what: What<'_>) -> PyResult<()> {
        if self.is_foreign() {
            return Ok(());
        }
        if let Keep::Object(obj) = &self.keep {
            let obj = obj.clone_ref(py);
            *self = describe(py, obj.bind(py), what)?;
        }
        Ok(())
    }

    /// The PyTorch tensor described, if it is one.
    pub fn tensor<'py>(&self, py: Python<'py>) -> Option<&Bound<'py, PyAny>> {
        match &self.keep {
            Keep::Object(obj) if self.kind == TORCH_KIND => Some(obj.bind(py)),
            _ => None,
        }
    }

    /// Its size in bytes (checked against the shape by the runtimes).
    pub fn bytes(&self) -> PyResult<usize> {
        self.shape
            .iter()
            .try_fold(self.dtype.size_bytes(), |a, &n| a.checked_mul(n))
            .ok_or_else(|| crate::err("an array's size in bytes overflows"))
    }
}

impl Drop for Desc {
    fn drop(&mut self) {
        if let Keep::Buffer(view) = &mut self.keep {
            // SAFETY: the view was filled by a successful
            // PyObject_GetBuffer and is released once, holding the GIL.
            Python::attach(|_| unsafe { ffi::PyBuffer_Release(&mut **view) });
        }
    }
}

/// A plain error for an array a call cannot use (`what` names the
/// argument).
pub fn unusable(what: &str, why: impl std::fmt::Display) -> PyErr {
    crate::TileError::new_err(format!("argument `{what}`: {why}"))
}

/// Names an argument in messages: a parameter's name or a position.
#[derive(Clone, Copy)]
pub enum What<'a> {
    Name(&'a str),
    Position(usize),
}

impl std::fmt::Display for What<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            What::Name(n) => f.write_str(n),
            What::Position(k) => write!(f, "#{k}"),
        }
    }
}

/// Describes `obj` (named `what` in messages).
pub fn describe(py: Python<'_>, obj: &Bound<'_, PyAny>, what: What<'_>) -> PyResult<Desc> {
    if let Some(d) = numpy_array(py, obj, what)? {
        return Ok(d);
    }
    let what = &what.to_string();
    if let Some(t) = torch_types(py)? {
        let ty = obj.get_type();
        let p = ty.as_ptr();
        if p == t.tensor.as_ptr() || p == t.parameter.as_ptr() {
            return torch(py, obj, what);
        }
        // SAFETY: two type objects.
        if unsafe { ffi::PyType_IsSubtype(p.cast(), t.base.as_ptr().cast()) } != 0 {
            return Err(unusable(
                what,
                format!(
                    "is a subclass of torch.Tensor ({}), whose methods Tile cannot trust to describe its memory: pass a plain tensor (t.as_subclass(torch.Tensor))",
                    ty.name()?
                ),
            ));
        }
    }
    // Before the buffer protocol: CuPy arrays export one that refuses
    // device memory.
    if let Ok(cai) = obj.getattr("__cuda_array_interface__") {
        return cuda_interface(obj, &cai, what);
    }
    // SAFETY: a valid object pointer.
    if unsafe { ffi::PyObject_CheckBuffer(obj.as_ptr()) } == 1 {
        return buffer(obj, what);
    }
    if obj.hasattr("__dlpack__")? {
        return dlpack(obj, what);
    }
    Err(unusable(
        what,
        format!(
            "a {} is not an array Tile can use: pass a NumPy array, a PyTorch tensor, a CuPy array, or an object with __cuda_array_interface__ or __dlpack__",
            obj.get_type().name()?
        ),
    ))
}

/// `sys.modules`.
fn modules(py: Python<'_>) -> PyResult<&Bound<'_, PyDict>> {
    static MODULES: PyOnceLock<Py<PyDict>> = PyOnceLock::new();
    Ok(MODULES
        .get_or_try_init(py, || -> PyResult<_> {
            Ok(py
                .import("sys")?
                .getattr("modules")?
                .cast_into::<PyDict>()?
                .unbind())
        })?
        .bind(py))
}

/// A module if it has been imported (Tile imports none itself).
pub fn loaded<'py>(py: Python<'py>, name: &str) -> PyResult<Option<Bound<'py, PyAny>>> {
    modules(py)?.get_item(name)
}

/// Whether `ty` is a type defined in C by an extension module (not a
/// heap type made by a class statement, whose attributes Python code can
/// replace), named `module.name`.
fn is_c_type(ty: &Bound<'_, PyAny>, module: &str, names: &[&str]) -> bool {
    let Ok(ty) = ty.cast::<pyo3::types::PyType>() else {
        return false;
    };
    // SAFETY: a type object.
    let flags = unsafe { ffi::PyType_GetFlags(ty.as_ptr().cast()) };
    flags & ffi::Py_TPFLAGS_HEAPTYPE == 0
        && ty
            .module()
            .is_ok_and(|m| m.to_str().is_ok_and(|m| m == module))
        && ty
            .name()
            .is_ok_and(|n| n.to_str().is_ok_and(|n| names.contains(&n)))
}

/// PyTorch's tensor types, once PyTorch has been imported by anyone.
pub struct TorchTypes {
    /// `torch.Tensor` and `torch.nn.Parameter`: the tensors Tile takes.
    pub tensor: Py<PyAny>,
    pub parameter: Py<PyAny>,
    /// `torch._C.TensorBase`, the C type every tensor is an instance of.
    pub base: Py<PyAny>,
    /// `torch._C._CudaStreamBase`, the C type of PyTorch's CUDA streams.
    pub stream: Option<Py<PyAny>>,
}

/// PyTorch's types, if `torch` has been imported and is PyTorch: its
/// tensor base a C type, `Tensor` and `Parameter` derived from it.
pub fn torch_types(py: Python<'_>) -> PyResult<Option<&'static TorchTypes>> {
    static TORCH: PyOnceLock<Option<TorchTypes>> = PyOnceLock::new();
    if let Some(t) = TORCH.get(py) {
        return Ok(t.as_ref());
    }
    let Some(torch) = loaded(py, "torch")? else {
        return Ok(None);
    };
    let found = TORCH.get_or_init(py, || {
        let get = || -> PyResult<Option<TorchTypes>> {
            let c = torch.getattr("_C")?;
            let base = c
                .getattr("TensorBase")
                .or_else(|_| c.getattr("_TensorBase"))?;
            if !is_c_type(&base, "torch._C", &["TensorBase", "_TensorBase"]) {
                return Ok(None);
            }
            let tensor = torch.getattr("Tensor")?;
            let parameter = torch.getattr("nn")?.getattr("Parameter")?;
            for t in [&tensor, &parameter] {
                // SAFETY: type objects (checked by the cast).
                let sub = t.cast::<pyo3::types::PyType>().is_ok_and(|t| unsafe {
                    ffi::PyType_IsSubtype(t.as_ptr().cast(), base.as_ptr().cast()) != 0
                });
                if !sub {
                    return Ok(None);
                }
            }
            let stream = c
                .getattr("_CudaStreamBase")
                .ok()
                .filter(|s| is_c_type(s, "torch._C", &["_CudaStreamBase"]))
                .map(Bound::unbind);
            Ok(Some(TorchTypes {
                tensor: tensor.unbind(),
                parameter: parameter.unbind(),
                base: base.unbind(),
                stream,
            }))
        };
        get().ok().flatten()
    });
    Ok(found.as_ref())
}

/// `numpy.ndarray`'s type object, once NumPy has been imported by anyone
/// (0 until then; 1 when `numpy` is not NumPy).
static NDARRAY: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// The fast path for an exact `numpy.ndarray`: its fields read from
/// NumPy's C structure, whose layout NumPy keeps stable for its C API
/// (`PyArray_DATA`, `PyArray_NDIM`, ... are field reads). Only the C type
/// named `numpy.ndarray` qualifies (a class a script put in
/// `sys.modules` does not); subclasses and anything unusual (non-native
/// byte order, other dtypes, non-contiguous) go through the buffer
/// protocol and its messages. The array is held for the call, so NumPy
/// refuses to resize it meanwhile.
fn numpy_array(py: Python<'_>, obj: &Bound<'_, PyAny>, what: What<'_>) -> PyResult<Option<Desc>> {
    use std::sync::atomic::Ordering;
    let ty = obj.get_type().as_ptr() as usize;
    let mut nd = NDARRAY.load(Ordering::Relaxed);
    if nd == 0 {
        let Some(numpy) = loaded(py, "numpy")? else {
            return Ok(None);
        };
        nd = 1;
        if let Ok(t) = numpy.getattr("ndarray") {
            if is_c_type(&t, "numpy", &["ndarray"]) {
                nd = t.as_ptr() as usize;
                // Kept for the life of the process.
                std::mem::forget(t.unbind());
            }
        }
        NDARRAY.store(nd, Ordering::Relaxed);
    }
    if ty != nd {
        return Ok(None);
    }
    /// `PyArrayObject_fields` up to `flags`.
    #[repr(C)]
    struct Fields {
        head: [usize; 2],
        data: *mut u8,
        nd: i32,
        dimensions: *const isize,
        strides: *const isize,
        base: *mut ffi::PyObject,
        descr: *const Descr,
        flags: i32,
    }
    /// `PyArray_Descr` up to `type_num` (the same in NumPy 1 and 2).
    #[repr(C)]
    struct Descr {
        head: [usize; 2],
        typeobj: *mut ffi::PyObject,
        kind: u8,
        type_: u8,
        byteorder: u8,
        flags: u8,
        type_num: i32,
    }
    const C_CONTIGUOUS: i32 = 0x1;
    const ALIGNED: i32 = 0x100;
    const WRITEABLE: i32 = 0x400;
    // SAFETY: `obj` is exactly a numpy.ndarray, whose object starts with
    // these fields; its descriptor likewise.
    let (a, descr) = unsafe {
        let a = &*(obj.as_ptr() as *const Fields);
        (a, &*a.descr)
    };
    let dtype = match (descr.type_num, descr.byteorder) {
        (11, b'=' | b'<' | b'|') => DType::F32,
        (12, b'=' | b'<' | b'|') => DType::F64,
        (5, b'=' | b'<' | b'|') => DType::I32,
        (0, _) => DType::Bool,
        _ => {
            let name = obj.getattr("dtype")?.str()?.to_string();
            return Err(unusable(
                &what.to_string(),
                format!("dtype {name} is not supported (Tile takes float32, float64, int32 and bool in native byte order)"),
            ));
        }
    };
    if a.flags & (C_CONTIGUOUS | ALIGNED) != C_CONTIGUOUS | ALIGNED || a.nd < 0 || a.nd > 64 {
        return Ok(None);
    }
    let mut shape = Vec::with_capacity(a.nd as usize);
    for d in 0..a.nd as usize {
        // SAFETY: `nd` extents.
        let n = unsafe { *a.dimensions.add(d) };
        shape.push(usize::try_from(n).map_err(|_| unusable(&what.to_string(), "negative extent"))?);
    }
    Ok(Some(Desc {
        addr: a.data as u64,
        shape,
        dtype,
        device: Device::Cpu,
        read_only: (a.flags & WRITEABLE == 0)
            .then_some("is read-only (a NumPy array without the WRITEABLE flag)"),
        stream: None,
        torch_device: None,
        kind: NDARRAY_KIND,
        keep: Keep::Object(obj.clone().unbind()),
    }))
}

/// A dtype from a name such as `float32` (PyTorch's and NumPy's names).
fn dtype_named(name: &str, what: &str) -> PyResult<DType> {
    match name {
        "float32" => Ok(DType::F32),
        "float64" => Ok(DType::F64),
        "int32" => Ok(DType::I32),
        "bool" => Ok(DType::Bool),
        other => Err(unusable(
            what,
            format!("dtype {other} is not supported (Tile takes float32, float64, int32 and bool)"),
        )),
    }
}

/// Refuses strides that are not compact row-major (in elements of
/// `itemsize` bytes when `in_bytes`).
fn check_compact(shape: &[usize], strides: &[i64], itemsize: i64, what: &str) -> PyResult<()> {
    let mut expect: i64 = itemsize;
    for (&n, &s) in shape.iter().zip(strides).rev() {
        if n > 1 && s != expect {
            return Err(unusable(
                what,
                format!(
                    "is not contiguous (shape {shape:?}, strides {strides:?}); Tile reads compact row-major memory: pass a contiguous copy (e.g. .contiguous() or numpy.ascontiguousarray)"
                ),
            ));
        }
        expect = expect.saturating_mul(n.max(1) as i64);
    }
    Ok(())
}

fn torch(py: Python<'_>, obj: &Bound<'_, PyAny>, what: &str) -> PyResult<Desc> {
    // PyTorch's dtype objects, compared by identity.
    static DTYPES: PyOnceLock<Vec<(Py<PyAny>, DType)>> = PyOnceLock::new();
    let dtypes = DTYPES.get_or_try_init(py, || -> PyResult<_> {
        let torch = py.import("torch")?;
        Ok(vec![
            (torch.getattr("float32")?.unbind(), DType::F32),
            (torch.getattr("float64")?.unbind(), DType::F64),
            (torch.getattr("int32")?.unbind(), DType::I32),
            (torch.getattr("bool")?.unbind(), DType::Bool),
        ])
    })?;
    let dt = obj.getattr("dtype")?;
    let dtype = match dtypes.iter().find(|(d, _)| d.as_ptr() == dt.as_ptr()) {
        Some((_, t)) => *t,
        None => dtype_named(dt.str()?.to_str()?.trim_start_matches("torch."), what)?,
    };
    let shape: Vec<usize> = obj.getattr("shape")?.extract()?;
    if !obj.call_method0("is_contiguous")?.extract::<bool>()? {
        let strides: Vec<i64> = obj.call_method0("stride")?.extract()?;
        check_compact(&shape, &strides, 1, what)?;
    }
    let addr: u64 = obj.call_method0("data_ptr")?.extract()?;
    let cuda: bool = obj.getattr("is_cuda")?.extract()?;
    // Writing a tensor that requires grad while autograd records is what
    // PyTorch refuses for in-place operations on leaves, and for others
    // Tile's writes would not be in the graph.
    let read_only = if obj.getattr("requires_grad")?.extract::<bool>()?
        && py
            .import("torch")?
            .call_method0("is_grad_enabled")?
            .extract::<bool>()?
    {
        Some("requires grad, and autograd does not see Tile's writes: write it under torch.no_grad() (as optimizers do), or into a tensor that does not require grad")
    } else {
        None
    };
    let (device, torch_device) = if cuda {
        let ordinal: i32 = obj.call_method0("get_device")?.extract()?;
        (Device::Cuda(Some(ordinal)), Some(ordinal))
    } else {
        let kind = obj.getattr("device")?.getattr("type")?.str()?.to_string();
        if kind != "cpu" {
            return Err(unusable(
                what,
                format!("is a PyTorch tensor on device type {kind}; Tile runs on cpu and cuda"),
            ));
        }
        (Device::Cpu, None)
    };
    Ok(Desc {
        addr,
        shape,
        dtype,
        device,
        read_only,
        stream: None,
        torch_device,
        kind: TORCH_KIND,
        keep: Keep::Object(obj.clone().unbind()),
    })
}

/// PyTorch's current stream on device `ordinal`, as a raw `cudaStream_t`.
pub fn torch_stream(py: Python<'_>, ordinal: i32) -> PyResult<u64> {
    static GET: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
    let get = GET.get_or_try_init(py, || -> PyResult<Py<PyAny>> {
        Ok(py
            .import("torch")?
            .getattr("_C")?
            .getattr("_cuda_getCurrentRawStream")?
            .unbind())
    })?;
    get.bind(py).call1((ordinal,))?.extract()
}

fn buffer(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<Desc> {
    // SAFETY: a zeroed Py_buffer is the documented starting state;
    // PyObject_GetBuffer fills it or fails without touching ownership.
    let mut view: Box<ffi::Py_buffer> = Box::new(unsafe { std::mem::zeroed() });
    let flags = ffi::PyBUF_STRIDES | ffi::PyBUF_FORMAT;
    if unsafe { ffi::PyObject_GetBuffer(obj.as_ptr(), &mut *view, flags) } != 0 {
        return Err(PyErr::fetch(obj.py()));
    }
    // From here on the view is released when `keep` drops.
    let v = &*view;
    let ndim = usize::try_from(v.ndim).unwrap_or(0);
    let itemsize = v.itemsize;
    let format = if v.format.is_null() {
        "B".to_string()
    } else {
        // SAFETY: PyBUF_FORMAT asks for a NUL-terminated format string.
        unsafe { std::ffi::CStr::from_ptr(v.format) }
            .to_string_lossy()
            .into_owned()
    };
    let mut shape = Vec::with_capacity(ndim);
    let mut strides = Vec::with_capacity(ndim);
    for d in 0..ndim {
        // SAFETY: PyBUF_STRIDES fills `ndim` shapes and strides.
        let (n, s) = unsafe { (*v.shape.add(d), *v.strides.add(d)) };
        shape.push(usize::try_from(n).map_err(|_| unusable(what, "negative extent"))?);
        strides.push(s as i64);
    }
    let addr = v.buf as u64;
    let read_only = (v.readonly != 0).then_some("is read-only (its buffer is exported read-only)");
    let mut desc = Desc {
        addr,
        shape,
        dtype: DType::F32,
        device: Device::Cpu,
        read_only,
        stream: None,
        torch_device: None,
        kind: "buffer",
        keep: Keep::Buffer(view),
    };
    let code = format.trim_start_matches(['@', '=', '<']);
    let dtype = match (code, itemsize) {
        ("f", 4) => DType::F32,
        ("d", 8) => DType::F64,
        ("i" | "l", 4) => DType::I32,
        ("?", 1) => DType::Bool,
        _ => {
            return Err(unusable(
                what,
                format!(
                    "buffer format {format:?} ({itemsize}-byte items) is not supported (Tile takes float32, float64, int32 and bool in native byte order)"
                ),
            ))
        }
    };
    check_compact(&desc.shape, &strides, itemsize as i64, what)?;
    desc.dtype = dtype;
    Ok(desc)
}

/// A dtype from a NumPy type string such as `<f4`.
fn dtype_typestr(t: &str, what: &str) -> PyResult<DType> {
    match t {
        "<f4" | "=f4" => Ok(DType::F32),
        "<f8" | "=f8" => Ok(DType::F64),
        "<i4" | "=i4" => Ok(DType::I32),
        "|b1" => Ok(DType::Bool),
        other => Err(unusable(
            what,
            format!("type string {other:?} is not supported (Tile takes <f4, <f8, <i4 and |b1)"),
        )),
    }
}

fn cuda_interface(obj: &Bound<'_, PyAny>, cai: &Bound<'_, PyAny>, what: &str) -> PyResult<Desc> {
    let cai = cai
        .cast::<PyDict>()
        .map_err(|_| unusable(what, "__cuda_array_interface__ is not a dict"))?;
    let get = |k: &str| -> PyResult<Bound<'_, PyAny>> {
        cai.get_item(k)?
            .ok_or_else(|| unusable(what, format!("__cuda_array_interface__ has no {k:?}")))
    };
    let shape: Vec<usize> = get("shape")?.extract()?;
    let dtype = dtype_typestr(&get("typestr")?.extract::<String>()?, what)?;
    let data = get("data")?;
    let data = data
        .cast::<PyTuple>()
        .map_err(|_| unusable(what, "__cuda_array_interface__'s data is not a tuple"))?;
    let addr: u64 = data.get_item(0)?.extract()?;
    let readonly: bool = data.get_item(1)?.extract()?;
    if let Some(mask) = cai.get_item("mask")? {
        if !mask.is_none() {
            return Err(unusable(what, "masked CUDA arrays are not supported"));
        }
    }
    if let Some(strides) = cai.get_item("strides")? {
        if !strides.is_none() {
            let strides: Vec<i64> = strides.extract()?;
            check_compact(&shape, &strides, dtype.size_bytes() as i64, what)?;
        }
    }
    // Version 3's `stream`: the producer's stream, which work on this
    // array must follow (1: legacy default, 2: per-thread default).
    let stream = match cai.get_item("stream")? {
        Some(s) if !s.is_none() => Some(s.extract::<u64>()?),
        _ => None,
    };
    Ok(Desc {
        addr,
        shape,
        dtype,
        device: Device::Cuda(None),
        read_only: readonly.then_some("is read-only (its __cuda_array_interface__ says so)"),
        stream,
        torch_device: None,
        kind: "__cuda_array_interface__",
        keep: Keep::Object(obj.clone().unbind()),
    })
}

/// DLPack's `DLTensor` (the legacy, unversioned capsule `dltensor`).
#[repr(C)]
struct DlTensor {
    data: *mut std::ffi::c_void,
    device_type: i32,
    device_id: i32,
    ndim: i32,
    code: u8,
    bits: u8,
    lanes: u16,
    shape: *const i64,
    strides: *const i64,
    byte_offset: u64,
}

fn dlpack(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<Desc> {
    // `__dlpack_device__` (anyone's Python) only decides how to ask for
    // the capsule; the device is the one the capsule's tensor records.
    let (asked, _): (i32, i32) = obj.call_method0("__dlpack_device__")?.extract()?;
    // Device work is ordered after the producer's by the legacy default
    // stream (DLPack's stream 1), where Tile's launches then go.
    let capsule = if matches!(asked, 2 | 13) {
        let kwargs = PyDict::new(obj.py());
        kwargs.set_item("stream", 1)?;
        obj.call_method("__dlpack__", (), Some(&kwargs))?
    } else {
        obj.call_method0("__dlpack__")?
    };
    // SAFETY: `PyCapsule_GetPointer` checks the capsule's name; the
    // tensor it points to lives as long as the capsule, which `keep`
    // holds for the call.
    let t = unsafe { ffi::PyCapsule_GetPointer(capsule.as_ptr(), c"dltensor".as_ptr()) }
        as *const DlTensor;
    if t.is_null() {
        return Err(PyErr::fetch(obj.py()));
    }
    // SAFETY: a valid DLTensor from its producer (a capsule is made by
    // C code, never by a Python class).
    let t = unsafe { &*t };
    let device = match t.device_type {
        1 | 3 => Device::Cpu,
        2 | 13 => Device::Cuda(Some(t.device_id)),
        other => {
            return Err(unusable(
                what,
                format!("DLPack device type {other} is not supported (cpu and cuda are)"),
            ))
        }
    };
    let ndim = usize::try_from(t.ndim).map_err(|_| unusable(what, "negative rank"))?;
    let mut shape = Vec::with_capacity(ndim);
    let mut strides = Vec::with_capacity(ndim);
    for d in 0..ndim {
        // SAFETY: DLPack gives `ndim` extents, and strides unless null.
        let n = unsafe { *t.shape.add(d) };
        shape.push(usize::try_from(n).map_err(|_| unusable(what, "negative extent"))?);
        if !t.strides.is_null() {
            strides.push(unsafe { *t.strides.add(d) });
        }
    }
    let dtype = match (t.code, t.bits, t.lanes) {
        (2, 32, 1) => DType::F32,
        (2, 64, 1) => DType::F64,
        (0, 32, 1) => DType::I32,
        (6, 8, 1) => DType::Bool,
        (c, b, l) => {
            return Err(unusable(
                what,
                format!("DLPack dtype (code {c}, {b} bits, {l} lanes) is not supported"),
            ))
        }
    };
    if !strides.is_empty() {
        check_compact(&shape, &strides, 1, what)?;
    }
    let addr = (t.data as u64)
        .checked_add(t.byte_offset)
        .ok_or_else(|| unusable(what, "DLPack address overflows"))?;
    Ok(Desc {
        addr,
        shape,
        dtype,
        device,
        read_only: Some(
            "is read-only: it came through __dlpack__, which carries no write permission (JAX arrays are immutable): pass outputs through another protocol",
        ),
        stream: None,
        torch_device: None,
        kind: "__dlpack__",
        keep: Keep::Object(capsule.unbind()),
    })
}

/// Tells PyTorch's autograd that `tensors` were written in place (their
/// version counters; a no-op for inference tensors): one call of
/// `torch._C._increment_version` with the tuple where PyTorch takes one
/// (probed once, with an empty tuple), else
/// `torch.autograd.graph.increment_version` per tensor.
pub fn increment_versions(py: Python<'_>, tensors: Vec<Bound<'_, PyAny>>) -> PyResult<()> {
    /// The function, and whether it takes a tuple.
    static BUMP: PyOnceLock<(Py<PyAny>, bool)> = PyOnceLock::new();
    if tensors.is_empty() {
        return Ok(());
    }
    let (f, tuple) = BUMP.get_or_try_init(py, || -> PyResult<(Py<PyAny>, bool)> {
        let torch = py.import("torch")?;
        let c = torch.getattr("_C")?.getattr("_increment_version")?;
        // Asked with an empty tuple: accepted only where it takes tuples.
        if c.call1((PyTuple::empty(py),)).is_ok() {
            return Ok((c.unbind(), true));
        }
        let f = torch
            .getattr("autograd")?
            .getattr("graph")?
            .getattr("increment_version")?;
        Ok((f.unbind(), false))
    })?;
    let f = f.bind(py);
    if *tuple {
        f.call1((PyTuple::new(py, tensors)?,))?;
    } else {
        for t in tensors {
            f.call1((t,))?;
        }
    }
    Ok(())
}
