//! `tile audit`: an independent check of a results directory.
//!
//! This module shares no code with the writer (`run.rs`, `report.rs`,
//! `protocol.rs`): it reads `results.json` as plain JSON, recomputes the
//! planned order, every median and every ratio with its own arithmetic, and
//! checks the seven points of docs/benchmarking.md plus every figure printed in
//! `results.md`. `--self-test` applies eight mutations to copies of the
//! directory; each must be rejected.

use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Audits the directory holding `results.json`; `Ok` with a summary, or
/// every problem found.
pub fn audit(results_json: &Path) -> Result<String, Vec<String>> {
    let dir = results_dir(results_json);
    let text = std::fs::read_to_string(results_json)
        .map_err(|e| vec![format!("{}: {e}", results_json.display())])?;
    let doc: Value =
        serde_json::from_str(&text).map_err(|e| vec![format!("results.json is not JSON: {e}")])?;
    let mut a = Auditor {
        doc: &doc,
        dir,
        problems: Vec::new(),
    };
    a.run();
    if a.problems.is_empty() {
        let rows = doc["rows"].as_array().map_or(0, |r| r.len());
        Ok(format!(
            "audit passed: {rows} rows, every figure in results.md recomputed from raw samples"
        ))
    } else {
        Err(a.problems)
    }
}

struct Auditor<'a> {
    doc: &'a Value,
    dir: &'a Path,
    problems: Vec<String>,
}

fn mid(v: &mut [f64]) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap_or(std::cmp::Ordering::Equal));
    let n = v.len();
    match n {
        0 => f64::NAN,
        _ if n % 2 == 1 => v[n / 2],
        _ => 0.5 * (v[n / 2 - 1] + v[n / 2]),
    }
}

