//! Restore points (library level, real git): every byte comes back — tracked, staged,
//! untracked, modes, links, the index with its conflict stages, git's merge state — a
//! restore can itself be undone, points survive `git gc --prune=now`, caps leave a
//! listed trail, retention prunes refs, and reconciliation after a crash ends an
//! `executing` proposal from its intent both ways.

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use gitward::gateway::api::{FailureKind, Status};
use gitward::gateway::server::restore::{self, Caps, RestoreError, Retention};
use gitward::gateway::server::store::{RestorePoint, Store};
use gitward::git::Repo;
use gitward::operation::intent::Intent;
use gitward::operation::{self, Pins};
use jiff::Timestamp;
use serde_json::{Value, json};

use super::exec_ops::Rig;

/// Every file under `top` except `.git`: path → (kind and mode, bytes).
pub fn tree_of(top: &Path) -> BTreeMap<String, (String, Vec<u8>)> {
    let mut out = BTreeMap::new();
    let mut stack = vec![top.to_owned()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap().flatten() {
            let path = entry.path();
            let rel = path
                .strip_prefix(top)
                .unwrap()
                .to_string_lossy()
                .into_owned();
            if rel == ".git" {
                continue;
            }
            let meta = std::fs::symlink_metadata(&path).unwrap();
            if meta.file_type().is_symlink() {
                let target = std::fs::read_link(&path).unwrap();
                out.insert(
                    rel,
                    ("link".into(), target.to_string_lossy().as_bytes().to_vec()),
                );
            } else if meta.is_dir() {
                stack.push(path);
            } else {
                let mode = format!("file {:o}", meta.permissions().mode() & 0o111);
                out.insert(rel, (mode, std::fs::read(&path).unwrap()));
            }
        }
    }
    out
}

/// Everything a restore must put back.
pub fn snapshot(rig: &Rig) -> Value {
    let files: BTreeMap<String, Value> = tree_of(&rig.repo)
        .into_iter()
        .map(|(k, (m, b))| (k, json!([m, String::from_utf8_lossy(&b), b.len()])))
        .collect();
    let git_dir = rig.repo.join(".git");
    json!({
        "files": files,
        "index": format!("{:x?}", std::fs::read(git_dir.join("index")).unwrap()),
        "head": std::fs::read_to_string(git_dir.join("HEAD")).unwrap(),
        "headOid": rig.git(&["rev-parse", "HEAD"]),
        // The refs the point was asked to keep; a branch made later is not the point's.
        "refs": rig.git(&["for-each-ref", "--format=%(refname) %(objectname)", "refs/heads/main", "refs/heads/side"]),
        "mergeHead": std::fs::read_to_string(git_dir.join("MERGE_HEAD")).ok(),
        "mergeMsg": std::fs::read_to_string(git_dir.join("MERGE_MSG")).ok(),
    })
}

pub async fn open(rig: &Rig) -> std::sync::Arc<Repo> {
    gitward::git::repo::open(
        rig.exec.config(),
        "repoPath",
        &rig.repo.display().to_string(),
        &rig.cancel,
    )
    .await
    .unwrap()
}

/// Restores `point` as a person who confirmed the differences shown would.
pub async fn restore_confirmed(rig: &Rig, store: &mut Store, point: &RestorePoint) {
    let repo = open(rig).await;
    restore::restore_in(store, &repo, point, true, &rig.cancel, Timestamp::now())
        .await
        .unwrap();
}

pub async fn take(
    rig: &Rig,
    store: &mut Store,
    caps: &Caps,
    refs: &[String],
) -> restore::RestorePointId {
    let point = try_take(rig, store, caps, refs).await.unwrap();
    restore::RestorePointId(point.id)
}

/// Takes a restore point of `rig`'s repository as an execution would.
pub async fn try_take(
    rig: &Rig,
    store: &mut Store,
    caps: &Caps,
    refs: &[String],
) -> Result<RestorePoint, restore::RestoreError> {
    let repo = open(rig).await;
    restore::take(
        store,
        &repo,
        &rig.cancel,
        refs,
        None,
        Some("test"),
        caps,
        Timestamp::now(),
    )
    .await
}

