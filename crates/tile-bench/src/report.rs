//! `results.md`: per case, paired medians and full ranges for every phase,
//! ratios of Tile against each peer and the split control, and the caveats
//! next to the tables. Every figure is derived from the raw rows of
//! `results.json`; `tile audit` recomputes each one independently.

use crate::protocol::median;
use serde_json::Value;
use std::collections::BTreeMap;
use std::fmt::Write;

/// Formats `x` with 4 significant digits (the precision the audit checks).
pub fn sig4(x: f64) -> String {
    if !x.is_finite() {
        return format!("{x}");
    }
    if x == 0.0 {
        return "0".into();
    }
    let digits = 3 - x.abs().log10().floor() as i32;
    if digits > 0 {
        format!("{:.*}", digits as usize, x)
    } else {
        format!("{:.0}", x)
    }
}

/// Per-invocation times (µs) of the ok rows of (case, entry, phase), by round.
pub(crate) fn per_round(
    rows: &[Value],
    case: &str,
    entry: &str,
    phase: &str,
) -> BTreeMap<u64, Vec<f64>> {
    let mut out: BTreeMap<u64, Vec<f64>> = BTreeMap::new();
    for r in rows {
        if r["case"] == case && r["variant"] == entry && r["phase"] == phase && r["status"] == "ok"
        {
            let n = r["n"].as_f64().unwrap_or(f64::NAN);
            let v = out.entry(r["round"].as_u64().unwrap_or(0)).or_default();
            for s in r["samples_s"].as_array().into_iter().flatten() {
                v.push(s.as_f64().unwrap_or(f64::NAN) / n * 1e6);
            }
        }
    }
    out
}

/// Renders the report from a results document.
pub fn render(results: &Value) -> Result<String, String> {
    let meta = &results["meta"];
    let rows = results["rows"].as_array().ok_or("no rows")?;
    let names = |key: &str| -> Result<Vec<&str>, String> {
        Ok(meta[key]
            .as_array()
            .ok_or(format!("no {key}"))?
            .iter()
            .filter_map(|p| p.as_str())
            .collect())
    };
    let phases = names("phases")?;
    let cases = names("cases")?;
    let mut md = String::new();
    header(&mut md, meta);
    failures(&mut md, rows);
    caveats(&mut md, meta);
    for case in &cases {
        case_section(&mut md, meta, rows, case, &phases);
    }
    Ok(md)
}

/// The title, the quick-run warning, the machine, protocol and peers.
fn header(md: &mut String, meta: &Value) {
    let proto = &meta["protocol"];
    let _ = writeln!(md, "# Tile benchmark results\n");
    if proto["quick"].as_bool().unwrap_or(false) {
        let _ = writeln!(
            md,
            "**Quick run (smoke test): these figures are not performance results.**\n"
        );
    }
    let _ = writeln!(
        md,
        "- Target: `{}` on {}\n- Tile {} (commit `{}`), compiler: {}\n- Protocol: {} round(s) x {} samples per phase, batches calibrated to {} ms, {} ms warm-up; command: `{}`",
        meta["target"].as_str().unwrap_or("?"),
        meta["device"].as_str().unwrap_or("?"),
        meta["tile_version"].as_str().unwrap_or("?"),
        meta["tile_commit"].as_str().unwrap_or("?"),
        meta["artifacts"]["compiler"].as_str().unwrap_or("?"),
        proto["rounds"],
        proto["samples"],
        proto["window_ms"],
        proto["warmup_ms"],
        meta["command"].as_str().unwrap_or("?"),
    );
    for (name, info) in meta["peers"].as_object().into_iter().flatten() {
        if info["available"].as_bool().unwrap_or(false) {
            let versions = info["versions"].as_object().map(|o| {
                o.iter()
                    .map(|(k, v)| format!("{k} {}", v.as_str().unwrap_or("?")))
                    .collect::<Vec<_>>()
                    .join(", ")
            });
            let _ = writeln!(
                md,
                "- Peer `{name}`: available ({})",
                versions.unwrap_or_default()
            );
        } else {
            let _ = writeln!(
                md,
                "- Peer `{name}`: not available ({})",
                info["reason"].as_str().unwrap_or("unknown reason")
            );
        }
    }
}

