//! Compiling a plan to a loaded module, and running it: argument checks,
//! uploads, launches on the stream, the failure word, downloads.

use crate::emit::{self, KernelInfo, KERNEL_SITES, ROWS_SITE_BASE, V4_SITE_BASE};
use crate::nvrtc::Nvrtc;
use crate::runtime::{gpu, DeviceBuffer, Gpu};
use crate::CudaError;
use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, OnceLock};
use tile_ir::{Array, Sizes};
use tile_plan::{Mapping, Plan};

/// Options of the CUDA back end.
#[derive(Clone, Debug)]
pub struct CudaOptions {
    /// Reuse compiled modules of the same source in this process
    /// (`TILE_CACHE=0` disables).
    pub cache: bool,
    /// Threads per block of element-grid and row kernels.
    pub block: u32,
    /// Allow the 16-byte (`_v4`) entry points (`TILE_CUDA_V4=0` disables).
    pub vec4: bool,
    /// Column quads per thread in the 16-byte entry points
    /// (`TILE_CUDA_UNROLL`, default 1): an experiment, not yet the default.
    pub unroll: u32,
    /// When row kernels stage rows in shared memory (`_rows` entry points;
    /// `TILE_CUDA_ROWS`: `0` never, `1` whenever the rows fit).
    pub stage_rows: RowStaging,
    /// Threads per block of row kernels (`TILE_CUDA_ROW_BLOCK`); `None`
    /// picks per launch: 256 for streaming rows (128 when a row's results
    /// are per-row values only, no inner store loop); for staged rows one
    /// thread per 32 elements of the longest row (one per 4 when there are
    /// fewer rows than multiprocessors), from 256 up to 1024. Launches
    /// round it into 32..=1024 and down to whole warps.
    pub row_block: Option<u32>,
    /// Quads each thread loads before computing any in row loops that read
    /// device memory as 16-byte vectors (`TILE_CUDA_ROW_UNROLL`, default
    /// [`DEFAULT_ROW_UNROLL`]; 1 to 8).
    pub row_unroll: u32,
    /// Quads per thread a streaming row kernel holds in registers between
    /// loops that read the same row (`TILE_CUDA_HOLD`, default
    /// [`DEFAULT_ROW_HOLD`]; 0 to 16, 0: none).
    pub row_hold: u32,
    /// Threads per column of column kernels whose columns the block shares
    /// (`TILE_CUDA_COL_SLICES`); `None` picks per launch: one per 8
    /// elements of a column, a power of two from 1 to 32. Launches round it
    /// down to a power of two in 1..=32.
    pub col_slices: Option<u32>,
}

/// When a row kernel stages the rows it reads whole in shared memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RowStaging {
    /// Never: every pass over a row reads device memory.
    Never,
    /// Where it pays: when the staged kernel computes values once that the
    /// streaming one computes twice (softmax's exponentials), or the rows
    /// are longer than [`STAGE_ROWS_LONGER_THAN`] elements. Shorter rows
    /// that are only read again stream: a second read of a row still in
    /// the caches costs less than waiting for the copy (measured on an
    /// H200 at 4096x4096: RMSNorm 39.1 us streaming against 42.6 staged,
    /// LayerNorm 41.8 against 43.3; softmax 49.4 against 39.2; at
    /// 4096x16384 staging is faster for all three).
    Auto,
    /// Whenever the rows fit in the shared memory a block may take.
    Always,
}

/// Quads per thread in flight in row loops over device memory (measured
/// on an H200 at 4096x4096, 128 threads a row, one/two/four quads per
/// step: row_lse 27.4/26.7/26.0 us, row_norm 19.6/18.8/18.8; at 256
/// threads RMSNorm 39.2/38.3/37.6, LayerNorm 42.2/42.3/43.2; whole-array
/// sums print one, see print_full.rs).
pub const DEFAULT_ROW_UNROLL: u32 = 2;

/// Quads per thread held in registers between a row's loops.
pub const DEFAULT_ROW_HOLD: u32 = 8;

/// Rows longer than this (elements) are staged under [`RowStaging::Auto`].
pub const STAGE_ROWS_LONGER_THAN: u64 = 8192;

