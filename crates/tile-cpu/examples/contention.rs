//! Is a parallel launch ever slower than one thread? The fused sigmoid
//! pair compiled twice, for one thread and for the machine's threads, run
//! in interleaved batches (each batch calibrated to about 20 ms) at
//! several shapes; per shape the median per-call time of each and their
//! ratio. Run it on an idle machine and beside a busy process (e.g.
//! `python3 -c "while True: pass" &`) to see what contention does.
//!
//! `cargo run --release -p tile-cpu --example contention [ROWSxCOLS ...]`
//! (default 37x1537 256x1537 1024x4096)

use std::time::Instant;
use tile_cpu::{CpuModule, CpuOptions, RawArg};
use tile_ir::{DType, Sizes};

const BATCHES: usize = 15;

fn raw(name: &str, v: &mut [f32], shape: &[usize]) -> RawArg {
    RawArg {
        name: name.to_string(),
        dtype: DType::F32,
        shape: shape.to_vec(),
        addr: v.as_mut_ptr() as u64,
        bytes: std::mem::size_of_val(v),
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let text = std::fs::read_to_string(root.join("examples/sigmoid_pair.tile")).expect("program");
    let program = tile_ir::parse_program(&text).expect("parse");
    let plan = tile_plan::compile(&program, &tile_plan::Options { fusion: true }).expect("plan");
    let many = CpuOptions::default().thread_count();
    let build = |threads| {
        let opts = CpuOptions {
            threads: Some(threads),
            ..CpuOptions::default()
        };
        tile_cpu::compile(&plan, &opts).expect("compile")
    };
    let modules: [(usize, CpuModule); 2] = [(1, build(1)), (many, build(many))];
    let shapes: Vec<String> = std::env::args().skip(1).collect();
    let shapes = if shapes.is_empty() {
        vec!["37x1537".into(), "256x1537".into(), "1024x4096".into()]
    } else {
        shapes
    };
    println!("sigmoid pair, 1 thread against {many}, median of {BATCHES} interleaved batches, us per call");
    println!(
        "{:>12} {:>12} {:>12} {:>8}",
        "shape",
        "1 thread",
        format!("{many} threads"),
        "ratio"
    );
    for s in shapes {
        let (m, n) = s.split_once('x').expect("ROWSxCOLS");
        let shape = [
            m.parse::<usize>().expect("rows"),
            n.parse::<usize>().expect("cols"),
        ];
        let count = shape[0] * shape[1];
        let mut x: Vec<f32> = (0..count)
            .map(|k| tile_ir::fixture::input_value(k, 0) as f32)
            .collect();
        let (mut v, mut g) = (vec![0f32; count], vec![0f32; count]);
        let mut call = |module: &CpuModule| {
            let args = [
                raw("x", &mut x, &shape),
                raw("value", &mut v, &shape),
                raw("grad", &mut g, &shape),
            ];
            // SAFETY: three distinct live vectors of the declared shapes.
            unsafe { module.run_raw(&args, &Sizes::new()) }.expect("run");
        };
        // Calls per batch: about 20 ms on one thread.
        let t = Instant::now();
        let mut calls = 0usize;
        while t.elapsed().as_secs_f64() < 0.02 {
            call(&modules[0].1);
            calls += 1;
        }
        let mut times = [Vec::new(), Vec::new()];
        for _ in 0..BATCHES {
            for (k, (_, module)) in modules.iter().enumerate() {
                let t = Instant::now();
                for _ in 0..calls {
                    call(module);
                }
                times[k].push(t.elapsed().as_secs_f64() / calls as f64 * 1e6);
            }
        }
        let (one, par) = (median(times[0].clone()), median(times[1].clone()));
        println!("{s:>12} {one:12.2} {par:12.2} {:8.3}", par / one);
    }
}
