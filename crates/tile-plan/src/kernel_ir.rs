//! The lowered kernels: for one target, what each kernel of a plan runs,
//! with every choice the back end used to make itself written down
//! ([`crate::lower_kernels`] builds them; `tile plan --target` prints them).
//!
//! A [`crate::Plan`] holds facts (which loops may run as lanes, which rows
//! are reread, which bodies may be cached or interchanged) beside
//! alternative bodies. A [`Lowered`] kernel holds decisions: the one body
//! each entry point runs, the loops that run as vector lanes, how
//! reductions are reassociated, the extra entry points (16-byte accesses,
//! rows staged in shared memory) and the rows held in registers. Back ends
//! print what it says and call no legality rule themselves.

use crate::{Mapping, ScratchRow};
use serde_json::{json, Value};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use tile_ir::{Expr, LoopVar, ReduceOp, Span, Stmt};

/// Whether a statement's own expressions hold a reduction.
fn reduces(s: &Stmt) -> bool {
    let mut found = false;
    s.walk_exprs(&mut |e| found |= e.has_reduction());
    found
}

/// Accesses a GPU thread may make as one 16-byte vector of four `f32` in
/// a loop over a row four elements at a time
/// ([`crate::find_quad_accesses`]): the buffer is `f32`, the last index is
/// `var + c` with `c` and every other index fixed over the loop (no `var`,
/// no name the loop's body binds, no reduction, no load in the last
/// index), and one check at the loop's entry proves it in bounds over the
/// whole loop (it runs unconditionally at the loop's level, every index
/// affine in names whose range is known there), a check the printer then
/// prints. Keyed by the loop's variable, the buffer and the index as
/// printed; an access seen in several places is a quad access only if it
/// is one in all of them. A loop uses vectors only where every access is
/// one, and (for stores) where the loop's batch decision allows
/// ([`LoweredKernel::batches`]).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct QuadAccesses(BTreeMap<(String, String, String), bool>);

impl QuadAccesses {
    /// Records whether `buf[idx]` is contiguous in a loop over `var` and
    /// checked at the loop's entry.
    pub fn record(&mut self, var: &str, buf: &str, idx: &[Expr], quad: bool) {
        self.0
            .entry(Self::key(var, buf, idx))
            .and_modify(|c| *c &= quad)
            .or_insert(quad);
    }

    /// Whether the lowering found `buf[idx]` a quad access in a loop over
    /// `var` (an access it never saw is not).
    pub fn quad(&self, var: &str, buf: &str, idx: &[Expr]) -> bool {
        self.0.get(&Self::key(var, buf, idx)) == Some(&true)
    }

    /// The quad accesses, as `buf[idx] over var`.
    pub fn list(&self) -> Vec<String> {
        self.by_var()
            .into_iter()
            .flat_map(|(v, accesses)| accesses.into_iter().map(move |a| format!("{a} over {v}")))
            .collect()
    }

    /// The quad accesses (`buf[idx]`) by loop variable.
    pub fn by_var(&self) -> BTreeMap<&str, Vec<String>> {
        let mut out: BTreeMap<&str, Vec<String>> = BTreeMap::new();
        for ((v, b, i), c) in &self.0 {
            if *c {
                out.entry(v.as_str()).or_default().push(format!("{b}[{i}]"));
            }
        }
        out
    }

    fn key(var: &str, buf: &str, idx: &[Expr]) -> (String, String, String) {
        let idx: Vec<String> = idx.iter().map(|e| e.to_string()).collect();
        (var.to_string(), buf.to_string(), idx.join(", "))
    }
}

/// How a GPU block reduces one chunk of a full reduction's range
/// ([`LoweredKernel::full`]), chosen from the plan's [`crate::FullParts`]
/// in this order. Every form ends each chunk at a barrier (the next
/// chunk's reductions reuse the shared slots), and a second entry point,
/// `_fin`, has one block combine the chunks' results in a fixed tree and
/// its first thread store.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FullForm {
    /// The chunk on the block's first thread, in order: its rows hold
    /// reductions nested deeper (`FullParts::deep`).
    OneThread,
    /// `op(i: op(j: B))` with one operator (`FullParts::flat`): each thread
    /// adds its share of every row of the chunk into one value, and the
    /// block combines them once per chunk.
    ThreadShares,
    /// The chunk's rows one after another (`FullParts::nested`), each
    /// row's reductions split over the block, a barrier after each row.
    RowsOverBlock,
    /// The chunk's values split over the block's threads, combined once.
    OverBlock,
}

impl FullForm {
    /// The form the plan's parts call for.
    pub fn of(parts: &crate::FullParts) -> FullForm {
        if parts.deep {
            FullForm::OneThread
        } else if parts.flat.is_some() {
            FullForm::ThreadShares
        } else if parts.nested {
            FullForm::RowsOverBlock
        } else {
            FullForm::OverBlock
        }
    }