impl Default for CudaOptions {
    fn default() -> Self {
        CudaOptions {
            cache: std::env::var("TILE_CACHE").map_or(true, |v| v != "0"),
            block: 256,
            vec4: std::env::var("TILE_CUDA_V4").map_or(true, |v| v != "0"),
            unroll: std::env::var("TILE_CUDA_UNROLL")
                .ok()
                .and_then(|v| v.parse().ok())
                .unwrap_or(1)
                .clamp(1, 8),
            stage_rows: match std::env::var("TILE_CUDA_ROWS").as_deref() {
                Ok("0") => RowStaging::Never,
                Ok("1") => RowStaging::Always,
                _ => RowStaging::Auto,
            },
            row_unroll: std::env::var("TILE_CUDA_ROW_UNROLL")
                .ok()
                .and_then(|v| v.parse().ok())
                .unwrap_or(DEFAULT_ROW_UNROLL)
                .clamp(1, 8),
            row_hold: std::env::var("TILE_CUDA_HOLD")
                .ok()
                .and_then(|v| v.parse().ok())
                .unwrap_or(DEFAULT_ROW_HOLD)
                .min(16),
            row_block: std::env::var("TILE_CUDA_ROW_BLOCK")
                .ok()
                .and_then(|v| v.parse::<u32>().ok())
                .filter(|b| *b > 0),
            col_slices: std::env::var("TILE_CUDA_COL_SLICES")
                .ok()
                .and_then(|v| v.parse::<u32>().ok())
                .filter(|b| *b > 0),
        }
    }
}

impl CudaOptions {
    /// The options that change the printed source.
    pub(crate) fn unrolls(&self) -> emit::Unroll {
        emit::Unroll {
            quads: self.unroll,
            rows: self.row_unroll,
            held: self.row_hold,
        }
    }
}

/// The parameter block every kernel takes (mirrors `TileArgs` in the
/// generated source).
#[repr(C)]
#[derive(Clone, Copy)]
struct TileArgs {
    lo: i64,
    hi: i64,
    s: [i64; 16],
    a: [u64; 32],
    err: u64,
}

/// The loaded entry points of one kernel.
#[derive(Clone, Copy)]
struct Funcs {
    plain: crate::driver::Handle,
    v4: Option<crate::driver::Handle>,
    rows: Option<crate::driver::Handle>,
    /// A full reduction's second stage (`tile_kN_fin`).
    fin: Option<crate::driver::Handle>,
    /// The most threads per block each entry point may launch with.
    plain_max: u32,
    v4_max: u32,
    rows_max: u32,
    fin_max: u32,
}

/// A plan compiled and loaded on the GPU.
pub struct CudaModule {
    gpu: Arc<Gpu>,
    plan: Plan,
    source: String,
    hash: String,
    kernels: Vec<KernelInfo>,
    funcs: Vec<Funcs>,
    /// The most dynamic shared memory a `_rows` launch may take.
    rows_limit: u32,
    opts: CudaOptions,
    nvrtc_version: String,
    /// Distinguishes modules, so a `Bound` is used only with its own.
    id: u64,
    /// The last raw arguments' binding.
    bound: tile_ir::args::RawBinding,
    /// The last sizes proven for raw launches, whether a check may fail
    /// at them, and their launches.
    proven: Mutex<Option<(Sizes, bool, Arc<Launches>)>>,
    /// The failure word of raw launches, and the lock that serialises
    /// launches that may write it.
    word: OnceLock<DeviceBuffer>,
    failing: Mutex<()>,
    /// Full reductions' chunk results: [`tile_plan::PARTIALS`] doubles per
    /// full-reduction kernel, at `part_offsets[n]` bytes for kernel `n`.
    /// Shared by the module's launches, so raw launches of a module that
    /// has one are serialised and waited for.
    partials: Option<DeviceBuffer>,
    part_offsets: Vec<u64>,
}

/// One kernel's launch at given sizes.
struct Launch {
    func: crate::driver::Handle,
    grid: (u32, u32),
    /// Threads per block: x, and y (slices of a column kernel; 1 otherwise).
    block: (u32, u32),
    shared: u32,
    /// Its parameters, as indices into the program's.
    params: Vec<usize>,
    /// A device address passed after the parameters (a full reduction's
    /// chunk results), or 0.
    extra: u64,
}

/// A launch before its parameters are attached ([`Launch`]).
struct Shape {
    func: crate::driver::Handle,
    grid: (u32, u32),
    block: (u32, u32),
    shared: u32,
    extra: u64,
}

impl Shape {
    /// `block` threads in x, no shared memory, no extra argument.
    fn one(func: crate::driver::Handle, grid: (u32, u32), block: u32) -> Self {
        Shape {
            func,
            grid,
            block: (block, 1),
            shared: 0,
            extra: 0,
        }
    }
}

/// `b` threads in whole warps, within `most` (what the entry point's
/// registers allow).
fn fit(b: u32, most: u32) -> u32 {
    b.min(most).max(32) / 32 * 32
}

/// A plan's launches at given sizes, and the size symbols' values.
struct Launches {
    sizes: [i64; 16],
    kernels: Vec<Launch>,
}

