//! The system C compiler: finding it, identifying it, and turning a source
//! into a loaded shared object through an on-disk cache.
//!
//! The compiler is `CpuOptions::cc`, else `$TILE_CC`, else the first of
//! `cc`, `gcc`, `clang` that runs. Its identity is its `--version` text
//! plus the macros it predefines for `-march=native` (so a cache shared
//! between machines never hands one the other's instruction set).
//!
//! Objects are cached under `$TILE_CACHE_DIR`, else `$XDG_CACHE_HOME/tile`,
//! else `~/.cache/tile`, keyed by the source, the identity and the flags;
//! with none of these set there is no disk cache (never a shared
//! directory such as `/tmp`). The cache is never trusted:
//! - an entry `<key>.tso` holds a header (a magic line, the key, the
//!   length and sha256 of the object) and then the object; a hit reads the
//!   whole entry (at most 256 MiB) and checks all of it, and a damaged,
//!   truncated or foreign entry (another key's, a plain `.so`) is removed
//!   and rebuilt;
//! - the checked bytes are written to a private file that this process
//!   alone loads, so a later change to the cache cannot reach a loaded
//!   module;
//! - builds happen in a fresh directory only this user can enter (created
//!   exclusively, mode 0700), removed on every path (success, a compiler
//!   failure, an error; a command's signal handler removes it through
//!   `tile_ir::temp_paths`), and a cache directory that is a symbolic
//!   link, or that another user owns or can write, is not used at all;
//! - entries are opened without following links and checked after
//!   opening (a regular file, at most 256 MiB);
//! - entries are written to a temporary name, synced, then renamed;
//!   temporaries a killed process left are removed once an hour old.

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

/// Flags added where the compiler's `-march=native` has AVX-512
/// (`__AVX512F__`). The prelude's vectors are then 64 bytes, and a compiler
/// tuned to prefer 32-byte vectors (GCC for many Intel models) lowers some
/// of their operations through the stack: on a Xeon with AVX-512, the
/// counting reductions of rank and Top-K ran 4.5x-9x slower, and softmax's
/// cross-entropy 4x, than with this flag (seed pairs unchanged or faster).
pub const AVX512_FLAGS: &[&str] = &["-mprefer-vector-width=512"];

/// Flags added when [`CpuOptions::sanitize`] is set: every kernel access
/// is checked by AddressSanitizer (the fuzz harness's second line of
/// defence behind Tile's own checks).
pub const SANITIZE_FLAGS: &[&str] = &["-fsanitize=address", "-fno-omit-frame-pointer", "-g"];

/// Libraries linked after the source.
pub const LIBS: &[&str] = &["-lm"];

/// A compiler that ran, with its identity.
#[derive(Clone, Debug)]
pub(crate) struct Compiler {
    pub path: PathBuf,
    pub identity: String,
}

impl Compiler {
    /// The flags every build with this compiler passes: [`FLAGS`], plus
    /// [`AVX512_FLAGS`] where its native target has AVX-512.
    pub fn flags(&self) -> Vec<&'static str> {
        let mut f = FLAGS.to_vec();
        if self
            .identity
            .lines()
            .any(|l| l.trim() == "#define __AVX512F__ 1")
        {
            f.extend_from_slice(AVX512_FLAGS);
        }
        f
    }
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

/// The cache directory the options or the environment name; `None`
/// (no disk cache) when nothing names one: a shared directory such as
/// `/tmp` is never used, since another user could prepare it.
pub(crate) fn cache_dir(opts: &CpuOptions) -> Option<PathBuf> {
    if let Some(d) = &opts.cache_dir {
        return Some(d.clone());
    }
    let var = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty());
    if let Some(d) = var("TILE_CACHE_DIR") {
        return Some(PathBuf::from(d));
    }
    if let Some(d) = var("XDG_CACHE_HOME") {
        return Some(PathBuf::from(d).join("tile"));
    }
    var("HOME").map(|h| PathBuf::from(h).join(".cache").join("tile"))
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

/// First line of a cache entry.
const MAGIC: &[u8] = b"TILE-CACHE-ENTRY 1\n";

/// Temporaries older than this are left-overs of a killed process.
const STALE_TEMP: std::time::Duration = std::time::Duration::from_secs(3600);

/// Compiles `source` (or finds it in the cache) and loads it.
pub(crate) fn build(source: &str, opts: &CpuOptions) -> Result<Built, CpuError> {
    let cc = find(opts)?;
    let key = sha256_hex(
        format!(
            "{source}\0{}\0{}\0{}\0{}",
            cc.identity,
            cc.flags().join(" "),
            LIBS.join(" "),
            if opts.sanitize {
                SANITIZE_FLAGS.join(" ")
            } else {
                String::new()
            }
        )
        .as_bytes(),
    );
    let work = private_dir()?;
    let registered = tile_ir::temp_paths::register(&work);
    let result = build_in(&work, &key, source, &cc, opts);
    // The loaded object stays mapped after its file is removed.
    let _ = std::fs::remove_dir_all(&work);
    drop(registered);
    result
}