/// The rows that recorded no timing, and why.
fn failures(md: &mut String, rows: &[Value]) {
    let failed: Vec<String> = rows
        .iter()
        .filter(|r| r["status"] != "ok")
        .map(|r| {
            let why = match r["reason"].as_str() {
                Some(reason) => reason.to_string(),
                None => validation_reason(&r["validation"]),
            };
            format!(
                "{} {} round {}: {} ({why})",
                r["case"].as_str().unwrap_or("?"),
                r["variant"].as_str().unwrap_or("?"),
                r["round"],
                r["status"].as_str().unwrap_or("?"),
            )
        })
        .collect();
    if !failed.is_empty() {
        let _ = writeln!(md, "\n**Failed (no timing recorded):**\n");
        for f in failed {
            let _ = writeln!(md, "- {f}");
        }
    }
}

/// Why a validation failed: each failing output with its largest errors
/// against the tolerance (`y`: max abs 0.5, max rel 1, atol 1e-5, rtol
/// 1e-4; NaN where an element is NaN, or was never written).
fn validation_reason(v: &Value) -> String {
    let failing: Vec<String> = v["outputs"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|o| o["pass"] == false)
        .map(|o| {
            let num = |k: &str| match &o[k] {
                Value::Number(n) => n.to_string(),
                // serde_json writes a NaN as null.
                _ => "NaN".to_string(),
            };
            format!(
                "`{}` over {} elements: max abs error {}, max rel error {}",
                o["name"].as_str().unwrap_or("?"),
                o["count"],
                num("max_abs"),
                num("max_rel")
            )
        })
        .collect();
    if failing.is_empty() {
        return "validation failed".to_string();
    }
    format!(
        "validation failed: {}; tolerance atol {} + rtol {} x |reference|",
        failing.join("; "),
        v["atol"],
        v["rtol"]
    )
}

/// How every figure below was computed.
fn caveats(md: &mut String, meta: &Value) {
    let _ = writeln!(md, "\n## Caveats\n");
    let gpu = if meta["target"] == "wgpu" {
        "`gpu_*` phases time the adapter's timestamp queries around a compute pass holding the timed calls (measured only where the adapter has them)."
    } else {
        "`gpu_*` phases (CUDA only) time device events."
    };
    let _ = writeln!(
        md,
        "- Times are per invocation in microseconds: the median over rounds of each round's median sample (a sample is one timed batch divided by its invocation count N); ranges are the smallest and largest per-invocation sample of all rounds.\n\
         - Ratios are Tile `fused` over the other entry, computed within each round and then the median over rounds; below 1 means Tile is faster.\n\
         - Outputs are preallocated for Tile and every peer that allows it; eager peers run their preallocated `out=` chains, so they pay no allocation either.\n\
         - Inputs, compilation, allocation, upload and download are outside every timed region. `e2e_*` phases time the host call plus synchronisation; {gpu}\n\
         - Shapes whose inputs and outputs fit in the last-level cache (1x127 and 37x1537 here) measure cache-resident data: repeated invocations reuse the same buffers, the same for every framework.\n\
         - Phases are reported as measured; no phase is subtracted from another."
    );
    if meta["moved_bytes"].is_object() {
        let _ = writeln!(
            md,
            "- GB/s is the bytes the case's program moves (every input read once, every output written once) over the median time, the same numerator for every entry; the `copy` entry reads and writes that many bytes, so `fused` over `copy` is how far Tile is from the copy floor on this machine."
        );
    }
    if meta["flops"].as_object().is_some_and(|f| !f.is_empty()) {
        let _ = writeln!(
            md,
            "- GFLOP/s, where a case has it, is the floating-point operations the suite counts for the case (`meta.flops`: its products' multiply-adds, two each; not the element-wise work around them) over the median time, the same numerator for every entry."
        );
    }
}

/// One case: kernels per invocation, the times table, the ratios table
/// and what each entry is.
fn case_section(md: &mut String, meta: &Value, rows: &[Value], case: &str, phases: &[&str]) {
    let mut entries: Vec<String> = Vec::new();
    for r in rows.iter().filter(|r| r["case"] == case) {
        let v = r["variant"].as_str().unwrap_or("?").to_string();
        if !entries.contains(&v) {
            entries.push(v);
        }
    }
    entries.sort_by_key(|v| entry_rank(v));
    let moved = meta["moved_bytes"][case].as_f64();
    let _ = writeln!(md, "\n## {case}\n");
    let kernels: Vec<String> = entries
        .iter()
        .filter_map(|e| {
            let r = rows
                .iter()
                .find(|r| r["case"] == case && r["variant"] == e.as_str())?;
            let k = if r["framework"] == "tile" {
                r["plan"]["kernels"].clone()
            } else {
                r["kernels"].clone()
            };
            Some(format!(
                "{e} {}",
                if k.is_null() {
                    "?".to_string()
                } else {
                    k.to_string()
                }
            ))
        })
        .collect();
    let _ = writeln!(md, "Kernels per invocation: {}\n", kernels.join(", "));
    let flops = meta["flops"][case].as_f64();
    times_table(md, rows, case, &entries, phases, moved, flops);
    ratios_table(md, rows, case, &entries, phases);
    let _ = writeln!(md, "\nEntries:\n");
    for e in &entries {
        let row = rows
            .iter()
            .find(|r| r["case"] == case && r["variant"] == e.as_str());
        let _ = writeln!(md, "- `{e}`: {}", explain(e, row, moved));
    }
}

