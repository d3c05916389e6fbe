//! Process-wide limits: the memory ceiling for arrays Tile allocates
//! (outputs made from a box, interpreter state, scratch copies).
//!
//! The ceiling is, in order: the value set with [`set_memory_ceiling`]
//! (the CLI's `--max-memory`), `$TILE_MAX_MEMORY` (bytes, or with a `K`,
//! `M`, `G` or `T` suffix, powers of 1024), else the machine's physical
//! memory (`MemTotal` in `/proc/meminfo`), else no ceiling. Above it an
//! allocation is refused with a plain error before any memory is taken;
//! below it, a failed allocation is an error too, never an abort. A
//! `TILE_MAX_MEMORY` that does not parse (`abc`, `1Gx`, `-1`, `0`) is an
//! error on every use, never silently ignored.

use std::sync::atomic::{AtomicU64, Ordering};

/// 0: not set by the caller.
static CEILING: AtomicU64 = AtomicU64::new(0);

/// A `TILE_MAX_MEMORY` that is not a byte count.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("TILE_MAX_MEMORY={0:?} is not a byte count (a positive integer, optionally with K, M, G or T: 4G, 512M)")]
pub struct LimitError(pub String);

/// Sets the ceiling for this process (in bytes; 0 restores the default).
pub fn set_memory_ceiling(bytes: u64) {
    CEILING.store(bytes, Ordering::Relaxed);
}

/// The ceiling in bytes (`u64::MAX` when none applies), or the error of a
/// malformed `TILE_MAX_MEMORY` (unless a ceiling was set explicitly). The
/// environment and `/proc/meminfo` are read once per process.
pub fn memory_ceiling() -> Result<u64, LimitError> {
    let set = CEILING.load(Ordering::Relaxed);
    if set != 0 {
        return Ok(set);
    }
    static DEFAULT: std::sync::OnceLock<Result<u64, LimitError>> = std::sync::OnceLock::new();
    DEFAULT
        .get_or_init(|| match std::env::var_os("TILE_MAX_MEMORY") {
            Some(v) => {
                let text = v.to_string_lossy();
                parse_bytes(&text).ok_or_else(|| LimitError(text.into_owned()))
            }
            None => Ok(physical_memory().unwrap_or(u64::MAX)),
        })
        .clone()
}

/// Parses `123`, `64K`, `512M`, `16G`, `1T` (powers of 1024; a trailing
/// `B` or `iB` is allowed).
pub fn parse_bytes(text: &str) -> Option<u64> {
    let t = text.trim();
    let t = t
        .strip_suffix("iB")
        .or_else(|| t.strip_suffix('B'))
        .unwrap_or(t);
    let (digits, shift) = match t.chars().last()? {
        'K' | 'k' => (&t[..t.len() - 1], 10),
        'M' | 'm' => (&t[..t.len() - 1], 20),
        'G' | 'g' => (&t[..t.len() - 1], 30),
        'T' | 't' => (&t[..t.len() - 1], 40),
        _ => (t, 0),
    };
    let digits = digits.trim();
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let n: u64 = digits.parse().ok()?;
    n.checked_mul(1u64 << shift).filter(|&v| v > 0)
}

fn physical_memory() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    kib.checked_mul(1024)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse() {
        assert_eq!(parse_bytes("4096"), Some(4096));
        assert_eq!(parse_bytes("2K"), Some(2048));
        assert_eq!(parse_bytes("3GiB"), Some(3 << 30));
        assert_eq!(parse_bytes("1T"), Some(1 << 40));
        assert_eq!(parse_bytes("0"), None);
        assert_eq!(parse_bytes("99999999999T"), None);
        assert_eq!(parse_bytes("lots"), None);
        assert_eq!(parse_bytes("1Gx"), None);
        assert_eq!(parse_bytes("-1"), None);
        assert_eq!(parse_bytes("+1"), None);
        assert_eq!(parse_bytes(""), None);
        assert_eq!(parse_bytes("G"), None);
    }
}
