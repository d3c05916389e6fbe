//! Loading a program from `.tile` text: parsing, choosing the program by
//! name, verifying, and `FILE:LINE:COL: error:` messages. Shared by the
//! command line and the Python package.

use crate::{Diagnostic, Program};

/// The longest program text accepted (programs are small; this keeps a
/// mistaken or hostile text from exhausting memory).
pub const MAX_TEXT_BYTES: u64 = 16 << 20;

/// The bytes of the regular file at `path`, at most `max` of them: a FIFO,
/// a device (`/dev/zero`) or a directory is refused without blocking (the
/// file is opened non-blocking and checked after opening, so a path
/// swapped meanwhile cannot slip through), and the read stops after `max`
/// bytes, so a file that grows while it is read cannot exhaust memory.
/// Errors are plain messages naming the path's problem (the caller adds
/// the path).
pub fn read_regular_file(path: &std::path::Path, max: u64) -> Result<Vec<u8>, String> {
    use std::io::Read;
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(target_os = "linux")]
    {
        use std::os::unix::fs::OpenOptionsExt;
        // O_NONBLOCK: opening a FIFO with no writer returns at once.
        options.custom_flags(0o4000);
    }
    let file = options
        .open(path)
        .map_err(|e| format!("cannot read: {e}"))?;
    let meta = file.metadata().map_err(|e| format!("cannot read: {e}"))?;
    if !meta.is_file() {
        return Err("not a regular file (a FIFO, a device or a directory is not read)".into());
    }
    if meta.len() > max {
        return Err(format!(
            "the file has {} bytes; at most {max} are read",
            meta.len()
        ));
    }
    let mut bytes = Vec::new();
    bytes
        .try_reserve_exact(meta.len() as usize)
        .map_err(|_| format!("cannot allocate {} bytes to read it", meta.len()))?;
    file.take(max.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot read: {e}"))?;
    if bytes.len() as u64 > max {
        return Err(format!("the file grew past {max} bytes while it was read"));
    }
    Ok(bytes)
}

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
                    d.span = crate::Span::new(n as u32 + 1, k as u32 + 1);
                    return d;
                }
            }
        }
    }
    d
}

/// Parses `text` (shown as `file` in messages), selects the program called
/// `name` (required when the text holds several), and verifies it.
pub fn load_program(text: &str, file: &str, name: Option<&str>) -> Result<Program, String> {
    let verified = |p: Program| -> Result<Program, String> {
        match crate::verify(&p) {
            Ok(()) => Ok(p),
            Err(e) => {
                let diags: Vec<Diagnostic> = e
                    .diagnostics
                    .into_iter()
                    .map(|d| point_at_name(text, d))
                    .collect();
                Err(located(file, &diags))
            }
        }
    };
    let programs = crate::parse_file(text).map_err(|d| located(file, &[d]))?;
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
