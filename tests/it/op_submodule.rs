//! `submodulePointer` end to end: `record` through a real gateway commits exactly what
//! `git commit -- <submodule>` would and its restore point puts every byte back; `return`
//! checks out the recorded commit detached and says a restore cannot undo it; a moved
//! pointer or a wrong expected OID is `stale`; a submodule not checked out is refused.

use gitward::gateway::api::{FailureKind, Status};
use serde_json::json;

use crate::common::Fixture;
use crate::exec_ops::Rig;
use crate::op_setup::drifted;
use crate::op_support::{bytes, card, history, restore};
use crate::operation_e2e::Gateway;

#[test]
fn operation_preview_submodule_pointer_record_matches_plain_git_and_restores_every_byte() {
    let fx = Fixture::new();
    let top = fx.init("top", &[]);
    fx.commit(&top, "README", "top\n", "top");
    let (first, second) = drifted(&fx, &top, "src/lib");
    // Staged work of the parent stays staged: only the gitlink is committed.
    fx.write(&top, "staged.txt", "staged, not committed\n");
    fx.git(&top, &["add", "staged.txt"]);
    let twin = fx.path("twin");
    std::process::Command::new("cp")
        .args(["-a"])
        .arg(&top)
        .arg(&twin)
        .status()
        .unwrap();
    let before = bytes(&fx, &top);
    let gateway = Gateway::start(&fx, &[]);
    let mut sidecar = gateway.sidecar(&fx);

    let proposed = sidecar.call(
        "operation.preview.submodulePointer",
        json!({"repoPath": top, "reason": "lib v2 is tested", "action": "record",
               "parentPath": "", "relativePath": "libs/lib", "message": "Bump lib to v2",
               "expectedRecordedOid": first, "expectedCheckedOutOid": second}),
    );
    let id = proposed["previewId"].as_str().unwrap().to_owned();
    let shown = card(&gateway, &id);
    let preview = &shown["preview"];
    assert_eq!(preview["oldPointer"], first, "{shown}");
    assert_eq!(preview["newPointer"], second);
    assert_eq!(preview["drift"], json!({"ahead": 1, "behind": 0}));
    assert_eq!(preview["restoreCoversSubmodule"], true);
    assert_eq!(shown["risk"], "medium");
    gateway.human_post(
        &format!("api/proposals/{id}/approve"),
        json!({"confirmDestructive": false}),
    );
    let done = crate::operation_e2e::settle(&mut sidecar, &id);
    assert_eq!(done["status"], "completed", "{done}");
    let result = &done["data"]["result"];
    assert_eq!(result["commitSha"], fx.git(&top, &["rev-parse", "HEAD"]));
    assert_eq!(result["newPointer"], second);

    fx.git(
        &twin,
        &["commit", "-q", "-m", "Bump lib to v2", "--", "libs/lib"],
    );
    // The author date is the moment of the commit; everything else is plain git's.
    let (ours, theirs) = (history(&fx, &top, "HEAD~1"), history(&fx, &twin, "HEAD~1"));
    for key in ["index", "status", "head"] {
        assert_eq!(ours[key], theirs[key], "{key}");
    }
    let last = ["log", "-1", "--format=%T %P %s|%an"];
    assert_eq!(fx.git(&top, &last), fx.git(&twin, &last));
    assert_eq!(
        fx.git(&top, &["ls-tree", "HEAD", "libs/lib"]),
        format!("160000 commit {second}\tlibs/lib")
    );
    assert!(
        fx.git(&top, &["status", "--porcelain"])
            .contains("A  staged.txt")
    );

    let (status, restored) = restore(&gateway, result["restorePointId"].as_str().unwrap());
    assert_eq!(status, 200, "{restored}");
    assert_eq!(bytes(&fx, &top), before);
}

