//! A loaded module: argument checks, then the plan's kernels in order, each
//! cut into `[lo, hi)` slices over the thread pool.

use crate::emit::{self, Emitted};
use crate::{cc, pool, CpuError};
use std::collections::BTreeMap;
use std::ffi::c_void;
use std::sync::atomic::{AtomicI32, AtomicUsize, Ordering};
use tile_emit::Site;
use tile_ir::{ArgError, Array, DType, Sizes};
use tile_plan::{Mapping, Plan};

/// `void tile_kN(lo, hi, sizes, args, err)`.
type KernelFn = unsafe extern "C" fn(i64, i64, *const i64, *const *mut c_void, *mut i32);

/// Below this much work (elements touched), a kernel runs on the calling
/// thread: waking workers would cost more than it saves.
const PARALLEL_MIN: i64 = 32 * 1024;

struct Loaded {
    f: KernelFn,
    /// Parameters passed, in order.
    params: Vec<String>,
    sites: Vec<Site>,
    /// Scratch rows of a row kernel (each thread allocates them).
    scratch: Vec<tile_emit::ScratchRow>,
}

/// An argument in caller-owned memory.
#[derive(Clone, Debug)]
pub struct RawArg {
    /// The parameter it binds.
    pub name: String,
    /// Its element type.
    pub dtype: DType,
    /// Its shape (row-major, compact).
    pub shape: Vec<usize>,
    /// The first element.
    pub ptr: *mut u8,
    /// The size of the memory at `ptr`, in bytes.
    pub bytes: usize,
}

/// Compiled kernels of one plan, loaded and ready to run.
pub struct CpuModule {
    plan: Plan,
    kernels: Vec<Loaded>,
    source: String,
    threads: usize,
    /// The sizes (and memory ceiling) of the last launch whose ranges and
    /// scratch were proven: the proof depends on nothing else, so repeated
    /// launches at the same sizes skip it.
    proven: std::sync::Mutex<Option<(Sizes, u64)>>,
    // Declared last: dropped after the function pointers above.
    library: libloading::Library,
}

impl std::fmt::Debug for CpuModule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CpuModule")
            .field("program", &self.plan.program.name)
            .field("kernels", &self.kernels.len())
            .field("threads", &self.threads)
            .finish()
    }
}

impl CpuModule {
    pub(crate) fn new(
        plan: &Plan,
        emitted: Emitted,
        library: libloading::Library,
        threads: usize,
    ) -> Result<CpuModule, CpuError> {
        let mut kernels = Vec::new();
        for ((k, sites), scratch) in plan.kernels.iter().zip(emitted.sites).zip(emitted.scratch) {
            let sym = emit::symbol(k);
            // SAFETY: the symbol is a kernel of our source with this
            // signature.
            let f: KernelFn = unsafe {
                *library
                    .get::<KernelFn>(sym.as_bytes())
                    .map_err(|e| CpuError::Load(format!("{sym}: {e}")))?
            };
            kernels.push(Loaded {
                f,
                params: k
                    .params(&plan.program)
                    .iter()
                    .map(|p| p.name.clone())
                    .collect(),
                sites,
                scratch,
            });
        }
        Ok(CpuModule {
            plan: plan.clone(),
            kernels,
            source: emitted.source,
            threads,
            proven: std::sync::Mutex::new(None),
            library,
        })
    }

    /// The generated C source.
    pub fn source(&self) -> &str {
        &self.source
    }

    /// sha256 of the source, as lowercase hex.
    pub fn source_hash(&self) -> String {
        cc::sha256_hex(self.source.as_bytes())
    }

    /// Vector lanes of the compiled kernels (from the compiler's target:
    /// 16 `f32` lanes with AVX-512, 8 with AVX, 4 otherwise).
    pub fn lanes(&self) -> usize {
        // SAFETY: `tile_lanes` is defined by every generated source.
        let f = unsafe {
            self.library
                .get::<unsafe extern "C" fn() -> i32>(b"tile_lanes")
        };
        f.map_or(1, |f| unsafe { f() }.max(1) as usize)
    }

    /// The plan this module runs.
    pub fn plan(&self) -> &Plan {
        &self.plan
    }

