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

/// The largest `.tile` file read (programs are small; this keeps a
/// mistaken or hostile file from exhausting memory).
pub const MAX_FILE_BYTES: u64 = 16 << 20;

/// The text of a `.tile` file: at most [`MAX_FILE_BYTES`], UTF-8 (an
/// invalid byte is reported at its line and column).
fn read_text(path: &Path, file: &str) -> Result<String, String> {
    let len = std::fs::metadata(path)
        .map_err(|e| format!("{file}: error: cannot read: {e}"))?
        .len();
    if len > MAX_FILE_BYTES {
        return Err(format!(
            "{file}: error: the file has {len} bytes; .tile files may have at most {MAX_FILE_BYTES}"
        ));
    }
    let bytes = std::fs::read(path).map_err(|e| format!("{file}: error: cannot read: {e}"))?;
    String::from_utf8(bytes).map_err(|e| {
        let bytes = e.as_bytes();
        let at = e.utf8_error().valid_up_to();
        let good = std::str::from_utf8(&bytes[..at]).unwrap_or("");
        let line = good.matches('\n').count() + 1;
        let col = good.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
        format!(
            "{file}:{line}:{col}: error: invalid UTF-8 (byte 0x{:02x}); .tile files are UTF-8 text",
            bytes[at]
        )
    })
}

/// Moves a diagnostic about a name from its statement's start to the name
/// itself: the first whole-word occurrence at or after the statement.
fn point_at_name(text: &str, mut d: Diagnostic) -> Diagnostic {
    let name = ["unknown name `", "parameter `"]
        .iter()
        .find_map(|p| d.message.strip_prefix(p))
        .and_then(|rest| rest.split('`').next());
    let (Some(name), true) = (name, d.span.is_known()) else {
        return d;
    };
    let ident = |c: char| c.is_alphanumeric() || c == '_';
    for (n, line) in text.lines().enumerate().skip(d.span.line as usize - 1) {
        let chars: Vec<(usize, char)> = line.char_indices().collect();
        let from = if n + 1 == d.span.line as usize {
            d.span.col as usize - 1
        } else {
            0
        };
        for (k, &(at, _)) in chars.iter().enumerate().skip(from) {
            let before = k.checked_sub(1).map(|b| chars[b].1);
            let after = line[at..].strip_prefix(name).map(|r| r.chars().next());
            if let Some(after) = after {
                if !before.is_some_and(ident) && !after.is_some_and(ident) {
                    d.span = tile_ir::Span::new(n as u32 + 1, k as u32 + 1);
                    return d;
                }
            }
        }
    }
    d
}

/// Reads and parses `path`, selecting the program called `name` (required
/// when the file holds several), and verifies it. Returns the file's
/// display name too.
pub fn program(path: &Path, name: Option<&str>) -> Result<(String, Program), String> {
    let file = path.display().to_string();
    let text = read_text(path, &file)?;
    let verified = |p: Program| -> Result<(String, Program), String> {
        match tile_ir::verify(&p) {
            Ok(()) => Ok((file.clone(), p)),
            Err(e) => {
                let diags: Vec<Diagnostic> = e
                    .diagnostics
                    .into_iter()
                    .map(|d| point_at_name(&text, d))
                    .collect();
                Err(located(&file, &diags))
            }
        }
    };
    let programs = tile_ir::parse_file(&text).map_err(|d| located(&file, &[d]))?;
    let names: Vec<&str> = programs.iter().map(|p| p.name.as_str()).collect();
    match name {
        Some(n) => programs
            .iter()
            .find(|p| p.name == n)
            .cloned()
            .ok_or_else(|| {
                format!(
                    "{file}: error: no program `{n}` (the file has {})",
                    names.join(", ")
                )
            })
            .and_then(verified),
        None if programs.len() == 1 => verified(programs.into_iter().next().expect("one program")),
        None => Err(format!(
            "{file}: error: the file holds {} programs ({}); choose one with --program NAME",
            programs.len(),
            names.join(", ")
        )),
    }
}
