//! `rebase`, `patch`, `push`, `branchDelete` and `submodulePointer` decided in the page, in
//! one browser session: the agent proposes through the sidecar's MCP tool, the card shows
//! the preview git computed for the type, a click approves, the repository is what plain
//! git makes of a copy, `operation.status` reports the result, and a click on Restore puts
//! every byte back. A push is undone only by a second push, proposed from its card and
//! approved on its own, never by rewinding local refs.

use std::path::Path;

use fantoccini::Client;
use serde_json::{Value, json};

use super::harness::{
    Gateway, attrs, find, screenshot, shown_texts, texts, visible, wait_text, with_browser,
};
use super::history::confirm_and_approve;
use super::{approve, sign_in};
use crate::common::{Fixture, Server};
use crate::op_setup::{
    PATCH, branch_refs, branches_to_tidy, diverged, drifted, plain_apply, remote_refs, twin,
    with_origin,
};
use crate::op_support::{bytes, history};

/// One gateway, one sidecar (the agent's MCP client) and one browser for every type.
struct Session {
    fx: Fixture,
    gw: Gateway,
    sidecar: Server,
    client: Client,
}

impl Session {
    /// Proposes through the MCP tool, as a host would, and waits for the card's computed
    /// preview of `kind` in the queue; returns the preview id and the card's selector.
    async fn propose(&mut self, kind: &str, args: Value) -> (String, String) {
        let proposed = self
            .sidecar
            .call(&format!("operation.preview.{kind}"), args);
        assert_eq!(proposed["accepted"], true, "{proposed}");
        let id = proposed["previewId"].as_str().unwrap().to_owned();
        self.tab("queue").await;
        let card = format!("article.card[data-id='{id}']");
        find(&self.client, &format!("{card} .preview.{kind}")).await;
        (id, card)
    }

    async fn tab(&self, view: &str) {
        find(&self.client, &format!(".tab[data-view='{view}']"))
            .await
            .click()
            .await
            .unwrap();
    }

    /// The settled record: completed, decided in the page, and exactly what the agent
    /// reads back through `operation.status`.
    fn completed(&mut self, id: &str) -> Value {
        let record = self.gw.wait_terminal(id);
        assert_eq!(record["status"], "completed", "{record}");
        assert_eq!(record["decidedBy"]["channel"], "web", "{record}");
        let status = self
            .sidecar
            .call("operation.status", json!({ "previewId": id }));
        assert_eq!(status["status"], "completed", "{status}");
        assert_eq!(status["data"], record);
        record
    }

    /// Clicks Restore on the History card of `id` and confirms it.
    async fn restore_in_history(&self, id: &str) {
        self.tab("history").await;
        let hist = format!("article.card.hist[data-id='{id}']");
        wait_text(
            &self.client,
            &format!("{hist} [data-role='status']"),
            "Completed",
        )
        .await;
        for action in ["restore", "restore-now"] {
            find(
                &self.client,
                &format!("{hist} button[data-action='{action}']"),
            )
            .await
            .click()
            .await
            .unwrap();
        }
        let done = format!("{hist} [data-role='restore-result']");
        visible(&self.client, &done).await;
        let undo = self
            .texts(&format!("{done} [data-role='new-restore-point']"))
            .await;
        assert!(undo[0].starts_with("rp_"), "{undo:?}");
        assert_eq!(
            self.texts(&done).await,
            [format!(
                "Restored. The state just before was saved as {}.",
                undo[0]
            )]
        );
    }

    async fn texts(&self, css: &str) -> Vec<String> {
        shown_texts(&self.client, css).await
    }

    async fn attrs(&self, css: &str, name: &str) -> Vec<String> {
        attrs(&self.client, css, name).await
    }

    fn git(&self, dir: &Path, args: &[&str]) -> String {
        self.fx.git(dir, args)
    }
}