    /// Runs the program over `arrays` (one per parameter; written ones are
    /// updated in place). Every argument is checked before any work.
    pub fn run(
        &self,
        arrays: &mut BTreeMap<String, Array>,
        explicit: &Sizes,
    ) -> Result<(), CpuError> {
        let program = &self.plan.program;
        let sizes = tile_ir::args::bind_arrays(program, arrays, explicit)?;
        let ptrs: BTreeMap<String, *mut u8> = arrays
            .iter_mut()
            .map(|(k, a)| (k.clone(), a.as_mut_ptr()))
            .collect();
        // SAFETY: every array's shape fits its parameter's box (checked
        // above) and its data holds exactly its shape's elements (`Array`
        // keeps that invariant behind private fields); distinct arrays
        // never overlap; `launch_all` proves the integer ranges before any
        // kernel runs; and the borrow of `arrays` lasts for the launch.
        unsafe { self.launch_all(&sizes, &ptrs) }
    }

    /// Runs the program over caller-owned memory. Checks names, dtypes,
    /// shapes, sizes in bytes, alignment and overlap (no written buffer may
    /// overlap another argument) before any work.
    ///
    /// # Safety
    /// Each `ptr` must be valid for reads (and, for written parameters,
    /// writes) of `bytes` bytes for the duration of the call, and not be
    /// accessed by anything else meanwhile.
    pub unsafe fn run_raw(&self, args: &[RawArg], explicit: &Sizes) -> Result<(), CpuError> {
        let program = &self.plan.program;
        let mut shapes = BTreeMap::new();
        for a in args {
            if shapes
                .insert(a.name.clone(), (a.dtype, a.shape.clone()))
                .is_some()
            {
                return Err(CpuError::RawArg {
                    name: a.name.clone(),
                    reason: "is given twice".to_string(),
                });
            }
        }
        let sizes = tile_ir::args::bind_arguments(program, &shapes, explicit)?;
        for a in args {
            let need = a
                .shape
                .iter()
                .try_fold(a.dtype.size_bytes(), |acc, &n| acc.checked_mul(n));
            if need != Some(a.bytes) {
                return Err(CpuError::RawArg {
                    name: a.name.clone(),
                    reason: format!(
                        "{} bytes given, but shape {:?} of {} needs {}",
                        a.bytes,
                        a.shape,
                        a.dtype,
                        need.map_or("more than memory holds".to_string(), |n| n.to_string())
                    ),
                });
            }
            if a.bytes > 0 && a.ptr.is_null() {
                return Err(CpuError::RawArg {
                    name: a.name.clone(),
                    reason: "null pointer".to_string(),
                });
            }
            if (a.ptr as usize) % a.dtype.size_bytes() != 0 {
                return Err(CpuError::RawArg {
                    name: a.name.clone(),
                    reason: format!("pointer not aligned to {} bytes", a.dtype.size_bytes()),
                });
            }
        }
        let written = |n: &str| program.param(n).is_some_and(|p| p.role.is_written());
        for (i, a) in args.iter().enumerate() {
            for b in &args[i + 1..] {
                if !(written(&a.name) || written(&b.name)) || a.bytes == 0 || b.bytes == 0 {
                    continue;
                }
                let (a0, b0) = (a.ptr as usize, b.ptr as usize);
                if a0 < b0.saturating_add(b.bytes) && b0 < a0.saturating_add(a.bytes) {
                    return Err(ArgError::Overlap(a.name.clone(), b.name.clone()).into());
                }
            }
        }
        let ptrs: BTreeMap<String, *mut u8> =
            args.iter().map(|a| (a.name.clone(), a.ptr)).collect();
        // SAFETY: checked above; validity is the caller's contract.
        unsafe { self.launch_all(&sizes, &ptrs) }
    }

    /// The launch checks that depend on the sizes alone: integer ranges
    /// (`check_ranges`) and the scratch rows under the memory ceiling.
    /// Remembers the last sizes that passed.
    fn prove(&self, sizes: &Sizes) -> Result<(), CpuError> {
        let ceiling = tile_ir::limits::memory_ceiling();
        if let Ok(p) = self.proven.lock() {
            if p.as_ref().is_some_and(|(s, c)| s == sizes && *c == ceiling) {
                return Ok(());
            }
        }
        tile_plan::check_ranges(&self.plan, sizes)?;
        // Scratch rows are memory Tile allocates: sized on the host, under
        // the ceiling, before any kernel runs.
        for (k, loaded) in self.plan.kernels.iter().zip(&self.kernels) {
            let bytes = emit::scratch_bytes(&loaded.scratch, sizes).ok_or_else(|| {
                CpuError::Unsupported(format!("cannot size the scratch rows of kernel {}", k.name))
            })?;
            if bytes > ceiling as u128 || bytes >= 1 << 56 {
                return Err(CpuError::ScratchTooLarge {
                    line: k.lines.first().copied().unwrap_or(0),
                    bytes,
                    ceiling,
                });
            }
        }
        if let Ok(mut p) = self.proven.lock() {
            *p = Some((sizes.clone(), ceiling));
        }
        Ok(())
    }

