//! The CUDA stream a launch goes on, and why Tile may pass it to the
//! driver: a stream handle is a pointer the driver dereferences, so a
//! made-up number would crash the process. Tile takes the handles it can
//! vouch for: the legacy and per-thread default streams (0, 1, 2),
//! PyTorch's stream objects, and the current stream of PyTorch or CuPy.

use crate::arrays::{loaded, torch_stream, torch_types, Desc};
use pyo3::prelude::*;
use pyo3::types::PyInt;

/// The stream for a launch on device `ordinal` over `descs`: `given` (an
/// int, a `torch.cuda.Stream`, or an object with `cuda_stream` or `ptr`),
/// else PyTorch's current stream when a tensor is PyTorch's, else the
/// stream an array's `__cuda_array_interface__` names, else the legacy
/// default stream.
pub fn choose(
    py: Python<'_>,
    given: Option<&Bound<'_, PyAny>>,
    descs: &[Desc],
    ordinal: i32,
) -> PyResult<u64> {
    if let Some(s) = given {
        return named(py, s, ordinal);
    }
    if let Some(device) = descs.iter().find_map(|d| d.torch_device) {
        return torch_stream(py, device);
    }
    match descs.iter().find(|d| d.stream.is_some()) {
        Some(d) => vouch(py, d.stream.unwrap_or(0), ordinal, d.kind),
        None => Ok(0),
    }
}

/// The handle a `stream=` argument names.
fn named(py: Python<'_>, s: &Bound<'_, PyAny>, ordinal: i32) -> PyResult<u64> {
    if s.is_instance_of::<PyInt>() {
        return vouch(py, s.extract()?, ordinal, "stream=");
    }
    // PyTorch's streams: read through the C base type's own attributes,
    // which a subclass cannot replace.
    if let Some(base) = torch_types(py)?.and_then(|t| t.stream.as_ref()) {
        let base = base.bind(py);
        if s.is_instance(base)? {
            let get = |name: &str| base.getattr(name)?.call_method1("__get__", (s, base));
            let device: i32 = get("device_index")?.extract()?;
            if device != ordinal {
                return Err(crate::err(format!(
                    "stream= is a PyTorch stream of cuda:{device}, but Tile runs on device {ordinal} (set TILE_CUDA_DEVICE)"
                )));
            }
            return get("cuda_stream")?.extract();
        }
    }
    for attr in ["cuda_stream", "ptr"] {
        if let Ok(v) = s.getattr(attr) {
            return vouch(py, v.extract()?, ordinal, "stream=");
        }
    }
    Err(crate::err(format!(
        "stream= is a {}; pass an int handle, a torch.cuda.Stream or a cupy.cuda.Stream",
        s.get_type().name()?
    )))
}

/// `handle` if Tile can vouch for it: a default stream, or the current
/// stream of PyTorch or CuPy on this device.
fn vouch(py: Python<'_>, handle: u64, ordinal: i32, from: &str) -> PyResult<u64> {
    if handle <= 2 {
        return Ok(handle);
    }
    if loaded(py, "torch")?.is_some() && torch_stream(py, ordinal).ok() == Some(handle) {
        return Ok(handle);
    }
    if let Some(cupy) = loaded(py, "cupy")? {
        let current = cupy
            .getattr("cuda")
            .and_then(|c| c.call_method0("get_current_stream"))
            .and_then(|s| s.getattr("ptr"))
            .and_then(|p| p.extract::<u64>());
        if current.ok() == Some(handle) {
            return Ok(handle);
        }
    }
    Err(crate::err(format!(
        "{from} names CUDA stream {handle:#x}, which is not a default stream (0, 1, 2) nor the current stream of PyTorch or CuPy on device {ordinal}; Tile passes only streams it can vouch for to the driver (an invalid handle crashes the process): pass the stream object (torch.cuda.Stream), or make the stream current"
    )))
}
