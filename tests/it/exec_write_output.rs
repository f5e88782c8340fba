//! Writes report what git did: a commit whose output passes the cap on what is kept is
//! read to the end and `completed`, and a patch applied to the index goes through when
//! the index's stat data went stale, as after `git status`.

use gitward::gateway::api::Status;
use serde_json::json;

use super::exec_ops::Rig;

#[tokio::test]
async fn a_commit_whose_output_passes_the_cap_completes() {
    let rig = Rig::new();
    // About 60 bytes of `create mode …` per file: 6,000 files print well over the
    // 256 KiB a write keeps.
    let dir = rig.repo.join("generated-files-with-long-names");
    std::fs::create_dir_all(&dir).unwrap();
    for i in 0..6_000 {
        let name = format!("a-file-whose-name-is-long-enough-{i:05}.txt");
        std::fs::write(dir.join(name), format!("{i}\n")).unwrap();
    }
    let record = rig
        .execute("commit", json!({"message": "many", "stageAll": true}))
        .await;
    assert_eq!(record.status, Status::Completed, "{record:?}");
    let result = record.result.unwrap();
    assert_eq!(result.fields["commitSha"], rig.git(&["rev-parse", "HEAD"]));
    let files = rig.git(&["ls-tree", "-r", "--name-only", "HEAD"]);
    assert_eq!(files.lines().count(), 6_002);
    assert_eq!(rig.git(&["status", "--porcelain"]), "");
}

#[tokio::test]
async fn a_patch_to_the_index_applies_over_stale_stat_data_as_after_git_status() {
    let rig = Rig::new();
    // Same bytes, new modification time: only the stat data went stale.
    let file = std::fs::OpenOptions::new()
        .write(true)
        .open(rig.repo.join("a.txt"))
        .unwrap();
    let later = std::time::SystemTime::now() + std::time::Duration::from_secs(3600);
    file.set_modified(later).unwrap();
    drop(file);
    let patch = "--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,2 @@\n one\n-two\n+TWO\n";
    let record = rig
        .execute(
            "patch",
            json!({"patchContent": patch, "applyToIndex": true}),
        )
        .await;
    assert_eq!(record.status, Status::Completed, "{record:?}");
    assert_eq!(rig.git(&["show", ":a.txt"]), "one\nTWO");
    assert_eq!(
        std::fs::read_to_string(rig.repo.join("a.txt")).unwrap(),
        "one\nTWO\n"
    );
    assert_eq!(rig.git(&["status", "--porcelain"]), "M  a.txt");
}