    /// Launches every kernel in order.
    ///
    /// # Safety
    /// `ptrs` holds, for every parameter, memory that fits its box at
    /// `sizes`, with written buffers overlapping nothing else.
    unsafe fn launch_all(
        &self,
        sizes: &Sizes,
        ptrs: &BTreeMap<String, *mut u8>,
    ) -> Result<(), CpuError> {
        let program = &self.plan.program;
        self.prove(sizes)?;
        let symbols: Vec<i64> = program
            .size_symbols()
            .iter()
            .map(|s| sizes.get(s).copied().unwrap_or(0))
            .collect();
        let boxes = tile_ir::args::boxes(program, sizes)?;
        let numel = |name: &str| -> i64 {
            boxes.get(name).map_or(0, |b| {
                b.iter()
                    .map(|(lo, hi)| (hi - lo).max(0))
                    .fold(1i64, |a, n| a.saturating_mul(n))
            })
        };
        for (k, loaded) in self.plan.kernels.iter().zip(&self.kernels) {
            let total = k.work_items(sizes)?;
            if total == 0 {
                continue;
            }
            let mut args = Vec::with_capacity(loaded.params.len());
            for p in &loaded.params {
                let ptr = ptrs
                    .get(p)
                    .ok_or_else(|| CpuError::Args(ArgError::Missing(p.clone())))?;
                args.push(*ptr as *mut c_void);
            }
            let work = loaded.params.iter().map(|p| numel(p)).fold(total, i64::max);
            let err = AtomicI32::new(0);
            let call = Call {
                f: loaded.f,
                sizes: symbols.as_ptr(),
                args: args.as_ptr(),
                err: err.as_ptr(),
            };
            let parallel = k.mapping != Mapping::Serial
                && self.threads > 1
                && total > 1
                && work >= PARALLEL_MIN;
            if parallel {
                let threads = self.threads;
                let chunks = (threads as i64 * 4).min(total);
                let next = AtomicUsize::new(0);
                let job = || loop {
                    let c = next.fetch_add(1, Ordering::Relaxed) as i64;
                    if c >= chunks {
                        break;
                    }
                    let lo = (total as i128 * c as i128 / chunks as i128) as i64;
                    let hi = (total as i128 * (c + 1) as i128 / chunks as i128) as i64;
                    // SAFETY: slices are disjoint; the kernel's contract.
                    unsafe { call.run(lo, hi) };
                };
                pool::pool().run(threads, &job);
            } else {
                // SAFETY: as above, one slice covering all work.
                unsafe { call.run(0, total) };
            }
            let code = err.load(Ordering::Relaxed);
            if code != 0 {
                let site = usize::try_from(code - 1)
                    .ok()
                    .and_then(|i| loaded.sites.get(i));
                return Err(match site {
                    Some(s) if s.what == "div" => CpuError::IntArith { line: s.line },
                    Some(s) if s.what == "scratch" => CpuError::Scratch { line: s.line },
                    Some(s) => CpuError::OutOfBounds {
                        buf: s.buf.clone(),
                        line: s.line,
                        what: s.what,
                    },
                    None => {
                        CpuError::Unsupported(format!("kernel {} failed (code {code})", k.name))
                    }
                });
            }
        }
        Ok(())
    }
}

/// One kernel call's arguments, shareable with workers.
struct Call {
    f: KernelFn,
    sizes: *const i64,
    args: *const *mut c_void,
    err: *mut i32,
}

// SAFETY: the pointers stay valid for the launch, and the kernels write
// disjoint elements per slice (the plan's legality) and the error word
// atomically.
unsafe impl Sync for Call {}

impl Call {
    unsafe fn run(&self, lo: i64, hi: i64) {
        unsafe { (self.f)(lo, hi, self.sizes, self.args, self.err) }
    }
}
