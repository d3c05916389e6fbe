//! The wgpu target of `tile bench`: generated WGSL through wgpu, compiled
//! per round, arguments uploaded once, calls submitted back to back;
//! `gpu_*` phases time them with the adapter's timestamp queries (where it
//! has none, only the host-timed phases are measured).

use crate::protocol::Invoker;
use crate::suite::Case;
use crate::target::{
    arguments, f32_arrays, f32_values, plan_record, plan_variant, Prepared, PreparedRun, Variant,
};
use serde_json::json;
use std::collections::BTreeMap;
use tile_ir::Array;
use tile_wgpu::{WgpuBound, WgpuError, WgpuModule};

struct WgpuRun {
    module: WgpuModule,
    bound: WgpuBound,
    arrays: BTreeMap<String, Array>,
    inputs: Vec<String>,
    outputs: Vec<String>,
}

fn e(x: WgpuError) -> String {
    x.to_string()
}

impl Invoker for WgpuRun {
    fn invoke(&mut self) -> Result<(), String> {
        self.module.launch(&self.bound);
        Ok(())
    }
    fn sync(&mut self) -> Result<(), String> {
        self.module.sync().map_err(e)
    }
    fn device_time(&mut self, n: usize) -> Option<Result<f64, String>> {
        self.module
            .device_time(&self.bound, n)
            .map(|r| r.map_err(e))
    }
}

impl PreparedRun for WgpuRun {
    fn outputs(&mut self) -> Result<Vec<(String, Vec<f32>)>, String> {
        self.module.finish(&self.bound).map_err(e)?;
        self.module
            .download(&self.bound, &mut self.arrays)
            .map_err(e)?;
        f32_arrays(&self.arrays, &self.outputs)
    }
    fn inputs(&self) -> Vec<Vec<f32>> {
        f32_values(&self.arrays, &self.inputs)
    }
}

/// Compiles `case` for `variant` and uploads its arguments.
pub fn prepare(case: &Case, variant: Variant) -> Result<Prepared, String> {
    let plan = plan_variant(case, variant)?;
    let module = WgpuModule::compile(&plan).map_err(e)?;
    let (arrays, sizes) = arguments(&plan, case)?;
    let bound = module.bind(&arrays, &sizes).map_err(e)?;
    let program = &plan.program;
    let names = |written: bool| {
        program
            .params
            .iter()
            .filter(|p| p.role.is_written() == written)
            .map(|p| p.name.clone())
            .collect()
    };
    let (inputs, outputs) = (names(false), names(true));
    let source = module.source().to_string();
    let hash = crate::target::sha256_hex(&source);
    // The entry points each call dispatches (`tile_k0_v4` where a
    // kernel's 16-byte entry point runs at the case's sizes).
    let record = plan_record(
        &plan,
        json!({"workgroup": 256, "launched": module.launched(&bound)}),
    );
    let artifacts = json!({
        "tile": env!("CARGO_PKG_VERSION"),
        "compiler": "naga (wgpu 30), by the driver",
        "adapter": module.adapter(),
        "device_clock": module.has_timestamps(),
    });
    Ok(Prepared {
        invoker: Box::new(WgpuRun {
            module,
            bound,
            arrays,
            inputs,
            outputs,
        }),
        plan: record,
        sources: vec![(hash, "wgsl".into(), source)],
        artifacts,
    })
}

/// The adapter's name, or why there is none.
pub fn device_name() -> String {
    match tile_wgpu::adapter() {
        Ok((name, _)) => name,
        Err(e) => format!("no wgpu adapter: {e}"),
    }
}

/// Whether the adapter has timestamp queries.
pub fn timestamps() -> bool {
    tile_wgpu::adapter().is_ok_and(|(_, t)| t)
}
