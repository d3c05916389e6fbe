//! What the GPU examples share: device time per call and shapes from the
//! command line.

/// The median of `v` (upper median for an even count).
pub fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Device seconds per invocation: the median of 9 batches of about 30 ms.
pub fn per_call(
    gpu: &tile_cuda::Gpu,
    mut f: impl FnMut() -> Result<(), tile_cuda::CudaError>,
) -> f64 {
    let t1 = gpu.time(&mut f).expect("time");
    let reps = ((0.03 / t1.max(1e-7)) as usize).clamp(10, 20000);
    median(
        (0..9)
            .map(|_| gpu.time(|| (0..reps).try_for_each(|_| f())).expect("time") / reps as f64)
            .collect(),
    )
}

/// The `MxN` arguments, or `default` when there are none.
pub fn shapes(default: &[(usize, usize)]) -> Vec<(usize, usize)> {
    let given: Vec<(usize, usize)> = std::env::args()
        .skip(1)
        .filter_map(|a| {
            let (m, n) = a.split_once('x')?;
            Some((m.parse().ok()?, n.parse().ok()?))
        })
        .collect();
    if given.is_empty() {
        default.to_vec()
    } else {
        given
    }
}
