//! Every read tool the server lists, against every kind of hostile repository: each call
//! is answered, no repository-named program runs, and no secret outside is served.

use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::json;

use crate::common::{Fixture, registry, write_executable};

/// The branch name the file outside every repository holds; no answer may contain it,
/// whole or shortened the way branch names are shown.
pub(crate) const SECRET: &str = "secret-7f3e9a-outside";

/// How long the whole sweep may take before the server is killed. Not a timing assert: a
/// hang (a tool blocked on a FIFO, say) is the only thing that gets near it.
const WATCHDOG: Duration = Duration::from_secs(600);

/// An executable script that appends its name to `marker` whenever anything runs it.
fn canary(fx: &Fixture, name: &str, marker: &Path) -> PathBuf {
    let script = fx.path(&format!("bin/{name}"));
    write_executable(
        &script,
        &format!(
            "#!/bin/sh\necho \"{name} $*\" >> '{}'\ncat\n",
            marker.display()
        ),
    );
    script
}

/// A repository every minimal call has something to look at in: two commits, a `feat`
/// branch, a `d1` directory and a tracked file changed in the worktree (so a status or a
/// diff would need to run a clean filter).
fn base_repo(fx: &Fixture, rel: &str) -> PathBuf {
    let repo = fx.init(rel, &[]);
    fx.commit(&repo, "d1/a.txt", "one\n", "first");
    fx.git(&repo, &["branch", "feat"]);
    fx.commit(&repo, "d1/a.txt", "one\ntwo\n", "second");
    fx.git(&repo, &["checkout", "-q", "feat"]);
    fx.commit(&repo, "d1/a.txt", "one\nfeat\n", "feat");
    fx.git(&repo, &["checkout", "-q", "main"]);
    std::fs::write(repo.join("d1/a.txt"), "one\ntwo\nthree\n").unwrap();
    repo
}

fn append(path: &Path, text: &str) {
    let mut content = std::fs::read_to_string(path).unwrap_or_default();
    content.push_str(text);
    std::fs::write(path, content).unwrap();
}

