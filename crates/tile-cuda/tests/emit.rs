//! CUDA emission without a GPU: every fixture emits deterministic source,
//! single-store programs emit the same bytes with fusion on and off, and,
//! where NVRTC can be loaded, every source compiles for sm_90.

use std::path::{Path, PathBuf};
use tile_plan::{compile, Options};

fn programs() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    tile_ir::fixture::tile_files(&[root.join("tests/programs"), root.join("examples")])
}

fn stores(p: &tile_ir::Program) -> usize {
    let mut n = 0;
    p.walk(&mut |s| n += matches!(s, tile_ir::Stmt::Store { .. }) as usize);
    n
}

#[test]
fn emission_is_deterministic_and_fusion_neutral_for_single_stores() {
    let all = programs();
    assert!(all.len() > 20);
    for f in all {
        let program = tile_ir::parse_program(&std::fs::read_to_string(&f).unwrap()).unwrap();
        let on = compile(&program, &Options { fusion: true }).unwrap();
        let off = compile(&program, &Options { fusion: false }).unwrap();
        let a = tile_cuda::emit_cuda(&on).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        assert_eq!(
            a,
            tile_cuda::emit_cuda(&on).unwrap(),
            "{}: emission differs between runs",
            f.display()
        );
        if stores(&program) <= 1 {
            assert_eq!(
                a,
                tile_cuda::emit_cuda(&off).unwrap(),
                "{}: single-store source differs with fusion off",
                f.display()
            );
        }
    }
}

#[test]
fn every_source_compiles_with_nvrtc_where_available() {
    let nv = match tile_cuda::nvrtc::Nvrtc::load() {
        Ok(n) => n,
        Err(e) => {
            println!("SKIPPED: NVRTC compile check: {e}");
            return;
        }
    };
    for f in programs() {
        let program = tile_ir::parse_program(&std::fs::read_to_string(&f).unwrap()).unwrap();
        for (fusion, unroll) in [(true, 1), (false, 1), (true, 4)] {
            let plan = compile(&program, &Options { fusion }).unwrap();
            let opts = tile_cuda::CudaOptions {
                unroll,
                ..Default::default()
            };
            let src = tile_cuda::emit_cuda_with(&plan, &opts).unwrap();
            if let Err(e) = nv.compile(&src, "t.cu", 90, &["--std=c++17".to_string()]) {
                panic!("{} (fusion {fusion}): {e}\n{src}", f.display());
            }
        }
    }
}

/// The tiled entry points of every contraction and attention fixture
/// (`tile_ir::fixture`: each transpose, each epilogue or score, `f32` and
/// `f64`) compile with NVRTC for sm_90, where NVRTC can be loaded (it needs
/// no GPU: `TILE_NVRTC_LIB` may name a copy from the `nvidia-cuda-nvrtc`
/// wheel).
#[test]
fn every_tiled_entry_point_compiles_with_nvrtc_where_available() {
    let nv = match tile_cuda::nvrtc::Nvrtc::load() {
        Ok(n) => n,
        Err(e) => {
            println!("SKIPPED: NVRTC compile check of the tiled entry points: {e}");
            return;
        }
    };
    let mut texts = Vec::new();
    for (x, y) in [(false, false), (true, false), (false, true), (true, true)] {
        for which in 0..5 {
            texts.push(tile_ir::fixture::contraction(x, y, which).0);
        }
        for v in [false, true] {
            for score in 0..3 {
                texts.push(tile_ir::fixture::attention(x, y, v, score));
            }
        }
        // Batched products: both operands one matrix per batch, or one of
        // them shared by every batch.
        for (n, batched) in [(true, true), (true, false), (false, true)]
            .into_iter()
            .enumerate()
        {
            texts.push(tile_ir::fixture::batched_contraction((x, y), batched, n + 2).0);
        }
    }
    let mut entries = 0;
    for text in texts {
        for t in [text.clone(), text.replace("f32", "f64")] {
            let program = tile_ir::parse_program(&t).unwrap();
            let plan = compile(&program, &Options::default()).unwrap();
            let src = tile_cuda::emit_cuda(&plan).unwrap();
            entries += src.matches("_mm(").count() + src.matches("_mm64(").count();
            entries += src.matches("_att32(").count() + src.matches("_att64(").count();
            if let Err(e) = nv.compile(&src, "t.cu", 90, &["--std=c++17".to_string()]) {
                panic!("{e}\n{t}");
            }
            // An attention head's staged entry points (the experiment
            // `TILE_CUDA_ATT_STAGED=1`), for sm_90 and for sm_75, before
            // `cp.async` (plain copies instead).
            if src.contains("_att32(") {
                let staged = tile_cuda::CudaOptions {
                    att_staged: true,
                    ..Default::default()
                };
                let src = tile_cuda::emit_cuda_with(&plan, &staged).unwrap();
                entries += ["_att64x128(", "_att64x64(", "_att32x128(", "_att32x64("]
                    .iter()
                    .map(|e| src.matches(e).count())
                    .sum::<usize>();
                for arch in [75, 90] {
                    if let Err(e) = nv.compile(&src, "t.cu", arch, &["--std=c++17".to_string()]) {
                        panic!("staged, sm_{arch}: {e}\n{t}");
                    }
                }
            }
        }
    }
    // The TF32 tensor-core products (`--allow-tf32`): every contraction
    // fixture's `_mm` and `_mm64`, each transpose and epilogue, for sm_80
    // (the first with TF32 `mma.sync`) and sm_90.
    let tf32 = tile_cuda::CudaOptions {
        allow_tf32: true,
        ..Default::default()
    };
    let mut mma = 0;
    for (x, y) in [(false, false), (true, false), (false, true), (true, true)] {
        let batched = tile_ir::fixture::batched_contraction((x, y), (true, x), 1).0;
        for text in (0..5)
            .map(|which| tile_ir::fixture::contraction(x, y, which).0)
            .chain([batched])
        {
            let program = tile_ir::parse_program(&text).unwrap();
            let plan = compile(&program, &Options::default()).unwrap();
            let src = tile_cuda::emit_cuda_with(&plan, &tf32).unwrap();
            assert!(
                src.contains("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32"),
                "{text}"
            );
            mma += src.matches("_mm(").count() + src.matches("_mm64(").count();
            for arch in [80, 90] {
                if let Err(e) = nv.compile(&src, "t.cu", arch, &["--std=c++17".to_string()]) {
                    panic!("sm_{arch}: {e}\n{text}");
                }
            }
        }
    }
    println!("NVRTC compiled {entries} tiled entry points, and {mma} on TF32 tensor cores");
    assert!(entries >= 2 * 32 * 2 + 24 * 3 + 24 * 6, "{entries}");
    assert!(mma >= 24 * 2, "{mma}");
}