#[tokio::test]
async fn return_checks_out_the_recorded_commit_detached_and_says_restore_cannot_undo_it() {
    let rig = Rig::new();
    let (first, second) = drifted(&rig.fx, &rig.repo, "src/lib");
    let sub = rig.repo.join("libs/lib");
    let fields = json!({"action": "return", "relativePath": "libs/lib"});
    let id = rig.propose("submodulePointer", fields).await.unwrap();
    let preview = rig.exec.preview(&id, &rig.cancel).await.unwrap();
    assert_eq!(preview["checkedOutBefore"], second, "{preview}");
    assert_eq!(preview["checkedOutAfter"], first);
    assert_eq!(preview["drift"], json!({"ahead": 1, "behind": 0}));
    assert_eq!(preview["restoreCoversSubmodule"], false);
    let head = rig.git(&["rev-parse", "HEAD"]);
    rig.approve(&id);
    let record = rig.run(&id).await;
    assert_eq!(record.status, Status::Completed, "{record:?}");
    let r = record.result.unwrap();
    assert_eq!(r.fields["checkedOutOid"], first, "{:?}", r.fields);
    assert_eq!(r.fields["restoreCoversSubmodule"], false);
    assert!(
        r.fields["restoreNote"]
            .as_str()
            .unwrap()
            .contains("checkedOutBefore")
    );
    assert_eq!(rig.fx.git(&sub, &["rev-parse", "HEAD"]), first);
    // Detached, as `git submodule update` leaves it; the parent did not move.
    assert!(
        rig.fx
            .git_output(&sub, &["symbolic-ref", "-q", "HEAD"])
            .stdout
            .is_empty()
    );
    assert_eq!(rig.git(&["rev-parse", "HEAD"]), head);
    assert_eq!(rig.git(&["status", "--porcelain"]), "");
}

#[tokio::test]
async fn a_moved_pointer_or_a_wrong_expected_oid_is_stale() {
    let rig = Rig::new();
    let (first, second) = drifted(&rig.fx, &rig.repo, "src/lib");
    let wrong = rig
        .propose(
            "submodulePointer",
            json!({"action": "return", "relativePath": "libs/lib",
                   "expectedRecordedOid": second}),
        )
        .await
        .unwrap_err();
    assert!(wrong.contains("recordedOid"), "{wrong}");

    let id = rig
        .propose(
            "submodulePointer",
            json!({"action": "record", "relativePath": "libs/lib", "message": "Bump",
                   "expectedRecordedOid": first, "expectedCheckedOutOid": second}),
        )
        .await
        .unwrap();
    // Someone records the pointer by hand meanwhile.
    rig.git(&["commit", "-q", "-m", "by hand", "--", "libs/lib"]);
    let head = rig.git(&["rev-parse", "HEAD"]);
    rig.approve(&id);
    let record = rig.run(&id).await;
    assert_eq!(record.status, Status::Failed, "{record:?}");
    let r = record.result.unwrap();
    assert_eq!(r.failure, Some(FailureKind::Stale));
    let moved = r.fields["moved"].to_string();
    assert!(
        moved.contains("recordedOid") && moved.contains("parentHead"),
        "{moved}"
    );
    assert_eq!(rig.git(&["rev-parse", "HEAD"]), head);
}

#[tokio::test]
async fn a_submodule_not_checked_out_is_refused_naming_the_field() {
    let rig = Rig::new();
    drifted(&rig.fx, &rig.repo, "src/lib");
    rig.git(&["submodule", "deinit", "-q", "-f", "libs/lib"]);
    let err = rig
        .propose(
            "submodulePointer",
            json!({"action": "return", "relativePath": "libs/lib"}),
        )
        .await
        .unwrap_err();
    assert!(
        err.contains("relativePath") && err.contains("not checked out"),
        "{err}"
    );
    let id = rig
        .propose(
            "submodulePointer",
            json!({"action": "record", "relativePath": "README", "message": "m"}),
        )
        .await;
    assert!(id.is_err(), "{id:?}");
}
