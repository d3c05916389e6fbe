//! Peer workers: one Python process per framework per round, speaking JSON
//! lines (see `peers/common.py`). A framework that is not installed answers
//! "not available"; that is recorded, never a failure of Tile.

use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

/// A running worker.
pub struct Peer {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    /// The worker's greeting (`available`, `versions`, `device`, `reason`).
    pub hello: Value,
}

/// Where `peers/worker.py` is: `$TILE_PEERS_DIR`, or `peers/` in the
/// current directory or beside the source tree this binary was built from.
pub fn peers_dir() -> PathBuf {
    if let Ok(d) = std::env::var("TILE_PEERS_DIR") {
        return PathBuf::from(d);
    }
    let local = Path::new("peers");
    if local.join("worker.py").exists() {
        return local.to_path_buf();
    }
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../peers")
}

impl Peer {
    /// Starts `python worker.py framework` and reads its greeting.
    pub fn start(python: &str, framework: &str) -> Result<Peer, String> {
        let script = peers_dir().join("worker.py");
        let mut child = Command::new(python)
            .arg(&script)
            .arg(framework)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .env("PYTHONUNBUFFERED", "1")
            .spawn()
            .map_err(|e| format!("cannot start `{python} {}`: {e}", script.display()))?;
        let stdin = child.stdin.take().ok_or("no stdin")?;
        let stdout = BufReader::new(child.stdout.take().ok_or("no stdout")?);
        let mut p = Peer {
            child,
            stdin,
            stdout,
            hello: Value::Null,
        };
        p.hello = p.read()?;
        Ok(p)
    }

    /// True when the framework imported and found its device.
    pub fn available(&self) -> bool {
        self.hello["available"].as_bool().unwrap_or(false)
    }

    fn read(&mut self) -> Result<Value, String> {
        let mut line = String::new();
        loop {
            line.clear();
            let n = self
                .stdout
                .read_line(&mut line)
                .map_err(|e| format!("peer read failed: {e}"))?;
            if n == 0 {
                return Err("the peer worker exited without answering".into());
            }
            if !line.trim().is_empty() {
                return serde_json::from_str(line.trim())
                    .map_err(|e| format!("peer sent bad JSON ({e}): {line}"));
            }
        }
    }

    /// Runs one case through the protocol; returns the worker's response.
    #[allow(clippy::too_many_arguments)]
    pub fn run(
        &mut self,
        graph: &str,
        shape: [usize; 2],
        sizes: &std::collections::BTreeMap<String, usize>,
        target: &str,
        phases: &[&str],
        proto: &crate::protocol::Protocol,
        (atol, rtol): (f64, f64),
        allow_tf32: bool,
    ) -> Result<Value, String> {
        let req = json!({
            "op": "run", "graph": graph, "shape": shape, "sizes": sizes, "target": target, "phases": phases,
            "samples": proto.samples, "window_ms": proto.window_ms, "warmup_ms": proto.warmup_ms,
            "atol": atol, "rtol": rtol, "allow_tf32": allow_tf32,
        });
        writeln!(self.stdin, "{req}").map_err(|e| format!("peer write failed: {e}"))?;
        self.stdin
            .flush()
            .map_err(|e| format!("peer write failed: {e}"))?;
        self.read()
    }
}

impl Drop for Peer {
    fn drop(&mut self) {
        let _ = writeln!(self.stdin, "{}", json!({"op": "quit"}));
        let _ = self.stdin.flush();
        let _ = self.child.wait();
    }
}
