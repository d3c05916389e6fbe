//! Every fixture's WGSL, where the target prints it, parsed and validated
//! by naga (the WGSL compiler wgpu uses) and translated to the Metal
//! Shading Language (what wgpu hands Metal on a Mac); every other fixture
//! refused with a message that names the reason.

use std::path::{Path, PathBuf};
use tile_plan::{compile, Options};

fn programs() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    tile_ir::fixture::tile_files(&[root.join("tests/programs"), root.join("examples")])
}

/// Validates `source` with naga and translates it to MSL; the error names
/// the line naga stopped at.
fn check_wgsl(source: &str) -> Result<String, String> {
    let module = naga::front::wgsl::parse_str(source).map_err(|e| e.emit_to_string(source))?;
    let info = naga::valid::Validator::new(
        naga::valid::ValidationFlags::all(),
        naga::valid::Capabilities::empty(),
    )
    .validate(&module)
    .map_err(|e| e.emit_to_string(source))?;
    let (msl, _) = naga::back::msl::write_string(
        &module,
        &info,
        &naga::back::msl::Options::default(),
        &naga::back::msl::PipelineOptions::default(),
    )
    .map_err(|e| format!("MSL: {e}"))?;
    Ok(msl)
}

#[test]
fn every_printed_fixture_validates_and_translates_to_msl() {
    let (mut printed, mut refused) = (Vec::new(), Vec::new());
    for f in programs() {
        let program = tile_ir::parse_program(&std::fs::read_to_string(&f).unwrap()).unwrap();
        for fusion in [true, false] {
            let plan = compile(&program, &Options { fusion }).unwrap();
            match tile_wgpu::emit_wgsl(&plan) {
                Ok(source) => {
                    assert_eq!(
                        source,
                        tile_wgpu::emit_wgsl(&plan).unwrap(),
                        "{}: emission differs between runs",
                        f.display()
                    );
                    let msl = check_wgsl(&source).unwrap_or_else(|e| {
                        panic!("{} (fusion {fusion}):\n{e}\n{source}", f.display())
                    });
                    assert!(msl.contains("kernel void tile_k0"), "{msl}");
                    printed.push(f.clone());
                }
                Err(e) => {
                    let message = e.to_string();
                    assert!(
                        ["f64", "kernel k", "no WGSL definition", "32-bit integers"]
                            .iter()
                            .any(|w| message.contains(w)),
                        "{}: {message}",
                        f.display()
                    );
                    refused.push(f.clone());
                }
            }
        }
    }
    eprintln!(
        "WGSL: {} fixture plans printed and validated, {} refused",
        printed.len(),
        refused.len()
    );
    for name in ["sigmoid_pair.tile", "gelu_pair.tile"] {
        assert!(
            printed.iter().any(|f| f.ends_with(name)),
            "{name} is not printed"
        );
    }
    assert!(printed.len() >= 20, "only {} printed", printed.len());
}

#[test]
fn sixty_four_bit_floats_are_refused_naming_the_parameter() {
    let program = tile_ir::parse_program(
        "program d(x: in f32[N], y: in f64[N], z: out f32[N]) {\n  for i in 0..N {\n    z[i] = x[i] + f32(y[i])\n  }\n}",
    )
    .unwrap();
    let plan = compile(&program, &Options::default()).unwrap();
    let e = tile_wgpu::emit_wgsl(&plan).unwrap_err().to_string();
    assert!(e.contains("parameter `y` (line 1) is f64"), "{e}");
    let program = tile_ir::parse_program(
        "program d(x: in f32[N], z: out f32[N]) {\n  for i in 0..N {\n    z[i] = f32(f64(x[i]) * 2.0)\n  }\n}",
    )
    .unwrap();
    let plan = compile(&program, &Options::default()).unwrap();
    let e = tile_wgpu::emit_wgsl(&plan).unwrap_err().to_string();
    assert!(e.contains("line 3 converts to f64"), "{e}");
}

#[test]
fn integers_beyond_32_bits_are_refused_naming_the_line() {
    let program = tile_ir::parse_program(
        "program w(x: in f32[N], y: out f32[N]) {\n  for i in 0..N {\n    y[i] = x[i] + f32(i * 4294967296)\n  }\n}",
    )
    .unwrap();
    let plan = compile(&program, &Options::default()).unwrap();
    let e = tile_wgpu::emit_wgsl(&plan).unwrap_err().to_string();
    assert!(
        e.contains("line 3: the integer 4294967296 does not fit WGSL's 32-bit integers"),
        "{e}"
    );
}
