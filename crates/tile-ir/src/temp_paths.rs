//! Paths a process is using for a while and must not leave behind
//! (staging directories, build directories): registered while they exist,
//! so a command's signal handler can remove them all before it exits.
//! Normal paths (success, error, panic) remove them through their own
//! owners; this registry covers the path that runs no destructor.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

static PATHS: Mutex<Vec<(u64, PathBuf)>> = Mutex::new(Vec::new());
static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// A registration; dropping it unregisters the path (it does not remove
/// it: its owner does).
#[derive(Debug)]
pub struct Registered(u64);

/// Registers `path` (a file or a directory tree) for [`remove_all`].
pub fn register(path: &Path) -> Registered {
    let id = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    if let Ok(mut p) = PATHS.lock() {
        p.push((id, path.to_path_buf()));
    }
    Registered(id)
}

impl Drop for Registered {
    fn drop(&mut self) {
        if let Ok(mut p) = PATHS.lock() {
            p.retain(|(id, _)| *id != self.0);
        }
    }
}

/// Removes every registered path (what a signal handler calls before the
/// process ends). A poisoned registry is still read.
pub fn remove_all() {
    let paths = match PATHS.lock() {
        Ok(p) => p.clone(),
        Err(e) => e.into_inner().clone(),
    };
    for (_, p) in paths {
        match std::fs::symlink_metadata(&p) {
            Ok(m) if m.is_dir() => {
                let _ = std::fs::remove_dir_all(&p);
            }
            Ok(_) => {
                let _ = std::fs::remove_file(&p);
            }
            Err(_) => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registered_paths_are_removed_and_dropped_ones_kept() {
        let base = std::env::temp_dir().join(format!("tile-temp-paths-{}", std::process::id()));
        let (a, b) = (base.join("a"), base.join("b"));
        std::fs::create_dir_all(a.join("inner")).unwrap();
        std::fs::create_dir_all(&b).unwrap();
        let _kept = register(&a);
        drop(register(&b));
        remove_all();
        assert!(!a.exists() && b.exists());
        std::fs::remove_dir_all(&base).unwrap();
    }
}