fn build_in(
    work: &Path,
    key: &str,
    source: &str,
    cc: &Compiler,
    opts: &CpuOptions,
) -> Result<Built, CpuError> {
    let so = work.join(format!("{key}.so"));
    let dir = cache_dir(opts).filter(|d| opts.cache && trusted(d));
    if let Some(dir) = dir {
        let entry = dir.join(format!("{key}.tso"));
        if let Some(object) = read_entry(&entry, key) {
            write_private(&so, &object)?;
            return Ok(Built {
                library: load(&so)?,
            });
        }
        let _ = std::fs::remove_file(&entry);
        let src = work.join(format!("{key}.c"));
        std::fs::write(&src, source).map_err(|e| io("cannot write", &src, e))?;
        compile(cc, opts, &src, &so)?;
        let object = std::fs::read(&so).map_err(|e| io("cannot read", &so, e))?;
        // A cache that cannot be written only costs the next run a compile.
        if create_private(&dir).is_ok() {
            remove_stale_temporaries(&dir);
            let _ = write_entry(&entry, key, &object);
        }
        Ok(Built {
            library: load(&so)?,
        })
    } else {
        let src = work.join(format!("{key}.c"));
        std::fs::write(&src, source).map_err(|e| io("cannot write", &src, e))?;
        compile(cc, opts, &src, &so)?;
        Ok(Built {
            library: load(&so)?,
        })
    }
}

/// The largest cache entry read (objects are tens of kilobytes).
const MAX_ENTRY: u64 = 256 << 20;

/// A new directory only this user can enter, under the temporary
/// directory: created exclusively (never one that already exists, which
/// another user could have prepared), mode 0700.
fn private_dir() -> Result<PathBuf, CpuError> {
    let base = std::env::temp_dir();
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    for attempt in 0..16 {
        let d = base.join(format!(
            "tile-build-{}-{nanos:x}-{attempt}",
            unique_suffix()
        ));
        match dir_builder().create(&d) {
            Ok(()) => return Ok(d),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(io("cannot create", &d, e)),
        }
    }
    Err(CpuError::Io(format!(
        "cannot create a private build directory under {}",
        base.display()
    )))
}

fn dir_builder() -> std::fs::DirBuilder {
    let mut b = std::fs::DirBuilder::new();
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut b, 0o700);
    b
}

/// Creates the cache directory (mode 0700 for the parts it creates).
fn create_private(dir: &Path) -> std::io::Result<()> {
    let mut b = dir_builder();
    b.recursive(true);
    b.create(dir)
}

/// Whether the cache directory may be used: absent (it will be created
/// private), or a directory (not a link to one) owned by this user and
/// writable by no one else. Entries in
/// a directory others can write could be planted with valid checksums.
fn trusted(dir: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let Ok(m) = std::fs::symlink_metadata(dir) else {
            return true;
        };
        // SAFETY: getuid has no preconditions.
        let me = unsafe { libc::getuid() };
        m.is_dir() && me == m.uid() && m.mode() & 0o022 == 0
    }
    #[cfg(not(unix))]
    {
        let _ = dir;
        true
    }
}

/// The header of an entry for `key` holding `object`.
fn entry_header(key: &str, object: &[u8]) -> Vec<u8> {
    let mut h = MAGIC.to_vec();
    h.extend_from_slice(format!("{key}\n{}\n{}\n", object.len(), sha256_hex(object)).as_bytes());
    h
}

/// The object of a valid entry for `key`; `None` when the entry is
/// missing, unreadable, truncated, damaged or for another key.
fn read_entry(path: &Path, key: &str) -> Option<Vec<u8>> {
    use std::io::Read;
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::custom_flags(
        &mut options,
        libc::O_NOFOLLOW | libc::O_NONBLOCK,
    );
    let file = options.open(path).ok()?;
    let meta = file.metadata().ok()?;
    if !meta.is_file() || meta.len() > MAX_ENTRY {
        return None;
    }
    let mut bytes = Vec::new();
    file.take(MAX_ENTRY + 1).read_to_end(&mut bytes).ok()?;
    let rest = bytes.strip_prefix(MAGIC)?;
    let mut lines = rest.splitn(4, |&b| b == b'\n');
    let (k, len, hash) = (lines.next()?, lines.next()?, lines.next()?);
    let object = lines.next()?;
    let len: usize = std::str::from_utf8(len).ok()?.parse().ok()?;
    (k == key.as_bytes() && object.len() == len && hash == sha256_hex(object).as_bytes())
        .then(|| object.to_vec())
}

/// Writes an entry: temporary file, synced, renamed into place.
fn write_entry(path: &Path, key: &str, object: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    let tmp = path.with_extension(format!("tso.tmp-{}", unique_suffix()));
    let written = (|| {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(&entry_header(key, object))?;
        f.write_all(object)?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written
}

/// Writes `bytes` to a new file that no other process knows of.
fn write_private(path: &Path, bytes: &[u8]) -> Result<(), CpuError> {
    use std::io::Write;
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)
        .map_err(|e| io("cannot create", path, e))?;
    f.write_all(bytes).map_err(|e| io("cannot write", path, e))
}

/// Removes temporaries (`*.tmp-*`) older than [`STALE_TEMP`] from the
/// cache directory: what a process killed while writing left behind.
fn remove_stale_temporaries(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let stale = e.file_name().to_string_lossy().contains(".tmp-")
            && e.metadata()
                .and_then(|m| m.modified())
                .ok()
                .and_then(|t| t.elapsed().ok())
                .is_some_and(|age| age > STALE_TEMP);
        if stale {
            let _ = std::fs::remove_file(e.path());
        }
    }
}

fn compile(cc: &Compiler, opts: &CpuOptions, src: &Path, out: &Path) -> Result<(), CpuError> {
    let output = Command::new(&cc.path)
        .args(cc.flags())
        .args(if opts.sanitize { SANITIZE_FLAGS } else { &[] })
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
    Err(CpuError::CompileFailed { log })
}

fn load(path: &Path) -> Result<libloading::Library, CpuError> {
    // SAFETY: the object was compiled from our own generated source, which
    // has no constructors or destructors.
    unsafe { libloading::Library::new(path) }
        .map_err(|e| CpuError::Load(format!("{}: {e}", path.display())))
}
