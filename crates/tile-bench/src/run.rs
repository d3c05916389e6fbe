//! `tile bench`: runs the planned order, writes `results.json`, `sources/`
//! and `results.md` into the output directory.

use crate::oracle;
use crate::peers::Peer;
use crate::protocol::{measure, phases, planned_order, Protocol};
use crate::suite::Case;
use crate::target::{prepare, Variant};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::io::IsTerminal;
use std::io::Write;
use std::path::{Path, PathBuf};

/// Everything `tile bench` was asked to do.
#[derive(Clone, Debug)]
pub struct BenchArgs {
    /// `cpu` or `cuda`.
    pub target: String,
    /// Cases to run.
    pub cases: Vec<Case>,
    /// Peer frameworks to ask for (missing ones are recorded as not
    /// available).
    pub peers: Vec<String>,
    /// Protocol parameters.
    pub protocol: Protocol,
    /// Output directory.
    pub out: PathBuf,
    /// Python interpreter for the peers.
    pub python: String,
    /// The command line, for the record.
    pub command: String,
    /// Show progress on stderr.
    pub progress: bool,
}

/// The default peers of a target (none on wgpu: no peer framework runs
/// on its adapters yet).
pub fn default_peers(target: &str) -> Vec<String> {
    let v: &[&str] = if target == "wgpu" {
        &[]
    } else if target == "cuda" {
        &[
            "torch_eager",
            "torch_compile",
            "jax_jit",
            "cupy_elementwise",
        ]
    } else {
        &["numpy_eager", "torch_eager"]
    };
    v.iter().map(|s| s.to_string()).collect()
}

fn now() -> String {
    let s = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    format!("{s}")
}

fn git_commit() -> String {
    // Embedded at build time (build.rs); "+uncommitted" marks a dirty tree.
    env!("TILE_BUILD_COMMIT").to_string()
}

/// The variants of Tile run for a case: the seed suite compares fused,
/// reference and split; the other groups fused and split (for
/// single-store programs the same source); every case a copy of the bytes
/// it moves.
pub fn variants_for(group: &str) -> Vec<Variant> {
    if group == "seed" {
        vec![
            Variant::Fused,
            Variant::Reference,
            Variant::Split,
            Variant::Copy,
        ]
    } else {
        vec![Variant::Fused, Variant::Split, Variant::Copy]
    }
}

