//! The store's file: durability across reopening, an interrupted transaction, schema
//! versions, permissions and hostile paths.

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use serde_json::json;

use super::tests::{at, db, new_pending, pid, settings};
use super::*;

#[test]
fn everything_survives_closing_and_reopening() {
    let dir = tempfile::tempdir().unwrap();
    {
        let mut store = Store::open(&db(&dir), settings()).unwrap();
        new_pending(&mut store, 1, "a");
        store.approve(&pid(1), Channel::Tty, at(1)).unwrap();
        store.claim(&pid(1), &json!({"pre": "x"}), at(2)).unwrap();
    }
    let store = Store::open(&db(&dir), settings()).unwrap();
    let found = store.list_executing().unwrap();
    assert_eq!(found.len(), 1);
    assert_eq!(
        found[0].record.decided_by.map(|d| d.channel),
        Some(Channel::Tty)
    );
    assert_eq!(found[0].intent, Some(json!({"pre": "x"})));
    assert_eq!(store.history(&pid(1)).unwrap().len(), 3);
}

#[test]
fn a_transaction_dropped_before_commit_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(&db(&dir), settings()).unwrap();
    new_pending(&mut store, 1, "a");
    {
        // The same statements a transition runs, cut off before the commit.
        let tx = store
            .conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .unwrap();
        tx.execute(
            "UPDATE proposals SET status = 'approved' WHERE preview_id = ?1",
            [pid(1)],
        )
        .unwrap();
        tx.execute(
            "INSERT INTO transitions (preview_id, from_status, to_status, at) VALUES (?1, 'pending', 'approved', 0)",
            [pid(1)],
        )
        .unwrap();
        assert_eq!(
            super::rows::record_in(&tx, &pid(1))
                .unwrap()
                .unwrap()
                .status,
            Status::Approved
        );
    }
    // Another connection (a restarted gateway) sees the old state and can decide.
    let mut other = Store::open(&db(&dir), settings()).unwrap();
    assert_eq!(other.get(&pid(1), at(1)).unwrap().status, Status::Pending);
    assert_eq!(other.history(&pid(1)).unwrap().len(), 1);
    other.reject(&pid(1), Channel::Web, None, at(2)).unwrap();
    assert_eq!(store.get(&pid(1), at(3)).unwrap().status, Status::Rejected);
}

#[test]
fn a_newer_schema_is_refused_and_the_file_left_alone() {
    let dir = tempfile::tempdir().unwrap();
    let path = db(&dir);
    Store::open(&path, settings()).unwrap();
    let raw = rusqlite::Connection::open(&path).unwrap();
    raw.pragma_update(None, "user_version", 99).unwrap();
    drop(raw);
    match Store::open(&path, settings()) {
        Err(
            e @ StoreError::NewerSchema {
                found: 99,
                supported: 6,
            },
        ) => {
            assert!(e.to_string().contains("refusing to open"), "{e}");
        }
        Err(e) => panic!("{e}"),
        Ok(_) => panic!("a newer schema was opened"),
    }
    let raw = rusqlite::Connection::open(&path).unwrap();
    let version: i64 = raw
        .pragma_query_value(None, "user_version", |r| r.get(0))
        .unwrap();
    assert_eq!(version, 99);
}

#[test]
fn another_programs_database_is_not_adopted() {
    let dir = tempfile::tempdir().unwrap();
    let path = db(&dir);
    private_dir(path.parent().unwrap());
    let raw = rusqlite::Connection::open(&path).unwrap();
    raw.execute_batch("CREATE TABLE notes (x TEXT)").unwrap();
    drop(raw);
    assert!(matches!(
        Store::open(&path, settings()),
        Err(StoreError::Foreign { .. })
    ));
}

#[test]
fn reopening_a_current_store_keeps_its_schema() {
    let dir = tempfile::tempdir().unwrap();
    let path = db(&dir);
    Store::open(&path, settings()).unwrap();
    Store::open(&path, settings()).unwrap();
    let raw = rusqlite::Connection::open(&path).unwrap();
    let version: i64 = raw
        .pragma_query_value(None, "user_version", |r| r.get(0))
        .unwrap();
    let mode: String = raw
        .pragma_query_value(None, "journal_mode", |r| r.get(0))
        .unwrap();
    assert_eq!((version, mode.as_str()), (6, "wal"));
}

fn private_dir(path: &Path) {
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new().mode(0o700).create(path).unwrap();
}

