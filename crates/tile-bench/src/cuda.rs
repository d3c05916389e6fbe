//! The CUDA target of `tile bench`: generated CUDA C through NVRTC,
//! compiled fresh per round (module cache off), arguments uploaded once,
//! launches on one stream; `gpu_*` phases time device events.

use crate::protocol::Invoker;
use crate::suite::Case;
use crate::target::{
    arguments, f32_arrays, f32_values, plan_record, plan_variant, Prepared, PreparedRun, Variant,
};
use serde_json::json;
use std::collections::BTreeMap;
use tile_ir::Array;

struct CudaRun {
    module: tile_cuda::CudaModule,
    bound: tile_cuda::Bound,
    arrays: BTreeMap<String, Array>,
    inputs: Vec<String>,
    outputs: Vec<String>,
}

fn e(x: tile_cuda::CudaError) -> String {
    x.to_string()
}

impl Invoker for CudaRun {
    fn invoke(&mut self) -> Result<(), String> {
        self.module.launch(&self.bound).map_err(e)
    }
    fn sync(&mut self) -> Result<(), String> {
        self.module.gpu().sync().map_err(e)
    }
    fn device_time(&mut self, n: usize) -> Option<Result<f64, String>> {
        let (m, b) = (&self.module, &self.bound);
        Some(
            m.gpu()
                .time(|| {
                    for _ in 0..n {
                        m.launch(b)?;
                    }
                    Ok(())
                })
                .map_err(e),
        )
    }
}

impl PreparedRun for CudaRun {
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
    let opts = tile_cuda::CudaOptions {
        cache: false,
        allow_tf32: case.allow_tf32,
        ..Default::default()
    };
    let module = tile_cuda::compile(&plan, &opts).map_err(e)?;
    let (arrays, sizes) = arguments(&plan, case)?;
    let bound = module.bind(&arrays, &sizes).map_err(e)?;
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
    let hash = module.source_hash().to_string();
    let gpu = module.gpu().clone();
    let record = plan_record(
        &plan,
        json!({"block": opts.block, "vec4_entry_points": source.matches("_v4(const TileArgs").count(), "sm_count": gpu.sm_count, "allow_tf32": opts.allow_tf32, "tf32_mma": source.contains("mma.sync")}),
    );
    let artifacts = json!({
        "tile": env!("CARGO_PKG_VERSION"),
        "compiler": format!("NVRTC {}", module.nvrtc_version()),
        "driver": gpu.driver_version,
        "arch": format!("sm_{}{}", gpu.cc.0, gpu.cc.1),
    });
    Ok(Prepared {
        invoker: Box::new(CudaRun {
            module,
            bound,
            arrays,
            inputs,
            outputs,
        }),
        plan: record,
        sources: vec![(hash, "cu".into(), source)],
        artifacts,
    })
}

/// The GPU's name, or why there is none.
pub fn device_name() -> String {
    match tile_cuda::gpu() {
        Ok(g) => format!("{} ({} SMs, sm_{}{})", g.name, g.sm_count, g.cc.0, g.cc.1),
        Err(e) => format!("no GPU: {e}"),
    }
}
