//! Compiling a plan to a loaded module: the CUDA C printed, NVRTC (with
//! an in-process CUBIN cache keyed by source hash and architecture), every
//! entry point loaded with the most threads its registers allow.

use crate::configure::Launches;
use crate::emit::{self, KernelInfo};
use crate::nvrtc::Nvrtc;
use crate::options::CudaOptions;
use crate::runtime::{gpu, DeviceBuffer, Gpu};
use crate::CudaError;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};
use tile_ir::Sizes;
use tile_plan::{Mapping, Plan};

/// The loaded entry points of one kernel.
#[derive(Clone)]
pub(crate) struct Funcs {
    pub(crate) plain: crate::driver::Handle,
    pub(crate) v4: Option<crate::driver::Handle>,
    pub(crate) rows: Option<crate::driver::Handle>,
    /// A contraction's tiles (`tile_kN_mm`, 128 x 128; `tile_kN_mm64`,
    /// 64 x 64).
    pub(crate) mm: Option<crate::driver::Handle>,
    pub(crate) mm64: Option<crate::driver::Handle>,
    /// An attention head's entry points: query rows per block, output
    /// columns per pass, handle and the most threads per block it may
    /// launch with (`_att64`, `_att32`; staged `_att64x128` ...
    /// `_att32x64`).
    pub(crate) att: Vec<(i64, i64, crate::driver::Handle, u32)>,
    /// A full reduction's second stage (`tile_kN_fin`).
    pub(crate) fin: Option<crate::driver::Handle>,
    /// The most threads per block each entry point may launch with.
    pub(crate) plain_max: u32,
    pub(crate) v4_max: u32,
    pub(crate) rows_max: u32,
    pub(crate) mm_max: u32,
    pub(crate) mm64_max: u32,
    pub(crate) fin_max: u32,
}

/// A plan compiled and loaded on the GPU.
pub struct CudaModule {
    pub(crate) gpu: Arc<Gpu>,
    pub(crate) plan: Plan,
    pub(crate) source: String,
    pub(crate) hash: String,
    pub(crate) kernels: Vec<KernelInfo>,
    pub(crate) funcs: Vec<Funcs>,
    /// The most dynamic shared memory a `_rows` or `_att` launch may take.
    pub(crate) rows_limit: u32,
    pub(crate) opts: CudaOptions,
    pub(crate) nvrtc_version: String,
    /// Distinguishes modules, so a `Bound` is used only with its own.
    pub(crate) id: u64,
    /// The last raw arguments' binding.
    pub(crate) bound: tile_ir::args::RawBinding,
    /// The last sizes proven for raw launches, whether a check may fail
    /// at them, and their launches.
    pub(crate) proven: Mutex<Option<(Sizes, bool, Arc<Launches>)>>,
    /// The failure word of raw launches, and the lock that serialises
    /// launches that may write it.
    pub(crate) word: OnceLock<DeviceBuffer>,
    pub(crate) failing: Mutex<()>,
    /// Full reductions' chunk results: [`tile_plan::PARTIALS`] doubles per
    /// full-reduction kernel, at `part_offsets[n]` bytes for kernel `n`.
    /// Shared by the module's launches, so raw launches of a module that
    /// has one are serialised and waited for.
    pub(crate) partials: Option<DeviceBuffer>,
    pub(crate) part_offsets: Vec<u64>,
}

static MODULES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

// SAFETY: function handles are plain driver handles, valid in the context
// that every use makes current first.
unsafe impl Send for CudaModule {}
unsafe impl Sync for CudaModule {}

fn nvrtc() -> Result<&'static Nvrtc, CudaError> {
    static N: OnceLock<Result<Nvrtc, CudaError>> = OnceLock::new();
    N.get_or_init(Nvrtc::load).as_ref().map_err(|e| e.clone())
}

fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The first architecture with TF32 tensor cores (`mma.sync` on `.tf32`).
const TF32_ARCH: u32 = 80;

/// CUBINs by (source hash, architecture).
type CubinCache = HashMap<(String, u32), Arc<Vec<u8>>>;

