//! The store's lifecycle against real SQLite files in temporary directories.

use std::path::PathBuf;
use std::time::Duration;

use jiff::Timestamp;
use serde_json::{Map, json};

use super::*;
use crate::gateway::api::{FailureKind, OperationResult};

pub(super) fn at(secs: i64) -> Timestamp {
    Timestamp::from_second(1_790_000_000 + secs).unwrap()
}

pub(super) fn pid(n: u32) -> String {
    format!("00000000-0000-4000-8000-{n:012x}")
}

pub(super) fn proposal(agent: &str, key: Option<&str>, target: &str) -> Proposal {
    let mut fields = Map::new();
    fields.insert("sourceRef".into(), json!("feature"));
    fields.insert("targetRef".into(), json!(target));
    Proposal {
        preview_id: Some(uuid::Uuid::new_v4().to_string()),
        agent_id: agent.into(),
        operation_type: "merge".into(),
        repo_path: Some("/abs/repo".into()),
        reason: "ship it".into(),
        requested_at: "2026-05-28T11:42:09.512Z".into(),
        idempotency_key: key.map(str::to_owned),
        fields,
    }
}

pub(super) fn settings() -> Settings {
    Settings {
        expiry: Duration::from_secs(60),
        max_pending_per_agent: 3,
        ..Settings::default()
    }
}

pub(crate) fn db(dir: &tempfile::TempDir) -> PathBuf {
    dir.path().join("gateway").join("gateway.db")
}

pub(crate) fn fresh() -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&db(&dir), settings()).unwrap();
    (dir, store)
}

pub(crate) fn new_pending(store: &mut Store, n: u32, agent: &str) -> StatusRecord {
    match store.insert(&pid(n), &proposal(agent, None, "main"), at(0)) {
        Ok(Inserted::New(r)) => r,
        other => panic!("{other:?}"),
    }
}

fn conflict(result: Result<StatusRecord, StoreError>) -> Status {
    match result {
        Err(StoreError::Conflict { current_state }) => current_state,
        other => panic!("expected a conflict, got {other:?}"),
    }
}

fn done(commit: &str) -> OperationResult {
    let mut fields = Map::new();
    fields.insert("commitSha".into(), json!(commit));
    OperationResult {
        failure: None,
        restore_point_id: Some("rp_1".into()),
        fields,
    }
}

#[test]
fn a_new_proposal_is_pending_with_its_deadline() {
    let (_dir, mut store) = fresh();
    let r = new_pending(&mut store, 1, "claude-code");
    assert_eq!(r.preview_id, pid(1));
    assert_eq!(r.status, Status::Pending);
    assert_eq!(r.created_at, "2026-09-21T14:13:20.000Z");
    assert_eq!(r.expires_at, "2026-09-21T14:14:20.000Z");
    assert_eq!(
        (r.decided_at.clone(), r.decided_by, r.result.clone()),
        (None, None, None)
    );
    assert_eq!(store.get(&pid(1), at(1)).unwrap(), r);
    let stored = store.proposal(&pid(1)).unwrap();
    assert_eq!(
        stored.proposal,
        proposal("claude-code", None, "main").with_hint(&stored)
    );
}

impl Proposal {
    /// The same proposal with the id hint the stored one carries (a fresh one per call).
    fn with_hint(mut self, stored: &StoredProposal) -> Proposal {
        self.preview_id = stored.proposal.preview_id.clone();
        self
    }
}

#[test]
fn the_happy_path_runs_through_every_state_and_keeps_its_history() {
    let (_dir, mut store) = fresh();
    new_pending(&mut store, 1, "claude-code");
    let approved = store.approve(&pid(1), Channel::Web, at(5)).unwrap();
    assert_eq!(approved.status, Status::Approved);
    assert_eq!(approved.decided_by.map(|d| d.channel), Some(Channel::Web));
    assert_eq!(
        approved.decided_at.as_deref(),
        Some("2026-09-21T14:13:25.000Z")
    );
    let intent = json!({"pre": {"refs/heads/main": "a"}, "post": null});
    store.claim(&pid(1), &intent, at(6)).unwrap();
    let running = store.list_executing().unwrap();
    assert_eq!(running.len(), 1);
    assert_eq!(running[0].intent.as_ref(), Some(&intent));
    let finished = store.complete(&pid(1), &done("9a8b"), at(7)).unwrap();
    assert_eq!(finished.status, Status::Completed);
    assert_eq!(finished.result, Some(done("9a8b")));
    // Leaving pending set decidedAt; later moves keep it.
    assert_eq!(finished.decided_at, approved.decided_at);
    let moves: Vec<_> = store
        .history(&pid(1))
        .unwrap()
        .into_iter()
        .map(|t| (t.from, t.to, t.channel))
        .collect();
    assert_eq!(
        moves,
        [
            (None, Status::Pending, None),
            (Some(Status::Pending), Status::Approved, Some(Channel::Web)),
            (Some(Status::Approved), Status::Executing, None),
            (Some(Status::Executing), Status::Completed, None),
        ]
    );
    assert!(store.list_executing().unwrap().is_empty());
}