/// A repository in the middle of a conflicted merge, with every other kind of change.
pub fn messy(rig: &Rig) {
    rig.fx.commit(&rig.repo, "c.txt", "base\n", "c");
    rig.git(&["switch", "-q", "-c", "side"]);
    rig.fx.commit(&rig.repo, "c.txt", "side\n", "side c");
    rig.git(&["switch", "-q", "main"]);
    rig.fx.commit(&rig.repo, "c.txt", "main\n", "main c");
    let merge = rig.fx.git_output(&rig.repo, &["merge", "side"]);
    assert!(!merge.status.success());
    rig.fx.write(&rig.repo, ".gitignore", "*.log\n");
    rig.fx.write(&rig.repo, "ignored.log", "keep me\n");
    rig.fx
        .write(&rig.repo, "a.txt", "one\ntwo\nedited, unstaged\n");
    rig.fx.write(&rig.repo, "dir/b.txt", "staged\n");
    rig.git(&["add", "dir/b.txt"]);
    std::fs::create_dir_all(rig.repo.join("u")).unwrap();
    std::fs::write(rig.repo.join("u/x.bin"), b"\0\x01crlf\r\nend\xff").unwrap();
    std::fs::write(rig.repo.join("run.sh"), "#!/bin/sh\n").unwrap();
    std::fs::set_permissions(
        rig.repo.join("run.sh"),
        std::fs::Permissions::from_mode(0o755),
    )
    .unwrap();
    std::os::unix::fs::symlink("a.txt", rig.repo.join("link")).unwrap();
}

/// Changes everything again: abort the merge, new commits, deletions, a new branch.
pub fn trample(rig: &Rig) {
    rig.git(&["merge", "--abort"]);
    rig.fx.write(&rig.repo, "a.txt", "trampled\n");
    std::fs::remove_file(rig.repo.join("u/x.bin")).unwrap();
    std::fs::remove_file(rig.repo.join("link")).unwrap();
    std::fs::set_permissions(
        rig.repo.join("run.sh"),
        std::fs::Permissions::from_mode(0o644),
    )
    .unwrap();
    rig.fx.write(&rig.repo, "brand/new.txt", "new\n");
    rig.git(&["add", "-A"]);
    rig.git(&["commit", "-q", "-m", "trample"]);
    rig.git(&["switch", "-q", "-c", "elsewhere"]);
    rig.fx.write(&rig.repo, "ignored.log", "keep me\n");
}

#[tokio::test]
async fn restore_puts_every_byte_back_and_can_itself_be_undone() {
    let rig = Rig::new();
    messy(&rig);
    let before = snapshot(&rig);
    assert!(
        rig.git(&["ls-files", "-u"]).contains("c.txt"),
        "conflict stages expected"
    );
    let mut store = rig.store();
    let refs = vec!["refs/heads/main".to_owned(), "refs/heads/side".to_owned()];
    let id = take(&rig, &mut store, &Caps::default(), &refs).await.0;
    // Taking it changed nothing.
    assert_eq!(snapshot(&rig), before);
    trample(&rig);
    let trampled = snapshot(&rig);
    let repo = open(&rig).await;
    let point = store.restore_point(&id).unwrap().unwrap();
    let refused = restore::restore_in(
        &mut store,
        &repo,
        &point,
        false,
        &rig.cancel,
        Timestamp::now(),
    )
    .await;
    let Err(RestoreError::Moved { moved }) = refused else {
        panic!("expected a refusal, got {refused:?}");
    };
    let what: Vec<_> = moved.iter().map(|m| m.what.clone()).collect();
    assert!(what.contains(&"head symbolic".to_owned()), "{what:?}");
    assert!(
        what.contains(&"refs refs/heads/main".to_owned()),
        "{what:?}"
    );
    assert_eq!(
        snapshot(&rig),
        trampled,
        "a refused restore changes nothing"
    );
    let done = restore::restore_in(
        &mut store,
        &repo,
        &point,
        true,
        &rig.cancel,
        Timestamp::now(),
    )
    .await
    .unwrap();
    assert_eq!(snapshot(&rig), before);
    assert!(rig.git(&["ls-files", "-u"]).contains("c.txt"));
    assert!(
        rig.git(&["branch", "--list", "elsewhere"])
            .contains("elsewhere")
    );
    assert_eq!(
        std::fs::read_to_string(rig.repo.join("ignored.log")).unwrap(),
        "keep me\n"
    );
    // The restore took its own point first: restoring that one undoes the restore.
    let undo = store
        .restore_point(&done.restore_point_id)
        .unwrap()
        .unwrap();
    assert_eq!(undo.operation_type.as_deref(), Some("restore"));
    restore::restore_in(
        &mut store,
        &repo,
        &undo,
        false,
        &rig.cancel,
        Timestamp::now(),
    )
    .await
    .unwrap();
    assert_eq!(snapshot(&rig), trampled);
}

