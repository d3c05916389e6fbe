//! Running a compiled module: argument checks, uploads, launches on a
//! stream (on device copies that are committed only when every check
//! passed, where a check may fail), downloads.

use crate::compile::CudaModule;
use crate::configure::Launches;
use crate::runtime::DeviceBuffer;
use crate::CudaError;
use std::collections::BTreeMap;
use std::sync::Arc;
use tile_ir::{Array, Sizes};

/// The parameter block every kernel takes (mirrors `TileArgs` in the
/// generated source).
#[repr(C)]
#[derive(Clone, Copy)]
pub(crate) struct TileArgs {
    lo: i64,
    hi: i64,
    s: [i64; 16],
    a: [u64; 32],
    err: u64,
}

/// An argument error about one raw argument.
fn raw_error(a: &tile_ir::args::RawArg, reason: String) -> tile_ir::ArgError {
    tile_ir::ArgError::Raw {
        name: a.name.clone(),
        reason,
    }
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
        let risky = self
            .kernels
            .iter()
            .zip(&self.plan.kernels)
            .find(|(info, _)| info.check_then_wait);
        match risky {
            Some((_, k)) => Err(CudaError::Unsupported(format!(
                "kernel {} ({}) of `{}` may fail a bounds check at these sizes, and its block waits at barriers: refused before launch (the CPU target runs it and names the failing access)",
                k.name,
                k.mapping.name(),
                self.plan.program.name
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
        let launches = Arc::new(self.configure(sizes, proof.checks_may_fail)?);
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

    /// Waits for the launches and reports a failed bounds check.
    pub fn finish(&self, b: &Bound) -> Result<(), CudaError> {
        self.own(b)?;
        self.gpu.sync()?;
        self.read_failure(&b.err)
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