#[test]
fn every_transition_is_a_compare_and_set_on_the_old_state() {
    let (_dir, mut store) = fresh();
    new_pending(&mut store, 1, "a");
    assert_eq!(
        conflict(store.claim(&pid(1), &json!({}), at(1))),
        Status::Pending
    );
    assert_eq!(
        conflict(store.complete(&pid(1), &done("x"), at(1))),
        Status::Pending
    );
    store.approve(&pid(1), Channel::Tty, at(1)).unwrap();
    assert_eq!(
        conflict(store.approve(&pid(1), Channel::Web, at(2))),
        Status::Approved
    );
    assert_eq!(
        conflict(store.reject(&pid(1), Channel::Web, None, at(2))),
        Status::Approved
    );
    assert_eq!(
        conflict(store.cancel(&pid(1), "a", at(2))),
        Status::Approved
    );
    // An approved proposal never expires: approval stopped the clock.
    assert!(store.expire_due(at(1000)).unwrap().is_empty());
    assert_eq!(
        store.get(&pid(1), at(1000)).unwrap().status,
        Status::Approved
    );
    let history = store.history(&pid(1)).unwrap();
    assert_eq!(
        history.len(),
        2,
        "refused moves leave no trace: {history:?}"
    );
}

#[test]
fn reject_keeps_the_reason_and_is_never_an_expiry() {
    let (_dir, mut store) = fresh();
    new_pending(&mut store, 1, "a");
    let r = store
        .reject(&pid(1), Channel::Web, Some("not now"), at(3))
        .unwrap();
    assert_eq!(r.status, Status::Rejected);
    assert_eq!(r.reject_reason.as_deref(), Some("not now"));
    assert_eq!(
        store.get(&pid(1), at(500)).unwrap().status,
        Status::Rejected
    );
}

#[test]
fn only_the_proposing_agent_cancels_and_only_while_pending() {
    let (_dir, mut store) = fresh();
    new_pending(&mut store, 1, "claude-code");
    assert!(matches!(
        store.cancel(&pid(1), "codex", at(1)),
        Err(StoreError::NotOwner)
    ));
    assert_eq!(store.get(&pid(1), at(1)).unwrap().status, Status::Pending);
    let r = store.cancel(&pid(1), "claude-code", at(2)).unwrap();
    assert_eq!((r.status, r.decided_by), (Status::Cancelled, None));
    assert_eq!(
        conflict(store.cancel(&pid(1), "claude-code", at(3))),
        Status::Cancelled
    );
    // A stranger learns nothing about the state.
    assert!(matches!(
        store.cancel(&pid(1), "codex", at(3)),
        Err(StoreError::NotOwner)
    ));
}

#[test]
fn an_idempotent_retry_finds_the_first_proposal_and_other_arguments_are_refused() {
    let (_dir, mut store) = fresh();
    let first = store
        .insert(&pid(1), &proposal("a", Some("merge:k1"), "main"), at(0))
        .unwrap();
    assert!(matches!(first, Inserted::New(_)));
    // Same intent resent: a new id hint, a later send time, a reworded reason.
    let mut retry = proposal("a", Some("merge:k1"), "main");
    retry.requested_at = "2026-05-28T11:43:00.000Z".into();
    retry.reason = "ship it, again".into();
    let again = store.insert(&pid(2), &retry, at(5)).unwrap();
    assert_eq!(again, Inserted::Existing(first.record().clone()));
    // The retry finds it in whatever state it reached.
    store.approve(&pid(1), Channel::Web, at(6)).unwrap();
    let later = store.insert(&pid(3), &retry, at(7)).unwrap();
    assert_eq!(later.record().status, Status::Approved);
    assert_eq!(later.record().preview_id, pid(1));
    // Same key, other arguments: refused, naming no proposal.
    assert!(matches!(
        store.insert(&pid(4), &proposal("a", Some("merge:k1"), "develop"), at(8)),
        Err(StoreError::IdempotencyMismatch)
    ));
    // Another agent's key is its own: a new proposal, whatever the arguments.
    for (n, target) in [(6, "main"), (7, "develop")] {
        let theirs = proposal("b", Some("merge:k1"), target);
        let inserted = store.insert(&pid(n), &theirs, at(8));
        match (n, inserted) {
            (6, Ok(Inserted::New(r))) => assert_eq!(r.preview_id, pid(6)),
            (7, Err(StoreError::IdempotencyMismatch)) => {}
            (_, r) => panic!("{r:?}"),
        }
    }
    // The key is scoped to the operation type.
    let mut rebase = proposal("a", Some("merge:k1"), "main");
    rebase.operation_type = "rebase".into();
    assert!(matches!(
        store.insert(&pid(5), &rebase, at(9)),
        Ok(Inserted::New(_))
    ));
    assert!(matches!(
        store.get(&pid(4), at(9)),
        Err(StoreError::NotFound { .. })
    ));
}

