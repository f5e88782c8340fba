//! A plan's steps pinned from one shared read of the repository (HEAD, the index and one
//! git run for every name, tree and merge base): each step's pins are exactly those the
//! step records when proposed alone (a plan keeps them up to its first step that moves a
//! ref; later steps start from the state the steps before leave), a refusal still names
//! its step, and anything that moves after the read fails the plan `stale`.

use gitward::config::Config;
use gitward::operation::{Ctx, OpError, plan};
use serde_json::{Value, json};

use super::exec_history::{history, moved, result, snapshot};
use super::exec_ops::Rig;

fn merge(source: &str) -> Value {
    json!({"operationType": "merge", "sourceRef": source, "targetRef": "main"})
}

fn reset(target: &str) -> Value {
    json!({"operationType": "reset", "targetRef": target, "mode": "mixed"})
}

fn pins(rig: &Rig, id: &str) -> Value {
    rig.store().pins(id).unwrap().unwrap()
}

/// The steps' pins as the shared read answers them, `None` when the steps pin themselves.
async fn shared_results(rig: &Rig, steps: &[Value]) -> Option<Vec<Result<Value, OpError>>> {
    let config = Config {
        allowed_roots: vec![rig.fx.root()],
        ..Config::default()
    };
    let path = rig.repo.display().to_string();
    let repo = gitward::git::repo::open(&config, "repoPath", &path, &rig.cancel)
        .await
        .unwrap();
    let ctx = Ctx {
        repo: &repo,
        config: &config,
        cancel: &rig.cancel,
    };
    let fields = json!({ "steps": steps }).as_object().unwrap().clone();
    let steps = plan::steps(&fields).unwrap();
    plan::shared::pin(ctx, &steps).await
}

async fn shared_read(rig: &Rig, steps: &[Value]) -> Option<Value> {
    let read = shared_results(rig, steps).await?;
    Some(Value::Array(read.into_iter().map(Result::unwrap).collect()))
}

/// Proposes `steps` as a plan, then each step alone, and compares the pins: the shared
/// read answers every step as it would alone, and the plan's steps up to the first that
/// moves a ref (later ones start from the state the steps before leave) came from it.
async fn pinned_as_alone(rig: &Rig, steps: &[Value]) {
    let id = rig
        .propose("plan", json!({ "steps": steps }))
        .await
        .unwrap();
    let plan = pins(rig, &id);
    let shared = shared_read(rig, steps).await.unwrap();
    assert_eq!(plan["steps"].as_array().unwrap().len(), steps.len());
    let live = steps
        .iter()
        .position(|s| s["operationType"] != "discard" && s["operationType"] != "patch")
        .map_or(steps.len(), |i| i + 1);
    for (i, step) in steps.iter().enumerate() {
        let mut fields = step.clone();
        let kind = fields["operationType"].as_str().unwrap().to_owned();
        fields.as_object_mut().unwrap().remove("operationType");
        let alone = rig.propose(&kind, fields).await.unwrap();
        assert_eq!(shared[i], pins(rig, &alone), "step {}: {step}", i + 1);
        if i < live {
            assert_eq!(plan["steps"][i], shared[i], "step {}: {step}", i + 1);
        }
    }
}

#[tokio::test]
async fn steps_that_pin_the_same_refs_pin_what_each_would_alone() {
    let rig = Rig::new();
    history(&rig);
    rig.git(&["tag", "v-side", "side"]);
    let feature = rig.git(&["rev-parse", "feature"]);
    // HEAD, main and the index pinned by every step; two merges sharing HEAD's tree; a
    // source and a target that only git resolves (a tag, a commit id, `HEAD~1`).
    pinned_as_alone(&rig, &[merge("feature"), reset("HEAD~1")]).await;
    pinned_as_alone(&rig, &[merge("side"), merge("feature"), reset("side")]).await;
    pinned_as_alone(&rig, &[reset("v-side"), merge(&feature), merge("v-side")]).await;
    // A step of another type pins itself beside them.
    rig.fx.write(&rig.repo, "dir/b.txt", "local edit\n");
    pinned_as_alone(
        &rig,
        &[
            json!({"operationType": "discard", "paths": ["dir/b.txt"]}),
            merge("clash"),
        ],
    )
    .await;
}

