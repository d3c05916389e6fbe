//! The measurement protocol of docs/benchmarking.md: rotation of orders across
//! rounds, warm-up, calibration of the batch size, and the four phases.

use std::collections::BTreeMap;
use std::time::Instant;

/// Protocol parameters.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Protocol {
    /// Rounds (each rotates the orders).
    pub rounds: usize,
    /// Samples per phase.
    pub samples: usize,
    /// Target duration of one batch, in milliseconds.
    pub window_ms: f64,
    /// Warm-up before the first phase, in milliseconds.
    pub warmup_ms: f64,
    /// A smoke run: never reported as performance.
    pub quick: bool,
}

impl Protocol {
    /// The full protocol: 6 rounds, 9 samples, 30 ms batches, 100 ms warm-up.
    pub fn full() -> Protocol {
        Protocol {
            rounds: 6,
            samples: 9,
            window_ms: 30.0,
            warmup_ms: 100.0,
            quick: false,
        }
    }

    /// `--quick`: 1 round, 3 samples, 2 ms batches, 5 ms warm-up.
    pub fn quick() -> Protocol {
        Protocol {
            rounds: 1,
            samples: 3,
            window_ms: 2.0,
            warmup_ms: 5.0,
            quick: true,
        }
    }
}

/// The phases measured on a target, in order (wgpu's device phases where
/// its adapter has timestamp queries; host-timed phases only otherwise).
pub fn phases(target: &str) -> Vec<&'static str> {
    if target == "cuda" || (target == "wgpu" && crate::target::device_clock(target)) {
        vec!["gpu_batch", "e2e_batch", "e2e_single", "gpu_single"]
    } else {
        vec!["e2e_batch", "e2e_single"]
    }
}

/// `v` rotated left by `r`.
pub fn rotate<T: Clone>(v: &[T], r: usize) -> Vec<T> {
    if v.is_empty() {
        return vec![];
    }
    let k = r % v.len();
    v[k..].iter().chain(&v[..k]).cloned().collect()
}

/// One round's orders.
#[derive(Clone, Debug, serde::Serialize)]
pub struct RoundOrder {
    /// The round.
    pub round: usize,
    /// Cases, starting case first.
    pub cases: Vec<String>,
    /// Frameworks (`tile` and the peers).
    pub frameworks: Vec<String>,
    /// Tile's variants.
    pub variants: Vec<String>,
    /// The resulting sequence of (case, entry), where entry is a variant
    /// or a peer.
    pub sequence: Vec<(String, String)>,
}

/// The planned order of every round: round `r` rotates cases, frameworks
/// and variants left by `r`.
pub fn planned_order(
    rounds: usize,
    cases: &[String],
    frameworks: &[String],
    variants: &[String],
) -> Vec<RoundOrder> {
    (0..rounds)
        .map(|r| {
            let (cs, fs, vs) = (rotate(cases, r), rotate(frameworks, r), rotate(variants, r));
            let mut sequence = Vec::new();
            for c in &cs {
                for f in &fs {
                    if f == "tile" {
                        sequence.extend(vs.iter().map(|v| (c.clone(), v.clone())));
                    } else {
                        sequence.push((c.clone(), f.clone()));
                    }
                }
            }
            RoundOrder {
                round: r,
                cases: cs,
                frameworks: fs,
                variants: vs,
                sequence,
            }
        })
        .collect()
}

/// The raw samples of one phase: each the total seconds of one batch of `n`
/// invocations.
#[derive(Clone, Debug, serde::Serialize)]
pub struct PhaseSamples {
    /// Invocations per sample (the denominator).
    pub n: usize,
    /// Batch totals in seconds.
    pub samples_s: Vec<f64>,
}

/// Something that can be invoked and timed.
pub trait Invoker {
    /// Starts one invocation (may be asynchronous).
    fn invoke(&mut self) -> Result<(), String>;
    /// Waits until every started invocation has finished.
    fn sync(&mut self) -> Result<(), String>;
    /// Device time in seconds of `n` back-to-back invocations (events
    /// around them); `None` on targets without a device clock.
    fn device_time(&mut self, _n: usize) -> Option<Result<f64, String>> {
        None
    }
}

