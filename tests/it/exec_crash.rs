//! A real crash at each named execution point (`GITWARD_DEBUG_CRASH_AT`, development
//! builds only): a child process runs the executor and aborts there, like `kill -9`; the
//! parent then reconciles. Nothing is lost, nothing runs twice, nothing stays
//! `executing`, and a restore point taken before the crash puts the repository back.

use std::path::PathBuf;
use std::sync::Arc;

use gitward::config::Config;
use gitward::gateway::api::{FailureKind, Status};
use gitward::gateway::server::executor::Executor;
use gitward::gateway::server::restore;
use gitward::gateway::server::store::Settings;
use gitward::operation::crash;
use jiff::Timestamp;
use serde_json::json;
use tokio_util::sync::CancellationToken;

use super::exec_ops::Rig;
use super::exec_restore::claimed_commit;

const CHILD: &str = "GITWARD_TEST_CRASH_CHILD";

/// The child's side: runs one approved proposal with the paths the parent handed over.
/// Does nothing when started by the ordinary test run.
#[tokio::test]
async fn child_runs_one_proposal() {
    let Ok(spec) = std::env::var(CHILD) else {
        return;
    };
    let spec: serde_json::Value = serde_json::from_str(&spec).unwrap();
    let config = Config {
        allowed_roots: vec![PathBuf::from(spec["root"].as_str().unwrap())],
        ..Config::default()
    };
    let exec = Executor::new(
        spec["db"].as_str().unwrap(),
        Settings::default(),
        Arc::new(config),
    );
    let id = spec["id"].as_str().unwrap();
    exec.run(id, &CancellationToken::new()).await.unwrap();
}

/// Runs proposal `id` in a child that aborts at `point`; asserts that it did crash.
fn crash_at(rig: &Rig, id: &str, point: &str) {
    let spec = json!({"root": rig.fx.root(), "db": rig.db, "id": id});
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "exec_crash::child_runs_one_proposal",
            "--test-threads=1",
        ])
        .env(CHILD, spec.to_string())
        .env(crash::VAR, point)
        .output()
        .unwrap();
    assert!(
        !out.status.success(),
        "the child should have aborted at {point}: {}",
        String::from_utf8_lossy(&out.stdout)
    );
}

#[tokio::test]
async fn a_crash_at_each_point_is_reconciled_never_rerun() {
    for (point, completed, with_point) in [
        (crash::AFTER_INTENT, false, false),
        (crash::AFTER_RESTORE_POINT, false, true),
        (crash::MID_WRITE, false, true),
        (crash::AFTER_WRITE, true, true),
    ] {
        let rig = Rig::new();
        rig.fx.write(&rig.repo, "a.txt", "changed\n");
        rig.fx.write(&rig.repo, "new.txt", "new\n");
        let index = std::fs::read(rig.repo.join(".git/index")).unwrap();
        let head = rig.git(&["rev-parse", "HEAD"]);
        let id = rig
            .propose("commit", json!({"message": "m", "stageAll": true}))
            .await
            .unwrap();
        rig.approve(&id);
        crash_at(&rig, &id, point);
        let stuck = rig.store().get(&id, jiff::Timestamp::now()).unwrap();
        assert_eq!(stuck.status, Status::Executing, "{point}");
        let ended = rig.exec.reconcile_at_start(&rig.cancel).await.unwrap();
        assert_eq!(ended.len(), 1, "{point}");
        let record = &ended[0];
        let result = record.result.as_ref().unwrap();
        assert_eq!(
            result.restore_point_id.is_some(),
            with_point,
            "{point}: {result:?}"
        );
        if completed {
            assert_eq!(record.status, Status::Completed, "{point}");
            assert_eq!(result.fields["commitSha"], rig.git(&["rev-parse", "HEAD"]));
            assert_eq!(rig.git(&["rev-parse", "HEAD~1"]), head);
        } else {
            assert_eq!(record.status, Status::Failed, "{point}");
            assert_eq!(result.failure, Some(FailureKind::Interrupted), "{point}");
            assert_eq!(
                rig.git(&["rev-parse", "HEAD"]),
                head,
                "{point}: nothing committed"
            );
        }
        // Never executed again, and nothing left executing.
        assert!(rig.exec.run(&id, &rig.cancel).await.is_err());
        assert!(
            rig.exec
                .reconcile_at_start(&rig.cancel)
                .await
                .unwrap()
                .is_empty()
        );
        if point == crash::MID_WRITE {
            // Staged but not committed: the restore point puts the index back.
            assert_ne!(std::fs::read(rig.repo.join(".git/index")).unwrap(), index);
            let rp = result.restore_point_id.clone().unwrap();
            rig.exec.restore(&rp, true, &rig.cancel).await.unwrap();
            assert_eq!(std::fs::read(rig.repo.join(".git/index")).unwrap(), index);
        }
    }
}