#[tokio::test]
async fn merge_bases_read_together_still_tell_fast_forwards_and_criss_crosses() {
    let rig = Rig::new();
    history(&rig);
    // `x` and `y` each merge the other's first commit: two best common ancestors.
    rig.git(&["switch", "-q", "-c", "x", "main"]);
    rig.fx.commit(&rig.repo, "x1.txt", "x1\n", "x1");
    rig.git(&["switch", "-q", "-c", "y", "main"]);
    rig.fx.commit(&rig.repo, "y1.txt", "y1\n", "y1");
    rig.git(&["merge", "-q", "--no-edit", "x~0"]);
    rig.git(&["switch", "-q", "x"]);
    rig.git(&["merge", "-q", "--no-edit", "y~1"]);
    rig.git(&["switch", "-q", "main"]);
    rig.git(&["reset", "-q", "--hard", "x"]);
    let bases = rig.git(&["merge-base", "--all", "main", "y"]);
    assert_eq!(bases.lines().count(), 2, "{bases}");
    pinned_as_alone(&rig, &[merge("y"), merge("feature")]).await;
    let id = rig
        .propose("plan", json!({"steps": [merge("y"), reset("x")]}))
        .await
        .unwrap();
    assert_eq!(pins(&rig, &id)["steps"][0]["fastForward"], false);

    let rig = Rig::new();
    history(&rig);
    let id = rig
        .propose("plan", json!({"steps": [merge("feature"), reset("HEAD")]}))
        .await
        .unwrap();
    assert_eq!(pins(&rig, &id)["steps"][0]["fastForward"], true);
}

#[tokio::test]
async fn a_refusal_from_the_shared_read_names_its_step() {
    let rig = Rig::new();
    history(&rig);
    for (steps, expected) in [
        (
            json!([reset("HEAD~1"), merge("main~1")]),
            "step 2 (merge): `sourceRef` already merged",
        ),
        (
            json!([merge("feature"), reset("nope")]),
            "step 2 (reset): `targetRef` no commit named 'nope'",
        ),
        (
            json!([merge("main..side"), reset("HEAD")]),
            "step 1 (merge): `sourceRef` no commit named 'main..side'",
        ),
    ] {
        let err = rig
            .propose("plan", json!({ "steps": steps }))
            .await
            .unwrap_err();
        assert!(err.contains(expected), "{err}");
    }
    // A name git refuses leaves the refusal to the steps themselves; a commit already
    // merged is refused by the shared read.
    assert!(
        shared_read(&rig, &[merge("feature"), reset("nope")])
            .await
            .is_none()
    );
    let read = shared_results(&rig, &[reset("HEAD~1"), merge("main~1")])
        .await
        .unwrap();
    assert!(read[0].is_ok(), "{read:?}");
    assert!(
        matches!(&read[1], Err(OpError::Invalid { field, .. }) if field == "sourceRef"),
        "{read:?}"
    );
    rig.fx.write(&rig.repo, "a.txt", "staged\n");
    rig.git(&["add", "a.txt"]);
    rig.git(&["write-tree"]);
    let err = rig
        .propose("plan", json!({"steps": [merge("feature"), reset("HEAD")]}))
        .await
        .unwrap_err();
    assert!(
        err.contains("step 1 (merge): `targetRef` the index holds staged changes"),
        "{err}"
    );
}

/// Proposes the bench's plan, lets `mover` act, and expects `stale` naming `expected`.
async fn stale_after(mover: impl FnOnce(&Rig), expected: &[&str]) {
    let rig = Rig::new();
    history(&rig);
    let id = rig
        .propose(
            "plan",
            json!({"steps": [merge("feature"), reset("HEAD~1")]}),
        )
        .await
        .unwrap();
    mover(&rig);
    let before = snapshot(&rig);
    let record = rig.approve_and_run_stale(&id).await;
    let r = result(&record);
    assert_eq!(moved(&r), expected, "{r}");
    assert_eq!(snapshot(&rig), before);
}

#[tokio::test]
async fn a_ref_or_the_index_moved_after_the_shared_read_is_stale() {
    stale_after(
        |rig| {
            rig.fx.commit(&rig.repo, "new.txt", "new\n", "moved on");
        },
        // The second step starts where the first leaves main: it follows from those.
        &["step 1 fastForward", "step 1 head oid", "step 1 index"],
    )
    .await;
    stale_after(
        |rig| {
            rig.git(&["branch", "-f", "feature", "side"]);
        },
        &["step 1 sourceOid"],
    )
    .await;
    stale_after(
        |rig| {
            rig.fx.write(&rig.repo, "a.txt", "staged\n");
            rig.git(&["add", "a.txt"]);
        },
        &["step 1 index"],
    )
    .await;
}