#[tokio::test]
async fn restore_points_survive_gc_prune_now() {
    let rig = Rig::new();
    rig.fx
        .write(&rig.repo, "only-here.txt", "untracked, never committed\n");
    rig.fx
        .write(&rig.repo, "a.txt", "changed, never committed\n");
    let before = snapshot(&rig);
    let mut store = rig.store();
    let id = take(
        &rig,
        &mut store,
        &Caps::default(),
        &["refs/heads/main".to_owned()],
    )
    .await
    .0;
    rig.git(&["reset", "-q", "--hard", "HEAD~1"]);
    std::fs::remove_file(rig.repo.join("only-here.txt")).unwrap();
    rig.git(&["reflog", "expire", "--expire=now", "--all"]);
    rig.git(&["gc", "-q", "--prune=now"]);
    let point = store.restore_point(&id).unwrap().unwrap();
    restore_confirmed(&rig, &mut store, &point).await;
    assert_eq!(snapshot(&rig), before);
}

#[tokio::test]
async fn caps_skip_files_and_list_them_and_restore_leaves_them_alone() {
    let rig = Rig::new();
    rig.fx
        .write(&rig.repo, "big.txt", "more than sixteen bytes\n");
    rig.fx.write(&rig.repo, "s1.txt", "1\n");
    rig.fx.write(&rig.repo, "s2.txt", "2\n");
    rig.fx.write(&rig.repo, "s3.txt", "3\n");
    let mut store = rig.store();
    let caps = Caps {
        max_file_bytes: 16,
        max_files: 2,
    };
    let id = take(&rig, &mut store, &caps, &[]).await.0;
    let point = store.restore_point(&id).unwrap().unwrap();
    let skipped = point.skipped.as_array().unwrap();
    let reasons: Vec<(String, String)> = skipped
        .iter()
        .map(|s| {
            (
                s["path"].as_str().unwrap().into(),
                s["reason"].as_str().unwrap().into(),
            )
        })
        .collect();
    assert!(
        reasons.contains(&("big.txt".into(), "larger than 16 bytes".into())),
        "{reasons:?}"
    );
    assert_eq!(
        reasons
            .iter()
            .filter(|(_, r)| r.contains("file cap"))
            .count(),
        1,
        "{reasons:?}"
    );
    assert_eq!(restore::view(&point)["skipped"], point.skipped);
    rig.fx
        .write(&rig.repo, "big.txt", "changed after the point\n");
    restore_confirmed(&rig, &mut store, &point).await;
    // Never captured, so never touched.
    assert_eq!(
        std::fs::read_to_string(rig.repo.join("big.txt")).unwrap(),
        "changed after the point\n"
    );
}