#[test]
fn rebase_patch_push_branch_delete_and_submodule_decided_in_the_page_land_and_undo() {
    let fx = Fixture::new();
    let gw = Gateway::start(&fx, &[]);
    let env = [
        ("FLUXGIT_MCP_HANDSHAKE_ADDR", gw.handshake.as_str()),
        ("FLUXGIT_MCP_AGENT_DETECTION_DISABLED", "1"),
    ];
    let sidecar = fx.server(&[], &env);
    let started = std::time::Instant::now();
    with_browser(move |client| async move {
        let mut s = Session {
            fx,
            gw,
            sidecar,
            client,
        };
        sign_in(&s.client, &s.gw.login).await;
        rebase(&mut s).await;
        patch(&mut s).await;
        push(&mut s).await;
        branch_delete(&mut s).await;
        submodule_pointer(&mut s).await;
    });
    eprintln!(
        "five operation types through the page in {:?}",
        started.elapsed()
    );
}

async fn rebase(s: &mut Session) {
    let repo = diverged(&s.fx, "rebase");
    let copy = twin(&s.fx, &repo, "rebase-twin");
    let before = bytes(&s.fx, &repo);
    let (main, current) = (
        s.git(&repo, &["rev-parse", "main"]),
        s.git(&repo, &["rev-parse", "topic"]),
    );
    let (id, card) = s
        .propose(
            "rebase",
            json!({"repoPath": repo, "reason": "Catch up with main.", "ontoRef": "main"}),
        )
        .await;
    // The card lists the commits to replay, oldest first, and git's preflight verdict.
    let rows = format!("{card} [data-role='rebase-commits'] .commit-row");
    assert_eq!(
        s.texts(&format!("{rows} .path")).await,
        ["topic one", "topic two"]
    );
    let replayed = s.git(&repo, &["rev-list", "--reverse", "main..topic"]);
    assert_eq!(s.attrs(&rows, "data-oid").await.join("\n"), replayed);
    let verdict = s.texts(&format!("{card} [data-role='verdict']")).await;
    assert_eq!(verdict, ["replays cleanly"]);
    let picture = s
        .attrs(&format!("{card} [data-role='ref-picture'] .oid"), "title")
        .await;
    assert_eq!(picture, [current, main.clone()]);
    let warning = s.texts(&format!("{card} [data-role='warning']")).await;
    assert!(warning[0].contains("Rewrites history"), "{warning:?}");
    screenshot(&s.client, "rebase-card").await;
    approve(&s.client, &id).await;

    let record = s.completed(&id);
    let result = &record["result"];
    assert_eq!(result["commitSha"], s.git(&repo, &["rev-parse", "topic"]));
    assert_eq!(result["ontoOid"], main);
    s.git(&copy, &["rebase", "-q", "main"]);
    assert_eq!(history(&s.fx, &repo, "main"), history(&s.fx, &copy, "main"));
    assert_eq!(s.git(&repo, &["rev-parse", "HEAD~2"]), main);

    s.restore_in_history(&id).await;
    assert_eq!(bytes(&s.fx, &repo), before);
}

async fn patch(s: &mut Session) {
    let repo = s.fx.init("patch", &[]);
    s.fx.commit(&repo, "a.txt", "one\n", "first");
    s.fx.write(&repo, "loose.txt", "untracked, kept\n");
    let copy = twin(&s.fx, &repo, "patch-twin");
    let before = bytes(&s.fx, &repo);
    let (id, card) = s
        .propose(
            "patch",
            json!({"repoPath": repo, "reason": "Add the second line.", "patchContent": PATCH,
                   "applyToIndex": true}),
        )
        .await;
    // git's own `apply --check` verdict, each file with its kind and counts, the patch.
    let check = s.texts(&format!("{card} [data-role='check']")).await;
    assert_eq!(check, ["applies cleanly"]);
    let files = format!("{card} .files .file");
    assert_eq!(
        s.texts(&format!("{files} .path")).await,
        ["a.txt", "dir/new.txt"]
    );
    assert_eq!(s.texts(&format!("{files} .st")).await, ["M", "A"]);
    assert_eq!(s.texts(&format!("{files} .num.add")).await, ["+1", "+1"]);
    find(&s.client, &format!("{card} .diff .l.add")).await;
    let added = s.texts(&format!("{card} .diff .l.add")).await;
    assert_eq!(
        added.iter().map(|l| l.trim()).collect::<Vec<_>>(),
        ["+two", "+fresh"]
    );
    screenshot(&s.client, "patch-card").await;
    approve(&s.client, &id).await;

    let record = s.completed(&id);
    assert_eq!(
        record["result"]["appliedPaths"],
        json!(["a.txt", "dir/new.txt"])
    );
    // The copy's index has other stat data: refresh it as any git command would.
    s.git(&copy, &["status", "--porcelain"]);
    plain_apply(&copy, &s.fx, PATCH, true);
    assert_eq!(history(&s.fx, &repo, "HEAD"), history(&s.fx, &copy, "HEAD"));
    assert_eq!(std::fs::read(repo.join("a.txt")).unwrap(), b"one\ntwo\n");
    assert_eq!(std::fs::read(repo.join("dir/new.txt")).unwrap(), b"fresh\n");

    s.restore_in_history(&id).await;
    assert_eq!(bytes(&s.fx, &repo), before);
}