/// Runs the benchmark and writes the results directory. Returns the path
/// of `results.md`.
pub fn bench(args: &BenchArgs) -> Result<PathBuf, String> {
    let start = now();
    let sources_dir = args.out.join("sources");
    check_out_dir(&args.out)?;
    std::fs::create_dir_all(&sources_dir).map_err(|e| format!("{}: {e}", sources_dir.display()))?;
    let ph = phases(&args.target);
    let (peer_info, available) = greet_peers(args);
    let case_names: Vec<String> = args.cases.iter().map(|c| c.name.clone()).collect();
    let mut frameworks = vec!["tile".to_string()];
    frameworks.extend(available.iter().cloned());
    let all_variants: Vec<String> = ["fused", "reference", "split", "copy"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let order = plan_rounds(args, &case_names, &frameworks, &all_variants);
    // Bytes each case moves (the bandwidth column's numerator, and the
    // copy entry's size).
    let mut moved = serde_json::Map::new();
    // Floating-point operations, where the suite counts them (the FLOP
    // rate column's numerator).
    let mut flops = serde_json::Map::new();
    for c in &args.cases {
        moved.insert(c.name.clone(), json!(crate::target::moved_bytes(c)?));
        if let Some(f) = c.flop_count()? {
            flops.insert(c.name.clone(), json!(f));
        }
    }
    let Measured {
        rows,
        omitted,
        artifacts,
    } = run_rounds(args, &order, &available, &ph)?;
    let groups: Vec<String> = {
        let mut g: Vec<String> = args.cases.iter().map(|c| c.group.clone()).collect();
        g.dedup();
        g
    };
    let meta = json!({
        "tile_version": env!("CARGO_PKG_VERSION"),
        "tile_commit": git_commit(),
        "command": args.command,
        "target": args.target,
        "device": crate::target::device_name(&args.target),
        "host": host_name(),
        "artifacts": artifacts,
        "peers": Value::Object(peer_info),
        "protocol": args.protocol,
        "phases": ph,
        "omitted_phases": omitted,
        "cases": case_names,
        "groups": groups,
        "frameworks": frameworks,
        "variants": all_variants,
        "moved_bytes": moved,
        "flops": flops,
        "sizes": args.cases.iter().filter(|c| !c.sizes.is_empty()).map(|c| (c.name.clone(), json!(c.sizes))).collect::<serde_json::Map<_, _>>(),
        "allow_tf32": args.cases.iter().any(|c| c.allow_tf32),
        "tolerances": args.cases.iter().map(|c| (c.name.clone(), json!({"atol": c.atol, "rtol": c.rtol, "outputs": c.outputs.len()}))).collect::<serde_json::Map<_, _>>(),
        "start_unix": start,
        "end_unix": now(),
    });
    let results = json!({"schema": 1, "meta": meta, "planned_order": order, "rows": rows});
    let text = serde_json::to_string_pretty(&results).map_err(|e| e.to_string())?;
    write_file(&args.out.join("results.json"), &text)?;
    let md = crate::report::render(&results)?;
    let md_path = args.out.join("results.md");
    write_file(&md_path, &md)?;
    Ok(md_path)
}

/// Refuses an output directory that exists and is not empty (a run never
/// mixes its files with another's).
fn check_out_dir(out: &std::path::Path) -> Result<(), String> {
    if out.exists()
        && std::fs::read_dir(out)
            .map(|mut d| d.next().is_some())
            .unwrap_or(false)
    {
        return Err(format!(
            "{}: the output directory exists and is not empty; choose another --out",
            out.display()
        ));
    }
    Ok(())
}

/// What the rounds measured: the raw rows, the phases each peer could not
/// measure, and the CUDA artifacts' description.
struct Measured {
    rows: Vec<Value>,
    omitted: BTreeMap<String, Vec<String>>,
    artifacts: Value,
}

/// Runs every round's sequence of (case, entry): peers in their own
/// processes (started afresh each round), Tile's entries here.
fn run_rounds(
    args: &BenchArgs,
    order: &[crate::protocol::RoundOrder],
    available: &[String],
    ph: &[&'static str],
) -> Result<Measured, String> {
    let mut rows: Vec<Value> = Vec::new();
    // Phases a peer cannot measure (no device clock), by framework.
    let mut omitted: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut artifacts = json!(null);
    let total: usize = order.iter().map(|r| r.sequence.len()).sum();
    let mut done = 0;
    for round in order {
        let mut peers: BTreeMap<String, Peer> = BTreeMap::new();
        for p in available {
            peers.insert(p.clone(), Peer::start(&args.python, p)?);
        }
        for (case_name, entry) in &round.sequence {
            done += 1;
            let case = args
                .cases
                .iter()
                .find(|c| &c.name == case_name)
                .ok_or("planned case missing")?;
            if args.progress {
                // A terminal shows one line rewritten in place; a log
                // (stderr not a terminal) gets one plain line per step.
                if std::io::stderr().is_terminal() {
                    eprint!(
                        "\r[{done}/{total}] round {} {case_name} {entry}                    ",
                        round.round
                    );
                    let _ = std::io::stderr().flush();
                } else {
                    eprintln!("[{done}/{total}] round {} {case_name} {entry}", round.round);
                }
            }
            let base = json!({"round": round.round, "case": case_name, "graph": case.graph, "group": case.group, "shape": case.shape});
            if let Some(peer) = peers.get_mut(entry) {
                let resp = peer.run(
                    &case.graph,
                    case.shape,
                    &case.sizes,
                    &args.target,
                    ph,
                    &args.protocol,
                    (case.atol, case.rtol),
                    case.allow_tf32,
                )?;
                for (p, _) in resp["omitted_phases"].as_object().into_iter().flatten() {
                    let list = omitted.entry(entry.clone()).or_default();
                    if !list.contains(p) {
                        list.push(p.clone());
                    }
                }
                rows.extend(peer_rows(&base, entry, &resp, ph));
                continue;
            }
            rows.extend(tile_rows(args, case, entry, base, ph, &mut artifacts)?);
        }
    }
    if args.progress && std::io::stderr().is_terminal() {
        eprintln!();
    }
    Ok(Measured {
        rows,
        omitted,
        artifacts,
    })
}

/// Which peers are there at all (each greets and quits): every asked
/// peer's greeting (or why it did not start) and the available ones.
fn greet_peers(args: &BenchArgs) -> (serde_json::Map<String, Value>, Vec<String>) {
    let mut peer_info = serde_json::Map::new();
    let mut available = Vec::new();
    for p in &args.peers {
        match Peer::start(&args.python, p) {
            Ok(peer) => {
                if peer.available() {
                    available.push(p.clone());
                }
                peer_info.insert(p.clone(), peer.hello.clone());
            }
            Err(e) => {
                peer_info.insert(p.clone(), json!({"available": false, "reason": e}));
            }
        }
    }
    (peer_info, available)
}

/// The rounds' planned order of (case, entry). The reference variant (an
/// explicitly requested element grid) applies to the seed suite only;
/// single-output controls compare fused and split.
fn plan_rounds(
    args: &BenchArgs,
    case_names: &[String],
    frameworks: &[String],
    variants: &[String],
) -> Vec<crate::protocol::RoundOrder> {
    let mut order = planned_order(args.protocol.rounds, case_names, frameworks, variants);
    for round in &mut order {
        round.sequence.retain(|(c, e)| {
            let group = args
                .cases
                .iter()
                .find(|k| &k.name == c)
                .map(|k| k.group.as_str());
            e != "reference" || group == Some("seed")
        });
    }
    order
}

/// One Tile entry of a case in a round: compile, write its sources,
/// validate against the FP64 reference, then measure every phase (or one
/// `validation` row saying it failed). Entries a case's group does not
/// have give no rows.
fn tile_rows(
    args: &BenchArgs,
    case: &Case,
    entry: &str,
    base: Value,
    ph: &[&'static str],
    artifacts: &mut Value,
) -> Result<Vec<Value>, String> {
    let variant = Variant::parse(entry).ok_or_else(|| format!("unknown entry `{entry}`"))?;
    if !variants_for(&case.group).contains(&variant) {
        return Ok(vec![]);
    }
    let mut prepared = prepare(&args.target, case, variant)?;
    if artifacts.is_null() {
        *artifacts = prepared.artifacts.clone();
    }
    let mut srcs = Vec::new();
    for (hash, ext, text) in &prepared.sources {
        let rel = format!("sources/{hash}.{ext}");
        std::fs::write(args.out.join(&rel), text).map_err(|e| format!("{rel}: {e}"))?;
        srcs.push(json!({"hash": hash, "path": rel}));
    }
    let validation = if variant == Variant::Copy {
        prepared.validate(&crate::target::copy_case(case)?)?
    } else {
        prepared.validate(case)?
    };
    let mut row = base;
    row["framework"] = json!("tile");
    row["variant"] = json!(variant.name());
    row["plan"] = prepared.plan.clone();
    row["sources"] = json!(srcs);
    row["artifacts"] = prepared.artifacts.clone();
    row["validation"] = serde_json::to_value(&validation).map_err(|e| e.to_string())?;
    if !validation["pass"].as_bool().unwrap_or(false) {
        row["phase"] = json!("validation");
        row["status"] = json!("failed");
        return Ok(vec![row]);
    }
    let measured = measure(prepared.invoker.as_mut(), &args.protocol, ph)?;
    Ok(ph
        .iter()
        .map(|p| {
            let mut r = row.clone();
            r["phase"] = json!(p);
            r["status"] = json!("ok");
            r["n"] = json!(measured[*p].n);
            r["samples_s"] = json!(measured[*p].samples_s);
            r
        })
        .collect())
}

fn write_file(p: &Path, text: &str) -> Result<(), String> {
    std::fs::write(p, text).map_err(|e| format!("{}: {e}", p.display()))
}

fn host_name() -> String {
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|t| {
            t.lines()
                .find(|l| l.starts_with("model name"))
                .map(|l| l.split(':').nth(1).unwrap_or("").trim().to_string())
        })
        .unwrap_or_else(|| std::env::consts::ARCH.to_string());
    let cores = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1);
    format!("{cpu}, {cores} cores")
}

/// Rows for one peer response: one per phase, or one failed/not-available
/// record.
fn peer_rows(base: &Value, framework: &str, resp: &Value, ph: &[&str]) -> Vec<Value> {
    let mut row = base.clone();
    row["framework"] = json!(framework);
    row["variant"] = json!(framework);
    row["validation"] = resp["validation"].clone();
    row["kernels"] = resp["kernels"].clone();
    row["notes"] = resp["notes"].clone();
    let status = resp["status"].as_str().unwrap_or("failed");
    if status != "ok" {
        row["phase"] = json!("validation");
        row["status"] = json!(status);
        row["reason"] = resp["reason"].clone();
        return vec![row];
    }
    ph.iter()
        .filter_map(|p| {
            let s = resp["phases"].get(*p)?;
            let mut r = row.clone();
            r["phase"] = json!(p);
            r["status"] = json!("ok");
            r["n"] = s["n"].clone();
            r["samples_s"] = s["samples_s"].clone();
            Some(r)
        })
        .collect()
}

/// The interpreter's outputs for a case, computed once per program, sizes
/// and inputs (every entry of every round validates against the same
/// values; the interpreter takes seconds on the larger matrix and
/// algorithm cases).
fn interpreted_once(
    case: &Case,
    inputs: &[Vec<f32>],
) -> Result<std::sync::Arc<Vec<Vec<f64>>>, String> {
    use std::hash::{Hash, Hasher};
    type Memo = std::collections::HashMap<u64, std::sync::Arc<Vec<Vec<f64>>>>;
    static MEMO: std::sync::Mutex<Option<Memo>> = std::sync::Mutex::new(None);
    let mut h = std::collections::hash_map::DefaultHasher::new();
    (&case.program, case.shape, &case.sizes, &case.outputs).hash(&mut h);
    for v in inputs {
        v.len().hash(&mut h);
        v.iter().for_each(|x| x.to_bits().hash(&mut h));
    }
    let key = h.finish();
    if let Some(w) = MEMO
        .lock()
        .ok()
        .and_then(|m| m.as_ref()?.get(&key).cloned())
    {
        return Ok(w);
    }
    let w = std::sync::Arc::new(oracle::interpreted(case, inputs)?);
    if let Ok(mut m) = MEMO.lock() {
        m.get_or_insert_with(Memo::new).insert(key, w.clone());
    }
    Ok(w)
}

/// Validation against the FP64 oracle of a case, from the outputs.
pub fn validation_record(
    case: &Case,
    outputs: &[(String, Vec<f32>)],
    inputs: &[Vec<f32>],
) -> Result<Value, String> {
    // The graph's formula where the suite has one, else the interpreter
    // (always for `tile bench FILE`: a program of the user's that shares a
    // built-in graph's name is not that graph).
    let formula = match case.group.as_str() {
        "program" => Err(String::new()),
        _ => oracle::reference(
            &case.graph,
            inputs,
            (case.shape[0], case.shape[1]),
            &case.sizes,
        ),
    };
    let want = match formula {
        Ok(w) => std::sync::Arc::new(w),
        Err(_) => interpreted_once(case, inputs)?,
    };
    let mut checks = Vec::new();
    for (k, name) in case.outputs.iter().enumerate() {
        let got = outputs
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_slice())
            .unwrap_or(&[]);
        checks.push(oracle::check(name, got, &want[k], case.atol, case.rtol));
    }
    let pass = checks.iter().all(|c| c.pass) && checks.len() == case.outputs.len();
    Ok(json!({"atol": case.atol, "rtol": case.rtol, "pass": pass, "outputs": checks}))
}