#[tokio::test]
async fn retention_keeps_the_newest_or_the_recent_and_prunes_refs() {
    let rig = Rig::new();
    let mut store = rig.store();
    let repo = open(&rig).await;
    let now = Timestamp::now();
    let day = jiff::SignedDuration::from_hours(24);
    let mut ids = Vec::new();
    for age in [20, 19, 1] {
        let at = now.checked_sub(day * age).unwrap();
        let p = restore::take(
            &mut store,
            &repo,
            &rig.cancel,
            &["refs/heads/main".into()],
            None,
            None,
            &Caps::default(),
            at,
        )
        .await
        .unwrap();
        ids.push(p.id);
    }
    let retention = Retention {
        keep_newest: 1,
        keep_for: std::time::Duration::from_secs(14 * 24 * 3600),
    };
    let pruned = restore::prune(&mut store, &repo, &rig.cancel, now, &retention)
        .await
        .unwrap();
    assert_eq!(pruned.len(), 2);
    assert!(pruned.contains(&ids[0]) && pruned.contains(&ids[1]));
    let refs = rig.git(&[
        "for-each-ref",
        "--format=%(refname)",
        "refs/gitward/restore/",
    ]);
    assert!(
        !refs.contains(&ids[0]) && !refs.contains(&ids[1]) && refs.contains(&ids[2]),
        "{refs}"
    );
    assert!(store.restore_point(&ids[0]).unwrap().is_none());
}

#[tokio::test]
async fn an_executed_commit_is_undone_by_its_restore_point_without_confirmation() {
    let rig = Rig::new();
    rig.fx.write(&rig.repo, "a.txt", "to be committed\n");
    rig.fx.write(&rig.repo, "loose.txt", "untracked\n");
    let before = snapshot(&rig);
    let record = rig
        .execute("commit", json!({"message": "m", "stageAll": true}))
        .await;
    assert_eq!(record.status, Status::Completed);
    let rp = record.result.unwrap().restore_point_id.unwrap();
    let view = restore::view(&rig.store().restore_point(&rp).unwrap().unwrap());
    assert_eq!(view["operationType"], "commit");
    assert_eq!(view["headAfter"], rig.git(&["rev-parse", "HEAD"]));
    let done = rig.exec.restore(&rp, false, &rig.cancel).await.unwrap();
    assert_eq!(snapshot(&rig), before);
    assert_eq!(done.restored_from, rp);
}

#[tokio::test]
async fn restoring_a_branch_or_worktree_operation_puts_the_refs_back() {
    let rig = Rig::new();
    let head = rig.git(&["rev-parse", "HEAD"]);
    let record = rig.execute("branch", json!({"name": "topic"})).await;
    let rp = record.result.unwrap().restore_point_id.unwrap();
    assert_eq!(rig.git(&["symbolic-ref", "HEAD"]), "refs/heads/topic");
    let done = rig.exec.restore(&rp, false, &rig.cancel).await.unwrap();
    assert_eq!(rig.git(&["symbolic-ref", "HEAD"]), "refs/heads/main");
    assert_eq!(rig.git(&["rev-parse", "HEAD"]), head);
    assert_eq!(rig.git(&["branch", "--list", "topic"]), "");
    assert!(done.kept_refs.is_empty());

    let record = rig.execute("worktree", json!({"branch": "task"})).await;
    let rp = record.result.unwrap().restore_point_id.unwrap();
    let done = rig.exec.restore(&rp, false, &rig.cancel).await.unwrap();
    // The added worktree still has the branch checked out: it is kept, and said so.
    assert_eq!(done.kept_refs, ["refs/heads/task"]);
    assert!(rig.git(&["branch", "--list", "task"]).contains("task"));
}

/// A commit of `fields`, proposed, approved and claimed as the executor claims it, with
/// the intent the executor would record: `(id, store, intent)`.
pub async fn claimed_commit(rig: &Rig, fields: &Value) -> (String, Store, Intent) {
    let id = rig.propose("commit", fields.clone()).await.unwrap();
    rig.approve(&id);
    let mut store = rig.store();
    store
        .claim(&id, &json!({"phase": "claimed"}), Timestamp::now())
        .unwrap();
    let pins = Pins(store.pins(&id).unwrap().unwrap());
    let op = operation::find("commit").unwrap();
    let intent = op.intent(fields.as_object().unwrap(), &pins).unwrap();
    (id, store, intent)
}