#[test]
fn the_seed_pairs_get_a_16_byte_entry_point() {
    for f in ["sigmoid_pair", "gelu_pair"] {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("../../examples/{f}.tile"));
        let program = tile_ir::parse_program(&std::fs::read_to_string(path).unwrap()).unwrap();
        let src = tile_cuda::emit_cuda(&compile(&program, &Options::default()).unwrap()).unwrap();
        assert!(src.contains("void tile_k0_v4(const TileArgs a)"), "{f}");
        assert!(src.contains("*reinterpret_cast<const float4 *>(p_x"), "{f}");
        assert_eq!(
            src.matches("__global__").count(),
            2,
            "{f}: one kernel, two entry points"
        );
    }
}

#[test]
fn row_programs_stage_each_row_once() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/programs/controls");
    // Passes over the staged row in the staged kernel (softmax: max, then
    // the exponentials' fill fused with their sum, and its store loop reads
    // the scratch row; RMSNorm: x * x, store loop; LayerNorm: mean,
    // variance, store loop).
    for (f, passes) in [("softmax", 2), ("rmsnorm", 2), ("layernorm", 3)] {
        let program = tile_ir::parse_program(
            &std::fs::read_to_string(root.join(format!("{f}.tile"))).unwrap(),
        )
        .unwrap();
        let src = tile_cuda::emit_cuda(&compile(&program, &Options::default()).unwrap()).unwrap();
        let (plain, rows) = src
            .split_once("void tile_k0_rows(const TileArgs a)")
            .unwrap_or_else(|| panic!("{f}: no staged entry point"));
        // The staged kernel reads `x` from device memory only in its
        // asynchronous 16-byte copy (and the scalar copy of a ragged or
        // misaligned row): `p_x` is named where it is declared and there.
        assert_eq!(
            rows.matches("p_x").count(),
            2,
            "{f}: staged kernel reads x directly"
        );
        assert!(
            rows.contains("tile_cp16(dst + q, src + q);"),
            "{f}: 16-byte copies"
        );
        // Each pass reads four staged elements as one 16-byte shared
        // vector (in both the aligned and the unaligned form of a loop with
        // device accesses, and once per extra quad of the wide steps of a
        // loop that loads device vectors), and the partial quad at the
        // row's end one by one.
        let vectors = rows
            .matches("reinterpret_cast<const float4 *>(tile_rows + ro0 + ")
            .count();
        let most = passes * (1 + tile_cuda::DEFAULT_ROW_UNROLL as usize);
        assert!((passes..=most).contains(&vectors), "{f}: {vectors}");
        assert_eq!(
            rows.lines()
                .filter(|l| l.contains("tile_rows[ro0 + q"))
                .count(),
            passes,
            "{f}"
        );
        // Both kernels store `y` as 16-byte vectors where it is aligned,
        // and the streaming one loads `x` so too.
        assert!(rows.contains("*reinterpret_cast<float4 *>(p_y + "), "{f}");
        assert!(plain.contains("*reinterpret_cast<float4 *>(p_y + "), "{f}");
        assert!(
            plain.contains("= *reinterpret_cast<const float4 *>(p_x + "),
            "{f}"
        );
        if f == "softmax" {
            // The store loop (after `z`) divides the cached exponentials:
            // each is computed once per element in the staged kernel, twice
            // in the streaming one.
            let (_, store) = rows.split_once("/* z */").unwrap();
            assert!(rows.contains("tile_exp_f32("), "{f}");
            assert!(!store.contains("tile_exp_f32("), "{f}: once per element");
            let kernel = plain.split_once("void tile_k0(").unwrap().1;
            let (_, store) = kernel.split_once("/* z */").unwrap();
            assert!(store.contains("tile_exp_f32("), "{f}: streaming recomputes");
        }
    }
}