async fn push(s: &mut Session) {
    let repo = s.fx.init("push", &[]);
    let old = s.fx.commit(&repo, "a.txt", "one\n", "first");
    let bare = with_origin(&s.fx, &repo, "push-origin.git");
    s.fx.commit(&repo, "b.txt", "two\n", "second");
    let tip = s.fx.commit(&repo, "c.txt", "three\n", "third");
    let copy = twin(&s.fx, &repo, "push-twin");
    let copy_bare = s.fx.clone(&bare, "push-twin-origin.git", true);
    s.git(
        &copy,
        &["remote", "set-url", "origin", copy_bare.to_str().unwrap()],
    );
    let before = bytes(&s.fx, &repo);
    let remote_before = remote_refs(&s.fx, &bare);
    let (id, card) = s
        .propose(
            "push",
            json!({"repoPath": repo, "reason": "Share the two commits.", "setUpstream": true}),
        )
        .await;
    // The commits the remote receives (newest first, as git log), a fast-forward, no lease.
    let rows = format!("{card} [data-role='push-commits'] .commit-row");
    assert_eq!(s.texts(&format!("{rows} .path")).await, ["third", "second"]);
    let pushed = s.git(&repo, &["rev-list", "origin/main..main"]);
    assert_eq!(s.attrs(&rows, "data-oid").await.join("\n"), pushed);
    assert_eq!(
        s.texts(&format!("{card} [data-role='kind']")).await,
        ["fast-forward"]
    );
    let lease = s.texts(&format!("{card} [data-role='lease']")).await;
    assert!(lease[0].starts_with("none: a plain push"), "{lease:?}");
    let picture = s
        .attrs(&format!("{card} [data-role='ref-picture'] .oid"), "title")
        .await;
    assert_eq!(picture, [old.clone(), tip.clone()]);
    screenshot(&s.client, "push-card").await;
    approve(&s.client, &id).await;

    let record = s.completed(&id);
    let result = &record["result"];
    assert_eq!(result["pushedOid"], tip);
    assert_eq!(result["previousRemoteOid"], old);
    assert_eq!(result["pushedRange"], format!("{old}..{tip}"));
    s.git(&copy, &["push", "-q", "-u", "origin", "main"]);
    assert_eq!(remote_refs(&s.fx, &bare), remote_refs(&s.fx, &copy_bare));
    assert_eq!(branch_refs(&s.fx, &repo), branch_refs(&s.fx, &copy));
    assert_eq!(
        s.git(&repo, &["config", "branch.main.merge"]),
        "refs/heads/main"
    );
    undo_push(s, &id, &repo, (&old, &tip)).await;
    assert_eq!(remote_refs(&s.fx, &bare), remote_before);
    // The local side is as it was: the branch keeps its commits, origin/main is back.
    assert_eq!(bytes(&s.fx, &repo), before);
}