/// Claims an approved proposal and records its intent as the executor would, then stops
/// (the crash); `write` runs plain git in between when the crash came after the write.
async fn crash_after_intent(rig: &Rig, fields: Value, write: bool) -> String {
    let (id, mut store, intent) = claimed_commit(rig, &fields).await;
    let repo = open(rig).await;
    let point = restore::take(
        &mut store,
        &repo,
        &rig.cancel,
        &intent.refs(),
        Some(&id),
        Some("commit"),
        &Caps::default(),
        Timestamp::now(),
    )
    .await
    .unwrap();
    let record = json!({"phase": "restorePoint", "repoPath": repo.display(), "intent": intent, "restorePointId": point.id});
    store.update_intent(&id, &record, Timestamp::now()).unwrap();
    if write {
        rig.git(&["add", "-A"]);
        rig.git(&["commit", "-q", "-m", "m"]);
    }
    id
}

#[tokio::test]
async fn reconciliation_completes_a_finished_write_and_fails_an_unfinished_one() {
    let rig = Rig::new();
    rig.fx.write(&rig.repo, "a.txt", "x\n");
    let done = crash_after_intent(&rig, json!({"message": "m", "stageAll": true}), true).await;
    let ended = rig.exec.reconcile_at_start(&rig.cancel).await.unwrap();
    assert_eq!(ended.len(), 1);
    let r = &ended[0];
    assert_eq!(
        (r.preview_id.as_str(), r.status),
        (done.as_str(), Status::Completed)
    );
    let result = r.result.as_ref().unwrap();
    assert_eq!(result.fields["commitSha"], rig.git(&["rev-parse", "HEAD"]));
    assert!(result.restore_point_id.is_some());

    rig.fx.write(&rig.repo, "a.txt", "y\n");
    let head = rig.git(&["rev-parse", "HEAD"]);
    let cut = crash_after_intent(&rig, json!({"message": "m", "stageAll": true}), false).await;
    // Claimed only, no intent: nothing was written.
    let early = rig
        .propose("branch", json!({"name": "early"}))
        .await
        .unwrap();
    rig.approve(&early);
    rig.store()
        .claim(&early, &json!({"phase": "claimed"}), Timestamp::now())
        .unwrap();
    let ended = rig.exec.reconcile_at_start(&rig.cancel).await.unwrap();
    assert_eq!(ended.len(), 2);
    for r in &ended {
        assert_eq!(r.status, Status::Failed, "{r:?}");
        let result = r.result.as_ref().unwrap();
        assert_eq!(result.failure, Some(FailureKind::Interrupted));
        assert_eq!(
            result.restore_point_id.is_some(),
            r.preview_id == cut,
            "{r:?}"
        );
    }
    assert_eq!(
        rig.git(&["rev-parse", "HEAD"]),
        head,
        "nothing was run again"
    );
    assert!(
        rig.exec
            .reconcile_at_start(&rig.cancel)
            .await
            .unwrap()
            .is_empty()
    );
    // A reconciled proposal is never executed afterwards.
    assert!(rig.exec.run(&cut, &rig.cancel).await.is_err());
}

/// Sets the modification time of `path` (the file stays as it is otherwise).
fn set_mtime(path: &Path, when: std::time::SystemTime) {
    let file = std::fs::OpenOptions::new().write(true).open(path).unwrap();
    file.set_modified(when).unwrap();
}

/// What git itself says, without letting `status` refresh the index.
fn git_view(rig: &Rig) -> (String, String) {
    let status = rig.git(&["--no-optional-locks", "status", "--porcelain=v2"]);
    let diff = rig.git(&["--no-optional-locks", "diff"]);
    (status, diff)
}