fn host_time(inv: &mut dyn Invoker, n: usize) -> Result<f64, String> {
    let t = Instant::now();
    for _ in 0..n {
        inv.invoke()?;
    }
    inv.sync()?;
    Ok(t.elapsed().as_secs_f64())
}

/// Warm-up, calibration and every phase in `phases`, per the protocol.
pub fn measure(
    inv: &mut dyn Invoker,
    proto: &Protocol,
    phases: &[&str],
) -> Result<BTreeMap<String, PhaseSamples>, String> {
    let warm = Instant::now();
    while warm.elapsed().as_secs_f64() * 1e3 < proto.warmup_ms {
        host_time(inv, 1)?;
    }
    let window = proto.window_ms / 1e3;
    let mut singles: Vec<f64> = (0..5)
        .map(|_| host_time(inv, 1))
        .collect::<Result<_, _>>()?;
    singles.sort_by(f64::total_cmp);
    let t1 = singles[2].max(1e-9);
    let mut n = ((window / t1).round() as usize).max(1);
    // Refine on whole batches until one takes between half and twice the
    // window (single calls can be slower than calls in a batch: caches,
    // sleeping workers), at most four times.
    for _ in 0..4 {
        let t = host_time(inv, n)?.max(1e-9);
        if (0.5 * window..=2.0 * window).contains(&t) || (n == 1 && t > window) {
            break;
        }
        n = ((n as f64 * window / t).round() as usize).max(1);
    }
    let mut out = BTreeMap::new();
    for &phase in phases {
        let (batch, device) = match phase {
            "e2e_batch" => (true, false),
            "e2e_single" => (false, false),
            "gpu_batch" => (true, true),
            "gpu_single" => (false, true),
            p => return Err(format!("unknown phase `{p}`")),
        };
        // A batch phase whose median sample strays more than 4x from the
        // window (calibration met a slow start: sleeping workers, a cold
        // cache) is recalibrated from its own samples and measured again,
        // at most three times; every sample kept carries its own N.
        let mut tries = 0;
        let (count, samples) = loop {
            let count = if batch { n } else { 1 };
            let mut samples = Vec::with_capacity(proto.samples);
            for _ in 0..proto.samples {
                let s = if device {
                    match inv.device_time(count) {
                        Some(r) => r?,
                        None => return Err(format!("phase `{phase}` needs a device clock")),
                    }
                } else {
                    host_time(inv, count)?
                };
                samples.push(s);
            }
            let m = median(&samples).max(1e-9);
            tries += 1;
            let off = m < window / 4.0 || m > window * 4.0;
            if !batch || !off || tries == 3 || (n == 1 && m > window) {
                break (count, samples);
            }
            n = ((n as f64 * window / m).round() as usize).max(1);
        };
        out.insert(
            phase.to_string(),
            PhaseSamples {
                n: count,
                samples_s: samples,
            },
        );
    }
    Ok(out)
}

/// Median with the mean of the two middle values for even counts.
pub fn median(v: &[f64]) -> f64 {
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    let k = s.len();
    if k == 0 {
        f64::NAN
    } else if k % 2 == 1 {
        s[k / 2]
    } else {
        (s[k / 2 - 1] + s[k / 2]) / 2.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rotation_balances_positions() {
        let v = |s: &[&str]| s.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        let rounds = planned_order(
            6,
            &v(&["a", "b"]),
            &v(&["tile", "numpy_eager"]),
            &v(&["fused", "reference", "split"]),
        );
        for variant in ["fused", "reference", "split"] {
            let firsts = rounds.iter().filter(|r| r.variants[0] == variant).count();
            assert_eq!(firsts, 2);
        }
        assert_eq!(rounds[1].cases, ["b", "a"]);
        assert_eq!(rounds[1].frameworks, ["numpy_eager", "tile"]);
        assert_eq!(rounds[0].sequence.len(), 2 * 4);
    }

    #[test]
    fn medians() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), 2.5);
    }
}