/// The push's History card offers no local restore, only a push back to the old tip: a
/// new high-risk card with the commits the remote loses and the lease, approved once the
/// checkbox is ticked.
async fn undo_push(s: &mut Session, id: &str, repo: &Path, (old, tip): (&str, &str)) {
    s.tab("history").await;
    let hist = format!("article.card.hist[data-id='{id}']");
    local_only_restore_point(s, &hist).await;
    let offer = find(
        &s.client,
        &format!("{hist} button[data-action='undo-push']"),
    )
    .await;
    let restore = texts(&s.client, &format!("{hist} button[data-action='restore']")).await;
    assert!(
        restore.is_empty(),
        "a push offers no local restore: {restore:?}"
    );
    let note = s
        .texts(&format!("{hist} [data-role='push-undo-note']"))
        .await;
    assert!(note[0].contains("push back to the old tip"), "{note:?}");
    screenshot(&s.client, "push-history").await;
    assert_eq!(
        s.git(repo, &["rev-parse", "refs/remotes/origin/main"]),
        tip,
        "offering the undo changed nothing"
    );
    offer.click().await.unwrap();

    s.tab("queue").await;
    let card = "article.card[data-status='pending'][data-risk='high']";
    find(
        &s.client,
        &format!("{card} .preview.push [data-role='lost-commits']"),
    )
    .await;
    let undo_id = s.attrs(card, "data-id").await.remove(0);
    let card = format!("article.card[data-id='{undo_id}']");
    let lost = s
        .texts(&format!("{card} [data-role='lost-commits'] .path"))
        .await;
    assert_eq!(lost, ["third", "second"]);
    let lease = s.texts(&format!("{card} code[data-role='lease']")).await;
    assert_eq!(lease, [format!("--force-with-lease=refs/heads/main:{tip}")]);
    let picture = s
        .attrs(&format!("{card} [data-role='ref-picture'] .oid"), "title")
        .await;
    assert_eq!(picture, [tip.to_owned(), old.to_owned()]);
    screenshot(&s.client, "push-undo-card").await;
    confirm_and_approve(&s.client, &undo_id).await;
    let record = s.completed(&undo_id);
    assert_eq!(record["result"]["pushedOid"], old);
    assert_eq!(record["result"]["forced"], true);
}

/// The push's restore point, reached from its card, says restoring it is local only (the
/// remote keeps the push); the person keeps things as they are.
async fn local_only_restore_point(s: &Session, hist: &str) {
    let link = format!("{hist} [data-action='show-restore-point']");
    let rp = s.attrs(&link, "data-rp").await.remove(0);
    find(&s.client, &link).await.click().await.unwrap();
    let row = format!("article.rp[data-id='{rp}']");
    for action in ["restore", "restore-cancel"] {
        let button = format!("{row} button[data-action='{action}']");
        if action == "restore-cancel" {
            let note = s.texts(&format!("{row} [data-role='restore-note']")).await;
            assert!(
                note[0].starts_with("Local only: ")
                    && note[0].contains("the remote keeps the push"),
                "{note:?}"
            );
            screenshot(&s.client, "push-restore-point").await;
        }
        find(&s.client, &button).await.click().await.unwrap();
    }
    s.tab("history").await;
}

async fn branch_delete(s: &mut Session) {
    let repo = branches_to_tidy(&s.fx, "tidy");
    let copy = twin(&s.fx, &repo, "tidy-twin");
    let before = bytes(&s.fx, &repo);
    let named = ["merged", "up", "unmerged", "wt", "ghost", "origin/up"];
    let (id, card) = s
        .propose(
            "branchDelete",
            json!({"repoPath": repo, "reason": "Tidy up merged branches.",
                   "targets": [{"repoPath": repo, "branches": named}]}),
        )
        .await;
    // Every named branch with the decision and the reason the seed's rules give.
    let rows = format!("{card} .branch-row");
    assert_eq!(s.attrs(&rows, "data-branch").await, named);
    assert_eq!(
        s.texts(&format!("{rows} [data-role='reason']")).await,
        [
            "delete: every commit is in HEAD",
            "delete: every commit is in its upstream refs/remotes/origin/up",
            "keep: has commits that are neither in HEAD nor in its upstream",
            "keep: checked out in a worktree",
            "keep: no such local branch",
            "keep: no such local branch",
        ]
    );
    let tips = s.attrs(&format!("{rows} .oid"), "title").await;
    assert_eq!(
        tips,
        ["merged", "up", "unmerged", "wt"].map(|b| s.git(&repo, &["rev-parse", b]))
    );
    let summary = s.texts(&format!("{card} [data-role='summary']")).await;
    assert_eq!(summary, ["2 deleted, 4 kept"]);
    screenshot(&s.client, "branchDelete-card").await;
    approve(&s.client, &id).await;

    let record = s.completed(&id);
    let names = |key: &str| -> Vec<String> {
        record["result"][key]
            .as_array()
            .unwrap()
            .iter()
            .map(|b| b["branch"].as_str().unwrap().to_owned())
            .collect()
    };
    assert_eq!(names("deleted"), ["merged", "up"]);
    assert_eq!(names("skipped"), ["unmerged", "wt", "ghost", "origin/up"]);
    assert!(names("failed").is_empty());
    // Plain git decides the same: `branch -d` deletes merged and up, refuses the rest.
    let plain =
        s.fx.git_output(&copy, &["branch", "-d", "merged", "up", "unmerged", "wt"]);
    assert!(!plain.status.success(), "git refuses unmerged and wt");
    assert_eq!(branch_refs(&s.fx, &repo), branch_refs(&s.fx, &copy));

    s.tab("history").await;
    let hist = format!("article.card.hist[data-id='{id}']");
    let deleted = format!("{hist} [data-role='result-deleted'] li");
    assert_eq!(s.attrs(&deleted, "data-branch").await, ["merged", "up"]);
    s.restore_in_history(&id).await;
    assert_eq!(bytes(&s.fx, &repo), before);
}

