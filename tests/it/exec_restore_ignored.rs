//! Ignored files and restore: a restore never deletes or overwrites a file no restore point
//! saved — an ignored file stays where it is, and where putting the point back would
//! overwrite one the restore stops, names it and changes nothing — while the files an
//! operation touches (a patch's targets) are captured whatever their ignore status.

use gitward::gateway::api::Status;
use serde_json::json;

use super::exec_ops::Rig;
use super::exec_restore_bytes::files_of;

/// `main` ignores `*.env` (committed on top of the fixture) and `.env` holds a secret;
/// the fixture's second commit has no `.gitignore`.
fn ignored_env(rig: &Rig) -> String {
    let bare = rig.git(&["rev-parse", "HEAD"]);
    rig.fx
        .commit(&rig.repo, ".gitignore", "*.env\n", "ignore env");
    rig.fx.write(&rig.repo, ".env", "SECRET=1\n");
    assert_eq!(rig.git(&["status", "--porcelain"]), "");
    bare
}

/// The ids of the restore points whose refs the repository holds.
fn point_ids(rig: &Rig) -> std::collections::BTreeSet<String> {
    rig.git(&[
        "for-each-ref",
        "--format=%(refname)",
        "refs/gitward/restore/",
    ])
    .lines()
    .filter_map(|r| r.split('/').nth(3).map(str::to_owned))
    .collect()
}

#[tokio::test]
async fn restoring_a_checkout_keeps_a_file_that_was_ignored_when_the_point_was_taken() {
    let rig = Rig::new();
    let bare = ignored_env(&rig);
    let before = files_of(&rig.repo);
    let record = rig
        .execute(
            "branch",
            json!({"name": "new", "startPoint": bare, "checkout": true}),
        )
        .await;
    assert_eq!(record.status, Status::Completed, "{record:?}");
    // On `new` nothing ignores it: git lists it as untracked.
    assert!(rig.git(&["status", "--porcelain"]).contains("?? .env"));
    let rp = record.result.unwrap().restore_point_id.unwrap();
    let done = rig.exec.restore(&rp, false, &rig.cancel).await.unwrap();
    assert_eq!(
        std::fs::read_to_string(rig.repo.join(".env")).unwrap(),
        "SECRET=1\n",
        "never captured, so never touched"
    );
    assert_eq!(files_of(&rig.repo), before);
    assert_eq!(rig.git(&["symbolic-ref", "HEAD"]), "refs/heads/main");
    assert_eq!(done.files["kept"], json!([".env"]));
}

#[tokio::test]
async fn a_restore_that_would_overwrite_an_ignored_file_stops_and_names_it() {
    let rig = Rig::new();
    ignored_env(&rig);
    // `tracks` tracks a `.env` of its own; the point is taken there.
    rig.git(&["switch", "-q", "-c", "tracks"]);
    std::fs::remove_file(rig.repo.join(".env")).unwrap();
    rig.git(&["rm", "-q", "--cached", ".gitignore"]);
    std::fs::remove_file(rig.repo.join(".gitignore")).unwrap();
    rig.fx.commit(&rig.repo, ".env", "TRACKED=1\n", "track env");
    let main = rig.git(&["rev-parse", "main"]);
    let record = rig
        .execute(
            "branch",
            json!({"name": "back", "startPoint": main, "checkout": true}),
        )
        .await;
    assert_eq!(record.status, Status::Completed, "{record:?}");
    assert!(
        !rig.repo.join(".env").exists(),
        "git removed the tracked file"
    );
    // Made afresh after the write, ignored on `back`: no restore point holds it.
    rig.fx.write(&rig.repo, ".env", "NEW SECRET\n");
    let points = point_ids(&rig);
    let head = rig.git(&["symbolic-ref", "HEAD"]);
    let rp = record.result.unwrap().restore_point_id.unwrap();
    let refused = rig.exec.restore(&rp, true, &rig.cancel).await;
    let message = refused.expect_err("the restore must stop").to_string();
    assert!(message.contains(".env"), "{message}");
    assert!(message.contains("move them aside"), "{message}");
    assert_eq!(
        std::fs::read_to_string(rig.repo.join(".env")).unwrap(),
        "NEW SECRET\n"
    );
    assert_eq!(rig.git(&["symbolic-ref", "HEAD"]), head, "nothing changed");
    assert_eq!(
        point_ids(&rig),
        points,
        "no restore point is left for a restore that did not happen"
    );
    // Moved aside, the restore goes through.
    std::fs::rename(rig.repo.join(".env"), rig.fx.path("aside.env")).unwrap();
    rig.exec.restore(&rp, true, &rig.cancel).await.unwrap();
    assert_eq!(
        std::fs::read_to_string(rig.repo.join(".env")).unwrap(),
        "TRACKED=1\n"
    );
}

#[tokio::test]
async fn a_patch_of_ignored_files_is_undone_by_its_restore_point() {
    let rig = Rig::new();
    ignored_env(&rig);
    let before = files_of(&rig.repo);
    let patch = "--- a/.env\n+++ b/.env\n@@ -1 +1 @@\n-SECRET=1\n+SECRET=2\n\
                 --- /dev/null\n+++ b/new.env\n@@ -0,0 +1 @@\n+CREATED=1\n";
    let record = rig.execute("patch", json!({"patchContent": patch})).await;
    assert_eq!(record.status, Status::Completed, "{record:?}");
    assert_eq!(
        std::fs::read_to_string(rig.repo.join(".env")).unwrap(),
        "SECRET=2\n"
    );
    assert!(rig.repo.join("new.env").exists());
    let rp = record.result.unwrap().restore_point_id.unwrap();
    // Nothing moved since the write: no confirmation needed.
    let done = rig.exec.restore(&rp, false, &rig.cancel).await.unwrap();
    assert_eq!(
        files_of(&rig.repo),
        before,
        "the patched ignored files come back"
    );
    // The restore's own point holds them too: undoing the restore patches them again.
    rig.exec
        .restore(&done.restore_point_id, false, &rig.cancel)
        .await
        .unwrap();
    assert_eq!(
        std::fs::read_to_string(rig.repo.join("new.env")).unwrap(),
        "CREATED=1\n"
    );
}

#[tokio::test]
async fn a_plan_rolled_back_after_patching_an_ignored_file_puts_it_back() {
    let rig = Rig::new();
    ignored_env(&rig);
    let before = files_of(&rig.repo);
    let env = "--- a/.env\n+++ b/.env\n@@ -1 +1 @@\n-SECRET=1\n+SECRET=2\n";
    let fails = "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-not there\n+x\n";
    let steps = json!([
        {"operationType": "patch", "patchContent": env},
        {"operationType": "patch", "patchContent": fails},
    ]);
    let record = rig.execute("plan", json!({ "steps": steps })).await;
    assert_eq!(record.status, Status::Failed, "{record:?}");
    let result = super::exec_history::result(&record);
    assert_eq!(result["failure"], "rolledBack", "{result}");
    assert_eq!(files_of(&rig.repo), before, "the ignored file is back");
}
