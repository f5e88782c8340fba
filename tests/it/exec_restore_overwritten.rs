//! Ignored files a write's checkout overwrites or deletes: git treats an ignored file as
//! expendable where the tree it checks out tracks that path (a switch, a hard reset, a
//! merge, a rebase, a plan of them). The restore point taken before the write holds each
//! such file, so its restore puts back exactly the old bytes.

use gitward::gateway::api::Status;
use serde_json::{Value, json};

use super::exec_ops::Rig;
use super::exec_restore_bytes::files_of;

/// `main` ignores `*.env` and `cache/`, and has an ignored `.env` holding a secret, an
/// ignored `cache/` directory and an ignored `data.env` file; `tracks` (branched before
/// main's last commit) tracks `.env`, a file `cache` and `data.env/inner`.
fn rig() -> Rig {
    let rig = Rig::new();
    rig.fx
        .commit(&rig.repo, ".gitignore", "*.env\ncache/\n", "ignore env");
    rig.git(&["switch", "-q", "-c", "tracks"]);
    rig.fx.write(&rig.repo, ".env", "TRACKED=1\n");
    rig.fx.write(&rig.repo, "cache", "a tracked file\n");
    rig.fx
        .write(&rig.repo, "data.env/inner", "tracked inside\n");
    rig.git(&["add", "-f", ".env", "cache", "data.env/inner"]);
    rig.git(&["commit", "-q", "-m", "track what main ignores"]);
    rig.git(&["switch", "-q", "main"]);
    rig.fx.commit(&rig.repo, "m.txt", "main\n", "main work");
    rig.fx.write(&rig.repo, ".env", "SECRET=1\n");
    rig.fx.write(&rig.repo, "cache/blob.bin", "cached\n");
    rig.fx.write(&rig.repo, "data.env", "DATA=1\n");
    assert_eq!(rig.git(&["status", "--porcelain"]), "");
    rig
}

/// Runs `op` with `fields` on [`rig`]: the write replaces the ignored files as git does,
/// and its restore point puts back every byte.
async fn overwritten_then_restored(op: &str, fields: Value) {
    let rig = rig();
    let before = files_of(&rig.repo);
    let record = rig.execute(op, fields).await;
    assert_eq!(record.status, Status::Completed, "{record:?}");
    assert_eq!(
        std::fs::read_to_string(rig.repo.join(".env")).unwrap(),
        "TRACKED=1\n",
        "git overwrote the ignored file"
    );
    assert!(
        rig.repo.join("cache").is_file(),
        "git replaced the directory"
    );
    assert!(rig.repo.join("data.env").is_dir(), "git replaced the file");
    let rp = record.result.unwrap().restore_point_id.unwrap();
    let done = rig.exec.restore(&rp, false, &rig.cancel).await.unwrap();
    assert_eq!(files_of(&rig.repo), before, "every byte is back");
    assert_eq!(rig.git(&["symbolic-ref", "HEAD"]), "refs/heads/main");
    assert_eq!(rig.git(&["status", "--porcelain"]), "");
    // The restore's own point holds them as the write left them: undoing it writes them
    // again.
    rig.exec
        .restore(&done.restore_point_id, false, &rig.cancel)
        .await
        .unwrap();
    assert_eq!(
        std::fs::read_to_string(rig.repo.join(".env")).unwrap(),
        "TRACKED=1\n"
    );
}

#[tokio::test]
async fn a_checkout_over_ignored_files_is_undone_byte_for_byte() {
    let fields = json!({"name": "new", "startPoint": "tracks", "checkout": true});
    overwritten_then_restored("branch", fields).await;
}

#[tokio::test]
async fn a_hard_reset_over_ignored_files_is_undone_byte_for_byte() {
    let fields = json!({"targetRef": "tracks", "mode": "hard"});
    overwritten_then_restored("reset", fields).await;
}

#[tokio::test]
async fn a_merge_over_ignored_files_is_undone_byte_for_byte() {
    let fields = json!({"sourceRef": "tracks", "targetRef": "main"});
    overwritten_then_restored("merge", fields).await;
}

#[tokio::test]
async fn a_rebase_over_ignored_files_is_undone_byte_for_byte() {
    overwritten_then_restored("rebase", json!({"ontoRef": "tracks"})).await;
}

#[tokio::test]
async fn a_plan_that_checks_out_over_ignored_files_is_undone_byte_for_byte() {
    let steps = json!([
        {"operationType": "merge", "sourceRef": "tracks", "targetRef": "main", "strategy": "squash"},
    ]);
    overwritten_then_restored("plan", json!({ "steps": steps })).await;
}

#[tokio::test]
async fn a_file_a_rebase_writes_and_removes_again_is_undone_byte_for_byte() {
    let rig = rig();
    // `gone` writes `.env` in its first commit and removes it in its second: only the
    // replay writes it over the ignored file, the tip's tree never tracks it.
    rig.git(&["switch", "-q", "-c", "gone", "main~1"]);
    std::fs::remove_file(rig.repo.join(".env")).unwrap();
    rig.fx.write(&rig.repo, ".env", "PASSING=1\n");
    rig.git(&["add", "-f", ".env"]);
    rig.git(&["commit", "-q", "-m", "add env"]);
    rig.git(&["rm", "-q", ".env"]);
    rig.git(&["commit", "-q", "-m", "drop env"]);
    rig.git(&["switch", "-q", "main"]);
    rig.fx.write(&rig.repo, ".env", "SECRET=1\n");
    let before = files_of(&rig.repo);
    let fields = json!({"ontoRef": "main", "currentRef": "gone"});
    let record = rig.execute("rebase", fields).await;
    assert_eq!(record.status, Status::Completed, "{record:?}");
    assert!(!rig.repo.join(".env").exists(), "the replay removed it");
    let rp = record.result.unwrap().restore_point_id.unwrap();
    rig.exec.restore(&rp, false, &rig.cancel).await.unwrap();
    assert_eq!(files_of(&rig.repo), before, "every byte is back");
}
