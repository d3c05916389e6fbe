//! The CUDA runtime: one context per process (the device's primary
//! context), a stream, device buffers, module loading and launches.

use crate::driver::{
    DevicePtr, Driver, Handle, ATTR_CC_MAJOR, ATTR_CC_MINOR, ATTR_SHARED_OPTIN, ATTR_SM_COUNT,
    FUNC_ATTR_MAX_DYNAMIC_SHARED, PTR_DEVICE_ORDINAL, PTR_RANGE_SIZE, PTR_RANGE_START,
};
use crate::CudaError;
use std::ffi::c_void;
use std::sync::{Arc, OnceLock};

/// The device Tile runs on (ordinal `TILE_CUDA_DEVICE`, default 0).
pub struct Gpu {
    pub(crate) drv: Driver,
    ctx: Handle,
    pub(crate) stream: Handle,
    /// The device's name.
    pub name: String,
    /// The device's ordinal.
    pub ordinal: i32,
    /// Streaming multiprocessors.
    pub sm_count: u32,
    /// Compute capability (major, minor).
    pub cc: (i32, i32),
    /// Driver version (e.g. 13000).
    pub driver_version: i32,
    /// Shared memory a block may use when the kernel opts in, in bytes.
    pub max_shared_optin: u32,
}

// SAFETY: the driver's handles may be used from any thread once the
// context is made current there, which every public operation does first.
unsafe impl Send for Gpu {}
unsafe impl Sync for Gpu {}

static GPU: OnceLock<Result<Arc<Gpu>, CudaError>> = OnceLock::new();

/// The process's GPU, initialised on first use. Errors say plainly whether
/// the driver or a device is missing.
pub fn gpu() -> Result<Arc<Gpu>, CudaError> {
    GPU.get_or_init(|| init().map(Arc::new)).clone()
}

fn init() -> Result<Gpu, CudaError> {
    let drv = Driver::load()?;
    // SAFETY: documented driver calls with valid out-pointers.
    unsafe {
        let r = (drv.init)(0);
        if r == 100 {
            return Err(CudaError::NoDevice(
                "the NVIDIA driver reports no CUDA device".into(),
            ));
        }
        drv.check(r, "cuInit")?;
        let mut count = 0;
        drv.check((drv.device_get_count)(&mut count), "cuDeviceGetCount")?;
        if count == 0 {
            return Err(CudaError::NoDevice(
                "the NVIDIA driver reports no CUDA device".into(),
            ));
        }
        let ordinal: i32 = std::env::var("TILE_CUDA_DEVICE")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(0);
        if ordinal < 0 || ordinal >= count {
            return Err(CudaError::NoDevice(format!(
                "TILE_CUDA_DEVICE={ordinal}, but there are {count} device(s)"
            )));
        }
        let mut dev = 0;
        drv.check((drv.device_get)(&mut dev, ordinal), "cuDeviceGet")?;
        let mut name = vec![0 as std::ffi::c_char; 256];
        drv.check(
            (drv.device_get_name)(name.as_mut_ptr(), 256, dev),
            "cuDeviceGetName",
        )?;
        let name = std::ffi::CStr::from_ptr(name.as_ptr())
            .to_string_lossy()
            .into_owned();
        let attr = |a| {
            let mut v = 0;
            drv.check(
                (drv.device_get_attribute)(&mut v, a, dev),
                "cuDeviceGetAttribute",
            )
            .map(|_| v)
        };
        let sm_count = attr(ATTR_SM_COUNT)? as u32;
        let cc = (attr(ATTR_CC_MAJOR)?, attr(ATTR_CC_MINOR)?);
        let max_shared_optin = attr(ATTR_SHARED_OPTIN)?.max(0) as u32;
        let mut ver = 0;
        drv.check((drv.driver_get_version)(&mut ver), "cuDriverGetVersion")?;
        let mut ctx: Handle = std::ptr::null_mut();
        drv.check(
            (drv.primary_ctx_retain)(&mut ctx, dev),
            "cuDevicePrimaryCtxRetain",
        )?;
        drv.check((drv.ctx_set_current)(ctx), "cuCtxSetCurrent")?;
        let mut stream: Handle = std::ptr::null_mut();
        // CU_STREAM_NON_BLOCKING = 1.
        drv.check((drv.stream_create)(&mut stream, 1), "cuStreamCreate")?;
        Ok(Gpu {
            drv,
            ctx,
            stream,
            name,
            ordinal,
            sm_count,
            cc,
            driver_version: ver,
            max_shared_optin,
        })
    }
}

impl Gpu {
    /// Makes the context current on the calling thread.
    pub(crate) fn bind(&self) -> Result<(), CudaError> {
        // SAFETY: the context is retained for the life of the process.
        self.drv.check(
            unsafe { (self.drv.ctx_set_current)(self.ctx) },
            "cuCtxSetCurrent",
        )
    }

