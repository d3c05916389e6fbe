//! NVRTC, loaded at run time: CUDA C source to a CUBIN for the device's
//! architecture.

use crate::CudaError;
use libloading::Library;
use std::ffi::{c_char, c_int, c_void, CStr, CString};

type Prog = *mut c_void;

/// The bound NVRTC entry points.
pub struct Nvrtc {
    _lib: Library,
    create: unsafe extern "C" fn(
        *mut Prog,
        *const c_char,
        *const c_char,
        c_int,
        *const *const c_char,
        *const *const c_char,
    ) -> c_int,
    compile: unsafe extern "C" fn(Prog, c_int, *const *const c_char) -> c_int,
    log_size: unsafe extern "C" fn(Prog, *mut usize) -> c_int,
    log: unsafe extern "C" fn(Prog, *mut c_char) -> c_int,
    cubin_size: unsafe extern "C" fn(Prog, *mut usize) -> c_int,
    cubin: unsafe extern "C" fn(Prog, *mut c_char) -> c_int,
    destroy: unsafe extern "C" fn(*mut Prog) -> c_int,
    version: unsafe extern "C" fn(*mut c_int, *mut c_int) -> c_int,
}

impl Nvrtc {
    /// Loads NVRTC: `TILE_NVRTC_LIB`, else `libnvrtc.so.13`, `.12`, then
    /// `libnvrtc.so` (searched on the loader path and under `CUDA_HOME`).
    pub fn load() -> Result<Nvrtc, CudaError> {
        let mut names: Vec<String> = Vec::new();
        if let Ok(p) = std::env::var("TILE_NVRTC_LIB") {
            names.push(p);
        }
        let bases = ["libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"];
        names.extend(bases.iter().map(|s| s.to_string()));
        for home in [
            std::env::var("CUDA_HOME").ok(),
            Some("/usr/local/cuda".into()),
        ]
        .into_iter()
        .flatten()
        {
            names.extend(bases.iter().map(|b| format!("{home}/lib64/{b}")));
        }
        let mut tried = Vec::new();
        for n in &names {
            // SAFETY: loading NVRTC runs no user-visible initialisers.
            if let Ok(lib) = unsafe { Library::new(n) } {
                return Nvrtc::bind(lib);
            }
            tried.push(n.clone());
        }
        Err(CudaError::NoNvrtc(format!(
            "NVRTC was not found (tried {}); install the CUDA toolkit's NVRTC or set TILE_NVRTC_LIB",
            tried.join(", ")
        )))
    }

    fn bind(lib: Library) -> Result<Nvrtc, CudaError> {
        macro_rules! sym {
            ($name:literal) => {
                // SAFETY: documented NVRTC symbols with their C signatures.
                *unsafe { lib.get(concat!($name, "\0").as_bytes()) }
                    .map_err(|e| CudaError::NoNvrtc(format!("NVRTC lacks {}: {e}", $name)))?
            };
        }
        Ok(Nvrtc {
            create: sym!("nvrtcCreateProgram"),
            compile: sym!("nvrtcCompileProgram"),
            log_size: sym!("nvrtcGetProgramLogSize"),
            log: sym!("nvrtcGetProgramLog"),
            cubin_size: sym!("nvrtcGetCUBINSize"),
            cubin: sym!("nvrtcGetCUBIN"),
            destroy: sym!("nvrtcDestroyProgram"),
            version: sym!("nvrtcVersion"),
            _lib: lib,
        })
    }

    /// NVRTC's version, `major.minor`.
    pub fn version(&self) -> String {
        let (mut a, mut b) = (0, 0);
        // SAFETY: plain out-parameters.
        unsafe { (self.version)(&mut a, &mut b) };
        format!("{a}.{b}")
    }

    /// Compiles `source` for `sm_{arch}`; returns the CUBIN, or the log.
    pub fn compile(
        &self,
        source: &str,
        name: &str,
        arch: u32,
        options: &[String],
    ) -> Result<Vec<u8>, CudaError> {
        let src = CString::new(source)
            .map_err(|_| CudaError::Unsupported("source holds a NUL byte".into()))?;
        let cname = CString::new(name).unwrap_or_default();
        let mut opts: Vec<CString> =
            vec![CString::new(format!("--gpu-architecture=sm_{arch}")).unwrap_or_default()];
        opts.extend(options.iter().filter_map(|o| CString::new(o.as_str()).ok()));
        let ptrs: Vec<*const c_char> = opts.iter().map(|o| o.as_ptr()).collect();
        let mut prog: Prog = std::ptr::null_mut();
        // SAFETY: NVRTC's documented calling sequence; buffers are sized
        // from NVRTC's own size queries.
        unsafe {
            let r = (self.create)(
                &mut prog,
                src.as_ptr(),
                cname.as_ptr(),
                0,
                std::ptr::null(),
                std::ptr::null(),
            );
            if r != 0 {
                return Err(CudaError::Compile {
                    log: format!("nvrtcCreateProgram failed ({r})"),
                });
            }
            let r = (self.compile)(prog, ptrs.len() as c_int, ptrs.as_ptr());
            let mut n = 0usize;
            (self.log_size)(prog, &mut n);
            let mut log = vec![0u8; n.max(1)];
            (self.log)(prog, log.as_mut_ptr() as *mut c_char);
            let log = CStr::from_bytes_until_nul(&log)
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default();
            if r != 0 {
                (self.destroy)(&mut prog);
                return Err(CudaError::Compile { log });
            }
            let mut size = 0usize;
            (self.cubin_size)(prog, &mut size);
            let mut cubin = vec![0u8; size];
            (self.cubin)(prog, cubin.as_mut_ptr() as *mut c_char);
            (self.destroy)(&mut prog);
            Ok(cubin)
        }
    }
}
