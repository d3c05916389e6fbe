//! The CUDA back end's options: launch shapes, the entry points it may
//! use, unroll factors, and the environment variables that set them.

pub use tile_plan::kernel_ir::{RowStaging, STAGE_ROWS_LONGER_THAN};

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
    /// Print and run contractions' tiled entry points (`_mm`, `_mm64`;
    /// `TILE_CUDA_TILES=0` runs contractions as row kernels).
    pub tiles: bool,
    /// Multiply `f32` contractions on TF32 tensor cores (`mma.sync`):
    /// operands rounded to 10 mantissa bits, products summed in FP32.
    /// Off by default (exact FP32); the user asks with `--allow-tf32` or
    /// `allow_tf32=True`, never an environment variable.
    pub allow_tf32: bool,
    /// Blocks per multiprocessor the 128-tile product entry point
    /// (`_mm`) asks its launch bounds for (`TILE_CUDA_MM_BLOCKS`, 1 or
    /// 2): an experiment; `None` takes one for FP32 and `f64`, two on
    /// TF32 tensor cores.
    pub mm_blocks: Option<u32>,
    /// Query rows per block of an attention head's entry points
    /// (`TILE_CUDA_ATT_ROWS`, 32 or 64): an experiment; `None` takes 64
    /// where those blocks fill the multiprocessors, else 32.
    pub att_rows: Option<i64>,
    /// Attention heads through the staged entry points
    /// (`TILE_CUDA_ATT_STAGED=1`: `q` resident and `k`, `v` copied
    /// asynchronously into dynamic shared memory): an experiment, not yet
    /// run on a GPU.
    pub att_staged: bool,
}

/// Quads per thread in flight in row loops over device memory (measured
/// on an H200 at 4096x4096, 128 threads a row, one/two/four quads per
/// step: row_lse 27.4/26.7/26.0 us, row_norm 19.6/18.8/18.8; at 256
/// threads RMSNorm 39.2/38.3/37.6, LayerNorm 42.2/42.3/43.2; whole-array
/// sums print one, see print_full.rs).
pub const DEFAULT_ROW_UNROLL: u32 = 2;

/// Quads per thread held in registers between a row's loops.
pub const DEFAULT_ROW_HOLD: u32 = 8;

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
            tiles: std::env::var("TILE_CUDA_TILES").map_or(true, |v| v != "0"),
            allow_tf32: false,
            mm_blocks: std::env::var("TILE_CUDA_MM_BLOCKS")
                .ok()
                .and_then(|v| v.parse::<u32>().ok())
                .filter(|b| (1..=2).contains(b)),
            att_rows: std::env::var("TILE_CUDA_ATT_ROWS")
                .ok()
                .and_then(|v| v.parse::<i64>().ok())
                .filter(|r| [32, 64].contains(r)),
            att_staged: std::env::var("TILE_CUDA_ATT_STAGED").is_ok_and(|v| v == "1"),
        }
    }
}

impl CudaOptions {
    /// How the tiled entry points print under these options.
    pub(crate) fn tiling(&self) -> crate::emit::Tiling {
        crate::emit::Tiling {
            on: self.tiles,
            tf32: self.allow_tf32,
            mm_blocks: self.mm_blocks,
            att_staged: self.att_staged,
        }
    }

    /// The options that change the printed source.
    pub(crate) fn unrolls(&self) -> tile_emit::gpu::Unroll {
        tile_emit::gpu::Unroll {
            quads: self.unroll,
            rows: self.row_unroll,
            held: self.row_hold,
        }
    }
}
