//! The CUDA driver API, loaded at run time from `libcuda.so.1`.
//!
//! Only the few entry points Tile needs are bound, by name, with their C
//! signatures. Nothing is linked at build time, so the crate builds and its
//! tests run on machines without CUDA; a missing driver is a plain error.

use crate::CudaError;
use libloading::Library;
use std::ffi::{c_char, c_int, c_uint, c_void, CStr};

/// `CUresult`.
pub type CuResult = c_int;
/// `CUdeviceptr`.
pub type DevicePtr = u64;
/// Opaque driver handles (`CUcontext`, `CUmodule`, ...).
pub type Handle = *mut c_void;

macro_rules! driver_api {
    ($($field:ident: $sym:literal => fn($($arg:ty),*);)*) => {
        /// The bound driver entry points.
        #[allow(missing_docs)]
        pub struct Driver {
            _lib: Library,
            $(pub $field: unsafe extern "C" fn($($arg),*) -> CuResult,)*
        }

        impl Driver {
            fn bind(lib: Library) -> Result<Driver, CudaError> {
                // SAFETY: each symbol is looked up by its documented name
                // and given its documented C signature.
                unsafe {
                    $(let $field = *lib
                        .get::<unsafe extern "C" fn($($arg),*) -> CuResult>(concat!($sym, "\0").as_bytes())
                        .map_err(|e| CudaError::NoDriver(format!("libcuda lacks {}: {e}", $sym)))?;)*
                    Ok(Driver { _lib: lib, $($field,)* })
                }
            }
        }
    };
}

driver_api! {
    init: "cuInit" => fn(c_uint);
    driver_get_version: "cuDriverGetVersion" => fn(*mut c_int);
    device_get_count: "cuDeviceGetCount" => fn(*mut c_int);
    device_get: "cuDeviceGet" => fn(*mut c_int, c_int);
    device_get_name: "cuDeviceGetName" => fn(*mut c_char, c_int, c_int);
    device_get_attribute: "cuDeviceGetAttribute" => fn(*mut c_int, c_int, c_int);
    primary_ctx_retain: "cuDevicePrimaryCtxRetain" => fn(*mut Handle, c_int);
    ctx_set_current: "cuCtxSetCurrent" => fn(Handle);
    ctx_synchronize: "cuCtxSynchronize" => fn();
    module_load_data: "cuModuleLoadData" => fn(*mut Handle, *const c_void);
    module_unload: "cuModuleUnload" => fn(Handle);
    module_get_function: "cuModuleGetFunction" => fn(*mut Handle, Handle, *const c_char);
    func_set_attribute: "cuFuncSetAttribute" => fn(Handle, c_int, c_int);
    func_get_attribute: "cuFuncGetAttribute" => fn(*mut c_int, c_int, Handle);
    mem_alloc: "cuMemAlloc_v2" => fn(*mut DevicePtr, usize);
    mem_free: "cuMemFree_v2" => fn(DevicePtr);
    memcpy_htod: "cuMemcpyHtoD_v2" => fn(DevicePtr, *const c_void, usize);
    memcpy_dtoh: "cuMemcpyDtoH_v2" => fn(*mut c_void, DevicePtr, usize);
    memcpy_dtod_async: "cuMemcpyDtoDAsync_v2" => fn(DevicePtr, DevicePtr, usize, Handle);
    memset_d32: "cuMemsetD32_v2" => fn(DevicePtr, c_uint, usize);
    launch_kernel: "cuLaunchKernel" => fn(Handle, c_uint, c_uint, c_uint, c_uint, c_uint, c_uint, c_uint, Handle, *mut *mut c_void, *mut *mut c_void);
    stream_create: "cuStreamCreate" => fn(*mut Handle, c_uint);
    stream_synchronize: "cuStreamSynchronize" => fn(Handle);
    event_create: "cuEventCreate" => fn(*mut Handle, c_uint);
    event_record: "cuEventRecord" => fn(Handle, Handle);
    event_synchronize: "cuEventSynchronize" => fn(Handle);
    event_elapsed_time: "cuEventElapsedTime" => fn(*mut f32, Handle, Handle);
    get_error_string: "cuGetErrorString" => fn(CuResult, *mut *const c_char);
    pointer_get_attributes: "cuPointerGetAttributes" => fn(c_uint, *mut c_int, *mut *mut c_void, DevicePtr);
}

/// `CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT`.
pub const ATTR_SM_COUNT: c_int = 16;
/// `CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR`.
pub const ATTR_CC_MAJOR: c_int = 75;
/// `CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR`.
pub const ATTR_CC_MINOR: c_int = 76;
/// `CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN`.
pub const ATTR_SHARED_OPTIN: c_int = 97;
/// `CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL`.
pub const PTR_DEVICE_ORDINAL: c_int = 9;
/// `CU_POINTER_ATTRIBUTE_RANGE_START_ADDR`.
pub const PTR_RANGE_START: c_int = 11;
/// `CU_POINTER_ATTRIBUTE_RANGE_SIZE`.
pub const PTR_RANGE_SIZE: c_int = 12;
/// `CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK`.
pub const FUNC_ATTR_MAX_THREADS: c_int = 0;
/// `CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES`.
pub const FUNC_ATTR_MAX_DYNAMIC_SHARED: c_int = 8;

impl Driver {
    /// Loads `libcuda` (`TILE_CUDA_DRIVER` overrides the path).
    pub fn load() -> Result<Driver, CudaError> {
        let names: Vec<String> = match std::env::var("TILE_CUDA_DRIVER") {
            Ok(p) => vec![p],
            Err(_) => vec!["libcuda.so.1".into(), "libcuda.so".into()],
        };
        let mut last = String::new();
        for n in &names {
            // SAFETY: loading the CUDA driver runs its initialisers, which
            // is what every CUDA program does.
            match unsafe { Library::new(n) } {
                Ok(lib) => return Driver::bind(lib),
                Err(e) => last = format!("{n}: {e}"),
            }
        }
        Err(CudaError::NoDriver(format!(
            "the NVIDIA driver library was not found ({last}); install the NVIDIA driver or set TILE_CUDA_DRIVER to libcuda.so"
        )))
    }

    /// Turns a `CUresult` into an error naming the call.
    pub fn check(&self, r: CuResult, what: &str) -> Result<(), CudaError> {
        if r == 0 {
            return Ok(());
        }
        let mut s: *const c_char = std::ptr::null();
        // SAFETY: cuGetErrorString writes a pointer to a static string.
        let msg = unsafe {
            if (self.get_error_string)(r, &mut s) == 0 && !s.is_null() {
                CStr::from_ptr(s).to_string_lossy().into_owned()
            } else {
                "unknown error".into()
            }
        };
        Err(CudaError::Driver {
            call: what.to_string(),
            code: r,
            message: msg,
        })
    }
}