/// Refs of restore point `id` in `repo`, as a crash after they were written and before
/// the point's record was leaves them.
fn refs_without_record(rig: &Rig, repo: &std::path::Path, id: &str) {
    let name = format!("refs/gitward/restore/{id}/HEAD");
    rig.fx.git(repo, &["update-ref", &name, "HEAD"]);
}

fn point_refs(rig: &Rig, repo: &std::path::Path) -> String {
    let listed = [
        "for-each-ref",
        "--format=%(refname)",
        "refs/gitward/restore/",
    ];
    rig.fx.git(repo, &listed)
}

#[tokio::test]
async fn points_noted_before_a_crash_are_settled_in_every_repository() {
    let rig = Rig::new();
    rig.fx.write(&rig.repo, "a.txt", "changed\n");
    let (lost, kept) = (rig.twin("lost"), rig.twin("kept"));
    let fields = json!({"message": "m", "stageAll": true});
    let (id, mut store, intent) = claimed_commit(&rig, &fields).await;
    let ids: Vec<String> = (0..3).map(|_| restore::new_id(Timestamp::now())).collect();
    // The proposal's own point and the first further one got as far as their refs; the
    // second further one was recorded, and then the intent record was not updated.
    refs_without_record(&rig, &rig.repo, &ids[0]);
    refs_without_record(&rig, &lost, &ids[1]);
    let kept_repo = gitward::git::repo::open(
        rig.exec.config(),
        "repoPath",
        &kept.display().to_string(),
        &rig.cancel,
    )
    .await
    .unwrap();
    let what = restore::Capture {
        refs: &["refs/heads/main".to_owned()],
        paths: &[],
        config: &[],
        preview_id: Some(&id),
        operation_type: Some("commit"),
        caps: &restore::Caps::default(),
    };
    let steps = restore::Steps::default();
    let now = Timestamp::now();
    restore::take_as(
        &mut store,
        &kept_repo,
        &rig.cancel,
        &ids[2],
        &what,
        now,
        &steps,
    )
    .await
    .unwrap();
    let other = |path: &std::path::Path, pending: &str| {
        json!({"repoPath": path, "intent": null, "restorePointPending": pending,
               "restorePointId": null})
    };
    let record = json!({
        "phase": "intent",
        "repoPath": rig.repo,
        "intent": intent,
        "restorePointPending": ids[0],
        "others": [other(&lost, &ids[1]), other(&kept, &ids[2])],
    });
    store.update_intent(&id, &record, Timestamp::now()).unwrap();

    let ended = rig.exec.reconcile_at_start(&rig.cancel).await.unwrap();
    let result = ended[0].result.as_ref().unwrap();
    assert_eq!(result.failure, Some(FailureKind::Interrupted), "{result:?}");
    assert_eq!(result.restore_point_id, None);
    let listed: Vec<&serde_json::Value> = result.fields["restorePoints"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| &p["restorePointId"])
        .collect();
    assert_eq!(listed, [&json!(null), &json!(null), &json!(ids[2])]);
    assert_eq!(point_refs(&rig, &rig.repo), "");
    assert_eq!(point_refs(&rig, &lost), "");
    assert!(point_refs(&rig, &kept).contains(&ids[2]));
}
