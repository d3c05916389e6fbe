//! Diagnostics: a message at a source location.

use crate::Span;
use std::fmt;

/// A problem found in user input, with where it is.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub struct Diagnostic {
    /// Where the problem is (line 0 when unknown).
    pub span: Span,
    /// What is wrong, naming the culprit.
    pub message: String,
}

impl Diagnostic {
    /// A diagnostic at `span`.
    pub fn new(span: Span, message: impl Into<String>) -> Self {
        Diagnostic {
            span,
            message: message.into(),
        }
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.span.is_known() {
            write!(
                f,
                "{}:{}: error: {}",
                self.span.line, self.span.col, self.message
            )
        } else {
            write!(f, "error: {}", self.message)
        }
    }
}
