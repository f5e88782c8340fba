//! What the rebase, patch and push end-to-end tests share: a byte-level picture of a
//! repository (to check a restore puts every byte back), the card of a proposal as a
//! real gateway shows it, and a person's restore through the human API.

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use serde_json::{Value, json};

use crate::common::Fixture;
use crate::operation_e2e::Gateway;

/// Every byte a restore must put back: worktree files (mode and content), the index file,
/// HEAD and every branch and tag.
pub fn bytes(fx: &Fixture, repo: &Path) -> Value {
    let mut files = BTreeMap::new();
    let mut stack = vec![repo.to_owned()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap().flatten() {
            let path = entry.path();
            let rel = path.strip_prefix(repo).unwrap().display().to_string();
            if rel == ".git" {
                continue;
            }
            let meta = std::fs::symlink_metadata(&path).unwrap();
            if meta.is_dir() {
                stack.push(path);
            } else {
                let mode = meta.permissions().mode() & 0o111;
                let body = String::from_utf8_lossy(&std::fs::read(&path).unwrap()).into_owned();
                files.insert(rel, json!([mode, body]));
            }
        }
    }
    let git_dir = repo.join(".git");
    json!({
        "files": files,
        "index": format!("{:x?}", std::fs::read(git_dir.join("index")).unwrap()),
        "head": std::fs::read_to_string(git_dir.join("HEAD")).unwrap(),
        "refs": fx.git(repo, &["for-each-ref", "--format=%(refname) %(objectname)", "refs/heads", "refs/tags", "refs/remotes"]),
    })
}

/// What plain git says of the history from `base` to HEAD: per commit its tree, subject,
/// author and parent count (ids differ with the committer date), then the index, the
/// status and HEAD's target.
pub fn history(fx: &Fixture, repo: &Path, base: &str) -> Value {
    let range = format!("{base}..HEAD");
    json!({
        "log": fx.git(repo, &["log", "--format=%T %p %s|%an|%ad", "--date=raw", &range])
            .lines()
            .map(|l| {
                let mut parts = l.splitn(3, ' ');
                let tree = parts.next().unwrap_or_default().to_owned();
                let _parents = parts.next();
                json!([tree, parts.next().unwrap_or_default()])
            })
            .collect::<Vec<_>>(),
        "index": fx.git(repo, &["ls-files", "-s"]),
        "status": fx.git(repo, &["status", "--porcelain=v2", "--untracked-files=all"]),
        "head": fx.git_output(repo, &["symbolic-ref", "-q", "HEAD"]).stdout,
    })
}

/// A person's restore of `rp` through the human API; the status and the answer.
pub fn restore(gateway: &Gateway, rp: &str) -> (u16, Value) {
    gateway.human_post(
        &format!("api/restore-points/{rp}/restore"),
        json!({"confirmMoved": false}),
    )
}

/// The proposal's card from the human API (waits for the preview git computes).
pub fn card(gateway: &Gateway, id: &str) -> Value {
    for _ in 0..600 {
        let card = gateway.human_get(&format!("api/proposals/{id}"));
        if !card["preview"].is_null() || card["previewPending"] == false {
            return card;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    panic!("the preview of {id} never came");
}