/// The hostile repositories, each armed with canaries writing to `marker`.
pub(crate) fn hostile_repos(fx: &Fixture, marker: &Path) -> Vec<(&'static str, PathBuf)> {
    let mut repos = Vec::new();

    // Drivers whose names contain `=`, chosen by `.git/info/attributes`.
    let repo = base_repo(fx, "equals-drivers");
    let s = canary(fx, "equals-driver", marker);
    append(
        &repo.join(".git/config"),
        &format!(
            "[filter \"a=b\"]\n\tclean = {s}\n\tsmudge = {s}\n\trequired = true\n\
             [merge \"m=n\"]\n\tdriver = {s} %O %A %B\n",
            s = s.display()
        ),
    );
    append(
        &repo.join(".git/info/attributes"),
        "* filter=a=b merge=m=n\n",
    );
    repos.push(("equals-drivers", repo));

    // A filter defined only in an included file.
    let repo = base_repo(fx, "included-filter");
    let s = canary(fx, "included-filter", marker);
    let included = fx.path("included.config");
    std::fs::write(
        &included,
        format!(
            "[filter \"inc\"]\n\tclean = {0}\n\tsmudge = {0}\n",
            s.display()
        ),
    )
    .unwrap();
    append(
        &repo.join(".git/config"),
        &format!("[include]\n\tpath = {}\n", included.display()),
    );
    append(&repo.join(".git/info/attributes"), "* filter=inc\n");
    repos.push(("included-filter", repo));

    // A submodule whose own configuration defines a filter.
    let sub_origin = base_repo(fx, "sub-origin");
    fx.git(&sub_origin, &["checkout", "-q", "--", "."]);
    let repo = base_repo(fx, "submodule-filter");
    fx.git(
        &repo,
        &[
            "submodule",
            "add",
            "-q",
            sub_origin.to_str().unwrap(),
            "sub",
        ],
    );
    fx.git(&repo, &["commit", "-q", "-m", "add sub"]);
    let s = canary(fx, "submodule-filter", marker);
    let module = repo.join(".git/modules/sub");
    append(
        &module.join("config"),
        &format!(
            "[filter \"subevil\"]\n\tclean = {0}\n\tsmudge = {0}\n",
            s.display()
        ),
    );
    append(
        &module.join("info/attributes"),
        "* filter=subevil diff=subevil\n",
    );
    append(
        &module.join("config"),
        &format!("[diff \"subevil\"]\n\ttextconv = {}\n", s.display()),
    );
    std::fs::write(repo.join("sub/d1/a.txt"), "changed in the submodule\n").unwrap();
    repos.push(("submodule-filter", repo));

    // Every configured program git could be talked into running.
    let repo = base_repo(fx, "configured-programs");
    let s = canary(fx, "configured-program", marker);
    let hooks = fx.path("hooks");
    std::fs::create_dir_all(&hooks).unwrap();
    for hook in [
        "post-checkout",
        "pre-commit",
        "post-index-change",
        "reference-transaction",
    ] {
        let script = canary(fx, hook, marker);
        std::fs::copy(&script, hooks.join(hook)).unwrap();
    }
    let program = s.to_str().unwrap();
    for (key, value) in [
        ("core.fsmonitor", program),
        ("core.hooksPath", hooks.to_str().unwrap()),
        ("diff.external", program),
        ("diff.evil.textconv", program),
        ("diff.evil.command", program),
        ("core.pager", program),
        ("credential.helper", program),
        ("core.sshCommand", program),
        ("remote.origin.url", "ssh://example.invalid/repo.git"),
    ] {
        fx.git(&repo, &["config", key, value]);
    }
    append(&repo.join(".git/info/attributes"), "* diff=evil\n");
    repos.push(("configured-programs", repo));

    // A FIFO where git keeps the merge head: reading it would block forever.
    let repo = base_repo(fx, "fifo-merge-head");
    let status = std::process::Command::new("mkfifo")
        .arg(repo.join(".git/MERGE_HEAD"))
        .status()
        .unwrap();
    assert!(status.success(), "mkfifo failed");
    repos.push(("fifo-merge-head", repo));

    // A rebase state file that is a symbolic link to a secret outside the repository.
    let repo = base_repo(fx, "symlinked-rebase-state");
    let secret = fx.path("secret.txt");
    std::fs::write(&secret, format!("refs/heads/{SECRET}\n")).unwrap();
    let state = repo.join(".git/rebase-merge");
    std::fs::create_dir_all(&state).unwrap();
    std::os::unix::fs::symlink(&secret, state.join("head-name")).unwrap();
    let head = fx.git(&repo, &["rev-parse", "HEAD"]);
    std::fs::write(state.join("onto"), format!("{head}\n")).unwrap();
    std::fs::write(state.join("orig-head"), format!("{head}\n")).unwrap();
    repos.push(("symlinked-rebase-state", repo));

    repos
}