    /// A short name (`tile plan --json`).
    pub fn name(self) -> &'static str {
        match self {
            FullForm::OneThread => "one_thread",
            FullForm::ThreadShares => "thread_shares",
            FullForm::RowsOverBlock => "rows_over_block",
            FullForm::OverBlock => "over_block",
        }
    }

    fn describe(self) -> &'static str {
        match self {
            FullForm::OneThread => "each block's first thread reduces a chunk in order (nested reductions)",
            FullForm::ThreadShares => "each thread adds its share of every row of a chunk into one value, the block combines once",
            FullForm::RowsOverBlock => "a chunk's rows one after another, each row's reductions split over the block, a barrier after each row",
            FullForm::OverBlock => "a chunk split over the block's threads, combined once",
        }
    }
}

/// What a target offers the lowering.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Target {
    /// `cpu`, `cuda` or `wgpu`.
    pub name: &'static str,
    /// Vector registers: innermost loops whose iterations are independent
    /// run as vector lanes, and uniform reductions run on vectors.
    pub vectors: bool,
    /// Vector accumulators of a uniform reduction's first loop
    /// (independent chains; see [`Reassociation`]).
    pub accumulators: u32,
    /// 16-byte loads and stores of four `f32` in row kernels (their quad
    /// loops and batched loops).
    pub wide_access: bool,
    /// Element kernels get a `_v4` entry point ([`Entry::Quads`]): four
    /// consecutive elements per thread with 16-byte accesses (CUDA's
    /// `float4`, WGSL's `vec4<f32>` views of the buffers).
    pub quad_entries: bool,
    /// Memory a block's threads share, where rows that several statements
    /// read are staged (CUDA's `_rows` entry points).
    pub shared_rows: bool,
    /// Quads per thread a streaming row kernel may hold in registers
    /// between loops that read the same row (0: none).
    pub held_quads: u32,
    /// The threads of a block wait for each other at barriers (GPU row,
    /// column and full-reduction kernels that share their work).
    pub barriers: bool,
    /// Iterations of a shared column's slice loop (each thread's share of
    /// the rows, one reduction or a one-pass group) unrolled together
    /// ([`LoweredKernel::slice_unroll`]; 1: none).
    pub slice_unroll: u32,
    /// Contractions ([`crate::Kernel::contraction`]) run tiled: blocks of
    /// products computed together, then the epilogue on them
    /// ([`Form::Contraction`]).
    pub tiles_contractions: bool,
    /// Attention heads ([`crate::Kernel::attention`]) run tiled
    /// ([`Form::Attention`]).
    pub tiles_attention: bool,
}

impl Target {
    /// The C target: vector extensions, four accumulators per vectorised
    /// reduction.
    pub const CPU: Target = Target {
        name: "cpu",
        vectors: true,
        accumulators: 4,
        wide_access: false,
        quad_entries: false,
        shared_rows: false,
        held_quads: 0,
        barriers: false,
        slice_unroll: 1,
        tiles_contractions: true,
        tiles_attention: true,
    };

    /// The WGSL target (wgpu): blocks and barriers; 16-byte accesses in
    /// element kernels' `_v4` entry points only (through `vec4<f32>` views
    /// of the buffers), scalar ones in row kernels; no staged or held rows.
    pub const WGPU: Target = Target {
        name: "wgpu",
        vectors: false,
        accumulators: 1,
        wide_access: false,
        quad_entries: true,
        shared_rows: false,
        held_quads: 0,
        barriers: true,
        slice_unroll: 1,
        tiles_contractions: false,
        tiles_attention: false,
    };

    /// The CUDA target, holding `held_quads` quads of reread rows per
    /// thread in streaming row kernels.
    pub fn cuda(held_quads: u32) -> Target {
        Target {
            name: "cuda",
            vectors: false,
            accumulators: 1,
            wide_access: true,
            quad_entries: true,
            shared_rows: true,
            held_quads,
            barriers: true,
            slice_unroll: SLICE_UNROLL,
            // Printed as entry points beside the row kernel; the runtime
            // may turn them off ([`Target::with_tiles`]).
            tiles_contractions: true,
            tiles_attention: true,
        }
    }
}

impl Target {
    /// This target with contractions and attention heads tiled or not
    /// ([`Target::tiles_contractions`], [`Target::tiles_attention`]).
    pub fn with_tiles(self, tiles: bool) -> Target {
        Target {
            tiles_contractions: tiles,
            tiles_attention: tiles,
            ..self
        }
    }
}

/// How many iterations of a shared column's slice loop CUDA unrolls
/// ([`Target::slice_unroll`]; the accumulators still add in order).
/// Measured on an H100 for LayerNorm backward's weight and bias gradients
/// at 4096x4096 (one loop, two accumulators, [`RowStep::BindTogether`]):
/// 81.5 us rolled, 81.4 unrolled by 4, 52.1 by 8; two separate loops took
/// 76.4 and a copy of the bytes 47.6. Single reductions: see
/// `bench/experiments/column_one_pass/run.sh` and
/// docs/results/reductions/README.md.
pub const SLICE_UNROLL: u32 = 8;

