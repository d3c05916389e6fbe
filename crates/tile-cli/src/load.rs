//! Reading `.tile` files and formatting located errors.

use std::path::Path;
use tile_ir::{Diagnostic, Program};

/// `FILE:LINE:COL: error: MESSAGE` lines for diagnostics in `file`.
pub fn located(file: &str, diags: &[Diagnostic]) -> String {
    diags
        .iter()
        .map(|d| {
            if d.span.is_known() {
                format!(
                    "{file}:{}:{}: error: {}",
                    d.span.line, d.span.col, d.message
                )
            } else {
                format!("{file}: error: {}", d.message)
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Reads and parses `path`, selecting the program called `name` (required
/// when the file holds several). Returns the file's display name too.
pub fn program(path: &Path, name: Option<&str>) -> Result<(String, Program), String> {
    let file = path.display().to_string();
    let text =
        std::fs::read_to_string(path).map_err(|e| format!("{file}: error: cannot read: {e}"))?;
    let programs = tile_ir::parse_file(&text).map_err(|d| located(&file, &[d]))?;
    let names: Vec<&str> = programs.iter().map(|p| p.name.as_str()).collect();
    match name {
        Some(n) => programs
            .iter()
            .find(|p| p.name == n)
            .cloned()
            .map(|p| (file.clone(), p))
            .ok_or_else(|| {
                format!(
                    "{file}: error: no program `{n}` (the file has {})",
                    names.join(", ")
                )
            }),
        None if programs.len() == 1 => {
            Ok((file, programs.into_iter().next().expect("one program")))
        }
        None => Err(format!(
            "{file}: error: the file holds {} programs ({}); choose one with --program NAME",
            programs.len(),
            names.join(", ")
        )),
    }
}