#[test]
fn every_read_tool_on_every_hostile_repository_runs_nothing_and_answers() {
    let fx = Fixture::new();
    let marker = fx.path("ran-something");
    let repos = hostile_repos(&fx, &marker);
    assert!(!marker.exists(), "building the repositories ran a canary");

    let mut server = fx.server(&[], &[]);
    let pid = server.pid();
    let (done, finished) = mpsc::channel();
    let marker_seen = marker.clone();
    let sweep = std::thread::spawn(move || {
        let mut answered = 0;
        for (kind, repo) in &repos {
            for (tool, args) in registry::read_tool_calls(&mut server, repo) {
                let reply =
                    server.request("tools/call", json!({ "name": tool, "arguments": args }));
                assert!(
                    reply["result"].is_object() || reply["error"].is_object(),
                    "{kind}: {tool} got no answer: {reply}"
                );
                let text = reply.to_string();
                assert!(
                    !text.contains(SECRET),
                    "{kind}: {tool} served the secret outside: {text}"
                );
                assert!(
                    !marker_seen.exists(),
                    "{kind}: {tool} ran a repository-chosen program: {}",
                    std::fs::read_to_string(&marker_seen).unwrap_or_default()
                );
                answered += 1;
            }
        }
        let _ = done.send(answered);
    });
    let answered = match finished.recv_timeout(WATCHDOG) {
        Ok(answered) => answered,
        Err(mpsc::RecvTimeoutError::Timeout) => {
            // Killing the server unblocks the sweep, which then fails on the closed pipe.
            let _ = std::process::Command::new("kill")
                .args(["-9", &pid.to_string()])
                .status();
            let _ = sweep.join();
            panic!("a read tool hung on a hostile repository; the server was killed");
        }
        Err(mpsc::RecvTimeoutError::Disconnected) => {
            // The sweep panicked: pass its message on.
            match sweep.join() {
                Err(panic) => std::panic::resume_unwind(panic),
                Ok(()) => unreachable!("the sweep ended without reporting"),
            }
        }
    };
    assert!(answered >= 6 * 15, "only {answered} calls were made");
    assert!(!marker.exists(), "a canary ran");

    // Plain git does run the drivers these repositories name: the test can tell.
    let equals = fx.path("equals-drivers");
    let _ = fx.git_output(&equals, &["diff"]);
    let included = fx.path("included-filter");
    let _ = fx.git_output(&included, &["diff"]);
    let _ = fx.git_output(&fx.path("submodule-filter/sub"), &["diff"]);
    let _ = fx.git_output(&fx.path("configured-programs"), &["diff", "--ext-diff"]);
    let ran = std::fs::read_to_string(&marker).unwrap_or_default();
    for canary in [
        "equals-driver",
        "included-filter",
        "submodule-filter",
        "configured-program",
    ] {
        assert!(ran.contains(canary), "{canary} is not live: {ran:?}");
    }
}

/// The FluxGit-required tools read through a real gateway: the gateway opens each hostile
/// repository and reads its HEAD and reflog, and nothing the repository names runs there
/// either.
#[test]
fn fluxgit_tools_through_a_real_gateway_run_nothing_on_hostile_repositories() {
    let fx = Fixture::new();
    let marker = fx.path("ran-something");
    let repos = hostile_repos(&fx, &marker);
    let gateway = crate::operation_e2e::Gateway::start(&fx, &[]);
    let mut server = gateway.sidecar(&fx);
    let tools: Vec<_> = registry::read_tools(&mut server)
        .into_iter()
        .filter(|t| {
            let name = registry::identity(t["name"].as_str().unwrap());
            name.starts_with("safety.") || name.starts_with("flux.")
        })
        .collect();
    assert_eq!(tools.len(), 5, "{tools:?}");
    let mut served = 0;
    for (kind, repo) in &repos {
        for tool in &tools {
            let name = tool["name"].as_str().unwrap();
            let args = registry::minimal_arguments(tool, repo);
            let reply = server.request("tools/call", json!({ "name": name, "arguments": args }));
            let result = &reply["result"];
            assert!(result.is_object(), "{kind}: {name} got no result: {reply}");
            let text = reply.to_string();
            assert!(
                !text.contains(SECRET),
                "{kind}: {name} served the secret: {text}"
            );
            assert!(
                !marker.exists(),
                "{kind}: {name} ran a repository-chosen program: {}",
                std::fs::read_to_string(&marker).unwrap_or_default()
            );
            // Never the no-gateway answer: the gateway is up.
            assert!(!text.contains("\"code\":10001"), "{kind}: {name}: {text}");
            if result["isError"] == json!(false) {
                served += 1;
            }
        }
    }
    assert!(served >= repos.len(), "only {served} answers were served");
}
