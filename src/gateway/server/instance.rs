//! One gateway per store and per run directory.
//!
//! Two gateways on one store would both reconcile, both execute and both write the
//! connection files: the second one marks the first one's running write `failed` while the
//! first finishes it. So before anything is opened, read or written, the gateway takes an
//! exclusive `flock` on `<store>.lock` (and, with a run directory, on that directory's
//! default store lock, so a `--db` elsewhere still cannot share the run directory's
//! connection files). The kernel releases a `flock` when its holder dies, however it dies:
//! a stale lock file never blocks a start, and no pid is ever guessed alive.
//!
//! The holder writes its pid, and once both listeners are bound their addresses, into the
//! lock file; a start that finds the lock held refuses with one line naming them.

use std::fs::{self, DirBuilder, File, OpenOptions};
use std::io::{Read, Seek, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

/// The name of the default store inside a run directory's `gateway/`.
pub const STORE_NAME: &str = "gateway.db";

/// The held locks; released when dropped (or when the process ends, however it ends).
#[derive(Debug)]
pub struct Instance {
    held: Vec<(PathBuf, File)>,
}

/// `<path>.lock`, beside `path`.
fn lock_of(path: &Path) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(".lock");
    path.with_file_name(name)
}

/// The lock files for the store at `db` and the run directory's `gateway/` (if any), the
/// same file once when the store is that directory's default one.
pub fn lock_paths(db: &Path, gateway_dir: Option<&Path>) -> Vec<PathBuf> {
    let mut out = vec![lock_of(db)];
    if let Some(dir) = gateway_dir {
        let own = lock_of(&dir.join(STORE_NAME));
        let same = match (
            own.parent().map(fs::canonicalize),
            db.parent().map(fs::canonicalize),
        ) {
            (Some(Ok(a)), Some(Ok(b))) => a == b && own.file_name() == out[0].file_name(),
            _ => own == out[0],
        };
        if !same {
            out.push(own);
        }
    }
    out
}

impl Instance {
    /// Takes every lock, or refuses naming the gateway that holds one; on a refusal
    /// nothing but the lock files' directories (created `0700` when missing) is touched.
    pub fn acquire(db: &Path, gateway_dir: Option<&Path>) -> Result<Instance, String> {
        let mut held = Vec::new();
        for path in lock_paths(db, gateway_dir) {
            let cannot = |e: &dyn std::fmt::Display| {
                format!(
                    "cannot lock the store {} ({}): {e}",
                    db.display(),
                    path.display()
                )
            };
            let file = open(&path).map_err(|e| cannot(&e))?;
            match rustix::fs::flock(&file, rustix::fs::FlockOperation::NonBlockingLockExclusive) {
                Ok(()) => held.push((path, file)),
                Err(rustix::io::Errno::WOULDBLOCK) => {
                    return Err(format!(
                        "{} already serves the store {} ({})",
                        holder(&path),
                        db.display(),
                        path.display()
                    ));
                }
                Err(e) => return Err(cannot(&e)),
            }
        }
        let mut instance = Instance { held };
        instance.note(&json!({"pid": std::process::id()}));
        Ok(instance)
    }

    /// Writes `what` (pid, addresses) into every lock file, for a refused start to name.
    /// Best effort: the lock is the `flock`, not these bytes.
    pub fn note(&mut self, what: &Value) {
        let line = format!("{what}\n");
        for (_, file) in &mut self.held {
            let _ = file
                .set_len(0)
                .and_then(|()| file.rewind())
                .and_then(|()| file.write_all(line.as_bytes()));
        }
    }

    /// The lock files held.
    pub fn paths(&self) -> impl Iterator<Item = &Path> {
        self.held.iter().map(|(p, _)| p.as_path())
    }
}

/// Opens (never truncates: the holder's note must survive a refused start) the lock file,
/// creating it and its directory private when missing.
fn open(path: &Path) -> std::io::Result<File> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        DirBuilder::new().recursive(true).mode(0o700).create(dir)?;
    }
    OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o600)
        .open(path)
}

/// "the gateway with pid N (handshake A, page U)", from the holder's note; the note may
/// be a moment behind a holder still starting.
fn holder(path: &Path) -> String {
    let mut text = String::new();
    let _ = File::open(path).and_then(|f| f.take(4096).read_to_string(&mut text));
    let note: Value = serde_json::from_str(text.trim()).unwrap_or(Value::Null);
    let pid = note["pid"]
        .as_u64()
        .map_or_else(|| "unknown".to_owned(), |p| p.to_string());
    let mut out = format!("the gateway with pid {pid}");
    match (note["handshake"].as_str(), note["ui"].as_str()) {
        (Some(h), Some(u)) => out.push_str(&format!(" (handshake {h}, page {u})")),
        _ => out.push_str(" (still starting)"),
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_holder_is_refused_naming_the_first_and_a_released_lock_is_free() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("gateway").join(STORE_NAME);
        let gateway_dir = dir.path().join("gateway");
        let mut first = Instance::acquire(&db, Some(&gateway_dir)).unwrap();
        assert_eq!(
            first.paths().count(),
            1,
            "the default store shares the lock"
        );
        first.note(&json!({"pid": 4242, "handshake": "127.0.0.1:1", "ui": "http://127.0.0.1:2/"}));
        let refused = Instance::acquire(&db, Some(&gateway_dir)).unwrap_err();
        assert!(refused.contains("pid 4242"), "{refused}");
        assert!(refused.contains("handshake 127.0.0.1:1"), "{refused}");
        assert!(refused.contains("page http://127.0.0.1:2/"), "{refused}");
        // Another store in the same run directory is refused too: the connection files
        // would be shared.
        let elsewhere = dir.path().join("other.db");
        assert!(Instance::acquire(&elsewhere, Some(&gateway_dir)).is_err());
        // The same store without a run directory as well.
        assert!(Instance::acquire(&db, None).is_err());
        drop(first);
        let again = Instance::acquire(&elsewhere, Some(&gateway_dir)).unwrap();
        assert_eq!(again.paths().count(), 2);
    }
}