async fn submodule_pointer(s: &mut Session) {
    let top = s.fx.init("super", &[]);
    s.fx.commit(&top, "README", "top\n", "top");
    let (first, second) = drifted(&s.fx, &top, "super-lib");
    // Staged work of the parent stays staged: only the gitlink is committed.
    s.fx.write(&top, "staged.txt", "staged, not committed\n");
    s.git(&top, &["add", "staged.txt"]);
    let copy = twin(&s.fx, &top, "super-twin");
    let before = bytes(&s.fx, &top);
    let (id, card) = s
        .propose(
            "submodulePointer",
            json!({"repoPath": top, "reason": "lib v2 is tested.", "action": "record",
                   "parentPath": "", "relativePath": "libs/lib", "message": "Bump lib to v2",
                   "expectedRecordedOid": first, "expectedCheckedOutOid": second}),
        )
        .await;
    // The gitlink's change, old → new, the drift, and the message of the commit.
    let pointer = format!("{card} [data-role='pointer'] .oid");
    assert_eq!(
        s.attrs(&pointer, "title").await,
        [first.clone(), second.clone()]
    );
    let shown = s.texts(&format!("{card} [data-role='pointer']")).await;
    assert_eq!(shown, [format!("{} → {}", &first[..10], &second[..10])]);
    let rows = s.texts(&format!("{card} .kv dd")).await;
    assert!(
        rows.contains(&"checked out is 1 ahead, 0 behind the recorded commit".to_owned()),
        "{rows:?}"
    );
    let message = s.texts(&format!("{card} .commit-msg")).await;
    assert_eq!(message, ["Bump lib to v2"]);
    screenshot(&s.client, "submodulePointer-card").await;
    approve(&s.client, &id).await;

    let record = s.completed(&id);
    let result = &record["result"];
    assert_eq!(result["commitSha"], s.git(&top, &["rev-parse", "HEAD"]));
    assert_eq!(result["newPointer"], second);
    s.git(
        &copy,
        &["commit", "-q", "-m", "Bump lib to v2", "--", "libs/lib"],
    );
    // The author date is the moment of the commit; everything else is plain git's.
    let (ours, theirs) = (
        history(&s.fx, &top, "HEAD~1"),
        history(&s.fx, &copy, "HEAD~1"),
    );
    for key in ["index", "status", "head"] {
        assert_eq!(ours[key], theirs[key], "{key}");
    }
    let last = ["log", "-1", "--format=%T %P %s|%an"];
    assert_eq!(s.git(&top, &last), s.git(&copy, &last));
    assert_eq!(
        s.git(&top, &["ls-tree", "HEAD", "libs/lib"]),
        format!("160000 commit {second}\tlibs/lib")
    );

    s.restore_in_history(&id).await;
    assert_eq!(bytes(&s.fx, &top), before);
}