/// Per entry and phase: median, range, rounds and (with `moved` bytes)
/// the bandwidth.
fn times_table(
    md: &mut String,
    rows: &[Value],
    case: &str,
    entries: &[String],
    phases: &[&str],
    moved: Option<f64>,
    flops: Option<f64>,
) {
    if moved.is_some() && flops.is_some() {
        let _ = writeln!(
            md,
            "| entry | phase | median (us) | min (us) | max (us) | rounds | GB/s | GFLOP/s |"
        );
        let _ = writeln!(md, "|---|---|---|---|---|---|---|---|");
    } else if moved.is_some() {
        let _ = writeln!(
            md,
            "| entry | phase | median (us) | min (us) | max (us) | rounds | GB/s |"
        );
        let _ = writeln!(md, "|---|---|---|---|---|---|---|");
    } else {
        let _ = writeln!(
            md,
            "| entry | phase | median (us) | min (us) | max (us) | rounds |"
        );
        let _ = writeln!(md, "|---|---|---|---|---|---|");
    }
    for e in entries {
        for ph in phases {
            let by_round = per_round(rows, case, e, ph);
            if by_round.is_empty() {
                continue;
            }
            let meds: Vec<f64> = by_round.values().map(|v| median(v)).collect();
            let all: Vec<f64> = by_round.values().flatten().copied().collect();
            let lo = all.iter().copied().fold(f64::INFINITY, f64::min);
            let hi = all.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            let m = median(&meds);
            let _ = write!(
                md,
                "| {e} | {ph} | {} | {} | {} | {} |",
                sig4(m),
                sig4(lo),
                sig4(hi),
                meds.len()
            );
            match (moved, flops) {
                (Some(b), Some(f)) => {
                    let _ = writeln!(md, " {} | {} |", sig4(gbps(b, m)), sig4(gbps(f, m)));
                }
                (Some(b), None) => {
                    let _ = writeln!(md, " {} |", sig4(gbps(b, m)));
                }
                (None, _) => {
                    let _ = writeln!(md);
                }
            }
        }
    }
}

/// `fused` over every other entry, per phase: the median of the
/// per-round ratios, and each round's.
fn ratios_table(md: &mut String, rows: &[Value], case: &str, entries: &[String], phases: &[&str]) {
    let _ = writeln!(
        md,
        "\n| numerator | denominator | phase | median ratio | per round |"
    );
    let _ = writeln!(md, "|---|---|---|---|---|");
    for e in entries.iter().filter(|e| e.as_str() != "fused") {
        for ph in phases {
            let num = per_round(rows, case, "fused", ph);
            let den = per_round(rows, case, e, ph);
            let ratios: Vec<f64> = num
                .iter()
                .filter_map(|(r, v)| den.get(r).map(|d| median(v) / median(d)))
                .collect();
            if ratios.is_empty() {
                continue;
            }
            let each: Vec<String> = ratios.iter().map(|r| sig4(*r)).collect();
            let _ = writeln!(
                md,
                "| fused | {e} | {ph} | {} | {} |",
                sig4(median(&ratios)),
                each.join(" ")
            );
        }
    }
}

/// The order entries are listed in: Tile's, then the peers.
pub(crate) fn entry_rank(e: &str) -> u8 {
    match e {
        "fused" => 0,
        "reference" => 1,
        "split" => 2,
        "copy" => 3,
        _ => 4,
    }
}

/// Gigabytes per second for `bytes` moved in `us` microseconds.
pub fn gbps(bytes: f64, us: f64) -> f64 {
    bytes / us / 1e3
}