/// The identity of a `for` statement within a kernel's body: the `for`
/// keyword's place and its innermost variable (what the printers look a
/// loop's decision up by).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct LoopKey {
    /// Line of the `for` keyword.
    pub line: u32,
    /// Column of the `for` keyword.
    pub col: u32,
    /// The loop's innermost variable.
    pub var: String,
}

impl LoopKey {
    /// The key of a `for` at `span` whose innermost variable is `var`.
    pub fn new(span: Span, var: &str) -> LoopKey {
        LoopKey {
            line: span.line,
            col: span.col,
            var: var.to_string(),
        }
    }
}

/// How one `for` of a lowered body runs.
#[derive(Clone, Debug, PartialEq)]
pub struct LoopRun {
    /// The loop.
    pub key: LoopKey,
    /// `None`: its iterations run as vector lanes (the last ones, fewer
    /// than a vector, one at a time); otherwise why they run one at a
    /// time.
    pub scalar: Option<String>,
}

/// How a target reorders the terms of a uniform reduction (one whose
/// bounds and body do not vary across the lanes of the code around it).
/// Reductions whose body varies across lanes run each lane's terms in
/// order; integer reductions and `max`/`min` give the same result in any
/// order; a float sum's rounding depends on it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reassociation {
    /// Terms combined one by one in index order.
    InOrder,
    /// `accumulators` vectors of `lanes` terms per step, each into its
    /// own accumulator (accumulator `a`, lane `l` takes the terms
    /// `lo + s*accumulators*lanes + a*lanes + l`); the accumulators folded
    /// as a tree (`(a0 + a1) + (a2 + a3)`), then one vector per step into
    /// the first, its lanes combined, then the remaining terms in order.
    /// (`lanes` is the target's vector width for the reduction's type.)
    Vectors {
        /// Accumulators of the first loop.
        accumulators: u32,
    },
    /// Split over a block's threads: each thread combines its share in
    /// order, then the threads' results combine in a fixed order (rows:
    /// warp shuffles at distances 16, 8, 4, 2, 1, then the warps in warp
    /// order; columns: the slices in slice order; full reductions: the
    /// chunks in chunk order), the same bits on every thread and every run.
    Threads,
}

/// A condition of a `_v4` entry point: an access's first element's offset
/// within its buffer's last dimension, and that dimension's length (`None`
/// for a one-dimensional buffer); both must be multiples of four.
pub type QuadCondition = (Expr, Option<Expr>);

/// Whether a `_v4` entry point's conditions hold at `sizes`: every
/// access's first element and every row length a multiple of four, so each
/// quad starts on a 16-byte boundary (the runtime launches the entry point
/// only then; a ragged row end runs the entry point's scalar tail).
pub fn quads_aligned(conditions: &[QuadCondition], sizes: &tile_ir::Sizes) -> bool {
    conditions.iter().all(|(first, row)| {
        tile_ir::args::eval_int(first, sizes).is_some_and(|v| v.rem_euclid(4) == 0)
            && row
                .as_ref()
                .is_none_or(|r| tile_ir::args::eval_int(r, sizes).is_some_and(|v| v % 4 == 0))
    })
}

/// When a row kernel with a `_rows` entry point runs it (stages its rows in
/// shared memory) rather than its streaming one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RowStaging {
    /// Never: every pass over a row reads device memory.
    Never,
    /// Where it pays ([`RowEntry::stages`]): when the staged kernel
    /// computes values once that the streaming one computes twice
    /// (softmax's exponentials), or the rows are longer than
    /// [`STAGE_ROWS_LONGER_THAN`] elements. Shorter rows that are only
    /// read again stream: a second read of a row still in the caches costs
    /// less than waiting for the copy (measured on an H200 at 4096x4096:
    /// RMSNorm 39.1 us streaming against 42.6 staged, LayerNorm 41.8
    /// against 43.3; softmax 49.4 against 39.2; at 4096x16384 staging is
    /// faster for all three).
    Auto,
    /// Whenever the rows fit in the shared memory a block may take.
    Always,
}

/// Rows longer than this (elements) are staged under [`RowStaging::Auto`].
pub const STAGE_ROWS_LONGER_THAN: u64 = 8192;

/// An entry point a kernel has beside its general one.
#[derive(Clone, Debug, PartialEq)]
pub enum Entry {
    /// `_v4`: four elements of the innermost domain variable per thread,
    /// with 16-byte loads and stores, used where every condition holds at
    /// the call's sizes.
    Quads {
        /// Per contiguous access (loads first, then stores): the offset of
        /// its first element within the buffer's last dimension, and that
        /// dimension's length (`None` for a one-dimensional buffer); the
        /// entry point runs where every offset and length is a multiple of
        /// four.
        conditions: Vec<QuadCondition>,
        /// The buffer of each condition (what a failure names).
        sites: Vec<String>,
    },
    /// `_rows`: a row kernel with input rows that several statements read
    /// (and the body's scratch rows) in shared memory.
    Rows(RowEntry),
}