/// Compiles `plan` for the current GPU.
pub fn compile(plan: &Plan, opts: &CudaOptions) -> Result<CudaModule, CudaError> {
    let mut emitted = emit::emit(plan, opts.unrolls(), opts.tiling())?;
    let gpu = gpu()?;
    let nv = nvrtc()?;
    let arch = (gpu.cc.0 * 10 + gpu.cc.1) as u32;
    if opts.allow_tf32 && arch < TF32_ARCH {
        // TF32 `mma.sync` came with sm_80: before it, allowing TF32
        // changes nothing (as PyTorch's flag), the products stay FP32.
        let exact = emit::Tiling {
            tf32: false,
            ..opts.tiling()
        };
        emitted = emit::emit(plan, opts.unrolls(), exact)?;
    }
    let hash = sha256_hex(emitted.source.as_bytes());
    static CACHE: OnceLock<Mutex<CubinCache>> = OnceLock::new();
    let cache = CACHE.get_or_init(Default::default);
    let key = (hash.clone(), arch);
    let cached = if opts.cache {
        cache.lock().ok().and_then(|c| c.get(&key).cloned())
    } else {
        None
    };
    let cubin = match cached {
        Some(c) => c,
        None => {
            let c = nv.compile(
                &emitted.source,
                &format!("tile_{}.cu", plan.program.name),
                arch,
                &["--std=c++17".to_string(), "--fmad=false".to_string()],
            )?;
            let c = Arc::new(c);
            if opts.cache {
                if let Ok(mut m) = cache.lock() {
                    m.insert(key, c.clone());
                }
            }
            c
        }
    };
    let mut names = Vec::new();
    for k in &emitted.kernels {
        names.push(k.name.clone());
        if k.v4.is_some() {
            names.push(format!("{}_v4", k.name));
        }
        if k.rows.is_some() {
            names.push(format!("{}_rows", k.name));
        }
        if k.fin {
            names.push(format!("{}_fin", k.name));
        }
        if k.mm.is_some() {
            names.push(format!("{}_mm", k.name));
            names.push(format!("{}_mm64", k.name));
        }
        if let Some(a) = &k.att {
            for (rows, cols) in &a.shapes {
                names.push(match a.staged {
                    true => format!("{}_att{rows}x{cols}", k.name),
                    false => format!("{}_att{rows}", k.name),
                });
            }
        }
    }
    let (_module, handles) = gpu.load_module(&cubin, &names)?;
    let mut funcs = Vec::new();
    let mut it = handles.into_iter();
    let mut rows_limit = staging_limit(&gpu);
    for k in &emitted.kernels {
        let plain = it
            .next()
            .ok_or_else(|| CudaError::Unsupported("missing kernel handle".into()))?;
        let v4 = if k.v4.is_some() { it.next() } else { None };
        let rows = if k.rows.is_some() { it.next() } else { None };
        let fin = if k.fin { it.next() } else { None };
        let mm = if k.mm.is_some() { it.next() } else { None };
        let mm64 = if k.mm.is_some() { it.next() } else { None };
        let mut att = Vec::new();
        for &(rows, cols) in k.att.iter().flat_map(|a| &a.shapes) {
            let f = it
                .next()
                .ok_or_else(|| CudaError::Unsupported("missing kernel handle".into()))?;
            att.push((rows, cols, f, gpu.max_threads(f)?));
        }
        for f in rows.into_iter().chain(att.iter().map(|a| a.2)) {
            // More than the default 48 KiB of dynamic shared memory needs
            // the kernel's opt-in; where the driver refuses it, launches
            // stay within the default.
            if gpu.allow_dynamic_shared(f, rows_limit).is_err() {
                rows_limit = rows_limit.min(47 * 1024);
            }
        }
        let most = |f: Option<crate::driver::Handle>| -> Result<u32, CudaError> {
            f.map_or(Ok(1024), |f| gpu.max_threads(f))
        };
        funcs.push(Funcs {
            plain,
            v4,
            rows,
            mm,
            mm64,
            att,
            fin,
            plain_max: most(Some(plain))?,
            v4_max: most(v4)?,
            rows_max: most(rows)?,
            mm_max: most(mm)?,
            mm64_max: most(mm64)?,
            fin_max: most(fin)?,
        });
    }
    let mut part_offsets = Vec::new();
    let mut nfull = 0u64;
    for k in &plan.kernels {
        part_offsets.push(nfull * tile_plan::PARTIALS as u64 * 8);
        nfull += u64::from(k.mapping == Mapping::FullReduction);
    }
    let partials = if nfull > 0 {
        Some(gpu.alloc((nfull * tile_plan::PARTIALS as u64 * 8) as usize)?)
    } else {
        None
    };
    Ok(CudaModule {
        gpu,
        plan: plan.clone(),
        source: emitted.source,
        hash,
        kernels: emitted.kernels,
        funcs,
        rows_limit,
        opts: opts.clone(),
        nvrtc_version: nv.version(),
        id: MODULES.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
        bound: Default::default(),
        proven: Mutex::new(None),
        word: OnceLock::new(),
        failing: Mutex::new(()),
        partials,
        part_offsets,
    })
}

/// The most dynamic shared memory a `_rows` launch takes: the device's
/// opt-in limit less room for the kernel's static shared memory.
fn staging_limit(gpu: &Gpu) -> u32 {
    gpu.max_shared_optin.saturating_sub(1024)
}

impl CudaModule {
    /// The generated CUDA C.
    pub fn source(&self) -> &str {
        &self.source
    }

    /// sha256 of the source, hex.
    pub fn source_hash(&self) -> &str {
        &self.hash
    }

    /// The GPU this module is loaded on.
    pub fn gpu(&self) -> &Arc<Gpu> {
        &self.gpu
    }

    /// NVRTC's version.
    pub fn nvrtc_version(&self) -> &str {
        &self.nvrtc_version
    }
}