// SAFETY: function handles are plain driver handles (see CudaModule).
unsafe impl Send for Launches {}
unsafe impl Sync for Launches {}

/// An argument error about one raw argument.
fn raw_error(a: &tile_ir::args::RawArg, reason: String) -> tile_ir::ArgError {
    tile_ir::ArgError::Raw {
        name: a.name.clone(),
        reason,
    }
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

/// CUBINs by (source hash, architecture).
type CubinCache = HashMap<(String, u32), Arc<Vec<u8>>>;

/// Compiles `plan` for the current GPU.
pub fn compile(plan: &Plan, opts: &CudaOptions) -> Result<CudaModule, CudaError> {
    let emitted = emit::emit(plan, opts.unrolls())?;
    let gpu = gpu()?;
    let nv = nvrtc()?;
    let arch = (gpu.cc.0 * 10 + gpu.cc.1) as u32;
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
        if let Some(f) = rows {
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
            fin,
            plain_max: most(Some(plain))?,
            v4_max: most(v4)?,
            rows_max: most(rows)?,
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

/// Arguments uploaded to the device, ready for repeated launches.
pub struct Bound {
    /// The module that bound it (its proof and buffers are that program's).
    module: u64,
    sizes: Sizes,
    buffers: BTreeMap<String, DeviceBuffer>,
    err: DeviceBuffer,
}

impl Bound {
    /// The device buffer of a parameter.
    pub fn buffer(&self, name: &str) -> Option<&DeviceBuffer> {
        self.buffers.get(name)
    }
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

    /// Checks `arrays` against the program and uploads every parameter.
    pub fn bind(
        &self,
        arrays: &BTreeMap<String, Array>,
        explicit: &Sizes,
    ) -> Result<Bound, CudaError> {
        let sizes = tile_ir::args::bind_arrays(&self.plan.program, arrays, explicit)?;
        let proof = tile_plan::check_ranges(&self.plan, &sizes)?;
        self.refuse_failing_barriers(&proof)?;
        let mut buffers = BTreeMap::new();
        for p in &self.plan.program.params {
            let a = &arrays[&p.name];
            let b = self.gpu.alloc(a.as_bytes().len())?;
            b.upload(a.as_bytes())?;
            buffers.insert(p.name.clone(), b);
        }
        let err = self.gpu.alloc(4)?;
        err.fill_u32(0)?;
        Ok(Bound {
            module: self.id,
            sizes,
            buffers,
            err,
        })
    }

    /// Refuses a `Bound` made by another module.
    fn own(&self, b: &Bound) -> Result<(), CudaError> {
        if b.module == self.id {
            Ok(())
        } else {
            Err(CudaError::Unsupported(
                "these arguments were bound by another module".to_string(),
            ))
        }
    }

    /// The device buffer of parameter `name` in `b`.
    fn buffer<'b>(&self, b: &'b Bound, name: &str) -> Result<&'b DeviceBuffer, CudaError> {
        b.buffers
            .get(name)
            .ok_or_else(|| CudaError::Args(tile_ir::ArgError::Missing(name.to_string())))
    }

    /// Launches every kernel on the stream, in plan order (asynchronous).
    pub fn launch(&self, b: &Bound) -> Result<(), CudaError> {
        self.own(b)?;
        let mut addrs = Vec::with_capacity(self.plan.program.params.len());
        for p in &self.plan.program.params {
            addrs.push(self.buffer(b, &p.name)?.ptr);
        }
        // A full reduction's chunk results are the module's: each plan's
        // launches are enqueued together on the one stream, so another
        // launch's chunks never land between a chunk kernel and its
        // second stage.
        let _guard = match &self.partials {
            Some(_) => Some(self.failing.lock().map_err(|_| {
                CudaError::Unsupported("a previous launch panicked while holding the module".into())
            })?),
            None => None,
        };
        self.launch_kernels(&b.sizes, &addrs, b.err.ptr, self.gpu.stream)
    }

    /// Checks arguments in caller-owned device memory (`addr`s are device
    /// addresses in this process's primary context), proves the ranges,
    /// and launches every kernel on `stream` (a `CUstream` of the context,
    /// or 0 for the legacy default stream). Nothing waits for the kernels,
    /// unless a check they print may fail at these sizes
    /// ([`tile_plan::RangeProof`]): then the call waits for `stream` and
    /// reports the failure.
    ///
    /// Besides [`tile_ir::args::bind_raw`]'s checks, the memory of every
    /// argument not marked in `trusted` must lie inside one allocation on
    /// this module's device (the driver's record of it, one driver call
    /// per argument), so an address made up or freed is refused. A caller
    /// marks an argument trusted when its owner already guarantees that
    /// (PyTorch checks every tensor view against its storage).
    ///
    /// When a check may fail, the kernels run on device copies of the
    /// written arguments, copied back only if every check passed: a
    /// failed call leaves every argument as it was.
    ///
    /// # Safety
    /// The memory must stay allocated, and not be written by other work
    /// on other streams, until the kernels on `stream` finish; trusted
    /// arguments must lie inside allocations of this module's device.
    pub unsafe fn launch_raw(
        &self,
        args: &[tile_ir::args::RawArg],
        trusted: &[bool],
        explicit: &Sizes,
        stream: u64,
    ) -> Result<(), CudaError> {
        let program = &self.plan.program;
        // Each argument's memory first: an argument that claims more than
        // its allocation is refused as such, before the checks between
        // arguments (an overlap computed from a false extent says less).
        self.gpu.bind()?;
        let mut addrs = vec![0u64; program.params.len()];
        for (k, a) in args.iter().enumerate() {
            let i = program
                .params
                .iter()
                .position(|p| p.name == a.name)
                .ok_or_else(|| CudaError::Args(tile_ir::ArgError::Unknown(a.name.clone())))?;
            if a.bytes > 0 && !trusted.get(k).copied().unwrap_or(false) {
                let (start, size, ordinal) = self.gpu.allocation(a.addr).map_err(|e| {
                    CudaError::Args(raw_error(
                        a,
                        format!(
                            "address {:#x} is not device memory the CUDA driver knows ({e})",
                            a.addr
                        ),
                    ))
                })?;
                if ordinal != self.gpu.ordinal {
                    return Err(CudaError::Args(raw_error(
                        a,
                        format!(
                            "is on CUDA device {ordinal}, but Tile runs on device {} (set TILE_CUDA_DEVICE)",
                            self.gpu.ordinal
                        ),
                    )));
                }
                let end = a.addr as u128 + a.bytes as u128;
                if a.addr < start || end > start as u128 + size as u128 {
                    return Err(CudaError::Args(raw_error(
                        a,
                        format!(
                            "{} bytes at {:#x} run past the end of their allocation ({size} bytes at {start:#x})",
                            a.bytes, a.addr
                        ),
                    )));
                }
            }
            addrs[i] = a.addr;
        }
        let sizes = self.bound.bind(program, args, explicit)?;
        let (may_fail, launches) = self.prove(&sizes)?;
        let stream = stream as usize as crate::driver::Handle;
        if !may_fail && self.partials.is_none() {
            // No check can fail: the failure word is never written.
            let err = self.failure_word()?;
            return self.fire(&launches, &addrs, err.ptr, stream);
        }
        // A check may fail, or a full reduction's chunk results are in the
        // module's one buffer: launches are serialised on the word, and the
        // call waits (and reads the word).
        let _guard = self.failing.lock().map_err(|_| {
            CudaError::Unsupported(
                "a previous launch panicked while holding the failure word".into(),
            )
        })?;
        let err = self.failure_word()?;
        if self.partials.is_some() {
            // Launches through `launch` on the module's own stream use the
            // same chunk buffer: let them finish first.
            self.gpu.sync_stream(self.gpu.stream)?;
        }
        if !may_fail {
            self.fire(&launches, &addrs, err.ptr, stream)?;
            self.gpu.sync_stream(stream)?;
            return self.read_failure(err);
        }
        // A check may fail: the kernels write device copies of the written
        // arguments, copied back only when no check failed, so a failed
        // call leaves every argument as it was.
        let mut copies = Vec::new();
        let mut shadow = addrs.clone();
        for a in args {
            let Some(i) = program.params.iter().position(|p| p.name == a.name) else {
                continue;
            };
            if !program.params[i].role.is_written() || a.bytes == 0 {
                continue;
            }
            let bytes = a.bytes;
            let copy = self.gpu.alloc(bytes)?;
            // SAFETY: `a` was checked to lie in device memory of this
            // context; the copy is a new allocation of `bytes`.
            unsafe { self.gpu.copy_on(copy.ptr, a.addr, bytes, stream)? };
            shadow[i] = copy.ptr;
            copies.push((i, bytes, copy));
        }
        self.fire(&launches, &shadow, err.ptr, stream)?;
        self.gpu.sync_stream(stream)?;
        self.read_failure(err)?;
        for (i, bytes, copy) in &copies {
            // SAFETY: as above.
            unsafe { self.gpu.copy_on(addrs[*i], copy.ptr, *bytes, stream)? };
        }
        // The copies are freed when this returns: their last use first.
        self.gpu.sync_stream(stream)
    }

    /// Refuses, before any launch, a plan whose printed checks may fail at
    /// these sizes when it has a kernel whose threads check different
    /// ranges and then wait at a barrier (a column kernel sharing its
    /// columns, a full reduction whose chunk runs on one thread): a failed
    /// check ends its thread, and the others would wait for it. The CPU
    /// runs such a program and names the failing access.
    fn refuse_failing_barriers(&self, proof: &tile_plan::RangeProof) -> Result<(), CudaError> {
        if !proof.checks_may_fail {
            return Ok(());
        }
        let program = &self.plan.program;
        let risky = self.plan.kernels.iter().find(|k| match k.mapping {
            Mapping::ColumnReduction => crate::print_columns::shares(k),
            Mapping::FullReduction => k.full_parts().is_some_and(|f| f.deep),
            _ => false,
        });
        match risky {
            Some(k) => Err(CudaError::Unsupported(format!(
                "kernel {} ({}) of `{}` may fail a bounds check at these sizes, and its block waits at barriers: refused before launch (the CPU target runs it and names the failing access)",
                k.name,
                k.mapping.name(),
                program.name
            ))),
            None => Ok(()),
        }
    }

    /// `check_ranges` at `sizes`, remembered for the last sizes: whether a
    /// printed check may fail, and the launches.
    fn prove(&self, sizes: &Sizes) -> Result<(bool, Arc<Launches>), CudaError> {
        if let Ok(p) = self.proven.lock() {
            if let Some((s, may_fail, launches)) = p.as_ref() {
                if s == sizes {
                    return Ok((*may_fail, launches.clone()));
                }
            }
        }
        let proof = tile_plan::check_ranges(&self.plan, sizes)?;
        self.refuse_failing_barriers(&proof)?;
        let launches = Arc::new(self.configure(sizes)?);
        if let Ok(mut p) = self.proven.lock() {
            *p = Some((sizes.clone(), proof.checks_may_fail, launches.clone()));
        }
        Ok((proof.checks_may_fail, launches))
    }

    /// The module's failure word for raw launches (zeroed when made, and
    /// again after each failure read).
    fn failure_word(&self) -> Result<&DeviceBuffer, CudaError> {
        if let Some(w) = self.word.get() {
            return Ok(w);
        }
        let w = self.gpu.alloc(4)?;
        w.fill_u32(0)?;
        self.gpu.sync()?;
        Ok(self.word.get_or_init(|| w))
    }

    /// Launches every kernel on `stream` with parameter addresses `addrs`
    /// (in the program's parameter order) at proven `sizes`, configured
    /// once per sizes (the cache raw launches use).
    fn launch_kernels(
        &self,
        sizes: &Sizes,
        addrs: &[u64],
        err: u64,
        stream: crate::driver::Handle,
    ) -> Result<(), CudaError> {
        let (_, launches) = self.prove(sizes)?;
        self.fire(&launches, addrs, err, stream)
    }

    /// Issues `launches` on `stream`.
    fn fire(
        &self,
        launches: &Launches,
        addrs: &[u64],
        err: u64,
        stream: crate::driver::Handle,
    ) -> Result<(), CudaError> {
        for l in &launches.kernels {
            let mut a = [0u64; 32];
            for (slot, &p) in a.iter_mut().zip(&l.params) {
                *slot = *addrs
                    .get(p)
                    .ok_or_else(|| CudaError::Unsupported("a parameter has no address".into()))?;
            }
            if l.extra != 0 {
                a[l.params.len()] = l.extra;
            }
            let args = TileArgs {
                lo: 0,
                hi: 0,
                s: launches.sizes,
                a,
                err,
            };
            self.gpu
                .launch(stream, l.func, l.grid, l.block, l.shared, &args)?;
        }
        Ok(())
    }

    /// Every kernel's launch at proven `sizes`: entry point, grid, block,
    /// dynamic shared memory and parameters (kernels with no work are left
    /// out).
    fn configure(&self, sizes: &Sizes) -> Result<Launches, CudaError> {
        let s = self.symbol_values(sizes)?;
        let mut kernels = Vec::with_capacity(self.plan.kernels.len());
        for (n, k) in self.plan.kernels.iter().enumerate() {
            let params = self.launch_params(k)?;
            // Checked extents; the caller proved (check_ranges) that every
            // kernel's domain holds fewer than 2^62 points, so products of
            // extents (element_launch's rows) cannot overflow.
            let exts = k.extents(sizes)?;
            let shapes = match k.mapping {
                Mapping::ElementGrid | Mapping::Split => self.element_launch(n, &exts, sizes),
                Mapping::RowReduction => self.row_launch(n, k, &exts, sizes),
                Mapping::ColumnReduction => self.column_launch(n, k, &exts, sizes)?,
                Mapping::FullReduction => self.full_launches(n, k, sizes)?,
                Mapping::Serial => vec![Shape::one(self.funcs[n].plain, (1, 1), 1)],
            };
            kernels.extend(shapes.into_iter().map(|sh| Launch {
                func: sh.func,
                grid: sh.grid,
                block: sh.block,
                shared: sh.shared,
                params: params.clone(),
                extra: sh.extra,
            }));
        }
        Ok(Launches { sizes: s, kernels })
    }

    /// The size symbols' values in declaration order (at most 16).
    fn symbol_values(&self, sizes: &Sizes) -> Result<[i64; 16], CudaError> {
        let symbols = self.plan.program.size_symbols();
        if symbols.len() > 16 {
            return Err(CudaError::Unsupported(format!(
                "{} size symbols (at most 16)",
                symbols.len()
            )));
        }
        let mut s = [0i64; 16];
        for (i, sym) in symbols.iter().enumerate() {
            s[i] = *sizes
                .get(sym)
                .ok_or_else(|| CudaError::Args(tile_ir::ArgError::Unbound(sym.clone())))?;
        }
        Ok(s)
    }

    /// Kernel `k`'s parameters as indices into the program's (at most 32;
    /// 31 for a full reduction, which passes its chunk results after
    /// them).
    fn launch_params(&self, k: &tile_plan::Kernel) -> Result<Vec<usize>, CudaError> {
        let program = &self.plan.program;
        let kparams = k.params(program);
        let most = if k.mapping == Mapping::FullReduction {
            31
        } else {
            32
        };
        if kparams.len() > most {
            return Err(CudaError::Unsupported(format!(
                "kernel {} has {} parameters (at most {most})",
                k.name,
                kparams.len()
            )));
        }
        kparams
            .iter()
            .map(|p| {
                program
                    .params
                    .iter()
                    .position(|q| q.name == p.name)
                    .ok_or_else(|| CudaError::Args(tile_ir::ArgError::Missing(p.name.clone())))
            })
            .collect()
    }

    /// An element-wise kernel's launch: a thread per element (or per
    /// quad, through the 16-byte entry point where every access is
    /// aligned), rows of the grid over the outer dimensions; one thread
    /// for a domain of no dimensions, none when an extent is 0.
    fn element_launch(&self, n: usize, exts: &[i64], sizes: &Sizes) -> Vec<Shape> {
        let fs = &self.funcs[n];
        if exts.is_empty() {
            return vec![Shape::one(fs.plain, (1, 1), 1)];
        }
        if exts.contains(&0) {
            return Vec::new();
        }
        let block = self.opts.block.max(32);
        let use_v4 = fs.v4.is_some() && self.opts.vec4 && self.v4_aligned(n, sizes);
        let inner = exts[exts.len() - 1];
        let rows: i64 = exts[..exts.len() - 1].iter().product();
        let (func, cols, block) = match (use_v4, fs.v4) {
            (true, Some(v)) => (
                v,
                (inner / 4 + self.opts.unroll as i64 - 1) / self.opts.unroll as i64,
                fit(block, fs.v4_max),
            ),
            _ => (fs.plain, inner, fit(block, fs.plain_max)),
        };
        let gx = ((cols + block as i64 - 1) / block as i64).clamp(1, 1 << 30) as u32;
        let gy = rows.clamp(1, 65535) as u32;
        vec![Shape::one(func, (gx, gy), block)]
    }

    /// A row kernel's launch: a block per row, staged in shared memory
    /// where the rows fit and staging pays, else streaming.
    fn row_launch(
        &self,
        n: usize,
        k: &tile_plan::Kernel,
        exts: &[i64],
        sizes: &Sizes,
    ) -> Vec<Shape> {
        let fs = &self.funcs[n];
        let nrows = exts.first().copied().unwrap_or(0);
        if nrows == 0 {
            return Vec::new();
        }
        let grid = (nrows.clamp(1, 1 << 20) as u32, 1);
        match (fs.rows, self.staging_bytes(n, sizes)) {
            (Some(staged), Some((bytes, longest))) if self.stages(n, longest) => {
                // Long rows take more threads: about 32 elements (eight
                // quads) per thread, or 4 when there are fewer rows than
                // multiprocessors (measured on an H200: 256 threads best
                // for 4096-long rows, 512 for 16384-long ones and for 37
                // rows of 1537).
                let block = self.opts.row_block.unwrap_or_else(|| {
                    let per = if nrows < self.gpu.sm_count as i64 {
                        4
                    } else {
                        32
                    };
                    ((longest / per).next_power_of_two() as u32).clamp(256, 1024)
                });
                // Whole warps: block reductions shuffle across all 32 lanes.
                let mut sh = Shape::one(staged, grid, fit(block, fs.rows_max));
                sh.shared = bytes;
                vec![sh]
            }
            _ => {
                // 256 threads; 128 when the row's results are per-row
                // values only, no inner store loop (measured on an H200 at
                // 4096x4096: row_lse 27.5 us against 29.5, row_norm 19.6
                // against 20.8; kernels that store rows are not faster at
                // 128: RMSNorm 49.1 against 39.3, LayerNorm 53.3 against
                // 42.6, softmax level).
                let per_row = !k
                    .body
                    .iter()
                    .any(|s| matches!(s, tile_ir::Stmt::For { .. }));
                let block = self
                    .opts
                    .row_block
                    .unwrap_or(if per_row { 128 } else { 256 });
                vec![Shape::one(fs.plain, grid, fit(block, fs.plain_max))]
            }
        }
    }

    /// A column kernel's launch: blocks of columns, each column split into
    /// slices of threads where the block can share it.
    fn column_launch(
        &self,
        n: usize,
        k: &tile_plan::Kernel,
        exts: &[i64],
        sizes: &Sizes,
    ) -> Result<Vec<Shape>, CudaError> {
        let fs = &self.funcs[n];
        let ncols = exts.first().copied().unwrap_or(0);
        if ncols == 0 {
            return Ok(Vec::new());
        }
        // Slices per column: about 8 elements of the largest parameter's
        // column per thread, at most 32; the block at least 256 threads
        // (whole warps of columns). Measured on an H200 (cuda_reductions):
        // col_sum at 4096x4096 takes 25.2 us with 32 slices, 39.4 with 16,
        // 520 with 1; col_moments at 37x1537, 2 slices 5.6 us, 4 to 32
        // 4.6-4.7.
        let boxes = tile_ir::args::boxes(&self.plan.program, sizes)?;
        let per_col = k
            .params(&self.plan.program)
            .iter()
            .filter_map(|p| boxes.get(&p.name))
            .map(|b| {
                b.iter()
                    .map(|(lo, hi)| (hi - lo).max(0))
                    .fold(1i64, |a, n| a.saturating_mul(n))
            })
            .max()
            .unwrap_or(0)
            / ncols;
        let mut ny = if crate::print_columns::shares(k) {
            let want = self.opts.col_slices.map_or_else(
                || ((per_col / 8).max(1) as u64).next_power_of_two(),
                |n| 1u64 << n.clamp(1, 32).ilog2(),
            );
            want.min(32) as u32
        } else {
            1
        };
        let mut bx = (256 / ny).max(32);
        // Within what the kernel's registers allow: fewer slices first,
        // then fewer columns per block.
        while bx * ny > fs.plain_max && ny > 1 {
            ny /= 2;
            bx = (256 / ny).max(32);
        }
        let bx = fit(bx, fs.plain_max);
        let grid = ((ncols + bx as i64 - 1) / bx as i64).clamp(1, 1 << 20) as u32;
        let mut sh = Shape::one(fs.plain, (grid, 1), bx);
        sh.block = (bx, ny);
        Ok(vec![sh])
    }

    /// A full reduction's two launches: one block per chunk (1024 threads
    /// where the registers allow: enough loads in flight with at most 256
    /// blocks), then one block that combines the chunks.
    fn full_launches(
        &self,
        n: usize,
        k: &tile_plan::Kernel,
        sizes: &Sizes,
    ) -> Result<Vec<Shape>, CudaError> {
        let fs = &self.funcs[n];
        let (Some(fin), Some(parts)) = (fs.fin, &self.partials) else {
            return Err(CudaError::Unsupported(format!(
                "kernel {} has no second stage",
                k.name
            )));
        };
        let chunks = k.work_items(sizes)?;
        let extra = parts.ptr + self.part_offsets[n];
        let grid = (chunks.clamp(1, tile_plan::PARTIALS) as u32, 1);
        let mut first = Shape::one(fs.plain, grid, fit(1024, fs.plain_max));
        first.extra = extra;
        let mut second = Shape::one(fin, (1, 1), fit(tile_plan::PARTIALS as u32, fs.fin_max));
        second.extra = extra;
        Ok(vec![first, second])
    }

    /// Dynamic shared memory for kernel `n`'s `_rows` entry point at these
    /// sizes and its longest row, when it has one and the rows fit the
    /// device's limit.
    fn staging_bytes(&self, n: usize, sizes: &Sizes) -> Option<(u32, u64)> {
        let staged = self.kernels[n].rows.as_ref()?;
        let (bytes, longest) = crate::stage_rows::staging_bytes(staged, sizes)?;
        (bytes > 0 && bytes <= self.rows_limit as u64).then_some((bytes as u32, longest))
    }

    /// Whether kernel `n` (whose rows fit) runs staged, for a longest row
    /// of `longest` elements.
    fn stages(&self, n: usize, longest: u64) -> bool {
        match self.opts.stage_rows {
            RowStaging::Never => false,
            RowStaging::Always => true,
            RowStaging::Auto => self.kernels[n].rows_cache || longest > STAGE_ROWS_LONGER_THAN,
        }
    }

    /// Whether every vector access of kernel `n` starts its quads on a
    /// 16-byte boundary at these sizes (a ragged row end, an extent not a
    /// multiple of 4, runs the scalar code in the entry point's tail).
    fn v4_aligned(&self, n: usize, sizes: &Sizes) -> bool {
        let Some(conds) = &self.kernels[n].v4 else {
            return false;
        };
        conds.iter().all(|(first, row)| {
            tile_ir::args::eval_int(first, sizes).is_some_and(|v| v.rem_euclid(4) == 0)
                && row
                    .as_ref()
                    .is_none_or(|r| tile_ir::args::eval_int(r, sizes).is_some_and(|v| v % 4 == 0))
        })
    }

    /// Waits for the launches and reports a failed bounds check.
    pub fn finish(&self, b: &Bound) -> Result<(), CudaError> {
        self.own(b)?;
        self.gpu.sync()?;
        self.read_failure(&b.err)
    }

    /// Reads a failure word after its launches finished (and zeroes it
    /// again), naming the failed check.
    fn read_failure(&self, err: &DeviceBuffer) -> Result<(), CudaError> {
        let mut word = [0u8; 4];
        err.download(&mut word)?;
        let site = i32::from_ne_bytes(word);
        if site == 0 {
            return Ok(());
        }
        err.fill_u32(0)?;
        let (k, within) = (site / KERNEL_SITES, site % KERNEL_SITES);
        if let Some(info) = usize::try_from(k).ok().and_then(|k| self.kernels.get(k)) {
            let out = |s: &tile_emit::Site| match s.what {
                "div" => CudaError::IntArith {
                    kernel: info.name.clone(),
                    line: s.line,
                },
                _ => CudaError::OutOfBounds {
                    kernel: info.name.clone(),
                    what: s.what.to_string(),
                    buf: s.buf.clone(),
                    line: s.line,
                },
            };
            let index = |base: i32| (within - base - 1) as usize;
            if within > ROWS_SITE_BASE {
                if let Some(s) = info.rows_sites.get(index(ROWS_SITE_BASE)) {
                    return Err(out(s));
                }
            } else if within > V4_SITE_BASE {
                if let Some(buf) = info.v4_sites.get(index(V4_SITE_BASE)) {
                    return Err(CudaError::OutOfBounds {
                        kernel: info.name.clone(),
                        what: "vector access".into(),
                        buf: buf.clone(),
                        line: 0,
                    });
                }
            } else if let Some(s) = info.sites.get(index(0)) {
                return Err(out(s));
            }
        }
        Err(CudaError::OutOfBounds {
            kernel: "?".into(),
            what: format!("site {site}"),
            buf: "?".into(),
            line: 0,
        })
    }

    /// Copies every out/inout parameter back into `arrays`.
    pub fn download(
        &self,
        b: &Bound,
        arrays: &mut BTreeMap<String, Array>,
    ) -> Result<(), CudaError> {
        self.own(b)?;
        for p in self
            .plan
            .program
            .params
            .iter()
            .filter(|p| p.role.is_written())
        {
            if let Some(a) = arrays.get_mut(&p.name) {
                let n = a.as_bytes().len();
                let buffer = self.buffer(b, &p.name)?;
                if n != buffer.bytes {
                    return Err(CudaError::Unsupported(format!(
                        "`{}` has {n} bytes, but its device buffer {}",
                        p.name, buffer.bytes
                    )));
                }
                // SAFETY: the array owns `n` bytes of plain old data.
                let bytes = unsafe { std::slice::from_raw_parts_mut(a.as_mut_ptr(), n) };
                buffer.download(bytes)?;
            }
        }
        Ok(())
    }

    /// Checks, uploads, runs every kernel, and downloads the results.
    pub fn run(
        &self,
        arrays: &mut BTreeMap<String, Array>,
        explicit: &Sizes,
    ) -> Result<(), CudaError> {
        let b = self.bind(arrays, explicit)?;
        self.launch(&b)?;
        self.finish(&b)?;
        self.download(&b, arrays)
    }
}
