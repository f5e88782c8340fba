//! Where the store lives: a `0600` regular file in a `0700` directory owned by the
//! current user, opened without following symbolic links, in WAL mode with full syncs.
//!
//! The file holds every decision a person made, so another user must not be able to read
//! it or swap it: a symlinked or foreign-owned directory, and a database (or its `-wal`,
//! `-shm` or `-journal` companion) that is a symlink, a FIFO or someone else's file, are
//! refused. A directory the store creates is `0700`; an existing one open to other users
//! is refused rather than silently changed (it may be a directory the user shares on
//! purpose). Our own database file with looser permissions is tightened: it is ours.

use std::fs::{self, DirBuilder, OpenOptions, Permissions};
use std::io::ErrorKind;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::Path;
use std::time::Duration;

use rusqlite::{Connection, OpenFlags};

use super::StoreError;

const NOFOLLOW: i32 = rustix::fs::OFlags::NOFOLLOW.bits() as i32;

/// SQLite's companions of the database file, each of which must be safe too.
const COMPANIONS: [&str; 3] = ["-wal", "-shm", "-journal"];

/// Opens the connection with the store's pragmas set.
pub(super) fn open(path: &Path, busy_timeout: Duration) -> Result<Connection, StoreError> {
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    private_dir(dir)?;
    private_file(path)?;
    for suffix in COMPANIONS {
        let mut companion = path.as_os_str().to_owned();
        companion.push(suffix);
        companion_is_safe(Path::new(&companion))?;
    }
    let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
        | OpenFlags::SQLITE_OPEN_NO_MUTEX
        | OpenFlags::SQLITE_OPEN_NOFOLLOW;
    let conn = Connection::open_with_flags(path, flags)?;
    conn.busy_timeout(busy_timeout)?;
    // WAL lets status reads run beside a writer; FULL syncs the WAL on every commit so a
    // committed transition survives a power cut, not only a process crash.
    let mode: String = conn.query_row("PRAGMA journal_mode=WAL", [], |r| r.get(0))?;
    if !mode.eq_ignore_ascii_case("wal") {
        return Err(StoreError::Unsafe {
            path: path.to_owned(),
            reason: "the file system does not support write-ahead logging",
        });
    }
    conn.pragma_update(None, "synchronous", "FULL")?;
    conn.pragma_update(None, "foreign_keys", true)?;
    // The schema is ours; nothing in the file may run functions with side effects.
    conn.pragma_update(None, "trusted_schema", false)?;
    Ok(conn)
}

fn unsafe_path(path: &Path, reason: &'static str) -> StoreError {
    StoreError::Unsafe {
        path: path.to_owned(),
        reason,
    }
}

fn private_dir(dir: &Path) -> Result<(), StoreError> {
    match fs::symlink_metadata(dir) {
        Err(e) if e.kind() == ErrorKind::NotFound => {
            DirBuilder::new().recursive(true).mode(0o700).create(dir)?;
        }
        Err(e) => return Err(e.into()),
        Ok(_) => {}
    }
    let meta = fs::symlink_metadata(dir)?;
    if meta.file_type().is_symlink() {
        return Err(unsafe_path(dir, "the directory is a symbolic link"));
    }
    if !meta.is_dir() {
        return Err(unsafe_path(dir, "not a directory"));
    }
    if meta.uid() != rustix::process::getuid().as_raw() {
        return Err(unsafe_path(dir, "the directory belongs to another user"));
    }
    if meta.mode() & 0o077 != 0 {
        return Err(unsafe_path(
            dir,
            "the directory is open to other users (make it 0700 or choose another location)",
        ));
    }
    Ok(())
}

fn private_file(path: &Path) -> Result<(), StoreError> {
    let created = OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .mode(0o600)
        .custom_flags(NOFOLLOW)
        .open(path);
    match created {
        // SQLite reads an empty file as an empty database.
        Ok(_) => return Ok(()),
        Err(e) if e.kind() == ErrorKind::AlreadyExists => {}
        Err(e) => return Err(e.into()),
    }
    let meta = fs::symlink_metadata(path)?;
    check_regular_own(path, &meta)?;
    if meta.mode() & 0o077 != 0 {
        fs::set_permissions(path, Permissions::from_mode(0o600))?;
    }
    Ok(())
}

fn companion_is_safe(path: &Path) -> Result<(), StoreError> {
    match fs::symlink_metadata(path) {
        Err(e) if e.kind() == ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e.into()),
        Ok(meta) => check_regular_own(path, &meta),
    }
}

fn check_regular_own(path: &Path, meta: &fs::Metadata) -> Result<(), StoreError> {
    if meta.file_type().is_symlink() {
        return Err(unsafe_path(path, "the file is a symbolic link"));
    }
    if !meta.is_file() {
        return Err(unsafe_path(path, "not a regular file"));
    }
    if meta.uid() != rustix::process::getuid().as_raw() {
        return Err(unsafe_path(path, "the file belongs to another user"));
    }
    Ok(())
}
