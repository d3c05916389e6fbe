//! Describing a Python array without copying it: its address, shape,
//! dtype, device and writability, from PyTorch tensors, the buffer protocol
//! (NumPy), `__cuda_array_interface__` (CuPy, Numba) or `__dlpack__`.
//!
//! Nothing a foreign object reports is trusted beyond what is checked
//! here and in the runtimes: strides must be compact row-major, sizes are
//! multiplied with overflow checks, and the runtimes check every address
//! again (CUDA addresses against the driver's record of their allocation).

use pyo3::exceptions::PyValueError;
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
    Object(#[allow(dead_code)] Py<PyAny>),
}

/// One array, described.
pub struct Desc {
    pub addr: u64,
    pub shape: Vec<usize>,
    pub dtype: DType,
    pub device: Device,
    /// Whether Tile may write it.
    pub writable: bool,
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

impl Desc {
    /// Its size in bytes (checked against the shape by the runtimes).
    pub fn bytes(&self) -> PyResult<usize> {
        self.shape
            .iter()
            .try_fold(self.dtype.size_bytes(), |a, &n| a.checked_mul(n))
            .ok_or_else(|| PyValueError::new_err("array size overflows"))
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
    if is_torch_tensor(obj)? {
        return torch(py, obj, what);
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

/// `numpy.ndarray`'s type object, once NumPy has been imported by anyone
/// (0 until then).
static NDARRAY: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// The fast path for an exact `numpy.ndarray`: its fields read from
/// NumPy's C structure, whose layout NumPy keeps stable for its C API
/// (`PyArray_DATA`, `PyArray_NDIM`, ... are field reads). Subclasses and
/// anything unusual (non-native byte order, other dtypes, non-contiguous)
/// go through the buffer protocol and its messages.
fn numpy_array(py: Python<'_>, obj: &Bound<'_, PyAny>, what: What<'_>) -> PyResult<Option<Desc>> {
    use std::sync::atomic::Ordering;
    let ty = obj.get_type().as_ptr() as usize;
    let mut nd = NDARRAY.load(Ordering::Relaxed);
    if nd == 0 {
        let modules = py.import("sys")?.getattr("modules")?;
        let Ok(numpy) = modules.get_item("numpy") else {
            return Ok(None);
        };
        let t = numpy.getattr("ndarray")?;
        nd = t.as_ptr() as usize;
        // Kept for the life of the process.
        std::mem::forget(t.unbind());
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
        writable: a.flags & WRITEABLE != 0,
        stream: None,
        torch_device: None,
        kind: "numpy.ndarray",
        keep: Keep::Object(obj.clone().unbind()),
    }))
}

fn is_torch_tensor(obj: &Bound<'_, PyAny>) -> PyResult<bool> {
    let ty = obj.get_type();
    let module = ty.module()?;
    let module = module.to_str()?;
    Ok((module == "torch" || module.starts_with("torch.")) && obj.hasattr("data_ptr")?)
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
        writable: true,
        stream: None,
        torch_device,
        kind: "torch.Tensor",
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
    let readonly = v.readonly != 0;
    let mut desc = Desc {
        addr,
        shape,
        dtype: DType::F32,
        device: Device::Cpu,
        writable: !readonly,
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
        writable: !readonly,
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
    let (device_type, device_id): (i32, i32) = obj.call_method0("__dlpack_device__")?.extract()?;
    let device = match device_type {
        1 | 3 => Device::Cpu,
        2 | 13 => Device::Cuda(Some(device_id)),
        other => {
            return Err(unusable(
                what,
                format!("DLPack device type {other} is not supported (cpu and cuda are)"),
            ))
        }
    };
    // Device work is ordered after the producer's by the legacy default
    // stream (DLPack's stream 1), where Tile's launches then go.
    let capsule = match device {
        Device::Cpu => obj.call_method0("__dlpack__")?,
        Device::Cuda(_) => {
            let kwargs = PyDict::new(obj.py());
            kwargs.set_item("stream", 1)?;
            obj.call_method("__dlpack__", (), Some(&kwargs))?
        }
    };
    // SAFETY: `PyCapsule_GetPointer` checks the capsule's name; the
    // tensor it points to lives as long as the capsule, which `keep`
    // holds for the call.
    let t = unsafe { ffi::PyCapsule_GetPointer(capsule.as_ptr(), c"dltensor".as_ptr()) }
        as *const DlTensor;
    if t.is_null() {
        return Err(PyErr::fetch(obj.py()));
    }
    // SAFETY: a valid DLTensor from its producer.
    let t = unsafe { &*t };
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
        // DLPack carries no write permission (JAX arrays are immutable):
        // outputs must come through another protocol.
        writable: false,
        stream: None,
        torch_device: None,
        kind: "__dlpack__",
        keep: Keep::Object(capsule.unbind()),
    })
}
