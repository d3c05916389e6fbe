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

/// The `n`-th generated name of `kind` for `of` (`generated_for("row", 0,
/// "j")` is `__row0_j`: a staged row's element at variable `j`).
pub fn generated_for(kind: &str, n: usize, of: &str) -> String {
    format!("{RESERVED_PREFIX}{kind}{n}_{of}")
}

/// A reserved name for a target's own temporary `name` (`reserved("red0")`
/// is `__red0`), so an IR name bound to it cannot capture a user's.
pub fn reserved(name: &str) -> String {
    format!("{RESERVED_PREFIX}{name}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_spelling_starts_with_the_reserved_prefix() {
        assert_eq!(generated("scr", 0), "__scr0");
        assert_eq!(generated_for("row", 1, "j"), "__row1_j");
        assert_eq!(reserved("red0"), "__red0");
    }
}
