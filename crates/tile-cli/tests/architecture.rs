//! ARCHITECTURE.md is the map of the code and docs/internals.md its
//! detail: every path either names (a backticked token with a `/` or a
//! file extension) must exist, and every Rust item either names (each
//! segment of `Kernel::sharing`, `lower_kernels`, `RowStep`) must still be
//! spelled as a word somewhere in the sources, so a rename or a removal
//! that leaves the map behind fails here. A bare file name (`emit.rs` under a crate's heading) must exist
//! somewhere in the repository.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Backticked tokens of `text`, each within one line, outside fenced
/// blocks.
fn tokens(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut fenced = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            continue;
        }
        let parts: Vec<&str> = line.split('`').collect();
        // Odd parts lie between backticks (a line's unmatched last one
        // opens a span the next line closes: not a token).
        for (i, p) in parts.iter().enumerate() {
            if i % 2 == 1 && i + 1 < parts.len() {
                out.push(p.to_string());
            }
        }
    }
    out
}

const EXTENSIONS: [&str; 7] = [".rs", ".sh", ".py", ".md", ".json", ".toml", ".tile"];

/// A token that names a file or directory: segments of letters, digits,
/// `_`, `-` and `.`, the first a name (not `x` of `x/1`, not `.tile`);
/// and a `/` or a known extension.
fn is_path(t: &str) -> bool {
    let segments: Vec<&str> = t.trim_end_matches('/').split('/').collect();
    let plain = segments.iter().all(|s| {
        !s.is_empty()
            && s.chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
    });
    let first = segments[0];
    plain
        && first.len() > 1
        && first.starts_with(|c: char| c.is_ascii_alphanumeric())
        && (t.contains('/') || EXTENSIONS.iter().any(|e| t.ends_with(e)))
}

/// Whether path token `t` exists: from the repository's root, or for a
/// bare file name anywhere in it, or for a one-folder name (`src/`) as a
/// folder of some crate.
fn exists(t: &str, names: &BTreeSet<String>) -> bool {
    let p = t.trim_end_matches('/');
    if root().join(p).exists() {
        return true;
    }
    if !p.contains('/') {
        if t.ends_with('/') {
            return std::fs::read_dir(root().join("crates"))
                .unwrap()
                .any(|c| c.unwrap().path().join(p).is_dir());
        }
        return names.contains(p);
    }
    false
}

/// The identifiers a token names as Rust items: each segment of `a::b::c`,
/// or one snake_case identifier with an underscore inside, or one
/// CamelCase identifier (a capital, then lowercase letters) of at least
/// four letters. Generated names (`__scr0`) and environment variables
/// (`TILE_LOG`) are not items.
fn items(t: &str) -> Vec<&str> {
    let ident = |s: &str| {
        !s.is_empty()
            && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            && !s.starts_with(|c: char| c.is_ascii_digit())
    };
    if t.contains("::") {
        return if t.split("::").all(ident) {
            t.split("::").collect()
        } else {
            Vec::new()
        };
    }
    if !ident(t) || t.starts_with("__") || !t.chars().any(|c| c.is_ascii_lowercase()) {
        return Vec::new();
    }
    let snake = t.contains('_');
    let camel = t.starts_with(|c: char| c.is_ascii_uppercase()) && !snake && t.len() >= 4;
    if snake || camel {
        vec![t]
    } else {
        Vec::new()
    }
}

/// Every `.rs` and `.py` file under the repository's sources.
fn sources() -> String {
    let mut text = String::new();
    let mut stack = vec![root().join("crates"), root().join("python")];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        let mut entries: Vec<PathBuf> = entries.map(|e| e.unwrap().path()).collect();
        entries.sort();
        for p in entries {
            let name = p.file_name().unwrap().to_string_lossy().to_string();
            if p.is_dir() && name != "target" && !name.starts_with('.') {
                stack.push(p);
            } else if name.ends_with(".rs") || name.ends_with(".py") {
                text.push_str(&std::fs::read_to_string(&p).unwrap());
                text.push('\n');
            }
        }
    }
    text
}

/// Every file name in the repository outside `target` and hidden folders.
fn file_names() -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    let mut stack = vec![root()];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).unwrap() {
            let p = e.unwrap().path();
            let name = p.file_name().unwrap().to_string_lossy().to_string();
            if p.is_dir() {
                if name != "target" && !name.starts_with('.') {
                    stack.push(p);
                }
            } else {
                names.insert(name);
            }
        }
    }
    names
}

fn spelled(sources: &str, name: &str) -> bool {
    sources.match_indices(name).any(|(at, _)| {
        let before = sources[..at].chars().next_back();
        let after = sources[at + name.len()..].chars().next();
        let word = |c: Option<char>| c.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_');
        !word(before) && !word(after)
    })
}

#[test]
fn the_maps_name_only_what_exists() {
    let sources = sources();
    let names = file_names();
    let mut missing = Vec::new();
    let mut checked = 0;
    for doc in ["ARCHITECTURE.md", "docs/internals.md"] {
        let text = std::fs::read_to_string(root().join(doc)).unwrap();
        for t in tokens(&text) {
            if is_path(&t) {
                checked += 1;
                if !exists(&t, &names) {
                    missing.push(format!("{doc}: path `{t}`"));
                }
            } else {
                for name in items(&t) {
                    checked += 1;
                    if !spelled(&sources, name) {
                        missing.push(format!("{doc}: item `{name}` of `{t}`"));
                    }
                }
            }
        }
    }
    assert!(
        checked > 200,
        "only {checked} names checked: is the map there?"
    );
    assert!(
        missing.is_empty(),
        "named but not found:\n{}",
        missing.join("\n")
    );
}

#[test]
fn the_architecture_is_a_map() {
    let text = std::fs::read_to_string(root().join("ARCHITECTURE.md")).unwrap();
    let lines = text.lines().count();
    assert!(
        lines <= 300,
        "ARCHITECTURE.md has {lines} lines: detail belongs in docs/internals.md"
    );
    for section in [
        "## Code map",
        "## Where each decision lives",
        "## Invariants",
        "## Adding a target",
    ] {
        assert!(text.contains(section), "ARCHITECTURE.md lacks {section}");
    }
}

#[test]
fn the_checks_see_a_missing_path_and_a_missing_item() {
    let sources = sources();
    let names = file_names();
    assert!(is_path("crates/tile-plan/src/no_such_pass.rs"));
    assert!(!exists("crates/tile-plan/src/no_such_pass.rs", &names));
    assert!(!exists("no_such_pass.rs", &names));
    assert!(exists("lower_kernels.rs", &names) && exists("src/", &names));
    for not_a_path in ["x/1", ".tile", "/", "$XDG_CACHE_HOME/tile", "~/.cache/tile"] {
        assert!(!is_path(not_a_path), "{not_a_path}");
    }
    assert_eq!(
        items("kernel_ir::no_such_item"),
        ["kernel_ir", "no_such_item"],
        "an item path"
    );
    assert_eq!(items("RowStep"), ["RowStep"], "a type");
    // Built at run time: this file is among the sources searched.
    let absent = ["no_such", "item_anywhere"].join("_");
    assert!(!spelled(&sources, &absent));
    assert!(spelled(&sources, "lower_kernels"));
    assert!(items("TILE_CUDA_ROWS").is_empty(), "environment variables");
    assert!(items("__scr0").is_empty() && items("x").is_empty());
    assert_eq!(tokens("a `x.rs` b\n```\n`y.rs`\n```\n`z`"), ["x.rs", "z"]);
}
