//! A loaded module: argument checks, then the plan's kernels in order, each
//! cut into `[lo, hi)` slices over the thread pool.

use crate::emit::{self, Emitted};
use crate::{cc, pool, CpuError};
use std::collections::BTreeMap;
use std::ffi::c_void;
use std::sync::atomic::{AtomicI32, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use tile_emit::Site;
use tile_ir::{ArgError, Array, Sizes};
use tile_plan::{Mapping, Plan};

/// `void tile_kN(lo, hi, sizes, args, err)`.
type KernelFn = unsafe extern "C" fn(i64, i64, *const i64, *const *mut c_void, *mut i32);

/// Below this much work (elements touched), a kernel runs on the calling
/// thread: waking workers would cost more than it saves. Measured with
/// the `contention` example on the 2-core development machine, the
/// threshold lowered to 1024: the fused sigmoid pair on two threads took
/// 1.01-1.03 times one thread's time at 4x4096 (16 Ki elements) and
/// 0.61-0.63 times at 8x4096 (32 Ki).
const PARALLEL_MIN: i64 = 32 * 1024;

struct Loaded {
    f: KernelFn,
    /// A full reduction's second function (`tile_kN_fin`).
    fin: Option<KernelFn>,
    /// A contraction's function over chunks of columns (`tile_kN_cols`)
    /// and its columns' range.
    cols: Option<(KernelFn, tile_ir::Expr, tile_ir::Expr)>,
    /// Parameters passed, in order, as indices into the program's.
    params: Vec<usize>,
    sites: Vec<Site>,
    /// Scratch rows of a row kernel (each thread allocates them).
    scratch: Vec<tile_plan::ScratchRow>,
}

/// An argument in caller-owned memory (`addr` is a host address).
pub use tile_ir::args::RawArg;

/// Compiled kernels of one plan, loaded and ready to run.
pub struct CpuModule {
    plan: Plan,
    kernels: Vec<Loaded>,
    source: String,
    threads: usize,
    /// The sizes (and memory ceiling) of the last launch whose ranges and
    /// scratch were proven, with what its launches need: the proof depends
    /// on nothing else, so repeated launches at the same sizes skip it.
    proven: Mutex<Option<(Sizes, u64, Arc<Proven>)>>,
    /// The last raw arguments' binding.
    bound: tile_ir::args::RawBinding,
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
        let index = tile_ir::ParamIndex::of(&plan.program);
        for ((k, sites), scratch) in plan.kernels.iter().zip(emitted.sites).zip(emitted.scratch) {
            let sym = emit::symbol(k);
            // SAFETY: the symbol is a kernel of our source with this
            // signature.
            let f: KernelFn = unsafe {
                *library
                    .get::<KernelFn>(sym.as_bytes())
                    .map_err(|e| CpuError::Load(format!("{sym}: {e}")))?
            };
            let fin = if k.mapping == Mapping::FullReduction {
                let sym = format!("{sym}_fin");
                // SAFETY: as above.
                Some(unsafe {
                    *library
                        .get::<KernelFn>(sym.as_bytes())
                        .map_err(|e| CpuError::Load(format!("{sym}: {e}")))?
                })
            } else {
                None
            };
            let cols = match &k.contraction {
                Some(c) => {
                    let sym = format!("{sym}_cols");
                    // SAFETY: as above.
                    let f = unsafe {
                        *library
                            .get::<KernelFn>(sym.as_bytes())
                            .map_err(|e| CpuError::Load(format!("{sym}: {e}")))?
                    };
                    Some((f, c.col.lo.clone(), c.col.hi.clone()))
                }
                None => None,
            };
            kernels.push(Loaded {
                f,
                fin,
                cols,
                params: k
                    .params_in(&plan.program, &index)
                    .iter()
                    .map(|p| {
                        index
                            .position(&plan.program, &p.name)
                            .ok_or_else(|| CpuError::Args(ArgError::Unknown(p.name.to_string())))
                    })
                    .collect::<Result<_, _>>()?,
                sites,
                scratch,
            });
        }
        Ok(CpuModule {
            plan: plan.clone(),
            kernels,
            source: emitted.source,
            threads,
            proven: Mutex::new(None),
            bound: Default::default(),
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
        let sizes = self.bound.bind_arrays(program, arrays, explicit)?;
        let mut ptrs = Vec::with_capacity(program.params.len());
        let mut bytes = Vec::with_capacity(program.params.len());
        for p in &program.params {
            let a = arrays
                .get_mut(&p.name)
                .ok_or_else(|| ArgError::Missing(p.name.clone()))?;
            bytes.push(a.len() * a.dtype().size_bytes());
            ptrs.push(a.as_mut_ptr());
        }
        // SAFETY: every array's shape fits its parameter's box (checked
        // above) and its data holds exactly its shape's elements (`Array`
        // keeps that invariant behind private fields); distinct arrays
        // never overlap; `launch_all` proves the integer ranges before any
        // kernel runs; and the borrow of `arrays` lasts for the launch.
        unsafe { self.launch_all(&sizes, &ptrs, &bytes) }
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
        let sizes = self.bound.bind(program, args, explicit)?;
        let mut ptrs = vec![std::ptr::null_mut(); program.params.len()];
        let mut bytes = vec![0usize; program.params.len()];
        for a in args {
            let i = param_index(program, &a.name)?;
            ptrs[i] = a.addr as usize as *mut u8;
            bytes[i] = a.bytes;
        }
        // SAFETY: checked above; validity is the caller's contract.
        unsafe { self.launch_all(&sizes, &ptrs, &bytes) }
    }

    /// The launch checks that depend on the sizes alone: integer ranges
    /// (`check_ranges`) and the scratch rows under the memory ceiling; and
    /// what every launch at these sizes needs. Remembers the last sizes
    /// that passed.
    fn prove(&self, sizes: &Sizes) -> Result<Arc<Proven>, CpuError> {
        let ceiling = tile_ir::limits::memory_ceiling().map_err(|e| CpuError::Io(e.to_string()))?;
        if let Ok(p) = self.proven.lock() {
            if let Some((s, c, proven)) = p.as_ref() {
                if s == sizes && *c == ceiling {
                    return Ok(proven.clone());
                }
            }
        }
        let program = &self.plan.program;
        let proof = tile_plan::check_ranges(&self.plan, sizes)?;
        let boxes = tile_ir::args::boxes(program, sizes)?;
        let numel = |p: usize| -> i64 {
            boxes.get(&program.params[p].name).map_or(0, |b| {
                b.iter()
                    .map(|(lo, hi)| (hi - lo).max(0))
                    .fold(1i64, |a, n| a.saturating_mul(n))
            })
        };
        let mut kernels = Vec::with_capacity(self.kernels.len());
        let mut col_chunks = Vec::with_capacity(self.kernels.len());
        for (k, loaded) in self.plan.kernels.iter().zip(&self.kernels) {
            // Scratch rows are memory Tile allocates: sized on the host,
            // under the ceiling, before any kernel runs.
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
            let total = k.work_items(sizes)?;
            let work = loaded
                .params
                .iter()
                .map(|&p| numel(p))
                .fold(total, i64::max);
            kernels.push((total, work));
            // A contraction whose rows are too few to keep the threads
            // busy (under 48 a thread) splits its columns instead.
            let chunks = loaded.cols.as_ref().and_then(|(_, lo, hi)| {
                let n = tile_ir::args::eval_int(hi, sizes)?
                    .checked_sub(tile_ir::args::eval_int(lo, sizes)?)?;
                let chunks = n.checked_add(crate::emit_contraction::CHUNK - 1)?
                    / crate::emit_contraction::CHUNK;
                (self.threads > 1 && total < 48 * self.threads as i64 && chunks >= 2)
                    .then_some(chunks)
            });
            col_chunks.push(chunks);
        }
        let proven = Arc::new(Proven {
            symbols: program
                .size_symbols()
                .iter()
                .map(|s| sizes.get(s).copied().unwrap_or(0))
                .collect(),
            kernels,
            col_chunks,
            may_fail: proof.checks_may_fail,
        });
        if let Ok(mut p) = self.proven.lock() {
            *p = Some((sizes.clone(), ceiling, proven.clone()));
        }
        Ok(proven)
    }

    /// Launches every kernel in order.
    ///
    /// # Safety
    /// `ptrs` holds, for every parameter (in the program's order), memory
    /// that fits its box at `sizes`, with written buffers overlapping
    /// nothing else.
    unsafe fn launch_all(
        &self,
        sizes: &Sizes,
        ptrs: &[*mut u8],
        bytes: &[usize],
    ) -> Result<(), CpuError> {
        let proven = self.prove(sizes)?;
        if !proven.may_fail {
            // SAFETY: the caller's contract.
            return unsafe { self.launch_kernels(&proven, ptrs) };
        }
        // A check may fail at these sizes: the kernels write copies of
        // the written buffers, committed only when every kernel succeeded,
        // so a failed call leaves every argument as it was.
        let program = &self.plan.program;
        let written: Vec<usize> = (0..program.params.len())
            .filter(|&i| program.params[i].role.is_written())
            .collect();
        let total: u128 = written.iter().map(|&i| bytes[i] as u128).sum();
        let ceiling = tile_ir::limits::memory_ceiling().map_err(|e| CpuError::Io(e.to_string()))?;
        if total > ceiling as u128 {
            return Err(CpuError::Io(format!(
                "a check may fail at these sizes, so the {total} bytes of written arguments are copied first, above the memory ceiling of {ceiling} bytes (set TILE_MAX_MEMORY to change it); nothing ran"
            )));
        }
        let mut copies = Vec::with_capacity(written.len());
        for &i in &written {
            // SAFETY: the caller's contract: `ptrs[i]` holds `bytes[i]`.
            let copy = unsafe { Scratch::copy_of(ptrs[i], bytes[i]) }.ok_or_else(|| {
                CpuError::Io(format!(
                    "cannot allocate {} bytes for a copy of `{}`; nothing ran",
                    bytes[i], program.params[i].name
                ))
            })?;
            copies.push(copy);
        }
        let mut shadow = ptrs.to_vec();
        for (&i, c) in written.iter().zip(&copies) {
            shadow[i] = c.ptr;
        }
        // SAFETY: each copy holds its buffer's bytes, overlapping nothing.
        unsafe { self.launch_kernels(&proven, &shadow)? };
        for (&i, c) in written.iter().zip(&copies) {
            if bytes[i] > 0 {
                // SAFETY: as above; the caller's buffer and the copy are
                // disjoint and hold `bytes[i]`.
                unsafe { std::ptr::copy_nonoverlapping(c.ptr, ptrs[i], bytes[i]) };
            }
        }
        Ok(())
    }

    /// Launches every kernel in order at proven sizes.
    ///
    /// # Safety
    /// As [`CpuModule::launch_all`].
    unsafe fn launch_kernels(&self, proven: &Proven, ptrs: &[*mut u8]) -> Result<(), CpuError> {
        for (((k, loaded), &(rows, work)), chunks) in self
            .plan
            .kernels
            .iter()
            .zip(&self.kernels)
            .zip(&proven.kernels)
            .zip(&proven.col_chunks)
        {
            if rows == 0 {
                continue;
            }
            // A contraction with few rows runs over chunks of columns.
            let (f, total) = match (chunks, &loaded.cols) {
                (Some(n), Some((cols, _, _))) => (*cols, *n),
                _ => (loaded.f, rows),
            };
            let mut args: Vec<*mut c_void> = loaded
                .params
                .iter()
                .map(|&p| ptrs[p] as *mut c_void)
                .collect();
            // A full reduction's chunk results, after the parameters.
            let mut parts: Vec<f64> = Vec::new();
            if loaded.fin.is_some() {
                parts = vec![0.0; total as usize];
                args.push(parts.as_mut_ptr() as *mut c_void);
            }
            let err = AtomicI32::new(0);
            let call = Call {
                f,
                sizes: proven.symbols.as_ptr(),
                args: args.as_ptr(),
                err: err.as_ptr(),
            };
            let parallel = k.mapping != Mapping::Serial
                && self.threads > 1
                && total > 1
                && work >= PARALLEL_MIN;
            if parallel {
                let threads = self.threads;
                // Column kernels read each row's part of their slice as one
                // run: one slice per thread keeps the runs long.
                // Contractions pack their operands' panels per call: one
                // slice per thread packs them least often.
                let per_thread = if k.mapping == Mapping::ColumnReduction
                    || k.contraction.is_some()
                    || k.attention.is_some()
                {
                    1
                } else {
                    4
                };
                let chunks = (threads as i64 * per_thread).min(total);
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
                // SAFETY: as above, one slice covering all work.
                let alone = || unsafe { call.run(0, total) };
                pool::pool().run(threads, &job, &alone);
            } else {
                // SAFETY: as above, one slice covering all work.
                unsafe { call.run(0, total) };
            }
            if let Some(fin) = loaded.fin {
                // Every chunk is done (the pool's launch returns after its
                // last slice): combine them in order and store.
                if err.load(Ordering::Relaxed) == 0 {
                    // SAFETY: as above; `parts` holds `total` results.
                    unsafe {
                        fin(
                            0,
                            total,
                            proven.symbols.as_ptr(),
                            args.as_ptr(),
                            err.as_ptr(),
                        )
                    };
                }
            }
            drop(parts);
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

/// What launches at proven sizes need: the size symbols' values in the
/// kernels' order, and per kernel its work items and the most elements any
/// of its parameters holds (the work that decides threading).
struct Proven {
    symbols: Vec<i64>,
    kernels: Vec<(i64, i64)>,
    /// Per kernel: the chunks of columns a contraction with too few rows
    /// to share runs over instead (its `_cols` function), else `None`.
    col_chunks: Vec<Option<i64>>,
    /// Whether a check the kernels print may fail at these sizes
    /// ([`tile_plan::RangeProof`]): then they run on copies.
    may_fail: bool,
}

/// A copy of a written buffer, 64-byte aligned (as vector code may
/// expect of any buffer), freed on drop.
struct Scratch {
    ptr: *mut u8,
    layout: std::alloc::Layout,
}

impl Scratch {
    /// A copy of the `bytes` at `src`, or `None` when allocation fails.
    ///
    /// # Safety
    /// `src` must be valid for reads of `bytes` bytes.
    unsafe fn copy_of(src: *const u8, bytes: usize) -> Option<Scratch> {
        let layout = std::alloc::Layout::from_size_align(bytes.max(64), 64).ok()?;
        // SAFETY: the layout's size is not zero.
        let ptr = unsafe { std::alloc::alloc(layout) };
        if ptr.is_null() {
            return None;
        }
        if bytes > 0 {
            // SAFETY: `ptr` holds at least `bytes`; the caller's contract.
            unsafe { std::ptr::copy_nonoverlapping(src, ptr, bytes) };
        }
        Some(Scratch { ptr, layout })
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        // SAFETY: allocated in `copy_of` with this layout.
        unsafe { std::alloc::dealloc(self.ptr, self.layout) }
    }
}

/// The position of parameter `name` in the program's list.
fn param_index(program: &tile_ir::Program, name: &str) -> Result<usize, CpuError> {
    program
        .params
        .iter()
        .position(|p| p.name == name)
        .ok_or_else(|| CpuError::Args(ArgError::Unknown(name.to_string())))
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
