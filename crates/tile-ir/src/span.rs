//! Source locations carried by parsed statements and parameters.

use std::fmt;

/// A 1-based line and column in a `.tile` file.
///
/// Spans never take part in equality: two programs that differ only in where
/// their text came from compare equal, which is what `parse(print(p)) == p`
/// needs.
#[derive(Clone, Copy, Debug, Default, serde::Serialize)]
pub struct Span {
    /// 1-based line; 0 means "no location" (built with the Rust API).
    pub line: u32,
    /// 1-based column.
    pub col: u32,
}

impl Span {
    /// A span at `line`, `col`.
    pub fn new(line: u32, col: u32) -> Self {
        Span { line, col }
    }

    /// True when this span points at real text.
    pub fn is_known(&self) -> bool {
        self.line > 0
    }
}

impl PartialEq for Span {
    fn eq(&self, _: &Span) -> bool {
        true
    }
}

impl fmt::Display for Span {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.line, self.col)
    }
}
