//! The system C compiler: finding it, identifying it, and turning a source
//! into a loaded shared object through an on-disk cache.
//!
//! The compiler is `CpuOptions::cc`, else `$TILE_CC`, else the first of
//! `cc`, `gcc`, `clang` that runs. Its identity is its `--version` text
//! plus the macros it predefines for `-march=native` (so a cache shared
//! between machines never hands one the other's instruction set). Objects
//! are cached as `<sha256>.so` under `$TILE_CACHE_DIR`, else
//! `$XDG_CACHE_HOME/tile`, else `~/.cache/tile`, keyed by the source, the
//! identity and the flags, and written to a temporary name then renamed,
//! so concurrent builders never see a partial file.

use crate::{CpuError, CpuOptions};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

/// Every flag the CPU back end passes, in one place. IEEE semantics are
/// kept (no `-ffast-math`): NaN and infinities must behave.
pub const FLAGS: &[&str] = &[
    "-O3",
    "-march=native",
    "-fPIC",
    "-shared",
    "-fno-math-errno",
    "-fwrapv",
    "-std=gnu11",
    "-Wno-psabi",
];

/// Libraries linked after the source.
pub const LIBS: &[&str] = &["-lm"];

/// A compiler that ran, with its identity.
#[derive(Clone, Debug)]
pub(crate) struct Compiler {
    pub path: PathBuf,
    pub identity: String,
}

static IDENTITIES: Mutex<BTreeMap<PathBuf, Option<String>>> = Mutex::new(BTreeMap::new());
static UNIQUE: AtomicU64 = AtomicU64::new(0);

fn probe(path: &Path) -> Option<String> {
    if let Ok(cache) = IDENTITIES.lock() {
        if let Some(known) = cache.get(path) {
            return known.clone();
        }
    }
    let version = Command::new(path)
        .arg("--version")
        .stdin(Stdio::null())
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).into_owned());
    let identity = version.map(|v| {
        let macros = Command::new(path)
            .args(["-march=native", "-dM", "-E", "-x", "c", "-"])
            .stdin(Stdio::null())
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| {
                let text = String::from_utf8_lossy(&o.stdout).into_owned();
                let mut lines: Vec<&str> = text.lines().collect();
                lines.sort_unstable();
                lines.join("\n")
            })
            .unwrap_or_default();
        format!("{v}\n{macros}")
    });
    if let Ok(mut cache) = IDENTITIES.lock() {
        cache.insert(path.to_path_buf(), identity.clone());
    }
    identity
}

/// Finds the C compiler the options name (or the first that runs).
pub(crate) fn find(opts: &CpuOptions) -> Result<Compiler, CpuError> {
    let env = std::env::var_os("TILE_CC").filter(|v| !v.is_empty());
    let candidates: Vec<PathBuf> = match (&opts.cc, env) {
        (Some(cc), _) => vec![cc.clone()],
        (None, Some(cc)) => vec![PathBuf::from(cc)],
        (None, None) => ["cc", "gcc", "clang"].iter().map(PathBuf::from).collect(),
    };
    for c in &candidates {
        if let Some(identity) = probe(c) {
            return Ok(Compiler {
                path: c.clone(),
                identity,
            });
        }
    }
    Err(CpuError::NoCompiler {
        tried: candidates
            .iter()
            .map(|c| c.display().to_string())
            .collect::<Vec<_>>()
            .join(", "),
    })
}

/// sha256 of `bytes`, as lowercase hex.
pub(crate) fn sha256_hex(bytes: &[u8]) -> String {
    let digest = Sha256::digest(bytes);
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

/// The cache directory the environment names.
pub(crate) fn cache_dir(opts: &CpuOptions) -> PathBuf {
    if let Some(d) = &opts.cache_dir {
        return d.clone();
    }
    let var = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty());
    if let Some(d) = var("TILE_CACHE_DIR") {
        return PathBuf::from(d);
    }
    if let Some(d) = var("XDG_CACHE_HOME") {
        return PathBuf::from(d).join("tile");
    }
    if let Some(h) = var("HOME") {
        return PathBuf::from(h).join(".cache").join("tile");
    }
    std::env::temp_dir().join("tile-cache")
}