#[test]
fn the_pending_cap_counts_live_pending_proposals_per_agent() {
    let (_dir, mut store) = fresh();
    for n in 1..=3 {
        new_pending(&mut store, n, "a");
    }
    match store.insert(&pid(4), &proposal("a", None, "main"), at(1)) {
        Err(StoreError::QuotaExceeded { agent_id, limit }) => {
            assert_eq!((agent_id.as_str(), limit), ("a", 3))
        }
        r => panic!("{r:?}"),
    }
    // Another agent has its own allowance; a decided proposal frees a place.
    assert!(
        store
            .insert(&pid(5), &proposal("b", None, "main"), at(1))
            .is_ok()
    );
    store.approve(&pid(1), Channel::Web, at(2)).unwrap();
    assert!(
        store
            .insert(&pid(6), &proposal("a", None, "main"), at(3))
            .is_ok()
    );
    assert!(
        store
            .insert(&pid(7), &proposal("a", None, "main"), at(3))
            .is_err()
    );
    // Proposals past their deadline do not count, even before the timer expired them.
    assert!(
        store
            .insert(&pid(8), &proposal("a", None, "main"), at(61))
            .is_ok()
    );
}

#[test]
fn the_timer_expires_due_proposals_as_expired_never_as_rejected() {
    let (_dir, mut store) = fresh();
    new_pending(&mut store, 1, "a");
    store
        .insert(&pid(2), &proposal("a", None, "main"), at(30))
        .unwrap();
    assert!(store.expire_due(at(59)).unwrap().is_empty());
    assert_eq!(store.expire_due(at(60)).unwrap(), [pid(1)]);
    let r = store.get(&pid(1), at(61)).unwrap();
    assert_eq!(r.status, Status::Expired);
    // It expired at its deadline, whenever the timer noticed.
    assert_eq!(r.decided_at.as_ref(), Some(&r.expires_at));
    assert_eq!((r.decided_by, r.reject_reason.clone()), (None, None));
    assert_eq!(store.get(&pid(2), at(61)).unwrap().status, Status::Pending);
    assert_eq!(store.list_pending(at(61), 10).unwrap().len(), 1);
    assert!(store.expire_due(at(61)).unwrap().is_empty());
}

#[test]
fn a_read_past_the_deadline_expires_the_proposal_once() {
    let (_dir, mut store) = fresh();
    new_pending(&mut store, 1, "a");
    assert_eq!(store.get(&pid(1), at(59)).unwrap().status, Status::Pending);
    assert_eq!(store.get(&pid(1), at(60)).unwrap().status, Status::Expired);
    assert_eq!(store.get(&pid(1), at(70)).unwrap().status, Status::Expired);
    let expiries = store
        .history(&pid(1))
        .unwrap()
        .into_iter()
        .filter(|t| t.to == Status::Expired)
        .count();
    assert_eq!(expiries, 1);
}

#[test]
fn a_decision_after_the_deadline_is_refused_and_the_expiry_recorded() {
    let (dir, mut store) = fresh();
    for n in 1..=3 {
        new_pending(&mut store, n, "a");
    }
    assert_eq!(
        conflict(store.approve(&pid(1), Channel::Web, at(60))),
        Status::Expired
    );
    assert_eq!(
        conflict(store.reject(&pid(2), Channel::Web, None, at(61))),
        Status::Expired
    );
    assert_eq!(
        conflict(store.cancel(&pid(3), "a", at(62))),
        Status::Expired
    );
    drop(store);
    let store = Store::open(&db(&dir), settings()).unwrap();
    for n in 1..=3 {
        let history = store.history(&pid(n)).unwrap();
        assert_eq!(history.last().map(|t| t.to), Some(Status::Expired), "{n}");
    }
}