/// The `_rows` entry point of a row kernel.
#[derive(Clone, Debug, PartialEq)]
pub struct RowEntry {
    /// Its body (the cached body where scratch rows are `f32`).
    pub body: Vec<Stmt>,
    /// Input rows copied into shared memory once per row, in the order of
    /// the statements that first read them.
    pub staged: Vec<StagedRow>,
    /// Scratch rows, in shared memory after the staged ones.
    pub scratch: Vec<ScratchRow>,
    /// Statement indices `a` of `body` where the scratch row filled by
    /// statement `a` and the reduction bound by `a + 1` run as one loop
    /// ([`crate::fill_read_back`]), with the reduction's operator.
    pub fused: Vec<(usize, ReduceOp)>,
    /// As [`LoweredKernel::batches`], for this body.
    pub batches: BTreeSet<LoopKey>,
    /// As [`LoweredKernel::steps`], for this body (its rows always split).
    pub steps: Vec<RowStep>,
}

impl RowEntry {
    /// The range of every row in shared memory, staged rows first (the
    /// runtime sizes the dynamic shared memory from them).
    pub fn ranges(&self) -> Vec<(Expr, Expr)> {
        self.staged
            .iter()
            .map(|s| (s.lo.clone(), s.hi.clone()))
            .chain(self.scratch.iter().map(|s| (s.lo.clone(), s.hi.clone())))
            .collect()
    }

    /// The shared memory the entry point takes at `sizes` and its longest
    /// row in elements; `None` when a bound cannot be evaluated or the sum
    /// overflows. The rows lie one after another in [`RowEntry::ranges`]'
    /// order, each `f32` row taking whole 16-byte quads (so each starts on
    /// a 16-byte boundary): the layout a target's `_rows` entry point
    /// prints.
    pub fn staging_bytes(&self, sizes: &tile_ir::Sizes) -> Option<(u64, u64)> {
        let mut total: u64 = 0;
        let mut longest: u64 = 0;
        for (lo, hi) in self.ranges() {
            let lo = tile_ir::args::eval_int(&lo, sizes)?;
            let hi = tile_ir::args::eval_int(&hi, sizes)?;
            let len = hi.checked_sub(lo)?.max(0) as u64;
            longest = longest.max(len);
            total = total.checked_add(len.div_ceil(4) * 16)?;
        }
        Some((total, longest))
    }

    /// Whether the runtime runs this entry point under `policy`, given
    /// that its rows (the longest `longest` elements) fit the shared
    /// memory a block may take.
    pub fn stages(&self, policy: RowStaging, longest: u64) -> bool {
        match policy {
            RowStaging::Never => false,
            RowStaging::Always => true,
            RowStaging::Auto => !self.scratch.is_empty() || longest > STAGE_ROWS_LONGER_THAN,
        }
    }
}

/// A buffer whose rows a kernel stages (or holds), and the range of its
/// last dimension (the row).
#[derive(Clone, Debug, PartialEq)]
pub struct StagedRow {
    /// The input.
    pub buf: String,
    /// First index of the row.
    pub lo: Expr,
    /// One past its last index.
    pub hi: Expr,
    /// Source line of the first statement that reads the row (failures of
    /// the staging copy report it).
    pub line: u32,
}

/// A row a streaming row kernel keeps in registers between the loops that
/// read it.
#[derive(Clone, Debug, PartialEq)]
pub struct HeldRow {
    /// The row.
    pub row: StagedRow,
    /// The register array's name (`hq0`, ...).
    pub name: String,
    /// Quads of it each thread keeps.
    pub quads: u32,
}