#[tokio::test]
async fn a_same_size_edit_stays_visible_to_git_after_a_restore() {
    let rig = Rig::new();
    // Stat data git can vouch with: ctime ignored, and `same.txt`'s index entry, the
    // index file and the edited file all stamped with one second, so only git's racy
    // check (entry not older than the index file) makes it read the bytes.
    rig.git(&["config", "core.trustctime", "false"]);
    let stamp = std::time::UNIX_EPOCH + std::time::Duration::from_secs(1_600_000_000);
    let same = rig.repo.join("same.txt");
    std::fs::write(&same, "aaaa\n").unwrap();
    set_mtime(&same, stamp);
    rig.git(&["add", "same.txt"]);
    rig.git(&["commit", "-q", "-m", "same"]);
    // A same-size edit in place, stamped like the committed bytes.
    std::fs::OpenOptions::new()
        .write(true)
        .open(&same)
        .and_then(|mut f| std::io::Write::write_all(&mut f, b"bbbb\n"))
        .unwrap();
    set_mtime(&same, stamp);
    set_mtime(&rig.repo.join(".git/index"), stamp);
    // And one made now, in the second the restore runs.
    rig.fx.write(&rig.repo, "a.txt", "ONE\nTWO\n");
    let seen = git_view(&rig);
    assert!(seen.0.contains("same.txt"), "{}", seen.0);
    assert!(seen.0.contains("a.txt"), "{}", seen.0);
    let before = snapshot(&rig);
    let mut store = rig.store();
    let refs = vec!["refs/heads/main".to_owned()];
    let id = take(&rig, &mut store, &Caps::default(), &refs).await.0;
    // Change other things, not the edited files.
    rig.fx.write(&rig.repo, "dir/b.txt", "other\n");
    rig.git(&["add", "dir/b.txt"]);
    rig.fx.write(&rig.repo, "a.txt", "one\ntwo\n");
    let point = store.restore_point(&id).unwrap().unwrap();
    restore_confirmed(&rig, &mut store, &point).await;
    assert_eq!(snapshot(&rig), before, "bytes and index come back");
    assert_eq!(git_view(&rig), seen, "git sees what it saw at capture");
}

/// What a refused restore says moved.
async fn refused(rig: &Rig, rp: &str) -> Vec<String> {
    match rig.exec.restore(rp, false, &rig.cancel).await {
        Err(RestoreError::Moved { moved }) => moved.into_iter().map(|m| m.what).collect(),
        other => panic!("expected a refusal, got {other:?}"),
    }
}

#[tokio::test]
async fn work_in_the_index_or_worktree_after_the_write_refuses_a_restore_unless_confirmed() {
    let rig = Rig::new();
    rig.fx.write(&rig.repo, "a.txt", "to be committed\n");
    let record = rig
        .execute("commit", json!({"message": "m", "paths": ["a.txt"]}))
        .await;
    let rp = record.result.unwrap().restore_point_id.unwrap();
    // A same-size edit of a file the commit left untouched: only the worktree moved.
    rig.fx.write(&rig.repo, "dir/b.txt", "BEE\n");
    assert_eq!(refused(&rig, &rp).await, ["changes dir/b.txt"]);
    // Staging it moves the index too (its status letters change with it).
    rig.git(&["add", "dir/b.txt"]);
    assert_eq!(refused(&rig, &rp).await, ["changes dir/b.txt", "index"]);
    // A new untracked file is work as well.
    rig.git(&["reset", "-q"]);
    rig.fx.write(&rig.repo, "dir/b.txt", "bee\n");
    rig.fx.write(&rig.repo, "notes.txt", "mine\n");
    let untouched = snapshot(&rig);
    assert_eq!(refused(&rig, &rp).await, ["changes notes.txt"]);
    assert_eq!(snapshot(&rig), untouched, "a refusal changes nothing");
    // Confirmed, it goes back and says what it went over.
    let done = rig.exec.restore(&rp, true, &rig.cancel).await.unwrap();
    let what: Vec<_> = done.moved.iter().map(|m| m.what.as_str()).collect();
    assert_eq!(what, ["changes notes.txt"]);
    assert_eq!(rig.git(&["show", "HEAD:a.txt"]), "one\ntwo");
    assert_eq!(
        std::fs::read_to_string(rig.repo.join("a.txt")).unwrap(),
        "to be committed\n"
    );
}