#[test]
fn an_idempotent_retry_past_the_deadline_reports_the_expiry() {
    let (_dir, mut store) = fresh();
    store
        .insert(&pid(1), &proposal("a", Some("merge:k"), "main"), at(0))
        .unwrap();
    let again = store
        .insert(&pid(2), &proposal("a", Some("merge:k"), "main"), at(90))
        .unwrap();
    assert!(matches!(&again, Inserted::Existing(r) if r.status == Status::Expired));
}

#[test]
fn extending_moves_the_deadline_while_pending_only() {
    let (_dir, mut store) = fresh();
    new_pending(&mut store, 1, "a");
    new_pending(&mut store, 2, "a");
    let r = store
        .extend(&pid(1), Duration::from_secs(60), at(30))
        .unwrap();
    assert_eq!(r.expires_at, "2026-09-21T14:15:20.000Z");
    assert_eq!(
        store.approve(&pid(1), Channel::Web, at(90)).unwrap().status,
        Status::Approved
    );
    assert_eq!(
        conflict(store.extend(&pid(1), Duration::from_secs(60), at(91))),
        Status::Approved
    );
    assert_eq!(
        conflict(store.extend(&pid(2), Duration::from_secs(60), at(60))),
        Status::Expired
    );
}

#[test]
fn an_unbounded_expiry_or_extension_is_clamped_to_a_readable_time() {
    let dir = tempfile::tempdir().unwrap();
    let forever = Settings {
        expiry: Duration::MAX,
        ..settings()
    };
    let mut store = Store::open(&db(&dir), forever).unwrap();
    new_pending(&mut store, 1, "a");
    let r = store.get(&pid(1), at(1)).unwrap();
    assert_eq!(r.expires_at, "9999-12-30T22:00:00.000Z");
    let r = store.extend(&pid(1), Duration::MAX, at(2)).unwrap();
    assert_eq!(r.expires_at, "9999-12-30T22:00:00.000Z");
}

#[test]
fn completion_and_failure_results_must_match_the_state() {
    let (_dir, mut store) = fresh();
    new_pending(&mut store, 1, "a");
    store.approve(&pid(1), Channel::Web, at(1)).unwrap();
    store.claim(&pid(1), &json!({}), at(2)).unwrap();
    let mut failed = done("x");
    failed.failure = Some(FailureKind::Stale);
    assert!(matches!(
        store.complete(&pid(1), &failed, at(3)),
        Err(StoreError::Invalid { .. })
    ));
    assert!(matches!(
        store.fail(&pid(1), &done("x"), at(3)),
        Err(StoreError::Invalid { .. })
    ));
    let r = store.fail(&pid(1), &failed, at(3)).unwrap();
    assert_eq!(r.status, Status::Failed);
    assert_eq!(r.result.and_then(|r| r.failure), Some(FailureKind::Stale));
}

#[test]
fn reconciliation_ends_executing_proposals_without_rerunning_them() {
    let (_dir, mut store) = fresh();
    for n in 1..=2 {
        new_pending(&mut store, n, "a");
        store.approve(&pid(n), Channel::Web, at(1)).unwrap();
        store.claim(&pid(n), &json!({"n": n}), at(2)).unwrap();
    }
    store
        .update_intent(&pid(2), &json!({"n": 2, "post": "b"}), at(3))
        .unwrap();
    let found = store.list_executing().unwrap();
    let intents: Vec<_> = found.iter().map(|e| e.intent.clone()).collect();
    assert_eq!(
        intents,
        [Some(json!({"n": 1})), Some(json!({"n": 2, "post": "b"}))]
    );
    let ok = store
        .reconcile(&pid(1), &Reconciled::Completed(done("c")), at(4))
        .unwrap();
    assert_eq!(
        (ok.status, ok.result.clone()),
        (Status::Completed, Some(done("c")))
    );
    let broken = store
        .reconcile(&pid(2), &Reconciled::Interrupted(done("c")), at(4))
        .unwrap();
    assert_eq!(broken.status, Status::Failed);
    let result = broken.result.unwrap();
    assert_eq!(result.failure, Some(FailureKind::Interrupted));
    assert_eq!(result.restore_point_id.as_deref(), Some("rp_1"));
    assert_eq!(
        conflict(store.reconcile(&pid(2), &Reconciled::Completed(done("c")), at(5))),
        Status::Failed
    );
    assert!(matches!(
        store.update_intent(&pid(2), &json!({}), at(5)),
        Err(StoreError::Conflict {
            current_state: Status::Failed
        })
    ));
    let note = store.history(&pid(2)).unwrap().pop().and_then(|t| t.note);
    assert_eq!(note.as_deref(), Some("reconciled after restart"));
}

