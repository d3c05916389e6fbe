//! Names Tile generates: one reserved prefix and one way to spell them.
//!
//! User programs may not use names that start with [`RESERVED_PREFIX`]
//! (the parser and the verifier refuse them), so a name made by
//! [`generated`] can never capture or shadow a user's name. Each pass that
//! invents names uses its own `kind`, so two passes never collide either.

/// The prefix of every name Tile generates.
pub const RESERVED_PREFIX: &str = "__";

/// The `n`-th generated name of `kind` (`generated("scr", 0)` is `__scr0`).
pub fn generated(kind: &str, n: usize) -> String {
    format!("{RESERVED_PREFIX}{kind}{n}")
}
