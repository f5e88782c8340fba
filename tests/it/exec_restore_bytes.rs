//! Restore points keep every path byte for byte: a name that is not UTF-8 is stored,
//! removed, skipped and compared as the bytes it is, after a hard reset and after a
//! commit alike, and work done on it after the write stops a restore.

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use gitward::gateway::api::Status;
use gitward::gateway::server::restore::{Caps, RestoreError};
use serde_json::json;

use super::exec_ops::Rig;
use super::exec_restore::{restore_confirmed, take};

/// Every file under `top` except `.git`, keyed by the bytes of its path: (kind, bytes).
pub fn files_of(top: &Path) -> BTreeMap<Vec<u8>, (String, Vec<u8>)> {
    let mut out = BTreeMap::new();
    let mut stack = vec![top.to_owned()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap().flatten() {
            let path = entry.path();
            let rel = path.strip_prefix(top).unwrap().as_os_str().as_bytes();
            if rel == b".git" {
                continue;
            }
            let meta = std::fs::symlink_metadata(&path).unwrap();
            if meta.file_type().is_symlink() {
                let target = std::fs::read_link(&path).unwrap();
                let target = target.as_os_str().as_bytes().to_vec();
                out.insert(rel.to_vec(), ("link".into(), target));
            } else if meta.is_dir() {
                stack.push(path);
            } else {
                let mode = format!("file {:o}", meta.permissions().mode() & 0o111);
                out.insert(rel.to_vec(), (mode, std::fs::read(&path).unwrap()));
            }
        }
    }
    out
}

/// `name` under `top`, whatever bytes it holds.
fn at(top: &Path, name: &[u8]) -> std::path::PathBuf {
    top.join(OsStr::from_bytes(name))
}

const LATIN1: &[u8] = b"caf\xe9.txt";
const UNTRACKED: &[u8] = b"na\xefve/r\xe9sum\xe9.md";

/// A tracked file with a Latin-1 name edited in the worktree, and an untracked one.
fn latin1_work(rig: &Rig) {
    std::fs::write(at(&rig.repo, LATIN1), b"committed\n").unwrap();
    rig.git(&["add", "-A"]);
    rig.git(&["commit", "-q", "-m", "latin-1 name"]);
    std::fs::write(at(&rig.repo, LATIN1), b"edited, never committed\n").unwrap();
    std::fs::create_dir_all(at(&rig.repo, b"na\xefve")).unwrap();
    std::fs::write(at(&rig.repo, UNTRACKED), b"untracked\n").unwrap();
}

#[tokio::test]
async fn a_name_that_is_not_utf8_comes_back_after_a_hard_reset() {
    let rig = Rig::new();
    latin1_work(&rig);
    let before = files_of(&rig.repo);
    let mut store = rig.store();
    let refs = vec!["refs/heads/main".to_owned()];
    let id = take(&rig, &mut store, &Caps::default(), &refs).await.0;
    rig.git(&["reset", "-q", "--hard", "HEAD~1"]);
    std::fs::remove_file(at(&rig.repo, UNTRACKED)).unwrap();
    assert!(!at(&rig.repo, LATIN1).exists());
    let point = store.restore_point(&id).unwrap().unwrap();
    restore_confirmed(&rig, &mut store, &point).await;
    assert_eq!(
        files_of(&rig.repo),
        before,
        "every byte and every name back"
    );
    assert_eq!(
        std::fs::read(at(&rig.repo, LATIN1)).unwrap(),
        b"edited, never committed\n"
    );
}

#[tokio::test]
async fn a_name_that_is_not_utf8_comes_back_after_a_commit_without_a_stray_file() {
    let rig = Rig::new();
    latin1_work(&rig);
    let before = files_of(&rig.repo);
    let record = rig
        .execute("commit", json!({"message": "m", "stageAll": true}))
        .await;
    assert_eq!(record.status, Status::Completed, "{record:?}");
    let rp = record.result.unwrap().restore_point_id.unwrap();
    assert!(rig.git(&["status", "--porcelain"]).is_empty());
    rig.exec.restore(&rp, false, &rig.cancel).await.unwrap();
    assert_eq!(files_of(&rig.repo), before, "no file under a mangled name");
    let status = rig.git(&["-c", "core.quotePath=true", "status", "--porcelain"]);
    assert!(status.contains(r#" M "caf\351.txt""#), "{status}");
    assert!(status.contains(r#"?? "na\357ve/""#), "{status}");
}

#[tokio::test]
async fn an_edit_of_a_file_whose_name_is_not_utf8_after_the_write_stops_a_restore() {
    let rig = Rig::new();
    latin1_work(&rig);
    rig.fx.write(&rig.repo, "a.txt", "to be committed\n");
    let record = rig
        .execute("commit", json!({"message": "m", "paths": ["a.txt"]}))
        .await;
    let rp = record.result.unwrap().restore_point_id.unwrap();
    std::fs::write(at(&rig.repo, LATIN1), b"edited again after the commit\n").unwrap();
    let moved = match rig.exec.restore(&rp, false, &rig.cancel).await {
        Err(RestoreError::Moved { moved }) => moved,
        other => panic!("expected a refusal, got {other:?}"),
    };
    let what: Vec<_> = moved.iter().map(|m| m.what.as_str()).collect();
    assert_eq!(what, [r#"changes "caf\351.txt""#]);
}

#[tokio::test]
async fn a_skipped_file_whose_name_is_not_utf8_is_listed_and_left_alone() {
    let rig = Rig::new();
    let big: &[u8] = b"gro\xdf.bin";
    std::fs::write(at(&rig.repo, big), b"more than sixteen bytes\n").unwrap();
    let mut store = rig.store();
    let caps = Caps {
        max_file_bytes: 16,
        max_files: 50_000,
    };
    let id = take(&rig, &mut store, &caps, &[]).await.0;
    let point = store.restore_point(&id).unwrap().unwrap();
    assert_eq!(point.skipped[0]["path"], r#""gro\337.bin""#);
    std::fs::write(at(&rig.repo, big), b"changed after the point\n").unwrap();
    restore_confirmed(&rig, &mut store, &point).await;
    assert_eq!(
        std::fs::read(at(&rig.repo, big)).unwrap(),
        b"changed after the point\n"
    );
}