#[test]
fn unknown_ids_and_non_canonical_ids_are_refused() {
    let (_dir, mut store) = fresh();
    assert!(matches!(
        store.get(&pid(9), at(0)),
        Err(StoreError::NotFound { .. })
    ));
    assert!(matches!(
        store.approve(&pid(9), Channel::Web, at(0)),
        Err(StoreError::NotFound { .. })
    ));
    for bad in ["", "1F3C5B9A-0C1D-4E2F-8A9B-0123456789AB", "../x"] {
        let r = store.insert(bad, &proposal("a", None, "main"), at(0));
        assert!(
            matches!(
                r,
                Err(StoreError::Invalid {
                    field: "previewId",
                    ..
                })
            ),
            "{bad}"
        );
    }
    new_pending(&mut store, 1, "a");
    assert!(matches!(
        store.insert(&pid(1), &proposal("a", None, "main"), at(0)),
        Err(StoreError::Sqlite(_))
    ));
}

#[test]
fn lists_show_the_queue_and_the_history_and_the_transition_log_is_ordered() {
    let (_dir, mut store) = fresh();
    for n in 1..=3 {
        new_pending(&mut store, n, "a");
    }
    store.reject(&pid(2), Channel::Web, None, at(5)).unwrap();
    store.approve(&pid(3), Channel::Web, at(6)).unwrap();
    let queue: Vec<_> = store
        .list_pending(at(7), 10)
        .unwrap()
        .into_iter()
        .map(|r| r.preview_id)
        .collect();
    assert_eq!(queue, [pid(1)]);
    let history: Vec<_> = store
        .list_history(10)
        .unwrap()
        .into_iter()
        .map(|r| r.preview_id)
        .collect();
    assert_eq!(history, [pid(3), pid(2)]);
    assert_eq!(store.list_in(Status::Approved).unwrap().len(), 1);
    let all = store.transitions_after(0, 100).unwrap();
    assert_eq!(all.len(), 5);
    assert!(all.windows(2).all(|w| w[0].seq < w[1].seq));
    let tail = store.transitions_after(all[2].seq, 100).unwrap();
    assert_eq!(tail, all[3..]);
    assert_eq!(store.transitions_after(0, 2).unwrap(), all[..2]);
}

#[test]
fn restore_points_are_kept_per_repository_newest_first() {
    let (_dir, mut store) = fresh();
    new_pending(&mut store, 1, "a");
    let point = |id: &str, repo: &str, secs| RestorePoint {
        id: id.into(),
        repo_path: repo.into(),
        preview_id: Some(pid(1)),
        operation_type: Some("merge".into()),
        created_at: at(secs),
        captured: json!({"refs": ["HEAD"], "index": true}),
        skipped: json!([{"path": "big.bin", "why": "size"}]),
    };
    store
        .insert_restore_point(&point("rp_a", "/r1", 1))
        .unwrap();
    store
        .insert_restore_point(&point("rp_b", "/r1", 2))
        .unwrap();
    store
        .insert_restore_point(&point("rp_c", "/r2", 3))
        .unwrap();
    assert_eq!(
        store.restore_point("rp_a").unwrap(),
        Some(point("rp_a", "/r1", 1))
    );
    assert_eq!(store.restore_point("rp_zz").unwrap(), None);
    let ids: Vec<_> = store
        .list_restore_points("/r1", 10)
        .unwrap()
        .into_iter()
        .map(|p| p.id)
        .collect();
    assert_eq!(ids, ["rp_b", "rp_a"]);
    assert!(
        store
            .insert_restore_point(&point("rp_a", "/r1", 4))
            .is_err()
    );
    for bad in ["rp_", "x_1", "rp_a/b", "rp_../x", "rp_a b"] {
        assert!(
            matches!(
                store.insert_restore_point(&point(bad, "/r1", 5)),
                Err(StoreError::Invalid { .. })
            ),
            "{bad}"
        );
    }
    let mut unknown = point("rp_d", "/r1", 5);
    unknown.preview_id = Some(pid(99));
    assert!(
        store.insert_restore_point(&unknown).is_err(),
        "a restore point names a real proposal"
    );
    assert!(store.delete_restore_point("rp_a").unwrap());
    assert!(!store.delete_restore_point("rp_a").unwrap());
}