/// One kernel of a plan, lowered for a target.
#[derive(Clone, Debug, PartialEq)]
pub struct LoweredKernel {
    /// The plan's kernel name.
    pub name: String,
    /// Its mapping.
    pub mapping: Mapping,
    /// Which of the plan's bodies the general entry point runs.
    pub form: Form,
    /// That body.
    pub body: Vec<Stmt>,
    /// Scratch rows the body writes and reads (per thread or task).
    pub scratch: Vec<ScratchRow>,
    /// Element and column kernels: whether the innermost domain variable
    /// runs as vector lanes (`None`) or one element at a time (why).
    pub inner: Option<Option<String>>,
    /// Every `for` of the body that may run as vector lanes, and why each
    /// other one does not (targets with vectors; in body order).
    pub loops: Vec<LoopRun>,
    /// How uniform reductions are reassociated.
    pub reassociation: Reassociation,
    /// Quad loops' batch rule: the loops of the body (and of the `_rows`
    /// entry point's) whose quads of iterations may load before they store
    /// ([`crate::batch_refusal`]; targets with 16-byte accesses).
    pub batches: BTreeSet<LoopKey>,
    /// Entry points beside the general one.
    pub entries: Vec<Entry>,
    /// Rows held in registers (streaming row kernels).
    pub held: Vec<HeldRow>,
    /// The block's threads check different ranges, then wait at a barrier
    /// (a column kernel sharing its columns, a full reduction whose chunk
    /// runs on one thread): a failed check ends its thread and the others
    /// would wait for it forever, so the runtime refuses to launch such a
    /// kernel where the range proof leaves a check open
    /// ([`crate::RangeProof::checks_may_fail`]).
    pub check_then_wait: bool,
    /// A shared column kernel on a target with barriers: each thread's
    /// slice loop over the rows runs this many iterations unrolled
    /// ([`Target::slice_unroll`]; 1 otherwise).
    pub slice_unroll: u32,
    /// A target with 16-byte accesses: the accesses of a row or
    /// full-reduction kernel's loops and reductions that are contiguous
    /// in their variable (empty otherwise).
    pub quads: QuadAccesses,
    /// A full reduction on a target with barriers: how a block reduces
    /// each chunk (`None` otherwise).
    pub full: Option<FullForm>,
    /// Row and column kernels on a target with barriers: how a block runs
    /// each row (or group of columns) of the general entry point, step by
    /// step, with every barrier (empty otherwise).
    pub steps: Vec<RowStep>,
    /// A contraction this target tiles: on a target with vectors (the
    /// CPU) the body is [`Form::Contraction`]'s, the epilogue run on
    /// blocks of products; on a GPU the body stays the plan's and the
    /// target adds an entry point that computes a block of products per
    /// block of threads, then [`crate::Contraction::per_element`] on each
    /// (`None` otherwise).
    pub contraction: Option<crate::Contraction>,
    /// An attention head this target tiles ([`Form::Attention`]); `body`
    /// is then its scores body followed by its output body.
    pub attention: Option<crate::Attention>,
}

/// One step of a row (or a group of columns) that a GPU block runs
/// ([`LoweredKernel::steps`]): in a column kernel, "the block's first
/// thread" is each column's first thread, and only a live column's
/// stores.
/// Statements are the body's own (a target renames what it stages).
#[derive(Clone, Debug, PartialEq)]
pub enum RowStep {
    /// A binding every thread computes; each reduction in it is split over
    /// the block's threads and combined for all of them (the combination
    /// waits at barriers of its own).
    Bind(Stmt),
    /// Bindings whose reductions all run over one range
    /// (`hoist_sibling_reductions.rs`): one pass over the range, split over
    /// the block's threads as [`RowStep::Bind`]'s are, each reduction with
    /// its own accumulator and order, so each result is what it would be
    /// alone; then each is combined for every thread.
    BindTogether(Vec<Stmt>),
    /// A loop whose iterations are split over the block's threads.
    Split(Stmt),
    /// A scratch row's fill and the binding that reduces it, as one loop
    /// whose stored values are reduced as they are stored
    /// ([`RowEntry::fused`]); where the fill has no 16-byte vector form, a
    /// target runs `unfused` instead.
    FillAndReduce {
        /// The fill (a loop storing the scratch row).
        fill: Stmt,
        /// The binding reading it back.
        bind: Stmt,
        /// The reduction's operator.
        op: ReduceOp,
        /// The same statements one by one.
        unfused: Vec<RowStep>,
    },
    /// A store of the row's own result: its reductions over the block (if
    /// a [`RowStep::BindTogether`] did not bind them already), then the
    /// block's first thread stores.
    FirstThreadStore(Stmt),
    /// Statements the block's first thread runs alone, in order (a row the
    /// block cannot share, with nothing to reduce; or a split column's
    /// plain `if`, after the bindings it reads).
    FirstThread(Vec<Stmt>),
    /// A store in a row that runs in lockstep: every thread computes the
    /// value and the indices, waits at a barrier (every read before any
    /// write), then checks and writes the same value to the same element,
    /// and waits again; a failed check fails in every thread alike.
    LockstepStore(Stmt),
    /// A loop every thread runs, in lockstep; `body` ends with the
    /// barrier that ends each iteration.
    LockstepLoop {
        /// Its variables, outermost first.
        vars: Vec<LoopVar>,
        /// The `for`'s place.
        span: Span,
        /// Each iteration's steps.
        body: Vec<RowStep>,
    },
    /// An `if` every thread takes alike, in lockstep (its condition reads
    /// what every thread reads alike).
    LockstepIf {
        /// The condition.
        cond: Expr,
        /// The `if`'s place.
        span: Span,
        /// The steps of each branch.
        then: Vec<RowStep>,
        /// The steps of the `else` branch.
        els: Vec<RowStep>,
    },
    /// Every thread of the block waits here.
    Barrier(Wait),
}

