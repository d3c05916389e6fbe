//! Reading `.tile` files (size and UTF-8 checked) into verified programs.

use std::path::Path;
use tile_ir::Program;

pub use tile_ir::load::located;

/// The largest `.tile` file read (programs are small; this keeps a
/// mistaken or hostile file from exhausting memory).
pub const MAX_FILE_BYTES: u64 = tile_ir::load::MAX_TEXT_BYTES;

/// The text of a `.tile` file: a regular file of at most
/// [`MAX_FILE_BYTES`], UTF-8 (an invalid byte is reported at its line and
/// column).
fn read_text(path: &Path, file: &str) -> Result<String, String> {
    let bytes = tile_ir::load::read_regular_file(path, MAX_FILE_BYTES)
        .map_err(|e| format!("{file}: error: {e}"))?;
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

/// Reads and parses `path`, selecting the program called `name` (required
/// when the file holds several), and verifies it. Returns the file's
/// display name too.
pub fn program(path: &Path, name: Option<&str>) -> Result<(String, Program), String> {
    let file = path.display().to_string();
    let text = read_text(path, &file)?;
    tile_ir::load::load_program(&text, &file, name).map(|p| (file, p))
}