fn strs(v: &Value) -> Vec<String> {
    v.as_array()
        .map(|a| {
            a.iter()
                .filter_map(|x| x.as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default()
}

fn rot(v: &[String], r: usize) -> Vec<String> {
    let n = v.len();
    (0..n).map(|i| v[(i + r) % n].clone()).collect()
}

impl Auditor<'_> {
    fn fail(&mut self, s: String) {
        if self.problems.len() < 50 {
            self.problems.push(s);
        }
    }

    fn run(&mut self) {
        let doc = self.doc;
        let meta = &doc["meta"];
        let rows = doc["rows"].as_array().cloned().unwrap_or_default();
        let rounds = meta["protocol"]["rounds"].as_u64().unwrap_or(0) as usize;
        let samples = meta["protocol"]["samples"].as_u64().unwrap_or(0) as usize;
        let window_s = meta["protocol"]["window_ms"].as_f64().unwrap_or(0.0) / 1e3;
        let phases = strs(&meta["phases"]);
        let cases = strs(&meta["cases"]);
        let frameworks = strs(&meta["frameworks"]);
        let variants = strs(&meta["variants"]);
        if rounds == 0 || phases.is_empty() || cases.is_empty() || frameworks.is_empty() {
            self.fail("meta lacks rounds, phases, cases or frameworks".into());
            return;
        }
        let group_of: BTreeMap<String, String> = rows
            .iter()
            .filter_map(|r| {
                Some((
                    r["case"].as_str()?.to_string(),
                    r["group"].as_str()?.to_string(),
                ))
            })
            .collect();

        let planned = doc["planned_order"].as_array().cloned().unwrap_or_default();
        let expected_seq =
            self.check_order(&planned, rounds, &cases, &frameworks, &variants, &group_of);
        self.check_coverage(&rows, &expected_seq, &phases);
        let hashes = self.check_rows(&rows, samples, window_s, &group_of);
        self.check_sources(&hashes, &cases, &group_of);
        self.check_report(&rows, &phases);
    }

    /// Order (check 2): each round's orders are the rotations by the round
    /// index, the recorded sequences follow them, and frameworks and
    /// variants are balanced across positions. Returns the expected
    /// (round, case, entry) sequence.
    fn check_order(
        &mut self,
        planned: &[Value],
        rounds: usize,
        cases: &[String],
        frameworks: &[String],
        variants: &[String],
        group_of: &BTreeMap<String, String>,
    ) -> Vec<(usize, String, String)> {
        if planned.len() != rounds {
            self.fail(format!(
                "order: {} planned rounds, protocol says {rounds}",
                planned.len()
            ));
        }
        let mut expected_seq: Vec<(usize, String, String)> = Vec::new();
        for (r, p) in planned.iter().enumerate() {
            let (cs, fs, vs) = (rot(cases, r), rot(frameworks, r), rot(variants, r));
            if strs(&p["cases"]) != cs || strs(&p["frameworks"]) != fs || strs(&p["variants"]) != vs
            {
                self.fail(format!(
                    "order: round {r} does not rotate cases, frameworks and variants by {r}"
                ));
            }
            let mut seq = Vec::new();
            for c in &cs {
                for f in &fs {
                    if f == "tile" {
                        for v in &vs {
                            if v != "reference" || group_of.get(c).is_some_and(|g| g == "seed") {
                                seq.push((c.clone(), v.clone()));
                            }
                        }
                    } else {
                        seq.push((c.clone(), f.clone()));
                    }
                }
            }
            let recorded: Vec<(String, String)> = p["sequence"]
                .as_array()
                .map(|a| {
                    a.iter()
                        .map(|x| {
                            (
                                x[0].as_str().unwrap_or("").to_string(),
                                x[1].as_str().unwrap_or("").to_string(),
                            )
                        })
                        .collect()
                })
                .unwrap_or_default();
            if recorded != seq {
                self.fail(format!(
                    "order: the recorded sequence of round {r} is not the rotation's"
                ));
            }
            expected_seq.extend(seq.into_iter().map(|(c, e)| (r, c, e)));
        }
        for list in [frameworks, variants] {
            if rounds >= list.len() {
                for item in list.iter() {
                    let mut pos = vec![0usize; list.len()];
                    for p in planned {
                        let key = if list == frameworks {
                            "frameworks"
                        } else {
                            "variants"
                        };
                        if let Some(i) = strs(&p[key]).iter().position(|x| x == item) {
                            pos[i] += 1;
                        }
                    }
                    let (lo, hi) = (
                        pos.iter().min().copied().unwrap_or(0),
                        pos.iter().max().copied().unwrap_or(0),
                    );
                    if hi - lo > 1 {
                        self.fail(format!(
                            "order: `{item}` is unbalanced across positions {pos:?}"
                        ));
                    }
                }
            }
        }

        expected_seq
    }

    /// Coverage (check 1): every (round, case, entry, phase) once, in the
    /// recorded order.
    fn check_coverage(
        &mut self,
        rows: &[Value],
        expected_seq: &[(usize, String, String)],
        phases: &[String],
    ) {
        let meta = &self.doc["meta"];
        // A peer without the graph: one `not_available` row with its
        // reason in place of its phases (never Tile's own entries).
        let unavailable: BTreeSet<(usize, String, String)> = rows
            .iter()
            .filter(|r| is_unavailable_peer(r))
            .map(|r| {
                (
                    r["round"].as_u64().unwrap_or(u64::MAX) as usize,
                    r["case"].as_str().unwrap_or("").to_string(),
                    r["variant"].as_str().unwrap_or("").to_string(),
                )
            })
            .collect();
        let mut want: Vec<(usize, String, String, String)> = Vec::new();
        for (r, c, e) in expected_seq {
            if unavailable.contains(&(*r, c.clone(), e.clone())) {
                want.push((*r, c.clone(), e.clone(), "validation".into()));
                continue;
            }
            let skip = strs(&meta["omitted_phases"][e.as_str()]);
            for ph in phases.iter().filter(|p| !skip.contains(p)) {
                want.push((*r, c.clone(), e.clone(), ph.clone()));
            }
        }
        let got: Vec<(usize, String, String, String)> = rows
            .iter()
            .map(|r| {
                (
                    r["round"].as_u64().unwrap_or(u64::MAX) as usize,
                    r["case"].as_str().unwrap_or("").to_string(),
                    r["variant"].as_str().unwrap_or("").to_string(),
                    r["phase"].as_str().unwrap_or("").to_string(),
                )
            })
            .collect();
        let mut seen = BTreeSet::new();
        for g in &got {
            if !seen.insert(g.clone()) {
                self.fail(format!("coverage: row {g:?} appears twice"));
            }
        }
        for w in &want {
            if !seen.contains(w) {
                self.fail(format!("coverage: row {w:?} is missing"));
            }
        }
        if got != want && self.problems.is_empty() {
            self.fail("coverage: rows are not in the recorded order".into());
        }
    }

    /// Validation (check 4), denominators and Tile's rows, row by row;
    /// returns each (case, entry)'s source hashes across rounds.
    fn check_rows(
        &mut self,
        rows: &[Value],
        samples: usize,
        window_s: f64,
        group_of: &BTreeMap<String, String>,
    ) -> BTreeMap<(String, String), BTreeSet<String>> {
        let mut artifacts: Option<Value> = None;
        let mut hashes: BTreeMap<(String, String), BTreeSet<String>> = BTreeMap::new();
        for (k, r) in rows.iter().enumerate() {
            let case = r["case"].as_str().unwrap_or("?");
            let entry = r["variant"].as_str().unwrap_or("?");
            let what = format!(
                "row {k} ({case} {entry} round {} {})",
                r["round"],
                r["phase"].as_str().unwrap_or("?")
            );
            if is_unavailable_peer(r) {
                continue;
            }
            // 4. Validation.
            let v = &r["validation"];
            if r["status"] != "ok" || v["pass"] != Value::Bool(true) {
                self.fail(format!("validation: {what} did not pass"));
            }
            if entry == "copy" {
                self.check_copy_validation(r, &what, case);
            } else {
                self.check_validation(r, &what, case, group_of);
            }
            self.check_samples(r, &what, samples, window_s);
            if entry == "copy" || r["framework"] == "tile" {
                self.check_tile_row(r, &what, case, entry, &mut hashes, &mut artifacts);
            }
        }
        hashes
    }

    /// The copy entry's validation: its one output checked exactly, its
    /// size following from the case's bytes, Tile's `copy` program.
    fn check_copy_validation(&mut self, r: &Value, what: &str, case: &str) {
        let v = &r["validation"];
        let outs = v["outputs"].as_array().cloned().unwrap_or_default();
        if outs.len() != 1 || v["atol"].as_f64() != Some(0.0) || v["rtol"].as_f64() != Some(0.0) {
            self.fail(format!("validation: {what} is not an exact copy check"));
        }
        // Its size follows from the case's bytes: ceil(bytes / 8)
        // elements, each read and written.
        let count = outs.first().and_then(|o| o["count"].as_u64()).unwrap_or(0);
        let moved = self.doc["meta"]["moved_bytes"][case].as_u64();
        if moved.is_none_or(|m| count != m.div_ceil(8).max(1)) {
            self.fail(format!(
                "validation: {what} copies {count} elements for a case moving {moved:?} bytes"
            ));
        }
        // One element-grid kernel of the program `copy`.
        let copies = r["sources"].as_array().into_iter().flatten().all(|src| {
            std::fs::read_to_string(self.dir.join(src["path"].as_str().unwrap_or("")))
                .is_ok_and(|t| t.contains("program `copy`"))
        });
        if strs(&r["plan"]["mappings"]) != ["element_grid"] || !copies {
            self.fail(format!("validation: {what} is not Tile's copy program"));
        }
    }

    /// Any other entry's validation: every output of the case validated,
    /// with the suite's tolerances, which for the method's graphs are the
    /// method's.
    fn check_validation(
        &mut self,
        r: &Value,
        what: &str,
        case: &str,
        group_of: &BTreeMap<String, String>,
    ) {
        let v = &r["validation"];
        let tol = &self.doc["meta"]["tolerances"][case];
        let outs = v["outputs"].as_array().cloned().unwrap_or_default();
        // The suite's count where the run recorded it; older runs: two for
        // the seed pairs, one for the rest.
        let want_outs = match tol["outputs"].as_u64() {
            Some(n) => n as usize,
            None if group_of.get(case).is_some_and(|g| g == "seed") => 2,
            None => 1,
        };
        if outs.len() != want_outs
            || outs
                .iter()
                .any(|o| o["pass"] != Value::Bool(true) || o["count"].as_u64().unwrap_or(0) == 0)
        {
            self.fail(format!(
                "validation: {what} has {} of {want_outs} outputs validated",
                outs.iter()
                    .filter(|o| o["pass"] == Value::Bool(true))
                    .count()
            ));
        }
        if v["atol"] != tol["atol"] || v["rtol"] != tol["rtol"] {
            self.fail(format!(
                "validation: {what} used tolerances other than the suite's"
            ));
        }
        let fixed = method_tolerances(r["graph"].as_str().unwrap_or(""));
        if fixed.is_some_and(|f| v["atol"].as_f64() != Some(f.0) || v["rtol"].as_f64() != Some(f.1))
        {
            self.fail(format!(
                "validation: {what} tolerances differ from the method's (docs/benchmarking.md)"
            ));
        }
    }

    /// Sources (check 5): one source per case and entry across rounds, and
    /// controls identical with fusion on and off.
    fn check_sources(
        &mut self,
        hashes: &BTreeMap<(String, String), BTreeSet<String>>,
        cases: &[String],
        group_of: &BTreeMap<String, String>,
    ) {
        for ((case, entry), set) in hashes {
            if set.len() != 1 {
                self.fail(format!(
                    "sources: {case} {entry} has {} different sources across rounds",
                    set.len()
                ));
            }
        }
        for case in cases {
            if group_of.get(case).is_some_and(|g| g == "controls") {
                let (f, s) = (
                    hashes.get(&(case.clone(), "fused".into())),
                    hashes.get(&(case.clone(), "split".into())),
                );
                if f.is_some() && f != s {
                    self.fail(format!(
                        "sources: control {case} differs with fusion on and off"
                    ));
                }
            }
        }
    }

    /// Denominators (check 3): every sample valid, `n` consistent with its
    /// phase and the batch window.
    fn check_samples(&mut self, r: &Value, what: &str, samples: usize, window_s: f64) {
        let ph = r["phase"].as_str().unwrap_or("");
        let n = r["n"].as_u64().unwrap_or(0);
        let s: Vec<f64> = r["samples_s"]
            .as_array()
            .map(|a| a.iter().filter_map(|x| x.as_f64()).collect())
            .unwrap_or_default();
        if n == 0 || s.len() != samples || s.iter().any(|x| x.is_nan() || *x <= 0.0) {
            self.fail(format!(
                "denominators: {what} has n={n} and {} valid samples (want {samples})",
                s.len()
            ));
        } else if ph.ends_with("_single") && n != 1 {
            self.fail(format!(
                "denominators: {what} is a single-call phase with n={n}"
            ));
        } else if ph.ends_with("_batch") && n > 1 {
            let m = mid(&mut s.clone());
            // Calibration aims at the window; a factor of 10 either way
            // means N does not belong to these samples.
            if m < window_s / 10.0 || m > window_s * 10.0 {
                self.fail(format!("denominators: {what}: batches of n={n} took {m:.6} s, inconsistent with the {window_s} s window"));
            }
        }
    }

    /// Checks 5 to 7 of a Tile row: its sources (hashes, one per case and entry across
    /// rounds), the seed pairs' plans, and one compiler identity.
    fn check_tile_row(
        &mut self,
        r: &Value,
        what: &str,
        case: &str,
        entry: &str,
        hashes: &mut BTreeMap<(String, String), BTreeSet<String>>,
        artifacts: &mut Option<Value>,
    ) {
        // 5. Sources.
        let mut set = BTreeSet::new();
        for src in r["sources"].as_array().cloned().unwrap_or_default() {
            let h = src["hash"].as_str().unwrap_or("").to_string();
            let path = self.dir.join(src["path"].as_str().unwrap_or(""));
            match std::fs::read(&path) {
                Ok(bytes) => {
                    if sha256(&bytes) != h {
                        self.fail(format!(
                            "sources: {} does not match its hash {h}",
                            path.display()
                        ));
                    }
                }
                Err(_) => self.fail(format!("sources: {} is missing", path.display())),
            }
            set.insert(h);
        }
        if set.is_empty() {
            self.fail(format!("sources: {what} records no source"));
        }
        hashes
            .entry((case.to_string(), entry.to_string()))
            .or_default()
            .extend(set);
        // 6. Plans.
        if r["group"] == "seed" && (entry == "fused" || entry == "reference") {
            let maps = strs(&r["plan"]["mappings"]);
            if maps != ["element_grid"] || r["plan"]["kernels"].as_u64() != Some(1) {
                self.fail(format!(
                    "plans: {what} realised {maps:?}, not one element_grid kernel"
                ));
            }
        }
        // 7. Artifacts.
        match artifacts {
            None => *artifacts = Some(r["artifacts"].clone()),
            Some(a) if *a != r["artifacts"] => self.fail(format!(
                "artifacts: {what} records a different compiler/runtime identity"
            )),
            _ => {}
        }
    }

    /// Every figure in results.md, recomputed from the raw samples.
    fn check_report(&mut self, rows: &[Value], phases: &[String]) {
        let md = match std::fs::read_to_string(self.dir.join("results.md")) {
            Ok(t) => t,
            Err(_) => return self.fail("figures: results.md is missing".into()),
        };
        let data = samples_by_round(rows);
        let mut case = String::new();
        let mut shown: BTreeSet<Key> = BTreeSet::new();
        for line in md.lines() {
            if let Some(c) = line.strip_prefix("## ") {
                case = c.trim().to_string();
                continue;
            }
            let cells: Vec<&str> = line
                .trim()
                .trim_matches('|')
                .split('|')
                .map(str::trim)
                .collect();
            if (6..=8).contains(&cells.len()) && phases.iter().any(|p| p == cells[1]) {
                if let Some(key) = self.check_figure_row(&case, &cells, &data) {
                    shown.insert(key);
                }
            } else if cells.len() == 5
                && cells[0] == "fused"
                && phases.iter().any(|p| p == cells[2])
            {
                self.check_ratio_row(&case, &cells, &data);
            }
        }
        for key in data.keys() {
            if !shown.contains(key) {
                self.fail(format!("figures: results.md omits {key:?}"));
            }
        }
    }

    /// A figure row of `case` (entry, phase, median, min, max, rounds and
    /// perhaps GB/s) against the raw samples; the row's key when it has
    /// samples.
    fn check_figure_row(&mut self, case: &str, cells: &[&str], data: &Samples) -> Option<Key> {
        let key = (case.to_string(), cells[0].to_string(), cells[1].to_string());
        let Some(by_round) = data.get(&key) else {
            self.fail(format!(
                "figures: results.md shows {key:?}, which has no raw samples"
            ));
            return None;
        };
        let mut meds: Vec<f64> = by_round.values().map(|v| mid(&mut v.clone())).collect();
        let all: Vec<f64> = by_round.values().flatten().copied().collect();
        let lo = all.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = all.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let m = mid(&mut meds);
        if !close(cells[2], m)
            || !close(cells[3], lo)
            || !close(cells[4], hi)
            || cells[5] != by_round.len().to_string()
        {
            self.fail(format!("figures: {key:?} printed {:?}, raw data give {m:.6} {lo:.6} {hi:.6} over {} rounds", &cells[2..], by_round.len()));
        }
        // Bandwidth: the case's recorded bytes over the median. (Bytes per
        // microsecond / 1e3 is GB/s; computed here, not by the writer's
        // code.)
        let moved = self.doc["meta"]["moved_bytes"][case].as_f64();
        match (cells.get(6), moved) {
            (Some(printed), Some(b)) if b >= 0.0 => {
                let gbps = b / m / 1e3;
                if !close(printed, gbps) {
                    self.fail(format!(
                        "figures: {key:?} printed {printed} GB/s, {b} bytes over {m:.6} us give {gbps:.6}"
                    ));
                }
            }
            (Some(_), _) => self.fail(format!(
                "figures: {key:?} shows GB/s without the case's byte count"
            )),
            (None, Some(_)) => self.fail(format!(
                "figures: {key:?} omits GB/s although the case's byte count is recorded"
            )),
            (None, None) => {}
        }
        // The FLOP rate: the case's recorded operation count over the
        // median, after GB/s.
        let flops = self.doc["meta"]["flops"][case].as_f64();
        match (cells.get(7), flops) {
            (Some(printed), Some(f)) if f >= 0.0 => {
                let rate = f / m / 1e3;
                if !close(printed, rate) {
                    self.fail(format!(
                        "figures: {key:?} printed {printed} GFLOP/s, {f} operations over {m:.6} us give {rate:.6}"
                    ));
                }
            }
            (Some(_), _) => self.fail(format!(
                "figures: {key:?} shows GFLOP/s without the case's operation count"
            )),
            (None, Some(_)) => self.fail(format!(
                "figures: {key:?} omits GFLOP/s although the case's operation count is recorded"
            )),
            (None, None) => {}
        }
        Some(key)
    }

    /// A ratio row of `case` (fused over a peer in a phase: the median of
    /// the per-round ratios, then each round's) against the raw samples.
    fn check_ratio_row(&mut self, case: &str, cells: &[&str], data: &Samples) {
        let num = data.get(&(case.to_string(), "fused".into(), cells[2].to_string()));
        let den = data.get(&(case.to_string(), cells[1].to_string(), cells[2].to_string()));
        let (Some(num), Some(den)) = (num, den) else {
            return self.fail(format!(
                "figures: ratio row for {case} {} {} has no raw samples",
                cells[1], cells[2]
            ));
        };
        let mut ratios: Vec<f64> = num
            .iter()
            .filter_map(|(r, v)| {
                den.get(r)
                    .map(|d| mid(&mut v.clone()) / mid(&mut d.clone()))
            })
            .collect();
        let each: Vec<&str> = cells[4].split_whitespace().collect();
        let per_round_ok =
            each.len() == ratios.len() && each.iter().zip(&ratios).all(|(p, v)| close(p, *v));
        if !close(cells[3], mid(&mut ratios)) || !per_round_ok {
            self.fail(format!(
                "figures: ratio fused/{} {} in {case} does not follow from the raw data",
                cells[1], cells[2]
            ));
        }
    }
}

/// The tolerances (atol, rtol) the method fixes for a graph: 2e-6/2e-5
/// for element-wise graphs; 1e-5/1e-4 for the row reductions (softmax,
/// RMSNorm, LayerNorm, the per-row and per-column results); for a whole
/// array's sum 2e-3/1e-4, since it cancels (16M values in [-1, 1] sum to
/// about 2): its absolute tolerance follows the sum of magnitudes, not the
/// result (2e-3 is 2.4e-10 of it at 4096x4096; NumPy's f32 pairwise sum is
/// off by 3.5e-4). `None` for a suite of the user's own programs, which
/// sets its own.
fn method_tolerances(graph: &str) -> Option<(f64, f64)> {
    let rows = [
        "softmax",
        "rmsnorm",
        "layernorm",
        "row_lse",
        "row_norm",
        "col_sum",
    ];
    let pairs = ["sigmoid_pair", "gelu_pair", "add", "gelu_ab"];
    if graph == "full_sum" {
        Some((2e-3, 1e-4))
    } else if rows.contains(&graph) {
        Some((1e-5, 1e-4))
    } else if pairs.contains(&graph) {
        Some((2e-6, 2e-5))
    } else {
        None
    }
}

/// A measured series: (case, entry, phase).
type Key = (String, String, String);

/// Per series, per round, the per-invocation samples in microseconds.
type Samples = BTreeMap<Key, BTreeMap<u64, Vec<f64>>>;

/// The raw rows of `results.json` that ran, as [`Samples`].
fn samples_by_round(rows: &[Value]) -> Samples {
    let mut data = Samples::new();
    for r in rows.iter().filter(|r| r["status"] == "ok") {
        let key = (
            r["case"].as_str().unwrap_or("").to_string(),
            r["variant"].as_str().unwrap_or("").to_string(),
            r["phase"].as_str().unwrap_or("").to_string(),
        );
        let n = r["n"].as_f64().unwrap_or(f64::NAN);
        let per: Vec<f64> = r["samples_s"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|x| x.as_f64())
            .map(|x| x * 1e6 / n)
            .collect();
        data.entry(key)
            .or_default()
            .entry(r["round"].as_u64().unwrap_or(0))
            .or_default()
            .extend(per);
    }
    data
}

/// Whether a printed figure is `value` to the printed precision (a
/// relative 1e-3).
fn close(printed: &str, value: f64) -> bool {
    printed
        .parse::<f64>()
        .is_ok_and(|p| (p - value).abs() <= 1e-3 * value.abs().max(1e-12) + 1e-9)
}

fn sha256(bytes: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn copy_dir(from: &Path, to: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(to)?;
    for e in std::fs::read_dir(from)? {
        let e = e?;
        let t = to.join(e.file_name());
        if e.file_type()?.is_dir() {
            copy_dir(&e.path(), &t)?;
        } else {
            std::fs::copy(e.path(), t)?;
        }
    }
    Ok(())
}

/// The eight mutations of docs/benchmarking.md, each applied to a fresh copy.
/// Returns one line per mutation and whether every one was rejected.
pub fn self_test(results_json: &Path) -> Result<(Vec<String>, bool), String> {
    audit(results_json)
        .map_err(|p| format!("the unmodified results must pass first:\n{}", p.join("\n")))?;
    let dir = results_dir(results_json);
    let doc: Value =
        serde_json::from_str(&std::fs::read_to_string(results_json).map_err(|e| e.to_string())?)
            .map_err(|e| e.to_string())?;
    let rows = doc["rows"].as_array().cloned().unwrap_or_default();
    let k = rows
        .iter()
        .position(|r| {
            r["framework"] == "tile" && r["phase"].as_str().is_some_and(|p| p.ends_with("_batch"))
        })
        .ok_or("no batch row")?;
    let src = rows[k]["sources"][0]["path"]
        .as_str()
        .ok_or("no source")?
        .to_string();
    let mutations = mutations(k, &src);
    let mut lines = Vec::new();
    let mut all = true;
    for (i, (name, m)) in mutations.iter().enumerate() {
        let copy: PathBuf =
            std::env::temp_dir().join(format!("tile-audit-{}-{i}", std::process::id()));
        let verdict = audit_mutated(dir, &copy, &doc, m).map_err(|e| format!("{name}: {e}"));
        let _ = std::fs::remove_dir_all(&copy);
        match verdict? {
            Ok(_) => {
                all = false;
                lines.push(format!("ACCEPTED (bad): {name}"));
            }
            Err(p) => lines.push(format!("rejected: {name}: {}", p[0])),
        }
    }
    Ok((lines, all))
}

/// A change to a results document (and its directory) the audit must
/// reject.
type Mutation = Box<dyn Fn(&mut Value, &Path) -> std::io::Result<()>>;

/// The eight mutations, aimed at row `k` (a Tile batch row) and its
/// source file `src`.
fn mutations(k: usize, src: &str) -> Vec<(&'static str, Mutation)> {
    let src = src.to_string();
    vec![
        (
            "missing row",
            Box::new(move |d, _| {
                if let Some(r) = d["rows"].as_array_mut() {
                    r.remove(k);
                }
                Ok(())
            }),
        ),
        (
            "duplicated row",
            Box::new(move |d, _| {
                if let Some(r) = d["rows"].as_array_mut() {
                    let dup = r[k].clone();
                    r.insert(k + 1, dup);
                }
                Ok(())
            }),
        ),
        (
            "failed validation",
            Box::new(move |d, _| {
                d["rows"][k]["validation"]["pass"] = Value::Bool(false);
                Ok(())
            }),
        ),
        (
            "partial output",
            Box::new(move |d, _| {
                if let Some(o) = d["rows"][k]["validation"]["outputs"].as_array_mut() {
                    o.pop();
                }
                Ok(())
            }),
        ),
        (
            "changed source",
            Box::new({
                let src = src.clone();
                move |_, dir| {
                    let p = dir.join(&src);
                    let mut b = std::fs::read(&p)?;
                    b.extend_from_slice(b"\n/* edited */\n");
                    std::fs::write(p, b)
                }
            }),
        ),
        (
            "wrong denominator",
            Box::new(move |d, _| {
                let n = d["rows"][k]["n"].as_u64().unwrap_or(1);
                d["rows"][k]["n"] = Value::from(n * 2 + 1);
                Ok(())
            }),
        ),
        (
            "missing source file",
            Box::new({
                let src = src.clone();
                move |_, dir| std::fs::remove_file(dir.join(&src))
            }),
        ),
        (
            "unbalanced framework order",
            Box::new(|d, _| {
                if let Some(p) = d["planned_order"].as_array_mut() {
                    if let Some(f) = p[0]["frameworks"].as_array_mut() {
                        if f.len() > 1 {
                            f.swap(0, 1);
                        } else {
                            f.push(Value::from("tile"));
                        }
                    }
                }
                Ok(())
            }),
        ),
    ]
}

/// Copies the run in `dir` to `copy`, applies `m` to the copy and audits
/// it: the audit's verdict, or why the copy could not be made.
fn audit_mutated(
    dir: &Path,
    copy: &Path,
    doc: &Value,
    m: &Mutation,
) -> Result<Result<String, Vec<String>>, String> {
    let _ = std::fs::remove_dir_all(copy);
    copy_dir(dir, copy).map_err(|e| e.to_string())?;
    let mut d = doc.clone();
    m(&mut d, copy).map_err(|e| e.to_string())?;
    std::fs::write(
        copy.join("results.json"),
        serde_json::to_string_pretty(&d).map_err(|e| e.to_string())?,
    )
    .map_err(|e| e.to_string())?;
    Ok(audit(&copy.join("results.json")))
}

/// The directory holding `results_json` (`.` for a bare file name, whose
/// parent is the empty path that directory listings refuse).
fn results_dir(results_json: &Path) -> &Path {
    results_json
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
}

/// A peer's row saying it does not implement the case's graph
/// (`status` `not_available` with a reason, the validation phase): it
/// stands for that peer's rows of the case and round. Tile's own entries
/// never qualify.
fn is_unavailable_peer(r: &Value) -> bool {
    r["status"] == "not_available"
        && r["phase"] == "validation"
        && r["framework"].as_str().is_some_and(|f| f != "tile")
        && r["reason"].as_str().is_some_and(|s| !s.is_empty())
}

#[cfg(test)]
mod tests {
    use super::is_unavailable_peer;
    use serde_json::json;

    #[test]
    fn only_a_peers_reasoned_validation_row_stands_for_its_phases() {
        let row = |framework: &str, phase: &str, reason: Option<&str>| json!({"status": "not_available", "framework": framework, "phase": phase, "reason": reason});
        assert!(is_unavailable_peer(&row(
            "torch_compile",
            "validation",
            Some("graph 'attention' is not implemented by torch_compile")
        )));
        // Tile's own entries never, a timing phase never, no reason never.
        assert!(!is_unavailable_peer(&row("tile", "validation", Some("x"))));
        assert!(!is_unavailable_peer(&row(
            "torch_compile",
            "gpu_batch",
            Some("x")
        )));
        assert!(!is_unavailable_peer(&row(
            "torch_compile",
            "validation",
            None
        )));
        assert!(!is_unavailable_peer(&row(
            "torch_compile",
            "validation",
            Some("")
        )));
        let mut ok = row("torch_compile", "validation", Some("x"));
        ok["status"] = json!("ok");
        assert!(!is_unavailable_peer(&ok));
    }
}
