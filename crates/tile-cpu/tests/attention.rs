//! Random attention heads (`softmax(F(q k^T)) v` written as the planner
//! recognises it: a maximum, a sum of exponentials, a weighted sum per
//! output column) with each operand in either index order, a scaled, a
//! causal (`select` on indices) or a biased score, value widths other than
//! the head's, in `f32` and `f64`, at random shapes (1, ragged, across the 48-row and 512-key
//! blocks, an empty depth): the plan finds the head, the C source tiles
//! both products, and every output matches the FP64 interpreter
//! (`atol 1e-5`, `rtol 1e-4`).

use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use tile_ir::{fixture, interp, Sizes};

#[test]
fn random_attention_heads_match_the_interpreter() {
    let mut runner = TestRunner::new(Config {
        cases: 32,
        failure_persistence: None,
        ..Config::default()
    });
    let strategy = (
        any::<bool>(),
        any::<bool>(),
        any::<bool>(),
        0usize..3,
        prop::sample::select(vec![1i64, 5, 49, 97]),
        prop::sample::select(vec![1i64, 7, 33, 515]),
        prop::sample::select(vec![0i64, 1, 4, 17]),
        prop::sample::select(vec![1i64, 3, 16]),
        any::<bool>(),
    );
    runner
        .run(&strategy, |(q_t, k_t, v_t, score, m, n, d, e, f64)| {
            let mut text = fixture::attention(q_t, k_t, v_t, score);
            if f64 {
                text = text.replace("f32", "f64");
            }
            let program = tile_ir::parse_program(&text)
                .map_err(|err| TestCaseError::fail(format!("{err}\n{text}")))?;
            let plan = tile_plan::compile(&program, &tile_plan::Options::default())
                .map_err(|err| TestCaseError::fail(format!("{err}\n{text}")))?;
            prop_assert!(
                plan.kernels[0].attention.is_some(),
                "not attention:\n{plan}\n{text}"
            );
            let opts = tile_cpu::CpuOptions {
                cache: true,
                threads: Some(2),
                ..tile_cpu::CpuOptions::default()
            };
            let source = tile_cpu::emit_c(&plan, &opts)
                .map_err(|err| TestCaseError::fail(format!("{err}\n{text}")))?;
            let helper = if f64 {
                "tile_gemm_f64("
            } else {
                "tile_gemm_f32("
            };
            prop_assert!(source.contains(helper), "{}", text);
            let module = tile_cpu::compile(&plan, &opts)
                .map_err(|err| TestCaseError::fail(format!("{err}\n{text}")))?;
            let sizes = Sizes::from([
                ("M".into(), m),
                ("N".into(), n),
                ("D".into(), d),
                ("E".into(), e),
            ]);
            let args = fixture::arguments(&program, &sizes).expect("arguments");
            let mut want = args.clone();
            interp::interpret(&program, &mut want, &sizes)
                .map_err(|err| TestCaseError::fail(format!("{err}\n{text}")))?;
            let mut got = args;
            module
                .run(&mut got, &sizes)
                .map_err(|err| TestCaseError::fail(format!("{err}\n{text}")))?;
            for x in 0..want["o"].len() {
                let (g, w) = (got["o"].get_f64(x), want["o"].get_f64(x));
                prop_assert!(
                    (g - w).abs() <= 1e-5 + 1e-4 * w.abs(),
                    "o[{x}] (flat) = {g}, interpreter {w}, M={m} N={n} D={d} E={e}\n{text}"
                );
            }
            Ok(())
        })
        .unwrap_or_else(|err| panic!("{err}"));
}