/// Why a block waits at a barrier ([`RowStep::Barrier`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Wait {
    /// What the threads just stored is read by later statements, possibly
    /// by other threads.
    Writes,
    /// The next work item's block reductions (the next row's, the next
    /// group of columns') reuse the shared slots: every thread reads this
    /// one's results first.
    EndOfItem,
    /// A lockstep iteration's reductions reuse the slots of the one
    /// before: every thread reads them first.
    EndOfIteration,
    /// After a lockstep loop, which may have run no iteration.
    AfterLoop,
    /// After a lockstep `if`: which branch's reductions ran is known only
    /// at run time.
    AfterIf,
}

impl Wait {
    fn name(self) -> &'static str {
        match self {
            Wait::Writes => "writes",
            Wait::EndOfItem => "end of work item",
            Wait::EndOfIteration => "end of iteration",
            Wait::AfterLoop => "after loop",
            Wait::AfterIf => "after if",
        }
    }
}

/// `steps` as JSON: one object per step, `step` its kind, `line` its
/// statement's line, nested steps under `body`, `then` and `else`.
fn steps_json(steps: &[RowStep]) -> Value {
    let one = |kind: &str, s: &Stmt| json!({"step": kind, "line": s.span().line});
    Value::Array(
        steps
            .iter()
            .map(|st| match st {
                RowStep::Bind(s) => one("bind", s),
                RowStep::BindTogether(ss) => json!({
                    "step": "bind_together",
                    "lines": ss.iter().map(|s| s.span().line).collect::<Vec<_>>(),
                }),
                RowStep::Split(s) => one("split_loop", s),
                RowStep::FillAndReduce { fill, bind, .. } => json!({
                    "step": "fill_and_reduce",
                    "line": fill.span().line,
                    "bind_line": bind.span().line,
                }),
                RowStep::FirstThreadStore(s) => one("first_thread_store", s),
                RowStep::FirstThread(_) => json!({"step": "first_thread"}),
                RowStep::LockstepStore(s) => one("lockstep_store", s),
                RowStep::LockstepLoop { span, body, .. } => json!({
                    "step": "lockstep_loop",
                    "line": span.line,
                    "body": steps_json(body),
                }),
                RowStep::LockstepIf {
                    span, then, els, ..
                } => json!({
                    "step": "lockstep_if",
                    "line": span.line,
                    "then": steps_json(then),
                    "else": steps_json(els),
                }),
                RowStep::Barrier(w) => json!({"step": "barrier", "why": w.name()}),
            })
            .collect(),
    )
}

/// `steps` in braces (`{}` when there are none).
fn braced(steps: &[RowStep]) -> String {
    if steps.is_empty() {
        "{}".to_string()
    } else {
        format!("{{ {} }}", show_steps(steps))
    }
}

/// `steps` in one line for `tile plan --target` (each statement by its kind
/// and line).
fn show_steps(steps: &[RowStep]) -> String {
    let line = |s: &Stmt| s.span().line;
    let name = |s: &Stmt| match s {
        Stmt::Let { name, .. } => format!("{name} (line {})", line(s)),
        Stmt::Store { buf, .. } => format!("{buf} (line {})", line(s)),
        Stmt::For { vars, .. } => format!(
            "{} (line {})",
            vars.last().map_or("", |v| v.name.as_str()),
            line(s)
        ),
        Stmt::If { .. } => format!("if (line {})", line(s)),
    };
    steps
        .iter()
        .map(|st| match st {
            RowStep::Bind(s) => format!("bind {}", name(s)),
            RowStep::BindTogether(ss) => format!(
                "bind in one pass {}",
                ss.iter().map(name).collect::<Vec<_>>().join(", ")
            ),
            RowStep::Split(s) => format!("split loop {}", name(s)),
            RowStep::FillAndReduce { fill, bind, .. } => {
                format!("fill {} reduced into {}", name(fill), name(bind))
            }
            // A store whose reductions a one-pass group bound beforehand
            // reduces nothing itself.
            RowStep::FirstThreadStore(s) if !reduces(s) => {
                format!("first thread stores {}", name(s))
            }
            RowStep::FirstThreadStore(s) => format!("reduce, first thread stores {}", name(s)),
            // A split column's plain `if`.
            RowStep::FirstThread(ss) if matches!(ss.as_slice(), [Stmt::If { .. }]) => {
                format!("first thread runs {}", name(&ss[0]))
            }
            RowStep::FirstThread(_) => "first thread runs it alone".to_string(),
            RowStep::LockstepStore(s) => format!("lockstep store {}", name(s)),
            RowStep::LockstepLoop { vars, span, body } => format!(
                "lockstep loop {} (line {}) {}",
                vars.last().map_or("", |v| v.name.as_str()),
                span.line,
                braced(body)
            ),
            RowStep::LockstepIf {
                span, then, els, ..
            } => {
                if els.is_empty() {
                    format!("lockstep if (line {}) {}", span.line, braced(then))
                } else {
                    format!(
                        "lockstep if (line {}) {} else {}",
                        span.line,
                        braced(then),
                        braced(els)
                    )
                }
            }
            RowStep::Barrier(w) => format!("barrier ({})", w.name()),
        })
        .collect::<Vec<_>>()
        .join("; ")
}

