//! What the wgpu tests share: a module, or a visible skip where no
//! adapter exists (unless `TILE_WGPU_REQUIRE=1`, which CI sets after
//! installing lavapipe).
#![allow(dead_code)]

use tile_wgpu::{WgpuError, WgpuModule};

/// `plan` compiled for the adapter, or `None` (with the reason printed)
/// where there is none.
pub fn module(plan: &tile_plan::Plan) -> Option<WgpuModule> {
    match WgpuModule::compile(plan) {
        Ok(m) => Some(m),
        Err(WgpuError::NoAdapter(e))
            if std::env::var("TILE_WGPU_REQUIRE").as_deref() != Ok("1") =>
        {
            eprintln!("SKIPPED: no wgpu adapter ({e})");
            None
        }
        Err(e) => panic!("{}: {e}", plan.program.name),
    }
}