fn unique_suffix() -> String {
    format!(
        "{}-{}",
        std::process::id(),
        UNIQUE.fetch_add(1, Ordering::Relaxed)
    )
}

fn io(what: &str, path: &Path, e: std::io::Error) -> CpuError {
    CpuError::Io(format!("{what} {}: {e}", path.display()))
}

/// A loaded shared object and where it came from.
pub(crate) struct Built {
    pub library: libloading::Library,
}

/// Compiles `source` (or finds it in the cache) and loads it.
pub(crate) fn build(source: &str, opts: &CpuOptions) -> Result<Built, CpuError> {
    let cc = find(opts)?;
    let key = sha256_hex(
        format!(
            "{source}\0{}\0{}\0{}",
            cc.identity,
            FLAGS.join(" "),
            LIBS.join(" ")
        )
        .as_bytes(),
    );
    if opts.cache {
        let dir = cache_dir(opts);
        let so = dir.join(format!("{key}.so"));
        if so.is_file() {
            if let Ok(library) = load(&so) {
                return Ok(Built { library });
            }
        }
        std::fs::create_dir_all(&dir).map_err(|e| io("cannot create", &dir, e))?;
        let src = dir.join(format!("{key}.c"));
        write_atomic(&src, source.as_bytes())?;
        let tmp = dir.join(format!("{key}.so.tmp-{}", unique_suffix()));
        compile(&cc, &src, &tmp)?;
        std::fs::rename(&tmp, &so).map_err(|e| {
            let _ = std::fs::remove_file(&tmp);
            io("cannot rename into", &so, e)
        })?;
        let library = load(&so)?;
        Ok(Built { library })
    } else {
        let dir = std::env::temp_dir().join(format!("tile-build-{}", unique_suffix()));
        std::fs::create_dir_all(&dir).map_err(|e| io("cannot create", &dir, e))?;
        let src = dir.join(format!("{key}.c"));
        std::fs::write(&src, source).map_err(|e| io("cannot write", &src, e))?;
        let so = dir.join(format!("{key}.so"));
        // On failure the directory stays, so the saved source can be read.
        compile(&cc, &src, &so)?;
        let library = load(&so);
        let _ = std::fs::remove_dir_all(&dir);
        Ok(Built { library: library? })
    }
}

fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), CpuError> {
    let tmp = path.with_extension(format!("c.tmp-{}", unique_suffix()));
    std::fs::write(&tmp, bytes).map_err(|e| io("cannot write", &tmp, e))?;
    std::fs::rename(&tmp, path).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        io("cannot rename into", path, e)
    })
}

fn compile(cc: &Compiler, src: &Path, out: &Path) -> Result<(), CpuError> {
    let output = Command::new(&cc.path)
        .args(FLAGS)
        .arg("-o")
        .arg(out)
        .arg(src)
        .args(LIBS)
        .stdin(Stdio::null())
        .output()
        .map_err(|_| CpuError::NoCompiler {
            tried: cc.path.display().to_string(),
        })?;
    if output.status.success() {
        return Ok(());
    }
    let _ = std::fs::remove_file(out);
    let mut log = String::from_utf8_lossy(&output.stderr).into_owned();
    if log.trim().is_empty() {
        log = format!("{} exited with {}", cc.path.display(), output.status);
    }
    Err(CpuError::CompileFailed {
        log,
        source_path: src.to_path_buf(),
    })
}

fn load(path: &Path) -> Result<libloading::Library, CpuError> {
    // SAFETY: the object was compiled from our own generated source, which
    // has no constructors or destructors.
    unsafe { libloading::Library::new(path) }
        .map_err(|e| CpuError::Load(format!("{}: {e}", path.display())))
}
