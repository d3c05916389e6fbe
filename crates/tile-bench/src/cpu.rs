//! The CPU target of `tile bench`: generated C through the system C
//! compiler, compiled fresh per round (cache off), run on the thread pool.

use crate::protocol::Invoker;
use crate::suite::Case;
use crate::target::{
    arguments, f32_arrays, f32_values, plan_record, plan_variant, Prepared, PreparedRun, Variant,
};
use serde_json::json;
use std::collections::BTreeMap;
use tile_ir::{Array, Sizes};

struct CpuRun {
    module: tile_cpu::CpuModule,
    arrays: BTreeMap<String, Array>,
    sizes: Sizes,
    inputs: Vec<String>,
    outputs: Vec<String>,
}

impl Invoker for CpuRun {
    fn invoke(&mut self) -> Result<(), String> {
        self.module
            .run(&mut self.arrays, &self.sizes)
            .map_err(|e| e.to_string())
    }
    fn sync(&mut self) -> Result<(), String> {
        Ok(())
    }
}

impl PreparedRun for CpuRun {
    fn outputs(&mut self) -> Result<Vec<(String, Vec<f32>)>, String> {
        f32_arrays(&self.arrays, &self.outputs)
    }
    fn inputs(&self) -> Vec<Vec<f32>> {
        f32_values(&self.arrays, &self.inputs)
    }
}

/// Compiles `case` for `variant` and prepares its arguments.
pub fn prepare(case: &Case, variant: Variant) -> Result<Prepared, String> {
    let plan = plan_variant(case, variant)?;
    let opts = tile_cpu::CpuOptions {
        cache: false,
        ..tile_cpu::CpuOptions::default()
    };
    let module = tile_cpu::compile(&plan, &opts).map_err(|e| e.to_string())?;
    let (arrays, sizes) = arguments(&plan, case)?;
    let program = &plan.program;
    let inputs = program
        .params
        .iter()
        .filter(|p| !p.role.is_written())
        .map(|p| p.name.clone())
        .collect();
    let outputs = program
        .params
        .iter()
        .filter(|p| p.role.is_written())
        .map(|p| p.name.clone())
        .collect();
    let source = module.source().to_string();
    let hash = module.source_hash();
    let record = plan_record(
        &plan,
        json!({"threads": opts.thread_count(), "lanes": module.lanes()}),
    );
    Ok(Prepared {
        invoker: Box::new(CpuRun {
            module,
            arrays,
            sizes,
            inputs,
            outputs,
        }),
        plan: record,
        sources: vec![(hash, "c".into(), source)],
        artifacts: json!({"tile": env!("CARGO_PKG_VERSION"), "compiler": tile_cpu::compiler_identity(&opts).map_err(|e| e.to_string())?, "flags": tile_cpu::compiler_flags(&opts).map_err(|e| e.to_string())?.join(" ")}),
    })
}

/// The CPU model and core count.
pub fn device_name() -> String {
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|t| {
            t.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split(':').nth(1))
                .map(|s| s.trim().to_string())
        })
        .unwrap_or_else(|| std::env::consts::ARCH.to_string());
    format!(
        "{cpu} ({} threads)",
        tile_cpu::CpuOptions::default().thread_count()
    )
}
