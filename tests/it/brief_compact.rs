//! `repo.brief` of an ordinary clone: each fact once, nothing the caller can derive.

use serde_json::json;

use crate::common::Fixture;

/// A clean clone, in step with its upstream, with more history than the brief shows:
/// the brief repeats nothing its own fields (or the text the caller holds) already say.
#[test]
fn a_clean_clone_in_step_says_each_thing_once() {
    let fx = Fixture::new();
    let seed = fx.init("seed", &[]);
    for i in 0..12 {
        fx.commit(
            &seed,
            "a.txt",
            &format!("{i}\n"),
            &format!("Tweak number {i}"),
        );
    }
    let origin = fx.clone(&seed, "origin.git", true);
    let work = fx.clone(&origin, "work", false);
    // The default budget, as a first call sends it.
    let out = fx.call("repo.brief", json!({ "repoPath": work }));
    let d = &out["data"];
    assert_eq!(d["head"]["sha"], fx.git(&work, &["rev-parse", "HEAD"]));
    assert_eq!(
        d["head"].get("shortSha"),
        None,
        "recentCommits[0].sha has it"
    );
    assert_eq!(
        d["recentCommits"][0]["sha"],
        fx.git(&work, &["rev-parse", "--short", "HEAD"])
    );
    assert_eq!(
        (&d["head"]["ahead"], &d["head"]["behind"]),
        (&json!(0), &json!(0))
    );
    assert_eq!(d["workingTree"], json!({ "clean": true }));
    assert_eq!(d["recentCommitsTruncated"], true);
    // Nothing asks for a next step: more history is what recentCommitsTruncated says.
    assert_eq!(d["hints"], json!([]));
    // The default budget, fitted whole: its size is that of the text itself.
    assert_eq!(d.get("budget"), None, "{out}");
    let c = &d["conventions"];
    assert_eq!(c["defaultBranch"], "main");
    assert_eq!(
        c.get("defaultBranchSource"),
        None,
        "origin/HEAD is the usual source"
    );
    assert_eq!(c["commitMessages"]["style"], "free-form");
}