fn mode(path: &Path) -> u32 {
    std::fs::symlink_metadata(path).unwrap().mode() & 0o777
}

#[test]
fn the_store_is_private_to_its_user() {
    let dir = tempfile::tempdir().unwrap();
    let path = db(&dir);
    let mut store = Store::open(&path, settings()).unwrap();
    new_pending(&mut store, 1, "a");
    assert_eq!(mode(path.parent().unwrap()), 0o700);
    assert_eq!(mode(&path), 0o600);
    let mut wal = path.clone().into_os_string();
    wal.push("-wal");
    assert_eq!(
        mode(Path::new(&wal)),
        0o600,
        "SQLite gives the WAL the database's mode"
    );
    drop(store);
    // Our own loosened file is tightened again; a directory open to others is refused,
    // not changed behind the user's back.
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
    Store::open(&path, settings()).unwrap();
    assert_eq!(mode(&path), 0o600);
    std::fs::set_permissions(
        path.parent().unwrap(),
        std::fs::Permissions::from_mode(0o750),
    )
    .unwrap();
    match Store::open(&path, settings()) {
        Err(StoreError::Unsafe { reason, .. }) => assert!(reason.contains("open to other users")),
        Err(e) => panic!("{e}"),
        Ok(_) => panic!("a group-readable directory was accepted"),
    }
    assert_eq!(mode(path.parent().unwrap()), 0o750);
}

#[test]
fn symlinks_fifos_and_foreign_directories_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let unsafe_open = |path: &Path| match Store::open(path, settings()) {
        Err(StoreError::Unsafe { reason, .. }) => reason,
        Err(e) => panic!("{e}"),
        Ok(_) => panic!("{} was opened", path.display()),
    };
    // A symlinked database file.
    let real = dir.path().join("real");
    private_dir(&real);
    let target = dir.path().join("elsewhere.db");
    std::fs::write(&target, b"").unwrap();
    std::os::unix::fs::symlink(&target, real.join("gateway.db")).unwrap();
    assert_eq!(
        unsafe_open(&real.join("gateway.db")),
        "the file is a symbolic link"
    );
    // A symlinked directory.
    std::os::unix::fs::symlink(&real, dir.path().join("link")).unwrap();
    assert_eq!(
        unsafe_open(&dir.path().join("link").join("x.db")),
        "the directory is a symbolic link"
    );
    // A FIFO where the database or its WAL should be.
    let fifo_dir = dir.path().join("fifo");
    private_dir(&fifo_dir);
    rustix::fs::mkfifoat(
        rustix::fs::CWD,
        fifo_dir.join("gateway.db"),
        rustix::fs::Mode::from_raw_mode(0o600),
    )
    .unwrap();
    assert_eq!(
        unsafe_open(&fifo_dir.join("gateway.db")),
        "not a regular file"
    );
    rustix::fs::mkfifoat(
        rustix::fs::CWD,
        fifo_dir.join("b.db-wal"),
        rustix::fs::Mode::from_raw_mode(0o600),
    )
    .unwrap();
    assert_eq!(unsafe_open(&fifo_dir.join("b.db")), "not a regular file");
    // A directory of another user: as root, hand one to nobody; otherwise `/` is foreign.
    let foreign = if rustix::process::getuid().is_root() {
        let d = dir.path().join("nobody");
        private_dir(&d);
        rustix::fs::chown(&d, Some(rustix::fs::Uid::from_raw(65534)), None).unwrap();
        d
    } else {
        PathBuf::from("/")
    };
    assert_eq!(
        unsafe_open(&foreign.join("gateway.db")),
        "the directory belongs to another user"
    );
    assert!(!foreign.join("gateway.db").exists());
}

#[test]
fn stored_values_this_build_cannot_have_written_are_errors_not_panics() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(&db(&dir), settings()).unwrap();
    new_pending(&mut store, 1, "a");
    store
        .conn
        .execute(
            "UPDATE proposals SET result_json = '{not json' WHERE preview_id = ?1",
            [pid(1)],
        )
        .unwrap();
    assert!(matches!(
        store.get(&pid(1), at(1)),
        Err(StoreError::Corrupt(_))
    ));
    store
        .conn
        .execute(
            "UPDATE proposals SET result_json = NULL, created_at = ?2 WHERE preview_id = ?1",
            rusqlite::params![pid(1), i64::MAX],
        )
        .unwrap();
    assert!(matches!(
        store.get(&pid(1), at(1)),
        Err(StoreError::Corrupt(_))
    ));
}