/// What an entry of a case is, in a sentence.
fn explain(e: &str, row: Option<&Value>, moved: Option<f64>) -> String {
    let mappings = row
        .map(|r| {
            r["plan"]["mappings"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|m| m.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        })
        .unwrap_or_default();
    match e {
        "fused" => format!("Tile, fusion on: the planner's kernels ({mappings})."),
        "reference" => format!(
            "Tile with the element grid requested explicitly ({mappings}): it must be the same source as `fused`, which the audit checks, so the planner is shown to choose the one-kernel grid."
        ),
        "split" => format!(
            "Tile, fusion off: one kernel per store, each recomputing what it needs ({mappings}); for a single-store program the same source as `fused`."
        ),
        "copy" => format!(
            "Tile copying a plane of f32 that reads and writes {} bytes, at least as many as the case's program moves: the floor for a kernel moving these bytes.",
            moved.map_or("?".to_string(), |b| ((b as u64).div_ceil(8) * 8).to_string())
        ),
        _ => {
            let notes = match row.map(|r| &r["notes"]) {
                Some(Value::String(s)) => s.clone(),
                Some(Value::Array(a)) => a
                    .iter()
                    .filter_map(|n| n.as_str())
                    .collect::<Vec<_>>()
                    .join("; "),
                _ => String::new(),
            };
            if notes.is_empty() {
                format!("the peer framework `{e}`.")
            } else {
                format!("the peer framework `{e}`: {notes}")
            }
        }
    }
}

/// A compact table for the terminal: per case, Tile's kernels and
/// per-invocation time (first phase, median over rounds) for each entry,
/// and the median paired ratio of `fused` against it.
pub fn summary(results: &Value) -> String {
    let empty = vec![];
    let rows = results["rows"].as_array().unwrap_or(&empty);
    let phase = results["meta"]["phases"][0]
        .as_str()
        .unwrap_or("e2e_batch")
        .to_string();
    let cases: Vec<&str> = results["meta"]["cases"]
        .as_array()
        .map(|a| a.iter().filter_map(|c| c.as_str()).collect())
        .unwrap_or_default();
    let mut out = String::new();
    if results["meta"]["protocol"]["quick"]
        .as_bool()
        .unwrap_or(false)
    {
        let _ = writeln!(out, "Quick run: smoke test only, not a performance result.");
    }
    let _ = writeln!(
        out,
        "{:<24} {:<18} {:>8} {:>12} {:>12} {:>8}",
        "case",
        "entry",
        "kernels",
        format!("{phase} us"),
        "fused/entry",
        "GB/s"
    );
    for case in cases {
        let mut entries: Vec<String> = Vec::new();
        for r in rows.iter().filter(|r| r["case"] == case) {
            let v = r["variant"].as_str().unwrap_or("?").to_string();
            if !entries.contains(&v) {
                entries.push(v);
            }
        }
        entries.sort_by_key(|e| entry_rank(e));
        let moved = results["meta"]["moved_bytes"][case].as_f64();
        for e in &entries {
            let row = rows
                .iter()
                .find(|r| r["case"] == case && r["variant"] == e.as_str());
            let kernels = row
                .map(|r| {
                    if r["framework"] == "tile" {
                        r["plan"]["kernels"].clone()
                    } else {
                        r["kernels"].clone()
                    }
                })
                .unwrap_or(Value::Null);
            let by = per_round(rows, case, e, &phase);
            if by.is_empty() {
                let status = row.and_then(|r| r["status"].as_str()).unwrap_or("?");
                let _ = writeln!(
                    out,
                    "{case:<24} {e:<18} {:>8} {:>12} {:>12}",
                    "-", status, "-"
                );
                continue;
            }
            let meds: Vec<f64> = by.values().map(|v| median(v)).collect();
            let fused = per_round(rows, case, "fused", &phase);
            let ratios: Vec<f64> = fused
                .iter()
                .filter_map(|(r, v)| by.get(r).map(|d| median(v) / median(d)))
                .collect();
            let k = if kernels.is_null() {
                "?".to_string()
            } else {
                kernels.to_string()
            };
            let m = median(&meds);
            let _ = writeln!(
                out,
                "{case:<24} {e:<18} {k:>8} {:>12} {:>12} {:>8}",
                sig4(m),
                if e == "fused" {
                    "-".into()
                } else {
                    sig4(median(&ratios))
                },
                moved.map_or("-".into(), |b| sig4(gbps(b, m)))
            );
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::sig4;

    #[test]
    fn four_significant_digits() {
        assert_eq!(sig4(1234.567), "1235");
        assert_eq!(sig4(12.34567), "12.35");
        assert_eq!(sig4(0.00123456), "0.001235");
        assert_eq!(sig4(99999.0), "99999");
    }
}