impl LoweredKernel {
    /// The set of loops that run as vector lanes.
    pub fn lane_loops(&self) -> BTreeSet<LoopKey> {
        self.loops
            .iter()
            .filter(|l| l.scalar.is_none())
            .map(|l| l.key.clone())
            .collect()
    }

    /// The `_v4` entry point, if the kernel has one.
    pub fn quads(&self) -> Option<(&[QuadCondition], &[String])> {
        self.entries.iter().find_map(|e| match e {
            Entry::Quads { conditions, sites } => Some((&conditions[..], &sites[..])),
            Entry::Rows(_) => None,
        })
    }

    /// The `_rows` entry point, if the kernel has one.
    pub fn rows(&self) -> Option<&RowEntry> {
        self.entries.iter().find_map(|e| match e {
            Entry::Rows(r) => Some(r),
            Entry::Quads { .. } => None,
        })
    }
}

/// Which body a kernel runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Form {
    /// The plan's body.
    Plain,
    /// The body with reduced values computed once into scratch rows
    /// ([`crate::Kernel::cached`]).
    Cached,
    /// The body run a block of columns or iterations at a time
    /// ([`crate::Kernel::interchanged`]).
    Interchanged,
    /// A contraction's epilogue, run on blocks of products the target
    /// computes tiled ([`crate::Kernel::contraction`]).
    Contraction,
    /// An attention head's two per-row bodies around two tiled products
    /// ([`crate::Kernel::attention`]).
    Attention,
}

impl Form {
    fn name(self) -> &'static str {
        match self {
            Form::Plain => "the plan's body",
            Form::Cached => "the cached body (reduced values computed once into scratch rows)",
            Form::Interchanged => "the interchanged body (blocks of columns or iterations)",
            Form::Contraction => "the contraction's epilogue, on blocks of products computed tiled",
            Form::Attention => {
                "attention: scores by a tiled product, softmax per row, a second tiled product"
            }
        }
    }
}

/// A plan lowered for one target.
#[derive(Clone, Debug, PartialEq)]
pub struct Lowered {
    /// The target.
    pub target: Target,
    /// One per plan kernel, in launch order.
    pub kernels: Vec<LoweredKernel>,
}

impl Lowered {
    /// The lowered kernels as JSON (`tile plan --target T --json`, key
    /// `lowered`).
    pub fn to_json(&self) -> Value {
        let kernels: Vec<Value> = self
            .kernels
            .iter()
            .map(|k| {
                json!({
                    "name": k.name,
                    "body": match k.form {
                        Form::Plain => "plain",
                        Form::Cached => "cached",
                        Form::Interchanged => "interchanged",
                        Form::Contraction => "contraction",
                        Form::Attention => "attention",
                    },
                    "inner_lanes": k.inner.as_ref().map(|i| json!({"lanes": i.is_none(), "why": i})),
                    "loops": k.loops.iter().map(|l| json!({
                        "var": l.key.var,
                        "line": l.key.line,
                        "lanes": l.scalar.is_none(),
                        "why": l.scalar,
                    })).collect::<Vec<_>>(),
                    "sums": match k.reassociation {
                        Reassociation::InOrder => json!("in_order"),
                        Reassociation::Vectors { accumulators } => json!({"vectors": accumulators}),
                        Reassociation::Threads => json!("threads"),
                    },
                    "quad_loops": k.batches.iter().map(|b| json!({"var": b.var, "line": b.line})).collect::<Vec<_>>(),
                    "entries": k.entries.iter().map(|e| match e {
                        Entry::Quads { sites, .. } => json!({"entry": "v4", "accesses": sites}),
                        Entry::Rows(r) => json!({
                            "entry": "rows",
                            "staged": r.staged.iter().map(|s| s.buf.clone()).collect::<Vec<_>>(),
                            "scratch": r.scratch.iter().map(|s| s.name.clone()).collect::<Vec<_>>(),
                            "fused": r.fused.iter().map(|(a, _)| a + 1).collect::<Vec<_>>(),
                            "steps": steps_json(&r.steps),
                        }),
                    }).collect::<Vec<_>>(),
                    "check_then_wait": k.check_then_wait,
                    "slice_unroll": k.slice_unroll,
                    "full_form": k.full.map(FullForm::name),
                    "quad_accesses": k.quads.list(),
                    "steps": steps_json(&k.steps),
                    "held": k.held.iter().map(|h| json!({
                        "buf": h.row.buf,
                        "range": format!("{}..{}", h.row.lo, h.row.hi),
                        "quads": h.quads,
                    })).collect::<Vec<_>>(),
                })
            })
            .collect();
        json!({"target": self.target.name, "kernels": kernels})
    }
}