#[test]
fn per_row_results_hold_a_reread_row_in_registers() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/programs");
    let source = |f: &str| {
        let program =
            tile_ir::parse_program(&std::fs::read_to_string(root.join(f)).unwrap()).unwrap();
        tile_cuda::emit_cuda(&compile(&program, &Options::default()).unwrap()).unwrap()
    };
    // row_lse reads x in its max and again in its sum: the streaming
    // kernel's max keeps each thread's first quads in `hq0` (aligned and
    // misaligned rows alike) and the sum reads them there; the staged
    // kernel stages the row for both passes and reads x only to copy it.
    let src = source("reductions/row_lse.tile");
    let (plain, rows) = src.split_once("void tile_k0_rows(").unwrap();
    let plain = plain.split_once("void tile_k0(").unwrap().1;
    let quads = tile_cuda::DEFAULT_ROW_HOLD;
    assert_eq!(plain.matches(&format!("float4 hq0[{quads}];")).count(), 1);
    let (max, sum) = plain.split_once("/* m */").unwrap();
    assert_eq!(
        max.matches("hq0[hu0] = *reinterpret_cast<const float4 *>(p_x")
            .count(),
        1
    );
    assert_eq!(max.matches("hq0[hu1] = make_float4(").count(), 1);
    assert!(sum.contains("tile_exp_f32((hq0[hu2].x - val0))"));
    assert!(sum.contains("tile_exp_f32((hq0[hu3].x - val0))"));
    assert!(
        !sum.contains("hq0[hu2] ="),
        "the sum only reads the held quads"
    );
    assert_eq!(
        rows.matches("p_x").count(),
        2,
        "staged: x read by the copy only"
    );
    // A row read once (row_norm) is neither held nor staged, and rows
    // whose inner store loops stream with 256 threads (RMSNorm) are not
    // held (slower on the H200, see print_rows.rs).
    let norm = source("reductions/row_norm.tile");
    assert!(!norm.contains("hq0") && !norm.contains("tile_k0_rows"));
    assert!(!source("controls/rmsnorm.tile").contains("hq0"));
}

#[test]
fn no_gpu_is_a_plain_error() {
    match tile_cuda::gpu() {
        Ok(g) => println!(
            "a GPU is present ({}); the no-GPU message is not exercised here",
            g.name
        ),
        Err(e) => {
            let msg = e.to_string();
            assert!(
                msg.starts_with("no CUDA driver") || msg.starts_with("no CUDA device"),
                "{msg}"
            );
        }
    }
}

/// The kernels of `program` that are row reductions, as CUDA source.
fn row_sources(program: &tile_ir::Program) -> Option<String> {
    let plan = compile(program, &Options::default()).unwrap();
    plan.kernels
        .iter()
        .any(|k| k.mapping == tile_plan::Mapping::RowReduction)
        .then(|| tile_cuda::emit_cuda(&plan).unwrap())
}

/// Whether a row kernel of `program` holds a reduction outside its inner
/// loops (in a binding or a per-row store).
fn row_level_reduction(program: &tile_ir::Program) -> bool {
    let plan = compile(program, &Options::default()).unwrap();
    plan.kernels
        .iter()
        .filter(|k| k.mapping == tile_plan::Mapping::RowReduction)
        .any(|k| {
            k.body.iter().any(|s| match s {
                tile_ir::Stmt::Let { value, .. } | tile_ir::Stmt::Store { value, .. } => {
                    value.has_reduction()
                }
                _ => false,
            })
        })
}