    /// Allocates `bytes` of device memory (at least 1).
    pub fn alloc(self: &Arc<Self>, bytes: usize) -> Result<DeviceBuffer, CudaError> {
        self.bind()?;
        let mut ptr: DevicePtr = 0;
        // SAFETY: valid out-pointer.
        self.drv.check(
            unsafe { (self.drv.mem_alloc)(&mut ptr, bytes.max(4)) },
            "cuMemAlloc",
        )?;
        Ok(DeviceBuffer {
            ptr,
            bytes,
            gpu: self.clone(),
        })
    }

    /// Waits for the stream.
    pub fn sync(&self) -> Result<(), CudaError> {
        self.sync_stream(self.stream)
    }

    /// Waits for `stream` (Tile's own, or a caller's stream of this
    /// context).
    pub(crate) fn sync_stream(&self, stream: Handle) -> Result<(), CudaError> {
        self.bind()?;
        // SAFETY: a stream of this context (or a special handle).
        self.drv.check(
            unsafe { (self.drv.stream_synchronize)(stream) },
            "cuStreamSynchronize",
        )
    }

    /// The allocation holding device address `ptr`: its start, its size in
    /// bytes and its device's ordinal. An address the driver does not know
    /// (host memory, freed memory, a made-up number) is an error.
    pub(crate) fn allocation(&self, ptr: DevicePtr) -> Result<(u64, u64, i32), CudaError> {
        self.bind()?;
        let (mut start, mut size, mut ordinal) = (0u64, 0u64, -1i32);
        let mut attrs = [PTR_RANGE_START, PTR_RANGE_SIZE, PTR_DEVICE_ORDINAL];
        let mut outs = [
            &mut start as *mut u64 as *mut c_void,
            &mut size as *mut u64 as *mut c_void,
            &mut ordinal as *mut i32 as *mut c_void,
        ];
        // SAFETY: each attribute is written to an out-value of its
        // documented type (CUdeviceptr, size_t, int), in one call.
        self.drv.check(
            unsafe {
                (self.drv.pointer_get_attributes)(3, attrs.as_mut_ptr(), outs.as_mut_ptr(), ptr)
            },
            "cuPointerGetAttributes",
        )?;
        if size == 0 {
            return Err(CudaError::Driver {
                call: "cuPointerGetAttributes".into(),
                code: 1,
                message: "no allocation holds this address".into(),
            });
        }
        Ok((start, size, ordinal))
    }

    /// Loads a CUBIN and looks up `names`.
    pub(crate) fn load_module(
        &self,
        image: &[u8],
        names: &[String],
    ) -> Result<(Handle, Vec<Handle>), CudaError> {
        self.bind()?;
        let mut module: Handle = std::ptr::null_mut();
        // SAFETY: `image` is a complete CUBIN from NVRTC.
        self.drv.check(
            unsafe { (self.drv.module_load_data)(&mut module, image.as_ptr() as *const c_void) },
            "cuModuleLoadData",
        )?;
        let mut funcs = Vec::new();
        for n in names {
            let c = std::ffi::CString::new(n.as_str())
                .map_err(|_| CudaError::Unsupported("bad kernel name".into()))?;
            let mut f: Handle = std::ptr::null_mut();
            // SAFETY: valid module and NUL-terminated name.
            self.drv.check(
                unsafe { (self.drv.module_get_function)(&mut f, module, c.as_ptr()) },
                "cuModuleGetFunction",
            )?;
            funcs.push(f);
        }
        Ok((module, funcs))
    }

    /// Lets `f` take up to `bytes` of dynamic shared memory per block.
    pub(crate) fn allow_dynamic_shared(&self, f: Handle, bytes: u32) -> Result<(), CudaError> {
        // SAFETY: a function handle from a loaded module.
        self.drv.check(
            unsafe { (self.drv.func_set_attribute)(f, FUNC_ATTR_MAX_DYNAMIC_SHARED, bytes as i32) },
            "cuFuncSetAttribute",
        )
    }

    /// The most threads a block of `f` may have (its registers decide:
    /// a launch above it fails with "too many resources requested").
    pub(crate) fn max_threads(&self, f: Handle) -> Result<u32, CudaError> {
        let mut n: std::ffi::c_int = 0;
        // SAFETY: a function handle from a loaded module.
        self.drv.check(
            unsafe {
                (self.drv.func_get_attribute)(&mut n, crate::driver::FUNC_ATTR_MAX_THREADS, f)
            },
            "cuFuncGetAttribute",
        )?;
        Ok(n.clamp(32, 1024) as u32)
    }