impl fmt::Display for Lowered {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "lowered for {}:", self.target.name)?;
        for k in &self.kernels {
            writeln!(f, "  {} {}", k.name, k.mapping.name())?;
            writeln!(f, "     body:   {}", k.form.name())?;
            if let Some(c) = &k.contraction {
                let how = if self.target.vectors {
                    format!(
                        "into rows of {} products, then the epilogue",
                        crate::CONTRACTION_COLUMNS
                    )
                } else {
                    "a tile of products per block of threads, then the epilogue per product (entry points beside the row kernel)".to_string()
                };
                writeln!(
                    f,
                    "     tiles:  {} x {} ({}) {how}",
                    c.a.buf,
                    c.b.buf,
                    match (c.a.transposed, c.b.transposed) {
                        (false, false) => "neither transposed",
                        (true, false) => "the left transposed",
                        (false, true) => "the right transposed",
                        (true, true) => "both transposed",
                    },
                )?;
            }
            if let (Some(a), false) = (&k.attention, self.target.vectors) {
                writeln!(
                    f,
                    "     tiles:  attention over {}, {}, {}: a block of query rows per block of threads, scores in registers, one sweep over the keys per 128 output columns (an online softmax: running maximum, weights, their sum and the weighted rows of {}), no M x N array (entry points beside the row kernel)",
                    a.q.buf, a.k.buf, a.v.buf, a.v.buf
                )?;
            }
            match &k.inner {
                Some(None) => writeln!(f, "     inner:  vector lanes")?,
                Some(Some(why)) => writeln!(f, "     inner:  one element at a time ({why})")?,
                None => {}
            }
            for l in &k.loops {
                let run = match &l.scalar {
                    None => "vector lanes".to_string(),
                    Some(why) => format!("one iteration at a time ({why})"),
                };
                writeln!(
                    f,
                    "     loop:   {} at line {}: {run}",
                    l.key.var, l.key.line
                )?;
            }
            for b in &k.batches {
                writeln!(
                    f,
                    "     quads:  {} at line {}: four iterations may load before they store",
                    b.var, b.line
                )?;
            }
            for (var, accesses) in k.quads.by_var() {
                writeln!(
                    f,
                    "     access: 16-byte over {var} where checked at the loop's entry: {}",
                    accesses.join(", ")
                )?;
            }
            let reduces = k.body.iter().any(reduces);
            match k.reassociation {
                _ if !reduces => {}
                Reassociation::InOrder => writeln!(f, "     sums:   each in order")?,
                Reassociation::Vectors { accumulators } => writeln!(
                    f,
                    "     sums:   uniform reductions on vectors, {accumulators} accumulators folded as a tree, then lanes, then the tail in order"
                )?,
                Reassociation::Threads => writeln!(
                    f,
                    "     sums:   split over the block's threads, each in order, then the threads in a fixed order"
                )?,
            }
            if !k.steps.is_empty() {
                writeln!(f, "     steps:  {}", show_steps(&k.steps))?;
            }
            for e in &k.entries {
                match e {
                    Entry::Quads { sites, .. } => writeln!(
                        f,
                        "     entry:  _v4, four elements per thread with 16-byte accesses to {} where aligned",
                        sites.join(", ")
                    )?,
                    Entry::Rows(r) => {
                        let staged: Vec<&str> = r.staged.iter().map(|s| s.buf.as_str()).collect();
                        let scratch: Vec<&str> = r.scratch.iter().map(|s| s.name.as_str()).collect();
                        writeln!(
                            f,
                            "     entry:  _rows, rows in shared memory: staged {}; scratch {}",
                            list(&staged),
                            list(&scratch)
                        )?;
                        for b in &r.batches {
                            writeln!(
                                f,
                                "     quads:  (_rows) {} at line {}: four iterations may load before they store",
                                b.var, b.line
                            )?;
                        }
                        for (a, op) in &r.fused {
                            writeln!(
                                f,
                                "     fused:  (_rows) the fill of statement {} and the {} reading it back run as one loop",
                                a + 1,
                                op.name()
                            )?;
                        }
                        writeln!(f, "     steps:  (_rows) {}", show_steps(&r.steps))?;
                    }
                }
            }
            for h in &k.held {
                writeln!(
                    f,
                    "     holds:  {} over {}..{} in registers ({} quads per thread)",
                    h.row.buf, h.row.lo, h.row.hi, h.quads
                )?;
            }
            if let Some(form) = k.full {
                writeln!(
                    f,
                    "     chunks: {}; a barrier after each chunk; `_fin` combines the chunks in a fixed tree",
                    form.describe()
                )?;
            }
            if k.slice_unroll > 1 {
                writeln!(
                    f,
                    "     slices: each thread's slice of the rows in one loop, unrolled by {}",
                    k.slice_unroll
                )?;
            }
            if k.check_then_wait {
                writeln!(
                    f,
                    "     waits:  threads check different ranges, then wait at barriers: refused where a check may fail"
                )?;
            }
        }
        Ok(())
    }
}

fn list(v: &[&str]) -> String {
    if v.is_empty() {
        "none".to_string()
    } else {
        v.join(", ")
    }
}
