//! `merge`, `discard`, `reset` and `plan` decided in the page, in one browser session:
//! each card shows its git-computed preview (the merge preflight, what a discard loses,
//! what a hard reset overwrites, a plan's numbered steps), the destructive ones approve
//! only once their checkbox is ticked, each outcome is what plain git makes of a copy, a
//! failing plan step rolls everything back, and a restore from the page undoes a reset.

use std::path::{Path, PathBuf};

use fantoccini::Client;
use serde_json::{Value, json};

use super::harness::{Gateway, find, screenshot, with_browser};
use super::{approve, assert_same_state, repo_state, restore_from_page, sign_in};
use crate::common::Fixture;
use crate::exec_history::history_in;
use crate::exec_ops::content_state;

fn copy_of(fx: &Fixture, repo: &Path, name: &str) -> PathBuf {
    let dest = fx.path(name);
    let ok = std::process::Command::new("cp")
        .arg("-a")
        .arg(repo)
        .arg(&dest)
        .status()
        .unwrap();
    assert!(ok.success());
    dest
}

/// Ticks the card's destructive checkbox (Approve stays disabled until then), approves.
pub(super) async fn confirm_and_approve(client: &Client, id: &str) {
    let card = format!("article.card[data-id='{id}']");
    let approve_button = find(client, &format!("{card} button[data-action='approve']")).await;
    assert_eq!(
        approve_button.attr("disabled").await.unwrap().as_deref(),
        Some("true")
    );
    find(client, &format!("{card} [data-role='confirm']"))
        .await
        .click()
        .await
        .unwrap();
    approve(client, id).await;
}

/// Proposes, checks the card shows `css` and approves (ticking the checkbox when
/// `destructive`); returns the settled record.
async fn decide(
    client: &Client,
    gw: &Gateway,
    repo: &Path,
    (op, fields, css, destructive): (&str, Value, &str, bool),
) -> Value {
    let id = gw.propose(op, repo, &format!("The agent wants a {op}."), fields);
    let card = format!("article.card[data-id='{id}']");
    find(client, &format!("{card} {css}")).await;
    screenshot(client, &format!("{op}-card")).await;
    if destructive {
        confirm_and_approve(client, &id).await;
    } else {
        approve(client, &id).await;
    }
    gw.wait_terminal(&id)
}

#[test]
fn merge_discard_reset_and_plan_decided_in_the_page_land_as_plain_git_and_undo() {
    let fx = Fixture::new();
    let repo = fx.init("repo", &["-b", "main"]);
    fx.commit(&repo, "a.txt", "one\ntwo\n", "first");
    fx.commit(&repo, "dir/b.txt", "bee\n", "second");
    history_in(&fx, &repo);
    fx.write(&repo, "dir/b.txt", "local edit\n");
    let gw = Gateway::start(&fx, &[]);
    with_browser(move |client| async move {
        sign_in(&client, &gw.login).await;

        let twin = copy_of(&fx, &repo, "twin");
        let css = ".preview.merge [data-role='verdict']";
        let fields = json!({"sourceRef": "side", "targetRef": "main"});
        let done = decide(&client, &gw, &repo, ("merge", fields, css, false)).await;
        assert_eq!(done["status"], "completed", "{done}");
        fx.git(&twin, &["merge", "-q", "--no-edit", "side"]);
        assert_eq!(content_state(&fx, &repo), content_state(&fx, &twin));

        let css = ".preview.discard .file[data-path='dir/b.txt']";
        let fields = json!({"paths": ["dir/b.txt"]});
        let done = decide(&client, &gw, &repo, ("discard", fields, css, true)).await;
        assert_eq!(done["status"], "completed", "{done}");
        fx.git(&twin, &["restore", "--worktree", "--", "dir/b.txt"]);
        assert_eq!(content_state(&fx, &repo), content_state(&fx, &twin));

        fx.write(&repo, "a.txt", "work a hard reset overwrites\n");
        fx.write(&twin, "a.txt", "work a hard reset overwrites\n");
        let before_reset = repo_state(&fx, &repo);
        let css = ".preview.reset .file[data-path='a.txt']";
        let fields = json!({"targetRef": "HEAD~1", "mode": "hard"});
        let reset = decide(&client, &gw, &repo, ("reset", fields, css, true)).await;
        assert_eq!(reset["status"], "completed", "{reset}");
        fx.git(&twin, &["reset", "-q", "--hard", "HEAD~1"]);
        assert_eq!(content_state(&fx, &repo), content_state(&fx, &twin));

        fx.write(&repo, "dir/b.txt", "edited again\n");
        let before_plan = repo_state(&fx, &repo);
        let css = ".preview.plan li.step[data-step='2'][data-type='merge']";
        let fields = json!({"steps": [
            {"operationType": "discard", "paths": ["dir/b.txt"]},
            {"operationType": "merge", "sourceRef": "clash", "targetRef": "main"},
        ]});
        let plan = decide(&client, &gw, &repo, ("plan", fields, css, true)).await;
        assert_eq!(plan["status"], "failed", "{plan}");
        assert_eq!(plan["result"]["failure"], "rolledBack", "{plan}");
        assert_same_state(&repo_state(&fx, &repo), &before_plan);
        fx.write(&repo, "dir/b.txt", "bee\n");

        let rp = reset["result"]["restorePointId"]
            .as_str()
            .unwrap()
            .to_owned();
        restore_from_page(&client, &rp).await;
        assert_same_state(&repo_state(&fx, &repo), &before_reset);
    });
}
