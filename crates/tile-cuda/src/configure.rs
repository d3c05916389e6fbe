//! Every kernel's launch at given sizes: the entry point (the lowering's
//! rules pick `_v4` and `_rows`), the grid, the block, dynamic shared
//! memory and parameters; one function per mapping.

use crate::compile::CudaModule;
use crate::CudaError;
use tile_ir::Sizes;
use tile_plan::kernel_ir::quads_aligned;
use tile_plan::Mapping;

/// One kernel's launch at given sizes.
pub(crate) struct Launch {
    pub(crate) func: crate::driver::Handle,
    pub(crate) grid: (u32, u32),
    /// Threads per block: x, and y (slices of a column kernel; 1 otherwise).
    pub(crate) block: (u32, u32),
    pub(crate) shared: u32,
    /// Its parameters, as indices into the program's.
    pub(crate) params: Vec<usize>,
    /// A device address passed after the parameters (a full reduction's
    /// chunk results), or 0.
    pub(crate) extra: u64,
}

/// A launch before its parameters are attached ([`Launch`]).
pub(crate) struct Shape {
    pub(crate) func: crate::driver::Handle,
    pub(crate) grid: (u32, u32),
    pub(crate) block: (u32, u32),
    pub(crate) shared: u32,
    pub(crate) extra: u64,
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
pub(crate) fn fit(b: u32, most: u32) -> u32 {
    b.min(most).max(32) / 32 * 32
}

/// A plan's launches at given sizes, and the size symbols' values.
pub(crate) struct Launches {
    pub(crate) sizes: [i64; 16],
    pub(crate) kernels: Vec<Launch>,
}

// SAFETY: function handles are plain driver handles (see CudaModule).
unsafe impl Send for Launches {}
unsafe impl Sync for Launches {}

impl CudaModule {
    /// Every kernel's launch at proven `sizes`: entry point, grid, block,
    /// dynamic shared memory and parameters (kernels with no work are left
    /// out). `checks_may_fail`: the range proof's verdict at `sizes`.
    pub(crate) fn configure(
        &self,
        sizes: &Sizes,
        checks_may_fail: bool,
    ) -> Result<Launches, CudaError> {
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
                Mapping::RowReduction => self.row_launch(n, k, &exts, sizes, checks_may_fail),
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
        let use_v4 = fs.v4.is_some()
            && self.opts.vec4
            && self.kernels[n]
                .v4
                .as_ref()
                .is_some_and(|c| quads_aligned(c, sizes));
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
        checks_may_fail: bool,
    ) -> Vec<Shape> {
        let fs = &self.funcs[n];
        let nrows = exts.first().copied().unwrap_or(0);
        if nrows == 0 {
            return Vec::new();
        }
        // A contraction: a block per tile of products, where the tiles fit
        // the grid and the entry point takes a block's threads.
        // 128 x 128 tiles, or 64 x 64 ones where the larger would leave
        // multiprocessors idle.
        if let (Some(mm), Some(mm64), Some(g)) = (fs.mm, fs.mm64, &self.kernels[n].mm) {
            let extent = |(lo, hi): &(tile_ir::Expr, tile_ir::Expr)| {
                tile_ir::args::eval_int(hi, sizes)
                    .zip(tile_ir::args::eval_int(lo, sizes))
                    .map(|(h, l)| h.saturating_sub(l).max(0))
            };
            // A batched product: the kernel's rows are batches, each
            // with the product's rows; `x` takes each batch's columns.
            let shape = match &g.rows {
                None => extent(&g.cols).map(|cols| (1, nrows, cols)),
                Some(rows) => extent(rows)
                    .zip(extent(&g.cols))
                    .map(|(r, c)| (nrows, r, c)),
            };
            let threads = crate::print_contraction::THREADS;
            if let Some((batches, rows, cols)) = shape {
                let grid = |tile: i64| {
                    (
                        ((cols + tile - 1) / tile).saturating_mul(batches),
                        (rows + tile - 1) / tile,
                    )
                };
                let (gx, gy) = grid(128);
                let small = gx.saturating_mul(gy) < self.gpu.sm_count as i64;
                let (func, most, (gx, gy)) = if small {
                    (mm64, fs.mm64_max, grid(64))
                } else {
                    (mm, fs.mm_max, (gx, gy))
                };
                if self.opts.tiles
                    && most >= threads
                    && (1..1 << 30).contains(&gx)
                    && (1..=65535).contains(&gy)
                {
                    return vec![Shape::one(func, (gx as u32, gy as u32), threads)];
                }
            }
        }
        // An attention head: among the entry points whose dynamic shared
        // memory (growing with the depth) fits, a block per 64 query rows,
        // or per 32 where that leaves multiprocessors idle (or is the
        // only one), 64 output columns per pass where there are at most
        // 64, else 128 (64 where 128 do not fit). Not where a check may
        // fail: a failing thread leaves its block before the barriers and
        // shuffles its neighbours wait at, so the row kernel runs instead
        // and reports the access.
        if let (true, Some(info), false) = (
            self.opts.tiles && !fs.att.is_empty(),
            &self.kernels[n].att,
            checks_may_fail,
        ) {
            let extent = |(lo, hi): &(tile_ir::Expr, tile_ir::Expr)| {
                tile_ir::args::eval_int(hi, sizes)
                    .zip(tile_ir::args::eval_int(lo, sizes))
                    .map(|(h, l)| h.saturating_sub(l).max(0))
            };
            let threads = crate::print_contraction::THREADS;
            let sms = self.gpu.sm_count as i64;
            if let (Some(d), Some(e)) = (extent(&info.depth), extent(&info.cols)) {
                // 128 columns a pass where they fit, else two passes of 64
                // (the staged entry points; the others take 128 and no
                // dynamic shared memory).
                let widths: &[i64] = match (info.staged, e <= 64) {
                    (false, _) => &[128],
                    (true, true) => &[64],
                    (true, false) => &[128, 64],
                };
                let fits = |rows: i64| match self.opts.att_rows {
                    Some(want) => rows == want,
                    None => (nrows + rows - 1) / rows >= sms,
                };
                let bytes = |rows: i64, cols: i64| match info.staged {
                    true => {
                        crate::print_attention_staged::shared_bytes(rows, cols, d, info.elem_bytes)
                            .filter(|&b| b <= self.rows_limit as u64)
                    }
                    false => Some(0),
                };
                let usable: Vec<_> = widths
                    .iter()
                    .map(|&cols| {
                        fs.att
                            .iter()
                            .filter(|(rows, c, _, most)| {
                                *c == cols && *most >= threads && bytes(*rows, cols).is_some()
                            })
                            .collect::<Vec<_>>()
                    })
                    .find(|u| !u.is_empty())
                    .unwrap_or_default();
                let pick = usable
                    .iter()
                    .find(|(rows, ..)| fits(*rows))
                    .or(usable.last());
                if let Some(&&(rows, cols, f, _)) = pick {
                    let blocks = (nrows + rows - 1) / rows;
                    if let (true, Some(bytes)) = ((1..1 << 30).contains(&blocks), bytes(rows, cols))
                    {
                        let mut sh = Shape::one(f, (blocks as u32, 1), threads);
                        sh.shared = bytes as u32;
                        return vec![sh];
                    }
                }
            }
        }
        let grid = (nrows.clamp(1, 1 << 20) as u32, 1);
        match (fs.rows, self.staging_bytes(n, sizes)) {
            (Some(staged), Some((bytes, longest)))
                if self.kernels[n]
                    .rows
                    .as_ref()
                    .is_some_and(|r| r.stages(self.opts.stage_rows, longest)) =>
            {
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
        let mut ny = if tile_emit::gpu::shares(k) {
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
        let (bytes, longest) = staged.staging_bytes(sizes)?;
        (bytes > 0 && bytes <= self.rows_limit as u64).then_some((bytes as u32, longest))
    }
}