    /// Launches `f` on `stream` with one by-value parameter block and
    /// `shared` bytes of dynamic shared memory.
    pub(crate) fn launch<T>(
        &self,
        stream: Handle,
        f: Handle,
        grid: (u32, u32),
        block: (u32, u32),
        shared: u32,
        args: &T,
    ) -> Result<(), CudaError> {
        let mut p = [args as *const T as *mut c_void];
        // SAFETY: the kernel takes exactly one parameter of type `T`'s C
        // layout (`TileArgs`, mirrored in the generated source).
        self.drv.check(
            unsafe {
                (self.drv.launch_kernel)(
                    f,
                    grid.0,
                    grid.1,
                    1,
                    block.0,
                    block.1,
                    1,
                    shared,
                    stream,
                    p.as_mut_ptr(),
                    std::ptr::null_mut(),
                )
            },
            "cuLaunchKernel",
        )
    }

    /// Device time in seconds of `work` (events on the stream around it).
    pub fn time<F: FnMut() -> Result<(), CudaError>>(&self, mut work: F) -> Result<f64, CudaError> {
        self.bind()?;
        let d = &self.drv;
        // SAFETY: events created, recorded on our stream, synchronised and
        // read in the documented order.
        unsafe {
            let (mut a, mut b): (Handle, Handle) = (std::ptr::null_mut(), std::ptr::null_mut());
            d.check((d.event_create)(&mut a, 0), "cuEventCreate")?;
            d.check((d.event_create)(&mut b, 0), "cuEventCreate")?;
            d.check((d.event_record)(a, self.stream), "cuEventRecord")?;
            work()?;
            d.check((d.event_record)(b, self.stream), "cuEventRecord")?;
            d.check((d.event_synchronize)(b), "cuEventSynchronize")?;
            let mut ms = 0f32;
            d.check((d.event_elapsed_time)(&mut ms, a, b), "cuEventElapsedTime")?;
            Ok(ms as f64 / 1e3)
        }
    }

    /// A device-to-device copy of `bytes` from `src` to `dst` on `stream`
    /// (a stream of this context).
    ///
    /// # Safety
    /// Both ranges must lie in device memory of this context and not
    /// overlap.
    pub(crate) unsafe fn copy_on(
        &self,
        dst: DevicePtr,
        src: DevicePtr,
        bytes: usize,
        stream: Handle,
    ) -> Result<(), CudaError> {
        // SAFETY: the caller's contract.
        self.drv.check(
            unsafe { (self.drv.memcpy_dtod_async)(dst, src, bytes, stream) },
            "cuMemcpyDtoDAsync",
        )
    }

    /// A device-to-device copy on the stream (the bandwidth floor).
    pub fn copy(
        &self,
        dst: &DeviceBuffer,
        src: &DeviceBuffer,
        bytes: usize,
    ) -> Result<(), CudaError> {
        // SAFETY: both buffers hold at least `bytes`.
        self.drv.check(
            unsafe { (self.drv.memcpy_dtod_async)(dst.ptr, src.ptr, bytes, self.stream) },
            "cuMemcpyDtoDAsync",
        )
    }
}

/// Device memory, freed on drop.
pub struct DeviceBuffer {
    /// The device address.
    pub ptr: DevicePtr,
    /// Size in bytes.
    pub bytes: usize,
    gpu: Arc<Gpu>,
}

impl DeviceBuffer {
    /// Copies `host` in (sizes must match).
    pub fn upload(&self, host: &[u8]) -> Result<(), CudaError> {
        assert!(
            host.len() <= self.bytes.max(4),
            "upload larger than the buffer"
        );
        self.gpu.bind()?;
        // SAFETY: the buffer holds at least `host.len()` bytes.
        self.gpu.drv.check(
            unsafe {
                (self.gpu.drv.memcpy_htod)(self.ptr, host.as_ptr() as *const c_void, host.len())
            },
            "cuMemcpyHtoD",
        )
    }

    /// Copies out into `host`.
    pub fn download(&self, host: &mut [u8]) -> Result<(), CudaError> {
        assert!(
            host.len() <= self.bytes.max(4),
            "download larger than the buffer"
        );
        self.gpu.bind()?;
        // SAFETY: the buffer holds at least `host.len()` bytes.
        self.gpu.drv.check(
            unsafe {
                (self.gpu.drv.memcpy_dtoh)(host.as_mut_ptr() as *mut c_void, self.ptr, host.len())
            },
            "cuMemcpyDtoH",
        )
    }

    /// Fills with a 32-bit pattern.
    pub fn fill_u32(&self, value: u32) -> Result<(), CudaError> {
        self.gpu.bind()?;
        // SAFETY: the buffer holds `bytes / 4` words.
        self.gpu.drv.check(
            unsafe { (self.gpu.drv.memset_d32)(self.ptr, value, self.bytes / 4) },
            "cuMemsetD32",
        )
    }
}

impl Drop for DeviceBuffer {
    fn drop(&mut self) {
        let _ = self.gpu.bind();
        // SAFETY: allocated by cuMemAlloc and freed once.
        unsafe { (self.gpu.drv.mem_free)(self.ptr) };
    }
}