#[test]
fn every_row_program_splits_its_reductions_over_the_block() {
    let mut rows = 0;
    for f in programs() {
        let program = tile_ir::parse_program(&std::fs::read_to_string(&f).unwrap()).unwrap();
        let Some(src) = row_sources(&program) else {
            continue;
        };
        rows += 1;
        // Rows the block cannot share: a running sum (each element reads
        // the one before it; no reduction) runs on one thread, as its
        // source says; a scatter to data-dependent columns under an `if`
        // walks the row in lockstep, its rank's reduction split over the
        // block.
        let name = f.file_stem().unwrap().to_string_lossy();
        if name == "prefix_sum" {
            assert!(src.contains(tile_cuda::SERIAL_ROW), "{}", f.display());
            continue;
        }
        if name == "topk" {
            assert!(src.contains(tile_cuda::LOCKSTEP_ROW), "{}", f.display());
        }
        assert!(
            !src.contains("row on one thread"),
            "{}: a row runs on one thread",
            f.display()
        );
        // Reductions at the row's level split over the block; those inside
        // an inner loop run whole in each thread's iterations of it.
        assert!(
            !row_level_reduction(&program) || src.contains("= tile_block_"),
            "{}: no block reduction",
            f.display()
        );
    }
    assert!(rows >= 6, "only {rows} row programs among the fixtures");
    // A reduction nested in another's body splits over the block too (the
    // inner one runs whole in each thread's share).
    let nested = tile_ir::parse_program(
        "program p(x: in f32[M, N], y: out f32[M]) {\n  for i in 0..M {\n    y[i] = sum(j in 0..N: max(k in 0..j + 1: x[i, k]))\n  }\n}",
    )
    .unwrap();
    let src = row_sources(&nested).unwrap();
    assert!(!src.contains("row on one thread") && src.contains("= tile_block_sum"));
}

#[test]
fn every_column_program_slices_its_reductions_over_the_block() {
    let mut columns = 0;
    for f in programs() {
        let program = tile_ir::parse_program(&std::fs::read_to_string(&f).unwrap()).unwrap();
        let plan = compile(&program, &Options::default()).unwrap();
        if !plan
            .kernels
            .iter()
            .any(|k| k.mapping == tile_plan::Mapping::ColumnReduction)
        {
            continue;
        }
        columns += 1;
        let src = tile_cuda::emit_cuda(&plan).unwrap();
        // An `if` holding a loop or a reduction is the one case left on
        // one thread per column, marked in the source; a plain `if` runs
        // on the column's first thread after the block reduced.
        let serial = program.body.iter().any(|s| {
            let mut found = false;
            s.walk(&mut |t| {
                found |= matches!(t, tile_ir::Stmt::If { .. }) && !tile_plan::plain_if(t)
            });
            found
        });
        assert_eq!(
            src.contains("column on one thread"),
            serial,
            "{}",
            f.display()
        );
        assert_eq!(src.contains("= tile_col_"), !serial, "{}", f.display());
    }
    assert!(
        columns >= 3,
        "only {columns} column programs among the fixtures"
    );
}

#[test]
fn every_full_reduction_has_a_parallel_first_stage_and_a_second() {
    let mut full = 0;
    for f in programs() {
        let program = tile_ir::parse_program(&std::fs::read_to_string(&f).unwrap()).unwrap();
        let plan = compile(&program, &Options::default()).unwrap();
        let n = plan
            .kernels
            .iter()
            .filter(|k| k.mapping == tile_plan::Mapping::FullReduction)
            .count();
        if n == 0 {
            continue;
        }
        full += 1;
        let src = tile_cuda::emit_cuda(&plan).unwrap();
        for k in plan
            .kernels
            .iter()
            .filter(|k| k.mapping == tile_plan::Mapping::FullReduction)
        {
            assert!(
                src.contains(&format!("void tile_{}_fin(", k.name)),
                "{}",
                f.display()
            );
        }
        assert!(!src.contains("chunk on one thread"), "{}", f.display());
        assert!(src.contains("= tile_block_"), "{}", f.display());
    }
    assert!(
        full >= 2,
        "only {full} full-reduction programs among the fixtures"
    );
}

/// A binding that takes the name of an earlier reduction's variable, used
/// in a later loop's index: the lowering and the printer agree that no
/// check at the loop's entry covers it (printing does not stop).
#[test]
fn a_rebound_reduction_variable_prints() {
    let text = "program q(x: in f32[M, N], idx: in i32[M], y: out f32[M, N]) {
  for i in 0..M {
    s = sum(j in 0..N: x[i, j])
    j = idx[i]
    for k in 0..N { y[i, k] = x[i, k + j] / s }
  }
}";
    let program = tile_ir::parse_program(text).unwrap();
    let plan = compile(&program, &Options::default()).unwrap();
    let src = tile_cuda::emit_cuda(&plan).unwrap();
    assert!(src.contains("tile_k0"), "{src}");
}
